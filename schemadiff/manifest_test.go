package schemadiff_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/reports"
	"github.com/airlockdev/airlock/schemadiff"
)

// edit is one textual change of a bundled manifest: from must occur in it
// exactly once.
type edit struct{ from, to string }

// manifestCase is one row of the manifest rule table: a bundled contract,
// the edits that make the old and the new manifest from it, and the change
// that must be reported.
type manifestCase struct {
	tool     string
	old, new []edit
	rule     string
	level    reports.Level
	// instance, when set, is the change's expected instance location.
	instance string
}

// contractDir copies the bundled contract of tool (and the shared
// components) below a new folder, applies edits to its manifest and
// returns the contract's folder.
func contractDir(tool string, edits []edit) string {
	root := GinkgoT().TempDir()
	dir := filepath.Join(root, tool)
	Expect(os.CopyFS(dir, os.DirFS(filepath.Join("..", "schemas", tool)))).To(Succeed())
	file := filepath.Join(dir, gate.ManifestFile)
	b, err := os.ReadFile(file)
	Expect(err).NotTo(HaveOccurred())
	s := string(b)
	for _, e := range edits {
		Expect(strings.Count(s, e.from)).To(Equal(1), "%s: %q occurs once", tool, e.from)
		s = strings.Replace(s, e.from, e.to, 1)
	}
	Expect(os.WriteFile(file, []byte(s), 0o644)).To(Succeed())
	return dir
}

// manifestChanges diffs the two contracts of c and returns the manifest
// comparison's changes and the new contract's folder.
func manifestChanges(c manifestCase) ([]reports.Change, string) {
	newDir := contractDir(c.tool, c.new)
	d, err := schemadiff.Contracts(context.Background(), contractDir(c.tool, c.old), newDir, schemadiff.ContractOptions{})
	Expect(err).NotTo(HaveOccurred())
	last := d.Comparisons[len(d.Comparisons)-1]
	Expect(last.Name).To(Equal(c.tool + " manifest"))
	return last.Changes, newDir
}

const reviewBinding = "      - name: request_binding\n        binding: {pointer: /request_id}\n"

