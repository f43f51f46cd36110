package schemadiff

import "github.com/airlockdev/airlock/reports"

// Rule is one kind of schema change airlock diff reports: a stable id,
// its level from the consumer's side, and what it means.
type Rule struct {
	ID          string        `json:"id"`
	Level       reports.Level `json:"level"`
	Description string        `json:"description"`
}

// Rule ids of airlock diff: stable API, listed with their levels in
// registry and in docs/diff.md.
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

// registry is the one registry of diff rules; docs/diff.md, the tests and
// every report read from it (through Rules).
var registry = []Rule{
	{RulePropertyRemoved, reports.Breaking, "A property is no longer defined although the consumer could rely on it: it was required (responses may now omit the member) or its object is open (the member may now arrive with any value)."},
	{RuleOptionalPropertyRemoved, reports.ContractChange, "An optional property of a closed object is no longer defined: responses can no longer carry the member, so whatever read it (a projection, an agent field) now gets nothing."},
	{RulePropertyAdded, reports.ContractChange, "A property was added to a closed object: responses may carry a member the old schema refused, so the shape the consumer sees changes. Never silent, even when the property is optional."},
	{RulePropertyAddedOpen, reports.Compatible, "A property was defined in an open object: a member that could already arrive with any value is now constrained."},
	{RuleBecameOptional, reports.Breaking, "A property is no longer required: responses may omit a member the consumer could count on."},
	{RuleBecameRequired, reports.Compatible, "A property became required: responses always carry a member that used to be optional."},
	{RuleTypeChanged, reports.Breaking, "The JSON types allowed changed so that neither side contains the other (e.g. string to object)."},
	{RuleTypeWidened, reports.Breaking, "More JSON types are allowed than before (a type was added, integer became number, or type was dropped): values of a type the consumer never saw may arrive."},
	{RuleTypeNarrowed, reports.Compatible, "Fewer JSON types are allowed than before (a type was removed, number became integer, or type was added)."},
	{RuleBecameNullable, reports.Breaking, "null was added to the allowed types: a value the consumer always got may now be null."},
	{RuleEnumValueAdded, reports.Breaking, "An enum gained a value (or a const became an enum that includes it): the consumer may see a value it does not know."},
	{RuleEnumValueRemoved, reports.Compatible, "An enum lost a value: the producer sends a subset of what it used to."},
	{RuleEnumRemoved, reports.Breaking, "An enum or const was dropped: any value of the allowed types may now arrive."},
	{RuleEnumAdded, reports.Compatible, "An enum or const now restricts a value that used to be free."},
	{RuleConstChanged, reports.Breaking, "A const value changed: the one value the consumer expected is no longer sent."},
	{RuleLengthLoosened, reports.Breaking, "A string may be longer (maxLength raised or dropped) or shorter (minLength lowered or dropped) than before."},
	{RuleLengthTightened, reports.Compatible, "String length bounds were tightened or added (maxLength lowered, minLength raised)."},
	{RuleRangeLoosened, reports.Breaking, "A number may fall outside the old range: maximum or exclusiveMaximum raised or dropped, minimum or exclusiveMinimum lowered or dropped, an exclusive bound made inclusive, or multipleOf dropped or changed to a value that is not a multiple of the old one."},
	{RuleRangeTightened, reports.Compatible, "A numeric range was tightened or added (maximum lowered, minimum raised, a bound made exclusive, multipleOf added or made a multiple of the old one)."},
	{RuleItemsLoosened, reports.Breaking, "An array may have more or fewer items than before (maxItems raised or dropped, minItems lowered or dropped) or repeated items (uniqueItems dropped)."},
	{RuleItemsTightened, reports.Compatible, "Array item bounds were tightened or added (maxItems lowered, minItems raised, uniqueItems added)."},
	{RuleMembersLoosened, reports.Breaking, "An object may have more or fewer members than before (maxProperties raised or dropped, minProperties lowered or dropped)."},
	{RuleMembersTightened, reports.Compatible, "Object member-count bounds were tightened or added (maxProperties lowered, minProperties raised)."},
	{RulePatternChanged, reports.Breaking, "A string pattern changed: whether the new one admits more cannot be decided, so strings the old pattern refused may arrive."},
	{RulePatternRemoved, reports.Breaking, "A string pattern was dropped: strings of any shape may arrive."},
	{RulePatternAdded, reports.Compatible, "A string pattern now restricts a string that used to be free."},
	{RuleFormatChanged, reports.Breaking, "A string format changed (airlock asserts formats): strings of another format may arrive."},
	{RuleFormatRemoved, reports.Breaking, "A string format was dropped: strings the old format refused may arrive."},
	{RuleFormatAdded, reports.Compatible, "A string format now restricts a string that used to be free."},
	{RuleObjectOpened, reports.Breaking, "additionalProperties or unevaluatedProperties no longer refuses unknown members (false became a schema, true or absent): members the consumer never saw may arrive."},
	{RuleObjectClosed, reports.Compatible, "additionalProperties or unevaluatedProperties now refuses or constrains unknown members."},
	{RuleBranchAdded, reports.Breaking, "A oneOf/anyOf alternative was added (or a single shape became one of several): responses of a shape the consumer never saw may arrive."},
	{RuleBranchRemoved, reports.Compatible, "A oneOf/anyOf alternative was removed: the producer sends one shape fewer."},
	{RuleRefTargetChanged, reports.Compatible, "A $ref names another schema. The resolved schemas are compared as well, so any real difference is reported under its own rule; this one says only where the definition moved."},
	{RuleUnclassifiedKeywordChange, reports.Breaking, "A keyword airlock does not classify changed (not, if/then/else, patternProperties, propertyNames, dependentRequired, dependentSchemas, contains, unevaluatedItems, …): its direction cannot be told, so it is treated as breaking until someone reviews it."},
}

// Rules returns a copy of the diff rule registry.
func Rules() []Rule { return append([]Rule(nil), registry...) }

// Lookup returns the registry entry of a rule id.
func Lookup(id string) (Rule, bool) {
	for _, r := range registry {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}
