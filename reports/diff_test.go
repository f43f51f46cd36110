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
		Expect(doc.Version).To(Equal(1))
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
		Expect(md).To(ContainSubstring("| level | rule | instance | old | new | message |"))
		Expect(md).To(ContainSubstring("| ❌ breaking | `response-property-removed` | `/deployment` | `/properties/deployment` | `/properties` |"))
		Expect(md).To(ContainSubstring("| ✅ compatible | `response-property-enum-value-removed` | `(root)` | `/enum` | `/enum` |"))
		Expect(md).To(ContainSubstring("No changes."))
		Expect(md).NotTo(ContainSubstring("<img"))
		Expect(md).NotTo(ContainSubstring("\x1b"))
		for _, line := range strings.Split(md, "\n") {
			if strings.HasPrefix(line, "| ✅") {
				Expect(line).To(HaveSuffix(" |"))
				Expect(strings.Count(line, " | ")-strings.Count(line, `\| `)).To(Equal(5), line)
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

	It("publishes the same schema as schemas/diff.schema.json", func() {
		b, err := os.ReadFile("../schemas/diff.schema.json")
		Expect(err).NotTo(HaveOccurred())
		Expect(reports.DiffSchema()).To(Equal(b), "refresh it with: airlock schema diff > schemas/diff.schema.json")
	})
})
