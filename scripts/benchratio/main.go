// Command benchratio reads `go test -bench -benchmem` output (and lines in
// the same format from scripts/ajvbench and gate's TestPeakRSS) on standard
// input and prints, for each benchmark group, its two sides and whether
// the targets hold. A group is a benchmark name without its last element,
// and the last element names the side:
//
//   - .../engine and .../ajv (BenchmarkParseValidate): the gate's strict
//     parse and compiled validator against ajv's JSON.parse and validate on
//     the same bytes; target: throughput engine/ajv ≥ 1.0. Without the ajv
//     lines (no Node.js) the group is reported as not measured.
//   - .../gate and .../baseline (BenchmarkCheck): the whole gate against
//     encoding/json and the same schema; targets: throughput gate/baseline
//     ≥ 5.0, gate allocs/op ≤ body bytes/100 + 50, and gate B/op ≤
//     baseline B/op.
//   - .../refused and .../admitted (BenchmarkWorstCase): a refused
//     worst-case body against an admitted plain one of the same size;
//     target: CPU time refused/admitted ≤ 1.5 (cpu-ns/op when both report
//     it, else ns/op); B/op printed.
//   - BenchmarkPeakRSS/<size>/<side> lines (peak-B, body-B): peak resident
//     memory of one check in a process of its own; target: ≤ 32 MiB + 8 ×
//     body bytes.
//
// The body's size comes from the body-B metric the benchmarks report, or
// else from MB/s × ns/op. When a benchmark appears several times (-count
// N), each metric is the median of its runs. Throughput ratios are
// computed from ns/op (equal to the MB/s ratio when both sides process the
// same bytes) and are not rounded.
//
// Usage:
//
//	go test -run '^$' -bench . -benchmem ./gate | go run ./scripts/benchratio [-strict]
//
// Exit status: 0 when the table was printed; 1 when the input has no
// benchmark lines, a group lacks one of its sides (except ajv) or a
// metric, or, with -strict, a target is missed; 2 on a usage error.
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

// The targets.
const (
	engineOverAjv     = 1.0 // throughput engine ÷ ajv, at least
	gateOverBaseline  = 5.0 // throughput gate ÷ baseline, at least
	allocsPerByte     = 1.0 / 100
	allocsBase        = 50.0
	refusedOverAdmit  = 1.5 // CPU time refused ÷ admitted, at most
	peakBase          = 32 << 20
	peakPerBodyByte   = 8.0
	peakRSSBenchmark  = "BenchmarkPeakRSS"
	notMeasuredAjvMsg = "no .../ajv lines: the ajv side did not run (make bench-deps installs it; it needs node and npm)"
)

// result is one benchmark's metrics, by unit ("ns/op", "MB/s", "B/op",
// "allocs/op", "body-B", ...), one value per run.
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

