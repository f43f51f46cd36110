package drift_test

import (
	"context"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/drift"
	"github.com/airlockdev/airlock/internal/shard"
	"github.com/airlockdev/airlock/internal/testtree"
)

var _ = Describe("drift --shard K/N", func() {
	It("observes each fixture in one shard and reports version changes in shard 1 only", func() {
		opts := drift.Options{SchemasDir: "../schemas", FixturesDir: "../fixtures"}
		full, err := drift.Run(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(full.Summary.BreakingVersionChanges).To(BeNumerically(">", 0), "the bundled contracts have version changes")
		for n := 1; n <= 4; n++ {
			fixtures := 0
			set := ""
			for k := 1; k <= n; k++ {
				opts.Shard = shard.Shard{Index: k, Count: n}
				d, err := drift.Run(context.Background(), opts)
				Expect(err).NotTo(HaveOccurred())
				Expect([]int{d.Shard.Index, d.Shard.Count}).To(Equal([]int{k, n}))
				Expect(shard.ValidSet(d.Shard.Set)).To(BeTrue(), "shard %s records its fixture set", opts.Shard)
				if set == "" {
					set = d.Shard.Set
				}
				Expect(d.Shard.Set).To(Equal(set), "every shard of one run records one fixture set")
				fixtures += d.Summary.Fixtures
				changes := 0
				for _, t := range d.Tools {
					changes += len(t.VersionChanges)
				}
				if k == 1 {
					Expect(d.Summary.BreakingVersionChanges).To(Equal(full.Summary.BreakingVersionChanges))
				} else {
					Expect(changes).To(BeZero(), "shard %s", opts.Shard)
					Expect(d.Summary.BreakingVersionChanges).To(BeZero())
				}
			}
			Expect(fixtures).To(Equal(full.Summary.Fixtures), "N=%d", n)
		}
	})

	It("lists a broken contract in shard 1 only, and runs an empty shard to an empty report", func() {
		files := testtree.Project()
		files["fixtures/note_status/v1/historical/old.json"] = testtree.GoodBody
		files["schemas/bad/contract.yaml"] = "tool: [\n"
		dir := testtree.Tree(files)
		opts := drift.Options{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures")}
		fixtures := 0
		for k := 1; k <= 3; k++ {
			opts.Shard = shard.Shard{Index: k, Count: 3}
			d, err := drift.Run(context.Background(), opts)
			Expect(err).NotTo(HaveOccurred())
			fixtures += d.Summary.Fixtures
			if k == 1 {
				Expect(d.Broken).To(HaveLen(1))
			} else {
				Expect(d.Broken).To(BeEmpty())
			}
		}
		Expect(fixtures).To(Equal(1))
	})
})
