package reports_test

import (
	"bytes"
	"encoding/json"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/internal/shard"
	"github.com/airlockdev/airlock/reports"
)

// componentDiff is a diff whose breaking change lies in a shared
// component the tool's upstream schema reaches through $ref, placed by
// schemadiff (NewFile, NewLine, NewColumn), and whose manifest change is
// at its key's line.
func componentDiff() *reports.Diff {
	return &reports.Diff{Comparisons: []reports.Comparison{
		{Name: "weather upstream v1 → v2", Old: "schemas/weather/upstream.v1.schema.json", New: "schemas/weather/upstream.v2.schema.json", Changes: []reports.Change{
			{Rule: "response-property-type-changed", Level: reports.Breaking, Instance: "/humidity", OldPointer: "/$ref/properties/humidity/type", NewPointer: "/$ref/properties/humidity/type",
				Message: "/humidity: type changed from number to string", NewFile: "schemas/_components/acme/v2/reading.schema.json", NewLine: 7, NewColumn: 19},
			{Rule: "response-property-type-changed", Level: reports.Breaking, Instance: "/wind", OldPointer: "/properties/wind/type", NewPointer: "/properties/wind/type",
				Message: "/wind: type changed from number to string"},
		}},
		{Name: "weather manifest", Old: "old/contract.yaml", New: "schemas/weather/contract.yaml", Changes: []reports.Change{
			{Rule: "manifest-limit-raised", Level: reports.Breaking, OldPointer: "/limits/max_bytes", NewPointer: "/limits/max_bytes", Message: "max_bytes raised",
				File: "schemas/weather/contract.yaml", Line: 12},
		}},
	}}
}

// placed is an annotation's file, line and column.
type placed struct {
	File      string
	Line, Col int
}

func place(a reports.Annotation) placed { return placed{a.File, a.Line, a.Col} }

var _ = Describe("where a diff change is written (Change.Where)", func() {
	It("is file:line:column of the new schema for a schema change, file:line for a manifest change, nothing when unknown", func() {
		d := componentDiff()
		Expect(d.Comparisons[0].Changes[0].Where()).To(Equal("schemas/_components/acme/v2/reading.schema.json:7:19"))
		Expect(d.Comparisons[0].Changes[1].Where()).To(Equal(""))
		Expect(d.Comparisons[1].Changes[0].Where()).To(Equal("schemas/weather/contract.yaml:12"))
		c := reports.Change{NewFile: "a\x1b[31m\nb.json", NewLine: 3}
		Expect(c.Where()).To(Equal(reports.Line("a\x1b[31m\nb.json")+":3"), "cleaned, a line without a column")
	})

	It("annotates a change in a shared component at the component's file, line and column", func() {
		anns := reports.DiffAnnotations(componentDiff())
		Expect(anns).To(HaveLen(3))
		Expect(place(anns[0])).To(Equal(placed{"schemas/_components/acme/v2/reading.schema.json", 7, 19}))
		Expect(place(anns[1])).To(Equal(placed{"schemas/weather/upstream.v2.schema.json", 0, 0}), "not placed: the comparison's new file")
		Expect(place(anns[2])).To(Equal(placed{"schemas/weather/contract.yaml", 12, 0}))
		var buf bytes.Buffer
		Expect(reports.WriteAnnotations(&buf, anns[:1], reports.GitHubOptions{})).To(Succeed())
		Expect(buf.String()).To(HavePrefix("::error file=schemas/_components/acme/v2/reading.schema.json,line=7,col=19,title="))
	})

	It("places a breaking change between upstream versions in drift's annotations the same way", func() {
		cmp := componentDiff().Comparisons[0]
		d := &reports.Drift{Summary: reports.DriftSummary{VersionChangesBreak: true}, Tools: []reports.DriftTool{{Tool: "weather", VersionChanges: []reports.Comparison{cmp}}}}
		anns := reports.DriftAnnotations(d, "fixtures")
		Expect(anns).To(HaveLen(2))
		Expect(place(anns[0])).To(Equal(placed{"schemas/_components/acme/v2/reading.schema.json", 7, 19}))
	})

	It("shows the place in the text, the Markdown and the summary, and writes it in the JSON as optional fields", func() {
		var text, md, sum, js bytes.Buffer
		Expect(reports.WriteDiffText(&text, componentDiff())).To(Succeed())
		Expect(text.String()).To(MatchRegexp(`(?m)^ +old /\$ref/properties/humidity/type  new /\$ref/properties/humidity/type  at schemas/_components/acme/v2/reading\.schema\.json:7:19$`))
		Expect(text.String()).To(MatchRegexp(`(?m)^ +old /properties/wind/type  new /properties/wind/type$`), "no place known: no at")
		Expect(text.String()).To(MatchRegexp(`(?m)  at schemas/weather/contract\.yaml:12$`))

		Expect(reports.WriteDiffMarkdown(&md, componentDiff())).To(Succeed())
		Expect(md.String()).To(ContainSubstring("type changed from number to string (`schemas/_components/acme/v2/reading.schema.json:7:19`) |"))

		Expect(reports.WriteDiffSummary(&sum, componentDiff())).To(Succeed())
		Expect(sum.String()).To(ContainSubstring("| `response-property-type-changed` | `schemas/_components/acme/v2/reading.schema.json:7:19` |"))
		Expect(sum.String()).To(ContainSubstring("| `response-property-type-changed` | `instance /wind` |"))
		tableRowsKeepTheirCells(sum.String())

		Expect(reports.WriteDiffJSON(&js, componentDiff())).To(Succeed())
		validates(reports.DiffSchema(), js.Bytes())
		var doc struct {
			Version     int
			Comparisons []struct{ Changes []map[string]any }
		}
		Expect(json.Unmarshal(js.Bytes(), &doc)).To(Succeed())
		Expect(doc.Version).To(Equal(3), "optional fields only: the format version stays")
		first := doc.Comparisons[0].Changes[0]
		Expect(first).To(HaveKeyWithValue("new_file", "schemas/_components/acme/v2/reading.schema.json"))
		Expect(first).To(HaveKeyWithValue("new_line", BeNumerically("==", 7)))
		Expect(first).To(HaveKeyWithValue("new_column", BeNumerically("==", 19)))
		Expect(doc.Comparisons[0].Changes[1]).NotTo(HaveKey("new_file"), "absent when not known")

		var dj bytes.Buffer
		dr := &reports.Drift{Tools: []reports.DriftTool{{Tool: "weather", ContractVersion: "1", VersionChanges: []reports.Comparison{componentDiff().Comparisons[0]}}}}
		Expect(reports.WriteDriftJSON(&dj, dr)).To(Succeed())
		Expect(dj.String()).To(ContainSubstring(`"new_line": 7`))
		validates(reports.DriftSchema(), dj.Bytes())
	})
})