// body returns the body's size in bytes: the body-B metric, or MB/s ×
// ns/op ÷ 1000.
func (r result) body() (float64, bool) {
	if v, ok := r.median("body-B"); ok {
		return v, true
	}
	mbs, ok1 := r.median("MB/s")
	ns, ok2 := r.median("ns/op")
	if !ok1 || !ok2 {
		return 0, false
	}
	return mbs * ns / 1000, true
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

// kind is one sort of comparison: its two sides, by the last element of
// a benchmark name, and how it is reported.
type kind struct {
	a, b string
	// optionalB: a group without its b side is not measured, not an error.
	optionalB bool
	report    func(t *tally, stdout io.Writer, p *pair) error
}

var kinds = []kind{
	{a: "engine", b: "ajv", optionalB: true, report: reportEngine},
	{a: "gate", b: "baseline", report: reportGate},
	{a: "refused", b: "admitted", report: reportWorst},
}

// pair is one group's two sides.
type pair struct {
	group string
	kind  *kind
	a, b  result
}

// tally counts the targets.
type tally struct{ held, missed, unmeasured int }

// verdict records one target and returns how it is printed.
func (t *tally) verdict(ok bool) string {
	if ok {
		t.held++
		return "holds"
	}
	t.missed++
	return "MISSED"
}

// run reads benchmark output from in, prints each group's table and
// returns the exit status (1 on bad input or, with strict, a missed
// target).
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
	peaks := peakGroups(results, order)
	if len(pairs) == 0 && len(peaks) == 0 {
		fmt.Fprintln(stderr, "benchratio: no benchmark named .../gate, .../baseline, .../engine, .../ajv, .../refused or .../admitted, and no BenchmarkPeakRSS line, in the input")
		return 1
	}

	status := 0
	t := &tally{}
	for _, p := range pairs {
		if p.a == nil || (p.b == nil && !p.kind.optionalB) {
			fmt.Fprintf(stderr, "benchratio: %s lacks its %s or %s benchmark\n", p.group, p.kind.a, p.kind.b)
			status = 1
			continue
		}
		if err := p.kind.report(t, stdout, p); err != nil {
			fmt.Fprintf(stderr, "benchratio: %s: %v\n", p.group, err)
			status = 1
		}
	}
	for _, g := range peaks {
		if err := reportPeak(t, stdout, g, results); err != nil {
			fmt.Fprintf(stderr, "benchratio: %s: %v\n", g.group, err)
			status = 1
		}
	}
	if status != 0 {
		return status
	}
	summary := fmt.Sprintf("targets: %d held, %d missed", t.held, t.missed)
	if t.unmeasured > 0 {
		summary += fmt.Sprintf(", %d not measured", t.unmeasured)
	}
	fmt.Fprintln(stdout, summary)
	if strict && t.missed > 0 {
		return 1
	}
	return 0
}

// pairUp groups the benchmarks whose last name element is a side of a kind
// by their group name, in input order.
func pairUp(results map[string]result, order []string) []*pair {
	var pairs []*pair
	byGroup := map[string]*pair{}
	for _, name := range order {
		i := strings.LastIndexByte(name, '/')
		if i < 0 || strings.HasPrefix(name, peakRSSBenchmark+"/") {
			continue
		}
		group, side := name[:i], name[i+1:]
		for k := range kinds {
			kd := &kinds[k]
			if side != kd.a && side != kd.b {
				continue
			}
			key := group + "\x00" + kd.a
			p := byGroup[key]
			if p == nil {
				p = &pair{group: group, kind: kd}
				byGroup[key] = p
				pairs = append(pairs, p)
			}
			if side == kd.a {
				p.a = results[name]
			} else {
				p.b = results[name]
			}
		}
	}
	return pairs
}

// need returns the medians of unit on the given results, or an error
// naming the first one missing.
func need(unit string, rs ...result) ([]float64, error) {
	out := make([]float64, len(rs))
	for i, r := range rs {
		v, ok := r.median(unit)
		if !ok || v < 0 {
			return nil, fmt.Errorf("no %s (run with -benchmem?)", unit)
		}
		out[i] = v
	}
	return out, nil
}

