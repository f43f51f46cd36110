package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// The progress line appears only after progressDelay, is rewritten in
// place at most every progressEvery (the last item always), and is erased
// at the end.
func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	p := startProgress(&buf, "fixtures", clock.now)
	p.update(1, 10)
	clock.advance(progressDelay - time.Millisecond)
	p.update(2, 10)
	if buf.Len() != 0 {
		t.Fatalf("before %s: %q, want nothing", progressDelay, buf.String())
	}
	clock.advance(time.Millisecond)
	p.update(3, 10)
	if got, want := buf.String(), "\r\x1b[Kairlock: 3/10 fixtures"; got != want {
		t.Fatalf("after %s: %q, want %q", progressDelay, got, want)
	}
	clock.advance(progressEvery / 2)
	p.update(4, 10)
	if strings.Contains(buf.String(), "4/10") {
		t.Fatalf("rewritten within %s: %q", progressEvery, buf.String())
	}
	clock.advance(progressEvery / 2)
	p.update(5, 10)
	p.update(10, 10)
	if !strings.HasSuffix(buf.String(), "\r\x1b[Kairlock: 5/10 fixtures\r\x1b[Kairlock: 10/10 fixtures") {
		t.Fatalf("got %q: want 5/10 after %s and the last item at once", buf.String(), progressEvery)
	}
	p.finish()
	if !strings.HasSuffix(buf.String(), "10/10 fixtures\r\x1b[K") {
		t.Fatalf("not erased at the end: %q", buf.String())
	}
	n := buf.Len()
	p.finish()
	if buf.Len() != n {
		t.Fatal("erased twice")
	}
}

// A short run never shows the line, so finish writes nothing either.
func TestProgressShortRunWritesNothing(t *testing.T) {
	var buf bytes.Buffer
	clock := &fakeClock{t: time.Unix(0, 0)}
	p := startProgress(&buf, "fixtures", clock.now)
	for i := 1; i <= 100; i++ {
		clock.advance(10 * time.Millisecond)
		p.update(i, 100)
	}
	p.finish()
	if buf.Len() != 0 {
		t.Fatalf("a 1 s run wrote %q", buf.String())
	}
}

// On a writer that is not a terminal (a buffer, a file, a pipe) there is
// no progress line, however long the work.
func TestProgressNotOnANonTerminal(t *testing.T) {
	var buf bytes.Buffer
	if p := newProgress(&buf, "fixtures"); p != nil {
		t.Fatal("a progress line for a buffer")
	}
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := newProgress(f, "fixtures")
	if p != nil {
		t.Fatal("a progress line for a regular file")
	}
	p.update(1, 2) // a nil progress is safe to use
	p.finish()

}
