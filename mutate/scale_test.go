package mutate_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/testtree"
	"github.com/airlockdev/airlock/mutate"
	"github.com/airlockdev/airlock/runner"
)

var _ = Describe("mutate at scale", func() {
	It("builds no more mutant bodies than the cap for a 200 KB fixture, and the results hold none", func() {
		dir := bigTree(GinkgoT(), 200<<10)
		const limit = 32
		opts := mutate.Options{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures"), MaxPerFixture: limit, Workers: 1}
		before := mutate.BuiltBodies()
		rep, err := mutate.Mutate(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())
		built := mutate.BuiltBodies() - before
		Expect(rep.Results).To(HaveLen(limit))
		Expect(built).To(BeNumerically(">", 0))
		Expect(built).To(BeNumerically("<=", limit))
		for _, r := range rep.Results {
			Expect(r.Mutant.Body).To(BeNil(), r.Mutant.ID)
			if r.Mutant.Family == mutate.FamilyBytes {
				// Excerpts around the change, not the 200 KB body.
				Expect(len(r.Mutant.Before.(string))).To(BeNumerically("<=", 512), r.Mutant.ID)
				Expect(len(r.Mutant.After.(string))).To(BeNumerically("<=", 512), r.Mutant.ID)
			}
		}
	})

	It("streams the oversize mutant (max_bytes+1) instead of building it, and writes it gzip-compressed", func() {
		dir := testtree.Tree(testtree.Project())
		opts := mutate.Options{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures"), MaxPerFixture: -1, Workers: 1}
		before := mutate.BuiltBodies()
		rep, err := mutate.Mutate(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())
		built := mutate.BuiltBodies() - before
		var large *mutate.MutantResult
		for i, r := range rep.Results {
			if r.Mutant.Kind == "too_large" {
				large = &rep.Results[i]
			}
		}
		Expect(large).NotTo(BeNil())
		Expect(large.Outcome).To(Equal(mutate.Killed), large.Problem)
		Expect(large.Actual).To(Equal(gate.ReasonTooLarge))
		Expect(built).To(Equal(int64(len(rep.Results)-1)), "every body built but the oversize one")
		Expect(large.Mutant.After).To(ContainSubstring("max_bytes+1"))

		out := filepath.Join(dir, "written")
		written, _, err := mutate.WriteMutants(context.Background(), opts, out, []mutate.MutantResult{*large})
		Expect(err).NotTo(HaveOccurred())
		Expect(written).To(HaveLen(1))
		Expect(filepath.Ext(written[0])).To(Equal(".gz"))
		st, err := os.Stat(written[0])
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Size()).To(BeNumerically("<", 64<<10), "1 MiB of padding, compressed")
		res, err := runner.Run(context.Background(), runner.Options{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: out})
		Expect(err).NotTo(HaveOccurred())
		passed, failed, _ := res.Run.Counts()
		Expect(failed).To(Equal(0), "%+v", res.Run.Cases)
		Expect(passed).To(BeNumerically(">", 0))
		Expect(testtree.ByName(res, filepath.Base(written[0]), runner.SuiteParse).Actual).To(Equal(gate.ReasonTooLarge))
	})

	It("refuses to write a mutant the fixture no longer gives", func() {
		dir := testtree.Tree(testtree.Project())
		opts := mutate.Options{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures")}
		rep, err := mutate.Mutate(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(filepath.Join(dir, "fixtures/note_status/v1/accepted/open.json"), []byte(`{"request_id":"req-00000001","note_id":"N-17","state":"open","extra":1}`), 0o644)).To(Succeed())
		out := filepath.Join(dir, "written")
		written, _, err := mutate.WriteMutants(context.Background(), opts, out, rep.Results)
		Expect(written).To(BeEmpty())
		var ce *gate.ConfigError
		Expect(errors.As(err, &ce)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("open.json"))
	})
})
