package runner_test

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/internal/shard"
	"github.com/airlockdev/airlock/internal/testtree"
	"github.com/airlockdev/airlock/internal/testtree/bigtree"
	"github.com/airlockdev/airlock/reports"
	"github.com/airlockdev/airlock/runner"
)

// times matches what differs between two runs of one tree: durations and
// JUnit times.
var times = regexp.MustCompile(`"duration_ns": \d+|time="[0-9.]+"`)

// reportsOf writes run as JSON results and JUnit XML, times blanked.
func reportsOf(run *reports.Run) (jsonText, junitText string) {
	var j, x bytes.Buffer
	Expect(reports.WriteJSON(&j, run)).To(Succeed())
	Expect(reports.WriteJUnit(&x, run)).To(Succeed())
	return times.ReplaceAllString(j.String(), "T"), times.ReplaceAllString(x.String(), "T")
}

// shardsMatch runs schemas and fixtures unsharded and as shards 1..n, and
// checks that the shards' testcases are the unsharded run's, each once,
// and that merging their written JSON results and JUnit reports gives the
// unsharded run's reports, times aside.
func shardsMatch(schemas, fixtures string, n int) {
	opts := runner.Options{SchemasDir: schemas, FixturesDir: fixtures}
	full, err := runner.Run(context.Background(), opts)
	Expect(err).NotTo(HaveOccurred())
	wantJSON, wantJUnit := reportsOf(&full.Run)

	type key struct{ tool, version, kind, suite, name string }
	want := map[key]int{}
	for _, c := range full.Run.Cases {
		want[key{c.Tool, c.UpstreamVersion, c.Kind, c.Suite, c.Name}]++
	}
	got := map[key]int{}
	var names []string
	var runs []*reports.Run
	var junits []*reports.JUnitReport
	fixturesSeen := 0
	set := ""
	for k := 1; k <= n; k++ {
		opts.Filter.Shard = shard.Shard{Index: k, Count: n}
		res, err := runner.Run(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Run.Command).To(Equal(reports.CommandRun))
		Expect([]int{res.Run.Shard.Index, res.Run.Shard.Count}).To(Equal([]int{k, n}))
		Expect(shard.ValidSet(res.Run.Shard.Set)).To(BeTrue(), "shard %d/%d records its fixture set", k, n)
		if set == "" {
			set = res.Run.Shard.Set
		}
		Expect(res.Run.Shard.Set).To(Equal(set), "every shard of one run records one fixture set")
		fixturesSeen += res.Fixtures
		for _, c := range res.Run.Cases {
			got[key{c.Tool, c.UpstreamVersion, c.Kind, c.Suite, c.Name}]++
		}
		var j, x bytes.Buffer
		Expect(reports.WriteJSON(&j, &res.Run)).To(Succeed())
		Expect(reports.WriteJUnit(&x, &res.Run)).To(Succeed())
		r, err := reports.ReadResults(j.Bytes())
		Expect(err).NotTo(HaveOccurred())
		u, err := reports.ReadJUnit(x.Bytes())
		Expect(err).NotTo(HaveOccurred())
		Expect(u.Shard).To(Equal(res.Run.Shard))
		Expect(u.Command).To(Equal(reports.CommandRun))
		// Shards in reverse order: merge orders them itself.
		names = append([]string{filepath.Join("shard", opts.Filter.Shard.String())}, names...)
		runs = append([]*reports.Run{r}, runs...)
		junits = append([]*reports.JUnitReport{u}, junits...)
	}
	Expect(fixturesSeen).To(Equal(full.Fixtures), "N=%d: the shards checked every fixture once", n)
	Expect(got).To(Equal(want), "N=%d: the shards' testcases are the unsharded run's, each once", n)

	merged, err := reports.MergeRuns(names, runs)
	Expect(err).NotTo(HaveOccurred())
	gotJSON, _ := reportsOf(merged)
	Expect(gotJSON).To(Equal(wantJSON), "N=%d: merged JSON results", n)
	var x bytes.Buffer
	Expect(reports.MergeJUnit(&x, names, junits)).To(Succeed())
	Expect(times.ReplaceAllString(x.String(), "T")).To(Equal(wantJUnit), "N=%d: merged JUnit", n)
}

var _ = Describe("run --shard K/N and merge", func() {
	It("gives the unsharded run's testcases and, merged, its reports on the bundled tree, N in 1..5", func() {
		for n := 1; n <= 5; n++ {
			shardsMatch("../schemas", "../fixtures", n)
		}
	})

	// N=5 only here (each N runs the tree twice); fixture's shard specs
	// check the partition of this tree for every N in 1..5.
	It("gives the unsharded run's testcases and, merged, its reports on a generated 10k tree, N=5", func() {
		dir := GinkgoT().TempDir()
		_, err := bigtree.Write(dir, "../schemas", "../fixtures", 10000)
		Expect(err).NotTo(HaveOccurred())
		for _, n := range []int{5} {
			shardsMatch(filepath.Join(dir, "schemas"), filepath.Join(dir, "fixtures"), n)
		}
	})

	It("runs an empty shard to a result without testcases, and reports broken contracts in shard 1 only", func() {
		dir := testtree.Tree(brokenBeside()) // 4 fixtures, 6 shards

		opts := runner.Options{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures")}
		full, err := runner.Run(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(full.Broken).To(HaveLen(1))
		var fixtures, empty int
		for k := 1; k <= 6; k++ {
			opts.Filter.Shard = shard.Shard{Index: k, Count: 6}
			res, err := runner.Run(context.Background(), opts)
			Expect(err).NotTo(HaveOccurred())
			fixtures += res.Fixtures
			errored := res.Run.Errored()
			if k == 1 {
				Expect(res.Broken).To(Equal(full.Broken))
				Expect(errored).To(Equal(1))
			} else {
				Expect(res.Broken).To(BeEmpty())
				Expect(errored).To(Equal(0))
			}
			if res.Fixtures == 0 && k > 1 {
				empty++
				Expect(res.Run.Cases).To(BeEmpty())
			}
		}
		Expect(fixtures).To(Equal(full.Fixtures))
		Expect(empty).To(Equal(2))
	})
})
