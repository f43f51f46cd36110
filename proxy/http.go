package proxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of the streamable HTTP front (NewHTTPHandler).
const (
	// DefaultMaxSessions is HTTPOptions.MaxSessions when 0: the most agent
	// sessions served at once.
	DefaultMaxSessions = 256
	// DefaultMaxMessageBytes is HTTPOptions.MaxMessageBytes when 0: 16
	// MiB, the go-sdk's own cap on one server-sent event.
	DefaultMaxMessageBytes = mcp.DefaultMaxEventSize
	// DefaultSessionIdle is HTTPOptions.SessionIdle when 0: a session
	// with no request in flight for 30 minutes is ended.
	DefaultSessionIdle = 30 * time.Minute
	// DefaultFreshSessionIdle is HTTPOptions.FreshSessionIdle when 0: a
	// session that has served at most FreshRequests requests (its
	// initialize and notifications/initialized) and has none in flight
	// for 30 seconds is ended, so initialize requests alone cannot hold
	// the MaxSessions slots for SessionIdle.
	DefaultFreshSessionIdle = 30 * time.Second
	// FreshRequests is how many requests a session serves before
	// SessionIdle replaces FreshSessionIdle.
	FreshRequests = 2
	// RequestReadTimeout is how long the front waits for a POST's body
	// (the request, not the response stream, which has no deadline: SSE
	// responses last as long as the call); a slower body fails the
	// request.
	RequestReadTimeout = 30 * time.Second
	// IdleConnTimeout is the HTTP server's keep-alive idle timeout
	// (http.Server.IdleTimeout) airlock proxy --listen sets.
	IdleConnTimeout = 2 * time.Minute
	// MaxRequestBytes is the largest HTTP request body an agent may send
	// (its JSON-RPC messages: tool arguments, not results), 4 MiB; a
	// longer one is answered 413.
	MaxRequestBytes = 4 << 20
	// UpstreamIdleConns is how many idle connections to the upstream the
	// front keeps for reuse when HTTPOptions.Client is nil (Go's default
	// transport keeps 2 per host: with more sessions calling at once,
	// every other call would open a new connection).
	UpstreamIdleConns = 64
)

// upstreamTransport is the default transport to the upstream: Go's
// default one with UpstreamIdleConns idle connections per host.
// It is made at first use, not at start-up.
var upstreamTransport = sync.OnceValue(func() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = UpstreamIdleConns
	return t
})

// sessionHeader is the streamable HTTP transport's session header (MCP
// 2025-06-18, "Session Management").
const sessionHeader = "Mcp-Session-Id"

// HTTPOptions configure NewHTTPHandler.
type HTTPOptions struct {
	// Upstream is the MCP server's streamable HTTP endpoint, an http or
	// https URL (--upstream). Required.
	Upstream string
	// Client makes the requests to Upstream; nil means a client of its own
	// on http.DefaultTransport. Its Transport is wrapped so that no
	// application/json response body is read past MaxMessageBytes.
	Client *http.Client
	// MaxSessions is the most agent sessions (and stateless exchanges)
	// at once; 0 means DefaultMaxSessions. A new one past it is answered
	// 503. A session lasts until the agent's DELETE, its Serve's end or
	// Close.
	MaxSessions int
	// MaxMessageBytes is the largest JSON-RPC message read from Upstream,
	// in bytes: an application/json response body or one server-sent
	// event. 0 means DefaultMaxMessageBytes. A longer one fails the
	// session's upstream connection (its Read returns an error), so the
	// proxy never buffers more than this per message.
	MaxMessageBytes int
	// Serve runs one session: it relays agent (the agent's side, a
	// streamable server connection) to server (the upstream's side, a
	// streamable client connection) until either ends or ctx is done, as
	// proxy.Serve(ctx, agent, server, opts) does. Required. Its
	// connections are closed after it returns.
	Serve func(ctx context.Context, agent, server mcp.Connection) error
	// SessionIdle is how long a session may go without a request in
	// flight (an open GET stream counts as one) before it is ended, as by
	// the agent's DELETE; 0 means DefaultSessionIdle. It bounds the slots
	// of agents that leave without DELETE.
	SessionIdle time.Duration
	// FreshSessionIdle is SessionIdle for a session that has served at
	// most FreshRequests requests; 0 means DefaultFreshSessionIdle.
	FreshSessionIdle time.Duration
	// OnSessionEnd, when set, is called with the session id ("" for a
	// stateless exchange) and Serve's error after each ends (for the log).
	// nil: none.
	OnSessionEnd func(sessionID string, err error)
}

