package proxy_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/proxy"
)

// running is one proxy served in-process (Stdio in a goroutine) with a
// go-sdk client session on its agent side.
type running struct {
	session *mcp.ClientSession
	toProxy io.WriteCloser
	done    chan error
	mu      sync.Mutex
	seen    []proxy.Observation
}

func (r *running) observations() []proxy.Observation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]proxy.Observation(nil), r.seen...)
}

// wait returns Stdio's error; it fails the test if Stdio has not returned
// within 20 s (a hang guard, not a speed measurement).
func (r *running) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("the proxy did not return")
		return nil
	}
}

func contracts(t *testing.T) *proxy.Contracts {
	t.Helper()
	set, err := proxy.LoadContracts(filepath.Join("testdata", "schemas"), gate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return proxy.NewContracts(set)
}

// fakeCmd is the hostile server (fakeServer) as a command.
func fakeCmd() *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), roleEnv+"=server")
	return cmd
}

func start(t *testing.T, cmd *exec.Cmd, opts proxy.Options) *running {
	t.Helper()
	if opts.Contracts == nil {
		opts.Contracts = contracts(t)
	}
	agentIn, toProxy := io.Pipe()
	fromProxy, agentOut := io.Pipe()
	r := &running{toProxy: toProxy, done: make(chan error, 1)}
	opts.Observe = func(o proxy.Observation) {
		r.mu.Lock()
		r.seen = append(r.seen, o)
		r.mu.Unlock()
	}
	go func() {
		err := proxy.Stdio(context.Background(), cmd, agentIn, agentOut, opts)
		agentOut.Close()
		r.done <- err
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "proxy-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := client.Connect(ctx, &mcp.IOTransport{Reader: fromProxy, Writer: toProxy}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.session = s
	t.Cleanup(func() {
		toProxy.Close()
		s.Close()
	})
	return r
}

func call(t *testing.T, r *running, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := r.session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s %v: %v", tool, args, err)
	}
	return res
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("want one content block, got %d", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("want a text block, got %T", res.Content[0])
	}
	return tc.Text
}

// failure checks res is the failure envelope of tool weather with code,
// retryable, and no structuredContent.
func failure(t *testing.T, res *mcp.CallToolResult, code gate.ErrorCode, retryable bool) {
	t.Helper()
	if !res.IsError || res.StructuredContent != nil {
		t.Fatalf("want isError without structuredContent, got isError=%v structuredContent=%v", res.IsError, res.StructuredContent)
	}
	var env struct {
		Tool      string `json:"tool"`
		RequestID string `json:"request_id"`
		Outcome   string `json:"outcome"`
		Error     struct {
			Code      gate.ErrorCode `json:"code"`
			Retryable bool           `json:"retryable"`
		} `json:"error"`
	}
	body := text(t, res)
	if err := json.Unmarshal([]byte(body), &env); err != nil {
		t.Fatalf("the text block is not the failure envelope: %v: %s", err, body)
	}
	want := string(gate.FailureEnvelope(env.Tool, env.RequestID, code, retryable))
	if body != want {
		t.Fatalf("text block:\n got %s\nwant %s", body, want)
	}
}

func TestStrictHostileResults(t *testing.T) {
	r := start(t, fakeCmd(), proxy.Options{})
	res := call(t, r, "weather", map[string]any{"location": "ok"})
	if res.IsError {
		t.Fatalf("ok: refused: %s", text(t, res))
	}
	want := map[string]any{"temperature": 20.0, "conditions": "Sunny"}
	if d := cmp.Diff(want, res.StructuredContent); d != "" {
		t.Errorf("structuredContent (-want +got):\n%s", d)
	}
	if got := text(t, res); got != `{"conditions":"Sunny","temperature":20}` {
		t.Errorf("text block %s", got)
	}
	for _, c := range []struct {
		location, reason string
		code             gate.ErrorCode
		retryable        bool
	}{
		{"html", gate.ReasonMCPResult, gate.InvalidResponse, false},
		{"dup", "parse.duplicate_member", gate.InvalidResponse, false},
		{"inject", "schema.additionalProperties", gate.InvalidResponse, false},
		{"big", gate.ReasonTooLarge, gate.InvalidResponse, false},
		{"huge", gate.ReasonTooLarge, gate.InvalidResponse, false},
	} {
		res := call(t, r, "weather", map[string]any{"location": c.location})
		failure(t, res, c.code, c.retryable)
		obs := r.observations()
		last := obs[len(obs)-1]
		if last.Outcome != proxy.OutcomeRefused || last.Reason != c.reason || last.Mode != gate.ModeStrict {
			t.Errorf("%s: observation %+v, want refused for %s", c.location, last, c.reason)
		}
		if strings.Contains(text(t, res), "Ignore") || strings.Contains(text(t, res), "html") {
			t.Errorf("%s: an upstream byte reached the agent: %s", c.location, text(t, res))
		}
	}
	// After the discarded 3 MiB line the proxy keeps serving.
	if res := call(t, r, "weather", map[string]any{"location": "ok"}); res.IsError {
		t.Errorf("after huge: refused")
	}
	// An unlisted tool passes unchanged, unobserved.
	n := len(r.observations())
	if got := text(t, call(t, r, "echo", nil)); got != "echo" {
		t.Errorf("echo: %q", got)
	}
	if len(r.observations()) != n {
		t.Errorf("a passed tool was observed")
	}
}

