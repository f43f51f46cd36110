package mutate_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/internal/shard"
	"github.com/airlockdev/airlock/internal/testtree"
	"github.com/airlockdev/airlock/mutate"
	"github.com/airlockdev/airlock/reports"
)

// shardFiles is the memo project with two upstream versions: v1's
// accepted and historical fixtures are admitted, v2's are not (it is
// unscored, its fixtures spread over the shards), a baseline whose entries
// silence a survivor, name a mutant never generated, a fixture that does
// not exist and one not admitted, and a broken contract
// beside it.
func shardFiles() map[string]string {
	files := memoFiles(map[string]string{
		"schemas/memo/contract.yaml": strings.Replace(memoManifest, "upstream_versions:\n", "upstream_versions:\n  v2:\n    schema: upstream.schema.json\n    projection: {id: /id, state: /state, label: /label, note: /note}\n", 1),
		"schemas/memo/" + mutate.BaselineFile: `survivors:
  - fixture: memo/v2/accepted/bad1.json
    mutant: values.empty_string@/label
    reason: not admitted
  - fixture: memo/v1/accepted/memo.json
    mutant: values.empty_string@/label
    reason: labels are free text
  - fixture: memo/v1/accepted/zz.json
    mutant: values.empty_string@/nothing
    reason: a typo
  - fixture: memo/v1/accepted/nope.json
    mutant: values.empty_string@/label
    reason: gone
`,
		"fixtures/memo/v1/accepted/zz.json":       strings.Replace(memoBody, `"M-1"`, `"M-22222"`, 1),
		"fixtures/memo/v1/accepted/b.json":        strings.Replace(memoBody, `"L"`, `"a longer label"`, 1),
		"fixtures/memo/v1/historical/old.json":    memoBody,
		"fixtures/memo/v1/near-miss/nm.json":      `{}`,
		"fixtures/memo/v1/near-miss/nm.meta.yaml": "expect: {reason: schema.required}\n",
		"schemas/bad/contract.yaml":               "tool: bad\nversion: \"1\"\nagent_schema: agent.schema.json\nupstream_versions:\n  v1:\n    schema: upstream.schema.json\n    projection: {id: /id}\n",
		"schemas/bad/agent.schema.json":           `{"type": "object"}`,
		"schemas/bad/upstream.schema.json":        `{"properties": {"id": {"$ref": "missing.schema.json"}}}`,
	})
	for i := 1; i <= 4; i++ {
		files[fmt.Sprintf("fixtures/memo/v2/accepted/bad%d.json", i)] = strings.Repeat(" ", i*7) + `{"id":"M-1"}`
	}
	return files
}

// durations matches what differs between two runs: durations and JUnit times.
var durations = regexp.MustCompile(`"duration_ns": \d+|time="[0-9.]+"`)

func writeBoth(run *reports.Run) (string, string) {
	var j, x bytes.Buffer
	Expect(reports.WriteJSON(&j, run)).To(Succeed())
	Expect(reports.WriteJUnit(&x, run)).To(Succeed())
	return j.String(), x.String()
}

var _ = Describe("mutate --shard K/N", func() {
	It("gives, merged, the unsharded run's mutation testcases: survivors, unscored versions and stale entries once each", func() {
		dir := testtree.Tree(shardFiles())
		opts := mutate.Options{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures"), Strict: true}
		full, err := mutate.Mutate(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(full.Unscored).To(HaveLen(1))
		Expect(full.Unscored[0].Skipped).To(HaveLen(4))
		Expect(full.Stale).To(HaveLen(3))
		Expect(full.Broken).To(HaveLen(1))
		Expect(full.Shard.IsZero()).To(BeTrue())
		wantJSON, wantJUnit := writeBoth(&reports.Run{Cases: full.Cases(), Command: reports.CommandMutate})

		for n := 1; n <= 4; n++ {
			var names []string
			var runs []*reports.Run
			var junits []*reports.JUnitReport
			for k := 1; k <= n; k++ {
				opts.Filter.Shard = shard.Shard{Index: k, Count: n}
				rep, err := mutate.Mutate(context.Background(), opts)
				Expect(err).NotTo(HaveOccurred())
				if k == 1 {
					Expect(rep.Unscored).To(Equal(full.Unscored), "shard 1 judges unscored versions over every shard")
					Expect(rep.Broken).To(Equal(full.Broken))
				} else {
					Expect(rep.Unscored).To(BeEmpty())
					Expect(rep.Broken).To(BeEmpty())
				}
				Expect([]int{rep.Shard.Index, rep.Shard.Count}).To(Equal([]int{k, n}))
				Expect(shard.ValidSet(rep.Shard.Set)).To(BeTrue(), "shard %d/%d records its fixture set", k, n)
				j, x := writeBoth(&reports.Run{Cases: rep.Cases(), Shard: rep.Shard, Command: reports.CommandMutate})
				r, err := reports.ReadResults([]byte(j))
				Expect(err).NotTo(HaveOccurred())
				u, err := reports.ReadJUnit([]byte(x))
				Expect(err).NotTo(HaveOccurred())
				names, runs, junits = append(names, fmt.Sprint("s", k)), append(runs, r), append(junits, u)
			}
			merged, err := reports.MergeRuns(names, runs)
			Expect(err).NotTo(HaveOccurred())
			gotJSON, _ := writeBoth(merged)
			Expect(durations.ReplaceAllString(gotJSON, "")).To(Equal(durations.ReplaceAllString(wantJSON, "")), "N=%d", n)
			var x bytes.Buffer
			Expect(reports.MergeJUnit(&x, names, junits)).To(Succeed())
			Expect(durations.ReplaceAllString(x.String(), "")).To(Equal(durations.ReplaceAllString(wantJUnit, "")), "N=%d", n)
		}
	})

	It("mutates an empty shard to an empty report, not an error", func() {
		dir := testtree.Tree(memoFiles(nil)) // one fixture
		opts := mutate.Options{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures")}
		opts.Filter.Shard = shard.Shard{Index: 2, Count: 2}
		rep, err := mutate.Mutate(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Results).To(BeEmpty())
		Expect(rep.Unscored).To(BeEmpty(), "shard 1 reports unscored versions")
		Expect(rep.Cases()).To(BeEmpty())
	})

	It("shares out only the fixtures it mutates: near-misses, however many or large, take no shard's place", func() {
		files := memoFiles(map[string]string{
			"fixtures/memo/v1/accepted/b.json": strings.Replace(memoBody, `"L"`, `"a longer label"`, 1),
		})
		for i := range 7 { // an odd number, each heavier than both accepted fixtures together
			files[fmt.Sprintf("fixtures/memo/v1/near-miss/nm%d.json", i)] = `{"pad": "` + strings.Repeat("x", 4096) + `"}`
			files[fmt.Sprintf("fixtures/memo/v1/near-miss/nm%d.meta.yaml", i)] = "expect: {reason: schema.required}\n"
		}
		dir := testtree.Tree(files)
		for k := 1; k <= 2; k++ {
			opts := mutate.Options{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures")}
			opts.Filter.Shard = shard.Shard{Index: k, Count: 2}
			rep, err := mutate.Mutate(context.Background(), opts)
			Expect(err).NotTo(HaveOccurred())
			mutated := map[string]bool{}
			for _, r := range rep.Results {
				mutated[r.Fixture.Name] = true
			}
			Expect(mutated).To(HaveLen(1), "shard %d/2 mutates one of the two accepted fixtures", k)
		}
	})
})
