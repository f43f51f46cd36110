package lint

import (
	"fmt"
	"maps"
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/schemawalk"
)

// checkOpenObject: an object schema that names members and lets others in.
func checkOpenObject(n *node, e *emitter) {
	s := n.s
	if s.Bool != nil || s.Types != nil && !hasType(s, "object") {
		return
	}
	names := len(s.Properties) > 0
	bare := hasType(s, "object") && !slices.ContainsFunc(n.beside, func(x *jsonschema.Schema) bool { return len(x.Properties) > 0 })
	if !names && !bare || n.anyBeside(closesObject) {
		return
	}
	e.atSchema(openObject, s, "", n.version, n.inst,
		"this object admits members it does not name: add \"additionalProperties\": false (or \"unevaluatedProperties\": false where allOf composes it)")
}

// boundedFormats are the formats whose every valid value is short (a date,
// a time, an address, a UUID, a host name of at most 253 characters): an
// asserted one bounds a string as a maxLength would. The others (uri,
// email, regex, …) admit strings of any length.
var boundedFormats = []string{"date", "date-time", "time", "uuid", "ipv4", "ipv6", "hostname"}

// checkValueUnconstrained: a member, additional member or item whose
// schema says nothing about its value: no type, const or enum anywhere
// beside it ({}, true, {"minProperties": 1}); a choice between branches is
// judged branch by branch.
func checkValueUnconstrained(n *node, e *emitter) {
	if !n.member {
		return
	}
	s := n.s
	if s.Bool != nil {
		if *s.Bool {
			e.atSchema(valueUnconstrained, s, "", n.version, n.inst, "true admits any value here: give it a type (and its bounds)")
		}
		return
	}
	if slices.ContainsFunc(n.beside, func(x *jsonschema.Schema) bool {
		return x.Bool != nil || x.Types != nil && !x.Types.IsEmpty() || x.Const != nil || x.Enum != nil ||
			len(x.OneOf) > 0 || len(x.AnyOf) > 0 || x.If != nil || x.Not != nil || x.DynamicRef != nil
	}) {
		return
	}
	e.atSchema(valueUnconstrained, s, "", n.version, n.inst, "this schema says nothing about the value's type: any value is admitted here; give it a type (and its bounds)")
}

// checkStringUnbounded: a string with nothing bounding its length.
func checkStringUnbounded(n *node, e *emitter) {
	if !hasType(n.s, "string") || n.anyBeside(func(x *jsonschema.Schema) bool {
		return x.MaxLength != nil || x.Enum != nil || x.Const != nil || x.Pattern != nil || n.k.boundingFormat(x.Format)
	}) {
		return
	}
	e.atSchema(stringUnbounded, n.s, "type", n.version, n.inst,
		"a string with no maxLength (nor enum, pattern or a short asserted format): only limits.max_string_length (%d bytes) bounds it; add the longest length you expect as \"maxLength\"", n.k.c.Limits().MaxStringLength)
}

// boundingFormat reports whether f bounds a string's length: one of
// boundedFormats that the contract's format policy asserts (an annotated
// format admits any string).
func (k *contract) boundingFormat(f *jsonschema.Format) bool {
	return f != nil && slices.Contains(boundedFormats, f.Name) && k.m.Formats[f.Name] != "annotate"
}

// checkArrayUnbounded: an array with no maxItems.
func checkArrayUnbounded(n *node, e *emitter) {
	if !hasType(n.s, "array") || n.anyBeside(func(x *jsonschema.Schema) bool {
		closedTuple := x.Items2020 != nil && x.Items2020.Bool != nil && !*x.Items2020.Bool
		return x.MaxItems != nil || closedTuple || x.Enum != nil || x.Const != nil
	}) {
		return
	}
	e.atSchema(arrayUnbounded, n.s, "type", n.version, n.inst,
		"an array with no maxItems: only the contract's byte limit (%d bytes) bounds its length; add the most elements you expect as \"maxItems\"", n.k.c.Limits().MaxBytes)
}

