package schemawalk

import (
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// At returns the subschemas of root that apply to the instance at loc
// inside value (reference tokens of an RFC 6901 pointer, unescaped): root's
// Applicable set, then at each token Member for an object or Element for an
// array, each step made Applicable again. A token that names no member or
// element of value, or that steps into a scalar, gives nil.
//
// The result is the same, in the same order, on every call: each step's
// Member or Element set is sorted by schema location before it is
// expanded, because Member ranges over the patternProperties map.
func At(root *jsonschema.Schema, value any, loc []string) []*jsonschema.Schema {
	var cur []*jsonschema.Schema
	if !Along(root, value, loc, Applicable, func(set []*jsonschema.Schema) { cur = set }) {
		return nil
	}
	return cur
}

// Along walks loc inside value (reference tokens, unescaped) from root,
// one token at a time, and calls visit with the subschemas that apply at
// each depth, from loc[:0] to loc: expand of root, then at each token
// expand of the Member (object) or Element (array) subschemas of the set
// before, sorted by schema location so that the order never depends on a
// map's. It returns false when loc leaves value (a member or element that
// is not there, or a step into a scalar); visit has then seen the sets up
// to where it stopped. O(len(loc)) steps of expand.
func Along(root *jsonschema.Schema, value any, loc []string, expand func([]*jsonschema.Schema) []*jsonschema.Schema, visit func([]*jsonschema.Schema)) bool {
	cur := expand([]*jsonschema.Schema{root})
	visit(cur)
	for _, tok := range loc {
		var next []*jsonschema.Schema
		switch v := value.(type) {
		case map[string]any:
			el, ok := v[tok]
			if !ok {
				return false
			}
			next, _ = Member(cur, tok)
			value = el
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) || strconv.Itoa(i) != tok {
				return false
			}
			next = Element(cur, i)
			value = v[i]
		default:
			return false
		}
		slices.SortStableFunc(next, func(a, b *jsonschema.Schema) int { return strings.Compare(a.Location, b.Location) })
		cur = expand(next)
		visit(cur)
	}
	return true
}