// HTTPHandler is the streamable HTTP front of the proxy (--listen ADDR
// --upstream URL): each agent session (MCP streamable HTTP transport,
// keyed by its Mcp-Session-Id) gets its own connection to the upstream
// and its own Serve. Safe for concurrent use.
type HTTPHandler struct {
	opts     HTTPOptions
	ctx      context.Context
	cancel   context.CancelFunc
	mu       sync.Mutex
	sessions map[string]*httpSession
	running  int // sessions and exchanges being served
	closed   bool
	wg       sync.WaitGroup
}

type httpSession struct {
	transport *mcp.StreamableServerTransport
	cancel    context.CancelFunc
	// inFlight counts the session's requests being served (under
	// HTTPHandler.mu); idle ends the session when it stays 0 for
	// SessionIdle.
	inFlight int
	served   int // requests begun
	idle     *time.Timer
}

// begin and end bracket one request of s: the idle timer runs only while
// no request is in flight.
func (h *HTTPHandler) begin(s *httpSession) {
	h.mu.Lock()
	s.inFlight++
	s.served++
	s.idle.Stop()
	h.mu.Unlock()
}

func (h *HTTPHandler) end(s *httpSession) {
	h.mu.Lock()
	s.inFlight--
	if s.inFlight == 0 {
		if s.served <= FreshRequests {
			s.idle.Reset(h.opts.FreshSessionIdle)
		} else {
			s.idle.Reset(h.opts.SessionIdle)
		}
	}
	h.mu.Unlock()
}

// NewHTTPHandler returns the handler for opts. An empty Upstream, an
// Upstream that is not an absolute http(s) URL, or a nil Serve is an error.
func NewHTTPHandler(opts HTTPOptions) (*HTTPHandler, error) {
	if opts.Serve == nil {
		return nil, errors.New("proxy: HTTPOptions.Serve is required")
	}
	if err := checkUpstream(opts.Upstream); err != nil {
		return nil, err
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if opts.SessionIdle <= 0 {
		opts.SessionIdle = DefaultSessionIdle
	}
	if opts.FreshSessionIdle <= 0 {
		opts.FreshSessionIdle = DefaultFreshSessionIdle
	}
	var base = upstreamTransport()
	client := &http.Client{}
	if opts.Client != nil {
		*client = *opts.Client
		if opts.Client.Transport != nil {
			base = opts.Client.Transport
		}
	}
	client.Transport = limitTransport{base: base, max: int64(opts.MaxMessageBytes)}
	opts.Client = client
	ctx, cancel := context.WithCancel(context.Background())
	return &HTTPHandler{opts: opts, ctx: ctx, cancel: cancel, sessions: map[string]*httpSession{}}, nil
}

// ServeHTTP serves the streamable HTTP transport. A POST without
// Mcp-Session-Id that carries an initialize request starts a session
// (MCP 2025-06-18 "Session Management"); one that carries anything else
// (a ping before initialize) is one exchange of its own with the
// upstream, ended when its response is written. A POST or GET with
// Mcp-Session-Id is routed to its session (404 when there is none: the
// agent starts anew), a DELETE with one ends it (204).
//
// The stateless protocol of 2026-07-28 (server/discover, SEP-2575) is not
// served: the go-sdk (v1.8.0) reads its protocol version header only in
// its own handler, so server/discover is answered with JSON-RPC error
// -32020 and a go-sdk client falls back to initialize (a session).
//
// As the go-sdk's handler does, a request that reached a loopback
// address under a Host that is not a loopback name is refused (403):
// DNS rebinding protection for a proxy listening on localhost.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil && isLoopback(local.String()) && !isLoopback(r.Host) {
		http.Error(w, fmt.Sprintf("forbidden: Host %q is not a loopback name", r.Host), http.StatusForbidden)
		return
	}
	id := r.Header.Get(sessionHeader)
	switch r.Method {
	case http.MethodPost, http.MethodGet, http.MethodDelete:
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, MaxRequestBytes)
		// The body is read whole under RequestReadTimeout, then the
		// deadline is lifted for the response stream.
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(RequestReadTimeout))
		body, err := io.ReadAll(r.Body)
		_ = rc.SetReadDeadline(time.Time{})
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				http.Error(w, fmt.Sprintf("request body larger than %d bytes", MaxRequestBytes), http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "cannot read the request body", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	if id != "" {
		h.mu.Lock()
		s := h.sessions[id]
		h.mu.Unlock()
		if s == nil {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		if r.Method == http.MethodDelete {
			s.cancel()
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.begin(s)
		defer h.end(s)
		s.transport.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "Mcp-Session-Id required", http.StatusBadRequest)
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		http.Error(w, "Content-Type must be application/json", http.StatusUnsupportedMediaType)
		return
	}
	body, _ := io.ReadAll(r.Body) // in memory already
	r.Body = io.NopCloser(bytes.NewReader(body))
	stateful := initializes(body)
	s, done, status, err := h.start(stateful)
	if err != nil {
		http.Error(w, err.Error(), status)
		return
	}
	if stateful {
		h.begin(s)
		defer h.end(s)
	}
	s.transport.ServeHTTP(w, r)
	if !stateful {
		s.cancel()
		<-done
	}
}

// initializes reports whether body, a JSON-RPC message or batch, holds an
// initialize request.
func initializes(body []byte) bool {
	var one struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &one) == nil {
		return one.Method == "initialize"
	}
	var batch []struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &batch) == nil {
		for _, m := range batch {
			if m.Method == "initialize" {
				return true
			}
		}
	}
	return false
}

