package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/airlockdev/airlock/runner"
)

// onInterrupt makes SIGINT and SIGTERM remove the temporary and half-created
// files of the command's writes (goldens, reports, mutants) before exiting
// with 130, so an interrupted run leaves no partial file. The returned func
// stops listening.
func onInterrupt() (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-ch:
			runner.RemoveTemps()
			fmt.Fprintln(os.Stderr, "airlock: interrupted; nothing half-written was left")
			os.Exit(130)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}