func reportEngine(t *tally, stdout io.Writer, p *pair) error {
	ens, err := need("ns/op", p.a)
	if err != nil || ens[0] <= 0 {
		return fmt.Errorf("the engine side has no ns/op")
	}
	fmt.Fprintf(stdout, "%s: the gate's parse + compiled validator against ajv's JSON.parse + validate (median of %d run(s))\n", p.group, len(p.a["ns/op"]))
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	if p.b == nil {
		fmt.Fprintf(tw, "%-9s\tengine\t\n", "")
		fmt.Fprintf(tw, "%-9s\t%s\t\n", "MB/s", metric(p.a, "MB/s", "%.2f"))
		fmt.Fprintf(tw, "%-9s\t%.0f\t\n", "ns/op", ens[0])
		fmt.Fprintf(tw, "%-9s\t%s\t\n", "allocs/op", metric(p.a, "allocs/op", "%.0f"))
		tw.Flush()
		fmt.Fprintf(stdout, "engine/ajv ≥ %.3f: not measured (%s)\n\n", engineOverAjv, notMeasuredAjvMsg)
		t.unmeasured++
		return nil
	}
	ans, err := need("ns/op", p.b)
	if err != nil {
		return fmt.Errorf("the ajv side has no ns/op")
	}
	speed := ans[0] / ens[0]
	fmt.Fprintf(tw, "%-9s\tengine\tajv\tengine/ajv\ttarget\t\n", "")
	fmt.Fprintf(tw, "%-9s\t%s\t%s\t%.3f\t≥ %.3f %s\t\n", "MB/s", metric(p.a, "MB/s", "%.2f"), metric(p.b, "MB/s", "%.2f"), speed, engineOverAjv, t.verdict(speed >= engineOverAjv))
	fmt.Fprintf(tw, "%-9s\t%.0f\t%.0f\t\t\t\n", "ns/op", ens[0], ans[0])
	fmt.Fprintf(tw, "%-9s\t%s\t-\t\t\t\n", "allocs/op", metric(p.a, "allocs/op", "%.0f"))
	fmt.Fprintf(tw, "%-9s\t%s\t-\t\t\t\n", "B/op", metric(p.a, "B/op", "%.0f"))
	tw.Flush()
	fmt.Fprintln(stdout)
	return nil
}

func reportGate(t *tally, stdout io.Writer, p *pair) error {
	ns, err := need("ns/op", p.a, p.b)
	if err != nil {
		return err
	}
	bs, err := need("B/op", p.a, p.b)
	if err != nil {
		return err
	}
	allocs, err := need("allocs/op", p.a)
	if err != nil {
		return err
	}
	if ns[0] <= 0 || bs[1] <= 0 {
		return fmt.Errorf("ns/op or baseline B/op is zero")
	}
	body, ok := p.a.body()
	if !ok {
		return fmt.Errorf("no body size (body-B, or MB/s and ns/op)")
	}
	speed := ns[1] / ns[0]
	allocLimit := body*allocsPerByte + allocsBase
	fmt.Fprintf(stdout, "%s: the whole gate against encoding/json + the same schema (median of %d run(s), body %.0f bytes)\n", p.group, len(p.a["ns/op"]), body)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-9s\tgate\tbaseline\tgate/baseline\ttarget\t\n", "")
	fmt.Fprintf(tw, "%-9s\t%s\t%s\t%.3f\t≥ %.3f %s\t\n", "MB/s", metric(p.a, "MB/s", "%.2f"), metric(p.b, "MB/s", "%.2f"), speed, gateOverBaseline, t.verdict(speed >= gateOverBaseline))
	fmt.Fprintf(tw, "%-9s\t%.0f\t%.0f\t\t\t\n", "ns/op", ns[0], ns[1])
	fmt.Fprintf(tw, "%-9s\t%.0f\t%s\t%s\tgate ≤ %.0f (body/100 + 50) %s\t\n", "allocs/op", allocs[0], metric(p.b, "allocs/op", "%.0f"), ratio(p.a, p.b, "allocs/op"), allocLimit, t.verdict(allocs[0] <= allocLimit))
	fmt.Fprintf(tw, "%-9s\t%.0f\t%.0f\t%.3f\t≤ 1.000 %s\t\n", "B/op", bs[0], bs[1], bs[0]/bs[1], t.verdict(bs[0] <= bs[1]))
	tw.Flush()
	fmt.Fprintln(stdout)
	return nil
}

