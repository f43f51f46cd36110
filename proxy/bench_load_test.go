package proxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/proxy"
)

// The load benchmark's bounds and targets (BenchmarkProxyLoad; make bench
// prints the figures beside the targets).
const (
	// loadClients go-sdk clients call at once, each over its own session.
	loadClients = 8
	// loadCalls timed calls per client and side per iteration, after
	// loadWarmup untimed ones.
	loadCalls  = 200
	loadWarmup = 10
	// hostileCalls 1 MiB hostile results per client, through the proxy
	// only: 8 × 16 = 128 results, 128 MiB streamed through it.
	hostileCalls = 16
	hostileBytes = 1 << 20
	// targetAddedP99: the proxy's added latency at the 99th percentile
	// (proxy p99 − direct p99), at most.
	targetAddedP99 = 2 * time.Millisecond
	// targetPeakRSS: the proxy process's peak resident memory over the
	// whole run (VmHWM), at most 64 MiB + 8 × 1 MiB per concurrent
	// hostile result: a result is held as read, once more as the gate's
	// input, and in the go-sdk's event buffers.
	targetPeakRSS = 64<<20 + loadClients*8*hostileBytes
)

// listingBody is the ~2 KB admitted result of the listing tool
// (testdata/bench/listing).
var listingBody = func() string {
	var b strings.Builder
	b.WriteString(`{"title":"nightly artefacts","count":40,"items":[`)
	for i := range 40 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"artefact-%02d.tar.gz","size":%d}`, i, 1000000+i)
	}
	b.WriteString(`]}`)
	return b.String()
}()

// listingServer is the go-sdk's streamable HTTP server with the listing
// tool: the 2 KB result, or with {"hostile": true} a 1 MiB HTML page as
// text (refused by the gate as transport.too_large).
func listingServer(b testing.TB) *httptest.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "listing", Version: "1.0.0"}, nil)
	html := "<html><body>" + strings.Repeat("x", hostileBytes-len("<html><body></body></html>")) + "</body></html>"
	s.AddTool(&mcp.Tool{Name: "listing", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if strings.Contains(string(req.Params.Arguments), `"hostile":true`) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: html}}}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: json.RawMessage(listingBody)}, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	b.Cleanup(srv.Close)
	return srv
}

// runHTTPFront is the "httpfront" role: airlock proxy --listen
// 127.0.0.1:0 --upstream $PROXY_UPSTREAM with the contracts of
// $PROXY_SCHEMAS, strict. It prints "listening URL", serves until its
// standard input closes, then prints "peak-rss: BYTES" (VmHWM) and exits.
func runHTTPFront() int {
	set, err := proxy.LoadContracts(os.Getenv("PROXY_SCHEMAS"), gate.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	opts := proxy.Options{Contracts: proxy.NewContracts(set)}
	h, err := proxy.NewHTTPHandler(proxy.HTTPOptions{
		Upstream: os.Getenv("PROXY_UPSTREAM"),
		Serve: func(ctx context.Context, agent, server mcp.Connection) error {
			return proxy.Serve(ctx, agent, server, opts)
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	fmt.Printf("listening http://%s\n", ln.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	h.Close()
	srv.Close()
	fmt.Printf("peak-rss: %d\n", vmHWM())
	return 0
}

// vmHWM is the process's peak resident set size in bytes, from
// /proc/self/status; -1 where there is none.
func vmHWM() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return -1
}

// loadClient is the agents' HTTP client: enough idle connections for
// every client, so both sides reuse theirs.
var loadClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

// load runs loadClients sessions against endpoint, each making calls
// calls of listing (hostile or not, after loadWarmup untimed ones), and
// returns every call's latency. check judges each result.
func load(b *testing.B, endpoint string, hostile bool, calls int, check func(*mcp.CallToolResult) error) []time.Duration {
	b.Helper()
	var (
		mu   sync.Mutex
		all  []time.Duration
		errs []error
		wg   sync.WaitGroup
	)
	args := &mcp.CallToolParams{Name: "listing", Arguments: map[string]any{"hostile": hostile}}
	for range loadClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			c := mcp.NewClient(&mcp.Implementation{Name: "load", Version: "1"}, nil)
			s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: loadClient}, nil)
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				return
			}
			defer s.Close()
			mine := make([]time.Duration, 0, calls)
			for i := range loadWarmup + calls {
				t0 := time.Now()
				res, err := s.CallTool(ctx, args)
				took := time.Since(t0)
				if err == nil {
					err = check(res)
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				if i >= loadWarmup {
					mine = append(mine, took)
				}
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		b.Fatalf("%s: %d sessions failed, the first: %v", endpoint, len(errs), errs[0])
	}
	return all
}

// percentile is the q-th quantile of d (sorted), nearest rank.
func percentile(d []time.Duration, q float64) time.Duration {
	return d[int(q*float64(len(d)-1)+0.5)]
}

func verdict(ok bool) string {
	if ok {
		return "holds"
	}
	return "MISSED"
}

// BenchmarkProxyLoad: loadClients go-sdk clients over loopback streamable
// HTTP call the listing tool (a ~2 KB result) directly on the go-sdk's
// server and through the proxy's HTTP front (a separate process, the test
// binary in role httpfront, strict) in the same run, loadCalls calls per
// client and side per iteration; then hostileCalls 1 MiB hostile results
// per client through the proxy, each refused. It reports the latency
// percentiles of both sides, the proxy's added p50 and p99, and the proxy
// process's peak RSS (VmHWM, Linux), and prints each against its target
// (targetAddedP99, targetPeakRSS) as holds or MISSED. The figures are
// reported, never asserted: a wrong answer fails it, a slow one does not.
func BenchmarkProxyLoad(b *testing.B) {
	up := listingServer(b)
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), roleEnv+"=httpfront", "PROXY_SCHEMAS=testdata/bench", "PROXY_UPSTREAM="+up.URL)
	child.Stderr = os.Stderr
	stdin, err := child.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := child.Start(); err != nil {
		b.Fatal(err)
	}
	out := bufio.NewScanner(stdout)
	var front string
	if out.Scan() {
		front, _ = strings.CutPrefix(out.Text(), "listening ")
	}
	if front == "" {
		stdin.Close()
		_ = child.Wait()
		b.Fatal("the proxy's HTTP front did not start")
	}
	defer func() {
		stdin.Close()
		_ = child.Wait()
	}()

	admitted := func(res *mcp.CallToolResult) error {
		if res.IsError || res.StructuredContent == nil {
			return fmt.Errorf("listing: want a result with structuredContent, got %+v", res)
		}
		return nil
	}
	refused := func(res *mcp.CallToolResult) error {
		if !res.IsError || len(res.Content) != 1 {
			return fmt.Errorf("hostile listing: want the failure envelope, got isError=%v", res.IsError)
		}
		if t, ok := res.Content[0].(*mcp.TextContent); !ok || !strings.Contains(t.Text, `"INVALID_RESPONSE"`) {
			return fmt.Errorf("hostile listing: want INVALID_RESPONSE, got %v", res.Content[0])
		}
		return nil
	}
	var direct, proxied []time.Duration
	b.ResetTimer()
	for range b.N {
		direct = append(direct, load(b, up.URL, false, loadCalls, admitted)...)
		proxied = append(proxied, load(b, front, false, loadCalls, admitted)...)
	}
	b.StopTimer()
	load(b, front, true, hostileCalls, refused)
	stdin.Close()
	peak := int64(-1)
	for out.Scan() {
		if v, ok := strings.CutPrefix(out.Text(), "peak-rss: "); ok {
			peak, _ = strconv.ParseInt(v, 10, 64)
		}
	}

	slices.Sort(direct)
	slices.Sort(proxied)
	d50, d99 := percentile(direct, 0.50), percentile(direct, 0.99)
	p50, p99 := percentile(proxied, 0.50), percentile(proxied, 0.99)
	b.ReportMetric(float64(d50.Nanoseconds()), "direct-p50-ns")
	b.ReportMetric(float64(d99.Nanoseconds()), "direct-p99-ns")
	b.ReportMetric(float64(p50.Nanoseconds()), "proxy-p50-ns")
	b.ReportMetric(float64(p99.Nanoseconds()), "proxy-p99-ns")
	b.ReportMetric(float64((p50 - d50).Nanoseconds()), "added-p50-ns")
	b.ReportMetric(float64((p99 - d99).Nanoseconds()), "added-p99-ns")
	fmt.Printf("proxy load: %d clients x %d calls per side, a %d-byte result: direct p50 %v p99 %v; through the proxy p50 %v p99 %v (x%.2f, x%.2f)\n",
		loadClients, len(direct)/loadClients, len(listingBody), d50, d99, p50, p99, float64(p50)/float64(d50), float64(p99)/float64(d99))
	fmt.Printf("proxy load: added latency p50 %v, p99 %v; target added p99 <= %v: %s\n", p50-d50, p99-d99, targetAddedP99, verdict(p99-d99 <= targetAddedP99))
	if peak < 0 {
		fmt.Println("proxy load: peak RSS not measured (no /proc/self/status here)")
		return
	}
	b.ReportMetric(float64(peak), "proxy-peak-B")
	fmt.Printf("proxy load: proxy peak RSS %.1f MiB after %d hostile results of %d bytes (%d at once); target <= %d MiB: %s\n",
		float64(peak)/(1<<20), loadClients*hostileCalls, hostileBytes, loadClients, targetPeakRSS>>20, verdict(peak <= targetPeakRSS))
}
