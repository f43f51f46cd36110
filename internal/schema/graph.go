package schema

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/jsonpointer"
)

// The checks that need the compiled schemas: where every $ref landed, and
// whether references can loop without ever descending into the instance.

// edge is one way a compiled schema reaches another.
type edge struct {
	to *jsonschema.Schema
	// kw is the keyword's path from the schema holding it, e.g. "$ref",
	// "allOf/0", "properties/name".
	kw string
	// same is true when the subschema applies to the same instance (an
	// in-place applicator, JSON Schema Core 2020-12 §10.2, or a
	// reference); false when it applies to a member, an element or a
	// property name.
	same bool
}

// edges lists the subschemas s reaches, in a fixed order. A $dynamicRef
// whose first target carries the $dynamicAnchor it names may resolve at
// run time to any schema with that $dynamicAnchor (Core 2020-12 §8.2.3.2),
// so it reaches every one in dynamic.
func edges(s *jsonschema.Schema, dynamic map[string][]*jsonschema.Schema) []edge {
	var out []edge
	add := func(to *jsonschema.Schema, kw string, same bool) {
		if to != nil {
			out = append(out, edge{to, kw, same})
		}
	}
	list := func(l []*jsonschema.Schema, kw string, same bool) {
		for i, to := range l {
			add(to, kw+"/"+strconv.Itoa(i), same)
		}
	}
	byName := func(m map[string]*jsonschema.Schema, kw string, same bool) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			add(m[k], kw+"/"+jsonpointer.EscapeToken(k), same)
		}
	}
	add(s.Ref, "$ref", true)
	add(s.RecursiveRef, "$recursiveRef", true)
	if d := s.DynamicRef; d != nil {
		add(d.Ref, "$dynamicRef", true)
		if d.Anchor != "" && d.Ref != nil && d.Ref.DynamicAnchor == d.Anchor {
			for _, to := range dynamic[d.Anchor] {
				if to != d.Ref {
					add(to, "$dynamicRef", true)
				}
			}
		}
	}
	list(s.AllOf, "allOf", true)
	list(s.AnyOf, "anyOf", true)
	list(s.OneOf, "oneOf", true)
	add(s.Not, "not", true)
	add(s.If, "if", true)
	add(s.Then, "then", true)
	add(s.Else, "else", true)
	byName(s.DependentSchemas, "dependentSchemas", true)
	for _, k := range slices.Sorted(maps.Keys(s.Dependencies)) {
		if to, ok := s.Dependencies[k].(*jsonschema.Schema); ok {
			add(to, "dependencies/"+jsonpointer.EscapeToken(k), true)
		}
	}

	byName(s.Properties, "properties", false)
	patterns := make(map[string]*jsonschema.Schema, len(s.PatternProperties))
	for re, to := range s.PatternProperties {
		patterns[re.String()] = to
	}
	byName(patterns, "patternProperties", false)
	if ap, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
		add(ap, "additionalProperties", false)
	}
	add(s.PropertyNames, "propertyNames", false)
	add(s.UnevaluatedProperties, "unevaluatedProperties", false)
	list(s.PrefixItems, "prefixItems", false)
	add(s.Items2020, "items", false)
	switch items := s.Items.(type) {
	case *jsonschema.Schema:
		add(items, "items", false)
	case []*jsonschema.Schema:
		list(items, "items", false)
	}
	if ai, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
		add(ai, "additionalItems", false)
	}
	add(s.Contains, "contains", false)
	add(s.UnevaluatedItems, "unevaluatedItems", false)
	add(s.ContentSchema, "contentSchema", false)
	return out
}

// graphProblem is a problem found in the compiled schemas: at the keyword
// kw of the schema at location loc.
type graphProblem struct {
	loc, kw, msg string
}

// checkGraph walks every compiled schema reachable from roots and returns
// the first problem, or nil:
//
//   - a schema reached at a location that isSchema says is not a schema
//     position (a $ref into the value of const, enum, default, examples
//     or an annotation: the strict walk never looked there);
//   - a cycle of references and in-place applicators ($ref, $dynamicRef,
//     allOf, anyOf, oneOf, not, if, then, else, dependentSchemas) that
//     never descends into the instance: the validator would meet the same
//     schema at the same instance location again and refuse every value
//     that reaches it ("schema.invalid"), so load refuses it instead. A
//     recursion through properties, items or any other keyword that moves
//     to a member or element ends with the instance and is fine.
//
// dynamic lists, by name, every schema with a $dynamicAnchor.
func checkGraph(roots []*jsonschema.Schema, dynamic map[string][]*jsonschema.Schema, isSchema func(loc string) bool) *graphProblem {
	out := map[*jsonschema.Schema][]edge{}
	var order []*jsonschema.Schema
	queue := slices.Clone(roots)
	for _, r := range roots {
		out[r] = nil
	}
	for i := 0; i < len(queue); i++ {
		s := queue[i]
		order = append(order, s)
		es := edges(s, dynamic)
		out[s] = es
		for _, e := range es {
			if _, seen := out[e.to]; seen {
				continue
			}
			if !isSchema(e.to.Location) {
				return &graphProblem{loc: s.Location, kw: e.kw, msg: fmt.Sprintf(
					"%s reaches %s, which is not a schema: a reference must name the root, a $defs entry or another subschema, never a value inside const, enum, default, examples or an annotation", e.kw, locationPointer(e.to.Location))}
			}
			out[e.to] = nil
			queue = append(queue, e.to)
		}
	}

	const (
		white = iota
		grey
		black
	)
	color := map[*jsonschema.Schema]int{}
	type step struct {
		s  *jsonschema.Schema
		kw string
	}
	var stack []step
	var found *graphProblem
	var visit func(s *jsonschema.Schema)
	visit = func(s *jsonschema.Schema) {
		color[s] = grey
		for _, e := range out[s] {
			if !e.same || found != nil {
				continue
			}
			stack = append(stack, step{s, e.kw})
			switch color[e.to] {
			case grey:
				i := slices.IndexFunc(stack, func(st step) bool { return st.s == e.to })
				var path []string
				for _, st := range stack[i:] {
					path = append(path, locationPointer(st.s.Location)+"/"+st.kw)
				}
				found = &graphProblem{loc: s.Location, kw: e.kw, msg: fmt.Sprintf(
					"references loop without descending into the value (%s → back to %s): the validator would refuse every value that reaches them; put the recursion under properties, items or another keyword that moves to a member or element",
					strings.Join(path, " → "), locationPointer(e.to.Location))}
			case white:
				visit(e.to)
			}
			stack = stack[:len(stack)-1]
		}
		color[s] = black
	}
	for _, s := range order {
		if color[s] == white && found == nil {
			visit(s)
		}
	}
	return found
}

// splitLocation splits a compiled schema's Location into its document URL
// and the RFC 6901 pointer in it (the fragment, percent-decoded).
func splitLocation(loc string) (doc, ptr string) {
	doc, frag, _ := strings.Cut(loc, "#")
	if p, err := url.PathUnescape(frag); err == nil {
		frag = p
	}
	return doc, frag
}

// locationPointer is a location with its pointer percent-decoded, for
// messages: "file:///dir/a.json#/$defs/x" (Dir.Relative shortens it to
// "a.json#/$defs/x").
func locationPointer(loc string) string {
	doc, ptr := splitLocation(loc)
	return doc + "#" + ptr
}
