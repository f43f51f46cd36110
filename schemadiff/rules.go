package schemadiff

import (
	"fmt"
	"strings"

	"github.com/airlockdev/airlock/reports"
)

// Rule is one kind of change airlock diff reports, in a schema or in a
// contract's manifest: a stable id, its level from the consumer's side,
// what it means, and the Handler (or Manifest handler) that finds it. The same shape serves any registry of rules that classify one
// schema against another (or against nothing, as a lint rule would).
type Rule struct {
	// ID is the stable rule id, e.g. "response-property-type-changed".
	ID string `json:"id"`
	// Level is what the change means to the consumer: breaking,
	// contract-change or compatible.
	Level reports.Level `json:"level"`
	// Description is one or more sentences for docs/diff.md, ending in ".".
	Description string `json:"description"`
	// Handler finds the changes of this rule between two views. Related
	// rules share one handler (a family), registered once per rule id; the
	// walk calls each family's handler once per pair of views. It is left
	// out of JSON. It is nil for a manifest rule.
	Handler Handler `json:"-"`
	// Manifest finds the changes of a manifest rule between two
	// contracts' manifests (manifest.go), shared by its family like
	// Handler; nil for a schema rule. Exactly one of Handler and Manifest
	// is set.
	Manifest ManifestHandler `json:"-"`
}

// Handler compares what two schemas say about one instance location, old
// and new (each merged through $ref and allOf into a View), and reports
// each difference through e as a change of one of its own Rule values. A
// handler may compare child locations through e (properties, array
// elements) and may end the comparison of the location (e.Done) when the
// handlers after it have nothing to add. Handlers run in registry order.
type Handler func(old, new *View, e *Emitter)

// Rule ids of airlock diff: stable API, listed with their levels by Rules
// and in docs/diff.md.
//
// The consumer reads responses. Whatever lets the producer send something
// the old schema refused (a new enum value, a larger maxLength, a dropped
// required, an opened object) is breaking; whatever only narrows what may
// arrive is compatible; a change someone must decide on although nothing
// the consumer relied on is gone (a new member of a closed object) is a
// contract change.
const (
	RulePropertyRemoved           = "response-property-removed"
	RuleOptionalPropertyRemoved   = "response-optional-property-removed"
	RulePropertyAdded             = "response-property-added"
	RulePropertyAddedOpen         = "response-property-added-to-open-object"
	RuleBecameOptional            = "response-property-became-optional"
	RuleBecameRequired            = "response-property-became-required"
	RuleTypeChanged               = "response-property-type-changed"
	RuleTypeWidened               = "response-property-type-widened"
	RuleTypeNarrowed              = "response-property-type-narrowed"
	RuleBecameNullable            = "response-property-became-nullable"
	RuleEnumValueAdded            = "response-property-enum-value-added"
	RuleEnumValueRemoved          = "response-property-enum-value-removed"
	RuleEnumRemoved               = "response-property-enum-removed"
	RuleEnumAdded                 = "response-property-enum-added"
	RuleConstChanged              = "response-property-const-changed"
	RuleLengthLoosened            = "response-property-length-bounds-loosened"
	RuleLengthTightened           = "response-property-length-bounds-tightened"
	RuleRangeLoosened             = "response-property-range-loosened"
	RuleRangeTightened            = "response-property-range-tightened"
	RuleItemsLoosened             = "response-property-items-bounds-loosened"
	RuleItemsTightened            = "response-property-items-bounds-tightened"
	RuleMembersLoosened           = "response-property-members-bounds-loosened"
	RuleMembersTightened          = "response-property-members-bounds-tightened"
	RulePatternChanged            = "response-property-pattern-changed"
	RulePatternRemoved            = "response-property-pattern-removed"
	RulePatternAdded              = "response-property-pattern-added"
	RuleFormatChanged             = "response-property-format-changed"
	RuleFormatRemoved             = "response-property-format-removed"
	RuleFormatAdded               = "response-property-format-added"
	RuleObjectOpened              = "response-object-opened"
	RuleObjectClosed              = "response-object-closed"
	RuleBranchAdded               = "response-branch-added"
	RuleBranchRemoved             = "response-branch-removed"
	RuleRefTargetChanged          = "response-ref-target-changed"
	RuleUnclassifiedKeywordChange = "response-schema-keyword-changed"
)

// family is a handler and the rules it reports, in the order docs list
// them: a schema family has handler, a manifest family manifest (and
// presence when it runs with one side missing).
type family struct {
	handler  Handler
	rules    []Rule
	manifest ManifestHandler
	presence bool
}

