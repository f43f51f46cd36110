package validator

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/airlockdev/airlock/jsonpointer"
)

// run is one validation: the instance location being visited, whether
// failures are recorded, and what was recorded.
type run struct {
	// rec is true while failures are recorded; it is off inside the
	// branches of anyOf, oneOf, not, if and contains, which are tried
	// for their verdict only (a failing combinator is walked again, with
	// rec on, along the one branch it reports).
	rec bool
	// limit is the most distinct failing instance locations recorded; past
	// the first failure, the walk goes on only while fewer are recorded.
	limit int
	path  []step
	first *cause
	locs  []string
	// steps counts subschema applications; past budget (when > 0) the
	// walk stops and exhausted is set, whatever the verdict looked like.
	steps, budget int
	exhausted     bool
}

// step is one token of the instance location: a member name, or an index
// when name is "" and index ≥ 0.
type step struct {
	name  string
	index int
}

// cause is a recorded failure.
type cause struct {
	keyword, keywordLocation, instanceLocation string
	kind                                       jsonschema.ErrorKind
	member, format                             string
	missing                                    []string
}

func (r *run) push(name string) { r.path = append(r.path, step{name: name, index: -1}) }
func (r *run) pushIndex(i int)  { r.path = append(r.path, step{index: i}) }
func (r *run) pop()             { r.path = r.path[:len(r.path)-1] }

// location is the RFC 6901 pointer of the instance being visited.
func (r *run) location() string {
	var b strings.Builder
	for _, s := range r.path {
		b.WriteByte('/')
		if s.index >= 0 && s.name == "" {
			b.WriteString(strconv.Itoa(s.index))
		} else {
			b.WriteString(jsonpointer.EscapeToken(s.name))
		}
	}
	return b.String()
}

// more reports whether the walk goes on past a failure.
func (r *run) more() bool { return r.rec && len(r.locs) < r.limit }

// fail records a failure of keyword (whose location is n.loc + "/" +
// keyword, or loc when given) at the current instance location, when rec.
// It returns false, the verdict of the keyword.
func (r *run) fail(n *node, keyword string, k jsonschema.ErrorKind) bool {
	if !r.rec {
		return false
	}
	return r.failAt(n.loc+"/"+keyword, keyword, k)
}

func (r *run) failAt(keywordLocation, keyword string, k jsonschema.ErrorKind) bool {
	if !r.rec {
		return false
	}
	loc := r.location()
	if r.first == nil {
		r.first = &cause{keyword: keyword, keywordLocation: keywordLocation, instanceLocation: loc, kind: k}
		switch k := k.(type) {
		case *kind.AdditionalProperties:
			r.first.member = k.Properties[0]
		case *kind.Format:
			r.first.format = k.Want
		case *kind.Required:
			r.first.missing = k.Missing
		}
	}
	for _, l := range r.locs {
		if l == loc {
			return false
		}
	}
	r.locs = append(r.locs, loc)
	return false
}

// typeOf returns the instance's type bits (integers are numbers too) and,
// for a number, its exact decimal.
func typeOf(v any) (uint8, dec, bool) {
	switch v.(type) {
	case nil:
		return tNull, dec{}, true
	case bool:
		return tBool, dec{}, true
	case string:
		return tString, dec{}, true
	case []any:
		return tArray, dec{}, true
	case map[string]any:
		return tObject, dec{}, true
	}
	return numberType(v)
}

// numberType is typeOf for a number.
func numberType(v any) (uint8, dec, bool) {
	s, ok := numberText(v)
	if !ok {
		return 0, dec{}, false
	}
	d, ok := parseDec(s)
	if !ok {
		return 0, dec{}, false
	}
	if d.isInt() {
		return tNumber | tInteger, d, true
	}
	return tNumber, d, true
}

