package schemadiff

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/gate"
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
func (f *Schema) otherKeywords(s *jsonschema.Schema) map[string]string {
	out := map[string]string{}
	fp := f.fingerprint
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
		out["additionalItems"] = f.fingerprintAny(s.AdditionalItems)
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
		out["dependentRequired"] = dependentRequiredText(s.DependentRequired)
	}
	if len(s.DependentSchemas) > 0 {
		var parts []string
		for k, x := range s.DependentSchemas {
			parts = append(parts, strconv.Quote(k)+"="+fp(x))
		}
		sort.Strings(parts)
		out["dependentSchemas"] = strings.Join(parts, ",")
	}
	if len(s.Dependencies) > 0 {
		var parts []string
		for k, x := range s.Dependencies {
			parts = append(parts, strconv.Quote(k)+"="+f.fingerprintAny(x))
		}
		sort.Strings(parts)
		out["dependencies"] = strings.Join(parts, ",")
	}
	return out
}

func dependentRequiredText(m map[string][]string) string {
	var parts []string
	for k, v := range m {
		q := make([]string, len(v))
		for i, x := range v {
			q[i] = strconv.Quote(x)
		}
		parts = append(parts, strconv.Quote(k)+"="+strings.Join(q, "+"))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func (f *Schema) fingerprintAny(x any) string {
	switch x := x.(type) {
	case *jsonschema.Schema:
		return f.fingerprint(x)
	case []*jsonschema.Schema:
		var parts []string
		for _, s := range x {
			parts = append(parts, f.fingerprint(s))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case []string:
		q := make([]string, len(x))
		for i, s := range x {
			q[i] = strconv.Quote(s)
		}
		return strings.Join(q, "+")
	}
	return fmt.Sprint(x)
}

// fingerprints holds one side's fingerprints, memoised per compiled schema.
type fingerprints struct {
	memo map[*jsonschema.Schema]string
	// onStack is the index, on the current path, of each schema being
	// fingerprinted; path is that path.
	onStack map[*jsonschema.Schema]int
	path    int
	// expanded counts the schemas fingerprinted (a schema inside a cycle
	// whose head is above it is not memoised, and counts again); more than
	// budget fails the walk (err).
	expanded, budget int
	err              error
}

// fingerprint is a digest of the structural text of a compiled schema's
// constraints: every keyword that constrains an instance (annotations,
// content* and vocabulary extensions left out), its subschemas by their
// own digests, so the text is 32 hex digits wherever the schema sits and
// however much it references. It is memoised per schema, so a DAG of
// shared $refs costs one digest per schema; a $ref back to a schema on the
// current path (a cycle) is written as its distance up the path, and a
// digest that saw such a cycle above its own schema is not memoised, since
// it depends on the path. It has no depth cap: equal digests mean equal
// constraints (up to SHA-256 collisions). Past maxFingerprintsPerNode
// digests per JSON object or array of the side's documents (plus
// minPairs), the walk fails with a *gate.ConfigError (View.err).
func (f *Schema) fingerprint(s *jsonschema.Schema) string {
	if f.fps == nil {
		f.fps = &fingerprints{memo: map[*jsonschema.Schema]string{}, onStack: map[*jsonschema.Schema]int{},
			budget: maxFingerprintsPerNode*f.nodes() + minPairs}
	}
	d, _ := f.fps.digest(f, s)
	return d
}

// digest returns s's digest and the lowest path index of a cycle it cut
// (the path length when none).
func (fp *fingerprints) digest(f *Schema, s *jsonschema.Schema) (string, int) {
	if s == nil {
		return "_", fp.path
	}
	if s.Bool != nil {
		return strconv.FormatBool(*s.Bool), fp.path
	}
	if d, ok := fp.memo[s]; ok {
		return d, fp.path
	}
	if i, ok := fp.onStack[s]; ok {
		return "@cycle" + strconv.Itoa(fp.path-i), i
	}
	if fp.err != nil {
		return "?", fp.path
	}
	if fp.expanded++; fp.expanded > fp.budget {
		fp.err = &gate.ConfigError{File: f.path, Msg: fmt.Sprintf("too large to compare with %s: more than %d schema fingerprints (%d per JSON object or array of the schema's documents, plus %d), to compare keywords the diff does not classify (not, if/then/else, …)", f.path, fp.budget, maxFingerprintsPerNode, minPairs)}
		return "?", fp.path
	}
	if s.DynamicRef != nil {
		if err := f.checkDynamicRef(s); err != nil {
			fp.err = err
			return "?", fp.path
		}
	}
	me := fp.path
	fp.onStack[s] = me
	fp.path++
	low := me + 1
	var parts []string
	put := func(k, v string) { parts = append(parts, k+"="+v) }
	sub := func(x *jsonschema.Schema) string {
		d, l := fp.digest(f, x)
		low = min(low, l)
		return d
	}
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
		put("pattern", strconv.Quote(s.Pattern.String()))
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
		for i := range r {
			r[i] = strconv.Quote(r[i])
		}
		put("required", strings.Join(r, "+"))
	}
	for k, x := range s.Properties {
		put("properties/"+strconv.Quote(k), sub(x))
	}
	for re, x := range s.PatternProperties {
		put("patternProperties/"+strconv.Quote(re.String()), sub(x))
	}
	anyOrBool := func(k string, x any) {
		switch x := x.(type) {
		case nil:
		case *jsonschema.Schema:
			put(k, sub(x))
		default:
			put(k, fmt.Sprint(x))
		}
	}
	anyOrBool("additionalProperties", s.AdditionalProperties)
	anyOrBool("additionalItems", s.AdditionalItems)
	switch it := s.Items.(type) {
	case *jsonschema.Schema:
		put("items", sub(it))
	case []*jsonschema.Schema:
		for i, x := range it {
			put("items/"+strconv.Itoa(i), sub(x))
		}
	}
	if len(s.DependentRequired) > 0 {
		put("dependentRequired", dependentRequiredText(s.DependentRequired))
	}
	for k, x := range s.DependentSchemas {
		put("dependentSchemas/"+strconv.Quote(k), sub(x))
	}
	for k, x := range s.Dependencies {
		switch x := x.(type) {
		case *jsonschema.Schema:
			put("dependencies/"+strconv.Quote(k), sub(x))
		case []string:
			put("dependencies/"+strconv.Quote(k), f.fingerprintAny(x))
		}
	}
	if d := s.DynamicRef; d != nil {
		put("$dynamicRef", strconv.Quote(d.Anchor)+":"+sub(d.Ref))
	}
	for k, x := range map[string]*jsonschema.Schema{"$ref": s.Ref, "$recursiveRef": s.RecursiveRef, "not": s.Not, "if": s.If, "then": s.Then, "else": s.Else, "propertyNames": s.PropertyNames, "contains": s.Contains, "items2020": s.Items2020, "unevaluatedItems": s.UnevaluatedItems, "unevaluatedProperties": s.UnevaluatedProperties} {
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
	sum := sha256.Sum256([]byte(strings.Join(parts, ";")))
	d := hex.EncodeToString(sum[:16])
	fp.path--
	delete(fp.onStack, s)
	if low >= me && fp.err == nil {
		fp.memo[s] = d
	}
	return d, low
}
