// Command runcompare times airlock run on one fixture tree with two
// binaries, a baseline (the build of an older revision) and a new one, and
// says whether the new one reaches the throughput target of issue 14: at
// least 3.5× the baseline's fixtures/s on the generated 10,000-fixture tree
// (scripts/gentree). Both are measured in the same invocation, never
// against figures written down.
//
// Each binary runs
//
//	BIN run --schemas TREE/schemas --fixtures TREE/fixtures
//
// -warmup times untimed, then -runs times timed, the two binaries taking
// turns (base, new; then new, base; …) so that a change in the machine's
// load falls on both. The first untimed run of each also writes --json
// results (TMP/results.json), the reference the two are compared on; the
// timed runs write no report unless -json says so (on the 10,000-fixture
// tree the results file is about 10 MB, and writing it adds about a tenth
// to the CPU time and a third to the peak RSS). Each run's wall time, CPU time (user + system, from
// the child's resource usage) and peak resident memory (ru_maxrss) are
// kept; the medians are printed with fixtures/s by wall and by CPU time,
// and the new/base throughput ratio by each clock, marked "holds" or
// "MISSED" against -target. Reports go to a temporary folder, removed at
// the end.
//
// The two binaries must agree on what they checked: the exit code and the
// testcase counts of every run (from the summary line, else the --json
// results) are compared, and a difference is printed as a warning with the
// tool and suite rows that differ and a few of the testcases behind them
// (a baseline that predates a fixture feature refuses or misreads those
// fixtures). Throughput is counted in fixtures, the distinct fixture files
// in the new binary's results.
//
// Usage:
//
//	go run ./scripts/runcompare -base bin/airlock-base -new bin/airlock -tree out/tree10k [-runs 5] [-warmup 1] [-json] [-target 3.5]
//
// Exit status: 0 when the comparison was printed (a missed target or a
// warning included); 1 when a binary could not be run, died of a signal,
// exited 3 (internal error) or left neither results nor a summary line;
// 2 on a usage error.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// A testcase of the --json results (schemas/results.schema.json), the
// fields that identify it and its outcome.
type testcase struct {
	Tool     string `json:"tool"`
	Version  string `json:"upstream_version"`
	Kind     string `json:"kind"`
	Suite    string `json:"suite"`
	File     string `json:"file"`
	Status   string `json:"status"`
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
}

type results struct {
	Passed    int        `json:"passed"`
	Failed    int        `json:"failed"`
	Unchecked int        `json:"unchecked"`
	Errored   int        `json:"errored"`
	Cases     []testcase `json:"cases"`
}

// counts is what two runs must agree on.
type counts struct {
	total, passed, failed, unchecked, errored int
}

func (c counts) String() string {
	s := fmt.Sprintf("%d testcases: %d passed, %d failed, %d unchecked", c.total, c.passed, c.failed, c.unchecked)
	if c.errored > 0 {
		s += fmt.Sprintf(", %d errored", c.errored)
	}
	return s
}

// run is one timed invocation.
type run struct {
	wall, cpu time.Duration
	rss       int64 // bytes; 0 when the platform does not say
	exit      int
	counts    counts
	res       *results // nil when the results file was not written
	stdout    string
}

// binary is one side of the comparison.
type binary struct {
	label, path string // path: absolute, for running it
	shown       string // as given on the command line
	ref         run    // the first untimed run, with --json results
	runs        []run
}

// summary is the console's last count line (runner's summary).
var summary = regexp.MustCompile(`(?m)^([0-9]+) testcases: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) unchecked`)

func runOnce(path, tree, tmp string, withJSON bool) (run, error) {
	report := filepath.Join(tmp, "results.json")
	os.Remove(report)
	args := []string{"run", "--schemas", filepath.Join(tree, "schemas"), "--fixtures", filepath.Join(tree, "fixtures")}
	if withJSON {
		args = append(args, "--json", report)
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = tmp
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return run{}, err
	}
	ps := cmd.ProcessState
	if !ps.Exited() {
		return run{}, fmt.Errorf("%s: %v\n%s", path, ps, stderr.Bytes())
	}
	r := run{wall: wall, cpu: ps.UserTime() + ps.SystemTime(), rss: maxRSS(ps), exit: ps.ExitCode(), stdout: stdout.String()}
	if r.exit == 3 {
		return run{}, fmt.Errorf("%s: internal error (exit 3)\n%s", path, stderr.Bytes())
	}
	if data, err := os.ReadFile(report); withJSON && err == nil {
		var res results
		if err := json.Unmarshal(data, &res); err != nil {
			return run{}, fmt.Errorf("%s: results: %v", report, err)
		}
		r.res = &res
	}
	if m := summary.FindStringSubmatch(r.stdout); m != nil {
		n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
		r.counts = counts{total: n(1), passed: n(2), failed: n(3), unchecked: n(4)}
	} else if r.res != nil {
		r.counts = counts{len(r.res.Cases), r.res.Passed, r.res.Failed, r.res.Unchecked, r.res.Errored}
	} else {
		return run{}, fmt.Errorf("%s: exit %d, no summary line and no results file\n%s%s", path, r.exit, stdout.Bytes(), stderr.Bytes())
	}
	return r, nil
}

