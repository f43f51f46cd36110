package drift_test

import (
	"context"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/drift"
	"github.com/airlockdev/airlock/internal/testtree"
)

var _ = Describe("drift beside a broken contract", func() {
	It("reports the good tool and lists the broken one, even under an upstream version only it could have", func() {
		files := testtree.Project()
		files["fixtures/note_status/v1/historical/old.json"] = testtree.GoodBody
		files["schemas/bad/contract.yaml"] = "tool: [\n"
		files["fixtures/bad/v7/recorded/a.json"] = `{}`
		dir := testtree.Tree(files)
		opts := drift.Options{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures")}
		d, err := drift.Run(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(d.Tools).To(HaveLen(1))
		Expect(d.Tools[0].Tool).To(Equal("note_status"))
		Expect(d.Summary.Fixtures).To(Equal(1))
		Expect(d.Broken).To(HaveLen(1))
		Expect(d.Broken[0].Tool).To(Equal("bad"))
		Expect(d.Broken[0].File).To(Equal(filepath.Join(dir, "schemas", "bad", "contract.yaml")))
		Expect(d.Broken[0].Message).To(HavePrefix(d.Broken[0].File + ":"))

		opts.UpstreamVersions = []string{"v7"}
		d, err = drift.Run(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(d.Broken).To(HaveLen(1))
		Expect(d.Summary.Fixtures).To(BeZero())
	})
})
