package lint

import (
	"context"
	"maps"
	"slices"
	"strconv"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/introspect"
	"github.com/airlockdev/airlock/internal/schemawalk"
	"github.com/airlockdev/airlock/jsonpointer"
)

// maxWalkDepth bounds the walk: schema positions deeper than this many
// steps (in-place or into members) from a root are not linted. Contract
// schemas are bounded by schema.FileLimits; this keeps a deep recursive
// $ref from costing more than a walk of its first levels.
const maxWalkDepth = 64

// node is one schema position the walk reached, with everything that
// applies at the same instance location beside it.
type node struct {
	s *jsonschema.Schema
	// version is the upstream version whose schema led here; "" for the
	// agent-facing schema.
	version string
	// inst is the instance location: an RFC 6901 pointer into the
	// response, "*" for every array element or additional member.
	inst string
	// beside is s, every schema s merges ($ref, $dynamicRef, allOf), and
	// the schemas the walk passed through to reach s at this instance
	// location with everything they merge: what applies to the same value
	// whatever branch is taken.
	beside []*jsonschema.Schema
	k      *contract
	// member is true for a position reached through properties,
	// patternProperties, additionalProperties, prefixItems, items or
	// contains: the schema of a value inside the response, not one applying
	// beside another at the same place.
	member bool
	// pat is s's pattern as the pattern rules read it (node.pattern),
	// parsed once.
	pat           pattern
	parsed, patOK bool
}

// anyBeside reports whether a schema applying beside n satisfies pred.
func (n *node) anyBeside(pred func(*jsonschema.Schema) bool) bool {
	return slices.ContainsFunc(n.beside, func(s *jsonschema.Schema) bool { return s.Bool == nil && pred(s) })
}

// walker visits every schema position of one root once per context.
type walker struct {
	ctx     context.Context
	k       *contract
	e       *emitter
	version string
	seen    map[walkKey]bool
}

// walkKey is a schema position and the facts of what applies above it:
// the same position reached under other facts is linted again.
type walkKey struct {
	s      *jsonschema.Schema
	facts  uint16
	member bool
}

// walkSchemas runs every schema rule over each upstream version's schema,
// then the agent-facing schema; it stops with ctx's error once ctx is
// cancelled.
func (k *contract) walkSchemas(ctx context.Context, e *emitter) error {
	roots := []struct {
		version string
		s       *jsonschema.Schema
	}{}
	for _, v := range k.versions() {
		s, _ := introspect.Schema(k.c, v)
		roots = append(roots, struct {
			version string
			s       *jsonschema.Schema
		}{v, s})
	}
	roots = append(roots, struct {
		version string
		s       *jsonschema.Schema
	}{"", introspect.AgentSchema(k.c)})
	for _, r := range roots {
		w := &walker{ctx: ctx, k: k, e: e, version: r.version, seen: map[walkKey]bool{}}
		w.visit(r.s, "", nil, 0)
	}
	return ctx.Err()
}

// visit lints s at instance location inst, outer being what applies there
// from the schemas the walk came through, then walks on: into the schemas
// s merges and its oneOf, anyOf, then and else branches (same instance
// location), and into its properties, additional members and items.
func (w *walker) visit(s *jsonschema.Schema, inst string, outer []*jsonschema.Schema, depth int) {
	w.visitAt(s, inst, outer, depth, false)
}