func median[T int64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func (b *binary) medians() (wall, cpu time.Duration, rss int64) {
	var ws, cs []time.Duration
	var rs []int64
	for _, r := range b.runs {
		ws, cs, rs = append(ws, r.wall), append(cs, r.cpu), append(rs, r.rss)
	}
	return median(ws), median(cs), median(rs)
}

// fixtures is the number of distinct fixture files among the results.
func fixtures(res *results) int {
	seen := map[string]bool{}
	for _, c := range res.Cases {
		seen[c.File] = true
	}
	return len(seen)
}

// consistent warns when the timed runs of one binary disagree with its
// reference run.
func consistent(b *binary) {
	for i, r := range b.runs {
		if r.exit != b.ref.exit || r.counts != b.ref.counts {
			fmt.Printf("warning: %s is not deterministic: reference run exit %d, %s; timed run %d exit %d, %s\n",
				b.label, b.ref.exit, b.ref.counts, i+1, r.exit, r.counts)
		}
	}
}

// compare prints a warning when base and new did not check the same thing,
// with what differs.
func compare(base, new *binary, tree string) bool {
	a, b := base.ref, new.ref
	if a.exit == b.exit && a.counts == b.counts {
		return true
	}
	fmt.Printf("warning: the binaries disagree, so their times are not of the same work:\n")
	fmt.Printf("  %s: exit %d, %s\n  %s: exit %d, %s\n", base.label, a.exit, a.counts, new.label, b.exit, b.counts)
	if a.res == nil || b.res == nil {
		fmt.Printf("  (no results file from %s: compare their console output)\n", map[bool]string{true: base.label, false: new.label}[a.res == nil])
		return false
	}
	// Rows: tool.suite → status → count.
	rows := func(res *results) map[string]map[string]int {
		m := map[string]map[string]int{}
		for _, c := range res.Cases {
			k := c.Tool + "." + c.Suite
			if m[k] == nil {
				m[k] = map[string]int{}
			}
			m[k][c.Status]++
		}
		return m
	}
	ra, rb := rows(a.res), rows(b.res)
	var keys []string
	for k := range ra {
		keys = append(keys, k)
	}
	for k := range rb {
		if _, ok := ra[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	format := func(m map[string]int) string {
		if m == nil {
			return "absent"
		}
		var parts []string
		for _, s := range []string{"passed", "failed", "unchecked", "errored"} {
			if m[s] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", m[s], s))
			}
		}
		return strings.Join(parts, ", ")
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "  tool.suite\t%s\t%s\n", base.label, new.label)
	for _, k := range keys {
		if fa, fb := format(ra[k]), format(rb[k]); fa != fb {
			fmt.Fprintf(w, "  %s\t%s\t%s\n", k, fa, fb)
		}
	}
	w.Flush()
	// A few testcases whose outcome differs, by suite and file.
	type key struct{ suite, file string }
	fixturesDir := filepath.Join(tree, "fixtures") + string(filepath.Separator)
	index := func(res *results) map[key]testcase {
		m := map[key]testcase{}
		for _, c := range res.Cases {
			m[key{c.Suite, strings.TrimPrefix(c.File, fixturesDir)}] = c
		}
		return m
	}
	ia, ib := index(a.res), index(b.res)
	var diffs []string
	describe := func(c testcase, ok bool) string {
		if !ok {
			return "no testcase"
		}
		return fmt.Sprintf("%s (expected %q, actual %q)", c.Status, c.Expected, c.Actual)
	}
	for k, cb := range ib {
		ca, ok := ia[k]
		if !ok || ca.Status != cb.Status || ca.Actual != cb.Actual {
			diffs = append(diffs, fmt.Sprintf("  %s [%s]: %s: %s; %s: %s", k.file, k.suite, base.label, describe(ca, ok), new.label, describe(cb, true)))
		}
	}
	for k, ca := range ia {
		if _, ok := ib[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("  %s [%s]: %s: %s; %s: no testcase", k.file, k.suite, base.label, describe(ca, true), new.label))
		}
	}
	slices.Sort(diffs)
	fmt.Printf("  %d testcases differ", len(diffs))
	if len(diffs) > 10 {
		fmt.Printf(", the first 10")
	}
	fmt.Println(":")
	for _, d := range diffs[:min(10, len(diffs))] {
		fmt.Println(d)
	}
	return false
}

func main() {
	basePath := flag.String("base", "", "the baseline airlock binary")
	newPath := flag.String("new", "", "the airlock binary under test")
	tree := flag.String("tree", "", "the tree to run on, holding schemas/ and fixtures/ (scripts/gentree)")
	runs := flag.Int("runs", 5, "timed runs of each binary")
	warmup := flag.Int("warmup", 1, "untimed runs of each binary first, at least 1 (the first writes the --json results compared)")
	withJSON := flag.Bool("json", false, "write --json results in the timed runs too")
	target := flag.Float64("target", 3.5, "the new/base throughput ratio to reach")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: runcompare -base BIN -new BIN -tree DIR [-runs N] [-warmup N] [-json] [-target X]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *basePath == "" || *newPath == "" || *tree == "" || *runs < 1 || *warmup < 1 || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	fail := func(err error) {
		fmt.Fprintf(os.Stderr, "runcompare: %v\n", err)
		os.Exit(1)
	}
	treeAbs, err := filepath.Abs(*tree)
	if err != nil {
		fail(err)
	}
	tmp, err := os.MkdirTemp("", "runcompare")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(tmp)
	base := &binary{label: "base", path: *basePath, shown: *basePath}
	next := &binary{label: "new", path: *newPath, shown: *newPath}
	for _, b := range []*binary{base, next} {
		if b.path, err = filepath.Abs(b.path); err != nil {
			fail(err)
		}
	}
	// Warm-up, then the timed runs in turns.
	for i := range *warmup + *runs {
		order := []*binary{base, next}
		if i%2 == 1 {
			order = []*binary{next, base}
		}
		for _, b := range order {
			r, err := runOnce(b.path, treeAbs, tmp, i == 0 || *withJSON)
			if err != nil {
				os.RemoveAll(tmp)
				fail(err)
			}
			switch {
			case i == 0:
				b.ref = r
			case i >= *warmup:
				r.res = nil // only the reference's results are kept
				b.runs = append(b.runs, r)
			}
		}
	}

	consistent(base)
	consistent(next)
	same := compare(base, next, treeAbs)

	res := next.ref.res
	if res == nil {
		res = base.ref.res
	}
	n := 0
	if res != nil {
		n = fixtures(res)
	}
	reports := "no report"
	if *withJSON {
		reports = "--json results"
	}
	fmt.Printf("airlock run on %s (%d fixtures; %s), median of %d run(s) each, in turns after %d warm-up run(s):\n", *tree, n, reports, *runs, *warmup)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "\twall\tCPU (user+sys)\tpeak RSS\tfixtures/s (wall)\tfixtures/s (CPU)\texit\ttestcases")
	rate := func(d time.Duration) string {
		if n == 0 || d <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f", float64(n)/d.Seconds())
	}
	for _, b := range []*binary{base, next} {
		wall, cpu, rss := b.medians()
		mem := "-"
		if rss > 0 {
			mem = fmt.Sprintf("%.1f MiB", float64(rss)/(1<<20))
		}
		fmt.Fprintf(w, "%s (%s)\t%.3f s\t%.3f s\t%s\t%s\t%s\t%d\t%d\n", b.label, b.shown, wall.Seconds(), cpu.Seconds(), mem, rate(wall), rate(cpu), b.ref.exit, b.ref.counts.total)
	}
	w.Flush()
	bw, bc, _ := base.medians()
	nw, nc, _ := next.medians()
	verdict := func(x float64) string {
		if x >= *target {
			return "holds"
		}
		return "MISSED"
	}
	cpuRatio, wallRatio := bc.Seconds()/nc.Seconds(), bw.Seconds()/nw.Seconds()
	fmt.Printf("target: new/base throughput ≥ %.1f×: by CPU time %.2f× %s; by wall time %.2f× %s\n",
		*target, cpuRatio, verdict(cpuRatio), wallRatio, verdict(wallRatio))
	if !same {
		fmt.Println("(the binaries did not do the same work: see the warning above)")
	}
}
