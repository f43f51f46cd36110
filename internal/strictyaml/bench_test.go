package strictyaml_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/airlockdev/airlock/internal/config"
)

// BenchmarkHostile runs every input of the hostile-config battery
// (hostile_test.go), at 1 MiB or the size the input stops at, through each
// way airlock decodes a configuration file (the costliest, a requests file
// decoded into an interface, first), and a harmless file of the same size
// through the same target in the same run (for the targets that check a
// schema, one with more text than structure, which stays under
// MaxSchemaNodes). Beside ns/op, B/op and MB/s it
// reports:
//
//	B/in-B             bytes allocated per input byte
//	harmless-B/in-B    the same for the harmless file
//	x-harmless-B       the ratio of the two
//	x-harmless-ns      the ratio of the times (one harmless run timed)
//
// make bench runs it for the requests-file target: go test -run '^$'
// -bench 'Hostile/requests' ./internal/strictyaml.
func BenchmarkHostile(b *testing.B) {
	for _, target := range decodeTargets {
		b.Run(target.name, func(b *testing.B) {
			for _, in := range inputsFor(target) {
				b.Run(in.name, func(b *testing.B) {
					data := in.make(config.MaxFile)
					ref := target.harmless()(len(data))
					refStart := time.Now()
					refAlloc, _ := allocated(func() error { return target.decode(ref) })
					refNs := time.Since(refStart)

					b.SetBytes(int64(len(data)))
					runtime.GC()
					var before, after runtime.MemStats
					runtime.ReadMemStats(&before)
					b.ResetTimer()
					for b.Loop() {
						_ = target.decode(data)
					}
					b.StopTimer()
					runtime.ReadMemStats(&after)
					perOp := float64(after.TotalAlloc-before.TotalAlloc) / float64(b.N)
					nsPerOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
					b.ReportMetric(perOp/float64(len(data)), "B/in-B")
					b.ReportMetric(float64(refAlloc)/float64(len(ref)), "harmless-B/in-B")
					b.ReportMetric(perOp/float64(max(refAlloc, 1)), "x-harmless-B")
					b.ReportMetric(nsPerOp/float64(max(refNs.Nanoseconds(), 1)), "x-harmless-ns")
				})
			}
		})
	}
}
