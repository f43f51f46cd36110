package schemadiff_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/reports"
	"github.com/airlockdev/airlock/schemadiff"
)

// The findings of a hostile review of airlock diff on contracts: each
// spec failed before its fix.

// editFile replaces from, which must occur once, by to in file name of the
// contract folder dir.
func editFile(dir, name, from, to string) {
	file := filepath.Join(dir, name)
	b, err := os.ReadFile(file)
	Expect(err).NotTo(HaveOccurred())
	Expect(strings.Count(string(b), from)).To(Equal(1), "%s: %q occurs once", name, from)
	Expect(os.WriteFile(file, []byte(strings.Replace(string(b), from, to, 1)), 0o644)).To(Succeed())
}

// comparison returns the comparison of d named name.
func comparison(d *reports.Diff, name string) *reports.Comparison {
	for i := range d.Comparisons {
		if d.Comparisons[i].Name == name {
			return &d.Comparisons[i]
		}
	}
	var names []string
	for _, c := range d.Comparisons {
		names = append(names, c.Name)
	}
	Fail("no comparison " + name + " among " + strings.Join(names, "; "))
	return nil
}

// bundledFixtures copies the bundled fixtures of tool into a new fixtures
// folder.
func bundledFixtures(tool string) string {
	root := GinkgoT().TempDir()
	Expect(os.CopyFS(filepath.Join(root, tool), os.DirFS(filepath.Join("..", "fixtures", tool)))).To(Succeed())
	return root
}

