package strictjson_test

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"testing"
	"time"

	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/internal/testbody"
)

// wideBody returns about size bytes (at least some 3 KB) of another API
// page: an array of small objects with snake_case and camelCase names, and
// one object of 200 members (past the linear search for repeated names).
func wideBody(size int) []byte {
	b := []byte(`{"requestId":"req.B3nchm4rk","wide":{`)
	for i := 0; i < 200; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `"fieldName%d":%d`, i, i)
	}
	b = append(b, `},"items":[`...)
	for i := 0; len(b) < size-40; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"id":"ISS-%d","title":"Gate refuses \"%d\" — café #%d","state":"open","createdAt":"2025-06-01T10:00:07Z",`, 1000+i, i, i%97)
		b = fmt.Appendf(b, `"labels":["area/gate","kind/bug"],"commentCount":%d,"score":%d.%02d,"assignee":null,"htmlURL":"https://x.example/%d"}`, i*7%300, i%100, i*13%100, i)
	}
	return append(b, `],"nextCursor":"c.AAAAAQ"}`...)
}

// BenchmarkParse parses each body with and without the fold-collision
// check (the gate's default is with). Beside B/op and allocs/op it reports
//
//	B/in-B         bytes allocated per body byte
//	allocs/100B    allocations per 100 body bytes
func BenchmarkParse(b *testing.B) {
	bodies := []struct {
		name string
		make func(int) []byte
	}{{"list", testbody.List}, {"wide", wideBody}}
	for _, body := range bodies {
		for _, size := range []int{2 << 10, 200 << 10} {
			data := body.make(size)
			for _, fold := range []bool{false, true} {
				b.Run(fmt.Sprintf("%s/%dKB/fold=%v", body.name, size>>10, fold), func(b *testing.B) {
					lim := strictjson.Limits{FoldCollisions: fold}
					b.SetBytes(int64(len(data)))
					b.ReportAllocs()
					runtime.GC()
					var before, after runtime.MemStats
					runtime.ReadMemStats(&before)
					for b.Loop() {
						if _, err := strictjson.Parse(data, lim); err != nil {
							b.Fatal(err)
						}
					}
					runtime.ReadMemStats(&after)
					n := float64(b.N) * float64(len(data))
					b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "B/in-B")
					b.ReportMetric(100*float64(after.Mallocs-before.Mallocs)/n, "allocs/100B")
				})
			}
		}
	}
}

// membersBody returns about size bytes of the memory battery's "many small
// members" shape: one object of members "m<i in base 36>":<i mod 1000>,
// some 12 bytes each.
func membersBody(size int) []byte { return members(size, false) }

// upperMembersBody is membersBody with names in capitals ("M1A"), each
// of which is not its own fold: the costliest names for the check of
// fold collisions.
func upperMembersBody(size int) []byte { return members(size, true) }

func members(size int, upper bool) []byte {
	b := []byte(`{"label":"battery","members":{`)
	for i := 0; len(b) < size-20; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		n := len(b)
		b = append(b, `"m`...)
		b = strconv.AppendInt(b, int64(i), 36)
		if upper {
			copy(b[n:], bytes.ToUpper(b[n:]))
		}
		b = append(b, `":`...)
		b = strconv.AppendInt(b, int64(i%1000), 10)
	}
	return append(b, "}}"...)
}

// heapObjects is the runtime's count of bytes in heap objects, live or
// not yet swept.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// BenchmarkParsePeak parses 16 MiB bodies (the memory battery's size) with
// the fold-collision check and reports, beside B/op,
//
//	peak-B/in-B    the most heap the parse held at once (live or not yet
//	               collected, sampled every few microseconds), per body byte
//	kept-B/in-B    the heap the value keeps after a collection, per body byte
//
// at the default GOGC (what bin/airlock runs with) and at GOGC=5, where
// the peak is close to the live heap.
func BenchmarkParsePeak(b *testing.B) {
	bodies := []struct {
		name string
		make func(int) []byte
	}{{"members", membersBody}, {"MEMBERS", upperMembersBody}, {"list", testbody.List}}
	for _, body := range bodies {
		data := body.make(16 << 20)
		for _, gogc := range []int{100, 5} {
			b.Run(fmt.Sprintf("%s/16MB/gogc=%d", body.name, gogc), func(b *testing.B) {
				defer debug.SetGCPercent(debug.SetGCPercent(gogc))
				lim := strictjson.Limits{FoldCollisions: true}
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				var peak, kept uint64
				for b.Loop() {
					runtime.GC()
					base := heapObjects()
					stop, done := make(chan struct{}), make(chan uint64)
					go func() {
						var m uint64
						for {
							select {
							case <-stop:
								done <- m
								return
							default:
							}
							m = max(m, heapObjects())
							time.Sleep(5 * time.Microsecond)
						}
					}()
					v, err := strictjson.Parse(data, lim)
					close(stop)
					m := <-done
					if err != nil {
						b.Fatal(err)
					}
					runtime.GC()
					k := heapObjects()
					runtime.KeepAlive(v)
					peak, kept = max(peak, m-min(m, base)), max(kept, k-min(k, base))
				}
				n := float64(len(data))
				b.ReportMetric(float64(peak)/n, "peak-B/in-B")
				b.ReportMetric(float64(kept)/n, "kept-B/in-B")
			})
		}
	}
}
