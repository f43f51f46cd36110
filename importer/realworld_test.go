package importer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/importer"
	"github.com/airlockdev/airlock/internal/conformance"
	"github.com/airlockdev/airlock/mutate"
	"github.com/airlockdev/airlock/reports"
	"github.com/airlockdev/airlock/runner"
	"github.com/airlockdev/airlock/schemadiff"
	"github.com/airlockdev/airlock/semantic"
)

// The public descriptions make openapi-descriptions installs from npm
// (Makefile), found in .ci/node/openapi or under $AIRLOCK_OPENAPI_DIR.
func description(rel string) string {
	dir := os.Getenv("AIRLOCK_OPENAPI_DIR")
	if dir == "" {
		root, err := conformance.ModuleRoot()
		Expect(err).NotTo(HaveOccurred())
		dir = filepath.Join(root, ".ci", "node", "openapi")
	}
	p := filepath.Join(dir, rel)
	if _, err := os.Stat(p); err != nil {
		msg := fmt.Sprintf("public OpenAPI description %s not installed (make openapi-descriptions, or set AIRLOCK_OPENAPI_DIR): %v", rel, err)
		if conformance.Required() {
			Fail(msg + " (CI=true: a missing description fails the run)")
		}
		Skip(msg)
	}
	return p
}

// docs caches each description read, by path: GitHub's takes seconds.
var docs = map[string]*openapi3.T{}

func loadSpec(p string) *openapi3.T {
	if d, ok := docs[p]; ok {
		return d
	}
	d, err := importer.LoadOpenAPI(context.Background(), p)
	Expect(err).NotTo(HaveOccurred())
	docs[p] = d
	return d
}

// oracle judges an example against the vendor's own response schema with
// kin-openapi's validator (OpenAPI 3.0 semantics, or its JSON Schema
// 2020-12 mode for 3.1), formats not checked: the independent answer to
// "does the vendor's example satisfy the vendor's schema".
func oracle(doc *openapi3.T, op, status string, body []byte) error {
	var item *openapi3.Operation
	for _, o := range importer.Operations(doc) {
		if o.ID == op {
			item = doc.Paths.Find(o.Path).GetOperation(o.Method)
		}
	}
	Expect(item).NotTo(BeNil())
	if status == "" {
		status = "200"
	}
	schema := item.Responses.Value(status).Value.Content.Get("application/json").Schema.Value
	var v any
	Expect(json.Unmarshal(body, &v)).To(Succeed())
	opts := []openapi3.SchemaValidationOption{openapi3.VisitAsResponse()}
	if strings.HasPrefix(doc.OpenAPI, "3.1") {
		opts = append(opts, openapi3.EnableJSONSchema2020())
	}
	return schema.VisitJSON(v, opts...)
}

type imported struct {
	spec, op, tool, status string
	project                []importer.Field
}

