package proxy_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockdev/airlock/proxy"
)

// relay is the stand-in for proxy.Serve: every message both ways,
// unchanged, until either side ends.
func relay(ctx context.Context, agent, server mcp.Connection) error {
	errc := make(chan error, 2)
	pipe := func(from, to mcp.Connection) {
		for {
			m, err := from.Read(ctx)
			if err != nil {
				errc <- err
				return
			}
			if err := to.Write(ctx, m); err != nil {
				errc <- err
				return
			}
		}
	}
	go pipe(agent, server)
	go pipe(server, agent)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

type echoIn struct {
	Text string `json:"text"`
}

type echoOut struct {
	Echo string `json:"echo"`
}

// upstreamServer is the go-sdk's own streamable HTTP server with two tools:
// echo, and big, whose result is n bytes of text. With legacy it speaks
// only the session protocol (2025-11-25: initialize, Mcp-Session-Id);
// otherwise the stateless protocol of 2026-07-28 too.
func upstreamServer(t *testing.T, n int, legacy bool) *httptest.Server {
	t.Helper()
	var opts *mcp.ServerOptions
	if legacy {
		opts = &mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1.0.0"}, opts)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
		return nil, echoOut{Echo: in.Text}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "big"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", n)}}}, nil, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true}))
	t.Cleanup(srv.Close)
	return srv
}

// ended collects OnSessionEnd's calls.
type ended struct {
	mu   sync.Mutex
	ids  []string
	errs []error
}

func (e *ended) add(id string, err error) {
	e.mu.Lock()
	e.ids, e.errs = append(e.ids, id), append(e.errs, err)
	e.mu.Unlock()
}

// sessions counts the stateful sessions ended (an id other than "").
func (e *ended) sessions() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, id := range e.ids {
		if id != "" {
			n++
		}
	}
	return n
}

func (e *ended) all() []error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]error(nil), e.errs...)
}

func proxyServer(t *testing.T, opts proxy.HTTPOptions) (*proxy.HTTPHandler, *httptest.Server) {
	t.Helper()
	h, err := proxy.NewHTTPHandler(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); h.Close() })
	return h, srv
}

