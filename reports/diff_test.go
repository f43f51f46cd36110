package reports_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/reports"
)

// published compiles one of airlock's published schemas the way the gate
// compiles contracts.
func published(b []byte) *jsonschema.Schema {
	doc, err := strictjson.Parse(b, strictjson.Limits{})
	Expect(err).NotTo(HaveOccurred())
	c := schema.NewCompiler(nil)
	Expect(c.AddResource("airlock:published.schema.json", doc)).To(Succeed())
	sch, err := c.Compile("airlock:published.schema.json")
	Expect(err).NotTo(HaveOccurred())
	return sch
}

// validates parses out strictly and validates it against schema.
func validates(schema []byte, out []byte) {
	doc, err := strictjson.Parse(out, strictjson.Limits{})
	Expect(err).NotTo(HaveOccurred(), string(out))
	Expect(published(schema).Validate(doc)).To(Succeed(), string(out))
}

// hostile is text an upstream or a schema author could slip into a report.
const hostile = "a|b`c <img src=x onerror=alert(1)>\x1b[31mred\x1b[0m\nsecond line\x00"

func sampleDiff() *reports.Diff {
	return &reports.Diff{Comparisons: []reports.Comparison{
		{Name: "deploy_status upstream v0 → v1", Old: "schemas/deploy_status/upstream.v0.schema.json", New: "schemas/deploy_status/upstream.v1.schema.json", Changes: []reports.Change{
			{Rule: "response-property-removed", Level: reports.Breaking, Instance: "/deployment", OldPointer: "/properties/deployment", NewPointer: "/properties", Message: "/deployment: the required property is no longer defined: responses may omit it"},
			{Rule: "response-property-added", Level: reports.ContractChange, Instance: "/state", OldPointer: "/properties", NewPointer: "/properties/state", Message: "/state: a required property was added to a closed object"},
			{Rule: "response-property-enum-value-removed", Level: reports.Compatible, Instance: "", OldPointer: "/enum", NewPointer: "/enum", Message: "the response: " + hostile},
		}},
		{Name: "deploy_status upstream v1 → v2", Old: "a.json", New: "b.json", Changes: []reports.Change{}},
	}}
}

