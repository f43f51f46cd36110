package lint_test

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("shared components", func() {
	It("reports a finding inside a component at the component's file and line", func() {
		dir := oneSchemaContract("pulls", `{"$ref": "../_components/github/v1/pull.schema.json"}`, "/id")
		comp := filepath.Join(dir, "_components", "github", "v1", "pull.schema.json")
		Expect(os.MkdirAll(filepath.Dir(comp), 0o755)).To(Succeed())
		Expect(os.WriteFile(comp, []byte("{\"type\": \"object\",\n \"additionalProperties\": false,\n \"allOf\": [{\"properties\": {\"id\": {\"type\": \"string\", \"maxLength\": 8}}}]}"), 0o644)).To(Succeed())
		l := lintTree(dir, "")
		var files []string
		for _, f := range l.Findings {
			files = append(files, f.File)
			if f.Rule == "closed-beside-composition" {
				Expect(f.File).To(Equal(comp))
				Expect(f.Line).To(Equal(2))
				return
			}
		}
		Fail("no closed-beside-composition finding; findings in " + filepath.Join(files...))
	})
})
