package gate_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing/fstest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/fileio"
	"github.com/airlockdev/airlock/internal/testtree"
)

// Shared components: schemas/_components/<api>/<version>/<file>, written
// once by airlock import openapi and reached from a contract's schema by
// "../_components/…", confined there.

const pullsManifest = `tool: pulls
version: "1"
agent_schema: agent.schema.json
upstream_versions:
  v1:
    schema: upstream.schema.json
    projection:
      id: /id
      login: /user/login
`

const pullsAgent = `{"type": "object", "additionalProperties": false, "required": ["id", "login"],
 "properties": {"id": {"type": "integer"}, "login": {"type": "string", "enum": ["octocat", "hubot"]}}}`

// pullsComponents are the github/v1 components: a pull request that
// references a user beside it.
var pullsComponents = map[string]string{
	"github/v1/pull-request.schema.json": `{
  "type": "object",
  "additionalProperties": false,
  "required": ["id", "user"],
  "properties": {
    "id": {"type": "integer"},
    "user": {"$ref": "simple-user.schema.json"},
    "head": {"type": "object", "properties": {"ref": {"type": "string", "maxLength": 64}}}
  }
}`,
	"github/v1/simple-user.schema.json": `{
  "type": "object",
  "required": ["login"],
  "properties": {"login": {"type": "string", "enum": ["octocat", "hubot"]}}
}`,
}

func pullsCall() gate.Call { return gate.Call{Request: probeCall().Request, Now: probeNow} }

