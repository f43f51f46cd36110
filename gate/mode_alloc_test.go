//go:build !race

package gate_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/testbody"
	"github.com/airlockdev/airlock/semantic"
)

// Built without the race detector only: its sync.Pool drops items at
// random, so allocation counts are not exact under -race. make test runs
// this test in its non-race step.

// TestCheckHooksAllocations holds the hot path to its allocation count
// when no hook is set: Options.Observe and Options.Logger nil must cost
// nothing, and a no-op Observe must cost no allocation either.
func TestCheckHooksAllocations(t *testing.T) {
	dir := writeBenchFiles(t, "bench_list", testbody.ListContract(""))
	body := testbody.List(2 << 10)
	call := gate.Call{Request: semantic.Request{ID: testbody.RequestID}, Now: time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC)}
	allocs := func(opts gate.Options) float64 {
		c, err := gate.LoadDir(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		r := bytes.NewReader(body)
		return testing.AllocsPerRun(50, func() {
			r.Reset(body)
			v, err := c.Check(context.Background(), gate.Response{Status: 200, ContentType: "application/json", Body: r}, call)
			if err != nil || !v.Admitted {
				t.Fatal("refused")
			}
		})
	}
	none := allocs(gate.Options{})
	var n int
	hooked := allocs(gate.Options{Observe: func(gate.Observation) { n++ }})
	if n == 0 {
		t.Fatal("Observe was not called")
	}
	if hooked != none {
		t.Errorf("a no-op Observe costs %v allocations per Check, want the %v of no hook", hooked, none)
	}
	warn := allocs(gate.Options{Mode: gate.ModeWarn})
	if warn != none {
		t.Errorf("warn mode costs %v allocations per Check, want the %v of strict", warn, none)
	}
}
