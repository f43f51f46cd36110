package proxy

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/semantic"
)

// Label bounds: every label value of the proxy's metrics comes from a
// finite set, so a hostile agent or server cannot grow the series count.
const (
	// UnlistedTool is the tool label of a tool outside the known set
	// (SetTools), of a name that is not a tool name, and of every name
	// past MaxToolLabels.
	UnlistedTool = "unlisted"
	// OtherLabel is the reason, outcome or mode label of a value outside
	// its set (or a reason past MaxReasonLabels).
	OtherLabel = "other"
	// MaxToolLabels is the most distinct tool labels the metrics keep
	// (UnlistedTool aside).
	MaxToolLabels = 512
	// MaxReasonLabels is the most distinct reason labels the metrics
	// keep (a contract's upstream.<name> and semantic.<name> reasons add to
	// the gate's registered ones).
	MaxReasonLabels = 512
	// RateWindow is the number of checked verdicts (admitted or refused)
	// per tool over which airlock_proxy_invalid_output_ratio is computed.
	RateWindow = 1024
)

// reasonName reports whether reason has the shape of a reason code,
// stage.name: ^[a-z]+\.[A-Za-z0-9_.-]{1,128}$ (checked by hand: a
// package-level regexp would compile at start-up).
func reasonName(reason string) bool {
	stage, name, ok := strings.Cut(reason, ".")
	if !ok || stage == "" || len(name) < 1 || len(name) > 128 {
		return false
	}
	for _, c := range []byte(stage) {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// latencyBuckets are the gate latency histogram's upper bounds, in
// seconds: 10 µs to about 2.6 s, doubling.
func latencyBuckets() []float64 { return prometheus.ExponentialBuckets(10e-6, 2, 19) }

// bytesBuckets are the result size histogram's upper bounds, in bytes:
// 256 B to 64 MiB, by fours.
func bytesBuckets() []float64 { return prometheus.ExponentialBuckets(256, 4, 10) }

// Metrics turns Observations into Prometheus metrics. Its methods are safe
// for concurrent use. The metrics, all labelled by tool:
//
//   - airlock_proxy_verdicts_total{tool,outcome,reason,mode}: verdicts by
//     outcome (admitted, refused, passed, upstream_unavailable), reason
//     ("" unless refused) and mode (strict, warn, off);
//   - airlock_proxy_gate_latency_seconds{tool}: time inside the gate of
//     checked results (histogram, latencyBuckets);
//   - airlock_proxy_result_bytes{tool}: upstream result sizes in bytes
//     (histogram; its _sum is the bytes counter);
//   - airlock_proxy_invalid_output_ratio{tool}: refused over checked
//     verdicts among the tool's last RateWindow checked verdicts (a count
//     window, not a time window: it holds its value while a tool is idle;
//     for a time window alert on
//     rate(airlock_proxy_verdicts_total{outcome="refused"}[5m]) /
//     rate(airlock_proxy_verdicts_total{outcome=~"admitted|refused"}[5m]));
//   - airlock_proxy_contract_reloads_total{result}: ObserveReload's
//     count by result (ok, error).
type Metrics struct {
	gatherer prometheus.Gatherer
	verdicts *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	bytes    *prometheus.HistogramVec
	ratio    *prometheus.GaugeVec
	reloads  *prometheus.CounterVec

	mu      sync.Mutex
	known   map[string]bool // SetTools; nil: any tool name
	tools   map[string]*toolMetrics
	reasons map[string]bool
	series  map[verdictKey]prometheus.Counter
}

// toolMetrics are one tool label's cached series and its rate window.
type toolMetrics struct {
	latency, bytes prometheus.Observer
	ratio          prometheus.Gauge
	// window is a ring of the last RateWindow checked verdicts, a bit
	// set when refused; n is how many are held, next the next slot.
	window  [RateWindow / 64]uint64
	n, next int
	refused int
}

type verdictKey struct{ tool, outcome, reason, mode string }

// NewMetrics registers the proxy's metrics with reg and returns them. A
// nil reg means a new registry of its own, which also gets the Go runtime
// and process collectors. Metrics already registered with reg (a second
// NewMetrics on the same registry) are shared, not an error. Handler
// serves reg when it is a prometheus.Gatherer (a *prometheus.Registry
// is), and prometheus.DefaultGatherer otherwise.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	if reg == nil {
		r := prometheus.NewRegistry()
		r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		reg = r
	}
	m := &Metrics{
		tools:   map[string]*toolMetrics{},
		reasons: map[string]bool{},
		series:  map[verdictKey]prometheus.Counter{},
	}
	if g, ok := reg.(prometheus.Gatherer); ok {
		m.gatherer = g
	} else {
		m.gatherer = prometheus.DefaultGatherer
	}
	m.verdicts = register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "airlock_proxy_verdicts_total",
		Help: "Tool results by tool, outcome (admitted, refused, passed, upstream_unavailable), reason and mode.",
	}, []string{"tool", "outcome", "reason", "mode"}))
	m.latency = register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "airlock_proxy_gate_latency_seconds",
		Help:    "Time inside the gate per checked tool result, in seconds.",
		Buckets: latencyBuckets(),
	}, []string{"tool"}))
	m.bytes = register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "airlock_proxy_result_bytes",
		Help:    "Upstream tool result sizes, in bytes.",
		Buckets: bytesBuckets(),
	}, []string{"tool"}))
	m.ratio = register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "airlock_proxy_invalid_output_ratio",
		Help: "Refused over checked results among the tool's last 1024 checked results.",
	}, []string{"tool"}))
	m.reloads = register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "airlock_proxy_contract_reloads_total",
		Help: "Contract reloads by result (ok, error).",
	}, []string{"result"}))
	return m
}