var _ = Describe("shared components", func() {
	var root, schemas string
	BeforeEach(func() {
		root = GinkgoT().TempDir()
		schemas = filepath.Join(root, "schemas")
	})

	// setup writes the pulls contract with upstream as its upstream schema,
	// and the components (paths below _components; nil: no such folder).
	setup := func(upstream string, components map[string]string) string {
		GinkgoHelper()
		dir := writeContract(schemas, "pulls", map[string]string{
			"contract.yaml": pullsManifest, "agent.schema.json": pullsAgent, "upstream.schema.json": upstream,
		})
		if components != nil {
			testtree.WriteIn(GinkgoT(), filepath.Join(schemas, "_components"), components)
		}
		return dir
	}

	It("checks a response against a component: admitted, and refused at the keyword inside it", func() {
		dir := setup(`{"$ref": "../_components/github/v1/pull-request.schema.json"}`, pullsComponents)
		c, err := gate.LoadDir(dir, gate.Options{})
		Expect(err).NotTo(HaveOccurred())

		v := runCheck(c, jsonResp(`{"id": 7, "user": {"login": "octocat"}}`), pullsCall())
		Expect(v.Admitted).To(BeTrue(), "audit: %s", v.Audit.JSON())
		Expect(string(v.Output)).To(Equal(`{"tool":"pulls","request_id":"req-00000001","outcome":"success","data":{"id":7,"login":"octocat"}}`))

		v = runCheck(c, jsonResp(`{"id": 7, "user": {"login": "mallory"}}`), pullsCall())
		expectRefused(v, "pulls", "schema.enum", gate.InvalidResponse, false)
		Expect(v.Audit.KeywordLocation).To(Equal("../_components/github/v1/simple-user.schema.json#/properties/login/enum"))
		Expect(v.Audit.InstanceLocation).To(Equal("/user/login"))
		Expect(v.Audit.JSON()).NotTo(ContainSubstring(root))
		Expect(v.Audit.JSON()).NotTo(ContainSubstring("file://"))

		v = runCheck(c, jsonResp(`{"id": "7", "user": {"login": "octocat"}}`), pullsCall())
		expectRefused(v, "pulls", "schema.type", gate.InvalidResponse, false)
		Expect(v.Audit.KeywordLocation).To(Equal("../_components/github/v1/pull-request.schema.json#/properties/id/type"))
	})

	It("follows a component $ref with a JSON Pointer fragment", func() {
		dir := setup(`{"type": "object", "required": ["id", "user"], "properties": {
  "id": {"type": "integer"},
  "user": {"$ref": "../_components/github/v1/pull-request.schema.json#/properties/user"},
  "head": {"$ref": "../_components/github/v1/pull-request.schema.json#/properties/head"}}}`, pullsComponents)
		c, err := gate.LoadDir(dir, gate.Options{})
		Expect(err).NotTo(HaveOccurred())
		v := runCheck(c, jsonResp(`{"id": 1, "user": {"login": "hubot"}, "head": {"ref": "main"}}`), pullsCall())
		Expect(v.Admitted).To(BeTrue(), "audit: %s", v.Audit.JSON())
		v = runCheck(c, jsonResp(`{"id": 1, "user": {"login": "hubot"}, "head": {"ref": 3}}`), pullsCall())
		expectRefused(v, "pulls", "schema.type", gate.InvalidResponse, false)
		Expect(v.Audit.KeywordLocation).To(Equal("../_components/github/v1/pull-request.schema.json#/properties/head/properties/ref/type"))
	})

	It("loads a component cycle kept as $ref (a tree whose children are nodes)", func() {
		dir := setup(`{"type": "object", "required": ["id", "user"], "properties": {"id": {"type": "integer"},
  "user": {"type": "object", "properties": {"login": {"type": "string", "enum": ["octocat"]}}},
  "tree": {"$ref": "../_components/github/v1/node.schema.json"}}}`, map[string]string{
			"github/v1/node.schema.json":  `{"type": "object", "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "child.schema.json"}}}}`,
			"github/v1/child.schema.json": `{"$ref": "node.schema.json"}`,
		})
		c, err := gate.LoadDir(dir, gate.Options{})
		Expect(err).NotTo(HaveOccurred())
		v := runCheck(c, jsonResp(`{"id": 1, "user": {"login": "octocat"}, "tree": {"name": "a", "children": [{"name": "b", "children": [{"name": 3}]}]}}`), pullsCall())
		expectRefused(v, "pulls", "schema.type", gate.InvalidResponse, false)
		Expect(v.Audit.KeywordLocation).To(Equal("../_components/github/v1/node.schema.json#/properties/name/type"))
		Expect(v.Audit.InstanceLocation).To(Equal("/tree/children/0/children/0/name"))
	})

	DescribeTable("refuses a $ref that leaves the components, as outside the contract",
		func(ref string) {
			dir := setup(`{"type": "object", "properties": {"id": {"$ref": "`+ref+`"}}}`, pullsComponents)
			testtree.WriteIn(GinkgoT(), root, map[string]string{"schemas/other/x.json": `{"type": "integer"}`, "etc/passwd": `{}`})
			_, err := gate.LoadDir(dir, gate.Options{})
			ce := configError(err)
			Expect(errors.Is(err, gate.ErrOutsideContract)).To(BeTrue(), "%v", err)
			Expect(ce.File).To(Equal(filepath.Join(dir, "upstream.schema.json")))
			Expect(ce.Key).To(Equal("/properties/id/$ref"))
		},
		Entry("out of _components by ..", "../_components/../other/x.json"),
		Entry("a relative path out of the folders", "../../etc/passwd"),
		Entry("an encoded slash", "../_components/a/..%2f/x.json"),
		Entry("an encoded dot-dot", "../_components/github/%2e%2e/%2e%2e/other/x.json"),
		Entry("an absolute file URL", "file:///etc/passwd"),
		Entry("an absolute file URL into the components", "file:///_components/github/v1/simple-user.schema.json"),
		Entry("a component that does not exist", "../_components/github/v1/missing.schema.json"),
		Entry("a component folder too deep", "../_components/a/b/c/d/x.schema.json"),
		Entry("a component folder with a leading dot", "../_components/.hidden/x.schema.json"),
	)

	It("refuses an absolute file URL naming a component by its OS path", func() {
		ref := "file://" + filepath.ToSlash(schemas) + "/_components/github/v1/simple-user.schema.json"
		dir := setup(`{"type": "object", "properties": {"id": {"$ref": "`+ref+`"}}}`, pullsComponents)
		_, err := gate.LoadDir(dir, gate.Options{})
		Expect(errors.Is(err, gate.ErrOutsideContract)).To(BeTrue(), "%v", err)
		Expect(configError(err).Key).To(Equal("/properties/id/$ref"))
	})

	It("names the missing component by its shown path", func() {
		dir := setup(`{"$ref": "../_components/github/v1/missing.schema.json"}`, pullsComponents)
		_, err := gate.LoadDir(dir, gate.Options{})
		Expect(errors.Is(err, gate.ErrOutsideContract)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("no shared component " + filepath.Join(schemas, "_components") + "/github/v1/missing.schema.json"))
	})

	It("refuses a component $ref when there is no _components folder", func() {
		dir := setup(`{"$ref": "../_components/github/v1/pull-request.schema.json"}`, nil)
		_, err := gate.LoadDir(dir, gate.Options{})
		Expect(errors.Is(err, gate.ErrOutsideContract)).To(BeTrue(), "%v", err)
	})

	DescribeTable("refuses a component that reaches beyond its own folder, at its line",
		func(ref string) {
			comp := map[string]string{
				"github/v1/pull-request.schema.json": "{\"type\": \"object\",\n \"properties\": {\"user\": {\"$ref\": \"" + ref + "\"}}}",
				"github/v2/simple-user.schema.json":  `{"type": "object"}`,
			}
			testtree.WriteIn(GinkgoT(), schemas, map[string]string{"other/v1/x.schema.json": `{}`})
			dir := setup(`{"$ref": "../_components/github/v1/pull-request.schema.json"}`, comp)
			_, err := gate.LoadDir(dir, gate.Options{})
			ce := configError(err)
			Expect(errors.Is(err, gate.ErrOutsideContract)).To(BeTrue(), "%v", err)
			Expect(ce.File).To(Equal(filepath.Join(schemas, "_components", "github", "v1", "pull-request.schema.json")))
			line, col := at(comp["github/v1/pull-request.schema.json"], `"$ref"`)
			Expect([]int{ce.Line, ce.Column}).To(Equal([]int{line, col}))
			Expect(ce.Key).To(Equal("/properties/user/$ref"))
		},
		Entry("another version of its API", "../v2/simple-user.schema.json"),
		Entry("another API", "../../other/v1/x.schema.json"),
		Entry("back into a contract", "../../../pulls/agent.schema.json"),
		Entry("a URL", "https://example.com/x.json"),
	)

	It("refuses $id in a component", func() {
		dir := setup(`{"$ref": "../_components/github/v1/pull-request.schema.json"}`, map[string]string{
			"github/v1/pull-request.schema.json": `{"$id": "https://example.com/pr.json", "type": "object"}`,
		})
		_, err := gate.LoadDir(dir, gate.Options{})
		Expect(configError(err).Key).To(Equal("/$id"))
		Expect(errors.Is(err, gate.ErrNotStrict)).To(BeTrue(), "%v", err)
	})

	It("applies the strict checks to a component, naming its file and line", func() {
		comp := "{\"type\": \"object\",\n  \"properties\": {\"id\": {\"type\": \"string\", \"maxLenght\": 5}}}"
		dir := setup(`{"$ref": "../_components/github/v1/pull-request.schema.json"}`, map[string]string{"github/v1/pull-request.schema.json": comp})
		_, err := gate.LoadDir(dir, gate.Options{})
		Expect(errors.Is(err, gate.ErrNotStrict)).To(BeTrue(), "%v", err)
		file := filepath.Join(schemas, "_components", "github", "v1", "pull-request.schema.json")
		line, col := at(comp, `"maxLenght"`)
		Expect(err.Error()).To(HavePrefix(file + ":" + strconv.Itoa(line) + ":" + strconv.Itoa(col) + ": /properties/id/maxLenght: "))
	})

	It("refuses a symbolic link to a component file", func() {
		dir := setup(`{"$ref": "../_components/github/v1/pull-request.schema.json"}`, map[string]string{"github/v1/simple-user.schema.json": pullsComponents["github/v1/simple-user.schema.json"]})
		testtree.WriteIn(GinkgoT(), root, map[string]string{"elsewhere/pr.json": pullsComponents["github/v1/pull-request.schema.json"]})
		Expect(os.Symlink(filepath.Join(root, "elsewhere", "pr.json"), filepath.Join(schemas, "_components", "github", "v1", "pull-request.schema.json"))).To(Succeed())
		_, err := gate.LoadDir(dir, gate.Options{})
		Expect(errors.Is(err, fileio.ErrSymlink)).To(BeTrue(), "%v", err)
	})

	It("refuses a symbolic link in place of the _components folder", func() {
		dir := setup(`{"type": "object"}`, nil)
		testtree.WriteIn(GinkgoT(), root, map[string]string{"elsewhere/github/v1/pull-request.schema.json": pullsComponents["github/v1/pull-request.schema.json"]})
		Expect(os.Symlink(filepath.Join(root, "elsewhere"), filepath.Join(schemas, "_components"))).To(Succeed())
		_, err := gate.LoadDir(dir, gate.Options{})
		Expect(configError(err).File).To(Equal(filepath.Join(schemas, "_components")))
		Expect(errors.Is(err, fileio.ErrSymlink)).To(BeTrue(), "%v", err)
	})

	It("LoadAllDir loads only the contracts beside _components", func() {
		setup(`{"$ref": "../_components/github/v1/pull-request.schema.json"}`, pullsComponents)
		cs, err := gate.LoadAllDir(schemas, gate.Options{})
		Expect(err).NotTo(HaveOccurred())
		Expect(cs).To(HaveLen(1))
		Expect(cs[0].Tool()).To(Equal("pulls"))
	})

	Describe("through Load on an fs.FS", func() {
		fsys := func(upstream string, components map[string]string) fstest.MapFS {
			m := fstest.MapFS{
				"contracts/pulls/contract.yaml":        {Data: []byte(pullsManifest)},
				"contracts/pulls/agent.schema.json":    {Data: []byte(pullsAgent)},
				"contracts/pulls/upstream.schema.json": {Data: []byte(upstream)},
			}
			for k, v := range components {
				m["contracts/_components/"+k] = &fstest.MapFile{Data: []byte(v)}
			}
			return m
		}

		It("serves the components beside the contract folder", func() {
			c, err := gate.Load(fsys(`{"$ref": "../_components/github/v1/pull-request.schema.json"}`, pullsComponents), "contracts/pulls", gate.Options{})
			Expect(err).NotTo(HaveOccurred())
			v := runCheck(c, jsonResp(`{"id": 7, "user": {"login": "mallory"}}`), pullsCall())
			expectRefused(v, "pulls", "schema.enum", gate.InvalidResponse, false)
			Expect(v.Audit.KeywordLocation).To(Equal("../_components/github/v1/simple-user.schema.json#/properties/login/enum"))
			cs, err := gate.LoadAll(fsys(`{"$ref": "../_components/github/v1/pull-request.schema.json"}`, pullsComponents), "contracts", gate.Options{})
			Expect(err).NotTo(HaveOccurred())
			Expect(cs).To(HaveLen(1))
		})

		DescribeTable("refuses what leaves them",
			func(ref string) {
				m := fsys(`{"type": "object", "properties": {"id": {"$ref": "`+ref+`"}}}`, pullsComponents)
				m["contracts/other/x.json"] = &fstest.MapFile{Data: []byte(`{}`)}
				m["x.json"] = &fstest.MapFile{Data: []byte(`{}`)}
				_, err := gate.Load(m, "contracts/pulls", gate.Options{})
				Expect(errors.Is(err, gate.ErrOutsideContract)).To(BeTrue(), "%v", err)
				Expect(configError(err).File).To(Equal("contracts/pulls/upstream.schema.json"))
			},
			Entry("out of _components by ..", "../_components/../other/x.json"),
			Entry("the root", "../../x.json"),
			Entry("an encoded slash", "../_components/a/..%2f/x.json"),
			Entry("an absolute file URL", "file:///etc/passwd"),
			Entry("an absolute file URL into the components", "file:///contracts/_components/github/v1/simple-user.schema.json"),
			Entry("_components inside the folder", "_components/github/v1/simple-user.schema.json"),
		)

		It("names a component's strict problem by its path in the FS", func() {
			m := fsys(`{"$ref": "../_components/github/v1/pull-request.schema.json"}`, map[string]string{"github/v1/pull-request.schema.json": `{"nullable": true, "type": "string"}`})
			_, err := gate.Load(m, "contracts/pulls", gate.Options{})
			Expect(errors.Is(err, gate.ErrNotStrict)).To(BeTrue(), "%v", err)
			Expect(err.Error()).To(HavePrefix("contracts/_components/github/v1/pull-request.schema.json:1:2: /nullable: "))
		})
	})
})

// configError is err as a *gate.ConfigError, failing the spec when it is
// not one.
func configError(err error) *gate.ConfigError {
	GinkgoHelper()
	var ce *gate.ConfigError
	Expect(errors.As(err, &ce)).To(BeTrue(), "want a *gate.ConfigError, got %T: %v", err, err)
	return ce
}