// start opens a session — the agent side, the upstream side, and Serve on
// its own goroutine — kept under a new session id when stateful, else a
// stateless one for one exchange; done is closed when it has ended.
func (h *HTTPHandler) start(stateful bool) (s *httpSession, done chan struct{}, status int, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, nil, http.StatusServiceUnavailable, errors.New("the proxy is shutting down")
	}
	if h.running >= h.opts.MaxSessions {
		return nil, nil, http.StatusServiceUnavailable, fmt.Errorf("too many sessions (at most %d)", h.opts.MaxSessions)
	}
	ctx, cancel := context.WithCancel(h.ctx)
	t := &mcp.StreamableServerTransport{Stateless: !stateful}
	if stateful {
		t.SessionID = rand.Text()
	}
	agent, err := t.Connect(ctx)
	if err != nil {
		cancel()
		return nil, nil, http.StatusInternalServerError, fmt.Errorf("agent session: %v", err)
	}
	up := &mcp.StreamableClientTransport{Endpoint: h.opts.Upstream, HTTPClient: h.opts.Client, MaxEventSize: h.opts.MaxMessageBytes, MaxRetries: -1, DisableStandaloneSSE: true}
	server, err := up.Connect(ctx)
	if err != nil {
		cancel()
		_ = agent.Close()
		return nil, nil, http.StatusBadGateway, fmt.Errorf("upstream: %v", err)
	}
	s = &httpSession{transport: t, cancel: cancel, idle: time.AfterFunc(h.opts.FreshSessionIdle, cancel)}
	id := t.SessionID
	if stateful {
		h.sessions[id] = s
	}
	h.running++
	done = make(chan struct{})
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer close(done)
		err := h.opts.Serve(ctx, agent, server)
		cancel()
		s.idle.Stop()
		_ = server.Close()
		_ = agent.Close()
		h.mu.Lock()
		if stateful {
			delete(h.sessions, id)
		}
		h.running--
		h.mu.Unlock()
		if h.opts.OnSessionEnd != nil {
			h.opts.OnSessionEnd(id, err)
		}
	}()
	return s, done, 0, nil
}

// Sessions is the number of stateful sessions and stateless exchanges
// being served.
func (h *HTTPHandler) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.running
}

// Close ends every session (their Serve's ctx is cancelled), waits for
// them to return, and refuses new ones. It does not stop the http.Server
// the handler is mounted on.
func (h *HTTPHandler) Close() error {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.cancel()
	h.wg.Wait()
	return nil
}

// isLoopback reports whether hostport (a host with or without a port) is
// localhost or a loopback IP address.
func isLoopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkUpstream accepts an absolute http or https URL.
func checkUpstream(u string) error {
	req, err := http.NewRequest(http.MethodPost, u, nil)
	if err != nil || (req.URL.Scheme != "http" && req.URL.Scheme != "https") || req.URL.Host == "" {
		return fmt.Errorf("proxy: --upstream %q: want an http or https URL of the server's MCP endpoint", u)
	}
	return nil
}

// limitTransport bounds each application/json response body at max
// bytes: a read past it fails with errTooLarge. A text/event-stream
// body is bounded per event by the client transport (MaxEventSize).
type limitTransport struct {
	base http.RoundTripper
	max  int64
}

// errTooLarge is the read error of a response body past the limit.
var errTooLarge = errors.New("upstream message larger than the proxy's limit")

func (l limitTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.base.RoundTrip(r)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		resp.Body = &limitedBody{rc: resp.Body, left: l.max}
	}
	return resp, nil
}

// limitedBody reads at most left bytes of rc, then fails.
type limitedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return 0, errTooLarge
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
