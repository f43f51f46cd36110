// Command benchratio reads `go test -bench -benchmem` output on standard
// input and prints, for each benchmark group, the gate against its baseline:
// throughput (MB/s), allocations and bytes per operation, the throughput
// ratio gate/baseline and the bytes-per-op ratio gate/baseline, and whether
// the targets hold:
//
//   - throughput ratio ≥ 1.0 (the gate is at least as fast as decoding with
//     encoding/json and validating the same schema), and
//   - gate B/op ≤ baseline B/op.
//
// A group is a benchmark name without its last element: the pair
// "BenchmarkCheck/2KB/gate" and "BenchmarkCheck/2KB/baseline" is the group
// "BenchmarkCheck/2KB". When a benchmark appears several times (-count N),
// each metric is the median of its runs. The throughput ratio is computed
// from ns/op (baseline ns/op ÷ gate ns/op), which equals the MB/s ratio when
// both sides process the same bytes and is not rounded.
//
// Usage:
//
//	go test -run '^$' -bench . -benchmem ./gate | go run ./scripts/benchratio [-strict]
//
// Exit status: 0 when the table was printed; 1 when the input has no
// benchmark lines, a group lacks its gate or baseline, or, with -strict, a
// target is missed; 2 on a usage error.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

func main() {
	strict := flag.Bool("strict", false, "exit 1 when a target is missed")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go test -bench . -benchmem ./gate | benchratio [-strict]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	os.Exit(run(os.Stdin, os.Stdout, os.Stderr, *strict))
}

// The two sides of a comparison, by the last element of a benchmark name.
const (
	gateSide     = "gate"
	baselineSide = "baseline"
)

// result is one benchmark's metrics, by unit ("ns/op", "MB/s", "B/op",
// "allocs/op"), one value per run.
type result map[string][]float64

// median returns the median of unit's values and whether there are any.
func (r result) median(unit string) (float64, bool) {
	vs := slices.Clone(r[unit])
	if len(vs) == 0 {
		return 0, false
	}
	slices.Sort(vs)
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2], true
	}
	return (vs[n/2-1] + vs[n/2]) / 2, true
}

// benchLine matches a result line: name, optional -GOMAXPROCS suffix,
// iteration count, then "value unit" pairs.
var benchLine = regexp.MustCompile(`^(Benchmark\S*?)(?:-\d+)?\s+(\d+)\s+(.*)$`)

// parseBench reads benchmark results keyed by name (GOMAXPROCS suffix
// removed), in order of first appearance.
func parseBench(r io.Reader) (map[string]result, []string, error) {
	results := map[string]result{}
	var order []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		fields := strings.Fields(m[3])
		if len(fields) < 2 || len(fields)%2 != 0 {
			continue
		}
		res := results[m[1]]
		if res == nil {
			res = result{}
			results[m[1]] = res
			order = append(order, m[1])
		}
		for i := 0; i < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			res[fields[i+1]] = append(res[fields[i+1]], v)
		}
	}
	return results, order, sc.Err()
}

// pair is one group's gate and baseline results.
type pair struct {
	group          string
	gate, baseline result
}

// run reads benchmark output from in, prints each group's gate/baseline
// ratios and returns the exit status (1 on bad input or, with strict, a
// missed target).
func run(in io.Reader, stdout, stderr io.Writer, strict bool) int {
	results, order, err := parseBench(in)
	if err != nil {
		fmt.Fprintln(stderr, "benchratio: reading input:", err)
		return 1
	}
	if len(order) == 0 {
		fmt.Fprintln(stderr, "benchratio: no benchmark lines in the input (did the benchmarks run? is -bench set?)")
		return 1
	}
	pairs := pairUp(results, order)
	if len(pairs) == 0 {
		fmt.Fprintf(stderr, "benchratio: no benchmark named .../%s or .../%s in the input\n", gateSide, baselineSide)
		return 1
	}

	status, missed := 0, 0
	for _, p := range pairs {
		ok, hold := report(stdout, stderr, p)
		switch {
		case !ok:
			status = 1
		case !hold:
			missed++
		}
	}
	if status != 0 {
		return status
	}
	if missed > 0 {
		fmt.Fprintf(stdout, "targets missed in %d of %d groups\n", missed, len(pairs))
		if strict {
			return 1
		}
		return 0
	}
	fmt.Fprintf(stdout, "targets hold in all %d groups\n", len(pairs))
	return 0
}

