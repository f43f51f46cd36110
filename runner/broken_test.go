package runner_test

import (
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/internal/testtree"
	"github.com/airlockdev/airlock/reports"
	"github.com/airlockdev/airlock/runner"
)

// brokenBeside is the note_status project beside a contract "bad" whose
// upstream schema $refs a missing file, and a fixture folder for it.
func brokenBeside() map[string]string {
	files := testtree.Project()
	files["schemas/bad/contract.yaml"] = "tool: bad\nversion: \"1\"\nagent_schema: agent.schema.json\nupstream_versions:\n  v1:\n    schema: upstream.schema.json\n    projection: {id: /id}\n"
	files["schemas/bad/agent.schema.json"] = `{"type": "object", "additionalProperties": false, "properties": {"id": {"type": "string"}}}`
	files["schemas/bad/upstream.schema.json"] = `{"type": "object", "properties": {"id": {"$ref": "missing.schema.json"}}}`
	files["fixtures/bad/v1/accepted/a.json"] = `{"id": "x"}`
	return files
}

var _ = Describe("airlock run beside a broken contract", func() {
	It("runs every fixture of the good tools and adds one error case for the broken contract, in tool order", func() {
		dir := testtree.Tree(brokenBeside())
		res, err := testtree.Run(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Fixtures).To(Equal(4))
		Expect(res.Broken).To(HaveLen(1))
		Expect(res.Broken[0].Tool).To(Equal("bad"))
		p, f, u := res.Run.Counts()
		Expect([]int{f, u, res.Run.Errored()}).To(Equal([]int{0, 0, 1}))
		Expect(p).To(Equal(len(res.Run.Cases) - 1))

		c := res.Run.Cases[0]
		Expect(c.Tool).To(Equal("bad"))
		Expect(c.Status).To(Equal(reports.Errored))
		Expect(c.Suite).To(Equal(reports.SuiteContract))
		Expect(c.Name).To(Equal("contract.yaml"))
		Expect(c.UpstreamVersion).To(BeEmpty())
		Expect(c.Kind).To(BeEmpty())
		Expect(c.File).To(Equal(filepath.Join(dir, "schemas", "bad", "upstream.schema.json")))
		Expect(c.Message).To(Equal(res.Broken[0].Err.Error()))
		Expect(c.Message).To(ContainSubstring("missing.schema.json"))
		for _, c := range res.Run.Cases[1:] {
			Expect(c.Tool).To(Equal("note_status"))
		}
	})

	It("never loads the broken contract under --tool of a good one", func() {
		res, err := testtree.Run(testtree.Tree(brokenBeside()), func(o *runner.Options) {
			o.Filter = fixture.Filter{Tools: []string{"note_status"}}
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Broken).To(BeEmpty())
		Expect(res.Run.Errored()).To(BeZero())
	})

	It("reports a run of only a broken contract, without a no-fixtures error", func() {
		res, err := testtree.Run(testtree.Tree(brokenBeside()), func(o *runner.Options) {
			o.Filter = fixture.Filter{Tools: []string{"bad"}}
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Fixtures).To(BeZero())
		Expect(res.Run.Cases).To(HaveLen(1))
		Expect(res.Run.Cases[0].Status).To(Equal(reports.Errored))
	})
})
