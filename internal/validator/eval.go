package validator

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/jsonpointer"
)

// run is one validation: the instance location being visited, whether
// failures are recorded, and what was recorded.
type run struct {
	// t is the tape the walk reads; names is the one-node tape a member
	// name is put on for propertyNames.
	t     *strictjson.Tape
	names strictjson.Tape
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
	// tried holds the verdicts, per value, of the nodes marked memo (see
	// markMemo): a node two in-place paths lead to, and a branch that
	// unevaluatedProperties/Items asks about again, is walked once per
	// value and validation, however many times it is asked.
	tried map[tryKey]bool
}

type tryKey struct {
	n *node
	i int32
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

// push, pushIndex and pop keep the instance location while recording:
// only a recorded failure reads it, and a walk that does not record never
// turns recording on below it (try turns it off and back), so each pop
// meets the push made in the same state.
func (r *run) push(name string) {
	if r.rec {
		r.path = append(r.path, step{name: name, index: -1})
	}
}

func (r *run) pushIndex(i int) {
	if r.rec {
		r.path = append(r.path, step{index: i})
	}
}

func (r *run) pop() {
	if r.rec {
		r.path = r.path[:len(r.path)-1]
	}
}

// element validates the value at j, element k of the array being
// visited, against n.
func (r *run) element(n *node, j int32, k int) bool {
	r.pushIndex(k)
	ok := r.validate(n, j)
	r.pop()
	return ok
}

// member validates the value at j, a member of the object being visited,
// against n.
func (r *run) member(n *node, j int32) bool {
	r.push(r.t.Name(j))
	ok := r.validate(n, j)
	r.pop()
	return ok
}

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

// kindBits are the type bits of each tape kind (a number's integer bit
// is added when its decimal has no fraction).
var kindBits = [...]uint8{
	strictjson.KindNull:   tNull,
	strictjson.KindFalse:  tBool,
	strictjson.KindTrue:   tBool,
	strictjson.KindNumber: tNumber,
	strictjson.KindString: tString,
	strictjson.KindArray:  tArray,
	strictjson.KindObject: tObject,
}

// typeAt returns the type bits of the value at i (integers are numbers
// too) and, for a number, its exact decimal.
func (r *run) typeAt(i int32) (uint8, dec, bool) {
	nd := &r.t.Nodes[i]
	if nd.Kind != strictjson.KindNumber {
		return kindBits[nd.Kind], dec{}, true
	}
	d, ok := parseDec(r.t.Text(i))
	if !ok {
		return 0, dec{}, false
	}
	if d.isInt() {
		return tNumber | tInteger, d, true
	}
	return tNumber, d, true
}

// value builds the Go value at i, for a message.
func (r *run) value(i int32) any { return r.t.Value(i) }

// validate reports whether the value at i is valid against n. The order
// is fixed, so that the first failure recorded is always the same one:
// the node's own keywords (type, const, enum, format, then those of the
// instance's type), then the subschemas applied to the same instance
// ($ref, allOf, anyOf, oneOf, not, if/then/else, dependentSchemas), then
// members (in code point order of their names) or items (in index
// order), then unevaluatedProperties/unevaluatedItems.
func (r *run) validate(n *node, i int32) bool {
	if !n.memo || r.rec {
		return r.walk(n, i)
	}
	// A node the schema can ask about one value more than once (see
	// markMemo): its verdict is kept for the validation.
	k := tryKey{n, i}
	if ok, done := r.tried[k]; done {
		return ok
	}
	ok := r.walk(n, i)
	if r.tried == nil {
		r.tried = map[tryKey]bool{}
	}
	r.tried[k] = ok
	return ok
}

// walk is validate without the kept verdicts.
func (r *run) walk(n *node, i int32) bool {
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
	nd := &r.t.Nodes[i]
	t := kindBits[nd.Kind]
	var d dec
	if nd.Kind == strictjson.KindNumber && (n.hasNumber || n.types&(tInteger|tNumber) == tInteger) {
		var ok bool
		if t, d, ok = r.typeAt(i); !ok {
			return r.failAt(n.loc, "invalid", &kind.InvalidJsonValue{Value: r.t.Text(i)})
		}
	}
	if n.types != 0 && t&n.types == 0 {
		return r.fail(n, "type", &kind.Type{Got: typeName(t), Want: n.typeNames})
	}
	if n.constV != nil && !equalAt(r.t, i, *n.constV) {
		return r.fail(n, "const", &kind.Const{Got: r.value(i), Want: *n.constV})
	}
	if n.enum != nil && !inListAt(r.t, i, n.enum) {
		return r.fail(n, "enum", &kind.Enum{Got: r.value(i), Want: n.enum})
	}
	if n.format != nil && nd.Kind == strictjson.KindString {
		// Formats apply to strings only (JSON Schema Validation 2020-12
		// §7.1); every checker the compiler registers passes the rest.
		var err error
		switch {
		case !n.strKnown:
			err = n.format.Validate(r.t.Text(i))
		case n.strCheck != nil:
			err = n.strCheck(r.t.Text(i))
		}
		if err != nil {
			return r.fail(n, "format", &kind.Format{Got: r.t.Text(i), Want: n.format.Name, Err: err})
		}
	}
	valid := true
	switch t {
	case tObject:
		if n.hasObject && !r.objectOwn(n, i) {
			if !r.more() {
				return false
			}
			valid = false
		}
	case tArray:
		if n.hasArray && !r.arrayOwn(n, i) {
			if !r.more() {
				return false
			}
			valid = false
		}
	case tString:
		if n.hasString && !r.stringOwn(n, r.t.Text(i)) {
			return false
		}
	default:
		if t&tNumber != 0 && n.hasNumber && !r.numberOwn(n, &d) {
			return false
		}
	}
	if !r.applicators(n, i) {
		if !r.more() {
			return false
		}
		valid = false
	}
	switch t {
	case tObject:
		if n.hasObject && !r.members(n, i) {
			if !r.more() {
				return false
			}
			valid = false
		}
		if valid && n.unevalProps != nil && !r.unevaluatedProps(n, i) {
			return false
		}
	case tArray:
		if n.hasArray && !r.itemsOf(n, i) {
			if !r.more() {
				return false
			}
			valid = false
		}
		if valid && n.unevalItems != nil && !r.unevaluatedItems(n, i) {
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

// arrayOwn checks an array's own keywords: minItems, maxItems,
// uniqueItems, contains with minContains/maxContains.
func (r *run) arrayOwn(n *node, i int32) bool {
	nd := &r.t.Nodes[i]
	size := int(nd.Len)
	if n.minItems >= 0 && size < n.minItems {
		return r.fail(n, "minItems", &kind.MinItems{Got: size, Want: n.minItems})
	}
	if n.maxItems >= 0 && size > n.maxItems {
		return r.fail(n, "maxItems", &kind.MaxItems{Got: size, Want: n.maxItems})
	}
	if n.unique && size > 1 {
		if a, b := duplicatesAt(r.t, i); a >= 0 {
			return r.fail(n, "uniqueItems", &kind.UniqueItems{Duplicates: [2]int{a, b}})
		}
	}
	if n.contains != nil {
		saved := r.rec
		r.rec = false
		var matched []int
		count, k := 0, 0
		for j := i + 1; j < nd.End; j, k = r.t.Nodes[j].End, k+1 {
			r.pushIndex(k)
			if r.try(n.contains, j) {
				count++
				if saved {
					matched = append(matched, k)
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
func (r *run) applicators(n *node, i int32) bool {
	valid := true
	if n.ref != nil && !r.validate(n.ref, i) {
		if !r.more() {
			return false
		}
		valid = false
	}
	for _, a := range n.allOf {
		if !r.validate(a, i) {
			if !r.more() {
				return false
			}
			valid = false
		}
	}
	if n.anyOf != nil && !r.anyOf(n, i) {
		if !r.more() {
			return false
		}
		valid = false
	}
	if n.oneOf != nil && !r.oneOf(n, i) {
		if !r.more() {
			return false
		}
		valid = false
	}
	if n.not != nil && r.try(n.not, i) {
		return r.fail(n, "not", &kind.Not{})
	}
	if n.ifN != nil {
		next := n.elseN
		if r.try(n.ifN, i) {
			next = n.thenN
		}
		if next != nil && !r.validate(next, i) {
			if !r.more() {
				return false
			}
			valid = false
		}
	}
	if len(n.depSchemas) > 0 && r.t.Nodes[i].Kind == strictjson.KindObject {
		for _, ds := range n.depSchemas {
			if r.present(i, ds.name) && !r.validate(ds.n, i) {
				if !r.more() {
					return false
				}
				valid = false
			}
		}
	}
	return valid
}

// try validates for the verdict only, recording nothing.
func (r *run) try(n *node, i int32) bool {
	saved := r.rec
	r.rec = false
	ok := r.validate(n, i)
	r.rec = saved
	return ok
}

func (r *run) anyOf(n *node, i int32) bool {
	for _, b := range n.anyOf {
		if r.try(b, i) {
			return true
		}
	}
	if r.rec {
		r.validate(r.choose(n.anyOf, i), i)
	}
	return false
}

func (r *run) oneOf(n *node, i int32) bool {
	match := -1
	for k, b := range n.oneOf {
		if r.try(b, i) {
			if match >= 0 {
				return r.fail(n, "oneOf", &kind.OneOf{Subschemas: []int{match, k}})
			}
			match = k
		}
	}
	if match >= 0 {
		return true
	}
	if r.rec {
		r.validate(r.choose(n.oneOf, i), i)
	}
	return false
}

// choose picks the branch of a failed oneOf/anyOf whose failure is
// reported: the first branch whose type admits the value and whose
// discriminating members (a const or enum under properties, see
// discriminators) the value matches, with at least one such member
// present; else the first whose type admits the value (integer and number
// alike) and whose discriminators do not contradict it; else the first
// whose type admits it; else the first.
func (r *run) choose(branches []*node, i int32) *node {
	t := kindBits[r.t.Nodes[i].Kind]
	if t&tNumber != 0 {
		t |= tInteger // a fraction is still the number an integer branch meant
	}
	isObject := r.t.Nodes[i].Kind == strictjson.KindObject
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
			if !isObject {
				break
			}
			j, ok := r.t.Member(i, d.name)
			if !ok {
				continue
			}
			if (d.n.constV != nil && !equalAt(r.t, j, *d.n.constV)) || (d.n.enum != nil && !inListAt(r.t, j, d.n.enum)) {
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

// typeAdmits reports whether a branch's type keyword (or its $ref
// target's, a few levels deep) admits an instance of type bits t.
func typeAdmits(b *node, t uint8) bool {
	for k := 0; b != nil && k < 8; k++ {
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

// itemsOf validates prefixItems and items, in index order.
func (r *run) itemsOf(n *node, i int32) bool {
	valid := true
	end := r.t.Nodes[i].End
	for j, k := i+1, 0; j < end; j, k = r.t.Nodes[j].End, k+1 {
		var s *node
		switch {
		case k < len(n.prefix):
			s = n.prefix[k]
		case n.items != nil:
			s = n.items
		default:
			return valid
		}
		if !r.element(s, j, k) {
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

// sortByName sorts member indexes in code point order of their names.
func sortByName(t *strictjson.Tape, idx []int32) {
	slices.SortFunc(idx, func(a, b int32) int { return strings.Compare(t.Name(a), t.Name(b)) })
}
