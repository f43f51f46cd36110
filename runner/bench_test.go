package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlockdev/airlock/internal/testtree/bigtree"
	"github.com/airlockdev/airlock/reports"
	"github.com/airlockdev/airlock/runner"
)

// benchTree writes a tree of at least n fixtures, the bundled contracts
// and the bundled fixtures replicated under new names (internal/testtree/bigtree,
// which scripts/gentree uses too). It returns the tree's root and the
// number of fixtures.
func benchTree(tb testing.TB, n int) (string, int) {
	tb.Helper()
	dir := tb.TempDir()
	written, err := bigtree.Write(dir, "../schemas", "../fixtures", n)
	if err != nil {
		tb.Fatal(err)
	}
	return dir, written
}

// peakHeap samples the live heap while fn runs and returns the highest value.
func peakHeap(fn func()) uint64 {
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	fn()
	close(stop)
	<-done
	return peak.Load()
}

// BenchmarkRun measures the runner end to end on generated trees built from
// the bundled fixtures: discovery, every suite, the JUnit report written.
// fixtures/s is the throughput; peak-heap-MB the highest heap in use, and
// heap-KB/fixture that peak per fixture, which must not grow with the tree
// beyond the results kept for the report.
func BenchmarkRun(b *testing.B) {
	for _, size := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("fixtures=%d", size), func(b *testing.B) {
			dir, n := benchTree(b, size)
			junit := filepath.Join(b.TempDir(), "junit.xml")
			var peak uint64
			b.ResetTimer()
			for range b.N {
				runtime.GC()
				p := peakHeap(func() {
					res, err := runner.Run(context.Background(), runner.Options{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures")})
					if err != nil {
						b.Fatal(err)
					}
					if _, failed, _ := res.Run.Counts(); failed > 0 {
						b.Fatalf("%d failed cases in the generated tree", failed)
					}
					f, err := os.Create(junit)
					if err != nil {
						b.Fatal(err)
					}
					if err := reports.WriteJUnit(f, &res.Run); err != nil {
						b.Fatal(err)
					}
					f.Close()
				})
				peak = max(peak, p)
			}
			b.StopTimer()
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "fixtures/s")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(peak)/1024/float64(n), "heap-KB/fixture")
		})
	}
}