// validate reports whether v is valid against n. The order is fixed, so
// that the first failure recorded is always the same one: the node's own
// keywords (type, const, enum, format, then those of the instance's
// type), then the subschemas applied to the same instance ($ref, allOf,
// anyOf, oneOf, not, if/then/else, dependentSchemas), then members (in
// code point order of their names) or items (in index order), then
// unevaluatedProperties/unevaluatedItems.
func (r *run) validate(n *node, v any) bool {
	r.steps++
	if r.budget > 0 && r.steps > r.budget {
		r.exhausted = true
		return false
	}
	switch n.boolean {
	case 1:
		return true
	case -1:
		return r.failAt(n.loc, n.falseKey, &kind.FalseSchema{})
	}
	var t uint8
	var d dec
	switch v.(type) {
	case string:
		t = tString
	case map[string]any:
		t = tObject
	case []any:
		t = tArray
	case nil:
		t = tNull
	case bool:
		t = tBool
	default:
		var ok bool
		if t, d, ok = numberType(v); !ok {
			return r.failAt(n.loc, "invalid", &kind.InvalidJsonValue{Value: v})
		}
	}
	if n.types != 0 && t&n.types == 0 {
		return r.fail(n, "type", &kind.Type{Got: typeName(t), Want: n.typeNames})
	}
	if n.constV != nil && !equal(v, *n.constV) {
		return r.fail(n, "const", &kind.Const{Got: v, Want: *n.constV})
	}
	if n.enum != nil && !r.inEnum(n, v) {
		return r.fail(n, "enum", &kind.Enum{Got: v, Want: n.enum})
	}
	if n.format != nil {
		if err := n.format.Validate(v); err != nil {
			return r.fail(n, "format", &kind.Format{Got: v, Want: n.format.Name, Err: err})
		}
	}
	valid := true
	switch t {
	case tObject:
		if n.hasObject && !r.objectOwn(n, v.(map[string]any)) {
			if !r.more() {
				return false
			}
			valid = false
		}
	case tArray:
		if n.hasArray && !r.arrayOwn(n, v.([]any)) {
			if !r.more() {
				return false
			}
			valid = false
		}
	case tString:
		if n.hasString && !r.stringOwn(n, v.(string)) {
			return false
		}
	default:
		if t&tNumber != 0 && n.hasNumber && !r.numberOwn(n, &d) {
			return false
		}
	}
	if !r.applicators(n, v) {
		if !r.more() {
			return false
		}
		valid = false
	}
	switch t {
	case tObject:
		if n.hasObject && !r.members(n, v.(map[string]any)) {
			if !r.more() {
				return false
			}
			valid = false
		}
		if valid && n.unevalProps != nil && !r.unevaluatedProps(n, v.(map[string]any)) {
			return false
		}
	case tArray:
		if n.hasArray && !r.itemsOf(n, v.([]any)) {
			if !r.more() {
				return false
			}
			valid = false
		}
		if valid && n.unevalItems != nil && !r.unevaluatedItems(n, v.([]any)) {
			return false
		}
	}
	return valid
}

func typeName(t uint8) string {
	switch {
	case t&tNull != 0:
		return "null"
	case t&tBool != 0:
		return "boolean"
	case t&tNumber != 0:
		return "number"
	case t&tString != 0:
		return "string"
	case t&tArray != 0:
		return "array"
	}
	return "object"
}

func (r *run) inEnum(n *node, v any) bool {
	for _, e := range n.enum {
		if equal(v, e) {
			return true
		}
	}
	return false
}