var manifestCases = []manifestCase{
	{tool: "review_status", new: []edit{{"  v1:\n", "  v3:\n    schema: upstream.v1.schema.json\n    projection: {change_id: /change_id, decision: /status, reviewed_by: /reviewer}\n  v1:\n"}},
		rule: schemadiff.RuleManifestVersionAdded, level: reports.ContractChange},
	{tool: "review_status", old: []edit{{"  v1:\n", "  v3:\n    schema: upstream.v1.schema.json\n    projection: {change_id: /change_id, decision: /status, reviewed_by: /reviewer}\n  v1:\n"}},
		rule: schemadiff.RuleManifestVersionRemoved, level: reports.Compatible},
	{tool: "review_status", new: []edit{{"current: v2", "current: v1"}},
		rule: schemadiff.RuleManifestCurrentChanged, level: reports.ContractChange},
	{tool: "review_status", new: []edit{{"current: v2\n", "current: v2\nprotocol: mcp\n"}},
		rule: schemadiff.RuleManifestProtocolChanged, level: reports.Breaking},
	{tool: "review_status", new: []edit{{"max_bytes: 16384", "max_bytes: 1073741824"}},
		rule: schemadiff.RuleManifestLimitRaised, level: reports.Breaking},
	{tool: "job_run", new: []edit{{"  max_depth: 4\n", "  max_depth: 4\n  max_number_length: 4096\n"}},
		rule: schemadiff.RuleManifestLimitRaised, level: reports.Breaking},
	{tool: "review_status", new: []edit{{"  max_depth: 8\n", "  max_depth: 8\n  member_fold_collision: false\n"}},
		rule: schemadiff.RuleManifestLimitRaised, level: reports.Breaking},
	{tool: "review_status", new: []edit{{"max_depth: 8", "max_depth: 6"}},
		rule: schemadiff.RuleManifestLimitLowered, level: reports.Compatible},
	{tool: "review_status", new: []edit{{"agent_schema: agent.schema.json\n", "agent_schema: agent.schema.json\ncontent_types: [application/json, application/*+json, text/plain]\n"}},
		rule: schemadiff.RuleManifestContentTypesWidened, level: reports.Breaking},
	{tool: "review_status", new: []edit{{"agent_schema: agent.schema.json\n", "agent_schema: agent.schema.json\ncontent_types: [application/json]\n"}},
		rule: schemadiff.RuleManifestContentTypesNarrowed, level: reports.Compatible},
	{tool: "review_status", new: []edit{{"agent_schema: agent.schema.json\n", "agent_schema: agent.schema.json\nformats: {email: mailbox}\n"}},
		rule: schemadiff.RuleManifestFormatPolicyLoosened, level: reports.Breaking},
	{tool: "review_status", new: []edit{{"agent_schema: agent.schema.json\n", "agent_schema: agent.schema.json\nformats: {default: annotate}\n"}},
		rule: schemadiff.RuleManifestFormatPolicyLoosened, level: reports.Breaking},
	{tool: "review_status", old: []edit{{"agent_schema: agent.schema.json\n", "agent_schema: agent.schema.json\nformats: {uri: annotate}\n"}},
		rule: schemadiff.RuleManifestFormatPolicyTightened, level: reports.Compatible},
	{tool: "review_status", old: []edit{{"agent_schema: agent.schema.json\n", "agent_schema: agent.schema.json\ntext:\n  default: {max_length: 200}\n"}},
		new:  []edit{{"agent_schema: agent.schema.json\n", "agent_schema: agent.schema.json\ntext:\n  default: {max_length: 400}\n"}},
		rule: schemadiff.RuleManifestTextPolicyLoosened, level: reports.Breaking},
	{tool: "review_status", new: []edit{{"agent_schema: agent.schema.json\n", "agent_schema: agent.schema.json\ntext:\n  fields:\n    reviewed_by: {bidi: true}\n"}},
		rule: schemadiff.RuleManifestTextPolicyLoosened, level: reports.Breaking},
	{tool: "review_status", new: []edit{{"agent_schema: agent.schema.json\n", "agent_schema: agent.schema.json\ntext:\n  fields:\n    reviewed_by: {max_length: 64}\n"}},
		rule: schemadiff.RuleManifestTextPolicyTightened, level: reports.Compatible},
	{tool: "review_status", new: []edit{{reviewBinding, ""}},
		rule: schemadiff.RuleManifestRuleRemoved, level: reports.Breaking, instance: "/request_id"},
	{tool: "job_run", new: []edit{{"freshness: {pointer: /observed_at, max_age: 15m, max_skew: 1m}", "freshness: {pointer: /observed_at, max_age: 720h, max_skew: 1m}"}},
		rule: schemadiff.RuleManifestRuleLoosened, level: reports.Breaking, instance: "/observed_at"},
	{tool: "job_run", new: []edit{{"freshness: {pointer: /observed_at, max_age: 15m, max_skew: 1m}", "freshness: {pointer: /observed_at, max_age: 0s, max_skew: 1m}"}},
		rule: schemadiff.RuleManifestRuleLoosened, level: reports.Breaking, instance: "/observed_at"},
	{tool: "job_run", new: []edit{{"freshness: {pointer: /checked_at, max_age: 15m, max_skew: 1m}", "freshness: {pointer: /checked_at, max_age: 15m, max_skew: 10m}"}},
		rule: schemadiff.RuleManifestRuleLoosened, level: reports.Breaking, instance: "/checked_at"},
	{tool: "job_run", new: []edit{{"context: {pointer: /project_id, key: project}", "context: {pointer: /project_id, key: project_runs}"}},
		rule: schemadiff.RuleManifestRuleChanged, level: reports.Breaking, instance: "/project_id"},
	{tool: "job_run", new: []edit{{"membership: {pointer: /run_id, key: project_runs}", "context: {pointer: /run_id, key: project_runs}"}},
		rule: schemadiff.RuleManifestRuleChanged, level: reports.Breaking, instance: "/run_id"},
	{tool: "job_run", new: []edit{{"freshness: {pointer: /observed_at, max_age: 15m, max_skew: 1m}", "freshness: {pointer: /observed_at, max_age: 5m, max_skew: 1m}"}},
		rule: schemadiff.RuleManifestRuleTightened, level: reports.Compatible, instance: "/observed_at"},
	{tool: "job_run", new: []edit{{"        membership: {pointer: /run_id, key: project_runs}\n", "        membership: {pointer: /run_id, key: project_runs}\n      - name: run_echo\n        context: {pointer: /run_id, key: run}\n"}},
		rule: schemadiff.RuleManifestRuleAdded, level: reports.Compatible, instance: "/run_id"},
	{tool: "user_profile", old: []edit{{"      display_name: /display_name\n", ""}},
		rule: schemadiff.RuleManifestProjectionFieldAdded, level: reports.ContractChange, instance: "/display_name"},
	{tool: "user_profile", new: []edit{{"      display_name: /display_name\n", ""}},
		rule: schemadiff.RuleManifestProjectionFieldRemoved, level: reports.Breaking, instance: "/display_name"},
	{tool: "review_status", new: []edit{{"      reviewed_by: /data/reviewed_by\n", "      reviewed_by: /data/change_id\n"}},
		rule: schemadiff.RuleManifestProjectionFieldRepoint, level: reports.Breaking, instance: "/data/change_id"},
	{tool: "job_run", new: []edit{{"agent_schema: agent.schema.json\n", "agent_schema: agent.schema.json\nerror_codes: [INVALID_RESPONSE]\n"}},
		rule: schemadiff.RuleManifestErrorCodesChanged, level: reports.ContractChange},
	{tool: "review_status", new: []edit{{"agent_error_schema: agent.error.schema.json\n", ""}, {"        retryable: false\n        detail: {upstream_code: /error/code}\n", "        retryable: false\n"}, {"        retryable: true\n        detail: {upstream_code: /error/code}\n", "        retryable: true\n"}},
		rule: schemadiff.RuleManifestAgentErrorSchemaChanged, level: reports.Breaking},
	{tool: "review_status", old: []edit{{"      - name: unavailable\n", "      - name: down\n"}},
		rule: schemadiff.RuleManifestErrorContractAdded, level: reports.ContractChange},
	{tool: "review_status", new: []edit{{"      - name: unavailable\n", "      - name: down\n"}},
		rule: schemadiff.RuleManifestErrorContractRemoved, level: reports.ContractChange},
	{tool: "review_status", new: []edit{{"when: {status: [200, 503]}", "when: {status: [200, 502, 503]}"}},
		rule: schemadiff.RuleManifestErrorContractChanged, level: reports.Breaking},
	{tool: "review_status", new: []edit{{"        code: UPSTREAM_UNAVAILABLE\n        retryable: true\n", "        code: UPSTREAM_UNAVAILABLE\n        retryable: false\n"}},
		rule: schemadiff.RuleManifestErrorOutcomeChanged, level: reports.ContractChange},
	{tool: "review_status", new: []edit{{"agent_schema: agent.schema.json\n", "agent_schema: agent.schema.json\nstatuses:\n  \"409\": {error_code: UPSTREAM_UNAVAILABLE}\n"}},
		rule: schemadiff.RuleManifestStatusPolicyChanged, level: reports.ContractChange},
	{tool: "review_status", new: []edit{{"agent_schema: agent.schema.json\n", "agent_schema: agent.schema.json\nretryable: {transport.empty_body: true}\n"}},
		rule: schemadiff.RuleManifestStatusPolicyChanged, level: reports.ContractChange},
}

