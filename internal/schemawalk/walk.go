package schemawalk

import (
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
		switch {
		case i < len(s.PrefixItems):
			next = append(next, s.PrefixItems[i])
		case s.Items2020 != nil:
			next = append(next, s.Items2020)
		}
		switch it := s.Items.(type) {
		case *jsonschema.Schema:
			next = append(next, it)
		case []*jsonschema.Schema:
			if i < len(it) {
				next = append(next, it[i])
			}
		}
	}
	return next
}
