package mutate

import (
	"math/big"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/schemawalk"
)

// facts are what a contract's upstream schema says about one instance
// location, gathered from every subschema that applies there
// (schemawalk.At: properties, patternProperties, additionalProperties,
// items, prefixItems, $ref, $dynamicRef, allOf, anyOf, oneOf, then/else).
// The mutation engine uses them to aim mutants (an enum's near value, a
// string just past maxLength, a number just past maximum) and to know a
// oneOf's discriminator; they never decide a verdict.
//
// Every field is independent of the order the subschemas come in: lists
// are sorted sets, bounds are chosen by value.
type facts struct {
	enums     []string // string values of enum keywords, sorted, each once
	consts    []string // string values of const keywords (one per branch), sorted, each once
	maxLength int      // smallest maxLength, in code points; -1 when none
	upper     *bound   // see loosest
	lower     *bound
	dateTime  bool // format: date-time
}

// bound is a number range's end as one subschema states it: maximum or
// exclusiveMaximum (minimum or exclusiveMinimum for a lower bound).
type bound struct {
	value     *big.Rat
	exclusive bool
	keyword   string
}

// noFacts is what is known about a location no schema speaks of.
var noFacts = facts{maxLength: -1}

// factsAt gathers the facts for the instance at loc inside value, which
// root validates.
func factsAt(root *jsonschema.Schema, value any, loc []string) facts {
	f := noFacts
	for _, s := range schemawalk.At(root, value, loc) {
		if s.Enum != nil {
			for _, e := range s.Enum.Values {
				if str, ok := e.(string); ok {
					f.enums = append(f.enums, str)
				}
			}
		}
		if s.Const != nil {
			if str, ok := (*s.Const).(string); ok {
				f.consts = append(f.consts, str)
			}
		}
		if s.MaxLength != nil && (f.maxLength < 0 || *s.MaxLength < f.maxLength) {
			f.maxLength = *s.MaxLength
		}
		up := tighter(s.Maximum, "maximum", s.ExclusiveMaximum, "exclusiveMaximum", 1)
		f.upper = loosest(f.upper, up, 1)
		low := tighter(s.Minimum, "minimum", s.ExclusiveMinimum, "exclusiveMinimum", -1)
		f.lower = loosest(f.lower, low, -1)
		if s.Format != nil && s.Format.Name == "date-time" {
			f.dateTime = true
		}
	}
	f.enums, f.consts = uniq(f.enums), uniq(f.consts)
	return f
}

// tighter is the end one subschema puts on a range, from its inclusive and
// exclusive keywords (both must hold, so the nearer one counts); dir is 1
// for an upper bound, -1 for a lower one. At equal values the exclusive
// keyword is the tighter.
func tighter(incl *big.Rat, inclKw string, excl *big.Rat, exclKw string, dir int) *bound {
	switch {
	case incl == nil && excl == nil:
		return nil
	case excl == nil:
		return &bound{incl, false, inclKw}
	case incl == nil || dir*excl.Cmp(incl) <= 0:
		return &bound{excl, true, exclKw}
	}
	return &bound{incl, false, inclKw}
}

// loosest is the farther of two ends of a range (dir as for tighter), so
// that a value past it is outside every subschema's range; at equal values
// the inclusive end is the looser. Nil means no end.
func loosest(a, b *bound, dir int) *bound {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	if c := dir * a.value.Cmp(b.value); c > 0 || c == 0 && (!a.exclusive || b.exclusive) {
		return a
	}
	return b
}

// uniq is s sorted, each value once.
func uniq(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}