// objectOwn checks an object's own keywords: minProperties,
// maxProperties, required, dependentRequired, additionalProperties: false
// (the names it refuses), propertyNames.
func (r *run) objectOwn(n *node, obj map[string]any) bool {
	if n.minProps >= 0 && len(obj) < n.minProps {
		return r.fail(n, "minProperties", &kind.MinProperties{Got: len(obj), Want: n.minProps})
	}
	if n.maxProps >= 0 && len(obj) > n.maxProps {
		return r.fail(n, "maxProperties", &kind.MaxProperties{Got: len(obj), Want: n.maxProps})
	}
	if r.rec || !n.reqInProps {
		// Not recording, members counts them in its pass when it can.
		for _, name := range n.required {
			if _, ok := obj[name]; !ok {
				return r.fail(n, "required", &kind.Required{Missing: missing(obj, n.required)})
			}
		}
	}
	for _, dr := range n.depRequired {
		if _, ok := obj[dr.name]; !ok {
			continue
		}
		if m := missing(obj, dr.list); m != nil {
			return r.failAt(n.loc+"/dependentRequired/"+jsonpointer.EscapeToken(dr.name), "dependentRequired",
				&kind.DependentRequired{Prop: dr.name, Missing: m})
		}
	}
	if n.additional != nil && n.additional.boolean == -1 && r.rec {
		// Not recording, members judges this in its one pass.
		var extra []string
		for name := range obj {
			if !n.declares(name) {
				extra = append(extra, name)
			}
		}
		if extra != nil {
			sortStrings(extra)
			return r.fail(n, "additionalProperties", &kind.AdditionalProperties{Properties: extra})
		}
	}
	if n.propNames != nil {
		bad, found := "", false
		saved := r.rec
		r.rec = false
		for name := range obj {
			if (!found || name < bad) && !r.validate(n.propNames, name) {
				if !saved {
					r.rec = saved
					return false
				}
				bad, found = name, true
			}
		}
		r.rec = saved
		if found {
			return r.failAt(n.propNames.loc+"/propertyNames", "propertyNames", &kind.PropertyNames{Property: bad})
		}
	}
	return true
}

// declares reports whether properties or patternProperties name a member.
func (n *node) declares(name string) bool {
	if _, ok := n.props[name]; ok {
		return true
	}
	for _, p := range n.patProps {
		if p.re.MatchString(name) {
			return true
		}
	}
	return false
}

func missing(obj map[string]any, names []string) []string {
	var out []string
	for _, name := range names {
		if _, ok := obj[name]; !ok {
			out = append(out, name)
		}
	}
	return out
}

// arrayOwn checks an array's own keywords: minItems, maxItems,
// uniqueItems, contains with minContains/maxContains.
func (r *run) arrayOwn(n *node, arr []any) bool {
	if n.minItems >= 0 && len(arr) < n.minItems {
		return r.fail(n, "minItems", &kind.MinItems{Got: len(arr), Want: n.minItems})
	}
	if n.maxItems >= 0 && len(arr) > n.maxItems {
		return r.fail(n, "maxItems", &kind.MaxItems{Got: len(arr), Want: n.maxItems})
	}
	if n.unique && len(arr) > 1 {
		if i, j := duplicates(arr); i >= 0 {
			return r.fail(n, "uniqueItems", &kind.UniqueItems{Duplicates: [2]int{i, j}})
		}
	}
	if n.contains != nil {
		saved := r.rec
		r.rec = false
		var matched []int
		count := 0
		for i, item := range arr {
			r.pushIndex(i)
			if r.validate(n.contains, item) {
				count++
				if saved {
					matched = append(matched, i)
				}
			}
			r.pop()
			if n.maxContains < 0 && count >= max(n.minContains, 1) && !saved {
				break // enough for the verdict
			}
		}
		r.rec = saved
		switch {
		case n.minContains >= 0 && count < n.minContains:
			return r.fail(n, "minContains", &kind.MinContains{Got: matched, Want: n.minContains})
		case n.minContains < 0 && count == 0:
			return r.failAt(n.contains.loc, "contains", &kind.Contains{})
		case n.maxContains >= 0 && count > n.maxContains:
			return r.fail(n, "maxContains", &kind.MaxContains{Got: matched, Want: n.maxContains})
		}
	}
	return true
}

