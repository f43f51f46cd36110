package proxy_test

import (
	"io"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/proxy"
)

// The operations' cost per verdict: Metrics.Observe on a series seen
// before (the steady state) and one audit line, with and without the
// gate's audit record, to io.Discard. `make bench` may run them beside
// the proxy's load benchmark.

func BenchmarkMetricsObserve(b *testing.B) {
	m := proxy.NewMetrics(prometheus.NewRegistry())
	m.SetTools([]string{"review_status"})
	admitted := proxy.Observation{Tool: "review_status", Mode: gate.ModeStrict, Outcome: proxy.OutcomeAdmitted, Latency: 40 * time.Microsecond, Bytes: 2048}
	refused := proxy.Observation{Tool: "review_status", Mode: gate.ModeWarn, Outcome: proxy.OutcomeRefused, Reason: "parse.duplicate_member", Latency: 20 * time.Microsecond, Bytes: 2048}
	m.Observe(admitted)
	m.Observe(refused)
	b.Run("admitted", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m.Observe(admitted)
		}
	})
	b.Run("refused", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m.Observe(refused)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				m.Observe(refused)
			}
		})
	})
}

func BenchmarkAuditLogger(b *testing.B) {
	log := proxy.NewAuditLogger(io.Discard)
	rec := &gate.AuditRecord{
		Time: "2025-07-01T00:00:00Z", Tool: "review_status", ContractVersion: "1.0.0", UpstreamVersion: "v2", RequestID: "req-0001",
		Status: 200, ContentType: "application/json", Size: 2048, SHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		Outcome: "failure", Stage: "parse", Reason: "parse.duplicate_member", ErrorCode: "INVALID_RESPONSE", InstanceLocation: "/status",
		Message: `duplicate member "status" at offsets 12 and 40`, Offset: 40, OutputSHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", AirlockVersion: gate.Version, DurationMicros: 21,
	}
	b.Run("with-audit-record", func(b *testing.B) {
		o := proxy.Observation{Tool: "review_status", Mode: gate.ModeWarn, Outcome: proxy.OutcomeRefused, Reason: "parse.duplicate_member", Latency: 21 * time.Microsecond, Bytes: 2048, Audit: rec}
		b.ReportAllocs()
		for b.Loop() {
			log(o)
		}
	})
	b.Run("unavailable", func(b *testing.B) {
		o := proxy.Observation{Tool: "review_status", Mode: gate.ModeStrict, Outcome: proxy.OutcomeUpstreamUnavailable}
		b.ReportAllocs()
		for b.Loop() {
			log(o)
		}
	})
}
