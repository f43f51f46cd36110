package importer_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/importer"
	"github.com/airlockdev/airlock/lint"
)

var _ = Describe("Write", func() {
	var o importer.WriteOptions
	var d *importer.Draft
	BeforeEach(func() {
		dir := GinkgoT().TempDir()
		o = importer.WriteOptions{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures")}
		doc := spec("3.0.3", `{"$ref": "#/components/schemas/Order"}`,
			`"Order": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string", "maxLength": 8}}}`)
		doc.Paths.Find("/thing").Get.Responses.Status(200).Value.Content.Get("application/json").Example = map[string]any{"id": "o-1"}
		var err error
		d, err = importer.DraftFromOpenAPI(doc, importer.OpenAPIOptions{Operation: "getThing", Tool: "thing", API: "test"})
		Expect(err).NotTo(HaveOccurred())
	})

	It("writes the manifest last, so an import killed before it is finished by running it again", func() {
		_, err := importer.Write(context.Background(), d, o)
		Expect(err).NotTo(HaveOccurred())
		manifest := filepath.Join(o.SchemasDir, "thing", "contract.yaml")
		Expect(os.Remove(manifest)).To(Succeed()) // the state a kill before the manifest leaves
		w, err := importer.Write(context.Background(), d, o)
		Expect(err).NotTo(HaveOccurred())
		Expect(w.Files).To(Equal([]string{manifest}), "only what was missing")
		Expect(w.Fixtures).To(HaveLen(1))
	})

	DescribeTable("keeps every version when imports add versions at once (the manifest is read and written under the tree's lock)", func(first bool) {
		want := []string{"v0", "v1", "v2", "v3", "v4", "v5"}
		if first {
			_, err := importer.Write(context.Background(), d, o)
			Expect(err).NotTo(HaveOccurred())
			want = append(want, "1.0")
		}
		var wg sync.WaitGroup
		errs := make([]error, 6)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := *d
				c.Version.Name = fmt.Sprintf("v%d", i)
				_, errs[i] = importer.Write(context.Background(), &c, o)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			Expect(err).NotTo(HaveOccurred())
		}
		c, err := gate.LoadDir(filepath.Join(o.SchemasDir, "thing"), gate.Options{})
		Expect(err).NotTo(HaveOccurred())
		Expect(c.UpstreamVersions()).To(ConsistOf(want))
	},
		Entry("beside a contract that exists", true),
		Entry("into a schemas folder that does not exist yet", false),
	)

	It("writes nothing when one file to write differs from one already there", func() {
		golden := filepath.Join(o.FixturesDir, "thing", "1.0", "accepted", "example.agent.json")
		Expect(os.MkdirAll(filepath.Dir(golden), 0o755)).To(Succeed())
		Expect(os.WriteFile(golden, []byte("{}\n"), 0o644)).To(Succeed())
		_, err := importer.Write(context.Background(), d, o)
		Expect(err).To(MatchError(importer.ErrExists))
		Expect(err.Error()).To(ContainSubstring(golden))
		Expect(filepath.Join(o.SchemasDir, "_components")).NotTo(BeAnExistingFile())
		Expect(filepath.Join(o.SchemasDir, "thing")).NotTo(BeAnExistingFile())
		Expect(filepath.Join(o.FixturesDir, "thing", "1.0", "accepted", "example.json")).NotTo(BeAnExistingFile())
		Expect(os.ReadFile(golden)).To(Equal([]byte("{}\n")))
	})

	It("writes no secret: example bodies, descriptions, comments and schema annotations go through the redactor", func() {
		token := "ghp_" + strings.Repeat("aB3", 12) // a GitHub token's shape, built here
		doc := spec("3.0.3", `{"$ref": "#/components/schemas/Order"}`,
			`"Order": {"type": "object", "description": "try with `+token+`", "properties": {"id": {"type": "string", "maxLength": 8}, "note": {"type": "string", "default": "`+token+`"},
			  "description": {"type": "string", "pattern": "^[a-z]+$", "description": "see `+token+`"}}}`)
		doc.Info.Title = "Shop " + token
		doc.Info.Version = token
		op := doc.Paths.Find("/thing").Get
		op.Summary = "Get it with " + token
		op.Responses.Status(200).Value.Content.Get("application/json").Example = map[string]any{"id": "o-1", "note": "token " + token}
		d, err := importer.DraftFromOpenAPI(doc, importer.OpenAPIOptions{Operation: "getThing", Tool: "thing"})
		Expect(err).NotTo(HaveOccurred())
		w, err := importer.Write(context.Background(), d, o)
		Expect(err).NotTo(HaveOccurred())
		Expect(w.Notes).To(ContainElement(ContainSubstring("example example: 1 secret(s) redacted")))
		Expect(w.Notes).To(ContainElement(ContainSubstring("title holds what looks like a secret")))
		Expect(w.Notes).To(ContainElement(ContainSubstring("info.version looks like a secret")))
		n := 0
		for _, root := range []string{o.SchemasDir, o.FixturesDir} {
			Expect(filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
				Expect(err).NotTo(HaveOccurred())
				if e.Type().IsRegular() {
					n++
					b, err := os.ReadFile(p)
					Expect(err).NotTo(HaveOccurred())
					Expect(string(b)).NotTo(ContainSubstring(token[:20]), p)
				}
				return nil
			})).To(Succeed())
		}
		Expect(n).To(BeNumerically(">=", 7))

	})

	It("redacts annotations only: a property named like one is a schema, and constraints are written as the description says", func() {
		key := "AKIA" + strings.Repeat("Z7", 8) // an AWS key id's shape, built here
		doc := spec("3.0.3", `{"$ref": "#/components/schemas/Order"}`,
			`"Order": {"type": "object", "properties": {"id": {"type": "string", "maxLength": 8}, "default": {"type": "string", "const": "`+key+`", "description": "`+key+`"}}}`)
		d, err := importer.DraftFromOpenAPI(doc, importer.OpenAPIOptions{Operation: "getThing", Tool: "thing", API: "test"})
		Expect(err).NotTo(HaveOccurred())
		_, err = importer.Write(context.Background(), d, o)
		Expect(err).NotTo(HaveOccurred())
		comp, err := os.ReadFile(filepath.Join(o.SchemasDir, "_components", "test", "1.0", "Order.schema.json"))
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Count(string(comp), key)).To(Equal(1), "the const stays, the description goes:\n%s", comp)
		Expect(string(comp)).To(ContainSubstring(`"const": "` + key + `"`))
	})

	It("accepts lint's findings in the vendor's component folders with a lint.ignore entry per folder, and adds one for a version imported later", func() {
		comps := `"Order": {"type": "object", "properties": {"id": {"type": "string", "maxLength": 8}, "note": {"type": "string"}}}`
		d, err := importer.DraftFromOpenAPI(spec("3.0.3", `{"$ref": "#/components/schemas/Order"}`, comps),
			importer.OpenAPIOptions{Operation: "getThing", Tool: "thing", API: "test", Project: []importer.Field{{Name: "id", Pointer: "/id"}}})
		Expect(err).NotTo(HaveOccurred())
		_, err = importer.Write(context.Background(), d, o)
		Expect(err).NotTo(HaveOccurred())
		manifest, err := os.ReadFile(filepath.Join(o.SchemasDir, "thing", "contract.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(manifest)).To(ContainSubstring(`file: "../_components/test/1.0/*"`))

		componentFindings := func() (n int) {
			set, err := fixture.Open(o.SchemasDir, "", fixture.Filter{}, gate.Options{})
			Expect(err).NotTo(HaveOccurred())
			Expect(set.Broken).To(BeEmpty())
			l, err := lint.Lint(context.Background(), lint.Input{Contracts: set.List})
			Expect(err).NotTo(HaveOccurred())
			for _, f := range l.Findings {
				Expect(f.Rule).NotTo(Equal("lint-ignore-unused"), f.Message)
				if strings.Contains(f.File, "_components") {
					n++
					Expect(f.Ignored).NotTo(BeEmpty(), "%s %s", f.Rule, f.File)
				}
			}
			return n
		}
		Expect(componentFindings()).To(BeNumerically(">", 0), "the open Order and its unbounded note are findings, accepted")

		doc := spec("3.0.3", `{"$ref": "#/components/schemas/Order"}`, comps)
		doc.Info.Version = "2.0"
		d, err = importer.DraftFromOpenAPI(doc, importer.OpenAPIOptions{Operation: "getThing", Tool: "thing", API: "test", Project: []importer.Field{{Name: "id", Pointer: "/id"}}})
		Expect(err).NotTo(HaveOccurred())
		_, err = importer.Write(context.Background(), d, o)
		Expect(err).NotTo(HaveOccurred())
		manifest, err = os.ReadFile(filepath.Join(o.SchemasDir, "thing", "contract.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(manifest)).To(ContainSubstring(`../_components/test/1.0/*`))
		Expect(string(manifest)).To(ContainSubstring(`../_components/test/2.0/*`))
		Expect(componentFindings()).To(BeNumerically(">", 0))
	})

	It("refuses a contract that would not load, writing nothing", func() {
		d.Version.Projection = []importer.Field{{Name: "id", Pointer: "not-a-pointer"}}
		_, err := importer.Write(context.Background(), d, o)
		Expect(err).To(MatchError(ContainSubstring("does not load (nothing was written)")))
		Expect(err.Error()).To(ContainSubstring(filepath.Join(o.SchemasDir, "thing", "contract.yaml")))
		Expect(o.SchemasDir).NotTo(BeAnExistingFile())
		Expect(o.FixturesDir).NotTo(BeAnExistingFile())
	})
})