// checkNumberUnbounded: a number bounded on neither side.
func checkNumberUnbounded(n *node, e *emitter) {
	if !hasType(n.s, "integer") || n.anyBeside(func(x *jsonschema.Schema) bool {
		return x.Minimum != nil || x.Maximum != nil || x.ExclusiveMinimum != nil || x.ExclusiveMaximum != nil || x.Enum != nil || x.Const != nil
	}) {
		return
	}
	e.atSchema(numberUnbounded, n.s, "type", n.version, n.inst,
		"a number with neither minimum nor maximum: any magnitude written in up to limits.max_number_length (%d bytes) is admitted; add the \"minimum\" and \"maximum\" you expect", n.k.c.Limits().MaxNumberLength)
}

// pattern is what the pattern rules read of a schema's pattern.
type pattern struct {
	expr                  string
	start, end, unbounded bool // anchored at the start, at the end; unbounded repetition
}

// pattern parses n's pattern, once for both pattern rules; ok is false
// without one, or for a syntax Go's parser reads differently from the
// gate's (the gate compiled it; lint does not judge it).
func (n *node) pattern() (pattern, bool) {
	if !n.parsed {
		n.parsed = true
		n.pat, n.patOK = patternOf(n.s)
	}
	return n.pat, n.patOK
}

func patternOf(s *jsonschema.Schema) (p pattern, ok bool) {
	if s.Pattern == nil {
		return p, false
	}
	p.expr = s.Pattern.String()
	re, err := syntax.Parse(p.expr, syntax.Perl)
	if err != nil {
		return p, false
	}
	p.start, p.end, p.unbounded = anchoredStart(re), anchoredEnd(re), unboundedRepeat(re)
	return p, true
}

// checkPatternUnanchored: a pattern that matches anywhere in the string.
func checkPatternUnanchored(n *node, e *emitter) {
	p, ok := n.pattern()
	if !ok || p.start && p.end {
		return
	}
	missing := "^ at the start and $ at the end"
	switch {
	case p.start:
		missing = "$ at the end"
	case p.end:
		missing = "^ at the start"
	}
	e.atSchema(patternUnanchored, n.s, "pattern", n.version, n.inst,
		"pattern %q matches anywhere in the string (JSON Schema patterns are not implicitly anchored): add %s", clip(p.expr), missing)
}

// checkPatternUnbounded: an anchored pattern with unbounded repetition and
// no maxLength beside it.
func checkPatternUnbounded(n *node, e *emitter) {
	p, ok := n.pattern()
	if !ok || !p.start || !p.end || !p.unbounded {
		return
	}
	if n.anyBeside(func(x *jsonschema.Schema) bool { return x.MaxLength != nil || x.Enum != nil || x.Const != nil }) {
		return
	}
	e.atSchema(patternUnbounded, n.s, "pattern", n.version, n.inst,
		"pattern %q admits strings of any length and no maxLength applies beside it", clip(p.expr))
}

// peerFormats are the formats JSON Schema Validation 2020-12 §7.3 defines:
// the ones other validators know.
var peerFormats = []string{
	"date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname",
	"ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference", "uuid", "uri-template",
	"json-pointer", "relative-json-pointer", "regex",
}

// checkFormatUnportable: a format only airlock's validator knows.
func checkFormatUnportable(n *node, e *emitter) {
	f := n.s.Format
	if f == nil || slices.Contains(peerFormats, f.Name) {
		return
	}
	e.atSchema(formatUnportable, n.s, "format", n.version, n.inst,
		"format %q is not one of JSON Schema 2020-12's formats: airlock asserts it, other validators admit any string", f.Name)
}

