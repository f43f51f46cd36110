package schemadiff_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/testtree"
	"github.com/airlockdev/airlock/reports"
	"github.com/airlockdev/airlock/schemadiff"
)

// diffCase is one schema pair of the rule table: the change it must yield.
type diffCase struct {
	name     string
	old, new string
	// files are siblings written beside old.json and new.json ($ref targets).
	files    map[string]string
	rule     string
	level    reports.Level
	instance string
}

// obj wraps properties into an object schema; closed adds
// additionalProperties: false.
func obj(closed bool, required, props string) string {
	s := `{"type":"object","required":[` + required + `],"properties":{` + props + `}`
	if closed {
		s += `,"additionalProperties":false`
	}
	return s + "}"
}

// diffCases is the rule table: at least one pair per rule of the registry
// (a spec below fails for a registered rule that no case expects and sees).
var diffCases = []diffCase{
	{name: "a required property is removed", old: obj(true, `"a","b"`, `"a":{"type":"string"},"b":{"type":"string"}`), new: obj(true, `"b"`, `"b":{"type":"string"}`),
		rule: schemadiff.RulePropertyRemoved, level: reports.Breaking, instance: "/a"},
	{name: "an optional property of an open object is removed", old: obj(false, ``, `"a":{"type":"string"}`), new: obj(false, ``, ``),
		rule: schemadiff.RulePropertyRemoved, level: reports.Breaking, instance: "/a"},
	{name: "an optional property of a closed object is removed", old: obj(true, ``, `"a":{"type":"string"},"b":{"type":"string"}`), new: obj(true, ``, `"b":{"type":"string"}`),
		rule: schemadiff.RuleOptionalPropertyRemoved, level: reports.ContractChange, instance: "/a"},
	{name: "an optional property is added to a closed object", old: obj(true, `"a"`, `"a":{"type":"string"}`), new: obj(true, `"a"`, `"a":{"type":"string"},"note":{"type":"string"}`),
		rule: schemadiff.RulePropertyAdded, level: reports.ContractChange, instance: "/note"},
	{name: "a required property is added to a closed object", old: obj(true, ``, ``), new: obj(true, `"a"`, `"a":{"type":"string"}`),
		rule: schemadiff.RulePropertyAdded, level: reports.ContractChange, instance: "/a"},
	{name: "a property is defined in an open object", old: obj(false, ``, ``), new: obj(false, ``, `"a":{"type":"string"}`),
		rule: schemadiff.RulePropertyAddedOpen, level: reports.Compatible, instance: "/a"},
	{name: "a property is no longer required", old: obj(true, `"a"`, `"a":{"type":"string"}`), new: obj(true, ``, `"a":{"type":"string"}`),
		rule: schemadiff.RuleBecameOptional, level: reports.Breaking, instance: "/a"},
	{name: "a property becomes required", old: obj(true, ``, `"a":{"type":"string"}`), new: obj(true, `"a"`, `"a":{"type":"string"}`),
		rule: schemadiff.RuleBecameRequired, level: reports.Compatible, instance: "/a"},
	{name: "a string becomes an object", old: obj(true, ``, `"state":{"type":"string"}`), new: obj(true, ``, `"state":{"type":"object"}`),
		rule: schemadiff.RuleTypeChanged, level: reports.Breaking, instance: "/state"},
	{name: "integer becomes number", old: `{"type":"integer"}`, new: `{"type":"number"}`,
		rule: schemadiff.RuleTypeWidened, level: reports.Breaking},
	{name: "a second type is allowed", old: `{"type":"string"}`, new: `{"type":["string","integer"]}`,
		rule: schemadiff.RuleTypeWidened, level: reports.Breaking},
	{name: "type is dropped", old: `{"type":"string"}`, new: `{}`,
		rule: schemadiff.RuleTypeWidened, level: reports.Breaking},
	{name: "the false schema starts admitting values", old: obj(false, ``, `"a":false`), new: obj(false, ``, `"a":{"type":"string"}`),
		rule: schemadiff.RuleTypeWidened, level: reports.Breaking, instance: "/a"},
	{name: "number becomes integer", old: `{"type":"number"}`, new: `{"type":"integer"}`,
		rule: schemadiff.RuleTypeNarrowed, level: reports.Compatible},
	{name: "null is no longer allowed", old: `{"type":["string","null"]}`, new: `{"type":"string"}`,
		rule: schemadiff.RuleTypeNarrowed, level: reports.Compatible},
	{name: "null is added", old: obj(true, ``, `"name":{"type":"string"}`), new: obj(true, ``, `"name":{"type":["string","null"]}`),
		rule: schemadiff.RuleBecameNullable, level: reports.Breaking, instance: "/name"},
	{name: "an enum gains a value", old: obj(true, ``, `"state":{"enum":["healthy","failed"]}`), new: obj(true, ``, `"state":{"enum":["healthy","failed","paused"]}`),
		rule: schemadiff.RuleEnumValueAdded, level: reports.Breaking, instance: "/state"},
	{name: "a const becomes an enum", old: `{"const":"a"}`, new: `{"enum":["a","b"]}`,
		rule: schemadiff.RuleEnumValueAdded, level: reports.Breaking},
	{name: "an enum loses a value", old: `{"type":"string","enum":["a","b"]}`, new: `{"type":"string","enum":["a"]}`,
		rule: schemadiff.RuleEnumValueRemoved, level: reports.Compatible},
	{name: "an enum is dropped", old: `{"type":"string","enum":["a","b"]}`, new: `{"type":"string","maxLength":8}`,
		rule: schemadiff.RuleEnumRemoved, level: reports.Breaking},
	{name: "an enum is added", old: `{"type":"string"}`, new: `{"type":"string","enum":["a"]}`,
		rule: schemadiff.RuleEnumAdded, level: reports.Compatible},
	{name: "a const changes", old: obj(true, `"outcome"`, `"outcome":{"const":"success"}`), new: obj(true, `"outcome"`, `"outcome":{"const":"ok"}`),
		rule: schemadiff.RuleConstChanged, level: reports.Breaking, instance: "/outcome"},
	{name: "maxLength is raised", old: `{"type":"string","maxLength":8}`, new: `{"type":"string","maxLength":16}`,
		rule: schemadiff.RuleLengthLoosened, level: reports.Breaking},
	{name: "maxLength is dropped", old: `{"type":"string","maxLength":8}`, new: `{"type":"string"}`,
		rule: schemadiff.RuleLengthLoosened, level: reports.Breaking},
	{name: "minLength is lowered", old: `{"type":"string","minLength":2}`, new: `{"type":"string","minLength":1}`,
		rule: schemadiff.RuleLengthLoosened, level: reports.Breaking},
	{name: "maxLength is lowered", old: `{"type":"string","maxLength":16}`, new: `{"type":"string","maxLength":8}`,
		rule: schemadiff.RuleLengthTightened, level: reports.Compatible},
	{name: "minLength is added", old: `{"type":"string"}`, new: `{"type":"string","minLength":1}`,
		rule: schemadiff.RuleLengthTightened, level: reports.Compatible},
	{name: "maximum is raised", old: `{"type":"integer","maximum":10}`, new: `{"type":"integer","maximum":20}`,
		rule: schemadiff.RuleRangeLoosened, level: reports.Breaking},
	{name: "an exclusive maximum becomes inclusive", old: `{"type":"number","exclusiveMaximum":10}`, new: `{"type":"number","maximum":10}`,
		rule: schemadiff.RuleRangeLoosened, level: reports.Breaking},
	{name: "minimum is dropped", old: `{"type":"number","minimum":0}`, new: `{"type":"number"}`,
		rule: schemadiff.RuleRangeLoosened, level: reports.Breaking},
	{name: "multipleOf changes to a value that is not a multiple", old: `{"type":"number","multipleOf":2}`, new: `{"type":"number","multipleOf":3}`,
		rule: schemadiff.RuleRangeLoosened, level: reports.Breaking},
	{name: "minimum is raised", old: `{"type":"number","minimum":0}`, new: `{"type":"number","minimum":1}`,
		rule: schemadiff.RuleRangeTightened, level: reports.Compatible},
	{name: "an inclusive maximum becomes exclusive", old: `{"type":"number","maximum":10}`, new: `{"type":"number","exclusiveMaximum":10}`,
		rule: schemadiff.RuleRangeTightened, level: reports.Compatible},
	{name: "multipleOf becomes a multiple of the old one", old: `{"type":"number","multipleOf":2}`, new: `{"type":"number","multipleOf":4}`,
		rule: schemadiff.RuleRangeTightened, level: reports.Compatible},
	{name: "maxItems is raised", old: `{"type":"array","maxItems":3}`, new: `{"type":"array","maxItems":5}`,
		rule: schemadiff.RuleItemsLoosened, level: reports.Breaking},
	{name: "uniqueItems is dropped", old: `{"type":"array","uniqueItems":true}`, new: `{"type":"array"}`,
		rule: schemadiff.RuleItemsLoosened, level: reports.Breaking},
	{name: "minItems is raised", old: `{"type":"array","minItems":0}`, new: `{"type":"array","minItems":1}`,
		rule: schemadiff.RuleItemsTightened, level: reports.Compatible},
	{name: "maxProperties is dropped", old: `{"type":"object","maxProperties":3}`, new: `{"type":"object"}`,
		rule: schemadiff.RuleMembersLoosened, level: reports.Breaking},
	{name: "minProperties is raised", old: `{"type":"object","minProperties":1}`, new: `{"type":"object","minProperties":2}`,
		rule: schemadiff.RuleMembersTightened, level: reports.Compatible},
	{name: "a pattern changes", old: `{"type":"string","pattern":"^[0-9a-f]{7}$"}`, new: `{"type":"string","pattern":"^[0-9a-f]{7,40}$"}`,
		rule: schemadiff.RulePatternChanged, level: reports.Breaking},
	{name: "a pattern is dropped", old: `{"type":"string","pattern":"^[a-z]+$"}`, new: `{"type":"string"}`,
		rule: schemadiff.RulePatternRemoved, level: reports.Breaking},
	{name: "a pattern is added", old: `{"type":"string"}`, new: `{"type":"string","pattern":"^[a-z]+$"}`,
		rule: schemadiff.RulePatternAdded, level: reports.Compatible},
	{name: "a format changes", old: `{"type":"string","format":"date-time"}`, new: `{"type":"string","format":"date"}`,
		rule: schemadiff.RuleFormatChanged, level: reports.Breaking},
	{name: "a format is dropped", old: `{"type":"string","format":"date-time"}`, new: `{"type":"string"}`,
		rule: schemadiff.RuleFormatRemoved, level: reports.Breaking},
	{name: "a format is added", old: `{"type":"string"}`, new: `{"type":"string","format":"email"}`,
		rule: schemadiff.RuleFormatAdded, level: reports.Compatible},
	{name: "additionalProperties: false is dropped", old: obj(true, ``, `"a":{"type":"string"}`), new: obj(false, ``, `"a":{"type":"string"}`),
		rule: schemadiff.RuleObjectOpened, level: reports.Breaking},
	{name: "unevaluatedProperties: false after allOf is dropped",
		old:  `{"allOf":[{"properties":{"a":{"type":"string"}}}],"unevaluatedProperties":false}`,
		new:  `{"allOf":[{"properties":{"a":{"type":"string"}}}]}`,
		rule: schemadiff.RuleObjectOpened, level: reports.Breaking},
	{name: "additionalProperties false becomes a schema", old: `{"type":"object","additionalProperties":false}`, new: `{"type":"object","additionalProperties":{"type":"string"}}`,
		rule: schemadiff.RuleObjectOpened, level: reports.Breaking},
	{name: "an open object is closed", old: obj(false, ``, `"a":{"type":"string"}`), new: obj(true, ``, `"a":{"type":"string"}`),
		rule: schemadiff.RuleObjectClosed, level: reports.Compatible},
	{name: "a oneOf gains an alternative",
		old:  `{"oneOf":[` + obj(true, `"kind"`, `"kind":{"const":"a"}`) + `,` + obj(true, `"kind"`, `"kind":{"const":"b"}`) + `]}`,
		new:  `{"oneOf":[` + obj(true, `"kind"`, `"kind":{"const":"a"}`) + `,` + obj(true, `"kind"`, `"kind":{"const":"b"}`) + `,` + obj(true, `"kind"`, `"kind":{"const":"c"}`) + `]}`,
		rule: schemadiff.RuleBranchAdded, level: reports.Breaking},
	{name: "a single shape becomes one of several", old: `{"type":"string"}`, new: `{"anyOf":[{"type":"string"},{"type":"integer"}]}`,
		rule: schemadiff.RuleBranchAdded, level: reports.Breaking},
	{name: "a oneOf loses an alternative",
		old:  `{"oneOf":[` + obj(true, `"kind"`, `"kind":{"const":"a"}`) + `,` + obj(true, `"kind"`, `"kind":{"const":"b"}`) + `]}`,
		new:  `{"oneOf":[` + obj(true, `"kind"`, `"kind":{"const":"a"}`) + `]}`,
		rule: schemadiff.RuleBranchRemoved, level: reports.Compatible},
	{name: "a $ref names another definition",
		old:  `{"$ref":"#/$defs/a","$defs":{"a":{"type":"string"},"b":{"type":"string"}}}`,
		new:  `{"$ref":"#/$defs/b","$defs":{"a":{"type":"string"},"b":{"type":"string"}}}`,
		rule: schemadiff.RuleRefTargetChanged, level: reports.Compatible},
	{name: "a $ref names another sibling file",
		old:   `{"$ref":"common.json#/$defs/state"}`,
		new:   `{"$ref":"common2.json#/$defs/state"}`,
		files: map[string]string{"common.json": `{"$defs":{"state":{"enum":["a"]}}}`, "common2.json": `{"$defs":{"state":{"enum":["a"]}}}`},
		rule:  schemadiff.RuleRefTargetChanged, level: reports.Compatible},
	{name: "a keyword diff does not classify changes", old: `{"type":"string","not":{"const":"a"}}`, new: `{"type":"string","not":{"const":"b"}}`,
		rule: schemadiff.RuleUnclassifiedKeywordChange, level: reports.Breaking},
	// Through $ref, allOf, items and sibling files.
	{name: "an enum value is added behind a $ref in a sibling file",
		old:   obj(true, ``, `"state":{"$ref":"common.json#/$defs/state"}`),
		new:   obj(true, ``, `"state":{"$ref":"common.json#/$defs/state2"}`),
		files: map[string]string{"common.json": `{"$defs":{"state":{"enum":["a"]},"state2":{"enum":["a","b"]}}}`},
		rule:  schemadiff.RuleEnumValueAdded, level: reports.Breaking, instance: "/state"},
	{name: "a property of array items changes type",
		old:  `{"type":"array","items":` + obj(true, ``, `"id":{"type":"string"}`) + `}`,
		new:  `{"type":"array","items":` + obj(true, ``, `"id":{"type":"integer"}`) + `}`,
		rule: schemadiff.RuleTypeChanged, level: reports.Breaking, instance: "/*/id"},
	{name: "a property merged from allOf becomes optional",
		old:  `{"allOf":[{"required":["a"]},{"properties":{"a":{"type":"string"}}}]}`,
		new:  `{"allOf":[{"properties":{"a":{"type":"string"}}}]}`,
		rule: schemadiff.RuleBecameOptional, level: reports.Breaking, instance: "/a"},
}

