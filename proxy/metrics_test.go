package proxy_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/proxy"
)

func TestMetricsVerdicts(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := proxy.NewMetrics(reg)
	m.SetTools([]string{"review_status"})
	m.Observe(proxy.Observation{Tool: "review_status", Mode: gate.ModeStrict, Outcome: proxy.OutcomeAdmitted, Latency: 50 * time.Microsecond, Bytes: 2048})
	m.Observe(proxy.Observation{Tool: "review_status", Mode: gate.ModeWarn, Outcome: proxy.OutcomeRefused, Reason: "parse.duplicate_member", Latency: time.Millisecond, Bytes: 100})
	m.Observe(proxy.Observation{Tool: "review_status", Mode: gate.ModeWarn, Outcome: proxy.OutcomeRefused, Reason: "parse.duplicate_member", Bytes: 100})
	m.Observe(proxy.Observation{Tool: "review_status", Mode: gate.ModeStrict, Outcome: proxy.OutcomeUpstreamUnavailable})
	m.Observe(proxy.Observation{Tool: "secret_tool", Mode: gate.ModeOff, Outcome: proxy.OutcomePassed, Bytes: 10})

	want := `
# HELP airlock_proxy_verdicts_total Tool results by tool, outcome (admitted, refused, passed, upstream_unavailable), reason and mode.
# TYPE airlock_proxy_verdicts_total counter
airlock_proxy_verdicts_total{mode="off",outcome="passed",reason="",tool="unlisted"} 1
airlock_proxy_verdicts_total{mode="strict",outcome="admitted",reason="",tool="review_status"} 1
airlock_proxy_verdicts_total{mode="strict",outcome="upstream_unavailable",reason="",tool="review_status"} 1
airlock_proxy_verdicts_total{mode="warn",outcome="refused",reason="parse.duplicate_member",tool="review_status"} 2
# HELP airlock_proxy_invalid_output_ratio Refused over checked results among the tool's last 1024 checked results.
# TYPE airlock_proxy_invalid_output_ratio gauge
airlock_proxy_invalid_output_ratio{tool="review_status"} 0.6666666666666666
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "airlock_proxy_verdicts_total", "airlock_proxy_invalid_output_ratio"); err != nil {
		t.Error(err)
	}
	// Latency counts the checked results only; bytes every result that has some.
	if n := testutil.CollectAndCount(reg, "airlock_proxy_gate_latency_seconds"); n != 1 {
		t.Errorf("latency series: %d, want 1 (review_status)", n)
	}
	got := histogram(t, reg, "airlock_proxy_gate_latency_seconds", "review_status")
	if got.count != 3 || got.sum < 0.00105 || got.sum > 0.00106 {
		t.Errorf("latency of review_status: count %d sum %v, want 3 and 0.00105", got.count, got.sum)
	}
	got = histogram(t, reg, "airlock_proxy_result_bytes", "review_status")
	if got.count != 3 || got.sum != 2248 {
		t.Errorf("bytes of review_status: count %d sum %v, want 3 and 2248", got.count, got.sum)
	}
}

type hist struct {
	count uint64
	sum   float64
}

func histogram(t *testing.T, reg *prometheus.Registry, name, tool string) hist {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "tool" && l.GetValue() == tool {
					return hist{m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()}
				}
			}
		}
	}
	t.Fatalf("no %s{tool=%q}", name, tool)
	return hist{}
}

// TestMetricsLabelsBounded feeds hostile names: the series count stays
// bounded by the documented constants.
func TestMetricsLabelsBounded(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := proxy.NewMetrics(reg)
	for i := range 3 * proxy.MaxToolLabels {
		m.Observe(proxy.Observation{Tool: fmt.Sprintf("tool_%d", i), Outcome: proxy.OutcomeRefused, Reason: fmt.Sprintf("semantic.r%d", i), Mode: "loud"})
	}
	m.Observe(proxy.Observation{Tool: "Bad Name\n", Outcome: "exploded", Mode: gate.ModeWarn})
	m.Observe(proxy.Observation{Tool: "tool_0", Outcome: proxy.OutcomeRefused, Reason: "not a reason"})
	tools := map[string]bool{}
	reasons := map[string]bool{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "airlock_proxy_verdicts_total" {
			continue
		}
		for _, s := range mf.GetMetric() {
			for _, l := range s.GetLabel() {
				switch l.GetName() {
				case "tool":
					tools[l.GetValue()] = true
				case "reason":
					reasons[l.GetValue()] = true
				case "mode":
					if v := l.GetValue(); v != "other" && v != "warn" && v != "strict" {
						t.Errorf("mode label %q", v)
					}
				case "outcome":
					if v := l.GetValue(); v != "other" && v != "refused" {
						t.Errorf("outcome label %q", v)
					}
				}
			}
		}
	}
	if len(tools) != proxy.MaxToolLabels+1 || !tools[proxy.UnlistedTool] || tools["Bad Name\n"] {
		t.Errorf("%d tool labels (unlisted: %v), want %d and unlisted", len(tools), tools[proxy.UnlistedTool], proxy.MaxToolLabels+1)
	}
	if len(reasons) > proxy.MaxReasonLabels+2 || !reasons[proxy.OtherLabel] || reasons["not a reason"] {
		t.Errorf("%d reason labels (other: %v), want at most %d", len(reasons), reasons[proxy.OtherLabel], proxy.MaxReasonLabels+2)
	}
}

// TestMetricsRatioWindow: the ratio forgets what left the window.
func TestMetricsRatioWindow(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := proxy.NewMetrics(reg)
	ratio := func() float64 { return ratioOf(t, reg, "t") }
	for range proxy.RateWindow {
		m.Observe(proxy.Observation{Tool: "t", Outcome: proxy.OutcomeRefused, Reason: "schema.type"})
	}
	if r := ratio(); r != 1 {
		t.Fatalf("ratio after %d refusals: %v, want 1", proxy.RateWindow, r)
	}
	for range proxy.RateWindow / 4 {
		m.Observe(proxy.Observation{Tool: "t", Outcome: proxy.OutcomeAdmitted})
	}
	if r := ratio(); r != 0.75 {
		t.Fatalf("ratio after a quarter window admitted: %v, want 0.75", r)
	}
	// Passed and unavailable results do not move it.
	m.Observe(proxy.Observation{Tool: "t", Outcome: proxy.OutcomePassed})
	m.Observe(proxy.Observation{Tool: "t", Outcome: proxy.OutcomeUpstreamUnavailable})
	for range proxy.RateWindow {
		m.Observe(proxy.Observation{Tool: "t", Outcome: proxy.OutcomeAdmitted})
	}
	if r := ratio(); r != 0 {
		t.Fatalf("ratio after a full window admitted: %v, want 0", r)
	}
}

// ratioOf is the gathered invalid output ratio of tool; it fails the test
// when there is none.
func ratioOf(t *testing.T, reg *prometheus.Registry, tool string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "airlock_proxy_invalid_output_ratio" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if l := m.GetLabel(); len(l) == 1 && l[0].GetValue() == tool {
				return m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("no ratio for %s", tool)
	return 0
}

func TestMetricsHandler(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := proxy.NewMetrics(reg)
	m.Observe(proxy.Observation{Tool: "review_status", Mode: gate.ModeWarn, Outcome: proxy.OutcomeRefused, Reason: "transport.not_json", Bytes: 12})
	m.ObserveReload(nil)
	m.ObserveReload(io.ErrUnexpectedEOF)
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	if code, body := get("/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	code, body := get("/metrics")
	for _, want := range []string{
		`airlock_proxy_verdicts_total{mode="warn",outcome="refused",reason="transport.not_json",tool="review_status"} 1`,
		`airlock_proxy_contract_reloads_total{result="error"} 1`,
		`airlock_proxy_contract_reloads_total{result="ok"} 1`,
		`airlock_proxy_invalid_output_ratio{tool="review_status"} 1`,
	} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("/metrics (%d) lacks %s", code, want)
		}
	}
	if code, _ := get("/other"); code != 404 {
		t.Errorf("/other: %d, want 404", code)
	}
}

// TestNewMetricsTwice: a second NewMetrics on one registry shares the
// series instead of panicking.
func TestNewMetricsTwice(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, b := proxy.NewMetrics(reg), proxy.NewMetrics(reg)
	a.Observe(proxy.Observation{Tool: "x", Outcome: proxy.OutcomeAdmitted})
	b.Observe(proxy.Observation{Tool: "x", Outcome: proxy.OutcomeAdmitted})
	want := `
# HELP airlock_proxy_verdicts_total Tool results by tool, outcome (admitted, refused, passed, upstream_unavailable), reason and mode.
# TYPE airlock_proxy_verdicts_total counter
airlock_proxy_verdicts_total{mode="strict",outcome="admitted",reason="",tool="x"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "airlock_proxy_verdicts_total"); err != nil {
		t.Error(err)
	}
	if proxy.NewMetrics(nil).Handler() == nil {
		t.Error("nil handler")
	}
}

