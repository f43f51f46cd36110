package mutate_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/internal/testtree"
	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/mutate"
)

// An imported contract: its own schema is a $ref to a shared component
// (schemas/_components, which other contracts use) with the objects on
// the projected path closed beside it, as airlock import openapi writes it.
var sharedTree = map[string]string{
	"schemas/_components/acme/v1/issue.schema.json": `{
  "type": "object",
  "required": ["state", "user", "labels"],
  "properties": {
    "state": {"type": "string"},
    "user": {"$ref": "user.schema.json"},
    "labels": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}}
  }
}`,
	"schemas/_components/acme/v1/user.schema.json": `{"type": "object", "properties": {"login": {"type": "string"}}}`,
	"schemas/issue/contract.yaml": `tool: issue
version: "1"
agent_schema: agent.schema.json
upstream_versions:
  v1:
    schema: upstream.schema.json
    projection: {state: /state, author: /user/login, labels: /labels/*/name}
`,
	"schemas/issue/upstream.schema.json": `{
  "$ref": "../_components/acme/v1/issue.schema.json",
  "properties": {
    "user": {"$ref": "../_components/acme/v1/user.schema.json", "unevaluatedProperties": false}
  },
  "unevaluatedProperties": false
}`,
	"schemas/issue/agent.schema.json": `{"type": "object", "additionalProperties": false,
 "properties": {"state": {"type": "string"}, "author": {"type": "string"}, "labels": {"type": "array", "items": {"type": "string"}}}}`,
	"fixtures/issue/defaults.meta.yaml":   "request: {id: req-1}\n",
	"fixtures/issue/v1/accepted/one.json": `{"state":"open","user":{"login":"octocat"},"labels":[{"name":"bug"}]}`,
}

var _ = Describe("hints on a contract built on shared components", func() {
	ids := []string{
		"values.empty_string@/state",
		"values.empty_string@/user/login",
		"values.empty_string@/labels/0/name",
		"structure.unexpected_property@/labels/0/airlock_injected",
	}

	It("name a place in the contract's own schema file, and following one literally kills its survivor", func() {
		dir := testtree.Tree(sharedTree)
		own := filepath.Join(dir, "schemas", "issue", "upstream.schema.json")
		components := filepath.Join(dir, "schemas", "_components")
		issueBefore, err := os.ReadFile(filepath.Join(components, "acme", "v1", "issue.schema.json"))
		Expect(err).NotTo(HaveOccurred())

		res := byID(mutateTreeStrict(dir, true))
		want := map[string][2]string{ // id: the own subschema's pointer, what to add under it
			ids[0]: {"", "/properties/state"},
			ids[1]: {"/properties/user", "/properties/login"},
			ids[2]: {"", "/properties/labels/items/properties/name"},
			ids[3]: {"", "/properties/labels/items"},
		}
		for _, id := range ids {
			r := res[id]
			Expect(r.Outcome).To(Or(Equal(mutate.Survived), Equal(mutate.Unseen)), "%s: %s", id, r.Problem)
			h := r.Location
			Expect(h).NotTo(BeNil(), id)
			Expect(h.File).To(Equal(own), "%s: the hint names the contract's own file, never a shared component", id)
			Expect(h.Pointer).To(Equal(want[id][0]), id)
			Expect(h.Add).To(Equal(want[id][1]), id)
			Expect(h.Shared).NotTo(BeNil(), id)
			Expect(h.Shared.File).To(HavePrefix(components), id)
			Expect(h.Shared.Line).To(BeNumerically(">", 0), id)
			Expect(r.HintText()).To(ContainSubstring("\nadd: "+strings.TrimPrefix(h.Add, "/")+": {"), id)
		}
		Expect(res[ids[0]].Location.Line).To(Equal(1))
		Expect(res[ids[1]].Location.Line).To(Equal(4))
		// Closing an object beside a shared subschema needs a $ref to it.
		Expect(res[ids[3]].Location.Ref).To(Equal("../_components/acme/v1/issue.schema.json#/properties/labels/items"))
		Expect(res[ids[0]].Location.Ref).To(BeEmpty())

		// Follow each hint literally: add the subschema at Pointer+Add in
		// the own file, the keyword in it (and the $ref when given).
		raw, err := os.ReadFile(own)
		Expect(err).NotTo(HaveOccurred())
		var doc map[string]any
		Expect(json.Unmarshal(raw, &doc)).To(Succeed())
		for _, id := range ids {
			h := res[id].Location
			keyword := map[string]any{"minLength": 1}
			if h.Ref != "" {
				keyword = map[string]any{"$ref": h.Ref, "unevaluatedProperties": false}
			}
			p, err := jsonpointer.Parse(h.Pointer + h.Add)
			Expect(err).NotTo(HaveOccurred())
			node := doc
			for _, tok := range p {
				next, ok := node[tok].(map[string]any)
				if !ok {
					next = map[string]any{}
					node[tok] = next
				}
				node = next
			}
			for k, v := range keyword {
				node[k] = v
			}
		}
		edited, err := json.MarshalIndent(doc, "", "  ")
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(own, edited, 0o644)).To(Succeed())

		rep := mutateTreeStrict(dir, true)
		Expect(rep.Skipped).To(BeEmpty(), "the fixture is still admitted")
		res = byID(rep)
		for _, id := range ids {
			Expect(res[id].Outcome).To(Equal(mutate.Killed), "%s: %s", id, res[id].Problem)
		}
		issueAfter, err := os.ReadFile(filepath.Join(components, "acme", "v1", "issue.schema.json"))
		Expect(err).NotTo(HaveOccurred())
		Expect(issueAfter).To(Equal(issueBefore))
	})
})
