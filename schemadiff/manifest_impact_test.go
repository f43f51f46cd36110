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
