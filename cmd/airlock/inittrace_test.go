package main

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Bounds on the package initialisation of airlock's own packages, as
// GODEBUG=inittrace=1 reports it for `airlock check`. Allocations are
// counted, not timed: the same binary allocates the same at every start,
// so the test cannot be flaky. What start-up may do is build a few small
// tables and compile a tiny regexp (about 50 allocations); everything
// larger is made at its first use (sync.OnceValue). For scale: compiling
// the embedded contract schema at start-up cost 43,000 allocations and
// 3.4 MB, the redactor's regexps 32,000 and 5.3 MB, one
// ^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$ 1,700 and 120 KB.
const (
	maxPackageAllocs = 200
	maxPackageBytes  = 32 << 10
	maxModuleAllocs  = 1000
	maxModuleBytes   = 128 << 10
)

// initLine is one line of GODEBUG=inittrace=1 output (runtime/proc.go):
// "init PKG @T ms, C ms clock, B bytes, A allocs".
var initLine = regexp.MustCompile(`^init (\S+) @[0-9.]+ ms, ([0-9.]+) ms clock, ([0-9]+) bytes, ([0-9]+) allocs$`)

// The module's packages initialise without compiling schemas or large
// regexps. The clock is reported in the log, never asserted.
func TestInitTrace(t *testing.T) {
	bin := airlockBin(t)
	cmd := exec.Command(bin, "check", "--help")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("airlock check --help: %v\n%s", err, stderr.Bytes())
	}
	const module = "github.com/airlockdev/airlock"
	var (
		lines                     int
		allClock, moduleClock     float64
		moduleBytes, moduleAllocs int
	)
	for _, line := range strings.Split(stderr.String(), "\n") {
		m := initLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		lines++
		clock, err1 := strconv.ParseFloat(m[2], 64)
		size, err2 := strconv.Atoi(m[3])
		allocs, err3 := strconv.Atoi(m[4])
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("unreadable inittrace line %q", line)
		}
		allClock += clock
		if m[1] != module && !strings.HasPrefix(m[1], module+"/") {
			continue
		}
		moduleClock += clock
		moduleBytes += size
		moduleAllocs += allocs
		t.Logf("%s: %.3f ms clock, %d bytes, %d allocs", m[1], clock, size, allocs)
		if allocs > maxPackageAllocs || size > maxPackageBytes {
			t.Errorf("%s initialises with %d allocations and %d bytes; at most %d and %d (make the work lazy: sync.OnceValue)",
				m[1], allocs, size, maxPackageAllocs, maxPackageBytes)
		}
	}
	if lines == 0 {
		t.Fatalf("no inittrace lines in airlock's standard error:\n%s", stderr.Bytes())
	}
	t.Logf("airlock's packages: %.3f ms clock, %d bytes, %d allocs; all %d packages with init work: %.3f ms clock (not asserted)",
		moduleClock, moduleBytes, moduleAllocs, lines, allClock)
	if moduleAllocs > maxModuleAllocs || moduleBytes > maxModuleBytes {
		t.Errorf("airlock's packages initialise with %d allocations and %d bytes together; at most %d and %d",
			moduleAllocs, moduleBytes, maxModuleAllocs, maxModuleBytes)
	}
}
