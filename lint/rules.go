package lint

import (
	"fmt"
	"strings"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/reports"
)

// Rule is one lint rule: a stable id (kebab-case, never reused), its level,
// a description (one or more sentences for docs/lint.md and SARIF), and
// the handler that finds it. Exactly one handler is set, by scope.
type Rule struct {
	ID          string
	Level       reports.Severity
	Description string

	scope    scope
	schema   func(n *node, e *emitter)
	contract func(k *contract, e *emitter)
	fixtures func(k *contract, set *fixture.Set, fixturesDir string, e *emitter) error
}

// scope is what a rule's handler looks at.
type scope int

const (
	// scopeSchema: every schema position reached from an upstream
	// version's schema or the agent-facing schema, with what applies
	// beside it at the same instance location.
	scopeSchema scope = iota
	// scopeContract: the manifest against the compiled schemas.
	scopeContract
	// scopeFixtures: the manifest against the fixture tree.
	scopeFixtures
	// scopeLoad: a contract that does not load (Input.Broken); Lint
	// reports the loader's error itself.
	scopeLoad
	// scopeIgnore: the manifest's lint.ignore against the contract's
	// findings; Lint applies it last.
	scopeIgnore
)

func (r *Rule) describe() reports.LintRule {
	return reports.LintRule{ID: r.ID, Level: r.Level, Description: r.Description}
}

// The rules, in the order docs/lint.md lists them.
var (
	contractLoad = &Rule{ID: "contract-load", Level: reports.SeverityError, scope: scopeLoad,
		Description: "The contract does not load: a manifest or schema file the gate refuses (a dangling $ref, a keyword JSON Schema 2020-12 does not define, a bad pointer). A connector cannot start with it, and run, mutate and drift report its tool as a configuration error; the other rules cannot look at it. The message is the loader's, at its file, line and column."}
	openObject = &Rule{ID: "open-object", Level: reports.SeverityWarning, scope: scopeSchema,
		Description: "An object schema admits members it does not name: neither it nor a schema applying beside it has additionalProperties (false or a schema) or unevaluatedProperties. A renamed field or an unexpected one passes unseen; close the object with additionalProperties: false, or unevaluatedProperties: false when allOf composes it."}
	valueUnconstrained = &Rule{ID: "value-unconstrained", Level: reports.SeverityWarning, scope: scopeSchema,
		Description: "A member, additional member or array item has a schema that says nothing about its value — {}, true, or keywords for some other type only ({\"minProperties\": 1}) — with no type, const or enum beside it: any value, of any type and size, is admitted there. Give it a type and its bounds (a choice between branches is judged branch by branch)."}
	stringUnbounded = &Rule{ID: "string-unbounded", Level: reports.SeverityWarning, scope: scopeSchema,
		Description: "A string has no maxLength, enum, const or pattern, and no asserted format whose values are short (date, date-time, time, uuid, ipv4, ipv6, hostname; an annotated format, uri or email admit any length): only the contract's limits.max_string_length bounds it. Give the longest value you expect."}
	arrayUnbounded = &Rule{ID: "array-unbounded", Level: reports.SeverityWarning, scope: scopeSchema,
		Description: "An array has no maxItems: only the contract's byte limit bounds how many elements arrive. Give the most you expect."}
	numberUnbounded = &Rule{ID: "number-unbounded", Level: reports.SeverityWarning, scope: scopeSchema,
		Description: "A number or integer has neither a minimum nor a maximum (nor enum or const): any magnitude written in up to the contract's limits.max_number_length bytes is admitted. Bound it on at least one side."}
	patternUnanchored = &Rule{ID: "pattern-unanchored", Level: reports.SeverityWarning, scope: scopeSchema,
		Description: "A pattern is not anchored at both ends (^…$): JSON Schema patterns match anywhere in the string (Validation 2020-12 §6.3.3), so \"[0-9]+\" admits \"x1; rm -rf\". Anchor it."}
	patternUnbounded = &Rule{ID: "pattern-unbounded", Level: reports.SeverityWarning, scope: scopeSchema,
		Description: "An anchored pattern admits strings of any length (*, + or {n,}) and no maxLength applies beside it. Add a maxLength or bound the repetition."}
	formatUnportable = &Rule{ID: "format-unportable", Level: reports.SeverityWarning, scope: scopeSchema,
		Description: "A format outside JSON Schema Validation 2020-12 §7.3 (period, semver): airlock asserts it, but other validators — an MCP client checking outputSchema, ajv — do not know it and admit any string. Say it with a pattern, or accept that peers do not check it."}
	closedBesideAllOf = &Rule{ID: "closed-beside-composition", Level: reports.SeverityError, scope: scopeSchema,
		Description: "additionalProperties: false sits beside allOf, $ref, oneOf or anyOf that add properties: additionalProperties sees only the properties of its own schema (Core 2020-12 §10.3.2.3), so every response carrying an added member is refused. Use unevaluatedProperties: false, or repeat the members in properties."}
	oneOfOverlap = &Rule{ID: "oneof-overlap", Level: reports.SeverityError, scope: scopeSchema,
		Description: "Two oneOf branches admit the same value: same types, no const or enum member that tells them apart, the same required members (or one branch is only a type the other narrows). A response matching both is refused (oneOf needs exactly one). Add a discriminating const, or use anyOf."}
	projectionOptional = &Rule{ID: "projection-optional", Level: reports.SeverityWarning, scope: scopeContract,
		Description: "A projected field that the agent-facing schema requires reads a value the upstream schema does not require on its way (in some oneOf/anyOf branch, or at all), or does not declare: a response without it is admitted by the schema, then refused after all (by a semantic rule that reads it, or as projection.agent_schema). Require it in every branch, make the agent field optional, declare a branch that is the upstream's own error envelope as an error shape (contract.yaml errors; see docs/contracts.md), or accept it with lint.ignore."}
	rulePointerUnconstrained = &Rule{ID: "rule-pointer-unconstrained", Level: reports.SeverityError, scope: scopeContract,
		Description: "A semantic rule reads a value the schema does not name (in properties, patternProperties, prefixItems or items; additionalProperties alone does not count) or names without a type, const or enum: the rule judges a value the contract never describes. Declare the member, with a type."}
	projectedTextUnbounded = &Rule{ID: "projected-text-unbounded", Level: reports.SeverityError, scope: scopeContract,
		Description: "A projected field can carry strings — a string value, strings inside its arrays or objects, or an object's member names — that nothing bounds in length: no text policy max_length (text.fields.<field> or text.default in contract.yaml), and neither the agent-facing schema's property nor the upstream schema at the projection pointer has maxLength, enum, const, an anchored pattern without unbounded repetition, a short asserted format, or a closed object (additionalProperties: false, or propertyNames with a bound) for the member names. Only limits.max_string_length bounds what reaches the agent. Set text: {fields: {<field>: {max_length: N}}} or a maxLength (docs/contracts.md, Text policy)."}
	validatorFallback = &Rule{ID: "validator-fallback", Level: reports.SeverityWarning, scope: scopeContract,
		Description: "A schema (an upstream version's, or the agent-facing one) uses a keyword airlock's compiled validator does not cover — in a contract that loads, a $dynamicRef to a $dynamicAnchor (the other causes are refused at load) — so the gate validates it with jsonschema/v6 instead: several times slower, every error collected rather than the first, and without the validator's work bound, so a refused body can cost far more than its size. Reported at the keyword; rewrite it with $ref and $defs, or accept it with lint.ignore."}
	versionWithoutFixtures = &Rule{ID: "version-without-fixtures", Level: reports.SeverityWarning, scope: scopeFixtures,
		Description: "An upstream version has no fixture at all: nothing proves its schema, rules and projection against a response. Record or write an accepted fixture and near-misses."}
	ignoreUnused = &Rule{ID: "lint-ignore-unused", Level: reports.SeverityWarning, scope: scopeIgnore,
		Description: "An entry of the manifest's lint.ignore matches no finding (the weakness was fixed, the rule id, file or pointer is misspelt, or the rule did not run): it would silently accept the next finding that matches. Remove it or correct it."}
	nearMissStageUncovered = &Rule{ID: "near-miss-stage-uncovered", Level: reports.SeverityWarning, scope: scopeFixtures,
		Description: "An upstream version with fixtures has no near-miss fixture expecting a refusal by one stage: parse, schema, or semantic (when it has rules). That stage is never shown to refuse anything for this version."}
)

