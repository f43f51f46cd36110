package mutate_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/testtree"
	"github.com/airlockdev/airlock/mutate"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/runner"
)

// An open version of note_status: objects not closed, strings unbounded,
// no binding rule although the body echoes the request id.
const (
	openManifest = `tool: note_status
version: "1"
agent_schema: agent.schema.json
upstream_versions:
  v1:
    schema: upstream.schema.json
    projection:
      note_id: /note_id
      state: /state
`
	openUpstream = `{
  "type": "object",
  "required": ["request_id", "note_id", "state"],
  "properties": {
    "request_id": {"type": "string"},
    "note_id": {"type": "string"},
    "state": {"enum": ["open", "closed"]}
  }
}`
	openAgent = `{
  "type": "object",
  "required": ["note_id", "state"],
  "additionalProperties": false,
  "properties": {"note_id": {"type": "string"}, "state": {"enum": ["open", "closed"]}}
}`
)

func mutateTree(dir string) *mutate.Report {
	return mutateTreeStrict(dir, false)
}

func mutateTreeStrict(dir string, strict bool) *mutate.Report {
	rep, err := mutate.Mutate(context.Background(), mutate.Options{
		SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures"), Strict: strict,
	})
	Expect(err).NotTo(HaveOccurred())
	return rep
}

