package proxy

import (
	"context"
	"errors"
	mrand "math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/airlockdev/airlock/record"
	"github.com/airlockdev/airlock/redact"
	"github.com/airlockdev/airlock/semantic"
)

// --record-sample: a share of the gated results written as recorded fixtures.

// Sampling is airlock proxy --record-sample: each result of a contracted
// tool is written, with probability Rate, by record.WriteSample under
// FixturesDir/<tool>/<current version>/recorded/ (redacted by Redactor;
// the zero value is the default policy). One sample is written at a time,
// beside the agent's answer; a result that arrives meanwhile is not
// sampled; Serve returns after the sample being written. A failed write is
// logged. At most Max samples are written (0: DefaultRecordMax), counted
// over every Serve sharing this Sampling; then sampling stops, with one
// log line.
type Sampling struct {
	Rate        float64
	FixturesDir string
	Redactor    redact.Redactor
	Max         int
	// Server is the server's command line, for the sidecar's source
	// (redacted).
	Server []string
	busy   atomic.Bool // a sample is being written (by any Serve sharing this Sampling)
	taken  int         // samples started, under busy
}

// DefaultRecordMax is Sampling.Max when 0 (airlock proxy --record-max):
// the most sampled fixtures one proxy run writes.
const DefaultRecordMax = 1000

// sample writes a sampled result in the background (see Sampling).
func (p *proxy) sample(pd *pending, reqID string, result []byte, received time.Time, took time.Duration) {
	sp := p.opts.Sample
	if sp == nil || sp.Rate <= 0 || (sp.Rate < 1 && mrand.Float64() >= sp.Rate) {
		return
	}
	// Serve's end sets sampleStop and then waits for sampleWG: an Add
	// after that would race with the Wait (and outlive Serve).
	p.sampleMu.Lock()
	defer p.sampleMu.Unlock()
	if p.sampleStop || !sp.busy.CompareAndSwap(false, true) {
		return
	}
	limit := sp.Max
	if limit <= 0 {
		limit = DefaultRecordMax
	}
	if sp.taken >= limit {
		sp.busy.Store(false)
		return
	}
	sp.taken++
	if sp.taken == limit {
		p.opts.Logger.Warn("sampling stops: the most sampled results a run records were taken", "max", limit)
	}
	p.sampleWG.Add(1)
	go func() {
		defer p.sampleWG.Done()
		defer sp.busy.Store(false)
		res, err := record.WriteSample(context.Background(), sp.FixturesDir, pd.contract, sp.Redactor, record.Sample{
			Result: result, Request: semantic.Request{ID: reqID, Context: pd.args},
			Server: sp.Server, MCPTool: pd.tool, Received: received, Duration: took,
		})
		if err != nil {
			p.opts.Logger.Warn("a sampled result was not recorded", "tool", pd.tool, "error", err)
			return
		}
		p.opts.Logger.Info("recorded a sampled result", "tool", pd.tool, "fixture", res.Body)
	}()
}

// ErrUpstreamClosed is Serve's error when the server's side ended first
// (the process exited or its stdout closed); every pending request was
// answered before Serve returned.
var ErrUpstreamClosed = errors.New("the MCP server closed its connection")