// brokenAt is a run whose contract error names line 4, column 12.
func brokenAt() *reports.Run {
	return &reports.Run{Cases: []reports.Case{
		reports.ContractError("bad", "contract.yaml", "schemas/bad/upstream.schema.json", 4, 12, brokenMsg),
		{Tool: "good", UpstreamVersion: "v1", Kind: "accepted", Suite: "parse", Name: "a.json", File: "fixtures/good/v1/accepted/a.json", Status: reports.Passed, Expected: "admitted", Actual: "admitted"},
	}}
}

var _ = Describe("a broken contract's line and column", func() {
	It("places its annotation, summary entry and SARIF result at them", func() {
		anns := reports.RunAnnotations(brokenAt())
		Expect(anns).To(HaveLen(1))
		var buf bytes.Buffer
		Expect(reports.WriteAnnotations(&buf, anns, reports.GitHubOptions{})).To(Succeed())
		Expect(buf.String()).To(HavePrefix("::error file=schemas/bad/upstream.schema.json,line=4,col=12,title=airlock bad%3A contract does not load::"))

		buf.Reset()
		Expect(reports.WriteRunSummary(&buf, brokenAt())).To(Succeed())
		Expect(buf.String()).To(ContainSubstring("❌ `bad`: contract does not load (`schemas/bad/upstream.schema.json:4:12`)"))

		buf.Reset()
		Expect(reports.WriteRunSARIF(&buf, brokenAt(), "test")).To(Succeed())
		Expect(buf.String()).To(MatchRegexp(`"region": \{\s*"startLine": 4,\s*"startColumn": 12\s*\}`))

		d := &reports.Drift{Broken: []reports.BrokenContract{{Tool: "bad", File: "schemas/bad/upstream.schema.json", Line: 4, Column: 12, Message: brokenMsg}}}
		danns := reports.DriftAnnotations(d, "fixtures")
		Expect(danns).To(HaveLen(1))
		Expect(place(danns[0])).To(Equal(placed{"schemas/bad/upstream.schema.json", 4, 12}))
		buf.Reset()
		Expect(reports.WriteDriftJSON(&buf, d)).To(Succeed())
		validates(reports.DriftSchema(), buf.Bytes())
		Expect(buf.String()).To(ContainSubstring(`"line": 4,`))
	})

	It("keeps them through the JSON results and merge, so the merged summary places it too", func() {
		one := brokenAt()
		one.Shard = shard.Shard{Index: 1, Count: 2, Set: testSet}
		two := &reports.Run{Shard: shard.Shard{Index: 2, Count: 2, Set: testSet}}
		var js [2]bytes.Buffer
		runs := make([]*reports.Run, 2)
		for i, r := range []*reports.Run{one, two} {
			Expect(reports.WriteJSON(&js[i], r)).To(Succeed())
			validates(reports.ResultsSchema(), js[i].Bytes())
			back, err := reports.ReadResults(js[i].Bytes())
			Expect(err).NotTo(HaveOccurred())
			runs[i] = back
		}
		Expect(js[0].String()).To(ContainSubstring(`"line": 4,`))
		Expect(js[0].String()).To(ContainSubstring(`"column": 12,`))
		Expect(strings.Count(js[0].String(), `"line"`)).To(Equal(1), "a fixture's case has none")
		merged, err := reports.MergeRuns([]string{"r1.json", "r2.json"}, runs)
		Expect(err).NotTo(HaveOccurred())
		var sum bytes.Buffer
		Expect(reports.WriteRunSummary(&sum, merged)).To(Succeed())
		Expect(sum.String()).To(ContainSubstring("(`schemas/bad/upstream.schema.json:4:12`)"))
	})
})
