package mutate_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

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

var _ = Describe("the cap's sample", func() {
	// tree is a contract that projects one string (/status) of a response
	// with 60 other members nothing projects; none of them is bounded, so
	// mutants of /status reach the agent and the others are unseen.
	tree := func() string {
		var members, props strings.Builder
		for i := range 60 {
			fmt.Fprintf(&members, `,"note_%02d":"n%d"`, i, i)
			fmt.Fprintf(&props, `,"note_%02d":{"type":"string"}`, i)
		}
		return testtree.Write(GinkgoT(), map[string]string{
			"schemas/wide/contract.yaml": "tool: wide\nversion: \"1\"\nagent_schema: agent.schema.json\nupstream_versions:\n  v1:\n    schema: upstream.schema.json\n    projection:\n      status: /status\n",
			"schemas/wide/upstream.schema.json": `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false,` +
				`"properties":{"status":{"type":"string"}` + props.String() + `}}`,
			"schemas/wide/agent.schema.json":      `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false,"properties":{"status":{"type":"string","maxLength":4096}}}`,
			"fixtures/wide/defaults.meta.yaml":    "request: {id: req-00000001}\nclock: 2025-07-01T00:00:00Z\n",
			"fixtures/wide/v1/accepted/page.json": `{"status":"open"` + members.String() + `}`,
		})
	}
	survivors := func(dir string, limit int) []string {
		rep, err := mutate.Mutate(context.Background(), mutate.Options{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures"), MaxPerFixture: limit, Workers: 1})
		Expect(err).NotTo(HaveOccurred())
		var out []string
		for _, r := range rep.Results {
			if r.Outcome == mutate.Survived {
				out = append(out, r.Mutant.ID)
			}
		}
		return out
	}

	It("keeps every mutant that touches what the agent sees before the others", func() {
		dir := tree()
		all := survivors(dir, -1)
		Expect(all).To(ContainElement("values.empty_string@/status"))
		// 60 unprojected members give hundreds of mutants; a cap of 40
		// still holds every one at /status or the whole body.
		Expect(survivors(dir, 40)).To(Equal(all))
	})
})