func connect(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1.0.0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestHTTPHandlerRelays(t *testing.T) {
	for _, legacy := range []bool{true, false} {
		t.Run(map[bool]string{true: "sessions", false: "stateless"}[legacy], func(t *testing.T) {
			up := upstreamServer(t, 10, legacy)
			var end ended
			h, srv := proxyServer(t, proxy.HTTPOptions{Upstream: up.URL, Serve: relay, OnSessionEnd: end.add})
			a, b := connect(t, srv.URL), connect(t, srv.URL)
			// Both agents hold a session: against a modern upstream too,
			// since the proxy refuses the stateless protocol's
			// server/discover (see ServeHTTP) and the client falls back to
			// initialize.
			const want = 2
			if n := h.Sessions(); n != want {
				t.Errorf("%d sessions, want %d", n, want)
			}
			for i, cs := range []*mcp.ClientSession{a, b} {
				tools, err := cs.ListTools(context.Background(), nil)
				if err != nil || len(tools.Tools) != 2 {
					t.Fatalf("session %d tools/list: %v %v", i, tools, err)
				}
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
				if err != nil || res.IsError {
					t.Fatalf("session %d tools/call: %v %+v", i, err, res)
				}
				if m, ok := res.StructuredContent.(map[string]any); !ok || m["echo"] != "hi" {
					t.Errorf("session %d: structuredContent %v", i, res.StructuredContent)
				}
			}
			if n := h.Sessions(); n != want {
				t.Errorf("%d sessions after the calls, want %d", n, want)
			}
			// The agent's close (DELETE) ends its session.
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			b.Close()
			h.Close()
			if n := h.Sessions(); n != 0 {
				t.Errorf("%d sessions after Close, want 0", n)
			}
			if n := end.sessions(); n != 2 {
				t.Errorf("%d sessions ended, want 2", n)
			}
		})
	}
}

func TestHTTPHandlerBounds(t *testing.T) {
	up := upstreamServer(t, 2<<20, true)
	var end ended
	h, srv := proxyServer(t, proxy.HTTPOptions{Upstream: up.URL, Serve: relay, OnSessionEnd: end.add, MaxSessions: 1, MaxMessageBytes: 1 << 20})

	cs := connect(t, srv.URL)
	// A second session past MaxSessions is refused.
	c2 := mcp.NewClient(&mcp.Implementation{Name: "agent2", Version: "1.0.0"}, nil)
	if s2, err := c2.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}, nil); err == nil {
		s2.Close()
		t.Error("a session past MaxSessions was accepted")
	}
	// An upstream result past MaxMessageBytes ends the session with the
	// reason; the agent's call fails instead of the proxy buffering it.
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "big"}); err == nil {
		t.Errorf("a 2 MiB result passed a 1 MiB limit: %d content blocks", len(res.Content))
	}
	h.Close()
	var limited bool
	for _, err := range end.all() {
		limited = limited || err != nil && strings.Contains(err.Error(), "larger than the proxy's limit")
	}
	if !limited {
		t.Errorf("session end errors %v, want the limit's", end.all())
	}

	// Unknown session ids, methods, bodies and hosts.
	for _, c := range []struct {
		method, session, ctype string
		want                   int
		host                   string
		body                   string
	}{
		{"POST", "", "application/json", http.StatusForbidden, "attacker.invalid", ""},
		{"POST", "", "application/json", http.StatusRequestEntityTooLarge, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"` + strings.Repeat("a", proxy.MaxRequestBytes) + `"}}`},
		{"GET", "nope", "", http.StatusNotFound, "", ""},
		{"POST", "nope", "application/json", http.StatusNotFound, "", ""},
		{"DELETE", "nope", "", http.StatusNotFound, "", ""},
		{"GET", "", "", http.StatusBadRequest, "", ""},
		{"POST", "", "text/plain", http.StatusUnsupportedMediaType, "", ""},
		{"PUT", "", "", http.StatusMethodNotAllowed, "", ""},
		{"POST", "", "application/json", http.StatusServiceUnavailable, "", ""}, // closed
	} {
		body := c.body
		if body == "" {
			body = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
		}
		req, _ := http.NewRequest(c.method, srv.URL, strings.NewReader(body))
		if c.host != "" {
			req.Host = c.host
		}
		if c.session != "" {
			req.Header.Set("Mcp-Session-Id", c.session)
		}
		if c.ctype != "" {
			req.Header.Set("Content-Type", c.ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s session %q %s: %d, want %d", c.method, c.session, c.ctype, resp.StatusCode, c.want)
		}
	}
}

func TestNewHTTPHandlerOptions(t *testing.T) {
	for _, o := range []proxy.HTTPOptions{
		{Upstream: "http://127.0.0.1:1/mcp"},
		{Upstream: "", Serve: relay},
		{Upstream: "file:///etc/passwd", Serve: relay},
		{Upstream: "/mcp", Serve: relay},
	} {
		if _, err := proxy.NewHTTPHandler(o); err == nil {
			t.Errorf("%+v: no error", o.Upstream)
		}
	}
}

// TestHTTPHandlerIdleSession: an agent that leaves without DELETE (and
// holds no GET stream) frees its slot after SessionIdle.
func TestHTTPHandlerIdleSession(t *testing.T) {
	up := upstreamServer(t, 10, true)
	endc := make(chan string, 8)
	h, srv := proxyServer(t, proxy.HTTPOptions{Upstream: up.URL, Serve: relay, SessionIdle: 100 * time.Millisecond, FreshSessionIdle: time.Hour,
		OnSessionEnd: func(id string, _ error) { endc <- id }})
	c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1.0.0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// A request past initialize: the session is no longer fresh.
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	// A guard against a hang only: the session must end, whenever.
	guard := time.After(time.Minute)
	for {
		select {
		case id := <-endc:
			if id == "" {
				continue // a stateless exchange
			}
			if n := h.Sessions(); n != 0 {
				t.Errorf("%d sessions after the idle end, want 0", n)
			}
			if _, err := cs.ListTools(context.Background(), nil); err == nil {
				t.Error("the ended session still answers")
			}
			return
		case <-guard:
			t.Fatal("the idle session was never ended")
		}
	}
}

// TestHTTPHandlerFreshSessionIdle: a session that only initialized ends
// after FreshSessionIdle, not SessionIdle (an hour here).
func TestHTTPHandlerFreshSessionIdle(t *testing.T) {
	up := upstreamServer(t, 10, true)
	endc := make(chan string, 8)
	_, srv := proxyServer(t, proxy.HTTPOptions{Upstream: up.URL, Serve: relay, SessionIdle: time.Hour, FreshSessionIdle: 100 * time.Millisecond,
		OnSessionEnd: func(id string, _ error) { endc <- id }})
	c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1.0.0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	guard := time.After(time.Minute) // a hang guard only
	for {
		select {
		case id := <-endc:
			if id != "" {
				return
			}
		case <-guard:
			t.Fatal("the session that only initialized was not ended")
		}
	}
}
