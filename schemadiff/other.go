package schemadiff

import (
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/schemawalk"
	"github.com/airlockdev/airlock/reports"
)

// The unclassified family: keywords the diff does not classify (not,
// if/then/else, patternProperties, propertyNames, dependentRequired,
// dependentSchemas, contains, unevaluatedItems, …) are fingerprinted, and
// a change in a fingerprint is reported for someone to review.

var (
	unclassifiedKeywordChange = Rule{ID: RuleUnclassifiedKeywordChange, Level: reports.Breaking,
		Description: "A keyword airlock does not classify changed (not, if/then/else, patternProperties, propertyNames, dependentRequired, dependentSchemas, contains, unevaluatedItems, …): its direction cannot be told, so it is treated as breaking until someone reviews it."}
)

// compareOther reports each unclassified keyword whose fingerprint differs
// between the sides, in keyword order.
func compareOther(o, n *View, e *Emitter) {
	for _, k := range unionKeys(o.other, n.other) {
		ol, nl := o.other[k], n.other[k]
		if ol.text != nl.text {
			e.Emit(unclassifiedKeywordChange, orPtr(ol.ptr, o.ptr), orPtr(nl.ptr, n.ptr), "%s changed; airlock cannot tell which way, review it", k)
		}
	}
}

// otherKeywords fingerprints the keywords of s that diff does not classify,
// so that a change in them is still reported.
func otherKeywords(s *jsonschema.Schema) map[string]string {
	out := map[string]string{}
	fp := func(x *jsonschema.Schema) string { return fingerprint(x, 0, map[*jsonschema.Schema]bool{}) }
	one := func(k string, x *jsonschema.Schema) {
		if x != nil {
			out[k] = fp(x)
		}
	}
	one("not", s.Not)
	one("if", s.If)
	one("then", s.Then)
	one("else", s.Else)
	one("propertyNames", s.PropertyNames)
	one("contains", s.Contains)
	one("unevaluatedItems", s.UnevaluatedItems)
	if s.AdditionalItems != nil {
		out["additionalItems"] = fingerprintAny(s.AdditionalItems)
	}
	if s.MinContains != nil {
		out["minContains"] = strconv.Itoa(*s.MinContains)
	}
	if s.MaxContains != nil {
		out["maxContains"] = strconv.Itoa(*s.MaxContains)
	}
	if len(s.PatternProperties) > 0 {
		var parts []string
		for re, x := range s.PatternProperties {
			parts = append(parts, re.String()+"="+fp(x))
		}
		sort.Strings(parts)
		out["patternProperties"] = strings.Join(parts, ",")
	}
	if len(s.DependentRequired) > 0 {
		var parts []string
		for k, v := range s.DependentRequired {
			parts = append(parts, k+"="+strings.Join(v, "+"))
		}
		sort.Strings(parts)
		out["dependentRequired"] = strings.Join(parts, ",")
	}
	if len(s.DependentSchemas) > 0 {
		var parts []string
		for k, x := range s.DependentSchemas {
			parts = append(parts, k+"="+fp(x))
		}
		sort.Strings(parts)
		out["dependentSchemas"] = strings.Join(parts, ",")
	}
	if len(s.Dependencies) > 0 {
		var parts []string
		for k, x := range s.Dependencies {
			parts = append(parts, k+"="+fingerprintAny(x))
		}
		sort.Strings(parts)
		out["dependencies"] = strings.Join(parts, ",")
	}
	return out
}

func fingerprintAny(x any) string {
	switch x := x.(type) {
	case *jsonschema.Schema:
		return fingerprint(x, 0, map[*jsonschema.Schema]bool{})
	case []*jsonschema.Schema:
		var parts []string
		for _, s := range x {
			parts = append(parts, fingerprint(s, 0, map[*jsonschema.Schema]bool{}))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case []string:
		return strings.Join(x, "+")
	}
	return fmt.Sprint(x)
}

// fingerprint is a structural text of a compiled schema's constraints
// (annotations left out), bounded in depth and safe on cycles.
func fingerprint(s *jsonschema.Schema, depth int, onStack map[*jsonschema.Schema]bool) string {
	if s == nil {
		return "_"
	}
	if s.Bool != nil {
		return strconv.FormatBool(*s.Bool)
	}
	if depth > 12 {
		return "…"
	}
	if onStack[s] {
		return "@cycle"
	}
	onStack[s] = true
	defer delete(onStack, s)
	var parts []string
	put := func(k, v string) { parts = append(parts, k+"="+v) }
	sub := func(x *jsonschema.Schema) string { return fingerprint(x, depth+1, onStack) }
	if s.Types != nil {
		put("type", s.Types.String())
	}
	if s.Enum != nil {
		put("enum", schemawalk.Canonical(s.Enum.Values))
	}
	if s.Const != nil {
		put("const", schemawalk.Canonical(*s.Const))
	}
	for k, p := range map[string]*int{"minLength": s.MinLength, "maxLength": s.MaxLength, "minItems": s.MinItems, "maxItems": s.MaxItems, "minProperties": s.MinProperties, "maxProperties": s.MaxProperties, "minContains": s.MinContains, "maxContains": s.MaxContains} {
		if p != nil {
			put(k, strconv.Itoa(*p))
		}
	}
	for k, r := range map[string]*big.Rat{"minimum": s.Minimum, "maximum": s.Maximum, "exclusiveMinimum": s.ExclusiveMinimum, "exclusiveMaximum": s.ExclusiveMaximum, "multipleOf": s.MultipleOf} {
		if r != nil {
			put(k, r.RatString())
		}
	}
	if s.Pattern != nil {
		put("pattern", s.Pattern.String())
	}
	if s.Format != nil {
		put("format", s.Format.Name)
	}
	if s.UniqueItems {
		put("uniqueItems", "true")
	}
	if len(s.Required) > 0 {
		r := slices.Clone(s.Required)
		sort.Strings(r)
		put("required", strings.Join(r, "+"))
	}
	for k, x := range s.Properties {
		put("properties/"+k, sub(x))
	}
	for re, x := range s.PatternProperties {
		put("patternProperties/"+re.String(), sub(x))
	}
	if s.AdditionalProperties != nil {
		if x, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
			put("additionalProperties", sub(x))
		} else {
			put("additionalProperties", fmt.Sprint(s.AdditionalProperties))
		}
	}
	for k, x := range map[string]*jsonschema.Schema{"$ref": s.Ref, "not": s.Not, "if": s.If, "then": s.Then, "else": s.Else, "propertyNames": s.PropertyNames, "contains": s.Contains, "items": s.Items2020, "unevaluatedItems": s.UnevaluatedItems, "unevaluatedProperties": s.UnevaluatedProperties} {
		if x != nil {
			put(k, sub(x))
		}
	}
	for k, xs := range map[string][]*jsonschema.Schema{"allOf": s.AllOf, "anyOf": s.AnyOf, "oneOf": s.OneOf, "prefixItems": s.PrefixItems} {
		for i, x := range xs {
			put(k+"/"+strconv.Itoa(i), sub(x))
		}
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, ";") + "}"
}
