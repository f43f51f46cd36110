// Package mcpclient holds the MCP client plumbing that airlock record,
// airlock tools (package record) and airlock import mcp (package importer)
// share: Connect starts a stdio server (its standard error to a writer of
// the caller's, such as a Tail) or reaches a streamable HTTP one (the
// caller's headers sent to the server's own origin only, no redirect
// followed); a Wire keeps the raw result of every JSON-RPC response, as
// the server sent it, and can be told of junk on a server's stdout;
// Session.OutputSchemas reads every page of tools/list with each tool's
// outputSchema as sent and Session.Call makes one tools/call keeping its
// raw result; Source and ShellQuote name a server as airlock shows it.
//
// Redaction stays with the callers: they redact the URL or argv they pass
// to Source and scrub the errors returned here.
package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server names an MCP server: Command (stdio, run in Dir with Env; nil Env
// is the current environment) or URL (streamable HTTP, with Header on
// every request to its origin), exactly one.
type Server struct {
	Command []string
	Dir     string
	Env     []string
	URL     string
	Header  http.Header
}

// Source is a server as airlock shows it: "mcp <url>" when url is set,
// else "mcp stdio: <argv>". The caller passes them redacted.
func Source(url string, argv []string) string {
	if url != "" {
		return "mcp " + url
	}
	return "mcp stdio: " + ShellQuote(argv)
}

// Session is one initialised connection to an MCP server; Wire holds the
// raw results of its responses.
type Session struct {
	*mcp.ClientSession
	Wire *Wire
}

// Connect starts (stdio) or reaches (streamable HTTP) srv and initialises
// a session as client name/version, every response captured in wire. A
// stdio server's standard error goes to stderr (nil: discarded); it gets
// its standard input closed on Close, then SIGTERM after 2 s, then
// SIGKILL. An HTTP session sends srv.Header to the server's origin only
// and follows no redirect. The error is the SDK's, unscrubbed: it may
// hold srv.URL.
func Connect(ctx context.Context, srv Server, name, version string, wire *Wire, stderr io.Writer) (*Session, error) {
	var transport mcp.Transport
	if srv.URL != "" {
		transport = &mcp.StreamableClientTransport{
			Endpoint: srv.URL,
			HTTPClient: &http.Client{Transport: &headerTransport{
				base:   &http.Transport{Proxy: http.ProxyFromEnvironment},
				header: srv.Header, origin: OriginOf(srv.URL), wire: wire,
			}, CheckRedirect: noRedirects},
			DisableStandaloneSSE: true,
			MaxRetries:           -1,
		}
	} else {
		cmd := exec.Command(srv.Command[0], srv.Command[1:]...)
		cmd.Dir, cmd.Env = srv.Dir, srv.Env
		if stderr != nil {
			cmd.Stderr = stderr
		}
		transport = &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: name, Version: version}, nil)
	session, err := client.Connect(ctx, &captureTransport{inner: transport, wire: wire}, nil)
	if err != nil {
		return nil, err
	}
	return &Session{ClientSession: session, Wire: wire}, nil
}

// The bounds of a tools/list read (OutputSchemas).
const (
	MaxPages = 100
	MaxTools = 1000
)

// Errors of OutputSchemas.
var (
	ErrTooManyTools = errors.New("the server lists too many tools")
	ErrCursorLoop   = errors.New("the server sent a tools/list cursor it had sent before (a loop)")
)