// checkClosedBesideComposition: additionalProperties: false that cannot
// see the members its composition adds.
func checkClosedBesideComposition(n *node, e *emitter) {
	s := n.s
	if ap, ok := s.AdditionalProperties.(bool); !ok || ap {
		return
	}
	var composed []*jsonschema.Schema
	for _, x := range closure(s)[1:] {
		composed = append(composed, x)
	}
	for _, b := range slices.Concat(s.OneOf, s.AnyOf) {
		composed = append(composed, closureAll(schemawalk.Applicable([]*jsonschema.Schema{b}))...)
	}
	var added []string
	for _, x := range composed {
		for _, name := range slices.Sorted(maps.Keys(x.Properties)) {
			if p := x.Properties[name]; p.Bool != nil && !*p.Bool {
				continue // a false property forbids the member: nothing admissible is refused
			}
			if ownMember(s, name) || slices.Contains(added, name) {
				continue
			}
			added = append(added, name)
		}
	}
	if len(added) == 0 {
		return
	}
	e.atSchema(closedBesideAllOf, s, "additionalProperties", n.version, n.inst,
		"additionalProperties: false refuses %s, which the composition beside it adds: every response carrying them is refused; use \"unevaluatedProperties\": false", nameList(added))
}

// ownMember reports whether s's own properties or patternProperties name
// member name.
func ownMember(s *jsonschema.Schema, name string) bool {
	if _, ok := s.Properties[name]; ok {
		return true
	}
	for re := range s.PatternProperties {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}

// maxOverlapBranches is how many branches of one oneOf are compared pair
// by pair (the first ones): at most 64·63/2 = 2016 pairs per oneOf.
const maxOverlapBranches = 64

// checkOneOfOverlap: two oneOf branches that admit one value.
func checkOneOfOverlap(n *node, e *emitter) {
	bs := n.s.OneOf
	if len(bs) > maxOverlapBranches {
		bs = bs[:maxOverlapBranches]
	}
	for i := range bs {
		for j := i + 1; j < len(bs); j++ {
			if why := overlap(bs[i], bs[j], n.k.sameSchemas); why != "" {
				e.atSchema(oneOfOverlap, n.s, "oneOf", n.version, n.inst,
					"oneOf branches %d and %d both admit %s: such a response matches two branches and is refused", i, j, why)
				return
			}
		}
	}
}

// overlap says which values both branches admit, in the cases lint can
// decide ("" when it cannot tell, or they are disjoint): object branches
// with the same required members and no member that tells them apart, and
// a branch that is only a type which the other narrows.
func overlap(a, b *jsonschema.Schema, same func(x, y []*jsonschema.Schema) bool) string {
	ca, cb := closure(a), closure(b)
	if composes(ca) || composes(cb) {
		return ""
	}
	ta, tb := typesOf(ca), typesOf(cb)
	common := ta & tb
	if common == 0 || disjointValues(ca, cb) {
		return ""
	}
	if typeOnly(ca) && tb&^ta == 0 || typeOnly(cb) && ta&^tb == 0 {
		return "every " + common.String() + " value of the narrower branch"
	}
	if common != schemawalk.Object || !onlyMembers(ca) || !onlyMembers(cb) {
		return ""
	}
	ra, rb := requiredOf(ca), requiredOf(cb)
	if !slices.Equal(ra, rb) {
		return ""
	}
	pa, pb := propertiesOf(ca), propertiesOf(cb)
	for name, xs := range pa {
		ys, ok := pb[name]
		if !ok {
			if closed(cb) && slices.Contains(ra, name) {
				return ""
			}
			continue
		}
		cx, cy := closureAll(xs), closureAll(ys)
		if !valuesOnly(cx) || !valuesOnly(cy) {
			if same(cx, cy) {
				continue // the same constraints on both sides: no help telling them apart
			}
			return "" // a pattern, a bound, a nested shape that differ: lint does not decide those
		}
		if disjointValues(cx, cy) {
			return "" // a discriminator
		}
		if slices.Contains(ra, name) && typesOf(closureAll(xs))&typesOf(closureAll(ys)) == 0 {
			return ""
		}
	}
	if len(ra) == 0 {
		return "an object with no members"
	}
	return "an object with only the members " + nameList(ra)
}

// sameSchemas reports whether two conjunctions are written the same (their
// JSON values, one by one, canonically equal), so they admit the same
// values; false when either is not in the contract's files.
func (k *contract) sameSchemas(x, y []*jsonschema.Schema) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] == y[i] {
			continue
		}
		a, ok1 := k.dir.Value(x[i].Location)
		b, ok2 := k.dir.Value(y[i].Location)
		if !ok1 || !ok2 || schemawalk.Canonical(a) != schemawalk.Canonical(b) {
			return false
		}
	}
	return true
}

