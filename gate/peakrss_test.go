package gate_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/testbody"
	"github.com/airlockdev/airlock/semantic"
)

// TestPeakRSS measures the peak resident memory of one check of each
// BenchmarkWorstCase body. It runs only when $AIRLOCK_PEAK_RSS is set (make
// bench sets it): each body is checked once in a process of its own (this
// test binary, started again) that loads the contract, checks the body
// from its file, and reads its VmHWM from /proc/self/status; the whole
// process is counted, Go runtime included. Each result is printed as a
// benchmark line, BenchmarkPeakRSS/4MiB/<side> 1 <bytes> peak-B <bytes>
// body-B, for scripts/benchratio.
func TestPeakRSS(t *testing.T) {
	if dir := os.Getenv(peakChildEnv); dir != "" {
		peakChild(t, dir)
		return
	}
	if os.Getenv("AIRLOCK_PEAK_RSS") == "" {
		t.Skip("set AIRLOCK_PEAK_RSS=1 to measure the peak memory of a worst-case check (make bench does)")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skipf("no /proc/self/status here: %v", err)
	}
	name := strconv.Itoa(worstSize>>20) + "MiB"
	for _, side := range []struct {
		name     string
		dir      string
		body     []byte
		admitted bool
	}{
		{"refused", writeBenchFiles(t, worstTool, worstFiles()), worstBody(worstSize), false},
		{"admitted", writeBenchContract(t), testbody.List(worstSize), true},
	} {
		if err := os.WriteFile(filepath.Join(side.dir, "body.json"), side.body, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestPeakRSS$", "-test.count=1")
		cmd.Env = append(os.Environ(), peakChildEnv+"="+side.dir, peakAdmittedEnv+"="+strconv.FormatBool(side.admitted))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", side.name, err, out)
		}
		var peak int64 = -1
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "peak-rss: "); ok {
				peak, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		if peak < 0 {
			t.Fatalf("%s: the child printed no peak:\n%s", side.name, out)
		}
		fmt.Printf("BenchmarkPeakRSS/%s/%s\t1\t%d peak-B\t%d body-B\n", name, side.name, peak, len(side.body))
	}
}

// The child's environment: the contract folder (holding body.json) and
// the verdict it must reach.
const (
	peakChildEnv    = "AIRLOCK_PEAK_RSS_CHILD"
	peakAdmittedEnv = "AIRLOCK_PEAK_RSS_ADMITTED"
)

// peakChild checks dir/body.json once against the contract in dir and
// prints its process's peak resident set size in bytes.
func peakChild(t *testing.T, dir string) {
	c, err := gate.LoadDir(dir, gate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "body.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := c.Check(context.Background(), gate.Response{Status: 200, ContentType: "application/json", Body: f}, gate.Call{
		Request: semantic.Request{ID: benchRequestID},
		Now:     time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC),
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := os.Getenv(peakAdmittedEnv) == "true"; v.Admitted != want || (!v.Admitted && !strings.HasPrefix(v.Reason, "schema.")) {
		t.Fatalf("admitted=%v (reason %q), want %v", v.Admitted, v.Reason, want)
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM: %q: %v", v, err)
			}
			fmt.Printf("peak-rss: %d\n", kb<<10)
			return
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
}