// register registers c with reg, or returns the collector already
// registered under the same descriptor. Any other error is a programming
// error in the constant descriptors above and panics.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	err := reg.Register(c)
	if err == nil {
		return c
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
	}
	panic("proxy: registering metrics: " + err.Error())
}

// MetricTools returns the tool names SetTools needs for set and tools
// (Options.Tools): the contracts' tool names and the MCP tool names of
// tools, sorted, each once. Observations carry the MCP tool name, so a
// tool mapped to a contract by the configuration (get-weather: {contract:
// weather}) is counted under get-weather.
func MetricTools(set *ContractSet, tools map[string]ToolConfig) []string {
	names := append([]string(nil), set.Tools()...)
	for n := range tools {
		names = append(names, n)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// SetTools sets the tool names that get their own label (the contracts'
// tools, ContractSet.Tools, after each load); any other name is counted
// as UnlistedTool. The names are the operator's (MetricTools: contract
// and configured MCP names), so they need not match the contract tool
// name pattern. Until the first call any tool name of that pattern gets
// its own label, up to MaxToolLabels. Series of tools no longer listed stay.
func (m *Metrics) SetTools(tools []string) {
	known := make(map[string]bool, len(tools))
	for _, t := range tools {
		known[t] = true
	}
	m.mu.Lock()
	m.known = known
	m.mu.Unlock()
}

// Observe records one observation. A refused observation counts toward
// its tool's invalid output ratio, as does an admitted one; passed and
// upstream_unavailable ones do not. It takes a lock and, for a series seen
// before, allocates nothing.
func (m *Metrics) Observe(o Observation) {
	m.mu.Lock()
	defer m.mu.Unlock()
	tool := m.toolLabel(o.Tool)
	t := m.tools[tool]
	if t == nil {
		t = &toolMetrics{bytes: m.bytes.WithLabelValues(tool)}
		m.tools[tool] = t
	}
	outcome, reason := o.Outcome, ""
	switch outcome {
	case OutcomeRefused:
		reason = m.reasonLabel(o.Reason)
	case OutcomeAdmitted, OutcomePassed, OutcomeUpstreamUnavailable:
	default:
		outcome = OtherLabel
	}
	mode := string(o.Mode)
	switch o.Mode {
	case gate.ModeStrict, gate.ModeWarn, gate.ModeOff:
	case "":
		mode = string(gate.ModeStrict)
	default:
		mode = OtherLabel
	}
	k := verdictKey{tool, outcome, reason, mode}
	c := m.series[k]
	if c == nil {
		c = m.verdicts.WithLabelValues(tool, outcome, reason, mode)
		m.series[k] = c
	}
	c.Inc()
	if o.Bytes > 0 || outcome != OutcomeUpstreamUnavailable {
		t.bytes.Observe(float64(o.Bytes))
	}
	if outcome == OutcomeAdmitted || outcome == OutcomeRefused {
		if t.latency == nil {
			// A tool's latency and ratio series appear with its first
			// checked result.
			t.latency, t.ratio = m.latency.WithLabelValues(tool), m.ratio.WithLabelValues(tool)
		}
		t.latency.Observe(o.Latency.Seconds())
		t.ratio.Set(t.add(outcome == OutcomeRefused))
	}
}

// add puts one checked verdict in the window and returns the ratio of
// refused ones in it.
func (t *toolMetrics) add(refused bool) float64 {
	word, bit := t.next/64, uint64(1)<<(t.next%64)
	if t.n == RateWindow {
		if t.window[word]&bit != 0 {
			t.refused--
		}
	} else {
		t.n++
	}
	if refused {
		t.window[word] |= bit
		t.refused++
	} else {
		t.window[word] &^= bit
	}
	t.next = (t.next + 1) % RateWindow
	return float64(t.refused) / float64(t.n)
}

// toolLabel is name's tool label (see SetTools, UnlistedTool); m.mu is
// held.
func (m *Metrics) toolLabel(name string) string {
	if _, ok := m.tools[name]; ok && (m.known == nil || m.known[name]) {
		return name
	}
	// A name SetTools gave (the operator's contracts and configuration:
	// an MCP name such as get-weather) needs no contract tool name shape.
	if m.known != nil && !m.known[name] || m.known == nil && !semantic.ValidName(name) || len(m.tools) >= MaxToolLabels {
		return UnlistedTool
	}
	return name
}

// reasonLabel is reason's label: itself when it has a reason code's shape
// and fewer than MaxReasonLabels were seen, OtherLabel otherwise; m.mu is
// held.
func (m *Metrics) reasonLabel(reason string) string {
	if m.reasons[reason] {
		return reason
	}
	if !reasonName(reason) || len(m.reasons) >= MaxReasonLabels {
		return OtherLabel
	}
	m.reasons[reason] = true
	return reason
}

// ObserveReload counts one contract reload (Contracts.Reload's error; nil
// is a success).
func (m *Metrics) ObserveReload(err error) {
	if err != nil {
		m.reloads.WithLabelValues("error").Inc()
		return
	}
	m.reloads.WithLabelValues("ok").Inc()
}

// Handler serves GET /metrics (the Prometheus text or OpenMetrics
// exposition, promhttp) and GET /healthz (200, "ok\n"); any other path
// is 404.
func (m *Metrics) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.gatherer, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux
}
