package mutate

import (
	"bytes"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/schemawalk"
	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/semantic"
)

// Equivalence: a mutant that cannot be a near-miss is dropped before it
// is run (Outcome Equivalent) and counted apart (Score.Equivalent). Only
// explicit permission counts; "no keyword refuses it" is exactly what a
// survivor is, never equivalence (docs/mutate.md, Equivalence). A mutant
// is equivalent when:
//
//   - it is the fixture: its body is the fixture's body byte for byte
//     (bytes family), or its new value equals the value it replaces
//     (JSON equality: numbers by value, objects by members), and it sets
//     no status or content type of its own;
//   - or, outside the semantic family (the schema cannot say which value
//     the request asked for), its new value is one the upstream schema
//     names at that instance location by its own terms: listed by an enum
//     or const, or null where a type keyword lists "null", in a subschema
//     that applies there unconditionally (reached through properties,
//     patternProperties, additionalProperties, items and prefixItems,
//     $ref, $dynamicRef and allOf — never through an ancestor's oneOf,
//     anyOf or if/then/else, which choose between shapes) or in a oneOf or
//     anyOf branch of such a subschema; and no rule of the upstream
//     version reads at, above or below the location (binding, context,
//     membership, freshness), nor any count, cel or custom rule exists;
//     and the whole mutated value still validates against the upstream
//     schema (so a keyword elsewhere that refuses it keeps the mutant).
//
// The check costs a walk of the schema along the location plus, for the
// few mutants whose value the schema names, one validation of the value.

// maxMergeDepth bounds the $ref/allOf chains followed at one location by
// the equivalence and hint walks; deeper chains are not followed (so a
// permission found only deeper is not seen, and the mutant is run).
const maxMergeDepth = 64

// maxBranchDepth bounds how deep oneOf/anyOf branches inside branches are
// searched for an explicit permission.
const maxBranchDepth = 8

// equivalent returns why mu is equivalent to its fixture, or "" when it
// is not (see above).
func (m *mutator) equivalent(mu Mutant) string {
	if mu.Status != 0 || mu.ContentType != "" {
		return ""
	}
	if mu.Family == FamilyBytes {
		if mu.Body != nil && bytes.Equal(mu.Body, m.raw) {
			return "the mutant's body is the fixture's"
		}
		if after, ok := mu.After.(string); ok && mu.Body == nil && after == string(m.raw) {
			return "the mutant's body is the fixture's"
		}
		return ""
	}
	loc, err := jsonpointer.Parse(mu.Pointer)
	if err != nil {
		return ""
	}
	old, ok := loc.Lookup(m.value)
	if !ok {
		return "" // a member added: never the fixture
	}
	if semantic.EqualJSON(old, mu.After) {
		return "its new value equals the fixture's at " + mu.Pointer
	}
	if mu.Family == FamilySemantic || m.opaqueRules || m.schema == nil || !hasPrefix(loc, m.scope) {
		return ""
	}
	for _, r := range m.rules {
		if rp, err := jsonpointer.Parse(r.Pointer); err != nil || overlaps(rp, loc) {
			return ""
		}
	}
	inScope, _ := m.scope.Lookup(m.value)
	rel := loc[len(m.scope):]
	keyword := ""
	for _, s := range unconditionalAt(m.schema, inScope, rel) {
		if keyword = permits(s, mu.After, 0); keyword != "" {
			break
		}
	}
	if keyword == "" {
		return ""
	}
	if f, panicked := schema.Validate(m.schema, setAt(inScope, rel, mu.After)); f != nil || panicked != nil {
		return "" // refused elsewhere: run it
	}
	return "the schema allows " + schemawalk.ValueText(mu.After) + " at " + mu.Pointer + " by its own terms (" + keyword + ")"
}

// overlaps reports whether a rule reading at pointer rule may read the
// value at loc: one lies at or under the other, a "*" token of rule
// matching any token (every array element).
func overlaps(rule, loc jsonpointer.Pointer) bool {
	for i := range min(len(rule), len(loc)) {
		if rule[i] != loc[i] && rule[i] != "*" {
			return false
		}
	}
	return true
}

// unconditionalAt returns the subschemas of root that apply to the
// instance at loc inside value whatever branch the instance takes: root
// and its $ref, $dynamicRef and allOf targets, then at each token the
// member's or element's subschemas (schemawalk.Member, Element) with
// theirs. nil when loc names nothing in value.
func unconditionalAt(root *jsonschema.Schema, value any, loc []string) []*jsonschema.Schema {
	var cur []*jsonschema.Schema
	if !schemawalk.Along(root, value, loc, merged, func(set []*jsonschema.Schema) { cur = set }) {
		return nil
	}
	return cur
}

// merged is in with every schema each reaches by $ref, $dynamicRef and
// allOf (schemawalk.Merge, at most maxMergeDepth deep), each once, in
// first-reached order.
func merged(in []*jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	for _, s := range in {
		schemawalk.Merge(s, "", maxMergeDepth, func(st schemawalk.Step) {
			if !st.Cut && !slices.Contains(out, st.Schema) {
				out = append(out, st.Schema)
			}
		}, nil)
	}
	return out
}

// permits names the keyword of s that explicitly lists x — "enum",
// "const", "type: null" — or of a oneOf or anyOf branch of s (with its
// $ref and allOf targets), searched maxBranchDepth deep; "" when none.
func permits(s *jsonschema.Schema, x any, depth int) string {
	if s.Const != nil && semantic.EqualJSON(*s.Const, x) {
		return "const"
	}
	if s.Enum != nil && slices.ContainsFunc(s.Enum.Values, func(e any) bool { return semantic.EqualJSON(e, x) }) {
		return "enum"
	}
	if x == nil && s.Types != nil && slices.Contains(s.Types.ToStrings(), "null") {
		return "type: null"
	}
	if depth >= maxBranchDepth {
		return ""
	}
	for _, branches := range [][]*jsonschema.Schema{s.OneOf, s.AnyOf} {
		for _, b := range merged(branches) {
			if kw := permits(b, x, depth+1); kw != "" {
				return kw + " in a oneOf/anyOf branch"
			}
		}
	}
	return ""
}
