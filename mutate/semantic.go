package mutate

import (
	"encoding/json"
	"maps"
	"math/big"
	"slices"
	"strings"

	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/semantic"
)

// Family semantic: a value tied to the request (the echoed request id, a
// project or change the request named) is swapped for another
// valid-looking one, so only a binding, context or membership rule can
// refuse it.

// boundField is a field the semantic family swaps: its JSON Pointer, the
// reason that should refuse the swap and the hint that adds it.
type boundField struct{ ptr, rule, hint string }

// semanticMutants swaps each bound field: first those the rules bind, in
// rule order, then every other scalar in walk order that equals (JSON
// equality, semantic.EqualJSON) the request id or a request context value
// (echoed, so it should be bound; a number or boolean only in a member
// named as the context key). A string swaps by tweak (or for
// another value of its enum), a number by swapNumber, a boolean for its
// negation; the swap depends only on the value, so the same inputs give
// the same mutants and canaries.
func (m *mutator) semanticMutants(locs locations) {
	for _, t := range m.boundFields(locs) {
		p, err := jsonpointer.Parse(t.ptr)
		if err != nil {
			continue
		}
		v, ok := p.Lookup(m.value)
		if !ok {
			continue
		}
		var swapped any
		canary := ""
		switch x := v.(type) {
		case string:
			sw := tweak(x)
			// An enum-bound value swaps for another allowed value (the
			// first in sorted order).
			for _, e := range m.facts(p).enums {
				if e != x {
					sw = e
					break
				}
			}
			if sw == x {
				continue
			}
			swapped, canary = sw, canaryIfLong(sw)
		case json.Number:
			n, ok := swapNumber(x)
			if !ok {
				continue
			}
			swapped, canary = n, canaryIfLong(string(n))
		case bool:
			swapped = !x
		default:
			continue
		}
		m.valueMutant(FamilySemantic, "bound_value_swapped", p, swapped, []string{"semantic.*"}, t.rule, canary, t.hint)
	}
}

// swapNumber returns another number that looks as valid as n: an integer
// (no fraction or exponent) plus one, exactly (math/big: any length the
// parse stage admitted); a decimal with its last digit changed by tweak
// ("2.5" → "2.6", "2.9" → "2.0"). false when n's text has no digit to
// change.
func swapNumber(n json.Number) (json.Number, bool) {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		if i, ok := new(big.Int).SetString(s, 10); ok {
			return json.Number(i.Add(i, big.NewInt(1)).String()), true
		}
	}
	t := tweak(s)
	return json.Number(t), t != s
}

// boundFields lists the fields semanticMutants swaps, in its order: a
// string, number or boolean equal (semantic.EqualJSON: numbers by value) to a
// request context value, or a string equal to the request id. A value
// equal to several request context values is bound to the first key in
// sorted order.
func (m *mutator) boundFields(locs locations) []boundField {
	covered := map[string]bool{}
	var out []boundField
	for _, r := range m.rules {
		if r.Bound {
			covered[r.Pointer] = true
			out = append(out, boundField{r.Pointer, "semantic." + r.Name, "a binding, context or membership rule on " + r.Pointer})
		}
	}
	keys := slices.Sorted(maps.Keys(m.request.Context))
	for l := range locs {
		if len(l.loc) == len(m.scope) {
			continue
		}
		switch l.v.(type) {
		case string, json.Number, bool:
		default:
			continue
		}
		// The pointer only for a value the request names: it costs O(depth).
		key := ""
		if s, ok := l.v.(string); !ok || s != m.request.ID {
			_, isString := l.v.(string)
			for _, k := range keys {
				// A number or boolean equal to a context value is bound
				// only where the member is named as the key: 1 and false
				// are too common to say the response echoes the request
				// (a page number equal to a project id is a coincidence).
				if semantic.EqualJSON(m.request.Context[k], l.v) && (isString || l.loc[len(l.loc)-1] == k) {
					key = k
					break
				}
			}
			if key == "" {
				continue
			}
		}
		ptr := jsonpointer.Pointer(l.loc).String()
		switch {
		case covered[ptr]:
		case key == "":
			out = append(out, boundField{ptr, "semantic.request_binding", "a binding rule: binding: {pointer: " + ptr + "}"})
		default:
			out = append(out, boundField{ptr, "semantic." + key + "_match", "a context rule: context: {pointer: " + ptr + ", key: " + key + "}"})
		}
	}
	return out
}

// tweak changes the last letter or digit of s to the next one, keeping its
// class, so the result still looks valid: "CR-1042" → "CR-1043".
func tweak(s string) string {
	b := []byte(s)
	for i := len(b) - 1; i >= 0; i-- {
		switch c := b[i]; {
		case c >= '0' && c <= '9':
			b[i] = '0' + (c-'0'+1)%10
			return string(b)
		case c >= 'a' && c <= 'z':
			b[i] = 'a' + (c-'a'+1)%26
			return string(b)
		case c >= 'A' && c <= 'Z':
			b[i] = 'A' + (c-'A'+1)%26
			return string(b)
		}
	}
	return s
}