// lastToken is the last reference token of an RFC 6901 pointer.
func lastToken(p string) string {
	i := strings.LastIndex(p, "/")
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(p[i+1:])
}

var _ = Describe("contract diff: the manifest rules", func() {
	var entries []TableEntry
	for _, c := range manifestCases {
		entries = append(entries, Entry(c.tool+": "+c.rule, c))
	}

	DescribeTable("one manifest key changed", func(c manifestCase) {
		changes, newDir := manifestChanges(c)
		var found *reports.Change
		for i := range changes {
			if changes[i].Rule == c.rule {
				found = &changes[i]
				break
			}
		}
		Expect(found).NotTo(BeNil(), "rule %s not reported; got %v", c.rule, rulesOf(changes))
		Expect(found.Level).To(Equal(c.level))
		if c.instance != "" {
			Expect(found.Instance).To(Equal(c.instance))
		}
		for _, ch := range changes {
			r, ok := schemadiff.Lookup(ch.Rule)
			Expect(ok).To(BeTrue(), "unregistered rule %s", ch.Rule)
			Expect(r.Manifest).NotTo(BeNil(), "%s is a manifest rule", ch.Rule)
			Expect(ch.Level).To(Equal(r.Level))
		}
		// The change names the manifest and the line of its key there.
		Expect(found.File).To(HaveSuffix(filepath.Join(c.tool, gate.ManifestFile)))
		Expect(found.Line).To(BeNumerically(">", 0))
		src, err := os.ReadFile(found.File)
		Expect(err).NotTo(HaveOccurred())
		line := strings.Split(string(src), "\n")[found.Line-1]
		ptr := found.OldPointer
		if strings.HasPrefix(found.File, newDir+string(filepath.Separator)) {
			ptr = found.NewPointer
		}
		if tok := lastToken(ptr); ptr != "" {
			if regexp.MustCompile(`^[0-9]+$`).MatchString(tok) {
				Expect(line).To(MatchRegexp(`^\s*- |"`+tok+`":`), "line %d of %s is the list entry or key %s", found.Line, found.File, ptr)
			} else {
				Expect(line).To(ContainSubstring(tok), "line %d of %s holds the key of %s", found.Line, found.File, ptr)
			}
		}
	}, entries)

	It("has a case for every manifest rule", func() {
		covered := map[string]bool{schemadiff.RuleManifestContractAdded: true, schemadiff.RuleManifestContractRemoved: true} // specs below
		for _, c := range manifestCases {
			covered[c.rule] = true
		}
		for _, r := range schemadiff.Rules() {
			if r.Manifest != nil {
				Expect(covered).To(HaveKey(r.ID), "no manifest case for %s", r.ID)
			}
		}
	})

	It("reports nothing for a contract diffed against itself", func() {
		for _, tool := range []string{"review_status", "job_run", "deploy_status", "user_profile"} {
			d, err := schemadiff.Contracts(context.Background(), contractDir(tool, nil), contractDir(tool, nil), schemadiff.ContractOptions{})
			Expect(err).NotTo(HaveOccurred())
			for _, cmp := range d.Comparisons {
				Expect(cmp.Changes).To(BeEmpty(), "%s: %s", tool, cmp.Name)
			}
		}
	})

	It("reports a contract added or removed", func() {
		d, err := schemadiff.Contracts(context.Background(), contractDir("job_run", nil), contractDir("job_run", nil), schemadiff.ContractOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(d.Comparisons).NotTo(BeEmpty())
		c, err := gate.LoadDir(contractDir("job_run", nil), gate.Options{})
		Expect(err).NotTo(HaveOccurred())
		d, err = schemadiff.ComparePairs(context.Background(), []schemadiff.ContractPair{{New: c}, {Old: c}}, schemadiff.ContractOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(d.Comparisons).To(HaveLen(2))
		Expect(rulesOf(d.Comparisons[0].Changes)).To(Equal([]string{schemadiff.RuleManifestContractAdded}))
		Expect(rulesOf(d.Comparisons[1].Changes)).To(Equal([]string{schemadiff.RuleManifestContractRemoved}))
		Expect(d.Comparisons[0].Changes[0].Level).To(Equal(reports.ContractChange))
		// A new contract lets a tool's responses through: gate impact.
		Expect(d.Comparisons[0].Changes[0].TouchesGate()).To(BeTrue())
		Expect(d.Comparisons[0].Changes[0].Impact.Loosens).To(BeTrue())
	})

	It("treats a dropped request-binding rule as breaking and a gate impact", func() {
		changes, _ := manifestChanges(manifestCase{tool: "review_status", new: []edit{{reviewBinding, ""}}})
		Expect(rulesOf(changes)).To(Equal([]string{schemadiff.RuleManifestRuleRemoved}))
		Expect(changes[0].Level).To(Equal(reports.Breaking))
		Expect(changes[0].TouchesGate()).To(BeTrue())
		Expect(changes[0].OldPointer).To(Equal("/upstream_versions/v2/rules/0"))
		Expect(changes[0].Message).To(ContainSubstring(`binding rule "request_binding" on /request_id was removed`))
	})
})

var _ = Describe("contract diff: the gate-impact view", func() {
	// fixtures copies the bundled fixtures of tool into a new fixtures
	// folder.
	fixtures := func(tool string) string {
		root := GinkgoT().TempDir()
		Expect(os.CopyFS(filepath.Join(root, tool), os.DirFS(filepath.Join("..", "fixtures", tool)))).To(Succeed())
		return root
	}
	narrowed := func(dir, from, to string) {
		file := filepath.Join(dir, "upstream.v2.schema.json")
		b, err := os.ReadFile(file)
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Count(string(b), from)).To(Equal(1))
		Expect(os.WriteFile(file, []byte(strings.Replace(string(b), from, to, 1)), 0o644)).To(Succeed())
	}

	It("names the projected field a schema change touches and counts the fixtures a narrowing refuses", func() {
		oldDir, newDir := contractDir("review_status", nil), contractDir("review_status", nil)
		narrowed(newDir, `"decision": { "enum": ["approved", "rejected", "pending"] }`, `"decision": { "enum": ["approved", "rejected"] }`)
		d, err := schemadiff.Contracts(context.Background(), oldDir, newDir, schemadiff.ContractOptions{Fixtures: fixtures("review_status")})
		Expect(err).NotTo(HaveOccurred())
		var got *reports.Change
		for _, cmp := range d.Comparisons {
			for i, c := range cmp.Changes {
				if c.Rule == schemadiff.RuleEnumValueRemoved {
					got = &cmp.Changes[i]
				}
			}
		}
		Expect(got).NotTo(BeNil())
		Expect(got.Impact.Projected).To(Equal([]string{"decision"}))
		Expect(got.Impact.Fixtures).NotTo(BeNil())
		// pending-escaped.json is the one accepted v2 response with "pending".
		Expect(got.Impact.Fixtures.Refused).To(Equal(1))
		Expect(got.Impact.Fixtures.Examples).To(HaveLen(1))
		Expect(got.Impact.Fixtures.Examples[0]).To(HaveSuffix("pending-escaped.json"))
		Expect(got.TouchesGate()).To(BeTrue())
		Expect(d.Evidence).To(MatchRegexp(`^gate impact: \d+ fixture\(s\) .* 1 admitted by the old contract are refused by the new one$`))
	})

	It("names the rule whose pointer a schema change touches", func() {
		oldDir, newDir := contractDir("review_status", nil), contractDir("review_status", nil)
		narrowed(newDir, `"requestId": { "type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]{7,63}$" }`, `"requestId": { "type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]{7,63}$", "maxLength": 40 }`)
		d, err := schemadiff.Contracts(context.Background(), oldDir, newDir, schemadiff.ContractOptions{Fixtures: fixtures("review_status")})
		Expect(err).NotTo(HaveOccurred())
		var got *reports.Change
		for _, cmp := range d.Comparisons {
			for i, c := range cmp.Changes {
				if c.Rule == schemadiff.RuleLengthTightened {
					got = &cmp.Changes[i]
				}
			}
		}
		Expect(got).NotTo(BeNil())
		Expect(got.Instance).To(Equal("/request_id"))
		Expect(got.Impact.Rules).To(Equal([]string{"request_binding"}))
		Expect(got.Impact.Projected).To(BeEmpty())
		Expect(got.Impact.Fixtures.Refused).To(Equal(0))
	})

	It("attributes refusals of a lowered limit to the limit, and says when there are no fixtures", func() {
		oldDir := contractDir("review_status", nil)
		newDir := contractDir("review_status", []edit{{"max_bytes: 16384", "max_bytes: 64"}})
		d, err := schemadiff.Contracts(context.Background(), oldDir, newDir, schemadiff.ContractOptions{Fixtures: fixtures("review_status")})
		Expect(err).NotTo(HaveOccurred())
		ch := d.Comparisons[len(d.Comparisons)-1].Changes
		Expect(rulesOf(ch)).To(Equal([]string{schemadiff.RuleManifestLimitLowered}))
		Expect(ch[0].Impact.Fixtures.Refused).To(BeNumerically(">", 0))
		Expect(ch[0].TouchesGate()).To(BeTrue())

		d, err = schemadiff.Contracts(context.Background(), oldDir, newDir, schemadiff.ContractOptions{Fixtures: filepath.Join(GinkgoT().TempDir(), "absent")})
		Expect(err).NotTo(HaveOccurred())
		Expect(d.Evidence).To(HavePrefix("no fixture evidence: "))
		Expect(d.Comparisons[len(d.Comparisons)-1].Changes[0].Impact).To(BeNil())
		Expect(d.GateImpact()).To(Equal(0))
	})
})

var _ = Describe("contract diff: the gate impact of a change behind a shared $ref", func() {
	// A pull request's author and its head's author are one $defs/user:
	// a change inside it is reported once, at the shallower /author, while
	// only /head/author/login is projected.
	write := func(maxLength int) string {
		dir := filepath.Join(GinkgoT().TempDir(), "pull_author")
		Expect(os.Mkdir(dir, 0o755)).To(Succeed())
		files := map[string]string{
			"contract.yaml": `tool: pull_author
version: "1.0.0"
agent_schema: agent.schema.json
current: v1
upstream_versions:
  v1:
    schema: upstream.v1.schema.json
    projection:
      head_author: /head/author/login
`,
			"agent.schema.json": `{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "additionalProperties": false,
  "properties": {"head_author": {"type": "string", "maxLength": 64}}}`,
			"upstream.v1.schema.json": `{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
  "properties": {
    "author": {"$ref": "#/$defs/user"},
    "head": {"type": "object", "properties": {"author": {"$ref": "#/$defs/user"}}}
  },
  "$defs": {"user": {"type": "object", "properties": {"login": {"type": "string", "maxLength": ` + strconv.Itoa(maxLength) + `}}}}}`,
		}
		for name, text := range files {
			Expect(os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)).To(Succeed())
		}
		return dir
	}

	It("names the projected field reached through the other location", func() {
		d, err := schemadiff.Contracts(context.Background(), write(39), write(64), schemadiff.ContractOptions{})
		Expect(err).NotTo(HaveOccurred())
		var got []reports.Change
		for _, cmp := range d.Comparisons {
			for _, c := range cmp.Changes {
				if c.Rule == schemadiff.RuleLengthLoosened {
					got = append(got, c)
				}
			}
		}
		Expect(got).To(HaveLen(1), "the shared change is reported once")
		Expect(got[0].Instance).To(Equal("/author/login"))
		Expect(got[0].Message).To(ContainSubstring("/head/author/login"))
		Expect(got[0].Impact).NotTo(BeNil())
		Expect(got[0].Impact.Projected).To(Equal([]string{"head_author"}))
		Expect(got[0].TouchesGate()).To(BeTrue())
	})

	It("names no field when the projection reaches neither location", func() {
		old, new := write(39), write(64)
		for _, dir := range []string{old, new} {
			b, err := os.ReadFile(filepath.Join(dir, "contract.yaml"))
			Expect(err).NotTo(HaveOccurred())
			Expect(os.WriteFile(filepath.Join(dir, "contract.yaml"), []byte(strings.Replace(string(b), "/head/author/login", "/title", 1)), 0o644)).To(Succeed())
		}
		d, err := schemadiff.Contracts(context.Background(), old, new, schemadiff.ContractOptions{})
		Expect(err).NotTo(HaveOccurred())
		for _, cmp := range d.Comparisons {
			for _, c := range cmp.Changes {
				if c.Rule == schemadiff.RuleLengthLoosened {
					Expect(c.Impact.Projected).To(BeEmpty())
				}
			}
		}
	})
})
