package mutate_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/internal/testtree"
	"github.com/airlockdev/airlock/mutate"
	"github.com/airlockdev/airlock/reports"
)

var _ = Describe("mutate's equivalent mutants", func() {
	It("takes no permission from a branch of an ancestor's oneOf (an MCP text result)", func() {
		dir := testtree.Tree(map[string]string{
			"schemas/inv/contract.yaml": "tool: inv\nversion: \"1\"\nprotocol: mcp\nresult: text\nagent_schema: agent.schema.json\nupstream_versions:\n  v1:\n    schema: upstream.schema.json\n    projection: {kinds: /items/*/kind}\n",
			"schemas/inv/upstream.schema.json": `{"type": "object", "required": ["items"], "properties": {"items": {"type": "array", "items": {"oneOf": [
				{"type": "object", "required": ["kind", "a"], "properties": {"kind": {"enum": ["x", ""]}, "a": {"type": "integer"}}},
				{"type": "object", "required": ["kind", "b"], "properties": {"kind": {"enum": ["y"]}, "b": {"type": "integer"}}}]}}}}`,
			"schemas/inv/agent.schema.json":           `{"type": "object", "additionalProperties": false, "properties": {"kinds": {"type": "array", "items": {"type": "string"}}}}`,
			"fixtures/inv/defaults.meta.yaml":         "request: {id: req-1}\nstatus: 0\n",
			"fixtures/inv/v1/accepted/two.json":       `{"content":[{"type":"text","text":"{\"items\":[{\"kind\":\"x\",\"a\":1},{\"kind\":\"y\",\"b\":2}]}"}]}`,
			"fixtures/inv/v1/accepted/two.agent.json": `{"tool":"inv","request_id":"req-1","outcome":"success","data":{"kinds":["x","y"]}}`,
		})
		rep := mutateTree(dir)
		res := byID(rep)
		Expect(res).To(HaveKey("values.empty_string@/content/0/text/items/1/kind"))
		r := res["values.empty_string@/content/0/text/items/1/kind"]
		Expect(r.Outcome).NotTo(Equal(mutate.Equivalent), r.Problem)
		Expect(r.Outcome).To(Equal(mutate.Killed), "%s: %s %s", r.Mutant.ID, r.Actual, r.Problem)
	})

	It("lists each equivalent mutant as an unchecked (JUnit skipped) testcase with why it was not run", func() {
		rep := mutateTree(testtree.Tree(memoFiles(nil)))
		n := 0
		for _, c := range rep.Cases() {
			if !strings.HasSuffix(c.Name, "#values.empty_string@/state") {
				continue
			}
			n++
			Expect(c.Status).To(Equal(reports.Unchecked))
			Expect(c.Actual).To(Equal("not run"))
			Expect(c.Message).To(HavePrefix("equivalent (not run): the schema allows \"\" at /state by its own terms (enum)"))
		}
		Expect(n).To(Equal(1))
	})
})