// families is the one registry of diff rules, in the order the walk calls
// their handlers at each instance location (which is the order their
// changes are reported in); Rules, docs/diff.md and the tests read it.
var families = []family{
	{compareRefs, []Rule{refTargetChanged}, nil, false},
	{compareAlternatives, []Rule{branchAdded, branchRemoved}, nil, false},
	{compareTypes, []Rule{typeChanged, typeWidened, typeNarrowed, becameNullable}, nil, false},
	{compareValues, []Rule{enumValueAdded, enumValueRemoved, enumRemoved, enumAdded, constChanged}, nil, false},
	{compareLengths, []Rule{lengthLoosened, lengthTightened}, nil, false},
	{comparePatterns, []Rule{patternChanged, patternRemoved, patternAdded}, nil, false},
	{compareFormats, []Rule{formatChanged, formatRemoved, formatAdded}, nil, false},
	{compareRanges, []Rule{rangeLoosened, rangeTightened}, nil, false},
	{compareArrays, []Rule{itemsLoosened, itemsTightened}, nil, false},
	{compareProperties, []Rule{propertyRemoved, optionalPropertyRemoved, propertyAdded, propertyAddedOpen, becameOptional, becameRequired}, nil, false},
	{compareClosure, []Rule{objectOpened, objectClosed}, nil, false},
	{compareMembers, []Rule{membersLoosened, membersTightened}, nil, false},
	{compareOther, []Rule{unclassifiedKeywordChange}, nil, false},

	// The manifest families (manifest.go), in the order Manifests reports.
	{nil, []Rule{manifestContractAdded, manifestContractRemoved}, comparePresence, true},
	{nil, []Rule{manifestVersionAdded, manifestVersionRemoved, manifestCurrentChanged, manifestProtocolChanged}, compareVersionsManifest, false},
	{nil, []Rule{manifestLimitRaised, manifestLimitLowered}, compareLimits, false},
	{nil, []Rule{manifestContentTypesWidened, manifestContentTypesNarrowed}, compareContentTypes, false},
	{nil, []Rule{manifestFormatPolicyLoosened, manifestFormatPolicyTightened}, compareFormatPolicy, false},
	{nil, []Rule{manifestTextPolicyLoosened, manifestTextPolicyTightened}, compareTextPolicy, false},
	{nil, []Rule{manifestRuleRemoved, manifestRuleLoosened, manifestRuleChanged, manifestRuleTightened, manifestRuleAdded}, compareRules, false},
	{nil, []Rule{manifestProjectionFieldAdded, manifestProjectionFieldRemoved, manifestProjectionFieldRepointed}, compareProjections, false},
	{nil, []Rule{manifestErrorCodesChanged, manifestAgentErrorSchemaChanged, manifestErrorContractAdded, manifestErrorContractRemoved, manifestErrorContractChanged, manifestErrorOutcomeChanged}, compareErrors, false},
	{nil, []Rule{manifestStatusPolicyChanged}, compareStatusPolicy, false},
}

// handlers returns each schema family's handler once, in registry order.
func handlers() []Handler {
	var out []Handler
	for _, f := range families {
		if f.handler != nil {
			out = append(out, f.handler)
		}
	}
	return out
}

// Rules returns the diff rule registry, a fresh slice each call: every
// rule with its family's Handler (schema rules, in the order the walk
// reports them) or Manifest (manifest rules, after them).
func Rules() []Rule {
	var out []Rule
	for _, f := range families {
		for _, r := range f.rules {
			r.Handler, r.Manifest = f.handler, f.manifest
			out = append(out, r)
		}
	}
	return out
}

// Lookup returns the registry entry of a rule id; ok is false for an id
// the registry does not have.
func Lookup(id string) (r Rule, ok bool) {
	for _, r := range Rules() {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}

// RulesTable is the Markdown table of the registry that ends docs/diff.md:
// a header, then one row per rule (id, level, description with "|"
// escaped), each line ending in a newline.
func RulesTable() string {
	var b strings.Builder
	b.WriteString("| rule | level | meaning |\n| --- | --- | --- |\n")
	for _, r := range Rules() {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.ID, r.Level, strings.ReplaceAll(r.Description, "|", `\|`))
	}
	return b.String()
}

// ReportRules returns the registry (Rules) as reports.DiffRule values, in
// its order: what the SARIF writers list as their rules.
func ReportRules() []reports.DiffRule {
	rs := Rules()
	out := make([]reports.DiffRule, len(rs))
	for i, r := range rs {
		out[i] = reports.DiffRule{ID: r.ID, Level: r.Level, Description: r.Description}
	}
	return out
}