// composes reports whether a branch chooses again (oneOf, anyOf, if, not):
// lint does not decide those.
func composes(list []*jsonschema.Schema) bool {
	return slices.ContainsFunc(list, func(s *jsonschema.Schema) bool {
		return s.Bool != nil || len(s.OneOf) > 0 || len(s.AnyOf) > 0 || s.If != nil || s.Not != nil
	})
}

// typesOf is the types a conjunction of schemas admits, narrowed by its
// enum and const values.
func typesOf(list []*jsonschema.Schema) schemawalk.Types {
	t := schemawalk.AllTypes
	for _, s := range list {
		if s.Types != nil && !s.Types.IsEmpty() {
			t &= schemawalk.TypesOf(s.Types.ToStrings())
		}
		if vs := valuesOf(s); vs != nil {
			var vt schemawalk.Types
			for _, v := range vs {
				vt |= schemawalk.TypeOfValue(v)
			}
			t &= vt
		}
	}
	return t
}

// valuesOf is s's enum or const values; nil when it has neither.
func valuesOf(s *jsonschema.Schema) []any {
	switch {
	case s.Const != nil:
		return []any{*s.Const}
	case s.Enum != nil:
		return s.Enum.Values
	}
	return nil
}

// disjointValues reports whether two conjunctions pin their values to
// sets with nothing in common.
func disjointValues(a, b []*jsonschema.Schema) bool {
	set := func(list []*jsonschema.Schema) map[string]bool {
		var out map[string]bool
		for _, s := range list {
			vs := valuesOf(s)
			if vs == nil {
				continue
			}
			next := map[string]bool{}
			for _, v := range vs {
				if c := schemawalk.Canonical(v); out == nil || out[c] {
					next[c] = true
				}
			}
			out = next
		}
		return out
	}
	va, vb := set(a), set(b)
	if va == nil || vb == nil {
		return false
	}
	for v := range va {
		if vb[v] {
			return false
		}
	}
	return true
}

// typeOnly reports whether a conjunction says nothing but a type.
func typeOnly(list []*jsonschema.Schema) bool {
	return saysOnly(list, func(c *jsonschema.Schema) {})
}

// valuesOnly reports whether a conjunction says nothing but a type, enum
// or const: what overlap can compare.
func valuesOnly(list []*jsonschema.Schema) bool {
	return saysOnly(list, func(c *jsonschema.Schema) { c.Enum, c.Const = nil, nil })
}

// onlyMembers reports whether an object conjunction says nothing but its
// type, properties, required members and additionalProperties: false.
func onlyMembers(list []*jsonschema.Schema) bool {
	return saysOnly(list, func(c *jsonschema.Schema) {
		c.Properties, c.Required = nil, nil
		if ap, ok := c.AdditionalProperties.(bool); ok && !ap {
			c.AdditionalProperties = nil
		}
	})
}

// saysOnly reports whether every schema of list, with its type, $ref,
// allOf (already in the list) and annotations cleared and then clear
// applied, has no assertion keyword left.
func saysOnly(list []*jsonschema.Schema, clear func(c *jsonschema.Schema)) bool {
	for _, s := range list {
		if s.Bool != nil {
			return false
		}
		c := *s
		c.Location, c.Types, c.Ref, c.AllOf = "", nil, nil, nil
		c.Title, c.Description, c.Comment, c.Default, c.Examples, c.Deprecated, c.ReadOnly, c.WriteOnly = "", "", "", nil, nil, false, false, false
		clear(&c)
		if !emptySchema(&c) {
			return false
		}
	}
	return true
}

