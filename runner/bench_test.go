package runner_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/reports"
	"github.com/airlockdev/airlock/runner"
)

// benchTree copies the bundled contracts and replicates the bundled fixtures
// (bodies, sidecars, goldens, defaults) under new names until the tree
// holds at least n fixtures. It returns the tree's root.
func benchTree(tb testing.TB, n int) (string, int) {
	tb.Helper()
	dir := tb.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "schemas"), os.DirFS("../schemas")); err != nil {
		tb.Fatal(err)
	}
	type file struct {
		rel  string
		data []byte
	}
	var bodies, others []file
	err := filepath.WalkDir("../fixtures", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel("../fixtures", p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		name := d.Name()
		switch {
		case name == fixture.DefaultsFile:
			others = append(others, file{rel, data})
		case strings.HasSuffix(name, fixture.MetaSuffix), strings.HasSuffix(name, fixture.GoldenSuffix):
			others = append(others, file{rel, data})
		default:
			bodies = append(bodies, file{rel, data})
		}
		return nil
	})
	if err != nil || len(bodies) == 0 {
		tb.Fatalf("no bundled fixtures to replicate: %v", err)
	}
	write := func(rel string, data []byte) {
		p := filepath.Join(dir, "fixtures", rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	copies := (n + len(bodies) - 1) / len(bodies)
	for _, f := range others {
		if filepath.Base(f.rel) == fixture.DefaultsFile {
			write(f.rel, f.data)
		}
	}
	for i := range copies {
		rename := func(rel string) string {
			d, b := filepath.Split(rel)
			return filepath.Join(d, fmt.Sprintf("c%05d-%s", i, b))
		}
		for _, f := range bodies {
			write(rename(f.rel), f.data)
		}
		for _, f := range others {
			if filepath.Base(f.rel) != fixture.DefaultsFile {
				write(rename(f.rel), f.data)
			}
		}
	}
	return dir, copies * len(bodies)
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