// importAndRun imports each operation into one fresh tree, then runs every
// suite over it, and checks each example's fate against the oracle.
func importAndRun(cases []imported) (accepted, nearMiss int) {
	dir := GinkgoT().TempDir()
	projected := map[string][]string{} // tool → projected JSON Pointers
	schemas, fixtures := filepath.Join(dir, "schemas"), filepath.Join(dir, "fixtures")
	for _, c := range cases {
		doc := loadSpec(c.spec)
		d, err := importer.DraftFromOpenAPI(doc, importer.OpenAPIOptions{Spec: c.spec, Operation: c.op, Tool: c.tool, Status: c.status, Project: c.project, API: "vendor", UpstreamVersion: "v1"})
		Expect(err).NotTo(HaveOccurred(), c.op)
		w, err := importer.Write(context.Background(), d, importer.WriteOptions{SchemasDir: schemas, FixturesDir: fixtures})
		Expect(err).NotTo(HaveOccurred(), c.op)
		for _, p := range d.Version.Projection {
			projected[c.tool] = append(projected[c.tool], p.Pointer)
		}
		for _, f := range w.Fixtures {
			body, err := os.ReadFile(f.Path)
			Expect(err).NotTo(HaveOccurred())
			verdict := oracle(doc, c.op, c.status, body)
			if f.Kind == fixture.KindAccepted {
				accepted++
				Expect(verdict).NotTo(HaveOccurred(), "%s: admitted, but the vendor's schema refuses it", f.Path)
			} else {
				nearMiss++
				Expect(verdict).To(HaveOccurred(), "%s: refused (%s at %s: %s), but the vendor's schema admits it", f.Path, f.Reason, f.InstanceLocation, f.Message)
				AddReportEntry("near-miss "+f.Path, fmt.Sprintf("%s at %s; kin-openapi: %s", f.Reason, f.InstanceLocation, firstLine(verdict.Error())))
			}
		}
		AddReportEntry("imported "+c.op, strings.Join(w.Notes, "\n"))
	}
	res, err := runner.Run(context.Background(), runner.Options{SchemasDir: schemas, FixturesDir: fixtures})
	Expect(err).NotTo(HaveOccurred())
	Expect(res.Broken).To(BeEmpty())
	for _, tc := range res.Run.Cases {
		Expect(tc.Status).To(Equal(reports.Passed), "%s %s %s: %s", tc.Tool, tc.Suite, tc.Name, tc.Message)
	}
	Expect(res.Fixtures).To(Equal(accepted + nearMiss))

	// The mutation score of what was imported, reported; some mutants of
	// the accepted examples must be killed, or the contract checks nothing.
	if accepted > 0 {
		m, err := mutate.Mutate(context.Background(), mutate.Options{SchemasDir: schemas, FixturesDir: fixtures})
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Broken).To(BeEmpty())
		count := map[mutate.Outcome]int{}
		for _, r := range m.Results {
			count[r.Outcome]++
			if r.Outcome == mutate.Survived {
				// A survivor reaches the agent: what the agent sees is
				// only the projection, so the mutation must touch a
				// projected field (at, above or below its pointer), carry
				// its canary into the output, or swap a value bound to the
				// request (the whole answer is another call's).
				Expect(touchesProjection(r.Mutant.Pointer, projected[r.Fixture.Tool]) || r.Mutant.Canary != "" || r.Mutant.Family == mutate.FamilySemantic).To(BeTrue(),
					"%s %s: reported as reaching the agent, but %s is not on a projected path %v", r.Fixture.Body, r.Mutant.ID, r.Mutant.Pointer, projected[r.Fixture.Tool])
			}
		}
		Expect(count[mutate.Killed]).To(BeNumerically(">", 0))
		AddReportEntry("mutation", fmt.Sprintf("%d mutants: %d killed, %d reach the agent, %d unseen, %d equivalent, %d wrong reason, %d leaked",
			len(m.Results), count[mutate.Killed], count[mutate.Survived], count[mutate.Unseen], count[mutate.Equivalent], count[mutate.WrongReason], count[mutate.Leaked]))
	}
	return accepted, nearMiss
}

