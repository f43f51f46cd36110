package reports_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/internal/shard"
	"github.com/airlockdev/airlock/reports"
)

func intp(n int) *int { return &n }

func sampleDrift(breaking bool) *reports.Drift {
	return &reports.Drift{
		Summary: reports.DriftSummary{Breaking: breaking, Fixtures: 3, BreakingFindings: 1, UnexpectedRefusals: 1, BreakingVersionChanges: 1, VersionChangesBreak: true},
		Tools: []reports.DriftTool{{
			Tool: "deploy_status", ContractVersion: "1.0.0",
			Versions: []reports.DriftVersion{
				{
					UpstreamVersion: "v1", Fixtures: 3, Recorded: 2, Historical: 1, Admitted: 2, Refused: 1,
					Refusals: []reports.RefusalCount{{Reason: "schema.type", Count: 1, Unexpected: 1, Fixtures: []string{"recorded/state-object.json"}}},
					Findings: []reports.DriftFinding{
						{Kind: reports.FindingRetyped, Pointer: "/state", Keyword: "type", Seen: []string{"object"}, Allowed: []string{"string"}, Count: 1, Fixtures: []string{"recorded/state-object.json"}, Breaking: true, Message: "/state is object in 1 fixture(s) where the schema allows string"},
						{Kind: reports.FindingNewEnumValue, Pointer: "/env", Value: `"qa` + hostile + `"`, Allowed: []string{`"staging"`}, Count: 5, Fixtures: []string{"recorded/a.json", "recorded/b.json", "recorded/c.json", "recorded/d.json", "recorded/e.json"}, Message: "new value"},
					},
					Observed: []reports.ObservedPath{
						{Pointer: "/state", Types: []string{"object", "string"}, Count: 3, Values: []string{"healthy", hostile}, MinLength: intp(7), MaxLength: intp(7), Declared: true},
						{Pointer: "/maintenance", Types: []string{"boolean"}, Count: 1, Declared: false},
					},
				},
				{UpstreamVersion: "v2", Refusals: []reports.RefusalCount{}, Findings: []reports.DriftFinding{}, Observed: []reports.ObservedPath{}},
			},
			VersionChanges: sampleDiff().Comparisons[:1],
		}},
	}
}

var _ = Describe("drift reports", func() {
	It("writes JSON that validates against the published schema, texts cleaned", func() {
		var buf bytes.Buffer
		Expect(reports.WriteDriftJSON(&buf, sampleDrift(true))).To(Succeed())
		validates(reports.DriftSchema(), buf.Bytes())
		Expect(buf.String()).NotTo(ContainSubstring(`\u001b`))
		var doc map[string]any
		Expect(json.Unmarshal(buf.Bytes(), &doc)).To(Succeed())
		Expect(doc["version"]).To(BeEquivalentTo(1))
		Expect(doc["summary"].(map[string]any)["breaking"]).To(BeTrue())
	})

	It("writes valid JSON for an empty report", func() {
		var buf bytes.Buffer
		Expect(reports.WriteDriftJSON(&buf, &reports.Drift{})).To(Succeed())
		validates(reports.DriftSchema(), buf.Bytes())
	})

	It("records a shard with its fixture set, valid against the published schema", func() {
		var buf bytes.Buffer
		Expect(reports.WriteDriftJSON(&buf, &reports.Drift{Shard: shard.Shard{Index: 2, Count: 3, Set: testSet}})).To(Succeed())
		validates(reports.DriftSchema(), buf.Bytes())
		Expect(buf.String()).To(ContainSubstring(`"set": "` + testSet + `"`))
	})

	It("writes Markdown for a pull request: verdict, versions, findings, refusals, shape, version changes", func() {
		var buf bytes.Buffer
		Expect(reports.WriteDriftMarkdown(&buf, sampleDrift(true))).To(Succeed())
		md := buf.String()
		Expect(md).To(HavePrefix("# airlock drift\n\n❌ drift breaks the contract: 3 fixture(s), 1 breaking finding(s), 1 unexpected refusal(s), 1 breaking change(s) between upstream versions\n"))
		Expect(md).To(ContainSubstring("## `deploy_status` (contract `1.0.0`)"))
		Expect(md).To(ContainSubstring("| `v1` | 3 | 2 | 1 | 2 | 1 | 1 |"))
		Expect(md).To(ContainSubstring("| ❌ | retyped | `/state` |"))
		Expect(md).To(ContainSubstring("| ℹ️ | new-enum-value | `/env` |"))
		Expect(md).To(ContainSubstring("`recorded/a.json`, `recorded/b.json`, `recorded/c.json` and 2 more"))
		Expect(md).To(ContainSubstring("| `schema.type` | 1 | 1 | `recorded/state-object.json` |"))
		Expect(md).To(ContainSubstring("<details><summary>Observed shape (2 paths)</summary>"))
		Expect(md).To(ContainSubstring("| `/maintenance` | boolean | 1 |  |  | **no** |"))
		Expect(md).To(ContainSubstring("### deploy\\_status upstream v0 → v1"))
		Expect(md).NotTo(ContainSubstring("### `deploy_status` `v2`"), "a version without fixtures has only its table row")
		// Upstream text stays inside code spans (where HTML is inert), or is escaped.
		Expect(strings.Count(md, "<img")).To(Equal(strings.Count(md, "`` a\\|b`c <img")))
		Expect(md).To(ContainSubstring("`` a\\|b`c <img src=x onerror=alert(1)>red second line\\x00 ``"))
		Expect(md).To(ContainSubstring("a\\|b\\`c &lt;img"))
		Expect(md).NotTo(ContainSubstring("\x1b"))
		Expect(md).NotTo(ContainSubstring("\x00"))
	})

	It("says when nothing breaks, and when version changes are not counted", func() {
		d := sampleDrift(false)
		d.Summary = reports.DriftSummary{Fixtures: 3, BreakingVersionChanges: 2}
		var buf bytes.Buffer
		Expect(reports.WriteDriftMarkdown(&buf, d)).To(Succeed())
		Expect(strings.SplitN(buf.String(), "\n", 4)[2]).To(Equal("✅ no drift breaks the contract: 3 fixture(s), 0 breaking finding(s), 0 unexpected refusal(s), 2 breaking change(s) between upstream versions (not counted)"))
	})

	It("publishes the same schema as schemas/drift.schema.json", func() {
		b, err := os.ReadFile("../schemas/drift.schema.json")
		Expect(err).NotTo(HaveOccurred())
		Expect(reports.DriftSchema()).To(Equal(b), "refresh it with: airlock schema drift > schemas/drift.schema.json")
	})
})