// registry lists every rule once, in docs order.
var registry = []*Rule{
	contractLoad,
	openObject, valueUnconstrained, stringUnbounded, arrayUnbounded, numberUnbounded,
	patternUnanchored, patternUnbounded, formatUnportable,
	closedBesideAllOf, oneOfOverlap,
	projectionOptional, rulePointerUnconstrained, projectedTextUnbounded, validatorFallback,
	versionWithoutFixtures, nearMissStageUncovered,
	ignoreUnused,
}

func init() {
	openObject.schema = checkOpenObject
	valueUnconstrained.schema = checkValueUnconstrained
	stringUnbounded.schema = checkStringUnbounded
	arrayUnbounded.schema = checkArrayUnbounded
	numberUnbounded.schema = checkNumberUnbounded
	patternUnanchored.schema = checkPatternUnanchored
	patternUnbounded.schema = checkPatternUnbounded
	formatUnportable.schema = checkFormatUnportable
	closedBesideAllOf.schema = checkClosedBesideComposition
	oneOfOverlap.schema = checkOneOfOverlap
	projectionOptional.contract = checkProjectionOptional
	rulePointerUnconstrained.contract = checkRulePointers
	projectedTextUnbounded.contract = checkProjectedText
	validatorFallback.contract = checkValidatorFallback
	versionWithoutFixtures.fixtures = checkVersionFixtures
	nearMissStageUncovered.fixtures = checkNearMissStages
}

// Rules returns a description of every rule, in registry order (a new
// slice).
func Rules() []reports.LintRule {
	out := make([]reports.LintRule, len(registry))
	for i, r := range registry {
		out[i] = r.describe()
	}
	return out
}

// Lookup returns the rule with id.
func Lookup(id string) (reports.LintRule, bool) {
	if r, ok := lookupRule(id); ok {
		return r.describe(), true
	}
	return reports.LintRule{}, false
}

// RulesTable is the Markdown table of the registry that ends docs/lint.md:
// one row per rule, in registry order.
func RulesTable() string {
	var b strings.Builder
	b.WriteString("| rule | level | meaning |\n| --- | --- | --- |\n")
	for _, r := range registry {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.ID, r.Level, strings.ReplaceAll(r.Description, "|", `\|`))
	}
	return b.String()
}
