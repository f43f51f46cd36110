package record

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sync/atomic"
	"time"

	"github.com/airlockdev/airlock/internal/mcpclient"
)

// errTooMuch stops a command whose output passes the byte limit.
var errTooMuch = errors.New("output past the byte limit")

// limitBuffer keeps at most max bytes and fails the write that passes it.
type limitBuffer struct {
	buf bytes.Buffer
	max int64
}

func (b *limitBuffer) Write(p []byte) (int, error) {
	if int64(b.buf.Len()+len(p)) > b.max {
		return 0, errTooMuch
	}
	return b.buf.Write(p)
}

// countWriter counts bytes and keeps none: a command's standard error may
// hold secrets, so only its size is recorded. With a tail (airlock tools
// only, for its error messages on the terminal) it keeps the last bytes.
type countWriter struct {
	n    atomic.Int64
	tail *mcpclient.Tail
}

func (c *countWriter) Write(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	if c.tail != nil {
		c.tail.Write(p)
	}
	return len(p), nil
}

// fetchCommand runs a command; its standard output is the body, its exit
// status and the size of its standard error are recorded. A command that
// cannot start, runs out of time or writes more than MaxBytes records
// nothing (ErrUpstream); a non-zero exit status is recorded, not judged.
func (rec *recorder) fetchCommand(ctx context.Context, c *CommandCall) (*capture, error) {
	argv, redacted := rec.redactArgv(c.Argv)
	what := "command: " + mcpclient.ShellQuote(argv)
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	cmd.Dir, cmd.Env = c.Dir, c.Env
	if c.Stdin != nil {
		cmd.Stdin = bytes.NewReader(c.Stdin)
	}
	stdout := &limitBuffer{max: rec.opts.MaxBytes}
	stderr := &countWriter{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// A child that keeps the pipes open after the command is killed must not
	// hold the recording forever.
	cmd.WaitDelay = 2 * time.Second

	start := time.Now()
	err := cmd.Run()
	received := time.Now()
	exit := 0
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return nil, upstreamErr(ctx, rec.opts.Timeout, what, ctx.Err())
	case errors.Is(err, errTooMuch):
		return nil, fmt.Errorf("%w: %s: standard output is longer than %d bytes (--max-bytes); nothing recorded", ErrUpstream, what, rec.opts.MaxBytes)
	case errors.As(err, &ee):
		exit = ee.ExitCode()
	case err != nil:
		return nil, fmt.Errorf("%w: %s: %v; nothing recorded", ErrUpstream, what, err)
	}
	ct := c.ContentType
	if ct == "" {
		ct = "application/json"
	}
	n := stderr.n.Load()
	got := &capture{
		status:      0,
		contentType: ct,
		body:        stdout.buf.Bytes(),
		source:      what,
		redacted:    redacted,
		exitStatus:  &exit,
		stderrBytes: &n,
		received:    received,
		duration:    received.Sub(start),
	}
	if exit != 0 {
		got.warnings = append(got.warnings, fmt.Sprintf("the command exited with status %d", exit))
	}
	return got, nil
}
