package schemadiff_test

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/reports"
	"github.com/airlockdev/airlock/schemadiff"
)

// Every change counted in gate_impact shows why, in each format, and the
// count equals the number of changes that show it.

// shownImpact renders d in the three formats and returns, per format, how
// many changes show a gate impact that counts: text lines "gate impact:",
// Markdown rows whose gate-impact cell is neither empty nor "no gate
// impact", JSON changes whose impact has a member that counts.
func shownImpact(d *reports.Diff) (text, markdown, jsonCount, total int) {
	var t, md, js bytes.Buffer
	Expect(reports.WriteDiffText(&t, d)).To(Succeed())
	Expect(reports.WriteDiffMarkdown(&md, d)).To(Succeed())
	Expect(reports.WriteDiffJSON(&js, d)).To(Succeed())
	text = len(regexp.MustCompile(`(?m)^ +gate impact: \S`).FindAllString(t.String(), -1))
	for _, line := range strings.Split(md.String(), "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| level ") || strings.HasPrefix(line, "| --- ") {
			continue
		}
		cells := strings.Split(strings.TrimSuffix(line, " |"), " | ")
		last := cells[len(cells)-1]
		if strings.TrimSpace(last) != "" && !strings.HasPrefix(last, "no gate impact") {
			markdown++
		}
	}
	var doc struct {
		GateImpact  int `json:"gate_impact"`
		Comparisons []struct {
			Changes []struct {
				Impact map[string]any `json:"impact"`
			} `json:"changes"`
		} `json:"comparisons"`
	}
	Expect(json.Unmarshal(js.Bytes(), &doc)).To(Succeed())
	for _, cmp := range doc.Comparisons {
		for _, c := range cmp.Changes {
			im := c.Impact
			f, _ := im["fixtures"].(map[string]any)
			refused, _ := f["refused"].(float64)
			if im["projected"] != nil || im["repointed"] != nil || im["rules"] != nil || im["loosens"] == true || refused > 0 {
				jsonCount++
			}
		}
	}
	return text, markdown, jsonCount, doc.GateImpact
}

var _ = Describe("contract diff: every change counted in gate_impact shows why", func() {
	var entries []TableEntry
	for _, c := range manifestCases {
		entries = append(entries, Entry(c.tool+": "+c.rule, c))
	}

	DescribeTable("in text, Markdown and JSON, for each case of the manifest rule table", func(c manifestCase) {
		d, err := schemadiff.Contracts(context.Background(), contractDir(c.tool, c.old), contractDir(c.tool, c.new),
			schemadiff.ContractOptions{Fixtures: bundledFixtures(c.tool)})
		Expect(err).NotTo(HaveOccurred())
		counted := 0
		for _, cmp := range d.Comparisons {
			for _, ch := range cmp.Changes {
				if ch.TouchesGate() {
					counted++
				}
				if ch.File != "" && ch.Level == reports.Breaking {
					Expect(ch.TouchesGate()).To(BeTrue(), "a breaking manifest change counts: %s", ch.Rule)
				}
			}
		}
		Expect(counted).To(Equal(d.GateImpact()))
		text, md, js, total := shownImpact(d)
		Expect(total).To(Equal(d.GateImpact()))
		Expect(text).To(Equal(total), "text lines with a gate impact")
		Expect(md).To(Equal(total), "Markdown rows with a gate impact")
		Expect(js).To(Equal(total), "JSON changes whose impact shows why")
	}, entries)

	It("says a breaking manifest change loosens the gate, and whose agent output a re-pointed field changes", func() {
		c := manifestCase{tool: "review_status", new: []edit{
			{"max_bytes: 16384", "max_bytes: 65536"},
			{reviewBinding, ""},
			{"      reviewed_by: /data/reviewed_by\n", "      reviewed_by: /data/change_id\n"},
		}}
		changes, _ := manifestChanges(c)
		Expect(rulesOf(changes)).To(Equal([]string{schemadiff.RuleManifestLimitRaised, schemadiff.RuleManifestRuleRemoved, schemadiff.RuleManifestProjectionFieldRepoint}))
		Expect(changes[0].Impact).NotTo(BeNil())
		Expect(changes[0].Impact.Loosens).To(BeTrue())
		Expect(changes[1].Impact.Loosens).To(BeTrue())
		Expect(changes[2].Impact.Loosens).To(BeFalse())
		Expect(changes[2].Impact.Projected).To(Equal([]string{"reviewed_by"}))
		Expect(changes[2].Impact.Repointed).To(Equal(&reports.Repointed{Field: "reviewed_by", UpstreamVersion: "v2", Old: "/data/reviewed_by", New: "/data/change_id"}))

		d := &reports.Diff{Comparisons: []reports.Comparison{{Name: "review_status manifest", Changes: changes}}}
		var t bytes.Buffer
		Expect(reports.WriteDiffText(&t, d)).To(Succeed())
		Expect(t.String()).To(ContainSubstring("gate impact: the gate may now admit what it refused\n"))
		Expect(t.String()).To(ContainSubstring("gate impact: the agent's reviewed_by (upstream v2) now comes from /data/change_id instead of /data/reviewed_by\n"))
	})
})

