package proxy_test

import (
	"context"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/airlockdev/airlock/proxy"
)

// TestLineConnOversize: a line past the limit is a *TooLargeError naming
// the top-level id wherever it sits (never an "id" nested in the result),
// and the next line is read normally.
func TestLineConnOversize(t *testing.T) {
	pad := strings.Repeat("x", 4096)
	for _, c := range []struct {
		name, line string
		id         any // nil: none found
	}{
		{"id first", `{"jsonrpc":"2.0","id":7,"result":{"t":"` + pad + `"}}`, int64(7)},
		{"id last", `{"jsonrpc":"2.0","result":{"t":"` + pad + `"},"id":"a-1"}`, "a-1"},
		{"nested id only", `{"jsonrpc":"2.0","result":{"id":9,"t":"` + pad + `"}}`, nil},
		{"id spelled in a string", `{"jsonrpc":"2.0","result":{"t":"\"id\":5 ` + pad + `"}}`, nil},
		{"escaped quote before id", `{"jsonrpc":"2.0","result":"\"` + pad + `","id":3}`, int64(3)},
		{"no newline at the end", `{"id":12,"result":"` + pad + `"}`, int64(12)},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := c.line + "\n" + `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"
			if c.name == "no newline at the end" {
				in = c.line
			}
			conn := proxy.NewLineConn(strings.NewReader(in), io.Discard, 1024)
			_, err := conn.Read(context.Background())
			var tl *proxy.TooLargeError
			if !errors.As(err, &tl) {
				t.Fatalf("want *TooLargeError, got %v", err)
			}
			if tl.Size != int64(len(c.line)) || tl.Limit != 1024 {
				t.Errorf("size %d limit %d, want %d 1024", tl.Size, tl.Limit, len(c.line))
			}
			if got := tl.ID.Raw(); got != c.id {
				t.Errorf("id %v (%T), want %v", got, got, c.id)
			}
			msg, err := conn.Read(context.Background())
			if c.name == "no newline at the end" {
				if !errors.Is(err, io.EOF) {
					t.Errorf("want EOF, got %v %v", msg, err)
				}
				return
			}
			if r, ok := msg.(*jsonrpc.Response); err != nil || !ok || r.ID.Raw() != int64(1) {
				t.Errorf("the next line: %v %v", msg, err)
			}
		})
	}
}

// TestLineConnGarbage: a line that is not JSON-RPC is *BadMessageError and
// the connection goes on.
func TestLineConnGarbage(t *testing.T) {
	conn := proxy.NewLineConn(strings.NewReader("<html>\n\n"+`{"jsonrpc":"2.0","method":"notifications/x"}`+"\n"), io.Discard, 0)
	_, err := conn.Read(context.Background())
	var bad *proxy.BadMessageError
	if !errors.As(err, &bad) || string(bad.Line) != "<html>" {
		t.Fatalf("want *BadMessageError for <html>, got %v", err)
	}
	msg, err := conn.Read(context.Background())
	if r, ok := msg.(*jsonrpc.Request); err != nil || !ok || r.Method != "notifications/x" {
		t.Errorf("the next message: %v %v", msg, err)
	}
}

// endless yields n bytes of a JSON string's inside, then `"}` and a newline.
type endless struct{ n int }

func (e *endless) Read(p []byte) (int, error) {
	if e.n < 0 {
		return 0, io.EOF
	}
	if e.n == 0 {
		e.n = -1
		return copy(p, "\"}\n"), nil
	}
	k := min(len(p), e.n)
	for i := range k {
		p[i] = 'A'
	}
	e.n -= k
	return k, nil
}

// discardAlloc returns the bytes allocated reading one line of size bytes
// past the default limit.
func discardAlloc(t *testing.T, size int) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	conn := proxy.NewLineConn(io.MultiReader(strings.NewReader(`{"jsonrpc":"2.0","id":4,"result":"`), &endless{n: size}), io.Discard, 0)
	_, err := conn.Read(context.Background())
	runtime.ReadMemStats(&after)
	var tl *proxy.TooLargeError
	if !errors.As(err, &tl) || tl.ID.Raw() != int64(4) {
		t.Fatalf("want *TooLargeError with id 4, got %v", err)
	}
	return after.TotalAlloc - before.TotalAlloc
}

// TestLineConnDoesNotBuffer: reading a line past the limit allocates what
// the limit allows (the line up to DefaultMaxMessage), not the line: a
// 256 MiB line costs what a 4 MiB one does, within 1 MiB.
func TestLineConnDoesNotBuffer(t *testing.T) {
	small, big := discardAlloc(t, 4<<20), discardAlloc(t, 256<<20)
	if big > small+1<<20 {
		t.Errorf("a 4 MiB line allocated %d bytes, a 256 MiB one %d", small, big)
	}
	if small > 8*proxy.DefaultMaxMessage {
		t.Errorf("a 4 MiB line allocated %d bytes, more than 8 × DefaultMaxMessage", small)
	}
}
