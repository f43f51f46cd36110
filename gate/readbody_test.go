package gate

import (
	"bytes"
	"io"
	"runtime"
	"testing"
)

// plainReader hides bytes.Reader's Len, as a network body does.
type plainReader struct{ r io.Reader }

func (p plainReader) Read(b []byte) (int, error) { return p.r.Read(b) }

// allocated is the number of bytes fn allocates on the heap.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestReadBodyOversizeMemory reads a body one byte past the limit: it is
// refused as too large, and the buffers it allocates while growing add up
// to about twice the limit (doubling: 1/2 + 1/4 + … of the last buffer,
// plus the last), never the three times a grow through append costs.
// A reader that tells its length gets one buffer of limit+1 bytes.
func TestReadBodyOversizeMemory(t *testing.T) {
	const limit = 8 << 20
	body := bytes.Repeat([]byte(" "), limit+1)
	var got []byte
	var r *refusal
	n := allocated(func() { got, r = readBody(plainReader{bytes.NewReader(body)}, "", limit) })
	if r == nil || r.reason != ReasonTooLarge || len(got) != limit+1 {
		t.Fatalf("refusal %+v, %d bytes read; want transport.too_large after %d", r, len(got), limit+1)
	}
	if n > 2*(limit+1)+1<<20 {
		t.Errorf("reading %d bytes allocated %d bytes: more than twice the limit", limit+1, n)
	}
	n = allocated(func() { got, r = readBody(bytes.NewReader(body), "", limit) })
	if r == nil || r.reason != ReasonTooLarge || len(got) != limit+1 {
		t.Fatalf("refusal %+v, %d bytes read", r, len(got))
	}
	if n > limit+1+64<<10 {
		t.Errorf("a reader that tells its length: %d bytes allocated for a %d-byte limit, want one buffer", n, limit)
	}
}