func reportWorst(t *tally, stdout io.Writer, p *pair) error {
	unit := "cpu-ns/op"
	cpu, err := need(unit, p.a, p.b)
	if err != nil {
		unit = "ns/op"
		if cpu, err = need(unit, p.a, p.b); err != nil {
			return err
		}
	}
	if cpu[1] <= 0 {
		return fmt.Errorf("the admitted side's %s is zero", unit)
	}
	r := cpu[0] / cpu[1]
	fmt.Fprintf(stdout, "%s: a refused worst case against an admitted body of the same size (median of %d run(s))\n", p.group, len(p.a["ns/op"]))
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-9s\trefused\tadmitted\trefused/admitted\ttarget\t\n", "")
	fmt.Fprintf(tw, "%-9s\t%.0f\t%.0f\t%.3f\t≤ %.3f %s\t\n", unit, cpu[0], cpu[1], r, refusedOverAdmit, t.verdict(r <= refusedOverAdmit))
	if unit != "ns/op" {
		fmt.Fprintf(tw, "%-9s\t%s\t%s\t%s\t\t\n", "ns/op", metric(p.a, "ns/op", "%.0f"), metric(p.b, "ns/op", "%.0f"), ratio(p.a, p.b, "ns/op"))
	}
	fmt.Fprintf(tw, "%-9s\t%s\t%s\t\t\t\n", "MB/s", metric(p.a, "MB/s", "%.2f"), metric(p.b, "MB/s", "%.2f"))
	fmt.Fprintf(tw, "%-9s\t%s\t%s\t%s\t\t\n", "allocs/op", metric(p.a, "allocs/op", "%.0f"), metric(p.b, "allocs/op", "%.0f"), ratio(p.a, p.b, "allocs/op"))
	fmt.Fprintf(tw, "%-9s\t%s\t%s\t%s\t\t\n", "B/op", metric(p.a, "B/op", "%.0f"), metric(p.b, "B/op", "%.0f"), ratio(p.a, p.b, "B/op"))
	tw.Flush()
	fmt.Fprintln(stdout)
	return nil
}

// peakGroup is the BenchmarkPeakRSS lines of one group, in input order.
type peakGroup struct {
	group string
	names []string
}

func peakGroups(results map[string]result, order []string) []*peakGroup {
	var out []*peakGroup
	by := map[string]*peakGroup{}
	for _, name := range order {
		if !strings.HasPrefix(name, peakRSSBenchmark+"/") {
			continue
		}
		group := name
		if i := strings.LastIndexByte(name, '/'); i > len(peakRSSBenchmark) {
			group = name[:i]
		}
		g := by[group]
		if g == nil {
			g = &peakGroup{group: group}
			by[group] = g
			out = append(out, g)
		}
		g.names = append(g.names, name)
	}
	return out
}

func reportPeak(t *tally, stdout io.Writer, g *peakGroup, results map[string]result) error {
	fmt.Fprintf(stdout, "%s: peak resident memory (VmHWM) of one check in a process of its own\n", g.group)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-9s\tpeak MiB\tbody MiB\tpeak/body\ttarget\t\n", "")
	for _, name := range g.names {
		r := results[name]
		peak, ok1 := r.median("peak-B")
		body, ok2 := r.median("body-B")
		if !ok1 || !ok2 || body <= 0 {
			return fmt.Errorf("%s: need peak-B and body-B", name)
		}
		limit := peakBase + peakPerBodyByte*body
		fmt.Fprintf(tw, "%-9s\t%.1f\t%.1f\t%.1f\t≤ %.1f (32 + 8 × body) %s\t\n", name[strings.LastIndexByte(name, '/')+1:], peak/(1<<20), body/(1<<20), peak/body, limit/(1<<20), t.verdict(peak <= limit))
	}
	tw.Flush()
	fmt.Fprintln(stdout)
	return nil
}

func metric(r result, unit, format string) string {
	v, ok := r.median(unit)
	if !ok {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

func ratio(a, b result, unit string) string {
	x, ok1 := a.median(unit)
	y, ok2 := b.median(unit)
	if !ok1 || !ok2 || y == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", x/y)
}
