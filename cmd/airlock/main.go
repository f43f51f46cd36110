// Command airlock keeps bad tool output out of an AI agent's context. It is
// a few lines around package cli, which holds every subcommand; see
// `airlock --help` and the README. SIGINT and SIGTERM cancel the command's
// context: the work stops between files, nothing half-written is left, and
// the exit code is 130.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/airlockdev/airlock/cli"
)

func main() {
	cli.UseBuildVersion()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, cli.Options{})
	stop()
	os.Exit(code)
}
