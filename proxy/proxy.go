// Package proxy is the MCP proxy that gates tool results in production
// (airlock proxy): Serve forwards every JSON-RPC message between an agent
// and an MCP server unchanged, except the results of tools/call for tools
// with a contract, which go through the gate, and tools/list results, whose
// contracted tools advertise the contract's agent-facing schema. Stdio
// starts a server process and serves the agent on the proxy's own standard
// input and output with bounded reads (LineConn). docs/proxy.md is the
// user's guide.
package proxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/semantic"
)

// DefaultCallTimeout is how long a request waits for the server's answer
// when Options.CallTimeout is 0.
const DefaultCallTimeout = 60 * time.Second

// Unlisted is what the proxy does with a tool that has no contract.
type Unlisted string

// The policies for tools without a contract.
const (
	// UnlistedPass forwards the tool's calls and results unchanged (the
	// default); the proxy logs a warning naming each such tool.
	UnlistedPass Unlisted = "pass"
	// UnlistedHide removes the tool from tools/list results; a call to it
	// is answered with a JSON-RPC error (-32602, unknown tool) and never
	// reaches the server.
	UnlistedHide Unlisted = "hide"
	// UnlistedRefuse keeps the tool listed, but every call is answered
	// with the failure envelope (INVALID_RESPONSE, not retryable; reason
	// ReasonUnlisted) and never reaches the server.
	UnlistedRefuse Unlisted = "refuse"
)

// ReasonUnlisted is Observation.Reason of a call refused because its tool
// has no contract (UnlistedRefuse).
const ReasonUnlisted = "proxy.unlisted"

// ReasonUnreadable is Observation.Reason of a call whose answer was not a
// JSON-RPC message the proxy could read (valid JSON nested deeper than the
// decoder reads, say) but named the call's id.
const ReasonUnreadable = "proxy.unreadable"

// ReasonUpstreamError is Observation.Reason of a contracted tool's call
// answered by a JSON-RPC error.
const ReasonUpstreamError = "proxy.upstream_error"

// ParseUnlisted reads "pass", "hide" or "refuse"; "" is UnlistedPass.
func ParseUnlisted(s string) (Unlisted, error) {
	switch Unlisted(s) {
	case "", UnlistedPass:
		return UnlistedPass, nil
	case UnlistedHide, UnlistedRefuse:
		return Unlisted(s), nil
	}
	return "", fmt.Errorf("unknown unlisted policy %q: want pass, hide or refuse", s)
}

// ToolConfig is the proxy's setting for one MCP tool.
type ToolConfig struct {
	// Mode overrides Options.Mode for the tool; "" keeps it.
	Mode gate.Mode
	// Contract is the contract's tool name when it differs from the MCP
	// tool name (an MCP name such as get-weather is not a contract tool
	// name); "" means the MCP tool name itself.
	Contract string
}

// Options configure Serve. The zero value passes everything (no
// contracts).
type Options struct {
	// Contracts are the contracts the proxy gates with, read once per
	// result (a Reload takes effect at the next result); nil: none.
	Contracts *Contracts
	// Mode is the mode of every contracted tool without its own in Tools;
	// "" is gate.ModeStrict.
	Mode gate.Mode
	// Tools are per-tool settings by MCP tool name.
	Tools map[string]ToolConfig
	// Unlisted is the policy for tools without a contract; "" is
	// UnlistedPass.
	Unlisted Unlisted
	// CallTimeout is how long a request waits for the server's answer;
	// 0 is DefaultCallTimeout. A tools/call past it is answered with the
	// failure envelope (UPSTREAM_UNAVAILABLE, retryable); another request
	// with a JSON-RPC error (-32603). A late answer is dropped.
	CallTimeout time.Duration
	// Observe is called once per tools/call result of a contracted tool
	// (not in mode off), per JSON-RPC error or unreadable line answering
	// one (reasons ReasonUpstreamError, ReasonUnreadable) and per call
	// answered as unavailable; nil: none.
	// It is called from the proxy's goroutines and must not block long.
	Observe func(Observation)
	// Source names the server in audit records (gate.Response.Source).
	Source string
	// Sample, when set, writes a share of the results of contracted tools
	// (also refused ones, in any mode but off) as recorded fixtures.
	Sample *Sampling
	// Logger receives the proxy's own log (garbage from the server,
	// timeouts, unlisted tools); nil discards it. Never the agent's stdout.
	Logger *slog.Logger
}