var _ = Describe("contract diff: error contracts and the agent error schema", func() {
	diff := func(file, from, to string) *reports.Diff {
		oldDir, newDir := contractDir("review_status", nil), contractDir("review_status", nil)
		editFile(newDir, file, from, to)
		d, err := schemadiff.Contracts(context.Background(), oldDir, newDir, schemadiff.ContractOptions{})
		Expect(err).NotTo(HaveOccurred())
		return d
	}

	It("compares an error contract's schema by content: a const dropped is breaking", func() {
		d := diff("upstream.v2.not-found.schema.json", `{ "const": "NOT_FOUND" }`, `{}`)
		cmp := comparison(d, "review_status upstream v2 error not_found")
		Expect(cmp.Old).To(HaveSuffix("upstream.v2.not-found.schema.json"))
		Expect(cmp.Changes).NotTo(BeEmpty())
		for _, c := range cmp.Changes {
			Expect(c.Level).To(Equal(reports.Breaking), c.Message)
			Expect(c.Instance).To(Equal("/error/code"))
			// The detail the agent sees is copied from /error/code.
			Expect(c.Impact.Projected).To(Equal([]string{"detail.upstream_code"}))
		}
		Expect(comparison(d, "review_status upstream v2 error unavailable").Changes).To(BeEmpty())
		Expect(d.Breaking()).To(BeTrue())
	})

	It("follows the shared error envelope: dropping required is breaking for every error contract", func() {
		d := diff("upstream.v2.error.schema.json", `"required": ["tool", "request_id", "outcome", "error"],`, ``)
		for _, name := range []string{"not_found", "unavailable"} {
			rules := rulesOf(comparison(d, "review_status upstream v2 error "+name).Changes)
			Expect(rules).To(ContainElement(schemadiff.RuleBecameOptional), name)
		}
	})

	It("gives an error schema's narrowing no fixture evidence: a matched error is refused by both contracts", func() {
		oldDir, newDir := contractDir("review_status", nil), contractDir("review_status", nil)
		editFile(newDir, "upstream.v2.error.schema.json", `"retryable": { "type": "boolean" }`, `"retryable": { "const": true }`)
		d, err := schemadiff.Contracts(context.Background(), oldDir, newDir, schemadiff.ContractOptions{Fixtures: bundledFixtures("review_status")})
		Expect(err).NotTo(HaveOccurred())
		cmp := comparison(d, "review_status upstream v2 error not_found")
		Expect(cmp.Changes).NotTo(BeEmpty())
		for _, c := range cmp.Changes {
			Expect(c.Level).To(Equal(reports.Compatible), c.Message)
			Expect(c.Impact.Fixtures).To(BeNil())
		}
	})

	It("reports a schema file renamed with equal contents as nothing, and one renamed and changed by its changes", func() {
		oldDir, newDir := contractDir("review_status", []edit{}), contractDir("review_status", []edit{
			{"schema: upstream.v2.not-found.schema.json", "schema: missing.schema.json"},
			{"agent_error_schema: agent.error.schema.json", "agent_error_schema: detail.schema.json"}})
		Expect(os.Rename(filepath.Join(newDir, "upstream.v2.not-found.schema.json"), filepath.Join(newDir, "missing.schema.json"))).To(Succeed())
		Expect(os.Rename(filepath.Join(newDir, "agent.error.schema.json"), filepath.Join(newDir, "detail.schema.json"))).To(Succeed())
		d, err := schemadiff.Contracts(context.Background(), oldDir, newDir, schemadiff.ContractOptions{})
		Expect(err).NotTo(HaveOccurred())
		for _, cmp := range d.Comparisons {
			Expect(cmp.Changes).To(BeEmpty(), cmp.Name)
		}
		Expect(comparison(d, "review_status upstream v2 error not_found").New).To(HaveSuffix("missing.schema.json"))

		editFile(newDir, "missing.schema.json", `{ "const": "NOT_FOUND" }`, `{}`)
		d, err = schemadiff.Contracts(context.Background(), oldDir, newDir, schemadiff.ContractOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(comparison(d, "review_status upstream v2 error not_found").Changes).NotTo(BeEmpty())
		Expect(rulesOf(comparison(d, "review_status manifest").Changes)).To(Equal([]string{schemadiff.RuleManifestErrorContractChanged}))
	})

	It("compares the agent error schema: opening it is breaking", func() {
		d := diff("agent.error.schema.json", `"additionalProperties": false,`, ``)
		cmp := comparison(d, "review_status agent error schema")
		Expect(rulesOf(cmp.Changes)).To(Equal([]string{schemadiff.RuleObjectOpened}))
		Expect(cmp.Changes[0].Level).To(Equal(reports.Breaking))
		Expect(d.Breaking()).To(BeTrue())
	})
})

var _ = Describe("contract diff: fixture evidence goes to the change that explains the refusal", func() {
	evidenceOf := func(d *reports.Diff, rule string) []string {
		for _, cmp := range d.Comparisons {
			for _, c := range cmp.Changes {
				if c.Rule == rule {
					Expect(c.Impact).NotTo(BeNil())
					Expect(c.Impact.Fixtures).NotTo(BeNil())
					var names []string
					for _, e := range c.Impact.Fixtures.Examples {
						names = append(names, filepath.Base(e))
					}
					Expect(names).To(HaveLen(c.Impact.Fixtures.Refused))
					return names
				}
			}
		}
		Fail("no change " + rule)
		return nil
	}
	const schemaFile = "upstream.2025-06-01.schema.json"

	It("credits a refusal by required to the property that became required, not to an enum change", func() {
		oldDir, newDir := contractDir("user_profile", nil), contractDir("user_profile", nil)
		editFile(newDir, schemaFile, `"required": ["user_id", "plan"]`, `"required": ["user_id", "plan", "display_name"]`)
		editFile(newDir, schemaFile, `"enum": ["free", "pro", "enterprise"]`, `"enum": ["free", "pro"]`)
		d, err := schemadiff.Contracts(context.Background(), oldDir, newDir, schemadiff.ContractOptions{Fixtures: bundledFixtures("user_profile")})
		Expect(err).NotTo(HaveOccurred())
		Expect(evidenceOf(d, schemadiff.RuleBecameRequired)).To(Equal([]string{"free-without-name.json"}))
		Expect(evidenceOf(d, schemadiff.RuleEnumValueRemoved)).To(Equal([]string{"enterprise-unicode-name.json"}))
		Expect(d.Evidence).NotTo(ContainSubstring("no reported change explains"))
	})

	It("reports a refusal no change explains as unexplained, never spread over every narrowing", func() {
		oldDir, newDir := contractDir("user_profile", nil), contractDir("user_profile", nil)
		// not is no classified rule: the refusal of free plans is
		// explained by no narrowing, though an enum narrowing sits beside it.
		editFile(newDir, schemaFile, `"additionalProperties": false,`, `"additionalProperties": false,
  "not": { "properties": { "plan": { "const": "free" } }, "required": ["plan"] },`)
		editFile(newDir, schemaFile, `"enum": ["free", "pro", "enterprise"]`, `"enum": ["free", "pro"]`)
		d, err := schemadiff.Contracts(context.Background(), oldDir, newDir, schemadiff.ContractOptions{Fixtures: bundledFixtures("user_profile")})
		Expect(err).NotTo(HaveOccurred())
		Expect(evidenceOf(d, schemadiff.RuleEnumValueRemoved)).To(Equal([]string{"enterprise-unicode-name.json"}))
		Expect(d.Evidence).To(MatchRegexp(`\(1 for a reason no reported change explains: .*free-without-name\.json\)`))
	})
})

var _ = Describe("contract diff: manifest changes that alter what reaches the agent are gate impact", func() {
	DescribeTable("counted in gate_impact, naming the agent fields", func(c manifestCase, fields []string) {
		newDir := contractDir(c.tool, c.new)
		d, err := schemadiff.Contracts(context.Background(), contractDir(c.tool, c.old), newDir, schemadiff.ContractOptions{})
		Expect(err).NotTo(HaveOccurred())
		changes := d.Comparisons[len(d.Comparisons)-1].Changes
		Expect(rulesOf(changes)).To(ContainElement(c.rule))
		for _, ch := range changes {
			if ch.Rule == c.rule {
				Expect(ch.Impact).NotTo(BeNil(), c.rule)
				Expect(ch.Impact.Projected).To(Equal(fields))
				Expect(ch.TouchesGate()).To(BeTrue())
			}
		}
		Expect(d.GateImpact()).To(BeNumerically(">", 0))
	},
		Entry("current changed", manifestCase{tool: "review_status", new: []edit{{"current: v2", "current: v1"}}, rule: schemadiff.RuleManifestCurrentChanged},
			[]string{"change_id", "decision", "reviewed_by"}),
		Entry("an upstream version added", manifestCase{tool: "job_run", new: []edit{{"upstream_versions:\n", "upstream_versions:\n  v3:\n    schema: upstream.v2.schema.json\n    projection: {run_id: /run_id}\n"}}, rule: schemadiff.RuleManifestVersionAdded},
			[]string{"run_id"}),
		Entry("a projection field added", manifestCase{tool: "user_profile", old: []edit{{"      display_name: /display_name\n", ""}}, rule: schemadiff.RuleManifestProjectionFieldAdded},
			[]string{"display_name"}),
		Entry("a projection field removed", manifestCase{tool: "user_profile", new: []edit{{"      display_name: /display_name\n", ""}}, rule: schemadiff.RuleManifestProjectionFieldRemoved},
			[]string{"display_name"}),
		Entry("a projection field re-pointed", manifestCase{tool: "review_status", new: []edit{{"      reviewed_by: /data/reviewed_by\n", "      reviewed_by: /data/change_id\n"}}, rule: schemadiff.RuleManifestProjectionFieldRepoint},
			[]string{"reviewed_by"}),
	)
})

var _ = Describe("contract diff: a removed upstream version whose fixtures are still there", func() {
	It("runs the fixtures of the versions both contracts have and fails nothing", func() {
		oldDir := contractDir("review_status", nil)
		newDir := contractDir("review_status", []edit{{"  v1:\n    description: Bare object without an envelope; still served by older deployments.\n    schema: upstream.v1.schema.json\n    projection:\n      change_id: /change_id\n      decision: /status\n      reviewed_by: /reviewer\n    rules:\n      - name: change_match\n        context: {pointer: /change_id, key: change_id}\n", ""}})
		fx := bundledFixtures("review_status")
		Expect(filepath.Join(fx, "review_status", "v1")).To(BeADirectory())
		for _, pair := range [][2]string{{oldDir, newDir}, {newDir, oldDir}} {
			d, err := schemadiff.Contracts(context.Background(), pair[0], pair[1], schemadiff.ContractOptions{Fixtures: fx})
			Expect(err).NotTo(HaveOccurred())
			Expect(d.Evidence).To(MatchRegexp(`^gate impact: [1-9]\d* fixture\(s\)`))
		}
	})
})
