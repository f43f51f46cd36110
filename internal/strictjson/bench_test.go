package strictjson_test

import (
	"fmt"
	"testing"

	"github.com/airlockdev/airlock/internal/strictjson"
)

// benchBody returns about size bytes of a typical API page: an array of
// small objects with snake_case and camelCase names, and one object of
// 200 members (past the linear search).
func benchBody(size int) []byte {
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

func BenchmarkParse(b *testing.B) {
	for _, size := range []int{2 << 10, 200 << 10} {
		body := benchBody(size)
		for _, fold := range []bool{false, true} {
			b.Run(fmt.Sprintf("%dKB/fold=%v", size>>10, fold), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := strictjson.Parse(body, strictjson.Limits{FoldCollisions: fold}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