// Serve forwards JSON-RPC messages between agent (the MCP client's side)
// and server until one side ends: the agent's (io.EOF or ctx done) returns
// nil, after forwarding the answers to its pending requests that arrive
// within DrainTimeout (the server's error if it ends meanwhile with
// requests pending); the server's returns an error wrapping ErrUpstreamClosed after
// answering every pending request. Both connections are closed on return.
//
// Every message passes unchanged (re-encoded: member order of the
// JSON-RPC wrapper and insignificant space may differ) except:
//   - a tools/call result of a tool with a contract, in mode strict: the
//     agent gets {"content":[{"type":"text","text":DATA}],
//     "structuredContent":DATA} with DATA the success envelope's data, or,
//     refused, {"content":[{"type":"text","text":FAILURE}],"isError":true}
//     with FAILURE the failure envelope; in mode warn the original result
//     (the verdict only observed); in mode off the original, unobserved.
//     The gate sees Response{Status: 200, ContentType: application/json,
//     Body: the raw result}, the request id "<jsonrpc id>.<minted id>"
//     and the call's scalar arguments as the request context (strings,
//     numbers as json.Number, booleans, null);
//   - a tools/list result: each tool with a contract in mode strict gets
//     the contract's agent-facing schema as outputSchema (without
//     "$schema"); tools without one are kept or dropped per Unlisted;
//   - calls to tools without a contract under UnlistedHide or
//     UnlistedRefuse are answered by the proxy (see Unlisted);
//   - a JSON-RPC error answering a contracted tool's tools/call (not in
//     mode off) is observed; in mode strict the agent gets the failure
//     envelope (UPSTREAM_UNAVAILABLE, not retryable) instead;
//   - a tools/call whose params are not read strictly (readCallParams),
//     a request reusing a pending id, and requests past MaxPending or
//     MaxPendingArgBytes are answered with a JSON-RPC error, unforwarded;
//     the server gets a tools/call's params re-encoded from what the
//     proxy read.
//
// A server line longer than the limit (*TooLargeError) answers the call it
// names with the failure envelope of transport.too_large; one that is not
// JSON-RPC (*BadMessageError) is logged and skipped, and answers at once
// the call whose id it names (failure envelope, INVALID_RESPONSE, not
// retryable). An agent line that is a batch is answered with a JSON-RPC
// error (id null, -32600).
func Serve(ctx context.Context, agent, server mcp.Connection, opts Options) error {
	p := &proxy{
		opts: opts, agent: agent, server: server,
		pending: map[string]*pending{}, warned: map[string]bool{},
	}
	if p.opts.CallTimeout <= 0 {
		p.opts.CallTimeout = DefaultCallTimeout
	}
	if p.opts.Logger == nil {
		p.opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	var nonce [4]byte
	_, _ = rand.Read(nonce[:])
	p.nonce = hex.EncodeToString(nonce[:])
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	agentDone, serverDone := make(chan error, 1), make(chan error, 1)
	go func() { agentDone <- p.fromAgent(ctx) }()
	go func() { serverDone <- p.fromServer(ctx) }()
	var err error
	select {
	case err = <-agentDone:
		if err == nil {
			err = p.drain(serverDone)
		}
	case err = <-serverDone:
	case <-ctx.Done():
	}
	p.stopTimers()
	agent.Close()
	server.Close()
	p.sampleMu.Lock()
	p.sampleStop = true
	p.sampleMu.Unlock()
	p.sampleWG.Wait()
	return err
}

// DrainTimeout is how long Serve still forwards the server's answers to
// the agent's pending requests after the agent's side ended (a client that
// wrote its requests and closed its output), before it returns.
const DrainTimeout = 2 * time.Second

// drain waits until no request is pending, the server's side ends (its
// error), or DrainTimeout passes (nil).
func (p *proxy) drain(serverDone <-chan error) error {
	deadline := time.Now().Add(DrainTimeout)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		n, gone := len(p.pending), p.serverGone
		p.mu.Unlock()
		if gone {
			return <-serverDone
		}
		if n == 0 {
			return nil
		}
		select {
		case err := <-serverDone:
			return err
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

type proxy struct {
	opts          Options
	agent, server mcp.Connection
	nonce         string
	seq           atomic.Uint64

	mu      sync.Mutex
	pending map[string]*pending // by key(id) of the agent's request
	// argBytes is the sum of the pending requests' argBytes.
	argBytes int
	warned   map[string]bool // unlisted tools already logged
	// serverGone is set when the server's side ended, before its pending
	// requests are answered.
	serverGone bool

	schemas sync.Map // *gate.Contract → []byte, the agent schema as outputSchema

	// The sample this Serve is writing (Options.Sample): Serve waits for
	// it before it returns, and starts none once it is returning.
	sampleMu   sync.Mutex
	sampleStop bool
	sampleWG   sync.WaitGroup
}

// pending is one request of the agent the server has not answered.
type pending struct {
	id       jsonrpc.ID
	method   string
	tool     string         // tools/call: the MCP tool name
	contract *gate.Contract // tools/call of a contracted tool
	mode     gate.Mode
	args     map[string]any
	argBytes int // what args holds, in bytes (argBytes)
	timer    *time.Timer
	started  time.Time // when the request was forwarded
}

func key(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

func idText(id jsonrpc.ID) string { return fmt.Sprint(id.Raw()) }

// requestID is the gate's request id for an agent request: its JSON-RPC id
// and a proxy-minted id.
func (p *proxy) requestID(id jsonrpc.ID) string {
	return idText(id) + "." + p.nonce + "-" + strconv.FormatUint(p.seq.Add(1), 10)
}

// route returns the contract and mode of an MCP tool; nil when it has no
// contract.
func (p *proxy) route(tool string) (*gate.Contract, gate.Mode) {
	tc := p.opts.Tools[tool]
	name := tool
	if tc.Contract != "" {
		name = tc.Contract
	}
	c, ok := p.opts.Contracts.Load().Get(name)
	if !ok {
		return nil, ""
	}
	mode := p.opts.Mode
	if tc.Mode != "" {
		mode = tc.Mode
	}
	if mode == "" {
		mode = gate.ModeStrict
	}
	return c, mode
}

func (p *proxy) observe(o Observation) {
	if p.opts.Observe != nil {
		p.opts.Observe(o)
	}
}

func (p *proxy) toAgent(ctx context.Context, msg jsonrpc.Message) {
	if err := p.agent.Write(ctx, msg); err != nil {
		p.opts.Logger.Warn("writing to the agent failed", "error", err)
	}
}

// fromAgent forwards the agent's messages to the server until the agent's
// side ends (nil).
func (p *proxy) fromAgent(ctx context.Context) error {
	for {
		msg, err := p.agent.Read(ctx)
		var tooLarge *TooLargeError
		var bad *BadMessageError
		switch {
		case errors.As(err, &tooLarge):
			p.opts.Logger.Warn("agent message discarded", "error", err)
			if tooLarge.ID.IsValid() {
				p.toAgent(ctx, errorResponse(tooLarge.ID, jsonrpc.CodeInvalidRequest, "request too large for airlock proxy"))
			}
			continue
		case errors.As(err, &bad):
			p.opts.Logger.Warn("agent message skipped", "error", err)
			switch {
			case bad.Batch:
				p.answerNullID(ctx, jsonrpc.CodeInvalidRequest, "batches are not supported")
			case bad.ID.IsValid():
				p.toAgent(ctx, errorResponse(bad.ID, jsonrpc.CodeInvalidRequest, "airlock proxy: not a JSON-RPC message it can read"))
			}
			continue
		case err != nil:
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("reading the agent: %w", err)
		}
		if req, ok := msg.(*jsonrpc.Request); ok && p.fromAgentRequest(ctx, req) {
			continue
		}
		if err := p.server.Write(ctx, msg); err != nil {
			return fmt.Errorf("%w: writing to it: %v", ErrUpstreamClosed, err)
		}
	}
}

// fromAgentRequest registers a request of the agent as pending; true when
// the proxy answered it itself (not to be forwarded).
func (p *proxy) fromAgentRequest(ctx context.Context, req *jsonrpc.Request) bool {
	if !req.IsCall() {
		if req.Method == "notifications/cancelled" {
			var params struct {
				RequestID any `json:"requestId"`
			}
			if json.Unmarshal(req.Params, &params) == nil {
				if id, err := jsonrpc.MakeID(params.RequestID); err == nil && id.IsValid() {
					p.take(id)
				}
			}
		}
		return false
	}
	k := key(req.ID)
	p.mu.Lock()
	_, inUse := p.pending[k]
	full := len(p.pending) >= MaxPending
	p.mu.Unlock()
	if inUse {
		p.toAgent(ctx, errorResponse(req.ID, jsonrpc.CodeInvalidRequest, "id already in use by a pending request"))
		return true
	}
	if full {
		p.toAgent(ctx, errorResponse(req.ID, jsonrpc.CodeInternalError, fmt.Sprintf("airlock proxy: %d requests pending, the most a session may have", MaxPending)))
		return true
	}
	pd := &pending{id: req.ID, method: req.Method, started: time.Now()}
	if req.Method == "tools/call" {
		params, err := readCallParams(req.Params)
		if err != nil {
			p.opts.Logger.Warn("refused a tools/call", "id", idText(req.ID), "error", err)
			p.toAgent(ctx, errorResponse(req.ID, jsonrpc.CodeInvalidParams, "airlock proxy: "+err.Error()))
			return true
		}
		// The server gets the params the proxy judged, re-encoded.
		req.Params = params.raw
		pd.tool = params.name
		pd.contract, pd.mode = p.route(params.name)
		if pd.contract == nil {
			switch p.opts.Unlisted {
			case UnlistedHide:
				p.toAgent(ctx, errorResponse(req.ID, jsonrpc.CodeInvalidParams, "Unknown tool: "+params.name))
				return true
			case UnlistedRefuse:
				env := gate.FailureEnvelope(params.name, p.requestID(req.ID), gate.InvalidResponse, false)
				p.toAgent(ctx, resultResponse(req.ID, failureResult(env)))
				p.observe(Observation{Tool: params.name, Mode: gate.ModeStrict, Outcome: OutcomeRefused, Reason: ReasonUnlisted})
				return true
			}
		}
		pd.args = contextOf(params.arguments)
		pd.argBytes = argBytes(pd.args)
	}
	pd.timer = time.AfterFunc(p.opts.CallTimeout, func() {
		if p.take(pd.id) == nil {
			return
		}
		p.opts.Logger.Warn("the MCP server did not answer in time", "method", pd.method, "tool", pd.tool, "id", idText(pd.id), "timeout", p.opts.CallTimeout.String())
		p.unavailable(context.Background(), pd, "timed out")
	})
	p.mu.Lock()
	_, inUse = p.pending[k]
	switch {
	case inUse: // another goroutine cannot add: fromAgent is the only writer
		p.mu.Unlock()
		pd.timer.Stop()
		p.toAgent(ctx, errorResponse(req.ID, jsonrpc.CodeInvalidRequest, "id already in use by a pending request"))
		return true
	case p.argBytes+pd.argBytes > MaxPendingArgBytes:
		p.mu.Unlock()
		pd.timer.Stop()
		p.toAgent(ctx, errorResponse(req.ID, jsonrpc.CodeInternalError, fmt.Sprintf("airlock proxy: the pending calls' arguments would hold more than %d bytes", MaxPendingArgBytes)))
		return true
	}
	p.pending[k] = pd
	p.argBytes += pd.argBytes
	p.mu.Unlock()
	return false
}

// take removes and returns the pending request of id (nil: none).
func (p *proxy) take(id jsonrpc.ID) *pending {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := key(id)
	pd := p.pending[k]
	if pd != nil {
		delete(p.pending, k)
		p.argBytes -= pd.argBytes
		pd.timer.Stop()
	}
	return pd
}

func (p *proxy) stopTimers() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pd := range p.pending {
		pd.timer.Stop()
	}
}

// unavailable answers a pending request the server will not answer: a
// tools/call with the failure envelope (UPSTREAM_UNAVAILABLE, retryable),
// another request with a JSON-RPC error.
func (p *proxy) unavailable(ctx context.Context, pd *pending, why string) {
	if pd.method != "tools/call" {
		p.toAgent(ctx, errorResponse(pd.id, jsonrpc.CodeInternalError, "airlock proxy: the MCP server "+why))
		return
	}
	tool := pd.tool
	if pd.contract != nil {
		tool = pd.contract.Tool()
	}
	env := gate.FailureEnvelope(tool, p.requestID(pd.id), gate.UpstreamUnavailable, true)
	p.toAgent(ctx, resultResponse(pd.id, failureResult(env)))
	p.observe(Observation{Tool: pd.tool, Mode: pd.mode, Outcome: OutcomeUpstreamUnavailable})
}

// fromServer forwards the server's messages until its side ends; then it
// answers every pending request and returns ErrUpstreamClosed.
func (p *proxy) fromServer(ctx context.Context) error {
	for {
		msg, err := p.server.Read(ctx)
		var tooLarge *TooLargeError
		var bad *BadMessageError
		switch {
		case errors.As(err, &tooLarge):
			p.tooLarge(ctx, tooLarge)
			continue
		case errors.As(err, &bad):
			p.opts.Logger.Warn("skipped a line from the MCP server", "error", err)
			if bad.ID.IsValid() {
				p.unreadable(ctx, bad.ID, err)
			}
			continue
		case err != nil:
			if ctx.Err() != nil {
				return nil // Serve returned already
			}
			p.mu.Lock()
			p.serverGone = true
			all := make([]*pending, 0, len(p.pending))
			for k, pd := range p.pending {
				pd.timer.Stop()
				all = append(all, pd)
				delete(p.pending, k)
				p.argBytes -= pd.argBytes
			}
			p.mu.Unlock()
			for _, pd := range all {
				p.unavailable(ctx, pd, "closed its connection")
			}
			return fmt.Errorf("%w (%v); %d pending requests answered", ErrUpstreamClosed, err, len(all))
		}
		if ctx.Err() != nil {
			continue // Serve returned: read on until the server's side ends, forward nothing
		}
		resp, ok := msg.(*jsonrpc.Response)
		if !ok {
			p.toAgent(ctx, msg)
			continue
		}
		pd := p.take(resp.ID)
		if pd == nil {
			p.opts.Logger.Warn("dropped an answer to no pending request (timed out or cancelled)", "id", idText(resp.ID))
			continue
		}
		switch {
		case resp.Error != nil:
			if pd.method == "tools/call" && pd.contract != nil && pd.mode != gate.ModeOff {
				msg = p.upstreamError(ctx, pd, resp)
			}
		case pd.method == "tools/call" && pd.contract != nil && pd.mode != gate.ModeOff:
			msg = p.gated(ctx, pd, resp)
		case pd.method == "tools/list":
			msg = p.rewriteList(resp)
		}
		p.toAgent(ctx, msg)
	}
}

// answerNullID writes a JSON-RPC error with id null to the agent (the SDK
// cannot encode a null id; a LineConn writes the line itself, other
// connections get nothing).
func (p *proxy) answerNullID(ctx context.Context, code int64, message string) {
	lc, ok := p.agent.(*LineConn)
	if !ok {
		return
	}
	data, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": message}})
	if err := lc.writeLine(data); err != nil {
		p.opts.Logger.Warn("writing to the agent failed", "error", err)
	}
}

// unreadable answers at once the call a server line that is not JSON-RPC
// (valid JSON nested too deep, say) names: a tools/call with the failure
// envelope (INVALID_RESPONSE, not retryable), another request with a
// JSON-RPC error.
func (p *proxy) unreadable(ctx context.Context, id jsonrpc.ID, cause error) {
	pd := p.take(id)
	if pd == nil {
		return
	}
	if pd.method != "tools/call" {
		p.toAgent(ctx, errorResponse(pd.id, jsonrpc.CodeInternalError, "airlock proxy: the MCP server's answer is not a JSON-RPC message"))
		return
	}
	tool := pd.tool
	if pd.contract != nil {
		tool = pd.contract.Tool()
	}
	env := gate.FailureEnvelope(tool, p.requestID(pd.id), gate.InvalidResponse, false)
	p.observe(Observation{Tool: pd.tool, Mode: pd.mode, Outcome: OutcomeRefused, Reason: ReasonUnreadable})
	p.toAgent(ctx, resultResponse(pd.id, failureResult(env)))
}

// tooLarge answers the call an oversized server line named.
func (p *proxy) tooLarge(ctx context.Context, e *TooLargeError) {
	var pd *pending
	if e.ID.IsValid() {
		pd = p.take(e.ID)
	}
	if pd == nil {
		p.opts.Logger.Warn("discarded a message from the MCP server naming no pending request", "error", e)
		return
	}
	p.opts.Logger.Warn("discarded an oversized answer of the MCP server", "method", pd.method, "tool", pd.tool, "id", idText(pd.id), "error", e)
	if pd.method != "tools/call" {
		p.toAgent(ctx, errorResponse(pd.id, jsonrpc.CodeInternalError, "airlock proxy: "+e.Error()))
		return
	}
	info, _ := gate.LookupReason(gate.ReasonTooLarge)
	tool := pd.tool
	if pd.contract != nil {
		tool = pd.contract.Tool()
	}
	env := gate.FailureEnvelope(tool, p.requestID(pd.id), info.ErrorCode, info.Retryable)
	p.toAgent(ctx, resultResponse(pd.id, failureResult(env)))
	p.observe(Observation{Tool: pd.tool, Mode: pd.mode, Outcome: OutcomeRefused, Reason: gate.ReasonTooLarge, Bytes: int(min(e.Size, 1<<62))})
}

// upstreamError handles a JSON-RPC error answering a contracted tool's
// call: observed (OutcomeUpstreamUnavailable, reason ReasonUpstreamError);
// in mode strict the agent gets the failure envelope (UPSTREAM_UNAVAILABLE,
// not retryable) instead of the server's text, in mode warn the error.
func (p *proxy) upstreamError(ctx context.Context, pd *pending, resp *jsonrpc.Response) jsonrpc.Message {
	p.opts.Logger.Warn("the MCP server answered a contracted tool's call with a JSON-RPC error", "tool", pd.tool, "id", idText(pd.id))
	p.observe(Observation{Tool: pd.tool, Mode: pd.mode, Outcome: OutcomeUpstreamUnavailable, Reason: ReasonUpstreamError, Latency: time.Since(pd.started)})
	if pd.mode == gate.ModeWarn {
		return resp
	}
	env := gate.FailureEnvelope(pd.contract.Tool(), p.requestID(pd.id), gate.UpstreamUnavailable, false)
	return resultResponse(pd.id, failureResult(env))
}

// gated runs a tools/call result through the contract and returns what the
// agent gets.
func (p *proxy) gated(ctx context.Context, pd *pending, resp *jsonrpc.Response) jsonrpc.Message {
	reqID := p.requestID(pd.id)
	start := time.Now()
	v, err := pd.contract.Check(ctx, gate.Response{Status: 200, ContentType: "application/json", Body: bytes.NewReader(resp.Result), Source: p.opts.Source},
		gate.Call{Request: semantic.Request{ID: reqID, Context: pd.args}, Now: start})
	latency := time.Since(start)
	p.sample(pd, reqID, resp.Result, start, start.Sub(pd.started))
	if err != nil {
		p.opts.Logger.Error("the gate could not check a result", "tool", pd.tool, "error", err)
		p.observe(Observation{Tool: pd.tool, Mode: pd.mode, Outcome: OutcomeRefused, Reason: "internal.error", Latency: latency, Bytes: len(resp.Result)})
		if pd.mode == gate.ModeWarn {
			return resp
		}
		return resultResponse(pd.id, failureResult(gate.FailureEnvelope(pd.contract.Tool(), reqID, gate.InvalidResponse, false)))
	}
	o := Observation{Tool: pd.tool, Mode: pd.mode, Outcome: OutcomeAdmitted, Latency: latency, Bytes: len(resp.Result), Audit: &v.Audit}
	if !v.Admitted {
		o.Outcome, o.Reason = OutcomeRefused, v.Reason
	}
	p.observe(o)
	if pd.mode == gate.ModeWarn {
		return resp
	}
	if !v.Admitted {
		return resultResponse(pd.id, failureResult(v.Output))
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(v.Output, &env); err != nil || len(env.Data) == 0 {
		p.opts.Logger.Error("the success envelope has no data", "tool", pd.tool)
		return resultResponse(pd.id, failureResult(gate.FailureEnvelope(pd.contract.Tool(), reqID, gate.InvalidResponse, false)))
	}
	return resultResponse(pd.id, successResult(env.Data))
}
