package schemadiff

import (
	"fmt"
	"maps"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"unsafe"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/schemawalk"
	"github.com/airlockdev/airlock/jsonpointer"
)

// member is one schema that applies at an instance location, with its
// keyword location from the root (through $ref, like keywordLocation).
type member struct {
	s   *jsonschema.Schema // nil: the empty schema
	ptr string
	// flat: its oneOf/anyOf were already distributed into alternatives.
	flat bool
}

// located is a keyword's value (as text) and where it is.
type located struct {
	text string
	ptr  string
}

// bound is one numeric bound: the keyword, its value, exclusive or not.
type bound struct {
	kw   string
	val  *big.Rat
	excl bool
	ptr  string
}

func (b *bound) String() string {
	if b == nil {
		return "none"
	}
	return b.kw + " " + b.val.RatString()
}

// group is one oneOf or anyOf: its keyword ("oneOf", "anyOf"), its
// keyword location from the root (ptr) and in its file (loc: the compiled
// schema's Location with the keyword appended), and its branches.
type group struct {
	keyword  string
	ptr      string
	loc      string
	branches []member
}

// Closure of an object, from open to closed.
const (
	objOpen        = 0 // unknown members allowed, any value
	objConstrained = 1 // unknown members allowed if they satisfy a schema
	objClosed      = 2 // unknown members refused
)

// View is everything the schemas that apply at one instance location say
// about it, merged: the members given to the walk and every schema their
// $ref, $dynamicRef and allOf reach (schemawalk.Merge). Bounds keep the
// tightest value, type and enum/const the intersection; oneOf and anyOf are
// kept as groups for the alternatives handler to distribute. A View is
// built by the walk and read by the handlers of this package; it is not
// changed after it is built.
type View struct {
	members  []member // what the view was built from
	ptr      string   // keyword location of the first member
	never    bool     // a false schema applies: no value is allowed
	neverPtr string

	typed    bool
	types    schemawalk.Types // what the type keywords allow
	typesPtr string
	allowed  schemawalk.Types // types, narrowed by enum/const

	hasValues bool
	constOnly bool
	values    []any
	valuesPtr string

	minLength, maxLength *bound
	minimum, maximum     *bound
	multipleOf           *bound
	minItems, maxItems   *bound
	minProps, maxProps   *bound
	unique               bool
	uniquePtr            string
	patterns, formats    []located

	props      map[string][]member
	propsPtr   string
	required   map[string]string
	reqPtr     string
	closure    int
	closurePtr string
	additional []member

	items    []member
	itemsPtr string
	prefix   [][]member

	groups  []group
	refs    []located
	entered []*jsonschema.Schema
	other   map[string]located

	// err is set when a member reaches a $dynamicRef the diff does not
	// resolve (checkDynamicRef).
	err error
}

// build merges members into one view, following $ref, $dynamicRef and
// allOf; oneOf and anyOf are kept as groups (unless a member is flat).
func build(side *Schema, ms []member) *View {
	v := &View{types: schemawalk.AllTypes, props: map[string][]member{}, required: map[string]string{}, other: map[string]located{}}
	for _, m := range ms {
		if v.ptr == "" {
			v.ptr = m.ptr
		}
		leave := func(st schemawalk.Step) {
			if !m.flat && st.Schema.Bool == nil {
				v.addGroups(st.Schema, st.Ptr)
			}
		}
		schemawalk.Merge(m.s, m.ptr, maxDiffDepth, func(st schemawalk.Step) { v.visit(side, st, m.flat) }, leave)
	}
	v.allowed = v.effTypes()
	return v
}

// visit adds one schema reached by schemawalk.Merge.
func (v *View) visit(side *Schema, st schemawalk.Step, flat bool) {
	s := st.Schema
	switch st.Via {
	case "$ref":
		if !flat {
			v.refs = append(v.refs, located{side.relative(s.Location), st.Ptr})
		}
		v.entered = append(v.entered, s)
	case "$dynamicRef":
		v.entered = append(v.entered, s)
	}
	if st.Cut {
		return
	}
	if s.Bool == nil && s.DynamicRef != nil && v.err == nil {
		v.err = side.checkDynamicRef(s)
	}
	defer func() {
		if v.err == nil && side.fps != nil && side.fps.err != nil {
			v.err = side.fps.err
		}
	}()
	if s.Bool != nil {
		if !*s.Bool && !v.never {
			v.never, v.neverPtr = true, st.Ptr
		}
		return
	}
	kw := func(k string) string { return st.Ptr + "/" + k }
	if s.Types != nil && !s.Types.IsEmpty() {
		v.types &= schemawalk.TypesOf(s.Types.ToStrings())
		if !v.typed {
			v.typed, v.typesPtr = true, kw("type")
		}
	}
	if s.Enum != nil {
		v.addValues(s.Enum.Values, kw("enum"), false)
	}
	if s.Const != nil {
		v.addValues([]any{*s.Const}, kw("const"), true)
	}
	v.addBounds(s, kw)
	if s.Pattern != nil {
		v.patterns = append(v.patterns, located{s.Pattern.String(), kw("pattern")})
	}
	if f, ok := side.keyword(s.Location, "format"); ok {
		if name, ok := f.(string); ok {
			v.formats = append(v.formats, located{name, kw("format")})
		}
	}
	v.addObject(s, kw)
	prefix, rest := schemawalk.ElementSchemas(s, st.Ptr)
	if rest != nil {
		v.addItems(member{s: rest.Schema, ptr: rest.Ptr})
	}
	for i, p := range prefix {
		v.addPrefix(i, member{s: p.Schema, ptr: p.Ptr})
	}
	for k, fp := range side.otherKeywords(s) {
		o := v.other[k]
		if o.ptr == "" {
			o.ptr = kw(k)
		}
		o.text += fp + ";"
		v.other[k] = o
	}
}

