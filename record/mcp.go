package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/sanitize"
	"github.com/airlockdev/airlock/redact"
)

// mcpSession is one connection to an MCP server, shared by every call of a
// run that names the same server.
type mcpSession struct {
	session *mcp.ClientSession
	wire    *wireCapture
	stderr  *countWriter
	// source describes the server, credentials redacted.
	source    string
	redacted  []redact.Redaction
	reqHeader map[string]string
	// scrub takes the server's URL, credentials and all, out of an error.
	scrub func(error) error
	// schemas maps tool name → its outputSchema as sent (nil: none); listed
	// is false until tools/list has been read.
	schemas map[string][]byte
	listed  bool
}

func (s *mcpSession) close() {
	if s.session != nil {
		s.session.Close()
	}
}

// wireCapture keeps the raw result of each JSON-RPC response, by the
// method of the request it answers, as the server sent it. The SDK decodes
// a CallToolResult into structs, which cannot tell a missing
// structuredContent from a null one and drops unknown members; the gate
// must see the bytes.
type wireCapture struct {
	mu       sync.Mutex
	methods  map[any]string
	results  map[string][]json.RawMessage
	protocol string
	// readFailed, when set, is told of a read that failed other than at
	// the end of the stream (junk on stdout): the SDK ignores it and waits.
	readFailed func(error)
}

func (w *wireCapture) sent(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.ID.IsValid() {
		return
	}
	w.mu.Lock()
	w.methods[req.ID.Raw()] = req.Method
	w.mu.Unlock()
}

func (w *wireCapture) received(msg jsonrpc.Message) {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || !resp.ID.IsValid() {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	method, ok := w.methods[resp.ID.Raw()]
	if !ok {
		return
	}
	delete(w.methods, resp.ID.Raw())
	if resp.Result == nil {
		return
	}
	w.results[method] = append(w.results[method], bytes.Clone(resp.Result))
	if method == "initialize" {
		var init struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(resp.Result, &init) == nil {
			w.protocol = init.ProtocolVersion
		}
	}
}

// take returns and forgets the results captured for method.
func (w *wireCapture) take(method string) []json.RawMessage {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.results[method]
	delete(w.results, method)
	return out
}

func (w *wireCapture) protocolVersion() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.protocol
}

type captureTransport struct {
	inner mcp.Transport
	wire  *wireCapture
}

func (t *captureTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &captureConn{Connection: c, wire: t.wire}, nil
}

type captureConn struct {
	mcp.Connection
	wire *wireCapture
}

func (c *captureConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		c.wire.received(msg)
	} else if c.wire.readFailed != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		c.wire.readFailed(err)
	}
	return msg, err
}

func (c *captureConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	c.wire.sent(msg)
	return c.Connection.Write(ctx, msg)
}

// headerTransport adds the call's headers to every HTTP request of a
// streamable HTTP session to the server's own origin (scheme and host of
// its URL) — never to another origin, so credentials given for the server
// cannot reach a host it points elsewhere — and the negotiated
// MCP-Protocol-Version (which the SDK learns through a hook a wrapped
// connection cannot offer). The session's client follows no redirect
// (noRedirects).
type headerTransport struct {
	base   http.RoundTripper
	header http.Header
	origin string // scheme://host of the server's URL
	wire   *wireCapture
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if req.URL.Scheme+"://"+req.URL.Host == t.origin {
		for k, v := range t.header {
			req.Header[k] = append([]string(nil), v...)
		}
	}
	if pv := t.wire.protocolVersion(); pv != "" && req.Header.Get("Mcp-Protocol-Version") == "" {
		req.Header.Set("Mcp-Protocol-Version", pv)
	}
	return t.base.RoundTrip(req)
}

func (rec *recorder) mcpSession(ctx context.Context, c *MCPCall) (*mcpSession, error) {
	key := c.URL
	if key == "" {
		key = "\x00" + strings.Join(c.Command, "\x00")
	}
	if s := rec.mcp[key]; s != nil {
		return s, nil
	}
	s, err := rec.connectMCP(ctx, c)
	if err != nil {
		return nil, upstreamErr(ctx, rec.opts.Timeout, s.source+": connecting", err)
	}
	rec.mcp[key] = s
	return s, nil
}

// connectMCP starts (stdio) or reaches (streamable HTTP) the server c
// names and initialises a session. On error the session is not connected
// but its source (redacted) is set, and the error is scrubbed of the URL.
func (rec *recorder) connectMCP(ctx context.Context, c *MCPCall) (*mcpSession, error) {
	s := &mcpSession{
		wire:    &wireCapture{methods: map[any]string{}, results: map[string][]json.RawMessage{}, readFailed: rec.readFailed},
		schemas: map[string][]byte{},
		scrub:   func(err error) error { return err },
	}
	var transport mcp.Transport
	if c.URL != "" {
		u, redacted := rec.redactURL(c.URL)
		s.source, s.redacted = "mcp "+u, redacted
		s.scrub = func(err error) error { return scrubbed(err, c.URL, u) }
		var found []redact.Redaction
		s.reqHeader, found = rec.redactHeader(c.Header, redact.RedactedHeader)
		s.redacted = append(s.redacted, found...)
		transport = &mcp.StreamableClientTransport{
			Endpoint: c.URL,
			HTTPClient: &http.Client{Transport: &headerTransport{
				base:   &http.Transport{Proxy: http.ProxyFromEnvironment},
				header: c.Header, origin: originOf(c.URL), wire: s.wire,
			}, CheckRedirect: noRedirects},
			DisableStandaloneSSE: true,
			MaxRetries:           -1,
		}
	} else {
		argv, redacted := rec.redactArgv(c.Command)
		s.source, s.redacted = "mcp stdio: "+shellQuote(argv), redacted
		cmd := exec.Command(c.Command[0], c.Command[1:]...)
		cmd.Dir, cmd.Env = c.Dir, c.Env
		s.stderr = &countWriter{tail: rec.stderrTail}
		cmd.Stderr = s.stderr
		transport = &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "airlock", Version: gate.Version}, nil)
	session, err := client.Connect(ctx, &captureTransport{inner: transport, wire: s.wire}, nil)
	if err != nil {
		return s, s.scrub(err)
	}
	s.session = session
	return s, nil
}

