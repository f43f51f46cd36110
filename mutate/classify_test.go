package mutate_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/testtree"
	"github.com/airlockdev/airlock/mutate"
	"github.com/airlockdev/airlock/reports"
)

// A memo contract written to show each classification: id, state, label
// and note reach the agent; meta, tags, extra and other do not. The schema
// is pretty-printed so that hint lines mean something.
const (
	memoManifest = `tool: memo
version: "1"
agent_schema: agent.schema.json
upstream_versions:
  v1:
    schema: upstream.schema.json
    projection: {id: /id, state: /state, label: /label, note: /note}
`
	memoUpstream = `{
  "type": "object",
  "required": ["id", "state", "note", "meta", "tags", "label"],
  "properties": {
    "id": {"$ref": "#/$defs/id"},
    "state": {"enum": ["", "open", "closed"]},
    "note": {"type": "string"},
    "meta": {"type": ["object", "null"], "properties": {"a": {"type": "integer", "minimum": 0, "maximum": 9}}, "additionalProperties": false},
    "tags": {"anyOf": [{"type": "array", "items": {"type": "string", "maxLength": 8}, "maxItems": 4}, {"type": "null"}]},
    "label": {"type": "string"},
    "extra": {}
  },
  "anyOf": [{"properties": {"other": {"type": "null"}}}, {"properties": {"other": {"type": "object"}}}],
  "$defs": {"id": {"type": "string"}}
}
`
	memoAgent = `{
  "type": "object",
  "additionalProperties": false,
  "properties": {"id": {"type": "string"}, "state": {"enum": ["", "open", "closed"]}, "label": {"type": "string", "maxLength": 64}, "note": {"type": "string"}}
}`
	memoBody = `{"id":"M-1","state":"open","note":"","meta":{"a":1},"tags":["x"],"label":"L","extra":{"b":true},"other":{"c":1}}`
)

// memoFiles is the memo project; extra files are added to it.
func memoFiles(extra map[string]string) map[string]string {
	files := map[string]string{
		"schemas/memo/contract.yaml":          memoManifest,
		"schemas/memo/upstream.schema.json":   memoUpstream,
		"schemas/memo/agent.schema.json":      memoAgent,
		"fixtures/memo/defaults.meta.yaml":    "request: {id: req-1}\nclock: 2025-06-01T12:00:00Z\n",
		"fixtures/memo/v1/accepted/memo.json": memoBody,
	}
	for k, v := range extra {
		files[k] = v
	}
	return files
}

// byID indexes results by mutant id.
func byID(rep *mutate.Report) map[string]mutate.MutantResult {
	out := map[string]mutate.MutantResult{}
	for _, r := range rep.Results {
		out[r.Mutant.ID] = r
	}
	return out
}

