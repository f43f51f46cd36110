package schemawalk

import (
	"strconv"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The walk over compiled schemas (santhosh-tekuri/jsonschema/v6): which
// subschemas apply to an instance, and which apply to one of its members or
// elements. drift's observed shape, schemadiff's views and mutate's schema
// facts all start from it.

// Applicable returns in plus every schema that applies to the same instance
// through $ref, $dynamicRef, allOf, anyOf, oneOf and if/then/else (JSON
// Schema Core 2020-12 §10.2, §8.2.3), each once, in first-reached order.
// Cycles are cut.
func Applicable(in []*jsonschema.Schema) []*jsonschema.Schema {
	seen := map[*jsonschema.Schema]bool{}
	var out []*jsonschema.Schema
	var visit func(s *jsonschema.Schema)
	visit = func(s *jsonschema.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		out = append(out, s)
		visit(s.Ref)
		if s.DynamicRef != nil {
			visit(s.DynamicRef.Ref)
		}
		for _, list := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf, {s.Then, s.Else}} {
			for _, x := range list {
				visit(x)
			}
		}
	}
	for _, s := range in {
		visit(s)
	}
	return out
}

// Member returns the subschemas of schemas (already Applicable) that apply
// to the object member name: properties, matching patternProperties, else
// a schema-valued additionalProperties (Core 2020-12 §10.3.2). declared is
// true when a properties or patternProperties entry names it.
func Member(schemas []*jsonschema.Schema, name string) (next []*jsonschema.Schema, declared bool) {
	for _, s := range schemas {
		if p, ok := s.Properties[name]; ok {
			next, declared = append(next, p), true
			continue
		}
		matched := false
		for re, p := range s.PatternProperties {
			if re.MatchString(name) {
				next, declared, matched = append(next, p), true, true
			}
		}
		if !matched {
			if ap, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
				next = append(next, ap)
			}
		}
	}
	return next, declared
}

// Element returns the subschemas of schemas (already Applicable) that apply
// to array element i: prefixItems[i] or items (2020-12), and the draft-7
// items forms (Core 2020-12 §10.3.1).
func Element(schemas []*jsonschema.Schema, i int) []*jsonschema.Schema {
	var next []*jsonschema.Schema
	for _, s := range schemas {
		prefix, rest := ElementSchemas(s, "")
		switch {
		case i < len(prefix):
			next = append(next, prefix[i].Schema)
		case rest != nil:
			next = append(next, rest.Schema)
		}
	}
	return next
}

// Step is one schema reached by Merge or ElementSchemas: the schema, its
// keyword location (a JSON Pointer from the root the walk started at,
// through any $ref, like keywordLocation in Core 2020-12 §12.3.1), and the
// keyword that led to it ("" for the start, "$ref", "$dynamicRef", "allOf",
// "items", "prefixItems").
type Step struct {
	Schema *jsonschema.Schema
	Ptr    string
	Via    string
	// Cut is true when Merge reached the schema but does not enter it: it
	// was already entered in this Merge (a recursive $ref, or a schema two
	// allOf members share) or it is deeper than the depth bound. A cut step
	// is reported only so that the caller can see the edge ($ref targets);
	// its keywords do not apply again.
	Cut bool
}

// Merge visits start and, depth-first, every schema that applies to the
// same instance location by $ref, $dynamicRef and allOf (Core 2020-12
// §8.2.3.1, §8.2.3.2, §10.2.1.1), in that keyword order, each with its
// keyword location below ptr. A schema is visited before the schemas it
// leads to. oneOf, anyOf and if/then/else are not followed: they choose
// between schemas rather than add to them. A nil start visits nothing;
// steps deeper than maxDepth, or whose schema was already entered by this
// Merge, are visited with Cut set and not followed: each schema is entered
// once (applying a schema twice adds nothing), so a DAG of allOf and $ref
// costs one visit per edge, not one per path (a diamond of allOf N deep
// has 2^N paths). leave, when not nil, is called for each entered (not
// cut) step after the schemas it leads to were visited.
func Merge(start *jsonschema.Schema, ptr string, maxDepth int, visit, leave func(Step)) {
	entered := map[*jsonschema.Schema]bool{}
	var walk func(st Step, depth int)
	walk = func(st Step, depth int) {
		s := st.Schema
		if depth > maxDepth || entered[s] {
			st.Cut = true
			visit(st)
			return
		}
		visit(st)
		if leave != nil {
			defer leave(st)
		}
		if s.Bool != nil {
			return
		}
		entered[s] = true
		if s.Ref != nil {
			walk(Step{Schema: s.Ref, Ptr: st.Ptr + "/$ref", Via: "$ref"}, depth+1)
		}
		if s.DynamicRef != nil && s.DynamicRef.Ref != nil {
			walk(Step{Schema: s.DynamicRef.Ref, Ptr: st.Ptr + "/$dynamicRef", Via: "$dynamicRef"}, depth+1)
		}
		for i, a := range s.AllOf {
			walk(Step{Schema: a, Ptr: st.Ptr + "/allOf/" + strconv.Itoa(i), Via: "allOf"}, depth+1)
		}
	}
	if start != nil {
		walk(Step{Schema: start, Ptr: ptr}, 0)
	}
}

// ElementSchemas returns the subschemas of s (one schema, not its $refs)
// that apply to array elements, with their keyword locations below ptr:
// prefix[i] applies to element i (prefixItems, or a draft-7 items array),
// rest to every element past the prefix (2020-12 items, or a draft-7 items
// schema); rest is nil when s says nothing about them (Core 2020-12
// §10.3.1.1, §10.3.1.2). A compiled schema holds one draft's form only.
func ElementSchemas(s *jsonschema.Schema, ptr string) (prefix []Step, rest *Step) {
	if s.Items2020 != nil {
		rest = &Step{Schema: s.Items2020, Ptr: ptr + "/items", Via: "items"}
	}
	switch it := s.Items.(type) {
	case *jsonschema.Schema:
		rest = &Step{Schema: it, Ptr: ptr + "/items", Via: "items"}
	case []*jsonschema.Schema:
		for i, p := range it {
			prefix = append(prefix, Step{Schema: p, Ptr: ptr + "/items/" + strconv.Itoa(i), Via: "items"})
		}
	}
	for i, p := range s.PrefixItems {
		prefix = append(prefix, Step{Schema: p, Ptr: ptr + "/prefixItems/" + strconv.Itoa(i), Via: "prefixItems"})
	}
	return prefix, rest
}