// outputSchema returns the tool's outputSchema from tools/list, indented
// but otherwise as sent (member order, number spelling); nil when the tool
// declares none. found is false when tools/list does not offer the tool.
func (s *mcpSession) outputSchema(ctx context.Context, tool string) (schema []byte, found bool, err error) {
	if !s.listed {
		s.wire.take("tools/list")
		var decoded []*mcp.Tool
		for t, err := range s.session.Tools(ctx, nil) {
			if err != nil {
				return nil, false, s.scrub(err)
			}
			decoded = append(decoded, t)
		}
		for _, page := range s.wire.take("tools/list") {
			var raw struct {
				Tools []struct {
					Name         string          `json:"name"`
					OutputSchema json.RawMessage `json:"outputSchema"`
				} `json:"tools"`
			}
			if json.Unmarshal(page, &raw) != nil {
				continue
			}
			for _, t := range raw.Tools {
				s.schemas[t.Name] = indentJSON(t.OutputSchema)
			}
		}
		// Pages the SDK answered from its cache never crossed the wire.
		for _, t := range decoded {
			if _, ok := s.schemas[t.Name]; ok {
				continue
			}
			var b []byte
			if t.OutputSchema != nil {
				b, _ = json.Marshal(t.OutputSchema)
			}
			s.schemas[t.Name] = indentJSON(b)
		}
		s.listed = true
	}
	schema, found = s.schemas[tool]
	return schema, found, nil
}

func indentJSON(raw json.RawMessage) []byte {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") != nil {
		return append(bytes.Clone(raw), '\n')
	}
	buf.WriteByte('\n')
	return buf.Bytes()
}

// fetchMCP makes one tools/call. The body is the JSON-RPC result exactly
// as the server sent it; a JSON-RPC error (unknown tool, bad arguments) is
// no CallToolResult and records nothing (ErrUpstream).
func (rec *recorder) fetchMCP(ctx context.Context, c *MCPCall) (*capture, error) {
	start := time.Now()
	s, err := rec.mcpSession(ctx, c)
	if err != nil {
		return nil, err
	}
	args := c.Arguments
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	shownArgs, argRedacted := args, []redact.Redaction(nil)
	if !rec.opts.NoRedact {
		var found []redact.Redaction
		shownArgs, found, _ = rec.opts.Redactor.Body(args)
		for _, f := range found {
			f.Where = redact.RedactedArguments
			argRedacted = append(argRedacted, f)
		}
	}
	what := fmt.Sprintf("%s: tools/call %s %s", s.source, c.Tool, compactJSON(shownArgs))

	schema, listed, err := s.outputSchema(ctx, c.Tool)
	if err != nil {
		return nil, upstreamErr(ctx, rec.opts.Timeout, s.source+": tools/list", err)
	}
	if !listed {
		// A mistyped tool name is the caller's error: refuse it before the
		// call rather than record the server's "tool not found".
		names := slices.Sorted(maps.Keys(s.schemas))
		return nil, &gate.ConfigError{File: "--mcp-tool", Msg: fmt.Sprintf("the MCP server does not offer tool %q (tools/list: %s)", c.Tool, sanitize.Text(strings.Join(names, ", "), 512, sanitize.Escape))}
	}
	s.wire.take("tools/call")
	start = time.Now()
	_, callErr := s.session.CallTool(ctx, &mcp.CallToolParams{Name: c.Tool, Arguments: args})
	received := time.Now()
	results := s.wire.take("tools/call")
	if len(results) == 0 {
		if callErr == nil {
			callErr = fmt.Errorf("no result on the wire")
		}
		return nil, upstreamErr(ctx, rec.opts.Timeout, what, s.scrub(callErr))
	}
	got := &capture{
		status:       0,
		contentType:  "application/json",
		body:         results[len(results)-1],
		source:       what,
		reqHeader:    s.reqHeader,
		redacted:     append(append([]redact.Redaction(nil), s.redacted...), argRedacted...),
		mcpTool:      c.Tool,
		outputSchema: schema,
		received:     received,
		duration:     received.Sub(start),
	}
	if s.stderr != nil {
		n := s.stderr.n.Load()
		got.stderrBytes = &n
	}
	if callErr != nil {
		got.warnings = append(got.warnings, "the MCP SDK could not decode the result ("+sanitize.Text((&redact.Redactor{}).Text(s.scrub(callErr).Error()), 200, sanitize.Escape)+"); the bytes are recorded as sent")
	}
	return got, nil
}

func compactJSON(b []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return sanitize.Text(string(b), 1024, sanitize.Escape)
	}
	return sanitize.Text(buf.String(), 1024, sanitize.Escape)
}

// noRedirects makes an MCP session's HTTP client answer a redirect with
// the redirect itself (an error the session reports) rather than follow
// it: a streamable HTTP endpoint has one URL, and a redirect to another
// host is not the server the user named.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// originOf is scheme://host of a URL ("" when it does not parse).
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}