// OutputSchemas reads every page of tools/list: the tools as the SDK
// decodes them and, by name, each tool's outputSchema as sent (member
// order, number spelling; absent or null when it declares none). A tool
// whose page the SDK answered from its cache, which never crossed the
// wire, has its decoded outputSchema re-encoded (nil: none).
//
// At most MaxPages pages and MaxTools tools are read (more is an error,
// ErrTooManyTools); a cursor the server sent before is an error
// (ErrCursorLoop), not a loop until the timeout.
func (s *Session) OutputSchemas(ctx context.Context) ([]*mcp.Tool, map[string]json.RawMessage, error) {
	s.Wire.Take("tools/list")
	var tools []*mcp.Tool
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page == MaxPages {
			return nil, nil, fmt.Errorf("%w: more than %d pages", ErrTooManyTools, MaxPages)
		}
		res, err := s.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, nil, err
		}
		tools = append(tools, res.Tools...)
		if len(tools) > MaxTools {
			return nil, nil, fmt.Errorf("%w: more than %d tools", ErrTooManyTools, MaxTools)
		}
		if res.NextCursor == "" {
			break
		}
		if seen[res.NextCursor] {
			return nil, nil, fmt.Errorf("%w (page %d)", ErrCursorLoop, page+1)
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
	raw := map[string]json.RawMessage{}
	for _, page := range s.Wire.Take("tools/list") {
		var p struct {
			Tools []struct {
				Name         string          `json:"name"`
				OutputSchema json.RawMessage `json:"outputSchema"`
			} `json:"tools"`
		}
		if json.Unmarshal(page, &p) != nil {
			continue
		}
		for _, t := range p.Tools {
			raw[t.Name] = t.OutputSchema
		}
	}
	for _, t := range tools {
		if _, ok := raw[t.Name]; ok {
			continue
		}
		var b []byte
		if t.OutputSchema != nil {
			b, _ = json.Marshal(t.OutputSchema)
		}
		raw[t.Name] = b
	}
	return tools, raw, nil
}

// Call makes one tools/call and returns its result exactly as the server
// sent it. With no result on the wire (a JSON-RPC error, a failed
// transport) result is nil and err says why; with one, err is the SDK's
// failure to decode it, if any (the bytes are still the result).
func (s *Session) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	s.Wire.Take("tools/call")
	_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	results := s.Wire.Take("tools/call")
	if len(results) == 0 {
		if err == nil {
			err = errors.New("no result on the wire")
		}
		return nil, err
	}
	return results[len(results)-1], err
}

// Wire keeps the raw result of each JSON-RPC response, by the method of
// the request it answers, as the server sent it. The SDK decodes results
// into structs, which cannot tell a missing member from a null one and
// drop unknown members; a contract must see the bytes.
type Wire struct {
	mu       sync.Mutex
	methods  map[any]string
	results  map[string][]json.RawMessage
	protocol string
	// readFailed, when set, is told of a read that failed other than at
	// the end of the stream (junk on stdout): the SDK ignores it and waits.
	readFailed func(error)
}

// NewWire returns an empty Wire. readFailed, when not nil, is told of
// every read from the server that fails other than at the end of the
// stream or after ctx is done: what the server sent is not JSON-RPC.
func NewWire(readFailed func(error)) *Wire {
	return &Wire{methods: map[any]string{}, results: map[string][]json.RawMessage{}, readFailed: readFailed}
}

func (w *Wire) sent(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.ID.IsValid() {
		return
	}
	w.mu.Lock()
	w.methods[req.ID.Raw()] = req.Method
	w.mu.Unlock()
}

func (w *Wire) received(msg jsonrpc.Message) {
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

// Take returns and forgets the results captured for method.
func (w *Wire) Take(method string) []json.RawMessage {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.results[method]
	delete(w.results, method)
	return out
}

// ProtocolVersion is the MCP protocol version the server's initialize
// result named ("" before it).
func (w *Wire) ProtocolVersion() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.protocol
}

type captureTransport struct {
	inner mcp.Transport
	wire  *Wire
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
	wire *Wire
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

// headerTransport adds the caller's headers to every HTTP request of a
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
	wire   *Wire
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if req.URL.Scheme+"://"+req.URL.Host == t.origin {
		for k, v := range t.header {
			req.Header[k] = append([]string(nil), v...)
		}
	}
	if pv := t.wire.ProtocolVersion(); pv != "" && req.Header.Get("Mcp-Protocol-Version") == "" {
		req.Header.Set("Mcp-Protocol-Version", pv)
	}
	return t.base.RoundTrip(req)
}

// noRedirects makes an MCP session's HTTP client answer a redirect with
// the redirect itself (an error the session reports) rather than follow
// it: a streamable HTTP endpoint has one URL, and a redirect to another
// host is not the server the user named.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// OriginOf is scheme://host of a URL, without its user information (""
// when it does not parse).
func OriginOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// Tail keeps the last Max bytes written to it (a stdio server's standard
// error, for error messages).
type Tail struct {
	Max int
	mu  sync.Mutex
	buf []byte
}

func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.Max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.Max:]...)
	}
	return len(p), nil
}

func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// ShellQuote renders argv as a POSIX shell would need it typed.
func ShellQuote(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,@%+") == "" {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