var _ = Describe("diff reports", func() {
	It("counts changes by level", func() {
		d := sampleDiff()
		Expect(d.Count(reports.Breaking)).To(Equal(1))
		Expect(d.Count(reports.ContractChange)).To(Equal(1))
		Expect(d.Count(reports.Compatible)).To(Equal(1))
		Expect(d.Breaking()).To(BeTrue())
		Expect((&reports.Diff{}).Breaking()).To(BeFalse())
	})

	It("writes JSON that validates against the published schema, texts cleaned", func() {
		var buf bytes.Buffer
		Expect(reports.WriteDiffJSON(&buf, sampleDiff())).To(Succeed())
		validates(reports.DiffSchema(), buf.Bytes())
		var doc struct {
			Version, Breaking, ContractChange, Compatible int
			Comparisons                                   []reports.Comparison
		}
		Expect(json.Unmarshal(buf.Bytes(), &doc)).To(Succeed())
		Expect(doc.Version).To(Equal(3))
		Expect(doc.Breaking).To(Equal(1))
		msg := doc.Comparisons[0].Changes[2].Message
		Expect(msg).NotTo(ContainSubstring("\x1b"))
		Expect(msg).NotTo(ContainSubstring("\n"))
		Expect(msg).NotTo(ContainSubstring("\x00"))
		Expect(doc.Comparisons[1].Changes).NotTo(BeNil())
	})

	It("writes valid JSON for an empty diff", func() {
		var buf bytes.Buffer
		Expect(reports.WriteDiffJSON(&buf, &reports.Diff{})).To(Succeed())
		validates(reports.DiffSchema(), buf.Bytes())
	})

	It("writes Markdown with one table row per change, hostile text defused", func() {
		var buf bytes.Buffer
		Expect(reports.WriteDiffMarkdown(&buf, sampleDiff())).To(Succeed())
		md := buf.String()
		Expect(md).To(HavePrefix("# airlock diff\n\n3 change(s): 1 breaking, 1 contract-change, 1 compatible\n"))
		Expect(md).To(ContainSubstring("| level | rule | instance | old | new | message | gate impact |"))
		Expect(md).To(ContainSubstring("| ❌ breaking | `response-property-removed` | `/deployment` | `/properties/deployment` | `/properties` |"))
		Expect(md).To(ContainSubstring("| ✅ compatible | `response-property-enum-value-removed` | `(root)` | `/enum` | `/enum` |"))
		Expect(md).To(ContainSubstring("No changes."))
		Expect(md).NotTo(ContainSubstring("<img"))
		Expect(md).NotTo(ContainSubstring("\x1b"))
		for _, line := range strings.Split(md, "\n") {
			if strings.HasPrefix(line, "| ✅") {
				Expect(line).To(HaveSuffix(" |"))
				Expect(strings.Count(line, " | ")-strings.Count(line, `\| `)).To(Equal(6), line)
			}
		}
	})

	It("writes text with the pointers under each change and the totals", func() {
		var buf bytes.Buffer
		Expect(reports.WriteDiffText(&buf, sampleDiff())).To(Succeed())
		out := buf.String()
		Expect(out).To(ContainSubstring("deploy_status upstream v0 → v1: schemas/deploy_status/upstream.v0.schema.json → schemas/deploy_status/upstream.v1.schema.json\n"))
		Expect(out).To(ContainSubstring("  breaking        response-property-removed"))
		Expect(out).To(ContainSubstring("old /properties/deployment  new /properties\n"))
		Expect(out).To(ContainSubstring("  no changes\n"))
		Expect(out).To(HaveSuffix("\n3 change(s): 1 breaking, 1 contract-change, 1 compatible\n"))
		Expect(out).NotTo(ContainSubstring("\x1b"))
	})

	It("writes an empty pointer as the JSON report holds it, in text and Markdown, for schema and manifest changes", func() {
		d := &reports.Diff{Comparisons: []reports.Comparison{
			{Name: "review_status manifest", Old: "old/contract.yaml", New: "new/contract.yaml", Changes: []reports.Change{
				{Rule: "manifest-content-types-narrowed", Level: reports.Compatible, OldPointer: "", NewPointer: "/content_types", Message: "content_types no longer admits application/*+json", File: "new/contract.yaml", Line: 9},
			}},
			{Name: "review_status upstream v2", Old: "a.json", New: "b.json", Changes: []reports.Change{
				{Rule: "response-object-opened", Level: reports.Breaking, OldPointer: "/additionalProperties", NewPointer: "", Message: "the response: opened"},
			}},
		}}
		var text, md, js bytes.Buffer
		Expect(reports.WriteDiffText(&text, d)).To(Succeed())
		Expect(reports.WriteDiffMarkdown(&md, d)).To(Succeed())
		Expect(reports.WriteDiffJSON(&js, d)).To(Succeed())
		Expect(js.String()).To(ContainSubstring(`"old_pointer": "",`))
		Expect(js.String()).To(ContainSubstring(`"new_pointer": "",`))
		Expect(text.String()).To(ContainSubstring(`old ""  new /content_types  at new/contract.yaml:9` + "\n"))
		Expect(text.String()).To(ContainSubstring(`old /additionalProperties  new ""` + "\n"))
		Expect(md.String()).To(ContainSubstring("| `\"\"` | `/content_types` |"))
		Expect(md.String()).To(ContainSubstring("| `/additionalProperties` | `\"\"` |"))
		Expect(text.String()).NotTo(ContainSubstring("#"))
		Expect(md.String()).NotTo(ContainSubstring("`#`"))
	})

	Describe("a contract diff's manifest changes and gate impact", func() {
		impactDiff := func() *reports.Diff {
			return &reports.Diff{Evidence: "2 fixture(s) of fixtures checked against both contracts", Comparisons: []reports.Comparison{
				{Name: "review_status manifest", Old: "old/contract.yaml", New: "new/contract.yaml", Changes: []reports.Change{
					{Rule: "manifest-rule-removed", Level: reports.Breaking, Instance: "/request_id", OldPointer: "/upstream_versions/v2/rules/0", NewPointer: "/upstream_versions/v2/rules",
						Message: `upstream v2: rule "request_binding" was removed`, File: "old/contract.yaml", Line: 24, Impact: &reports.Impact{Loosens: true}},
				}},
				{Name: "review_status upstream v2", Old: "a.json", New: "b.json", Changes: []reports.Change{
					{Rule: "response-property-type-narrowed", Level: reports.Compatible, Instance: "/data/reviewed_by", OldPointer: "/type", NewPointer: "/type", Message: "/data/reviewed_by: narrowed",
						Impact: &reports.Impact{Projected: []string{"reviewed_by"}, Fixtures: &reports.FixtureEvidence{Refused: 3, Examples: []string{"f/a.json", "f/b.json" + hostile}}}},
					{Rule: "response-property-added-to-open-object", Level: reports.Compatible, Instance: "/x", Message: "/x: added", Impact: &reports.Impact{Fixtures: &reports.FixtureEvidence{}}},
				}},
			}}
		}

		It("counts the changes with gate impact", func() {
			d := impactDiff()
			Expect(d.GateImpact()).To(Equal(2))
			Expect(d.Comparisons[1].Changes[1].TouchesGate()).To(BeFalse())
		})

		It("writes them in JSON per the published schema", func() {
			var buf bytes.Buffer
			Expect(reports.WriteDiffJSON(&buf, impactDiff())).To(Succeed())
			validates(reports.DiffSchema(), buf.Bytes())
			Expect(buf.String()).To(ContainSubstring(`"gate_impact": 2`))
			Expect(buf.String()).To(ContainSubstring(`"file": "old/contract.yaml",`))
			Expect(buf.String()).To(ContainSubstring(`"line": 24`))
			Expect(buf.String()).To(ContainSubstring(`"refused": 3`))
			Expect(buf.String()).NotTo(ContainSubstring(`\u001b`))
		})

		It("writes them as text: the file and line, the impact line, the evidence", func() {
			var buf bytes.Buffer
			Expect(reports.WriteDiffText(&buf, impactDiff())).To(Succeed())
			out := buf.String()
			Expect(out).To(ContainSubstring("old /upstream_versions/v2/rules/0  new /upstream_versions/v2/rules  at old/contract.yaml:24\n"))
			Expect(out).To(ContainSubstring("gate impact: the gate may now admit what it refused\n"))
			Expect(out).To(ContainSubstring("no gate impact: refuses no fixture the old contract admitted\n"))
			Expect(out).To(ContainSubstring("gate impact: touches projected reviewed_by; this narrowing refuses 3 fixture(s) the old contract admitted (f/a.json, f/b.json"))
			Expect(out).To(ContainSubstring("\n2 fixture(s) of fixtures checked against both contracts\n"))
			Expect(out).To(HaveSuffix("3 change(s): 1 breaking, 0 contract-change, 2 compatible, 2 with gate impact\n"))
			Expect(out).NotTo(ContainSubstring("\x1b"))
		})

		It("writes them as Markdown: a gate impact column", func() {
			var buf bytes.Buffer
			Expect(reports.WriteDiffMarkdown(&buf, impactDiff())).To(Succeed())
			md := buf.String()
			Expect(md).To(ContainSubstring("(`old/contract.yaml:24`)"))
			Expect(md).To(ContainSubstring("| touches projected reviewed\\_by; this narrowing refuses 3 fixture(s)"))
			Expect(md).To(ContainSubstring("| the gate may now admit what it refused |"))
			Expect(md).NotTo(ContainSubstring("<img"))
		})
	})

	Describe("a contract diff's untouched contracts and comparisons", func() {
		contracts := func() *reports.Diff {
			cmp := func(tool, what string, changes ...reports.Change) reports.Comparison {
				return reports.Comparison{Tool: tool, Name: tool + " " + what, Old: "HEAD:schemas/" + tool + "/" + what, New: "schemas/" + tool + "/" + what, Changes: changes}
			}
			change := reports.Change{Rule: "manifest-limit-raised", Level: reports.Breaking, OldPointer: "/limits/max_bytes", NewPointer: "/limits/max_bytes",
				Message: "limits max_bytes raised", File: "schemas/review_status/contract.yaml", Line: 13, Impact: &reports.Impact{Loosens: true}}
			return &reports.Diff{Comparisons: []reports.Comparison{
				cmp("job_run", "agent schema"), cmp("job_run", "upstream v1"), cmp("job_run", "manifest"),
				cmp("deploy_status", "agent schema"), cmp("deploy_status", "manifest"),
				cmp("review_status", "agent schema"), cmp("review_status", "upstream v2"), cmp("review_status", "manifest", change),
			}}
		}

		It("writes an untouched contract as one line of text, and the untouched comparisons of a touched one as one line", func() {
			var buf bytes.Buffer
			Expect(reports.WriteDiffText(&buf, contracts())).To(Succeed())
			Expect(buf.String()).To(HavePrefix("job_run: no changes\ndeploy_status: no changes\n" +
				"review_status: no changes in agent schema, upstream v2\n\n" +
				"review_status manifest: HEAD:schemas/review_status/manifest → schemas/review_status/manifest\n"))
			Expect(buf.String()).NotTo(ContainSubstring("  no changes"))
		})

		It("writes them as Markdown list items, one per contract", func() {
			var buf bytes.Buffer
			Expect(reports.WriteDiffMarkdown(&buf, contracts())).To(Succeed())
			md := buf.String()
			Expect(md).To(ContainSubstring("\n\n- job\\_run: no changes\n- deploy\\_status: no changes\n- review\\_status (agent schema, upstream v2): no changes\n\n## review\\_status manifest\n"))
			Expect(md).NotTo(ContainSubstring("No changes."))
			Expect(strings.Count(md, "## ")).To(Equal(1))
		})

		It("keeps every comparison in JSON", func() {
			var buf bytes.Buffer
			Expect(reports.WriteDiffJSON(&buf, contracts())).To(Succeed())
			validates(reports.DiffSchema(), buf.Bytes())
			Expect(strings.Count(buf.String(), `"name": `)).To(Equal(8))
			Expect(buf.String()).NotTo(ContainSubstring(`"tool"`))
		})
	})

	It("publishes the same schema as schemas/diff.schema.json", func() {
		b, err := os.ReadFile("../schemas/diff.schema.json")
		Expect(err).NotTo(HaveOccurred())
		Expect(reports.DiffSchema()).To(Equal(b), "refresh it with: airlock schema diff > schemas/diff.schema.json")
	})
})
