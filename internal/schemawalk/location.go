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
	cur := Applicable([]*jsonschema.Schema{root})
	for _, tok := range loc {
		var next []*jsonschema.Schema
		switch v := value.(type) {
		case map[string]any:
			el, ok := v[tok]
			if !ok {
				return nil
			}
			next, _ = Member(cur, tok)
			value = el
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) || strconv.Itoa(i) != tok {
				return nil
			}
			next = Element(cur, i)
			value = v[i]
		default:
			return nil
		}
		slices.SortStableFunc(next, func(a, b *jsonschema.Schema) int { return strings.Compare(a.Location, b.Location) })
		cur = Applicable(next)
	}
	return cur
}
