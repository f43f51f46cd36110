package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
)

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// Output that cannot be written is airlock's failure (3), never success or
// a usage error; a cancelled context is 130; cobra's parse errors are 2.
func TestExitCodes(t *testing.T) {
	cases := []struct {
		args []string
		want int
	}{
		{args: []string{"reasons"}, want: ExitInternal},
		{args: []string{"schema", "contract"}, want: ExitInternal},
		{args: []string{"version"}, want: ExitInternal},
		{args: []string{"no-such-command"}, want: ExitUsage},
		{args: []string{"run", "--no-such-flag"}, want: ExitUsage},
		{args: []string{"check"}, want: ExitUsage},
	}
	for _, c := range cases {
		var errb bytes.Buffer
		got := Main(context.Background(), c.args, Stdio{Out: failingWriter{}, Err: &errb}, Options{})
		if got != c.want {
			t.Errorf("airlock %v with a failing stdout: exit %d, want %d (%s)", c.args, got, c.want, errb.String())
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	got := Main(ctx, []string{"run", "--schemas", "../schemas", "--fixtures", "../fixtures"}, Stdio{Out: &out, Err: &errb}, Options{})
	if got != ExitInterrupted {
		t.Errorf("run with a cancelled context: exit %d, want %d (%s)", got, ExitInterrupted, errb.String())
	}
	// The same Main, called again, works: no state is left from the last call.
	out.Reset()
	if got := Main(context.Background(), []string{"reasons"}, Stdio{Out: &out}, Options{}); got != ExitOK || out.Len() == 0 {
		t.Errorf("reasons after an interrupted run: exit %d, %d bytes", got, out.Len())
	}
}

// An interruption is 130 whatever wraps it: a writer's cancelled context
// comes back through internalErr (a report or mutant that was not written).
func TestInterruptedWinsOverWrappers(t *testing.T) {
	wrapped := internalErr(fmt.Errorf("writing mutants: %w", context.Canceled))
	if got := exitCode(wrapped); got != ExitInterrupted {
		t.Errorf("exitCode(internalErr(…context.Canceled)) = %d, want %d", got, ExitInterrupted)
	}
	if got := exitCode(internalErr(errors.New("disk full"))); got != ExitInternal {
		t.Errorf("exitCode(internalErr(disk full)) = %d, want %d", got, ExitInternal)
	}
}

// A file name from a tree cannot write control sequences or forge lines on
// stderr; joined errors still print one per line.
func TestPrintErrorEscapes(t *testing.T) {
	var buf bytes.Buffer
	evil := fmt.Errorf("fixtures/x\x1b]0;PWNED\x07\x1b[2J\n::error::forged: a symbolic link")
	printError(&buf, errors.Join(evil, errors.New("second")))
	got := buf.String()
	want := "airlock: fixtures/x\\x1b]0;PWNED\\x07\\x1b[2J\\x0a::error::forged: a symbolic link\nairlock: second\n"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestResponseHeaderRefusesControlCharacters(t *testing.T) {
	for _, v := range []string{"X-A: b\rc", "X-A: b\nX-B: c", "X-A: b\x00"} {
		if _, err := responseHeader([]string{v}); exitCode(err) != ExitUsage {
			t.Errorf("--response-header %q: got %v, want a usage error", v, err)
		}
	}
	if h, err := responseHeader([]string{"Retry-After: 120"}); err != nil || h.Get("Retry-After") != "120" {
		t.Errorf("Retry-After: 120 gave %v, %v", h, err)
	}
}