// pairUp groups the .../gate and .../baseline benchmarks by their group
// name, in input order.
func pairUp(results map[string]result, order []string) []*pair {
	var pairs []*pair
	byGroup := map[string]*pair{}
	for _, name := range order {
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			continue
		}
		group, side := name[:i], name[i+1:]
		if side != gateSide && side != baselineSide {
			continue
		}
		p := byGroup[group]
		if p == nil {
			p = &pair{group: group}
			byGroup[group] = p
			pairs = append(pairs, p)
		}
		if side == gateSide {
			p.gate = results[name]
		} else {
			p.baseline = results[name]
		}
	}
	return pairs
}

// report prints one group's table; ok is false when a side or a metric is
// missing (reported on stderr), hold whether both targets hold.
func report(stdout, stderr io.Writer, p *pair) (ok, hold bool) {
	if p.gate == nil || p.baseline == nil {
		fmt.Fprintf(stderr, "benchratio: %s lacks its %s or %s benchmark\n", p.group, gateSide, baselineSide)
		return false, false
	}
	gNs, ok1 := p.gate.median("ns/op")
	bNs, ok2 := p.baseline.median("ns/op")
	gB, ok3 := p.gate.median("B/op")
	bB, ok4 := p.baseline.median("B/op")
	if !ok1 || !ok2 || !ok3 || !ok4 || gNs <= 0 || bB <= 0 {
		fmt.Fprintf(stderr, "benchratio: %s: need ns/op and B/op on both sides (run with -benchmem)\n", p.group)
		return false, false
	}
	speed := bNs / gNs // = MB/s gate ÷ MB/s baseline when both read the same bytes
	bytesRatio := gB / bB
	speedOK, bytesOK := speed >= 1.0, gB <= bB
	runs := len(p.gate["ns/op"])
	fmt.Fprintf(stdout, "%s (median of %d run(s))\n", p.group, runs)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-9s\tgate\tbaseline\tgate/baseline\ttarget\t\n", "")
	fmt.Fprintf(tw, "%-9s\t%s\t%s\t%.3f\t≥ 1.000 %s\t\n", "MB/s", metric(p.gate, "MB/s", "%.2f"), metric(p.baseline, "MB/s", "%.2f"), speed, verdict(speedOK))
	fmt.Fprintf(tw, "%-9s\t%.0f\t%.0f\t\t\t\n", "ns/op", gNs, bNs)
	fmt.Fprintf(tw, "%-9s\t%s\t%s\t%s\t\t\n", "allocs/op", metric(p.gate, "allocs/op", "%.0f"), metric(p.baseline, "allocs/op", "%.0f"), ratio(p.gate, p.baseline, "allocs/op"))
	fmt.Fprintf(tw, "%-9s\t%.0f\t%.0f\t%.3f\t≤ 1.000 %s\t\n", "B/op", gB, bB, bytesRatio, verdict(bytesOK))
	tw.Flush()
	fmt.Fprintln(stdout)
	return true, speedOK && bytesOK
}

func metric(r result, unit, format string) string {
	v, ok := r.median(unit)
	if !ok {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

func verdict(ok bool) string {
	if ok {
		return "holds"
	}
	return "MISSED"
}

func ratio(a, b result, unit string) string {
	x, ok1 := a.median(unit)
	y, ok2 := b.median(unit)
	if !ok1 || !ok2 || y == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", x/y)
}