var _ = Describe("contract diff: a narrowing is judged on its own, not only when its stage refuses first", func() {
	// evidence returns the fixture evidence of the change of rule in d.
	evidence := func(d *reports.Diff, rule string) *reports.FixtureEvidence {
		for _, cmp := range d.Comparisons {
			for _, c := range cmp.Changes {
				if c.Rule == rule {
					Expect(c.Impact).NotTo(BeNil(), rule)
					Expect(c.Impact.Fixtures).NotTo(BeNil(), rule)
					return c.Impact.Fixtures
				}
			}
		}
		Fail("no change " + rule)
		return nil
	}
	const limit = "max_bytes: 16384"
	var fixtures string
	BeforeEach(func() { fixtures = bundledFixtures("review_status") })
	diff := func(oldDir, newDir string) *reports.Diff {
		d, err := schemadiff.Contracts(context.Background(), oldDir, newDir, schemadiff.ContractOptions{Fixtures: fixtures})
		Expect(err).NotTo(HaveOccurred())
		return d
	}

	It("credits an agent-schema narrowing with what it refuses alone, though max_bytes lowered refuses those fixtures first", func() {
		agent := func(dir string) {
			editFile(dir, "agent.schema.json", `"maxLength": 128`, `"maxLength": 5`)
		}
		newDir := contractDir("review_status", nil)
		agent(newDir)
		alone := evidence(diff(contractDir("review_status", nil), newDir), schemadiff.RuleLengthTightened)
		Expect(alone.Refused).To(BeNumerically(">", 0))

		newDir = contractDir("review_status", []edit{{limit, "max_bytes: 64"}})
		agent(newDir)
		d := diff(contractDir("review_status", nil), newDir)
		both := evidence(d, schemadiff.RuleLengthTightened)
		Expect(both.Refused).To(Equal(alone.Refused))
		Expect(both.Examples).To(Equal(alone.Examples))
		Expect(both.NotJudged).To(Equal(0))
		Expect(evidence(d, schemadiff.RuleManifestLimitLowered).Refused).To(BeNumerically(">", 0))
	})

	It("credits an upstream-schema narrowing the same way", func() {
		enum := func(dir string) {
			editFile(dir, "upstream.v2.schema.json", `"decision": { "enum": ["approved", "rejected", "pending"] }`, `"decision": { "enum": ["approved", "rejected"] }`)
		}
		newDir := contractDir("review_status", []edit{{limit, "max_bytes: 64"}})
		enum(newDir)
		got := evidence(diff(contractDir("review_status", nil), newDir), schemadiff.RuleEnumValueRemoved)
		Expect(got.Refused).To(Equal(1))
		Expect(got.Examples[0]).To(HaveSuffix("pending-escaped.json"))
	})

	It("says which fixtures a rule added was not judged on, and what refused them first, never that it refuses none", func() {
		rule := "      - name: change_match\n        context: {pointer: /data/change_id, key: change_id}\n"
		newDir := contractDir("review_status", []edit{{limit, "max_bytes: 64"},
			{rule, rule + "      - name: approved_only\n        cel: {expr: 'value.data.decision == \"approved\"'}\n"}})
		d := diff(contractDir("review_status", nil), newDir)
		got := evidence(d, schemadiff.RuleManifestRuleAdded)
		Expect(got.Refused).To(Equal(0))
		Expect(got.NotJudged).To(BeNumerically(">", 0))
		Expect(got.RefusedEarlierBy).To(Equal([]string{"manifest-limit-lowered /limits/max_bytes"}))
		var t bytes.Buffer
		Expect(reports.WriteDiffText(&t, d)).To(Succeed())
		Expect(t.String()).To(MatchRegexp(`no gate impact: not shown to refuse a fixture; \d+ fixture\(s\) not judged: refused earlier by manifest-limit-lowered /limits/max_bytes\n`))
		Expect(t.String()).NotTo(ContainSubstring("refuses no fixture the old contract admitted"))
	})
})