// touchesProjection reports whether the instance location ptr is at, above
// or below one of the projected pointers ("*" in a projected pointer
// stands for any array index).
func touchesProjection(ptr string, projected []string) bool {
	a := strings.Split(ptr, "/")
	for _, p := range projected {
		b := strings.Split(p, "/")
		n := min(len(a), len(b))
		same := true
		for i := 0; i < n; i++ {
			if a[i] != b[i] && b[i] != "*" {
				same = false
				break
			}
		}
		if same {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

var _ = Describe("import openapi on public descriptions", func() {
	It("imports GitHub's REST API description (OpenAPI 3.0.3, 13 MB): five operations, every vendor example where the vendor's schema puts it", func() {
		gh := description("octokit-openapi-23.0.2/generated/api.github.com.json")
		acc, near := importAndRun([]imported{
			{spec: gh, op: "pulls/get", tool: "pull_request", project: []importer.Field{
				{Name: "number", Pointer: "/number"}, {Name: "state", Pointer: "/state"}, {Name: "title", Pointer: "/title"},
				{Name: "head_sha", Pointer: "/head/sha"}, {Name: "author", Pointer: "/user/login"}}},
			{spec: gh, op: "repos/get", tool: "repository"},
			{spec: gh, op: "issues/get", tool: "issue"},
			{spec: gh, op: "users/get-by-username", tool: "user"},
			{spec: gh, op: "repos/list-commits", tool: "commits", project: []importer.Field{
				{Name: "shas", Pointer: "/*/sha"}, {Name: "messages", Pointer: "/*/commit/message"}}},
		})
		AddReportEntry("GitHub examples", fmt.Sprintf("%d accepted, %d near-miss", acc, near))
		Expect(acc + near).To(BeNumerically(">=", 5))
	})

	It("imports the Train Travel API (OpenAPI 3.1.0) and Scalar Galaxy (3.1.1)", func() {
		tt := description("readme-oas-examples-8.2.2/3.1/json/train-travel.json")
		gx := description("scalar-galaxy-0.6.12/dist/3.1.json")
		acc, near := importAndRun([]imported{
			{spec: tt, op: "get-stations", tool: "stations", project: []importer.Field{{Name: "names", Pointer: "/data/*/name"}}},
			{spec: tt, op: "get-booking", tool: "booking"},
			{spec: gx, op: "getPlanet", tool: "planet"},
			{spec: gx, op: "getMe", tool: "me"},
		})
		AddReportEntry("3.1 examples", fmt.Sprintf("%d accepted, %d near-miss", acc, near))
	})

	It("reads the petstore as Swagger 2.0 (through kin-openapi's openapi2conv) and as OpenAPI 3.0 into the same contract", func() {
		var schemas [2]string
		for i, rel := range []string{"readme-oas-examples-8.2.2/2.0/json/petstore.json", "readme-oas-examples-8.2.2/3.0/json/petstore.json"} {
			p := description(rel)
			dir := GinkgoT().TempDir()
			d, err := importer.ImportOpenAPI(context.Background(), importer.OpenAPIOptions{Spec: p, Operation: "getPetById", Tool: "pet", API: "petstore", UpstreamVersion: "v1"})
			Expect(err).NotTo(HaveOccurred(), rel)
			Expect(d.Version.Projection).To(ContainElement(importer.Field{Name: "name", Pointer: "/name"}))
			w, err := importer.Write(context.Background(), d, importer.WriteOptions{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures")})
			Expect(err).NotTo(HaveOccurred(), rel)
			Expect(w.Files).To(ContainElement(HaveSuffix("Pet.schema.json")))
			b, err := os.ReadFile(filepath.Join(dir, "schemas", "_components", "petstore", "v1", "Pet.schema.json"))
			Expect(err).NotTo(HaveOccurred())
			schemas[i] = string(b)
			c, err := gate.LoadDir(filepath.Join(dir, "schemas", "pet"), gate.Options{})
			Expect(err).NotTo(HaveOccurred())
			v, err := c.Check(context.Background(), gate.Response{Status: 200, ContentType: "application/json", Body: strings.NewReader(`{"id": 10, "name": "doggie", "photoUrls": ["a"], "status": "sold"}`)},
				gate.Call{Request: semantic.Request{ID: "r"}})
			Expect(err).NotTo(HaveOccurred())
			Expect(v.Admitted).To(BeTrue(), "%s: %s %s", rel, v.Reason, v.Audit.Message)
			v, err = c.Check(context.Background(), gate.Response{Status: 200, ContentType: "application/json", Body: strings.NewReader(`{"id": 10, "name": "doggie", "photoUrls": ["a"], "status": "lost"}`)},
				gate.Call{Request: semantic.Request{ID: "r"}})
			Expect(err).NotTo(HaveOccurred())
			Expect(v.Reason).To(Equal("schema.enum"), rel)
		}
		// The two files are not the same description (the 3.0 one adds
		// readOnly, default and example to id): the same members, the same
		// required ones, the same bounds on id.
		var pets [2]map[string]any
		for i := range schemas {
			Expect(json.Unmarshal([]byte(schemas[i]), &pets[i])).To(Succeed())
		}
		Expect(pets[0]["required"]).To(Equal(pets[1]["required"]))
		Expect(pets[0]["properties"]).To(HaveLen(len(pets[1]["properties"].(map[string]any))))
		for _, k := range []string{"type", "minimum", "maximum"} {
			Expect(pets[0]["properties"].(map[string]any)["id"]).To(HaveKeyWithValue(k, pets[1]["properties"].(map[string]any)["id"].(map[string]any)[k]))
		}
	})

	It("diffs two imports of secret-scanning/get-alert (GHES 3.17, then 3.19, as one upstream version) as whole contracts", func() {
		// Two revisions of one contract, as a pull request that re-imports
		// the newer description would make: schemas and manifest compared.
		var dirs []string
		for _, rel := range []string{"octokit-openapi-23.0.2/generated/ghes-3.17.json", "octokit-openapi-23.0.2/generated/ghes-3.19.json"} {
			spec := description(rel)
			root := GinkgoT().TempDir()
			o := importer.WriteOptions{SchemasDir: filepath.Join(root, "schemas"), FixturesDir: filepath.Join(root, "fixtures")}
			d, err := importer.DraftFromOpenAPI(loadSpec(spec), importer.OpenAPIOptions{Spec: spec, Operation: "secret-scanning/get-alert", Tool: "secret_alert", API: "github", UpstreamVersion: "ghes"})
			Expect(err).NotTo(HaveOccurred())
			_, err = importer.Write(context.Background(), d, o)
			Expect(err).NotTo(HaveOccurred())
			dirs = append(dirs, filepath.Join(o.SchemasDir, "secret_alert"))
		}
		diff, err := schemadiff.Contracts(context.Background(), dirs[0], dirs[1], schemadiff.ContractOptions{Fixtures: filepath.Join(filepath.Dir(filepath.Dir(dirs[1])), "fixtures")})
		Expect(err).NotTo(HaveOccurred())
		names := []string{}
		for _, cmp := range diff.Comparisons {
			names = append(names, cmp.Name)
		}
		Expect(names).To(Equal([]string{"secret_alert agent schema", "secret_alert upstream ghes", "secret_alert manifest"}))
		// The upstream schema changed between the releases; every schema
		// change has a gate-impact view, and the imported fixtures ran.
		Expect(diff.Comparisons[1].Changes).NotTo(BeEmpty())
		for _, c := range diff.Comparisons[1].Changes {
			Expect(c.Impact).NotTo(BeNil(), "%s at %s", c.Rule, c.Instance)
		}
		Expect(diff.Evidence).To(HavePrefix("gate impact: "))
		// 3.19 added has_more_locations, which the import projects: the
		// manifest family reports the new agent field at its line. Every
		// manifest change is a registered manifest rule at a line.
		var projected bool
		for _, c := range diff.Comparisons[2].Changes {
			projected = projected || c.Rule == schemadiff.RuleManifestProjectionFieldAdded && c.Instance == "/has_more_locations"
			r, ok := schemadiff.Lookup(c.Rule)
			Expect(ok).To(BeTrue())
			Expect(r.Manifest).NotTo(BeNil())
			Expect(c.Line).To(BeNumerically(">", 0))
		}
		Expect(projected).To(BeTrue(), "manifest changes: %v", diff.Comparisons[2].Changes)
		// And the newer import diffed against itself is empty.
		self, err := schemadiff.Contracts(context.Background(), dirs[1], dirs[1], schemadiff.ContractOptions{})
		Expect(err).NotTo(HaveOccurred())
		for _, cmp := range self.Comparisons {
			Expect(cmp.Changes).To(BeEmpty(), cmp.Name)
		}
		var b strings.Builder
		Expect(reports.WriteDiffText(&b, diff)).To(Succeed())
		AddReportEntry("secret-scanning/get-alert, two imports (GHES 3.17 → 3.19) as contracts", b.String())
	})

	It("adds GitHub Enterprise Server 3.19 beside 3.17 as a new upstream version, sharing nothing between them", func() {
		old := description("octokit-openapi-23.0.2/generated/ghes-3.17.json")
		neu := description("octokit-openapi-23.0.2/generated/ghes-3.19.json")
		dir := GinkgoT().TempDir()
		o := importer.WriteOptions{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures")}
		for _, v := range []struct{ spec, name string }{{old, "ghes-3.17"}, {neu, "ghes-3.19"}} {
			d, err := importer.DraftFromOpenAPI(loadSpec(v.spec), importer.OpenAPIOptions{Spec: v.spec, Operation: "repos/get", Tool: "repository", API: "github", UpstreamVersion: v.name})
			Expect(err).NotTo(HaveOccurred())
			w, err := importer.Write(context.Background(), d, o)
			Expect(err).NotTo(HaveOccurred())
			if v.name == "ghes-3.19" {
				Expect(w.Added).To(BeTrue())
				Expect(w.Previous).To(Equal("ghes-3.17"))
			}
		}
		c, err := gate.LoadDir(filepath.Join(o.SchemasDir, "repository"), gate.Options{})
		Expect(err).NotTo(HaveOccurred())
		Expect(c.UpstreamVersions()).To(ConsistOf("ghes-3.17", "ghes-3.19"))

		// secret-scanning/get-alert changed between the two releases: the
		// diff of the two imported versions says how.
		for _, v := range []struct{ spec, name string }{{old, "ghes-3.17"}, {neu, "ghes-3.19"}} {
			d, err := importer.DraftFromOpenAPI(loadSpec(v.spec), importer.OpenAPIOptions{Spec: v.spec, Operation: "secret-scanning/get-alert", Tool: "secret_alert", API: "github", UpstreamVersion: v.name})
			Expect(err).NotTo(HaveOccurred())
			_, err = importer.Write(context.Background(), d, o)
			Expect(err).NotTo(HaveOccurred())
		}
		diff, err := schemadiff.UpstreamVersions(o.SchemasDir, "secret_alert", "ghes-3.17", "ghes-3.19", gate.Options{})
		Expect(err).NotTo(HaveOccurred())
		Expect(diff.Count(reports.ContractChange)).To(BeNumerically(">", 0))
		var b strings.Builder
		Expect(reports.WriteDiffText(&b, diff)).To(Succeed())
		AddReportEntry("secret-scanning/get-alert, GHES 3.17 → 3.19", b.String())
		Expect(c.Current()).To(Equal("ghes-3.17"))
		Expect(filepath.Join(o.SchemasDir, "_components", "github", "ghes-3.17", "full-repository.schema.json")).To(BeAnExistingFile())
		Expect(filepath.Join(o.SchemasDir, "_components", "github", "ghes-3.19", "full-repository.schema.json")).To(BeAnExistingFile())

		// The same version again is refused, and changes nothing.
		d, err := importer.DraftFromOpenAPI(loadSpec(neu), importer.OpenAPIOptions{Spec: neu, Operation: "repos/get", Tool: "repository", API: "github", UpstreamVersion: "ghes-3.19"})
		Expect(err).NotTo(HaveOccurred())
		before, err := os.ReadFile(filepath.Join(o.SchemasDir, "repository", "contract.yaml"))
		Expect(err).NotTo(HaveOccurred())
		_, err = importer.Write(context.Background(), d, o)
		Expect(err).To(MatchError(importer.ErrExists))
		Expect(os.ReadFile(filepath.Join(o.SchemasDir, "repository", "contract.yaml"))).To(Equal(before))
	})
})
