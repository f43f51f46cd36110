package importer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/importer"
	"github.com/airlockdev/airlock/semantic"
)

// spec30 wraps components and the response schema of GET /thing into an
// OpenAPI document of the given version.
func spec(version, response, components string) *openapi3.T {
	doc := `{"openapi": "` + version + `", "info": {"title": "Test API", "version": "1.0"},
	  "paths": {"/thing": {"get": {"operationId": "getThing", "responses": {"200": {"description": "ok",
	    "content": {"application/json": {"schema": ` + response + `}}}}}}},
	  "components": {"schemas": {` + components + `}}}`
	l := openapi3.NewLoader()
	d, err := l.LoadFromData([]byte(doc))
	Expect(err).NotTo(HaveOccurred())
	return d
}

// converted returns the draft's documents by path: the contract's upstream
// schema under "upstream", each component under its file name.
func converted(d *importer.Draft) map[string]map[string]any {
	out := map[string]map[string]any{}
	b, err := json.Marshal(d.Version.Schema)
	Expect(err).NotTo(HaveOccurred())
	out["upstream"] = decode(b)
	for _, f := range d.Components {
		out[f.Path[strings.LastIndex(f.Path, "/")+1:]] = decode(f.Data)
	}
	return out
}

// decode reads a JSON object, numbers exact.
func decode(b []byte) map[string]any {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	Expect(dec.Decode(&m)).To(Succeed())
	return m
}

func draft(doc *openapi3.T, project ...importer.Field) *importer.Draft {
	d, err := importer.DraftFromOpenAPI(doc, importer.OpenAPIOptions{Operation: "getThing", Tool: "thing", Project: project, API: "test"})
	Expect(err).NotTo(HaveOccurred())
	return d
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	Expect(err).NotTo(HaveOccurred())
	return string(b)
}

