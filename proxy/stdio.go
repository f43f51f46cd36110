package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/airlockdev/airlock/internal/mcpclient"
)

// StopGrace is how long Stdio waits for the server to exit after closing
// its standard input, and again after SIGTERM, before the next step
// (SIGTERM, then SIGKILL).
const StopGrace = 2 * time.Second

// Stdio runs cmd as an MCP server over stdio (its standard error goes to
// cmd.Stderr as the caller set it) and serves the agent reading agentIn
// and writing agentOut: the server's lines bounded by MaxMessage of the
// contracts loaded when each line starts (a reload changes it), the
// agent's by MaxAgentMessage. When the agent's input ends (or ctx is done) the
// server is stopped (standard input closed; SIGTERM after StopGrace;
// SIGKILL after another) and Stdio returns nil. When the server exits
// first, every pending request is answered and the error wraps
// ErrUpstreamClosed and says how the process ended. A server that cannot
// start is an error too. opts.Source defaults to "mcp stdio: <argv>"
// (the gate redacts secrets in it).
func Stdio(ctx context.Context, cmd *exec.Cmd, agentIn io.Reader, agentOut io.Writer, opts Options) error {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the MCP server: %w", err)
	}
	if opts.Source == "" {
		opts.Source = mcpclient.Source("", cmd.Args)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// The server's stdout stays open until the process exits (Serve's
	// reader keeps discarding it): a server that writes while it stops
	// gets no EPIPE.
	server := NewLineConn(io.NopCloser(stdout), stdin, MaxMessage(opts.Contracts.Load()))
	server.SetLimit(serverLimit(opts.Contracts))
	agent := NewLineConn(io.NopCloser(agentIn), nopWriteCloser{agentOut}, MaxAgentMessage)
	err = Serve(ctx, agent, server, opts)
	if errors.Is(err, ErrUpstreamClosed) {
		select {
		case werr := <-exited:
			if werr == nil {
				werr = errors.New("exit status 0")
			}
			return fmt.Errorf("%w; the server process ended: %v", err, werr)
		case <-time.After(StopGrace):
			stop(cmd, exited)
			return err
		}
	}
	stop(cmd, exited)
	return err
}

// serverLimit returns the server's line limit for the contracts loaded at
// each call: MaxMessage, recomputed when a reload changed the set.
func serverLimit(cs *Contracts) func() int64 {
	var last *ContractSet
	var limit int64
	return func() int64 {
		if cs == nil {
			return DefaultMaxMessage
		}
		set := cs.Load()
		if set != last || limit == 0 {
			last, limit = set, MaxMessage(set)
		}
		return limit
	}
}

// stop ends the server: its stdin is already closed (Serve closed it);
// SIGTERM after StopGrace, SIGKILL after another.
func stop(cmd *exec.Cmd, exited <-chan error) {
	select {
	case <-exited:
		return
	case <-time.After(StopGrace):
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		return
	case <-time.After(StopGrace):
	}
	_ = cmd.Process.Kill()
	<-exited
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