// writeSchemas writes old.json, new.json and the sibling files of c into a
// temp dir and returns the two paths.
func writeSchemas(c diffCase) (string, string) {
	dir := GinkgoT().TempDir()
	files := map[string]string{"old.json": c.old, "new.json": c.new}
	for k, v := range c.files {
		files[k] = v
	}
	for name, content := range files {
		Expect(os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)).To(Succeed())
	}
	return filepath.Join(dir, "old.json"), filepath.Join(dir, "new.json")
}

func diffOf(c diffCase) []reports.Change {
	oldPath, newPath := writeSchemas(c)
	d, err := schemadiff.Files(oldPath, newPath)
	Expect(err).NotTo(HaveOccurred())
	Expect(d.Comparisons).To(HaveLen(1))
	return d.Comparisons[0].Changes
}

func rulesOf(changes []reports.Change) []string {
	var out []string
	for _, c := range changes {
		out = append(out, c.Rule)
	}
	return out
}

var _ = Describe("airlock diff", func() {
	entries := []TableEntry{}
	for _, c := range diffCases {
		entries = append(entries, Entry(c.name, c))
	}
	DescribeTable("classifies each change with one rule of the registry",
		func(c diffCase) {
			changes := diffOf(c)
			var found *reports.Change
			for i := range changes {
				if changes[i].Rule == c.rule {
					found = &changes[i]
					break
				}
			}
			Expect(found).NotTo(BeNil(), "rule %s not reported; got %v", c.rule, rulesOf(changes))
			Expect(found.Level).To(Equal(c.level))
			rule, ok := schemadiff.Lookup(c.rule)
			Expect(ok).To(BeTrue())
			Expect(rule.Level).To(Equal(c.level), "the registry's level")
			if c.instance != "" {
				Expect(found.Instance).To(Equal(c.instance))
			}
			Expect(found.Message).To(HavePrefix(map[bool]string{true: "the response", false: found.Instance}[found.Instance == ""] + ": "))
			for _, ch := range changes {
				r, ok := schemadiff.Lookup(ch.Rule)
				Expect(ok).To(BeTrue(), "unregistered rule %s", ch.Rule)
				Expect(ch.Level).To(Equal(r.Level))
			}
		},
		entries,
	)

	It("exercises every registered rule in a case of diffCases that reports it", func() {
		reported := map[string]bool{}
		for _, c := range diffCases {
			for _, ch := range diffOf(c) {
				if ch.Rule == c.rule {
					reported[c.rule] = true
				}
			}
		}
		for _, r := range schemadiff.Rules() {
			if r.Manifest != nil {
				continue // manifest rules: manifest_test.go
			}
			Expect(r.Handler).NotTo(BeNil(), "rule %s has no handler", r.ID)
			Expect(reported).To(HaveKey(r.ID), "rule %s: no case of diffCases expects it and sees it reported; add one", r.ID)
		}
	})

	It("knows only registered ids", func() {
		_, ok := schemadiff.Lookup("response-no-such-rule")
		Expect(ok).To(BeFalse())
		r, ok := schemadiff.Lookup(schemadiff.RuleTypeChanged)
		Expect(ok).To(BeTrue())
		Expect(r.Level).To(Equal(reports.Breaking))
		Expect(r.Handler).NotTo(BeNil())
	})

	It("keeps rule ids unique, well-formed and described", func() {
		seen := map[string]bool{}
		for _, r := range schemadiff.Rules() {
			Expect(seen).NotTo(HaveKey(r.ID))
			seen[r.ID] = true
			Expect(r.ID).To(MatchRegexp(`^(response|manifest)-[a-z0-9-]+$`))
			Expect(r.Handler == nil).NotTo(Equal(r.Manifest == nil), "rule %s has exactly one of Handler and Manifest", r.ID)
			Expect(reports.Levels).To(ContainElement(r.Level))
			Expect(r.Description).To(HaveSuffix("."))
		}
	})

	It("is listed in docs/diff.md exactly as the registry says", func() {
		doc, err := os.ReadFile("../docs/diff.md")
		Expect(err).NotTo(HaveOccurred())
		table := schemadiff.RulesTable()
		header, _, _ := strings.Cut(table, "\n")
		Expect(strings.Count(string(doc), header)).To(Equal(1), "docs/diff.md has one rule table")
		_, got, _ := strings.Cut(string(doc), header)
		Expect(header+got).To(Equal(table), "docs/diff.md is stale; regenerate it with go run ./scripts/gendiffrules > docs/diff.md")
		for _, r := range schemadiff.Rules() {
			Expect(table).To(ContainSubstring("| `"+r.ID+"` | "+string(r.Level)+" | "), "the table lists %s", r.ID)
		}
	})

	It("reports nothing for equal schemas, nor for a move into $defs", func() {
		Expect(diffOf(diffCase{old: obj(true, `"a"`, `"a":{"type":"string","maxLength":8}`), new: obj(true, `"a"`, `"a":{"type":"string","maxLength":8}`)})).To(BeEmpty())
		Expect(diffOf(diffCase{
			old: obj(true, `"a"`, `"a":{"type":"string","maxLength":8}`),
			new: `{"$ref":"#/$defs/x","$defs":{"x":` + obj(true, `"a"`, `"a":{"type":"string","maxLength":8}`) + `}}`,
		})).To(BeEmpty())
	})

	It("gives the keyword location of a change in each schema, through $ref", func() {
		c := diffCase{
			old: `{"type":"object","properties":{"state":{"enum":["a"]}}}`,
			new: `{"type":"object","properties":{"state":{"$ref":"#/$defs/s"}},"$defs":{"s":{"enum":["a","b"]}}}`,
		}
		changes := diffOf(c)
		Expect(changes).To(HaveLen(1))
		// In the new file, the enum keyword under $defs/s (line 1, column 76).
		Expect(filepath.Base(changes[0].NewFile)).To(Equal("new.json"))
		Expect([]int{changes[0].NewLine, changes[0].NewColumn}).To(Equal([]int{1, 76}))
		changes[0].NewFile, changes[0].NewLine, changes[0].NewColumn = "", 0, 0
		Expect(changes[0]).To(Equal(reports.Change{
			Rule: schemadiff.RuleEnumValueAdded, Level: reports.Breaking, Instance: "/state",
			OldPointer: "/properties/state/enum", NewPointer: "/properties/state/$ref/enum",
			Message: `/state: value "b" was added to the allowed values`,
		}))
	})

	It("ends on recursive schemas and still compares them", func() {
		node := func(maxLength string) string {
			return `{"$ref":"#/$defs/node","$defs":{"node":{"type":"object","additionalProperties":false,"properties":{` +
				`"name":{"type":"string","maxLength":` + maxLength + `},` +
				`"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}}}`
		}
		changes := diffOf(diffCase{old: node("8"), new: node("16")})
		Expect(rulesOf(changes)).To(Equal([]string{schemadiff.RuleLengthLoosened}))
		Expect(changes[0].Instance).To(Equal("/name"))
	})

	It("treats null added as a oneOf branch that the old schema does not cover as an added branch", func() {
		changes := diffOf(diffCase{old: `{"type":"string"}`, new: `{"oneOf":[{"type":"string"},{"type":"null"}]}`})
		Expect(rulesOf(changes)).To(Equal([]string{schemadiff.RuleBranchAdded}))
	})

	It("does not call a split of one type list into alternatives an added branch", func() {
		changes := diffOf(diffCase{old: `{"type":["string","null"]}`, new: `{"oneOf":[{"type":"string"},{"type":"null"}]}`})
		for _, c := range changes {
			Expect(c.Level).NotTo(Equal(reports.Breaking), "%v", changes)
		}
	})

	It("compares a wide oneOf in full: each pair of subschemas once, no fixed cap", func() {
		// 40 alternatives of 20 properties each: 1,600 trial pairings, which
		// the walk used to refuse past 20,000 schema pairs.
		wide := func(extra string) string {
			var branches []string
			for i := range 40 {
				var props []string
				for j := range 20 {
					props = append(props, fmt.Sprintf(`"p%d":{"type":"string"%s}`, j, extra))
				}
				branches = append(branches, fmt.Sprintf(`{"type":"object","required":["kind"],"properties":{"kind":{"const":"k%d"},%s}}`, i, strings.Join(props, ",")))
			}
			return `{"oneOf":[` + strings.Join(branches, ",") + `]}`
		}
		changes := diffOf(diffCase{old: wide(""), new: wide(`,"maxLength":8`)})
		Expect(changes).To(HaveLen(40 * 20))
		for _, c := range changes {
			Expect(c.Rule).To(Equal(schemadiff.RuleLengthTightened))
		}
		Expect(changes[0].OldPointer).To(Equal("/oneOf/0/properties/p0"))
		Expect(changes[len(changes)-1].NewPointer).To(Equal("/oneOf/39/properties/p9/maxLength"))
	})

	It("refuses oneOf/anyOf groups that multiply past 64 alternatives, naming each group's file and pointer", func() {
		group := func(kw string, n int) string {
			var bs []string
			for i := range n {
				bs = append(bs, fmt.Sprintf(`{"properties":{"%s%d":{"type":"string"}}}`, kw, i))
			}
			return `{"` + kw + `":[` + strings.Join(bs, ",") + `]}`
		}
		s := `{"type":"object","properties":{"x":{"allOf":[` + group("oneOf", 5) + `,{"$ref":"defs.json#/$defs/any"}]}}}`
		oldPath, newPath := writeSchemas(diffCase{old: s, new: s, files: map[string]string{"defs.json": `{"$defs":{"any":` + group("anyOf", 13) + `}}`}})
		_, err := schemadiff.Files(oldPath, newPath)
		var ce *gate.ConfigError
		Expect(errors.As(err, &ce)).To(BeTrue(), "%v", err)
		Expect(ce.File).To(Equal(oldPath))
		Expect(ce.Key).To(Equal("/properties/x/allOf/0/oneOf"))
		Expect(ce.Msg).To(ContainSubstring("at instance location /x, its oneOf/anyOf groups multiply into 65 alternatives, more than the 64"))
		Expect(ce.Msg).To(ContainSubstring("oneOf at " + oldPath + "#/properties/x/allOf/0/oneOf (5 branches)"))
		Expect(ce.Msg).To(ContainSubstring("anyOf at " + filepath.Join(filepath.Dir(oldPath), "defs.json") + "#/$defs/any/anyOf (13 branches)"))
	})

	It("refuses a comparison past its bound of schema pairs, proportional to the schemas' size, naming the widest oneOf", func() {
		// 64 alternatives of 100 true properties: few JSON objects, but
		// 64 × 64 trial pairings of 100 properties each.
		var branches []string
		for i := range 64 {
			var props []string
			for j := range 100 {
				props = append(props, fmt.Sprintf(`"p%d":true`, j))
			}
			branches = append(branches, fmt.Sprintf(`{"type":"object","properties":{"k%d":{"type":"string"},%s}}`, i, strings.Join(props, ",")))
		}
		s := `{"oneOf":[` + strings.Join(branches, ",") + `]}`
		oldPath, newPath := writeSchemas(diffCase{old: s, new: s})
		_, err := schemadiff.Files(oldPath, newPath)
		var ce *gate.ConfigError
		Expect(errors.As(err, &ce)).To(BeTrue(), "%v", err)
		Expect(ce.File).To(Equal(newPath))
		Expect(ce.Msg).To(MatchRegexp(`too large to compare with .*old.json: more than \d+ schema pairs \(16 per JSON object or array`))
		Expect(ce.Msg).To(ContainSubstring("the widest oneOf/anyOf distribution seen has 64 alternatives, at instance location # (oneOf at " + oldPath + "#/oneOf (64 branches))"))
	})

	It("refuses a $ref outside the schema's folder and names the file", func() {
		for _, ref := range []string{"../outside.json", "https://example.com/s.json", "file:///etc/passwd"} {
			oldPath, newPath := writeSchemas(diffCase{old: `{"type":"string"}`, new: `{"$ref":"` + ref + `"}`})
			_, err := schemadiff.Files(oldPath, newPath)
			var ce *gate.ConfigError
			Expect(errors.As(err, &ce)).To(BeTrue(), "%v", err)
			Expect(ce.File).To(Equal(newPath))
			Expect(errors.Is(err, gate.ErrOutsideContract)).To(BeTrue(), "%v", err)
		}
	})

	It("refuses a schema file that is not strict JSON, with its line", func() {
		oldPath, newPath := writeSchemas(diffCase{old: `{"type":"string"}`, new: "{\n\"type\":\"string\",\n\"type\":\"integer\"}"})
		_, err := schemadiff.Files(oldPath, newPath)
		var ce *gate.ConfigError
		Expect(errors.As(err, &ce)).To(BeTrue(), "%v", err)
		Expect(ce.File).To(Equal(newPath))
		Expect(ce.Line).To(Equal(3))
		Expect(err.Error()).To(ContainSubstring("parse.duplicate_member"))
	})

	Describe("the bundled deploy_status upstream versions", func() {
		It("v0 → v1: the deployment wrapper is gone and its members moved to the top", func() {
			d, err := schemadiff.UpstreamVersions("../schemas", "deploy_status", "v0", "v1", gate.Options{})
			Expect(err).NotTo(HaveOccurred())
			Expect(d.Comparisons).To(HaveLen(1))
			type finding struct{ Rule, Instance, Old, New string }
			var got []finding
			for _, c := range d.Comparisons[0].Changes {
				got = append(got, finding{c.Rule, c.Instance, c.OldPointer, c.NewPointer})
			}
			Expect(got).To(Equal([]finding{
				{schemadiff.RulePropertyRemoved, "/deployment", "/properties/deployment", "/properties"},
				{schemadiff.RulePropertyAdded, "/environment", "/properties", "/properties/environment"},
				{schemadiff.RulePropertyAdded, "/revision", "/properties", "/properties/revision"},
				{schemadiff.RulePropertyAdded, "/state", "/properties", "/properties/state"},
			}))
			Expect(d.Breaking()).To(BeTrue())
			Expect(d.Count(reports.ContractChange)).To(Equal(3))
		})

		It("v1 → v2: held at the v1 shape, nothing changed", func() {
			d, err := schemadiff.UpstreamVersions("../schemas", "deploy_status", "v1", "v2", gate.Options{})
			Expect(err).NotTo(HaveOccurred())
			Expect(d.Comparisons[0].Changes).To(BeEmpty())
			Expect(d.Breaking()).To(BeFalse())
		})

		It("v0 → v2 reads like v0 → v1", func() {
			a, err := schemadiff.UpstreamVersions("../schemas", "deploy_status", "v0", "v1", gate.Options{})
			Expect(err).NotTo(HaveOccurred())
			b, err := schemadiff.UpstreamVersions("../schemas", "deploy_status", "v0", "v2", gate.Options{})
			Expect(err).NotTo(HaveOccurred())
			Expect(rulesOf(b.Comparisons[0].Changes)).To(Equal(rulesOf(a.Comparisons[0].Changes)))
		})

		It("names an unknown upstream version as a usage error", func() {
			_, err := schemadiff.UpstreamVersions("../schemas", "deploy_status", "v0", "v9", gate.Options{})
			Expect(errors.Is(err, gate.ErrUsage)).To(BeTrue(), "%v", err)
			Expect(err.Error()).To(ContainSubstring(`no upstream version "v9"`))
		})
	})

	It("compares two contract directories: agent schema, then each upstream version in both", func() {
		dir := testtree.Tree(testtree.Project())
		newDir := filepath.Join(GinkgoT().TempDir(), "note_status")
		Expect(os.CopyFS(newDir, os.DirFS(filepath.Join(dir, "schemas", "note_status")))).To(Succeed())
		Expect(os.WriteFile(filepath.Join(newDir, "agent.schema.json"), []byte(`{
  "type": "object",
  "required": ["note_id", "state"],
  "additionalProperties": false,
  "properties": {"note_id": {"type": "string"}, "state": {"enum": ["open", "closed", "archived"]}, "title": {"type": "string", "maxLength": 80}}
}`), 0o644)).To(Succeed())
		d, err := schemadiff.Contracts(context.Background(), filepath.Join(dir, "schemas", "note_status"), newDir, schemadiff.ContractOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(d.Comparisons).To(HaveLen(3))
		Expect(d.Comparisons[0].Name).To(Equal("note_status agent schema"))
		Expect(rulesOf(d.Comparisons[0].Changes)).To(ConsistOf(schemadiff.RuleEnumValueAdded, schemadiff.RulePropertyAdded))
		Expect(d.Comparisons[1].Name).To(Equal("note_status upstream v1"))
		Expect(d.Comparisons[1].Changes).To(BeEmpty())
		Expect(d.Comparisons[2].Name).To(Equal("note_status manifest"))
		Expect(d.Comparisons[2].Changes).To(BeEmpty())
	})
})