var _ = Describe("the conversion of an OpenAPI schema to JSON Schema 2020-12", func() {
	DescribeTable("OpenAPI 3.0 keywords",
		func(schema, want string) {
			d := draft(spec("3.0.3", `{"type": "object", "properties": {"v": `+schema+`, "id": {"type": "string"}}}`, ""), importer.Field{Name: "id", Pointer: "/id"})
			Expect(jsonOf(converted(d)["upstream"]["properties"].(map[string]any)["v"])).To(MatchJSON(want))
		},
		Entry("nullable adds null to type", `{"type": "string", "nullable": true}`, `{"type": ["string", "null"]}`),
		Entry("nullable adds null to an enum", `{"type": "string", "enum": ["a", "b"], "nullable": true}`, `{"type": ["string", "null"], "enum": ["a", "b", null]}`),
		Entry("nullable beside allOf without a type: or null", `{"nullable": true, "allOf": [{"type": "object", "properties": {"a": {"type": "integer"}}}]}`,
			`{"anyOf": [{"type": "null"}, {"allOf": [{"type": "object", "properties": {"a": {"type": "integer"}}}]}]}`),
		Entry("exclusiveMinimum true becomes the bound", `{"type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 10}`,
			`{"type": "number", "exclusiveMinimum": 0, "maximum": 10}`),
		Entry("int32 bounds", `{"type": "integer", "format": "int32"}`, `{"type": "integer", "minimum": -2147483648, "maximum": 2147483647}`),
		Entry("int64 bounds, kept tighter ones", `{"type": "integer", "format": "int64", "minimum": 1}`, `{"type": "integer", "minimum": 1, "maximum": 9223372036854775807}`),
		Entry("float bounds", `{"type": "number", "format": "float"}`, `{"type": "number", "minimum": -3.4028234663852886e38, "maximum": 3.4028234663852886e38}`),
		Entry("double bounds", `{"type": "number", "format": "double"}`, `{"type": "number", "minimum": -1.7976931348623157e308, "maximum": 1.7976931348623157e308}`),
		Entry("a format airlock checks stays", `{"type": "string", "format": "date-time"}`, `{"type": "string", "format": "date-time"}`),
		Entry("a vendor format is dropped", `{"type": "string", "format": "repo.nwo"}`, `{"type": "string"}`),
		Entry("byte becomes contentEncoding", `{"type": "string", "format": "byte"}`, `{"type": "string", "contentEncoding": "base64"}`),
		Entry("example, externalDocs, xml and x-* are dropped", `{"type": "string", "example": "x", "externalDocs": {"url": "https://example.com"}, "xml": {"name": "v"}, "x-github": {"a": 1}, "description": "kept"}`,
			`{"type": "string", "description": "kept"}`),
		Entry("a pattern RE2 cannot compile is dropped", `{"type": "string", "pattern": "^(?!x)a$"}`, `{"type": "string"}`),
		Entry("an RE2 pattern stays", `{"type": "string", "pattern": "^[a-f0-9]{40}$"}`, `{"type": "string", "pattern": "^[a-f0-9]{40}$"}`),
		Entry("writeOnly members leave required", `{"type": "object", "required": ["a", "secret"], "properties": {"a": {"type": "string"}, "secret": {"type": "string", "writeOnly": true}}}`,
			`{"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}, "secret": {"type": "string", "writeOnly": true}}}`),
	)

	It("leaves a discriminator without mapping alone: the components' names are not what APIs send", func() {
		d := draft(spec("3.0.3", `{"type": "object", "properties": {"id": {"type": "string"}, "user": {"oneOf": [{"$ref": "#/components/schemas/public-user"}, {"$ref": "#/components/schemas/private-user"}],
		  "discriminator": {"propertyName": "user_view_type"}}}}`,
			`"public-user": {"type": "object", "properties": {"user_view_type": {"type": "string"}}}, "private-user": {"type": "object", "properties": {"user_view_type": {"type": "string"}}}`),
			importer.Field{Name: "id", Pointer: "/id"})
		Expect(jsonOf(converted(d)["upstream"]["properties"].(map[string]any)["user"])).To(MatchJSON(`{"oneOf": [
		  {"$ref": "../_components/test/1.0/public-user.schema.json"}, {"$ref": "../_components/test/1.0/private-user.schema.json"}]}`))
		Expect(d.Notes).To(ContainElement(ContainSubstring(`discriminator "user_view_type" has no mapping: not converted`)))
	})

	It("turns a discriminator's mapping into a const per branch", func() {
		d := draft(spec("3.0.3", `{"type": "object", "properties": {"id": {"type": "string"}, "pet": {"oneOf": [{"$ref": "#/components/schemas/Cat"}, {"$ref": "#/components/schemas/Dog"}],
		  "discriminator": {"propertyName": "kind", "mapping": {"cat": "#/components/schemas/Cat", "dog": "Dog", "hound": "Dog"}}}}}`,
			`"Cat": {"type": "object", "properties": {"kind": {"type": "string"}}}, "Dog": {"type": "object", "properties": {"kind": {"type": "string"}}}`),
			importer.Field{Name: "id", Pointer: "/id"})
		c := converted(d)
		Expect(jsonOf(c["upstream"]["properties"].(map[string]any)["pet"])).To(MatchJSON(`{"oneOf": [
		  {"$ref": "../_components/test/1.0/Cat.schema.json", "properties": {"kind": {"const": "cat"}}, "required": ["kind"]},
		  {"$ref": "../_components/test/1.0/Dog.schema.json", "properties": {"kind": {"enum": ["dog", "hound"]}}, "required": ["kind"]}]}`))
		Expect(c).To(HaveKey("Cat.schema.json"))
		Expect(c).To(HaveKey("Dog.schema.json"))
	})

	It("bundles only the reachable components, once each, and keeps a cycle as a $ref", func() {
		d := draft(spec("3.0.3", `{"$ref": "#/components/schemas/Node"}`,
			`"Node": {"type": "object", "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}, "owner": {"$ref": "#/components/schemas/User"}}},
			 "User": {"type": "object", "properties": {"login": {"type": "string"}}},
			 "Unused": {"type": "string"}`))
		c := converted(d)
		Expect(c).To(HaveLen(3)) // upstream, Node, User
		Expect(jsonOf(c["Node.schema.json"]["properties"].(map[string]any)["children"])).To(MatchJSON(`{"type": "array", "items": {"$ref": "Node.schema.json"}}`))
		Expect(jsonOf(c["Node.schema.json"]["properties"].(map[string]any)["owner"])).To(MatchJSON(`{"$ref": "User.schema.json"}`))
		Expect(c["upstream"]["$ref"]).To(Equal("../_components/test/1.0/Node.schema.json"))
	})

	It("reads OpenAPI 3.1 schemas as 2020-12: type lists, const, numeric exclusive bounds", func() {
		d := draft(spec("3.1.0", `{"type": "object", "properties": {"id": {"type": ["string", "null"]}, "n": {"type": "number", "exclusiveMinimum": 0}, "k": {"const": "x"}}}`, ""))
		c := converted(d)
		Expect(jsonOf(c["upstream"]["properties"])).To(MatchJSON(`{"id": {"type": ["string", "null"]}, "n": {"type": "number", "exclusiveMinimum": 0}, "k": {"const": "x"}}`))
	})

	It("projects the top-level scalars by default and derives a closed agent schema", func() {
		d := draft(spec("3.0.3", `{"type": "object", "required": ["id", "title"], "properties": {"id": {"type": "integer", "format": "int64"}, "title": {"type": "string"},
		  "htmlURL": {"type": "string", "format": "uri", "nullable": true}, "user": {"type": "object"}, "labels": {"type": "array", "items": {"type": "string"}}}}`, ""))
		Expect(d.Version.Projection).To(Equal([]importer.Field{{Name: "html_url", Pointer: "/htmlURL"}, {Name: "id", Pointer: "/id"}, {Name: "title", Pointer: "/title"}}))
		Expect(jsonOf(d.Agent)).To(MatchJSON(`{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "additionalProperties": false, "required": ["id", "title"],
		  "properties": {"html_url": {"type": ["string", "null"], "format": "uri", "maxLength": 4096},
		    "id": {"type": "integer", "minimum": -9223372036854775808, "maximum": 9223372036854775807},
		    "title": {"type": "string", "maxLength": 4096}}}`))
		Expect(d.Notes[0]).To(HavePrefix("projection chose 3 top-level scalar fields (html_url, id, title)"))
	})

	It("closes the objects on the projected path beside the shared component's $ref, and nothing else", func() {
		d := draft(spec("3.0.3", `{"$ref": "#/components/schemas/PR"}`,
			`"PR": {"type": "object", "properties": {"head": {"$ref": "#/components/schemas/Ref"}, "base": {"$ref": "#/components/schemas/Ref"}}},
			 "Ref": {"type": "object", "properties": {"sha": {"type": "string"}, "repo": {"type": "object", "properties": {"name": {"type": "string"}}}}}`),
			importer.Field{Name: "head_sha", Pointer: "/head/sha"}, importer.Field{Name: "repo", Pointer: "/head/repo/name"})
		c := converted(d)
		Expect(jsonOf(c["upstream"])).To(MatchJSON(`{"$schema": "https://json-schema.org/draft/2020-12/schema", "$ref": "../_components/test/1.0/PR.schema.json", "unevaluatedProperties": false,
		  "properties": {"head": {"$ref": "../_components/test/1.0/Ref.schema.json", "unevaluatedProperties": false,
		    "properties": {"repo": {"$ref": "../_components/test/1.0/Ref.schema.json#/properties/repo", "unevaluatedProperties": false}}}}}`))
		Expect(c["PR.schema.json"]).NotTo(HaveKey("unevaluatedProperties"))
		Expect(c["Ref.schema.json"]).NotTo(HaveKey("unevaluatedProperties"))
	})

	It("names a component file the same whatever the operation: a name that must be cleaned gets a hash of itself", func() {
		d := draft(spec("3.0.3", `{"type": "object", "properties": {"id": {"type": "string"}, "a": {"$ref": "#/components/schemas/été"}, "b": {"$ref": "#/components/schemas/t"}, "c": {"$ref": "#/components/schemas/a b"}}}`,
			`"été": {"type": "string"}, "t": {"type": "string"}, "a b": {"type": "string"}`), importer.Field{Name: "id", Pointer: "/id"})
		c := converted(d)
		Expect(c).To(HaveKey("t.schema.json"))
		Expect(c).To(HaveKey(MatchRegexp(`^t-[0-9a-f]{8}\.schema\.json$`)))
		Expect(c).To(HaveKey(MatchRegexp(`^a-b-[0-9a-f]{8}\.schema\.json$`)))
	})

	It("with --closed closes every object schema but an allOf branch, in a folder of its own", func() {
		doc := spec("3.0.3", `{"$ref": "#/components/schemas/Cat"}`,
			`"Pet": {"type": "object", "properties": {"name": {"type": "string"}}},
			 "Cat": {"allOf": [{"$ref": "#/components/schemas/Pet"}, {"type": "object", "properties": {"lives": {"type": "integer"}}}]},
			 "Tag": {"type": "object", "properties": {"k": {"type": "string"}}}`)
		doc.Components.Schemas["Cat"].Value.AllOf[1].Value.Properties["tag"] = openapi3.NewSchemaRef("#/components/schemas/Tag", doc.Components.Schemas["Tag"].Value)
		d, err := importer.DraftFromOpenAPI(doc, importer.OpenAPIOptions{Operation: "getThing", Tool: "thing", API: "test", Closing: importer.CloseAll})
		Expect(err).NotTo(HaveOccurred())
		c := converted(d)
		Expect(c["upstream"]["$ref"]).To(Equal("../_components/test/1.0.closed/Cat.schema.json"))
		Expect(c["Pet.schema.json"]).NotTo(HaveKey("unevaluatedProperties"), "an allOf branch stays open")
		Expect(c["Cat.schema.json"]["unevaluatedProperties"]).To(BeNil(), "Cat has no properties of its own")
		Expect(c["Tag.schema.json"]["unevaluatedProperties"]).To(Equal(false))
	})

	It("copies each $ref target into the agent schema once, under $defs: shared refs stay linear, recursion stays recursive", func() {
		// L7 reaches L0 through 10^7 paths of anyOf; each level is one def.
		comps := `"L0": {"type": "string"}`
		for i := 1; i <= 7; i++ {
			alts := strings.TrimSuffix(strings.Repeat(fmt.Sprintf(`{"$ref": "#/components/schemas/L%d"},`, i-1), 10), ",")
			comps += fmt.Sprintf(`, "L%d": {"anyOf": [%s]}`, i, alts)
		}
		comps += `, "Node": {"type": "object", "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}}}`
		d := draft(spec("3.0.3", `{"type": "object", "properties": {"f": {"$ref": "#/components/schemas/L7"}, "tree": {"$ref": "#/components/schemas/Node"}}}`, comps),
			importer.Field{Name: "f", Pointer: "/f"}, importer.Field{Name: "tree", Pointer: "/tree"})
		defs := d.Agent["$defs"].(map[string]any)
		Expect(defs).To(HaveLen(8)) // L0…L6, Node: the field's own schema (L7) is copied in place
		Expect(jsonOf(defs["Node"])).To(MatchJSON(`{"type": "object", "properties": {"name": {"type": "string", "maxLength": 4096},
		  "children": {"type": "array", "items": {"$ref": "#/$defs/Node", "unevaluatedProperties": false}}}}`))
		Expect(jsonOf(d.Agent["properties"].(map[string]any)["tree"])).To(MatchJSON(`{"type": "object", "unevaluatedProperties": false, "properties": {"name": {"type": "string", "maxLength": 4096},
		  "children": {"type": "array", "items": {"$ref": "#/$defs/Node", "unevaluatedProperties": false}}}}`))
		Expect(len(jsonOf(d.Agent))).To(BeNumerically("<", 4000))

		dir := GinkgoT().TempDir()
		_, err := importer.Write(context.Background(), d, importer.WriteOptions{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures")})
		Expect(err).NotTo(HaveOccurred())
		c, err := gate.LoadDir(filepath.Join(dir, "schemas", "thing"), gate.Options{})
		Expect(err).NotTo(HaveOccurred())
		check := func(body string) *gate.Verdict {
			v, err := c.Check(context.Background(), gate.Response{Status: 200, ContentType: "application/json", Body: strings.NewReader(body)}, gate.Call{Request: semantic.Request{ID: "r"}})
			Expect(err).NotTo(HaveOccurred())
			return v
		}
		Expect(check(`{"f": "x", "tree": {"name": "a", "children": [{"name": "b", "children": []}]}}`).Admitted).To(BeTrue())
		// A member the agent schema does not name, deep in the tree: refused
		// by the agent schema (the upstream's own objects are open).
		Expect(check(`{"f": "x", "tree": {"name": "a", "children": [{"name": "b", "extra": 1}]}}`).Reason).To(Equal("projection.agent_schema"))
	})

	It("walks a projected pointer through branches that all refer to one schema once per level", func() {
		// Each level is ten branches that all declare a as the level below:
		// 10^8 ways down /a/a/…, one schema per level.
		comps := `"P0": {"type": "string"}`
		for i := 1; i <= 8; i++ {
			branch := fmt.Sprintf(`{"type": "object", "required": ["a"], "properties": {"a": {"$ref": "#/components/schemas/P%d"}}}`, i-1)
			comps += fmt.Sprintf(`, "P%d": {"anyOf": [%s]}`, i, strings.TrimSuffix(strings.Repeat(branch+",", 10), ","))
		}
		d := draft(spec("3.0.3", `{"$ref": "#/components/schemas/P8"}`, comps), importer.Field{Name: "x", Pointer: "/a/a/a/a/a/a/a/a"})
		Expect(jsonOf(d.Agent["properties"])).To(MatchJSON(`{"x": {"type": "string", "maxLength": 4096}}`))
		Expect(d.Agent["required"]).To(Equal([]any{"x"}))
		Expect(len(jsonOf(d.Version.Schema))).To(BeNumerically("<", 4000))
	})

	It("says which operations are closest when the operation is unknown", func() {
		_, err := importer.DraftFromOpenAPI(spec("3.0.3", `{"type": "object"}`, ""), importer.OpenAPIOptions{Operation: "getThings", Tool: "thing"})
		Expect(err).To(MatchError(importer.ErrUnknownOperation))
		Expect(err.Error()).To(ContainSubstring("the closest: getThing (GET /thing)"))
		d, err := importer.DraftFromOpenAPI(spec("3.0.3", `{"type": "object", "properties": {"a": {"type": "string"}}}`, ""), importer.OpenAPIOptions{Operation: "get /thing", Tool: "thing"})
		Expect(err).NotTo(HaveOccurred())
		Expect(d.Version.Name).To(Equal("1.0"))
	})
})