var _ = Describe("airlock mutate", func() {
	It("reports progress once per accepted or historical fixture mutated", func() {
		var mu sync.Mutex
		seen := map[int]bool{}
		total := 0
		_, err := mutate.Mutate(context.Background(), mutate.Options{SchemasDir: "../schemas", FixturesDir: "../fixtures", Filter: fixture.Filter{Tools: []string{"review_status"}},
			MaxPerFixture: 2, Workers: 3, Progress: func(d, t int) {
				mu.Lock()
				defer mu.Unlock()
				Expect(seen).NotTo(HaveKey(d), "each count once")
				seen[d], total = true, t
			}})
		Expect(err).NotTo(HaveOccurred())
		Expect(total).To(BeNumerically(">", 1))
		Expect(seen).To(HaveLen(total))
		Expect(seen).To(HaveKey(total))
	})

	It("gives the bundled contracts a score of 100% over at least 1,000 mutants", func() {
		opts := mutate.Options{SchemasDir: "../schemas", FixturesDir: "../fixtures"}
		rep, err := mutate.Mutate(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(len(rep.Results)).To(BeNumerically(">=", 1000))
		for _, s := range rep.Scores {
			Expect(s.Ratio()).To(Equal(1.0), "%s %s: %d/%d", s.Tool, s.UpstreamVersion, s.Killed, s.Generated)
		}
		Expect(rep.Survivors()).To(BeEmpty())
		bodies, err := mutate.Bodies(context.Background(), opts, rep.Results)
		Expect(err).NotTo(HaveOccurred())
		families := map[string]int{}
		for i, r := range rep.Results {
			families[r.Mutant.Family]++
			Expect(r.Mutant.Body).To(BeNil(), "%s: a result holds no body", r.Mutant.ID)
			if r.Mutant.Canary != "" {
				Expect(string(bodies[i])).To(ContainSubstring(r.Mutant.Canary), r.Mutant.ID)
			}
		}
		Expect(families).To(HaveKey(mutate.FamilyStructure))
		Expect(families).To(HaveKey(mutate.FamilyValues))
		Expect(families).To(HaveKey(mutate.FamilyBytes))
		Expect(families).To(HaveKey(mutate.FamilySemantic))
	})

	It("is deterministic: the same seed gives the same mutants", func() {
		bodies := func(dir string) (*mutate.Report, [][]byte) {
			opts := mutate.Options{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures")}
			rep, err := mutate.Mutate(context.Background(), opts)
			Expect(err).NotTo(HaveOccurred())
			b, err := mutate.Bodies(context.Background(), opts, rep.Results)
			Expect(err).NotTo(HaveOccurred())
			return rep, b
		}
		a, aBodies := bodies(testtree.Tree(testtree.Project()))
		b, bBodies := bodies(testtree.Tree(testtree.Project()))
		Expect(len(a.Results)).To(Equal(len(b.Results)))
		for i := range a.Results {
			Expect(a.Results[i].Mutant.ID).To(Equal(b.Results[i].Mutant.ID))
			Expect(a.Results[i].Mutant.Canary).To(Equal(b.Results[i].Mutant.Canary))
			Expect(aBodies[i]).To(Equal(bBodies[i]))
		}
	})

	It("kills every mutant of a closed contract", func() {
		rep := mutateTree(testtree.Tree(testtree.Project()))
		Expect(rep.Survivors()).To(BeEmpty())
	})

	It("shows the survivors of an open contract, each with the hint that closes it: those that reach the agent, and under --strict the unseen ones", func() {
		files := testtree.Project()
		files["schemas/note_status/contract.yaml"] = openManifest
		files["schemas/note_status/upstream.schema.json"] = openUpstream
		files["schemas/note_status/agent.schema.json"] = openAgent
		for k := range files {
			if filepath.Dir(k) == "fixtures/note_status/v1/near-miss" {
				delete(files, k)
			}
		}
		dir := testtree.Tree(files)
		var reaching []string
		for _, r := range mutateTree(dir).Survivors() {
			Expect(r.Outcome).To(Equal(mutate.Survived), "%s: %s", r.Mutant.ID, r.Problem)
			reaching = append(reaching, r.Mutant.ID)
		}
		// The projected note_id reaches the agent, and so does a swapped
		// request_id (a response to another call, though not projected);
		// other changes to request_id and an added member change nothing the
		// agent sees.
		Expect(reaching).To(ConsistOf("values.empty_string@/note_id", "values.overlong_string@/note_id", "semantic.bound_value_swapped@/request_id"))
		rep := mutateTreeStrict(dir, true)
		survivors := map[string]string{}
		for _, r := range rep.Survivors() {
			Expect(r.Outcome).To(BeElementOf(mutate.Survived, mutate.Unseen), "%s: %s", r.Mutant.ID, r.Problem)
			survivors[r.Mutant.ID] = r.Mutant.Hint
		}
		ids := make([]string, 0, len(survivors))
		for id := range survivors {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		Expect(ids).To(ConsistOf(
			"structure.unexpected_property@/airlock_injected",
			"structure.success_with_error@/error",
			"values.empty_string@/note_id",
			"values.empty_string@/request_id",
			"values.overlong_string@/note_id",
			"values.overlong_string@/request_id",
			"semantic.bound_value_swapped@/request_id",
		))
		// A member name differing only by case is refused by the parse
		// stage whatever the schema says.
		folded := 0
		for _, r := range rep.Results {
			if r.Mutant.Kind == "case_folded_name" {
				folded++
				Expect(r.Outcome).To(Equal(mutate.Killed), r.Mutant.ID)
				Expect(r.Actual).To(Equal(gate.ReasonFoldCollision), r.Mutant.ID)
			}
		}
		Expect(folded).To(Equal(3))
		Expect(survivors["structure.unexpected_property@/airlock_injected"]).To(ContainSubstring("additionalProperties: false"))
		Expect(survivors["values.overlong_string@/note_id"]).To(Equal("maxLength"))
		Expect(survivors["values.empty_string@/note_id"]).To(ContainSubstring("minLength"))
		Expect(survivors["semantic.bound_value_swapped@/request_id"]).To(ContainSubstring("binding rule"))
		Expect(rep.Scores).To(HaveLen(1))
		Expect(rep.Scores[0].Ratio()).To(BeNumerically("<", 1))
	})

	It("counts a text policy max_length as killing an over-long projected string", func() {
		files := testtree.Project()
		files["schemas/note_status/contract.yaml"] = openManifest + "text:\n  fields:\n    note_id: {max_length: 64}\n"
		files["schemas/note_status/upstream.schema.json"] = openUpstream
		files["schemas/note_status/agent.schema.json"] = openAgent
		for k := range files {
			if filepath.Dir(k) == "fixtures/note_status/v1/near-miss" {
				delete(files, k)
			}
		}
		rep := mutateTree(testtree.Tree(files))
		seen := false
		for _, r := range rep.Results {
			switch r.Mutant.ID {
			case "values.overlong_string@/note_id":
				seen = true
				Expect(r.Outcome).To(Equal(mutate.Killed), r.Problem)
				Expect(r.Actual).To(Equal(gate.ReasonTextPolicy))
				Expect(r.Family).To(Equal(mutate.FamilyProjection))
			case "values.overlong_string@/request_id": // not projected: no text policy, and unseen
				Expect(r.Outcome).To(Equal(mutate.Unseen))
			}
		}
		Expect(seen).To(BeTrue())
	})

	It("expects a case-folded name to be the schema's to refuse when the contract admits fold collisions", func() {
		files := testtree.Project()
		files["schemas/note_status/contract.yaml"] = openManifest + "limits: {member_fold_collision: false}\n"
		files["schemas/note_status/upstream.schema.json"] = openUpstream
		files["schemas/note_status/agent.schema.json"] = openAgent
		for k := range files {
			if filepath.Dir(k) == "fixtures/note_status/v1/near-miss" {
				delete(files, k)
			}
		}
		rep := mutateTreeStrict(testtree.Tree(files), true) // an added member is unseen
		var ids []string
		for _, r := range rep.Survivors() {
			if r.Mutant.Kind == "case_folded_name" {
				ids = append(ids, r.Mutant.ID)
				Expect(r.Mutant.Hint).To(ContainSubstring("additionalProperties: false"))
			}
		}
		Expect(ids).To(ConsistOf("bytes.case_folded_name@/Note_id", "bytes.case_folded_name@/Request_id", "bytes.case_folded_name@/State"))
	})

	It("writes survivors as near-miss fixtures with sidecars, never overwriting a file", func() {
		files := testtree.Project()
		files["schemas/note_status/upstream.schema.json"] = openUpstream
		dir := testtree.Tree(files)
		opts := mutate.Options{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures")}
		rep, err := mutate.Mutate(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Survivors()).NotTo(BeEmpty())
		out := filepath.Join(dir, "written")
		written, skipped, err := mutate.WriteMutants(context.Background(), opts, out, rep.Survivors())
		Expect(err).NotTo(HaveOccurred())
		Expect(skipped).To(BeEmpty())
		Expect(written).To(HaveLen(len(rep.Survivors())))
		side := written[0][:len(written[0])-len(filepath.Ext(written[0]))] + fixture.MetaSuffix
		meta, err := os.ReadFile(side)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(meta)).To(ContainSubstring("expect: {outcome: refused, reason:"))
		before, _ := os.ReadFile(written[0])

		// A second write skips every file and changes none.
		Expect(os.WriteFile(written[0], []byte("edited by hand"), 0o644)).To(Succeed())
		written2, skipped2, err := mutate.WriteMutants(context.Background(), opts, out, rep.Survivors())
		Expect(err).NotTo(HaveOccurred())
		Expect(written2).To(BeEmpty())
		Expect(skipped2).To(HaveLen(len(rep.Survivors())))
		after, _ := os.ReadFile(written[0])
		Expect(string(after)).To(Equal("edited by hand"))
		Expect(before).NotTo(BeEmpty())

		// The written tree is a valid fixture tree: the survivors fail as near-misses.
		res, err := runner.Run(context.Background(), runner.Options{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: out})
		Expect(err).NotTo(HaveOccurred())
		_, failed, _ := res.Run.Counts()
		Expect(failed).To(BeNumerically(">", 0))
	})
})

var _ = Describe("airlock mutate on an MCP contract", func() {
	It("mutates structuredContent, not the CallToolResult wrapper, and kills every mutant of a closed schema", func() {
		dir := testtree.Tree(map[string]string{
			"schemas/weather/contract.yaml": "tool: weather\nversion: \"1\"\nprotocol: mcp\nagent_schema: agent.schema.json\nupstream_versions:\n  v1:\n    schema: upstream.schema.json\n    projection: {temperature: /temperature, conditions: /conditions}\n",
			"schemas/weather/upstream.schema.json": `{"type": "object", "required": ["temperature", "conditions"], "additionalProperties": false,
				"properties": {"temperature": {"type": "integer", "minimum": -90, "maximum": 60}, "conditions": {"enum": ["Sunny", "Cloudy", "Rain"]}}}`,
			"schemas/weather/agent.schema.json": `{"type": "object", "additionalProperties": false,
				"properties": {"temperature": {"type": "integer"}, "conditions": {"enum": ["Sunny", "Cloudy", "Rain"]}}}`,
			"fixtures/weather/defaults.meta.yaml":             "request: {id: req-1}\nstatus: 0\n",
			"fixtures/weather/v1/accepted/chicago.json":       `{"content":[{"type":"text","text":"{\"temperature\":21,\"conditions\":\"Cloudy\"}"}],"structuredContent":{"temperature":21,"conditions":"Cloudy"}}`,
			"fixtures/weather/v1/accepted/chicago.agent.json": `{"tool":"weather","request_id":"req-1","outcome":"success","data":{"conditions":"Cloudy","temperature":21}}`,
		})
		rep := mutateTree(dir)
		Expect(rep.Results).NotTo(BeEmpty())
		Expect(rep.Survivors()).To(BeEmpty())
		for _, r := range rep.Results {
			if r.Mutant.Family != mutate.FamilyBytes || r.Mutant.Kind == "case_folded_name" {
				Expect(r.Mutant.Pointer).To(HavePrefix("/structuredContent"), r.Mutant.ID)
			}
		}
	})

	It("mutates the JSON text of a text result and writes each mutant back into the text block", func() {
		dir := testtree.Tree(map[string]string{
			"schemas/weather/contract.yaml": "tool: weather\nversion: \"1\"\nprotocol: mcp\nresult: text\nagent_schema: agent.schema.json\nupstream_versions:\n  v1:\n    schema: upstream.schema.json\n    projection: {temperature: /temperature, conditions: /conditions}\n",
			"schemas/weather/upstream.schema.json": `{"type": "object", "required": ["temperature", "conditions"], "additionalProperties": false,
				"properties": {"temperature": {"type": "integer", "minimum": -90, "maximum": 60}, "conditions": {"enum": ["Sunny", "Cloudy", "Rain"]}}}`,
			"schemas/weather/agent.schema.json": `{"type": "object", "additionalProperties": false,
				"properties": {"temperature": {"type": "integer"}, "conditions": {"enum": ["Sunny", "Cloudy", "Rain"]}}}`,
			"fixtures/weather/defaults.meta.yaml":             "request: {id: req-1}\nstatus: 0\n",
			"fixtures/weather/v1/accepted/chicago.json":       `{"content":[{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"text","text":"{\"temperature\":21,\"conditions\":\"Cloudy\"}"}]}`,
			"fixtures/weather/v1/accepted/chicago.agent.json": `{"tool":"weather","request_id":"req-1","outcome":"success","data":{"conditions":"Cloudy","temperature":21}}`,
		})
		rep := mutateTree(dir)
		Expect(rep.Survivors()).To(BeEmpty())
		bodies, err := mutate.Bodies(context.Background(), mutate.Options{SchemasDir: filepath.Join(dir, "schemas")}, rep.Results)
		Expect(err).NotTo(HaveOccurred())
		kinds := map[string]bool{}
		for i, r := range rep.Results {
			kinds[r.Mutant.Kind] = true
			if r.Mutant.Family != mutate.FamilyBytes || r.Mutant.Kind == "case_folded_name" || strings.HasPrefix(r.Mutant.Kind, "text_") {
				Expect(r.Mutant.Pointer).To(HavePrefix("/content/1/text"), r.Mutant.ID)
				Expect(string(bodies[i])).To(HavePrefix(`{"content":[{`), "%s: still a CallToolResult", r.Mutant.ID)
			}
		}
		Expect(kinds).To(HaveKey("unexpected_property"))
		Expect(kinds).To(HaveKey("text_truncated"))
		Expect(kinds).To(HaveKey("text_second_value"))
		Expect(kinds).To(HaveKey("case_folded_name"))
		var dup []string
		for _, r := range rep.Results {
			if r.Mutant.Kind == "duplicate_member" {
				dup = append(dup, r.Mutant.Pointer)
			}
		}
		Expect(dup).To(ContainElements("/content/1/text/temperature", "/content/1/text/conditions"), "duplicates inside the text, not only in the wrapper")
	})
})

var _ = Describe("airlock mutate with nothing to mutate", func() {
	It("is a configuration error when no selected fixture is admitted", func() {
		files := testtree.Project()
		files["fixtures/note_status/v1/accepted/open.json"] = `{"bad":1}`
		delete(files, "fixtures/note_status/v1/accepted/open.agent.json")
		dir := testtree.Tree(files)
		_, err := mutate.Mutate(context.Background(), mutate.Options{
			SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures"),
		})
		var ce *gate.ConfigError
		Expect(errors.As(err, &ce)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("none of the 1 selected fixtures was admitted"))
		Expect(err.Error()).To(ContainSubstring("not admitted (schema.required)"))
	})
})
