package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/fileio"
	"github.com/airlockdev/airlock/internal/sanitize"
)

// Exit codes of every subcommand.
const (
	ExitOK          = 0
	ExitFindings    = 1
	ExitUsage       = 2
	ExitInternal    = 3
	ExitInterrupted = 130
)

// exitError carries an explicit exit code out of a command: findings (1)
// and the commands' own usage checks (2).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, a ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, a...)}
}

func usage(err error) error { return &exitError{code: ExitUsage, err: err} }

// findings marks a result that is data, not a failure (exit 1); the
// message is not printed, the command printed the findings already.
func findings(format string, a ...any) error {
	return &exitError{code: ExitFindings, err: fmt.Errorf(format, a...)}
}

// exitTable is the one map from an error to an exit code, first match
// wins; errors it does not know are internal (3).
var exitTable = []struct {
	match func(error) bool
	code  int
}{
	{func(err error) bool { var ce *gate.ConfigError; return errors.As(err, &ce) }, ExitUsage},
	{func(err error) bool { return errors.Is(err, gate.ErrUsage) }, ExitUsage},
	{func(err error) bool { return errors.Is(err, fileio.ErrExists) }, ExitUsage},
	{func(err error) bool { return errors.Is(err, fileio.ErrSymlink) || errors.Is(err, fileio.ErrOutside) }, ExitUsage},
	{func(err error) bool { return errors.Is(err, fixture.ErrWrongVerdict) }, ExitFindings},
}

// exitCode maps err to an exit code: an interruption (the context's
// cancellation, whatever wraps it) first, then an explicit exitError, then
// the table, then 3.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, context.Canceled) {
		return ExitInterrupted
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	for _, row := range exitTable {
		if row.match(err) {
			return row.code
		}
	}
	return ExitInternal
}

// finish prints err (findings are not repeated) and returns the exit code;
// a failed write to standard output turns success into 3.
func finish(ctx context.Context, e *env, out *trackedWriter, errw io.Writer, err error) int {
	if err == nil && out.err != nil {
		err = fmt.Errorf("writing standard output: %w", out.err)
	}
	if err == nil {
		return ExitOK
	}
	if ctx.Err() != nil && !errors.Is(err, context.Canceled) {
		err = fmt.Errorf("%w: %v", context.Canceled, err)
	}
	code := exitCode(err)
	if !e.started && code == ExitInternal {
		// cobra's own errors (unknown command, wrong number of arguments).
		code = ExitUsage
	}
	switch {
	case code == ExitInterrupted:
		fmt.Fprintln(errw, "airlock: interrupted; nothing half-written was left")
	case code != ExitFindings:
		printError(errw, err)
	}
	return code
}

// printError prints err on stderr, one line per joined error, each with its
// control characters escaped (sanitize.Escape): an error may quote a file
// name from a tree in a pull request, and such a name must not move the
// terminal's cursor or forge a line of the CI log.
func printError(w io.Writer, err error) {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			printError(w, e)
		}
		return
	}
	fmt.Fprintln(w, "airlock:", sanitize.Text(err.Error(), 64<<10, sanitize.Escape))
}

// brokenContracts is the error of a command that ran every good tool and
// wrote its reports while some contracts did not load: their configuration
// errors joined (exit 2), printed one line each.
func brokenContracts(broken []fixture.Broken) error {
	errs := make([]error, len(broken))
	for i, b := range broken {
		errs[i] = b.Err
	}
	return errors.Join(errs...)
}

// brokenMessages is brokenContracts for errors known only by their text
// (a drift report's Broken list).
func brokenMessages(messages []string) error {
	errs := make([]error, len(messages))
	for i, m := range messages {
		errs[i] = &exitError{code: ExitUsage, err: errors.New(m)}
	}
	return errors.Join(errs...)
}

// internalErr marks an error as airlock's own failure (exit 3) whatever it
// wraps: a report or file that could not be written.
func internalErr(err error) error { return &exitError{code: ExitInternal, err: err} }
