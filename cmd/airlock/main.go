// Command airlock keeps bad tool output out of an AI agent's context.
//
// Exit codes, for every subcommand: 0 all good, 1 findings (a refused
// response, failed fixtures), 2 usage or configuration error, 3 internal
// or upstream error.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/airlockdev/airlock/gate"
)

// Exit codes.
const (
	ExitOK       = 0
	ExitFindings = 1
	ExitUsage    = 2
	ExitInternal = 3
)

func main() {
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, a ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, a...)}
}

// Main runs airlock with args (without the program name) and returns the
// exit code. It never calls os.Exit, so tests can run it in-process.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := &cobra.Command{
		Use:           "airlock",
		Short:         "Keep bad tool output out of an AI agent's context",
		Long:          "airlock admits an upstream's raw response only as a small, closed object built from contracted fields,\nor refuses it with a fixed failure envelope, and proves its contracts against fixture trees.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       gate.Version,
	}
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newCheckCmd(), newRunCmd(), newMutateCmd(), newSchemaCmd(), newReasonsCmd())
	root.AddCommand(newRecordCmd(), newPromoteCmd())
	root.AddCommand(newDiffCmd(), newDriftCmd())
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitError{code: ExitUsage, err: err}
	})

	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.code != ExitFindings {
			fmt.Fprintln(stderr, "airlock:", ee.err)
		}
		return ee.code
	}
	var ce *gate.ConfigError
	if errors.As(err, &ce) || errors.Is(err, gate.ErrUsage) {
		fmt.Fprintln(stderr, "airlock:", err)
		return ExitUsage
	}
	// cobra's own errors (unknown command, bad args) are usage errors.
	fmt.Fprintln(stderr, "airlock:", err)
	return ExitUsage
}

// internalErr marks an error as airlock's own failure (exit 3).
func internalErr(err error) error { return &exitError{code: ExitInternal, err: err} }