// emptySchema reports whether s (its locations and annotations cleared)
// has no assertion keyword.
func emptySchema(s *jsonschema.Schema) bool {
	return s.Enum == nil && s.Const == nil && s.Not == nil && s.If == nil && s.Format == nil &&
		s.MaxProperties == nil && s.MinProperties == nil && s.Required == nil && s.PropertyNames == nil &&
		len(s.Properties) == 0 && len(s.PatternProperties) == 0 && s.AdditionalProperties == nil &&
		len(s.DependentRequired) == 0 && len(s.DependentSchemas) == 0 && s.UnevaluatedProperties == nil &&
		s.MinItems == nil && s.MaxItems == nil && !s.UniqueItems && s.Contains == nil && s.Items == nil &&
		s.PrefixItems == nil && s.Items2020 == nil && s.UnevaluatedItems == nil &&
		s.MinLength == nil && s.MaxLength == nil && s.Pattern == nil && s.ContentEncoding == nil && s.ContentMediaType == nil &&
		s.Maximum == nil && s.Minimum == nil && s.ExclusiveMaximum == nil && s.ExclusiveMinimum == nil && s.MultipleOf == nil &&
		len(s.OneOf) == 0 && len(s.AnyOf) == 0 && s.DynamicRef == nil
}

// requiredOf is the sorted union of a conjunction's required members.
func requiredOf(list []*jsonschema.Schema) []string {
	var out []string
	for _, s := range list {
		for _, r := range s.Required {
			if !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	slices.Sort(out)
	return out
}

// propertiesOf maps each member a conjunction declares to its schemas.
func propertiesOf(list []*jsonschema.Schema) map[string][]*jsonschema.Schema {
	out := map[string][]*jsonschema.Schema{}
	for _, s := range list {
		for name, p := range s.Properties {
			out[name] = append(out[name], p)
		}
	}
	return out
}

// closed reports whether a conjunction refuses undeclared members.
func closed(list []*jsonschema.Schema) bool {
	return slices.ContainsFunc(list, func(s *jsonschema.Schema) bool {
		ap, ok := s.AdditionalProperties.(bool)
		return ok && !ap
	})
}

// anchoredStart reports whether every match of re starts at the start of
// the text.
func anchoredStart(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginText:
		return true
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if sub.Op == syntax.OpEmptyMatch {
				continue
			}
			return anchoredStart(sub)
		}
	case syntax.OpCapture:
		return anchoredStart(re.Sub[0])
	case syntax.OpAlternate:
		return !slices.ContainsFunc(re.Sub, func(s *syntax.Regexp) bool { return !anchoredStart(s) })
	}
	return false
}

// anchoredEnd reports whether every match of re ends at the end of the
// text.
func anchoredEnd(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpEndText:
		return true
	case syntax.OpConcat:
		for i := len(re.Sub) - 1; i >= 0; i-- {
			if re.Sub[i].Op == syntax.OpEmptyMatch {
				continue
			}
			return anchoredEnd(re.Sub[i])
		}
	case syntax.OpCapture:
		return anchoredEnd(re.Sub[0])
	case syntax.OpAlternate:
		return !slices.ContainsFunc(re.Sub, func(s *syntax.Regexp) bool { return !anchoredEnd(s) })
	}
	return false
}

// unboundedRepeat reports whether re repeats anything without an upper
// bound.
func unboundedRepeat(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpStar, syntax.OpPlus:
		return true
	case syntax.OpRepeat:
		if re.Max < 0 {
			return true
		}
	}
	return slices.ContainsFunc(re.Sub, unboundedRepeat)
}

// nameList shows member names in a message, at most five.
func nameList(names []string) string {
	q := make([]string, 0, len(names))
	for i, n := range names {
		if i == 5 {
			q = append(q, fmt.Sprintf("and %d more", len(names)-5))
			break
		}
		q = append(q, fmt.Sprintf("%q", n))
	}
	return strings.Join(q, ", ")
}

// clip shortens a pattern for a message.
func clip(s string) string {
	if r := []rune(s); len(r) > 80 {
		return string(r[:77]) + "..."
	}
	return s
}