func TestWarnPassesOriginal(t *testing.T) {
	r := start(t, fakeCmd(), proxy.Options{Mode: gate.ModeWarn})
	res := call(t, r, "weather", map[string]any{"location": "inject"})
	if res.IsError {
		t.Fatal("warn: the original result was replaced")
	}
	sc, _ := res.StructuredContent.(map[string]any)
	if sc["instructions"] == nil || sc["humidity"] == nil {
		t.Errorf("warn: want the original structuredContent, got %v", res.StructuredContent)
	}
	obs := r.observations()
	if len(obs) != 1 || obs[0].Outcome != proxy.OutcomeRefused || obs[0].Reason != "schema.additionalProperties" || obs[0].Audit == nil || obs[0].Mode != gate.ModeWarn {
		t.Errorf("warn: observations %+v", obs)
	}
	// tools/list keeps the server's outputSchema in warn (the agent gets
	// the original results).
	tools, err := r.session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(tools.Tools[0].OutputSchema); string(got) != `{"type":"object"}` {
		t.Errorf("warn: outputSchema rewritten: %s", got)
	}
}

func TestOffPassesUnobserved(t *testing.T) {
	r := start(t, fakeCmd(), proxy.Options{Tools: map[string]proxy.ToolConfig{"weather": {Mode: gate.ModeOff}}})
	if res := call(t, r, "weather", map[string]any{"location": "dup"}); res.IsError {
		t.Fatal("off: refused")
	}
	if obs := r.observations(); len(obs) != 0 {
		t.Errorf("off: observed %+v", obs)
	}
}

