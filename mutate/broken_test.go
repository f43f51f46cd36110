package mutate_test

import (
	"context"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/internal/testtree"
	"github.com/airlockdev/airlock/mutate"
	"github.com/airlockdev/airlock/reports"
)

var _ = Describe("mutate beside a broken contract", func() {
	It("mutates the good tool completely and reports the broken one as its tool's error case", func() {
		files := testtree.Project()
		files["schemas/bad/contract.yaml"] = "tool: [\n"
		files["fixtures/bad/v1/accepted/a.json"] = `{}`
		dir := testtree.Tree(files)
		rep, err := mutate.Mutate(context.Background(), mutate.Options{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures")})
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Broken).To(HaveLen(1))
		Expect(rep.Scores).To(HaveLen(1))
		Expect(rep.Scores[0].Tool).To(Equal("note_status"))
		Expect(rep.Survivors()).To(BeEmpty())
		cases := rep.Cases()
		Expect(cases[0].Tool).To(Equal("bad"))
		Expect(cases[0].Status).To(Equal(reports.Errored))
		Expect(cases[0].File).To(Equal(filepath.Join(dir, "schemas", "bad", "contract.yaml")))
		Expect(cases[1:]).To(HaveLen(len(rep.Results)))
	})
})