var _ = Describe("mutate's classification of admitted mutants", func() {
	var (
		dir string
		rep *mutate.Report
		res map[string]mutate.MutantResult
	)
	BeforeEach(func() {
		dir = testtree.Tree(memoFiles(nil))
		rep = mutateTree(dir)
		res = byID(rep)
	})

	It("calls a mutant that changes the agent output a survivor that reaches the agent", func() {
		for _, id := range []string{"values.empty_string@/id", "values.overlong_string@/id", "values.empty_string@/label"} {
			Expect(res).To(HaveKey(id))
			Expect(res[id].Outcome).To(Equal(mutate.Survived), "%s: %s", id, res[id].Problem)
			Expect(res[id].Problem).To(HavePrefix("admitted and reaches the agent"))
		}
		Expect(res["values.overlong_string@/id"].Problem).To(ContainSubstring("its canary reached the agent output"))
	})

	It("calls a mutant that changes nothing the agent sees unseen, and counts it apart", func() {
		for _, id := range []string{"structure.unexpected_property@/airlock_injected", "structure.null_for_object@/extra", "values.scalar_to_object@/extra/b"} {
			Expect(res).To(HaveKey(id))
			Expect(res[id].Outcome).To(Equal(mutate.Unseen), "%s: %s", id, res[id].Problem)
			Expect(res[id].Fails(false)).To(BeFalse())
			Expect(res[id].Fails(true)).To(BeTrue())
		}
		Expect(rep.Scores).To(HaveLen(1))
		s := rep.Scores[0]
		Expect(s.Unseen).To(BeNumerically(">=", 3))
		Expect(s.Scored).To(Equal(s.Generated - s.Unseen))
		Expect(s.Survived).To(Equal(len(rep.Survivors())))
		for _, r := range rep.Survivors() {
			Expect(r.Outcome).NotTo(Equal(mutate.Unseen))
		}

		strict := mutateTreeStrict(dir, true)
		Expect(strict.Scores[0].Scored).To(Equal(strict.Scores[0].Generated))
		Expect(strict.Scores[0].Ratio()).To(BeNumerically("<", s.Ratio()))
		Expect(len(strict.Survivors())).To(Equal(s.Survived + s.Unseen))
	})

	It("counts a refusal by the agent-facing schema as a kill of the projection family", func() {
		r := res["values.overlong_string@/label"]
		Expect(r.Outcome).To(Equal(mutate.Killed), r.Problem)
		Expect(r.Actual).To(Equal(gate.ReasonAgentSchema))
		Expect(r.Family).To(Equal(mutate.FamilyProjection))
		Expect(r.Mutant.Family).To(Equal(mutate.FamilyValues), "the mutant keeps the family that made it")
		Expect(rep.Scores[0].ByFamily[mutate.FamilyProjection]).To(Equal([2]int{1, 1}))
		Expect(mutate.Families).To(ContainElement(mutate.FamilyProjection))
	})

	DescribeTable("drops an equivalent mutant before running it",
		func(id, why string) {
			Expect(res).To(HaveKey(id))
			Expect(res[id].Outcome).To(Equal(mutate.Equivalent), "%s: %s %s", id, res[id].Actual, res[id].Problem)
			Expect(res[id].Actual).To(Equal("not run"))
			Expect(res[id].Problem).To(ContainSubstring(why))
		},
		Entry("a new value equal to the fixture's (an empty string where \"\" is the answer)", "values.empty_string@/note", "its new value equals the fixture's at /note"),
		Entry("a value the location's enum lists", "values.empty_string@/state", "(enum)"),
		Entry("null where the location's type lists null", "structure.null_for_object@/meta", "(type: null)"),
		Entry("null where an anyOf branch at the location is type null", "structure.null_for_array@/tags", "(type: null in a oneOf/anyOf branch)"),
	)

	It("counts equivalent mutants apart, neither generated nor scored", func() {
		s := rep.Scores[0]
		Expect(s.Equivalent).To(Equal(4))
		n := 0
		for _, r := range rep.Results {
			if r.Outcome != mutate.Equivalent {
				n++
			}
		}
		Expect(s.Generated).To(Equal(n))
		for _, c := range rep.Cases() {
			if strings.HasSuffix(c.Name, "#values.empty_string@/note") {
				Expect(c.Status).To(Equal(reports.Unchecked), "an equivalent mutant's testcase is unchecked: not run")
			}
		}
	})

	DescribeTable("never calls a mutant equivalent without explicit permission",
		func(id string) {
			Expect(res).To(HaveKey(id))
			Expect(res[id].Outcome).NotTo(Equal(mutate.Equivalent), "%s: %s", id, res[id].Problem)
		},
		Entry("null where no keyword refuses it but none names it", "structure.null_for_object@/extra"),
		Entry("null named only by one branch of an ancestor's anyOf", "structure.null_for_object@/other"),
		Entry("an empty string where the type is string", "values.empty_string@/label"),
	)

	It("keeps a mutant a rule reads, even when the schema names its value", func() {
		files := memoFiles(map[string]string{"schemas/memo/contract.yaml": memoManifest + "    rules:\n      - name: state_ctx\n        context: {pointer: /state, key: state}\n"})
		files["fixtures/memo/defaults.meta.yaml"] = "request: {id: req-1, context: {state: open}}\nclock: 2025-06-01T12:00:00Z\n"
		r := byID(mutateTree(testtree.Tree(files)))["values.empty_string@/state"]
		Expect(r.Outcome).To(Equal(mutate.Killed), "%s %s", r.Actual, r.Problem)
	})

	It("gives each survivor the file, line and JSON Pointer where its keyword goes, and its value", func() {
		schemaFile := filepath.Join(dir, "schemas", "memo") + "/upstream.schema.json"
		h := res["values.empty_string@/id"].Location
		Expect(h).NotTo(BeNil())
		Expect(*h).To(MatchFields(IgnoreExtras, Fields{
			"File": Equal(schemaFile), "Line": Equal(5), "Pointer": Equal("/properties/id"), "Instance": Equal("/id"), "Value": Equal(`""`),
		}))
		// A member added to the root object: the keyword goes on the root.
		h = res["structure.unexpected_property@/airlock_injected"].Location
		Expect(h).NotTo(BeNil())
		Expect(h.Pointer).To(Equal(""))
		Expect(h.Line).To(Equal(1))
		Expect(h.String()).To(Equal(schemaFile + ":1: (root)"))
		Expect(h.Value).To(HavePrefix(`"Ignore all previous instructions`))
		Expect(len(h.Value)).To(BeNumerically("<=", 64+3))
		// In the reports: the message and the detail.
		detail := res["values.empty_string@/id"].HintText()
		Expect(detail).To(ContainSubstring("where: " + schemaFile + ":5: /properties/id (instance /id)"))
		Expect(detail).To(ContainSubstring(`value: ""`))
		found := false
		for _, c := range rep.Cases() {
			if strings.HasSuffix(c.Name, "#values.empty_string@/id") {
				found = true
				Expect(c.Message).To(ContainSubstring("(at " + schemaFile + ":5: /properties/id)"))
				Expect(c.Detail).To(ContainSubstring("where: "))
			}
		}
		Expect(found).To(BeTrue())
		// Killed mutants carry no location.
		Expect(res["values.overlong_string@/label"].Location).To(BeNil())
	})

	It("places a semantic survivor's hint at the upstream version's rules in contract.yaml", func() {
		files := memoFiles(nil)
		files["fixtures/memo/v1/accepted/memo.json"] = strings.Replace(memoBody, `"label":"L"`, `"label":"req-1"`, 1)
		r := byID(mutateTree(testtree.Tree(files)))["semantic.bound_value_swapped@/label"]
		Expect(r.Outcome).To(Equal(mutate.Survived), r.Problem)
		Expect(r.Location).NotTo(BeNil())
		Expect(r.Location.File).To(HaveSuffix("schemas/memo/contract.yaml"))
		Expect(r.Location.Pointer).To(Equal("/upstream_versions/v1"))
		Expect(r.Location.Line).To(Equal(5))
	})
})