// addBounds merges the numeric keywords of s: length, range, multipleOf,
// item and member counts, uniqueItems.
func (v *View) addBounds(s *jsonschema.Schema, kw func(string) string) {
	intBound := func(p *int, k string) *bound {
		if p == nil {
			return nil
		}
		return &bound{kw: k, val: new(big.Rat).SetInt64(int64(*p)), ptr: kw(k)}
	}
	ratBound := func(r *big.Rat, k string, excl bool) *bound {
		if r == nil {
			return nil
		}
		return &bound{kw: k, val: r, excl: excl, ptr: kw(k)}
	}
	mergeLower(&v.minLength, intBound(s.MinLength, "minLength"))
	mergeUpper(&v.maxLength, intBound(s.MaxLength, "maxLength"))
	mergeLower(&v.minItems, intBound(s.MinItems, "minItems"))
	mergeUpper(&v.maxItems, intBound(s.MaxItems, "maxItems"))
	mergeLower(&v.minProps, intBound(s.MinProperties, "minProperties"))
	mergeUpper(&v.maxProps, intBound(s.MaxProperties, "maxProperties"))
	mergeLower(&v.minimum, ratBound(s.Minimum, "minimum", false))
	mergeLower(&v.minimum, ratBound(s.ExclusiveMinimum, "exclusiveMinimum", true))
	mergeUpper(&v.maximum, ratBound(s.Maximum, "maximum", false))
	mergeUpper(&v.maximum, ratBound(s.ExclusiveMaximum, "exclusiveMaximum", true))
	if s.MultipleOf != nil && v.multipleOf == nil {
		v.multipleOf = ratBound(s.MultipleOf, "multipleOf", false)
	}
	if s.UniqueItems && !v.unique {
		v.unique, v.uniquePtr = true, kw("uniqueItems")
	}
}

// addObject merges properties, required, additionalProperties and
// unevaluatedProperties of s.
func (v *View) addObject(s *jsonschema.Schema, kw func(string) string) {
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		if v.propsPtr == "" {
			v.propsPtr = kw("properties")
		}
		v.props[name] = append(v.props[name], member{s: s.Properties[name], ptr: kw("properties") + "/" + jsonpointer.EscapeToken(name)})
	}
	for i, name := range s.Required {
		if v.reqPtr == "" {
			v.reqPtr = kw("required")
		}
		if v.required[name] == "" {
			v.required[name] = kw("required") + "/" + strconv.Itoa(i)
		}
	}
	closure := func(x any, k string) {
		switch x := x.(type) {
		case bool:
			if !x {
				v.close(objClosed, kw(k))
			}
		case *jsonschema.Schema:
			switch {
			case x == nil:
			case x.Bool != nil && !*x.Bool:
				v.close(objClosed, kw(k))
			case x.Bool != nil:
			default:
				v.close(objConstrained, kw(k))
				v.additional = append(v.additional, member{s: x, ptr: kw(k)})
			}
		}
	}
	closure(s.AdditionalProperties, "additionalProperties")
	if s.UnevaluatedProperties != nil {
		closure(s.UnevaluatedProperties, "unevaluatedProperties")
	}
}

// addGroups keeps the oneOf and anyOf of s, at ptr, as groups of
// alternatives; build adds them after the schemas s's $ref and allOf reach.
func (v *View) addGroups(s *jsonschema.Schema, ptr string) {
	kw := func(k string) string { return ptr + "/" + k }
	for _, g := range []struct {
		k  string
		ss []*jsonschema.Schema
	}{{"oneOf", s.OneOf}, {"anyOf", s.AnyOf}} {
		if len(g.ss) == 0 {
			continue
		}
		gr := group{keyword: g.k, ptr: kw(g.k), loc: s.Location + "/" + g.k}
		for i, b := range g.ss {
			gr.branches = append(gr.branches, member{s: b, ptr: kw(g.k) + "/" + strconv.Itoa(i)})
		}
		v.groups = append(v.groups, gr)
	}
}

