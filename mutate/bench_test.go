package mutate_test

import (
	"context"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlockdev/airlock/internal/testbody"
	"github.com/airlockdev/airlock/internal/testtree"
	"github.com/airlockdev/airlock/mutate"
)

// BenchmarkMutate measures mutants generated and proven per second over the
// bundled contracts and fixtures (every mutant through the whole gate, the
// envelope and canary checks).
func BenchmarkMutate(b *testing.B) {
	n := 0
	for range b.N {
		rep, err := mutate.Mutate(context.Background(), mutate.Options{SchemasDir: "../schemas", FixturesDir: "../fixtures"})
		if err != nil {
			b.Fatal(err)
		}
		if len(rep.Survivors()) > 0 {
			b.Fatalf("%d survivors in the bundled contracts", len(rep.Survivors()))
		}
		n += len(rep.Results)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "mutants/s")
}

// BenchmarkMutate200KB mutates one generated accepted fixture of 200 KB (a
// page of issues, testbody.List, under a closed contract with a binding
// rule) with the default cap (DefaultMaxMutants) and one worker: the case
// of a real vendor response. It reports the time per run (sec/op),
// mutants/s, and peak-heap-MB, the highest live heap sampled every
// millisecond while Mutate runs (runtime/metrics
// /memory/classes/heap/objects:bytes: live and not yet swept objects).
func BenchmarkMutate200KB(b *testing.B) {
	dir := bigTree(b, 200<<10)
	opts := mutate.Options{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures"), Workers: 1}
	var peak uint64
	n := 0
	b.ResetTimer()
	for range b.N {
		runtime.GC()
		peak = max(peak, peakHeap(func() {
			rep, err := mutate.Mutate(context.Background(), opts)
			if err != nil {
				b.Fatal(err)
			}
			if len(rep.Skipped) > 0 {
				b.Fatalf("skipped: %v", rep.Skipped)
			}
			n += len(rep.Results)
		}))
	}
	b.StopTimer()
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "sec/op")
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "mutants/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(len(testbody.List(200<<10))), "body-B")
}

// peakHeap samples the heap's objects (runtime/metrics, no stop of the
// world) every millisecond while fn runs and returns the highest value,
// in bytes.
func peakHeap(fn func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak atomic.Uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(stop)
	<-done
	return peak.Load()
}

// bigTree writes a tree of one accepted fixture of at least size bytes
// (testbody.List) under bench_list, a closed contract of that list with a
// binding rule and the default limits, and returns its root.
func bigTree(t testtree.TB, size int) string {
	// The gate benchmark's contract, with the default limits (a 1 MiB
	// max_bytes: the oversize mutant's size).
	contract := testbody.ListContract("")
	return testtree.Write(t, map[string]string{
		"schemas/bench_list/contract.yaml":          contract["contract.yaml"],
		"schemas/bench_list/upstream.schema.json":   contract["upstream.schema.json"],
		"schemas/bench_list/agent.schema.json":      contract["agent.schema.json"],
		"fixtures/bench_list/defaults.meta.yaml":    "request: {id: " + testbody.RequestID + "}\nclock: 2025-07-01T00:00:00Z\n",
		"fixtures/bench_list/v1/accepted/page.json": string(testbody.List(size)),
	})
}