var _ = Describe("contract diff: an upstream version removed", func() {
	It("gets no fixture evidence, since its fixtures are not run, rather than claiming to refuse none", func() {
		c := manifestCases[1]
		Expect(c.rule).To(Equal(schemadiff.RuleManifestVersionRemoved))
		d, err := schemadiff.Contracts(context.Background(), contractDir(c.tool, c.old), contractDir(c.tool, c.new),
			schemadiff.ContractOptions{Fixtures: bundledFixtures(c.tool)})
		Expect(err).NotTo(HaveOccurred())
		changes := d.Comparisons[len(d.Comparisons)-1].Changes
		Expect(rulesOf(changes)).To(Equal([]string{schemadiff.RuleManifestVersionRemoved}))
		Expect(changes[0].Impact).To(BeNil())
	})
})

var _ = Describe("contract diff: a refusal is credited to the reported change whose rule alters its keyword, at any level", func() {
	It("credits schema.type to a member retyped (a breaking type change), not to no change", func() {
		oldDir, newDir := contractDir("review_status", nil), contractDir("review_status", nil)
		editFile(newDir, "upstream.v2.schema.json", `"reviewed_by": { "type": "string",`, `"reviewed_by": { "type": "integer",`)
		d, err := schemadiff.Contracts(context.Background(), oldDir, newDir, schemadiff.ContractOptions{Fixtures: bundledFixtures("review_status")})
		Expect(err).NotTo(HaveOccurred())
		var retype *reports.Change
		for i := range d.Comparisons {
			for j := range d.Comparisons[i].Changes {
				if c := &d.Comparisons[i].Changes[j]; c.Rule == schemadiff.RuleTypeChanged {
					retype = c
				}
			}
		}
		Expect(retype).NotTo(BeNil())
		Expect(retype.Level).To(Equal(reports.Breaking))
		Expect(retype.Instance).To(Equal("/data/reviewed_by"))
		Expect(retype.Impact).NotTo(BeNil())
		Expect(retype.Impact.Fixtures).NotTo(BeNil())
		Expect(retype.Impact.Fixtures.Refused).To(Equal(4), "the four accepted v2 fixtures carry a string reviewed_by")
		Expect(d.Evidence).To(ContainSubstring("4 admitted by the old contract are refused by the new one"))
		Expect(d.Evidence).NotTo(ContainSubstring("no reported change explains"))
		var t bytes.Buffer
		Expect(reports.WriteDiffText(&t, d)).To(Succeed())
		Expect(t.String()).To(ContainSubstring("gate impact: touches projected reviewed_by; this narrowing refuses 4 fixture(s) the old contract admitted"))
	})
})