func (v *View) addValues(vals []any, ptr string, isConst bool) {
	if !v.hasValues {
		v.hasValues, v.values, v.valuesPtr, v.constOnly = true, slices.Clone(vals), ptr, isConst
		return
	}
	keep := map[string]bool{}
	for _, x := range vals {
		keep[schemawalk.Canonical(x)] = true
	}
	v.values = slices.DeleteFunc(v.values, func(x any) bool { return !keep[schemawalk.Canonical(x)] })
	v.constOnly = v.constOnly && isConst
}

func (v *View) close(level int, ptr string) {
	if level > v.closure {
		v.closure, v.closurePtr = level, ptr
	}
}

func (v *View) addItems(m member) {
	if v.itemsPtr == "" {
		v.itemsPtr = m.ptr
	}
	v.items = append(v.items, m)
}

func (v *View) addPrefix(i int, m member) {
	for len(v.prefix) <= i {
		v.prefix = append(v.prefix, nil)
	}
	v.prefix[i] = append(v.prefix[i], m)
}

// mergeLower keeps the tighter lower bound.
func mergeLower(cur **bound, b *bound) {
	if b == nil {
		return
	}
	if *cur == nil {
		*cur = b
		return
	}
	if c := b.val.Cmp((*cur).val); c > 0 || c == 0 && b.excl && !(*cur).excl {
		*cur = b
	}
}

// mergeUpper keeps the tighter upper bound.
func mergeUpper(cur **bound, b *bound) {
	if b == nil {
		return
	}
	if *cur == nil {
		*cur = b
		return
	}
	if c := b.val.Cmp((*cur).val); c < 0 || c == 0 && b.excl && !(*cur).excl {
		*cur = b
	}
}

// effTypes is the set of types a value may have: the type keywords',
// narrowed by enum/const.
func (v *View) effTypes() schemawalk.Types {
	m := v.types
	if v.hasValues {
		var vm schemawalk.Types
		for _, x := range v.values {
			vm |= schemawalk.TypeOfValue(x)
		}
		m &= vm
	}
	return m
}

// orPtr is p, or fallback when p is empty.
func orPtr(p, fallback string) string {
	if p != "" {
		return p
	}
	return fallback
}

// checkDynamicRef refuses a $dynamicRef of s that the diff would resolve
// wrongly. The walk follows a $dynamicRef to its initial target, as a
// $ref, and memoises pairs by schema, not by the dynamic scope that
// reached them; that is right when the target's $dynamicAnchor is the
// only one of its name in the documents compared (the dynamic scope can
// then find no other, Core 2020-12 §8.2.3.2) and may miss a change
// otherwise. Such a $dynamicRef is a *gate.ConfigError naming its file and
// JSON Pointer.
func (f *Schema) checkDynamicRef(s *jsonschema.Schema) error {
	d := s.DynamicRef
	if d.Ref == nil || d.Anchor == "" || d.Ref.DynamicAnchor != d.Anchor {
		return nil // not dynamic: a plain reference
	}
	n := f.dynamicAnchors()[d.Anchor]
	if n <= 1 {
		return nil
	}
	ce := &gate.ConfigError{File: f.path, Key: f.relative(s.Location) + "/$dynamicRef"}
	if pos, ok := f.dir.Locate(s.Location, "$dynamicRef"); ok {
		ce.File, ce.Key = pos.File, pos.Pointer
	}
	ce.Msg = fmt.Sprintf("$dynamicRef %q: %d schemas declare $dynamicAnchor %q in the documents compared; the diff resolves a $dynamicRef only when its anchor has one target (it does not follow the dynamic scope), so it cannot compare this schema", "#"+d.Anchor, n, d.Anchor)
	return ce
}

// dynamicAnchors counts the $dynamicAnchor keywords of each name in the
// documents the schema's $refs reach (every object once, though the
// loader holds a document under its URL and under each $id; counted the
// first time it is asked).
func (f *Schema) dynamicAnchors() map[string]int {
	if f.anchors != nil {
		return f.anchors
	}
	f.anchors = map[string]int{}
	seen := map[unsafe.Pointer]bool{}
	stack := make([]any, 0, len(f.docs))
	for _, d := range f.docs {
		stack = append(stack, d)
	}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch x := x.(type) {
		case map[string]any:
			id := reflect.ValueOf(x).UnsafePointer()
			if seen[id] {
				continue
			}
			seen[id] = true
			if a, ok := x["$dynamicAnchor"].(string); ok {
				f.anchors[a]++
			}
			for _, y := range x {
				stack = append(stack, y)
			}
		case []any:
			stack = append(stack, x...)
		}
	}
	return f.anchors
}
