// Package testbody makes the upstream bodies the benchmarks and memory
// specs of several packages share, so that their figures speak of the same
// shape. Only tests import it.
package testbody

import "fmt"

// RequestID is the request id List echoes.
const RequestID = "req.B3nchm4rk"

// List returns an upstream value of at least size bytes (for size ≥ 64): a
// page of issues, objects of nine members with strings (one escaped, one
// non-ASCII), integers, decimals, nulls and a small array.
func List(size int) []byte {
	states := []string{"open", "closed", "triaged"}
	authors := []string{"mlopez", "akim", "r.okafor", "j-nguyen"}
	b := []byte(`{"request_id":"` + RequestID + `","items":[`)
	for i := 0; len(b) < size-40; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"id":"ISS-%d","title":"Gate refuses \"%d\" — retry with café config #%d",`, 1000+i, i, i%97)
		b = fmt.Appendf(b, `"state":%q,"author":%q,"created_at":"2025-06-%02dT%02d:%02d:07.25Z",`, states[i%3], authors[i%4], 1+i%28, i%24, i%60)
		b = fmt.Appendf(b, `"labels":["area/gate","kind/bug","p%d"],"comments":%d,"score":%d.%02d,"assignee":`, i%4, i*7%300, i%100, i*13%100)
		if i%2 == 0 {
			b = append(b, "null}"...)
		} else {
			b = fmt.Appendf(b, "%q}", authors[(i+1)%4])
		}
	}
	return append(b, `],"next_cursor":"c.AAAAAQ"}`...)
}