func TestMetricsConcurrent(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := proxy.NewMetrics(reg)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				m.Observe(proxy.Observation{Tool: fmt.Sprintf("t%d", g%2), Outcome: proxy.OutcomeRefused, Reason: "schema.type", Latency: time.Duration(i)})
				if i%50 == 0 {
					m.SetTools([]string{"t0", "t1"})
				}
			}
		})
	}
	wg.Wait()
	if n := testutil.CollectAndCount(reg, "airlock_proxy_verdicts_total"); n != 2 {
		t.Errorf("%d series, want 2", n)
	}
}

// TestMetricsMappedTool: an MCP tool mapped to a contract by the
// configuration is counted under its MCP name, not as unlisted.
func TestMetricsMappedTool(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := proxy.NewMetrics(reg)
	set, err := proxy.LoadContracts(filepath.Join("testdata", "schemas"), gate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m.SetTools(proxy.MetricTools(set, map[string]proxy.ToolConfig{"get-weather": {Contract: "weather"}}))
	m.Observe(proxy.Observation{Tool: "get-weather", Outcome: proxy.OutcomeAdmitted, Mode: gate.ModeStrict})
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	want := `airlock_proxy_verdicts_total{mode="strict",outcome="admitted",reason="",tool="get-weather"} 1`
	if !strings.Contains(rec.Body.String(), want) {
		t.Errorf("/metrics lacks %s:\n%s", want, rec.Body.String())
	}
}
