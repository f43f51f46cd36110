package cli

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Progress line timing: the line appears only once the work has taken
// progressDelay, and is rewritten at most every progressEvery.
const (
	progressDelay = 2 * time.Second
	progressEvery = 100 * time.Millisecond
)

// progress is the line airlock run, mutate and record keep on standard
// error while they work, when it is a terminal: "airlock: 120/431
// fixtures", rewritten in place (carriage return, erase to end of line)
// and erased when the work ends, so it never mixes with the output. It
// appears only after progressDelay, so short runs print nothing. A nil
// *progress (not a terminal) does nothing; its methods are safe to call
// from several goroutines.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	unit  string
	now   func() time.Time
	start time.Time
	last  time.Time
	shown bool
}

// newProgress returns the progress line for w counting unit ("fixtures",
// "calls"), or nil when w is not a terminal: a log, a pipe or a CI runner
// gets no line at all.
func newProgress(w io.Writer, unit string) *progress {
	if !isTerminal(w) {
		return nil
	}
	return startProgress(w, unit, time.Now)
}

// startProgress is newProgress on any writer, with the clock now.
func startProgress(w io.Writer, unit string, now func() time.Time) *progress {
	return &progress{w: w, unit: unit, now: now, start: now()}
}

// update records that done of total are finished and rewrites the line
// when progressDelay has passed since the start and progressEvery since
// the last rewrite (the last item always shows).
func (p *progress) update(done, total int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.now()
	if t.Sub(p.start) < progressDelay || p.shown && t.Sub(p.last) < progressEvery && done < total {
		return
	}
	p.last, p.shown = t, true
	fmt.Fprintf(p.w, "\r\x1b[Kairlock: %d/%d %s", done, total, p.unit)
}

// finish erases the line, if it was shown.
func (p *progress) finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}