func TestListRewritesAndUnlisted(t *testing.T) {
	agent, err := os.ReadFile(filepath.Join("testdata", "schemas", "weather", "agent.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var wantSchema map[string]any
	if err := json.Unmarshal(agent, &wantSchema); err != nil {
		t.Fatal(err)
	}
	delete(wantSchema, "$schema")
	for _, c := range []struct {
		unlisted proxy.Unlisted
		names    []string
	}{
		{proxy.UnlistedPass, []string{"weather", "echo"}},
		{proxy.UnlistedHide, []string{"weather"}},
		{proxy.UnlistedRefuse, []string{"weather", "echo"}},
	} {
		t.Run(string(c.unlisted), func(t *testing.T) {
			r := start(t, fakeCmd(), proxy.Options{Unlisted: c.unlisted})
			tools, err := r.session.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools.Tools {
				names = append(names, tl.Name)
			}
			if d := cmp.Diff(c.names, names); d != "" {
				t.Fatalf("tools (-want +got):\n%s", d)
			}
			if d := cmp.Diff(wantSchema, tools.Tools[0].OutputSchema); d != "" {
				t.Errorf("weather's outputSchema (-want +got):\n%s", d)
			}
			ctx := context.Background()
			res, err := r.session.CallTool(ctx, &mcp.CallToolParams{Name: "echo"})
			switch c.unlisted {
			case proxy.UnlistedPass:
				if err != nil || text(t, res) != "echo" {
					t.Errorf("pass: %v", err)
				}
			case proxy.UnlistedHide:
				if err == nil || !strings.Contains(err.Error(), "Unknown tool: echo") {
					t.Errorf("hide: want a JSON-RPC error, got %v", err)
				}
			case proxy.UnlistedRefuse:
				if err != nil {
					t.Fatal(err)
				}
				failure(t, res, gate.InvalidResponse, false)
			}
		})
	}
}

func TestFaults(t *testing.T) {
	t.Run("a server that never answers", func(t *testing.T) {
		r := start(t, fakeCmd(), proxy.Options{CallTimeout: 300 * time.Millisecond})
		failure(t, call(t, r, "weather", map[string]any{"location": "hang"}), gate.UpstreamUnavailable, true)
		if res := call(t, r, "weather", map[string]any{"location": "ok"}); res.IsError {
			t.Error("after a timeout: refused")
		}
		if obs := r.observations(); obs[0].Outcome != proxy.OutcomeUpstreamUnavailable {
			t.Errorf("observations %+v", obs)
		}
	})
	t.Run("garbage on the server's stdout", func(t *testing.T) {
		r := start(t, fakeCmd(), proxy.Options{})
		if res := call(t, r, "weather", map[string]any{"location": "garbage"}); res.IsError {
			t.Error("garbage: the call failed")
		}
	})
	t.Run("the server dies mid-call", func(t *testing.T) {
		r := start(t, fakeCmd(), proxy.Options{})
		failure(t, call(t, r, "weather", map[string]any{"location": "die"}), gate.UpstreamUnavailable, true)
		err := r.wait(t)
		if !errors.Is(err, proxy.ErrUpstreamClosed) || !strings.Contains(err.Error(), "exit status 3") {
			t.Errorf("want ErrUpstreamClosed naming exit status 3, got %v", err)
		}
	})
	t.Run("the agent's stdin closes", func(t *testing.T) {
		r := start(t, fakeCmd(), proxy.Options{})
		call(t, r, "weather", map[string]any{"location": "ok"})
		r.toProxy.Close()
		if err := r.wait(t); err != nil {
			t.Errorf("want nil, got %v", err)
		}
	})
}

// TestStopsAServerThatIgnoresStdin: the agent's input closes, the server
// does not exit on its closed stdin; Stdio signals it (SIGTERM after
// StopGrace), reaps it and returns nil.
func TestStopsAServerThatIgnoresStdin(t *testing.T) {
	cmd := exec.Command("sh", "-c", "exec sleep 60")
	done := make(chan error, 1)
	go func() {
		done <- proxy.Stdio(context.Background(), cmd, strings.NewReader(""), io.Discard, proxy.Options{Contracts: contracts(t)})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("want nil, got %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Stdio did not return")
	}
	if cmd.ProcessState == nil || cmd.ProcessState.Success() {
		t.Errorf("the server was not stopped by a signal: %v", cmd.ProcessState)
	}
}

// TestRecordSample: with rate 1 each result of a contracted tool is
// written as a recorded fixture, its secrets redacted, the verdict in its
// sidecar; a passed tool's result is not.
func TestRecordSample(t *testing.T) {
	dir := t.TempDir()
	r := start(t, fakeCmd(), proxy.Options{Sample: &proxy.Sampling{Rate: 1, FixturesDir: dir, Server: []string{"fake", "--token", "hunter2hunter2"}}})
	failure(t, call(t, r, "weather", map[string]any{"location": "secret"}), gate.InvalidResponse, false)
	call(t, r, "echo", nil)
	r.toProxy.Close()
	if err := r.wait(t); err != nil {
		t.Fatal(err)
	}
	bodies, _ := filepath.Glob(filepath.Join(dir, "weather", "v1", "recorded", "*.json"))
	metas, _ := filepath.Glob(filepath.Join(dir, "weather", "v1", "recorded", "*.meta.yaml"))
	if len(bodies) != 1 || len(metas) != 1 {
		t.Fatalf("want one fixture, got %v %v", bodies, metas)
	}
	body, _ := os.ReadFile(bodies[0])
	meta, _ := os.ReadFile(metas[0])
	if strings.Contains(string(body), "ghp_0123") || !strings.Contains(string(body), `"temperature":20`) {
		t.Errorf("body not redacted: %s", body)
	}
	if strings.Contains(string(meta), "hunter2") || !strings.Contains(string(meta), `verdict: {outcome: refused, reason: "schema.additionalProperties"`) {
		t.Errorf("sidecar:\n%s", meta)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("want only weather/ under the fixtures, got %v", entries)
	}
}

// TestRecordMax: sampling stops after Sampling.Max fixtures.
func TestRecordMax(t *testing.T) {
	dir := t.TempDir()
	r := start(t, fakeCmd(), proxy.Options{Sample: &proxy.Sampling{Rate: 1, FixturesDir: dir, Max: 2}})
	written := func() int {
		metas, _ := filepath.Glob(filepath.Join(dir, "weather", "v1", "recorded", "*.meta.yaml"))
		return len(metas)
	}
	for want := 1; want <= 2; want++ {
		call(t, r, "weather", map[string]any{"location": "ok"})
		for deadline := time.Now().Add(20 * time.Second); written() < want; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("sample %d not written within 20 s", want)
			}
		}
	}
	for range 5 {
		call(t, r, "weather", map[string]any{"location": "ok"})
		call(t, r, "echo", nil) // a round trip: the previous sample's writer ends meanwhile
	}
	r.toProxy.Close()
	if err := r.wait(t); err != nil {
		t.Fatal(err)
	}
	if n := written(); n != 2 {
		t.Errorf("%d fixtures written, want Max (2)", n)
	}
}
