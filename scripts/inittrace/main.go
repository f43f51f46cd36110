// Command inittrace summarises the package initialisation of a Go program
// as GODEBUG=inittrace=1 reports it: the total init clock, bytes and
// allocations of all packages and of one module's (by default airlock's),
// the five packages with the most clock, and whether each total stays
// within the target (2 ms, issue 14): "held" or "MISSED".
//
// Given a command, it runs it -runs times (stdout discarded) with
// GODEBUG=inittrace=1 and reports medians, since the clock of one start
// varies with the machine's load (bytes and allocations do not). Without
// one, it reads one trace on standard input.
//
// Usage:
//
//	go run ./scripts/inittrace [-runs 5] [-target 2ms] [-module PATH] -- bin/airlock check --help
//	GODEBUG=inittrace=1 bin/airlock check --help 2>&1 >/dev/null | go run ./scripts/inittrace
//
// Exit status: 0 when the summary was printed (a missed target included);
// 1 when the command failed or printed no init lines; 2 on a usage error.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// line is "init PKG @T ms, C ms clock, B bytes, A allocs" (runtime/proc.go).
var line = regexp.MustCompile(`^init (\S+) @[0-9.]+ ms, ([0-9.]+) ms clock, ([0-9]+) bytes, ([0-9]+) allocs$`)

// pkgInit is one package's initialisation in one run.
type pkgInit struct {
	clock         float64 // ms
	bytes, allocs int
}

// trace is one run: each package with init work, by import path.
type trace map[string]pkgInit

func parse(r io.Reader) (trace, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	t := trace{}
	for _, l := range strings.Split(string(data), "\n") {
		m := line.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		clock, err1 := strconv.ParseFloat(m[2], 64)
		b, err2 := strconv.Atoi(m[3])
		a, err3 := strconv.Atoi(m[4])
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("unreadable line %q", l)
		}
		p := t[m[1]]
		t[m[1]] = pkgInit{p.clock + clock, p.bytes + b, p.allocs + a}
	}
	if len(t) == 0 {
		return nil, fmt.Errorf("no inittrace lines (is GODEBUG=inittrace=1 set?)")
	}
	return t, nil
}

// sum totals the packages of t that keep says to.
func sum(t trace, keep func(string) bool) (n int, total pkgInit) {
	for path, p := range t {
		if keep(path) {
			n++
			total.clock += p.clock
			total.bytes += p.bytes
			total.allocs += p.allocs
		}
	}
	return n, total
}

func median[T int | float64](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// medianOf is the median of f over the runs.
func medianOf(runs []trace, f func(trace) pkgInit) pkgInit {
	var c []float64
	var b, a []int
	for _, t := range runs {
		p := f(t)
		c, b, a = append(c, p.clock), append(b, p.bytes), append(a, p.allocs)
	}
	return pkgInit{median(c), median(b), median(a)}
}

func main() {
	runs := flag.Int("runs", 5, "how many times to run the command")
	target := flag.Duration("target", 2*time.Millisecond, "the init clock each total should stay within")
	module := flag.String("module", "github.com/airlockdev/airlock", "the module whose packages get a line of their own")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: inittrace [-runs N] [-target D] [-module PATH] [-- COMMAND ARG...] (no command: read a trace on stdin)")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *runs < 1 {
		flag.Usage()
		os.Exit(2)
	}
	var traces []trace
	what := "standard input"
	if args := flag.Args(); len(args) > 0 {
		what = strings.Join(args, " ")
		for range *runs {
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				fmt.Fprintf(os.Stderr, "inittrace: %s: %v\n%s", what, err, stderr.Bytes())
				os.Exit(1)
			}
			t, err := parse(&stderr)
			if err != nil {
				fmt.Fprintf(os.Stderr, "inittrace: %s: %v\n", what, err)
				os.Exit(1)
			}
			traces = append(traces, t)
		}
	} else {
		t, err := parse(os.Stdin)
		if err != nil {
			fmt.Fprintf(os.Stderr, "inittrace: %v\n", err)
			os.Exit(1)
		}
		traces = append(traces, t)
	}
	inModule := func(p string) bool { return p == *module || strings.HasPrefix(p, *module+"/") }
	all := func(string) bool { return true }
	count := func(keep func(string) bool) int { n, _ := sum(traces[0], keep); return n }
	total := func(keep func(string) bool) pkgInit {
		return medianOf(traces, func(t trace) pkgInit { _, s := sum(t, keep); return s })
	}
	mod, whole := total(inModule), total(all)

	// Each package's median, for the top five.
	var paths []string
	for _, t := range traces {
		for p := range t {
			if !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
	}
	per := map[string]pkgInit{}
	for _, p := range paths {
		per[p] = medianOf(traces, func(t trace) pkgInit { return t[p] })
	}
	slices.SortFunc(paths, func(a, b string) int {
		if c := -cmpFloat(per[a].clock, per[b].clock); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})

	fmt.Printf("package initialisation of %s (GODEBUG=inittrace=1, median of %d run(s)):\n", what, len(traces))
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "\tpackages\tinit clock\tbytes\tallocs")
	fmt.Fprintf(w, "%s/...\t%d\t%.3f ms\t%d\t%d\n", *module, count(inModule), mod.clock, mod.bytes, mod.allocs)
	fmt.Fprintf(w, "all\t%d\t%.3f ms\t%d\t%d\n", count(all), whole.clock, whole.bytes, whole.allocs)
	w.Flush()
	fmt.Println("top 5 by init clock:")
	w = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	for _, p := range paths[:min(5, len(paths))] {
		fmt.Fprintf(w, "  %s\t%.3f ms\t%d bytes\t%d allocs\n", p, per[p].clock, per[p].bytes, per[p].allocs)
	}
	w.Flush()
	limit := float64(*target) / float64(time.Millisecond)
	verdict := func(ms float64) string {
		if ms <= limit {
			return "held"
		}
		return "MISSED"
	}
	fmt.Printf("target: init ≤ %v: %s/... %s (%.3f ms); all packages %s (%.3f ms)\n",
		*target, *module, verdict(mod.clock), mod.clock, verdict(whole.clock), whole.clock)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