// stringOwn checks minLength and maxLength (in code points, JSON Schema
// Validation 2020-12 §6.3.1) and pattern.
func (r *run) stringOwn(n *node, s string) bool {
	if n.minLen >= 0 || n.maxLen >= 0 {
		// A string of ≤ maxLen bytes has ≤ maxLen code points, and one of
		// < minLen bytes has < minLen: most strings need no count.
		count := -1
		if n.minLen >= 0 && (len(s) < n.minLen || n.minLen > 0) {
			count = utf8.RuneCountInString(s)
			if count < n.minLen {
				return r.fail(n, "minLength", &kind.MinLength{Got: count, Want: n.minLen})
			}
		}
		if n.maxLen >= 0 && len(s) > n.maxLen {
			if count < 0 {
				count = utf8.RuneCountInString(s)
			}
			if count > n.maxLen {
				return r.fail(n, "maxLength", &kind.MaxLength{Got: count, Want: n.maxLen})
			}
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		return r.fail(n, "pattern", &kind.Pattern{Got: s, Want: n.pattern.String()})
	}
	return true
}

// numberOwn checks the numeric bounds on the number's exact decimal.
func (r *run) numberOwn(n *node, d *dec) bool {
	if n.minimum != nil && cmpDec(d, &n.minimum.d) < 0 {
		return r.fail(n, "minimum", &kind.Minimum{Got: ratOf(d.s), Want: n.minimum.rat})
	}
	if n.maximum != nil && cmpDec(d, &n.maximum.d) > 0 {
		return r.fail(n, "maximum", &kind.Maximum{Got: ratOf(d.s), Want: n.maximum.rat})
	}
	if n.exMin != nil && cmpDec(d, &n.exMin.d) <= 0 {
		return r.fail(n, "exclusiveMinimum", &kind.ExclusiveMinimum{Got: ratOf(d.s), Want: n.exMin.rat})
	}
	if n.exMax != nil && cmpDec(d, &n.exMax.d) >= 0 {
		return r.fail(n, "exclusiveMaximum", &kind.ExclusiveMaximum{Got: ratOf(d.s), Want: n.exMax.rat})
	}
	if n.multipleOf != nil && !n.multipleOf.isMultiple(d) {
		return r.fail(n, "multipleOf", &kind.MultipleOf{Got: ratOf(d.s), Want: n.multipleOf.rat})
	}
	return true
}

// applicators checks the subschemas applied to the same instance.
func (r *run) applicators(n *node, v any) bool {
	valid := true
	if n.ref != nil && !r.validate(n.ref, v) {
		if !r.more() {
			return false
		}
		valid = false
	}
	for _, a := range n.allOf {
		if !r.validate(a, v) {
			if !r.more() {
				return false
			}
			valid = false
		}
	}
	if n.anyOf != nil && !r.anyOf(n, v) {
		if !r.more() {
			return false
		}
		valid = false
	}
	if n.oneOf != nil && !r.oneOf(n, v) {
		if !r.more() {
			return false
		}
		valid = false
	}
	if n.not != nil && r.try(n.not, v) {
		return r.fail(n, "not", &kind.Not{})
	}
	if n.ifN != nil {
		next := n.elseN
		if r.try(n.ifN, v) {
			next = n.thenN
		}
		if next != nil && !r.validate(next, v) {
			if !r.more() {
				return false
			}
			valid = false
		}
	}
	if len(n.depSchemas) > 0 {
		if obj, ok := v.(map[string]any); ok {
			for _, ds := range n.depSchemas {
				if _, present := obj[ds.name]; present && !r.validate(ds.n, v) {
					if !r.more() {
						return false
					}
					valid = false
				}
			}
		}
	}
	return valid
}

// try validates for the verdict only, recording nothing.
func (r *run) try(n *node, v any) bool {
	saved := r.rec
	r.rec = false
	ok := r.validate(n, v)
	r.rec = saved
	return ok
}

func (r *run) anyOf(n *node, v any) bool {
	for _, b := range n.anyOf {
		if r.try(b, v) {
			return true
		}
	}
	if r.rec {
		r.validate(choose(n.anyOf, v), v)
	}
	return false
}

func (r *run) oneOf(n *node, v any) bool {
	match := -1
	for i, b := range n.oneOf {
		if r.try(b, v) {
			if match >= 0 {
				return r.fail(n, "oneOf", &kind.OneOf{Subschemas: []int{match, i}})
			}
			match = i
		}
	}
	if match >= 0 {
		return true
	}
	if r.rec {
		r.validate(choose(n.oneOf, v), v)
	}
	return false
}

// choose picks the branch of a failed oneOf/anyOf whose failure is
// reported: the first branch whose type admits the value and whose
// discriminating members (a const or enum under properties, see
// discriminators) the value matches, with at least one such member
// present; else the first whose type admits the value (integer and number
// alike) and whose
// discriminators do not contradict it; else the first whose type admits
// it; else the first.
func choose(branches []*node, v any) *node {
	t, _, _ := typeOf(v)
	if t&tNumber != 0 {
		t |= tInteger // a fraction is still the number an integer branch meant
	}
	obj, _ := v.(map[string]any)
	var admits, consistent *node
	for _, b := range branches {
		if !typeAdmits(b, t) {
			continue
		}
		if admits == nil {
			admits = b
		}
		present, contradicts := 0, false
		for _, d := range b.discr {
			x, ok := obj[d.name]
			if !ok {
				continue
			}
			if (d.n.constV != nil && !equal(x, *d.n.constV)) || (d.n.enum != nil && !inList(d.n.enum, x)) {
				contradicts = true
				break
			}
			present++
		}
		if contradicts {
			continue
		}
		if present > 0 {
			return b
		}
		if consistent == nil {
			consistent = b
		}
	}
	switch {
	case consistent != nil:
		return consistent
	case admits != nil:
		return admits
	}
	return branches[0]
}

func inList(list []any, v any) bool {
	for _, e := range list {
		if equal(v, e) {
			return true
		}
	}
	return false
}

// typeAdmits reports whether a branch's type keyword (or its $ref
// target's, a few levels deep) admits an instance of type bits t.
func typeAdmits(b *node, t uint8) bool {
	for i := 0; b != nil && i < 8; i++ {
		if b.boolean == -1 {
			return false
		}
		if b.types != 0 {
			return t&b.types != 0
		}
		b = b.ref
	}
	return true
}

// members validates each member against properties, patternProperties
// and additionalProperties. Without recording, it goes in whatever order
// the map gives and stops at the first failure (additionalProperties:
// false included, which recording checks among the object's own
// keywords); recording, it goes in code point order of the names, so the
// cause is the same on every run.
func (r *run) members(n *node, obj map[string]any) bool {
	closed := n.additional != nil && n.additional.boolean == -1
	if n.props == nil && n.patProps == nil && (n.additional == nil || n.additional.boolean == 1) {
		return true // nothing applies to members
	}
	if !r.rec {
		found := 0
		for name, x := range obj {
			p, declared := n.props[name]
			if p.required {
				found++
			}
			r.push(name)
			ok := r.memberValue(n, name, x, p, declared, closed)
			r.pop()
			if !ok {
				return false
			}
		}
		return !n.reqInProps || found == len(n.required)
	}
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	sortStrings(names)
	valid := true
	for _, name := range names {
		if !r.member(n, name, obj[name], false) {
			if !r.more() {
				return false
			}
			valid = false
		}
	}
	return valid
}

// member validates one member's value; closed: a member that properties
// and patternProperties do not declare fails (additionalProperties: false
// judged here when not recording).
func (r *run) member(n *node, name string, x any, closed bool) bool {
	r.push(name)
	p, declared := n.props[name]
	ok := r.memberValue(n, name, x, p, declared, closed)
	r.pop()
	return ok
}

// memberValue is member once the name is looked up in properties (p,
// declared).
func (r *run) memberValue(n *node, name string, x any, p prop, declared, closed bool) bool {
	valid, evaluated := true, false
	if declared {
		evaluated = true
		if !r.validate(p.n, x) {
			if !r.more() {
				return false
			}
			valid = false
		}
	}
	for _, p := range n.patProps {
		if p.re.MatchString(name) {
			evaluated = true
			if !r.validate(p.n, x) {
				if !r.more() {
					return false
				}
				valid = false
			}
		}
	}
	if !evaluated && n.additional != nil {
		if closed {
			return false
		}
		if n.additional.boolean == 0 && !r.validate(n.additional, x) {
			return false
		}
	}
	return valid
}

// itemsOf validates prefixItems and items, in index order.
func (r *run) itemsOf(n *node, arr []any) bool {
	valid := true
	for i, x := range arr {
		var s *node
		switch {
		case i < len(n.prefix):
			s = n.prefix[i]
		case n.items != nil:
			s = n.items
		default:
			return valid
		}
		r.pushIndex(i)
		ok := r.validate(s, x)
		r.pop()
		if !ok {
			if !r.more() {
				return false
			}
			valid = false
		}
	}
	return valid
}

// sortStrings sorts names in code point order (byte order of UTF-8).
func sortStrings(s []string) { slices.Sort(s) }