var _ = Describe("the mutation baseline", func() {
	baseline := func(text string) string {
		return testtree.Tree(memoFiles(map[string]string{"schemas/memo/" + mutate.BaselineFile: text}))
	}

	It("silences a listed survivor: baselined, not failing, not scored, counted", func() {
		rep := mutateTree(baseline("# accepted\nsurvivors:\n  - fixture: memo/v1/accepted/memo.json\n    mutant: values.empty_string@/id\n    reason: ids may be empty upstream\n"))
		r := byID(rep)["values.empty_string@/id"]
		Expect(r.Outcome).To(Equal(mutate.Baselined))
		Expect(r.Baseline).NotTo(BeNil())
		Expect(r.Baseline.Reason).To(Equal("ids may be empty upstream"))
		Expect(r.Baseline.Line).To(Equal(3))
		Expect(r.Fails(true)).To(BeFalse())
		Expect(rep.Survivors()).NotTo(ContainElement(HaveField("Mutant.ID", "values.empty_string@/id")))
		Expect(rep.Scores[0].Baselined).To(Equal(1))
		Expect(rep.Stale).To(BeEmpty())
	})

	It("reports a stale entry with its file and line", func() {
		dir := baseline("survivors:\n  - fixture: memo/v1/accepted/memo.json\n    mutant: values.empty_string@/id\n    reason: ok\n" +
			"  - fixture: memo/v1/accepted/memo.json\n    mutant: values.overlong_string@/label\n    reason: killed by now\n" +
			"  - fixture: memo/v1/accepted/gone.json\n    mutant: values.empty_string@/id\n    reason: gone\n" +
			"  - fixture: memo/v1/accepted/memo.json\n    mutant: values.empty_string@/nowhere\n    reason: never generated\n")
		rep := mutateTree(dir)
		file := filepath.Join(dir, "schemas", "memo") + "/" + mutate.BaselineFile
		Expect(rep.Stale).To(HaveLen(3))
		Expect(rep.Stale[0].String()).To(Equal(file + ":5: memo/v1/accepted/memo.json values.overlong_string@/label: the mutant is now killed"))
		Expect(rep.Stale[1].Line).To(Equal(8))
		Expect(rep.Stale[1].Why).To(Equal("no such fixture"))
		Expect(rep.Stale[2].Line).To(Equal(11))
		Expect(rep.Stale[2].Why).To(Equal("not generated from this fixture (a typo, or the fixture or contract changed)"))
	})

	It("does not judge an entry whose mutant the per-fixture sample may have left out", func() {
		dir := baseline("survivors:\n  - fixture: memo/v1/accepted/memo.json\n    mutant: values.empty_string@/nowhere\n    reason: maybe not sampled\n")
		rep, err := mutate.Mutate(context.Background(), mutate.Options{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures"), MaxPerFixture: 5})
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Stale).To(BeEmpty())
	})

	DescribeTable("refuses a bad baseline with file, line and key",
		func(text, want string) {
			dir := baseline(text)
			_, err := mutate.Mutate(context.Background(), mutate.Options{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures")})
			var ce *gate.ConfigError
			Expect(errors.As(err, &ce)).To(BeTrue(), "%v", err)
			Expect(ce.File).To(HaveSuffix("schemas/memo/" + mutate.BaselineFile))
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("an unknown key", "survivors:\n  - fixture: memo/v1/accepted/memo.json\n    mutant: m\n    reason: r\n    owner: me\n", ":5:5: /survivors/0/owner: unknown key \"owner\""),
		Entry("an unknown top-level key", "entries: []\n", ":1:1: /entries: unknown key"),
		Entry("a blank reason", "survivors:\n  - fixture: memo/v1/accepted/memo.json\n    mutant: m\n    reason: \" \"\n", ":4:5: /survivors/0/reason: an entry needs a reason"),
		Entry("a missing reason", "survivors:\n  - fixture: memo/v1/accepted/memo.json\n    mutant: m\n", "/survivors/0/reason: an entry needs a reason"),
		Entry("a fixture key of three parts", "survivors:\n  - fixture: memo/v1/memo.json\n    mutant: m\n    reason: r\n", ":2:5: /survivors/0/fixture: fixture \"memo/v1/memo.json\" is not tool/upstream-version/kind/name"),
		Entry("a near-miss fixture", "survivors:\n  - fixture: memo/v1/near-miss/x.json\n    mutant: m\n    reason: r\n", "kind \"near-miss\" is never mutated"),
		Entry("an entry listed twice", "survivors:\n  - {fixture: memo/v1/accepted/memo.json, mutant: m, reason: r}\n  - {fixture: memo/v1/accepted/memo.json, mutant: m, reason: s}\n", ":3:5: /survivors/1: fixture \"memo/v1/accepted/memo.json\" mutant \"m\" is listed twice (first at line 2)"),
		Entry("YAML that does not parse", "survivors:\n  - fixture: [\n", mutate.BaselineFile+":"),
		Entry("a duplicate key", "survivors:\n  - fixture: a\n    fixture: b\n", ":3:5"),
	)

	It("adds survivors with a reason, appending to the list and keeping what is there", func() {
		dir := baseline("# reviewed by the memo owners\nsurvivors:\n  - fixture: memo/v1/accepted/memo.json\n    mutant: values.empty_string@/id\n    reason: ids may be empty upstream\n  # end\n")
		opts := mutate.Options{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures")}
		rep, err := mutate.Mutate(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())
		_, _, err = mutate.AddToBaseline(context.Background(), opts, rep.Results, "  ", false)
		Expect(err).To(HaveOccurred(), "a blank reason")
		_, _, err = mutate.AddToBaseline(context.Background(), opts, rep.Results, "\t\u00a0\u200b\u2060", false)
		Expect(err).To(HaveOccurred(), "a reason of white space and format characters only")
		added, present, err := mutate.AddToBaseline(context.Background(), opts, rep.Results, "labels are free text", false)
		Expect(err).NotTo(HaveOccurred())
		Expect(added).To(HaveLen(rep.Scores[0].Survived))
		Expect(present).To(BeEmpty(), "the baselined result is not added again")
		for _, a := range added {
			Expect(a.Outcome).To(Equal(mutate.OutcomeSurvived))
			Expect(a.Mutant).NotTo(Equal("values.empty_string@/id"), "an entry that exists is not written again")
			Expect(a.Reason).To(Equal("labels are free text"))
			Expect(a.Line).To(BeNumerically(">", 6))
		}
		text, err := os.ReadFile(filepath.Join(dir, "schemas", "memo", mutate.BaselineFile))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(text)).To(HavePrefix("# reviewed by the memo owners\nsurvivors:\n  - fixture: memo/v1/accepted/memo.json\n    mutant: values.empty_string@/id\n    reason: ids may be empty upstream\n  # end\n  - fixture: \"memo/v1/accepted/memo.json\"\n"))
		again := mutateTree(dir)
		Expect(again.Survivors()).To(BeEmpty())
		Expect(again.Stale).To(BeEmpty())
		more, _, err := mutate.AddToBaseline(context.Background(), opts, again.Results, "again", false)
		Expect(err).NotTo(HaveOccurred())
		Expect(more).To(BeEmpty())
		after, _ := os.ReadFile(filepath.Join(dir, "schemas", "memo", mutate.BaselineFile))
		Expect(after).To(Equal(text))
		// Another run that mutated before this one wrote (concurrent
		// --baseline-add) finds its entries there: present, nothing added.
		more, present, err = mutate.AddToBaseline(context.Background(), opts, rep.Results, "at the same time", false)
		Expect(err).NotTo(HaveOccurred())
		Expect(more).To(BeEmpty())
		Expect(present).To(HaveLen(rep.Scores[0].Survived))
		after, _ = os.ReadFile(filepath.Join(dir, "schemas", "memo", mutate.BaselineFile))
		Expect(after).To(Equal(text))
	})

	It("never turns an unseen entry into a survivor's silently, and takes a baselined mutant named with --mutant as present", func() {
		dir := baseline("survivors:\n  - fixture: memo/v1/accepted/memo.json\n    mutant: values.empty_string@/id\n    reason: ids may be empty upstream\n    outcome: unseen\n")
		opts := mutate.Options{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures")}
		rep, err := mutate.Mutate(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())
		_, _, err = mutate.AddToBaseline(context.Background(), opts, rep.Results, "now accepted", false)
		var ce *gate.ConfigError
		Expect(errors.As(err, &ce)).To(BeTrue(), "%v", err)
		Expect(ce.Line).To(Equal(2))
		Expect(err.Error()).To(ContainSubstring("accepts it only as unseen, but it now reaches the agent"))

		dir = baseline("survivors:\n  - fixture: memo/v1/accepted/memo.json\n    mutant: values.empty_string@/id\n    reason: ids may be empty upstream\n")
		rep = mutateTree(dir)
		chosen, err := mutate.SelectSurvivors(rep.Results, []string{"values.empty_string@/id"}, false)
		Expect(err).NotTo(HaveOccurred(), "baselined by another run: nothing to add, no error")
		Expect(chosen).To(BeEmpty())
	})

	It("keeps a CRLF file's line ending when appending", func() {
		dir := baseline("# crlf\r\nsurvivors:\r\n  - fixture: memo/v1/accepted/memo.json\r\n    mutant: values.empty_string@/id\r\n    reason: ids may be empty upstream\r\n")
		opts := mutate.Options{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures")}
		rep, err := mutate.Mutate(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())
		added, _, err := mutate.AddToBaseline(context.Background(), opts, rep.Results, "labels are free text", false)
		Expect(err).NotTo(HaveOccurred())
		Expect(added).NotTo(BeEmpty())
		text, err := os.ReadFile(filepath.Join(dir, "schemas", "memo", mutate.BaselineFile))
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Count(string(text), "\n")).To(Equal(strings.Count(string(text), "\r\n")), "%q", text)
	})

	It("refuses a reason made only of white space and format characters", func() {
		_, err := mutate.ReadBaseline("b.yaml", "memo", []byte("survivors:\n  - fixture: memo/v1/accepted/memo.json\n    mutant: values.empty_string@/id\n    reason: \"\\t\\u00a0\\u200b\"\n"))
		Expect(err).To(MatchError(ContainSubstring("b.yaml:4:5: /survivors/0/reason: an entry needs a reason")))
		Expect(mutate.BlankReason("\u200b\u00a0 \ufeff")).To(BeTrue())
		Expect(mutate.BlankReason("\u200bx")).To(BeFalse())
		for _, r := range []string{"\u034f", "\u115f", "\u3164", "\ufe0f", "\u2800", "a\u0301"[1:]} {
			Expect(mutate.BlankReason(r)).To(BeTrue(), "%q", r)
		}
		Expect(mutate.BlankReason("e\u0301")).To(BeFalse(), "a letter with a mark shows")
	})

	It("lets an entry written for an unseen mutant silence only an unseen result", func() {
		entry := func(mutant, outcome string) string {
			return "survivors:\n  - fixture: memo/v1/accepted/memo.json\n    mutant: " + mutant + "\n    reason: not projected\n    outcome: " + outcome + "\n"
		}
		// values.empty_string@/label reaches the agent.
		rep := mutateTree(baseline(entry("values.empty_string@/label", "unseen")))
		r := byID(rep)["values.empty_string@/label"]
		Expect(r.Outcome).To(Equal(mutate.Survived), r.Problem)
		Expect(r.Fails(false)).To(BeTrue())
		Expect(rep.Stale).To(HaveLen(1))
		Expect(rep.Stale[0].String()).To(HaveSuffix(mutate.BaselineFile + ":2: memo/v1/accepted/memo.json values.empty_string@/label: the mutant was unseen when baselined and now reaches the agent"))
		// Written for a survivor (or with no outcome, as files before the
		// key): it silences the survivor.
		for _, o := range []string{"survived"} {
			rep = mutateTree(baseline(entry("values.empty_string@/label", o)))
			Expect(byID(rep)["values.empty_string@/label"].Outcome).To(Equal(mutate.Baselined))
			Expect(rep.Stale).To(BeEmpty())
		}
		// An unseen entry silences an unseen result.
		rep = mutateTree(baseline(entry("structure.null_for_object@/extra", "unseen")))
		Expect(byID(rep)["structure.null_for_object@/extra"].Outcome).To(Equal(mutate.Baselined))
		Expect(rep.Stale).To(BeEmpty())
		_, err := mutate.ReadBaseline("b.yaml", "memo", []byte(entry("values.empty_string@/label", "killed")))
		Expect(err).To(MatchError(ContainSubstring("b.yaml:5:5: /survivors/0/outcome: outcome \"killed\" is not survived or unseen")))
	})
})

var _ = Describe("hint locations on an MCP contract", func() {
	It("names the instance location inside structuredContent, as the schema sees it", func() {
		dir := testtree.Tree(map[string]string{
			"schemas/weather/contract.yaml":        "tool: weather\nversion: \"1\"\nprotocol: mcp\nagent_schema: agent.schema.json\nupstream_versions:\n  v1:\n    schema: upstream.schema.json\n    projection: {conditions: /conditions}\n",
			"schemas/weather/upstream.schema.json": "{\"type\": \"object\", \"additionalProperties\": false,\n \"properties\": {\"conditions\": {\"type\": \"string\"}}}",
			"schemas/weather/agent.schema.json":    `{"type": "object", "additionalProperties": false, "properties": {"conditions": {"type": "string"}}}`,
			"fixtures/weather/defaults.meta.yaml":  "request: {id: req-1}\nstatus: 0\n",
			"fixtures/weather/v1/accepted/a.json":  `{"content":[{"type":"text","text":"{\"conditions\":\"Cloudy\"}"}],"structuredContent":{"conditions":"Cloudy"}}`,
		})
		r := byID(mutateTree(dir))["values.empty_string@/structuredContent/conditions"]
		Expect(r.Outcome).To(Equal(mutate.Survived), r.Problem)
		Expect(r.Location).NotTo(BeNil())
		Expect(r.Location.Instance).To(Equal("/conditions"))
		Expect(r.Location.Pointer).To(Equal("/properties/conditions"))
		Expect(r.Location.Line).To(Equal(2))
	})
})