// visitAt is visit, member saying whether s is a member's or an item's
// schema (node.member).
func (w *walker) visitAt(s *jsonschema.Schema, inst string, outer []*jsonschema.Schema, depth int, member bool) {
	if s == nil || depth > maxWalkDepth || w.ctx.Err() != nil {
		return
	}
	key := walkKey{s, factsOf(outer), member}
	if w.seen[key] {
		return
	}
	w.seen[key] = true
	merged := closure(s)
	beside := append(slices.Clone(merged), outer...)
	n := &node{s: s, version: w.version, inst: inst, beside: beside, k: w.k, member: member}
	for _, r := range registry {
		if r.scope == scopeSchema {
			r.schema(n, w.e)
		}
	}
	for _, m := range merged[1:] {
		w.visit(m, inst, beside, depth+1)
	}
	for _, m := range merged {
		if m.Bool != nil {
			continue
		}
		for _, b := range slices.Concat(m.OneOf, m.AnyOf, []*jsonschema.Schema{m.Then, m.Else}) {
			w.visit(b, inst, beside, depth+1)
		}
		for _, name := range slices.Sorted(maps.Keys(m.Properties)) {
			w.visitAt(m.Properties[name], inst+"/"+jsonpointer.EscapeToken(name), nil, depth+1, true)
		}
		for _, p := range m.PatternProperties {
			w.visitAt(p, inst+"/*", nil, depth+1, true)
		}
		if ap, ok := m.AdditionalProperties.(*jsonschema.Schema); ok {
			w.visitAt(ap, inst+"/*", nil, depth+1, true)
		}
		prefix, rest := schemawalk.ElementSchemas(m, "")
		for i, p := range prefix {
			w.visitAt(p.Schema, inst+"/"+strconv.Itoa(i), nil, depth+1, true)
		}
		if rest != nil {
			w.visitAt(rest.Schema, inst+"/*", nil, depth+1, true)
		}
		w.visitAt(m.Contains, inst+"/*", nil, depth+1, true)
	}
}

// closure is s followed by every schema that applies to the same instance
// through $ref, $dynamicRef and allOf, each once, depth first in that
// keyword order. Each schema is entered once, so the cost is linear in the
// schemas reached even where allOf and $ref share targets (a diamond) or
// loop.
func closure(s *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	seen := map[*jsonschema.Schema]bool{}
	var visit func(x *jsonschema.Schema)
	visit = func(x *jsonschema.Schema) {
		if x == nil || seen[x] {
			return
		}
		seen[x] = true
		out = append(out, x)
		visit(x.Ref)
		if x.DynamicRef != nil {
			visit(x.DynamicRef.Ref)
		}
		for _, a := range x.AllOf {
			visit(a)
		}
	}
	visit(s)
	return out
}

// closureAll is the closure of each schema of in, concatenated.
func closureAll(in []*jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	for _, s := range in {
		out = append(out, closure(s)...)
	}
	return out
}

// The facts of what applies above a position that decide the schema
// rules: a position is linted once per combination.
const (
	factClosed uint16 = 1 << iota
	factMaxLength
	factMaxItems
	factNumberBound
	factValues
	factPattern
	factFormat
	factUnevaluated
)

// factsOf summarises schemas as the rules read them.
func factsOf(schemas []*jsonschema.Schema) uint16 {
	var f uint16
	for _, s := range schemas {
		if s.Bool != nil {
			continue
		}
		if closesObject(s) {
			f |= factClosed
		}
		if s.UnevaluatedProperties != nil {
			f |= factUnevaluated
		}
		if s.MaxLength != nil {
			f |= factMaxLength
		}
		if s.MaxItems != nil {
			f |= factMaxItems
		}
		if s.Minimum != nil || s.Maximum != nil || s.ExclusiveMinimum != nil || s.ExclusiveMaximum != nil {
			f |= factNumberBound
		}
		if s.Enum != nil || s.Const != nil {
			f |= factValues
		}
		if s.Pattern != nil {
			f |= factPattern
		}
		if s.Format != nil {
			f |= factFormat
		}
	}
	return f
}

// closesObject reports whether s keeps unknown members out of an object or
// constrains them: additionalProperties false or a schema,
// unevaluatedProperties, or propertyNames.
func closesObject(s *jsonschema.Schema) bool {
	switch ap := s.AdditionalProperties.(type) {
	case bool:
		if !ap {
			return true
		}
	case *jsonschema.Schema:
		if ap.Bool == nil || !*ap.Bool {
			return true
		}
	}
	if u := s.UnevaluatedProperties; u != nil && (u.Bool == nil || !*u.Bool) {
		return true
	}
	return s.PropertyNames != nil && s.PropertyNames.Bool == nil
}

// hasType reports whether s's type keyword names t ("number" also covers
// "integer").
func hasType(s *jsonschema.Schema, t string) bool {
	if s.Types == nil {
		return false
	}
	for _, n := range s.Types.ToStrings() {
		if n == t || t == "integer" && n == "number" {
			return true
		}
	}
	return false
}
