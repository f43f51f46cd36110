package mutate

import (
	"encoding/json"
	"math/big"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/semantic"
)

// Family values: one scalar changes while the shape stays. A string is
// emptied, made one code point longer than maxLength (or 1,024 longer),
// moved one edit off its enum, given an impossible or ten-year-old
// date-time; a number goes just past its range; any scalar becomes an
// object carrying an instruction. The schema stage refuses them when the
// contract bounds its values; stale date-times are the semantic stage's.

// valueMutants derives the values family at each location under the scope
// root, in walk order.
func (m *mutator) valueMutants(locs locations) {
	for l := range locs {
		if len(l.loc) == len(m.scope) {
			continue
		}
		m.at = l.loc
		switch x := l.v.(type) {
		case string:
			m.stringMutants(l, x)
		case json.Number:
			if !m.keeps() { // the schema's facts only for a kept mutant
				m.skip()
				m.scalarToObject(l, x)
				continue
			}
			out, keyword := outOfRange(m.facts(l.loc))
			reason, hint := "schema."+keyword, keyword
			if keyword == "" {
				reason, hint = "schema.maximum", "minimum and maximum"
			}
			// A bound near the binary64 limits gives a number the parse stage refuses.
			m.valueMutant(FamilyValues, "number_out_of_range", l.loc, out, []string{"schema.*", gate.ReasonNumber}, reason, canaryIfLong(string(out)), hint)
			m.scalarToObject(l, x)
		case bool:
			m.scalarToObject(l, x)
		}
	}
}

// stringMutants derives the values family of one string.
func (m *mutator) stringMutants(l location, x string) {
	f := m.facts(l.loc)
	m.valueMutant(FamilyValues, "empty_string", l.loc, "", []string{"schema.*", "semantic.*"}, "schema.minLength", "", "minLength: 1 or a pattern")
	// maxLength counts code points (JSON Schema Validation 2020-12 §6.3.1).
	c := m.canary()
	m.at = l.loc
	if m.keeps() { // the long string only for a kept mutant: maxLength may be large
		target := utf8.RuneCountInString(x) + 1024
		if f.maxLength >= 0 {
			target = f.maxLength + 1
		}
		long := x + " " + c
		if n := utf8.RuneCountInString(long); n < target {
			long += strings.Repeat("x", target-n)
		}
		// A projected string's text policy max_length refuses it too.
		m.valueMutant(FamilyValues, "overlong_string", l.loc, long, []string{"schema.*", "semantic.*", gate.ReasonStringTooLong, gate.ReasonTooLarge, gate.ReasonTextPolicy}, "schema.maxLength", c, "maxLength")
	} else {
		m.skip()
	}
	if slices.Contains(f.enums, x) {
		if near := nearValue(x, f.enums); near != "" {
			m.valueMutant(FamilyValues, "enum_near_value", l.loc, near, schemaReasons, "schema.enum", canaryIfLong(near), "enum")
		}
	}
	if t, err := semantic.ParseTimestamp(x); err == nil || f.dateTime {
		m.valueMutant(FamilyValues, "datetime_invalid", l.loc, "2025-02-30T25:61:00Z", []string{"schema.*", "semantic.*"}, "schema.format", "", "format: date-time (asserted)")
		if err == nil {
			stale := t.AddDate(-10, 0, 0).UTC().Format(time.RFC3339)
			m.valueMutant(FamilyValues, "datetime_stale", l.loc, stale, []string{"semantic.*"}, "semantic.freshness", "", "a freshness rule (freshness: max_age)")
		}
	}
	m.scalarToObject(l, x)
}

// scalarToObject wraps a scalar in an object that carries an instruction.
func (m *mutator) scalarToObject(l location, x any) {
	c := m.canary()
	m.at = l.loc
	if !m.keeps() {
		m.skip()
		return
	}
	m.valueMutant(FamilyValues, "scalar_to_object", l.loc, map[string]any{"value": x, "message": instruction + c}, schemaReasons, "schema.type", c, "type")
}

// nearValue is a string one edit from s that is not in the enum.
func nearValue(s string, enum []string) string {
	for _, cand := range []string{caseFolded(s), s + "_", strings.TrimSuffix(s, s[len(s)-1:]), s + "s"} {
		if cand != "" && cand != s && !slices.Contains(enum, cand) {
			return cand
		}
	}
	return ""
}

// outOfRange returns the nearest number outside the range the facts give
// and the keyword that refuses it: the upper end when there is one (the
// bound itself for exclusiveMaximum, one more for maximum), else the lower
// end likewise; without either, 1e300 and "".
func outOfRange(f facts) (json.Number, string) {
	switch {
	case f.upper != nil:
		return past(f.upper, 1), f.upper.keyword
	case f.lower != nil:
		return past(f.lower, -1), f.lower.keyword
	}
	return "1e300", ""
}

// past is the nearest number outside b in direction dir (1 up, -1 down),
// written as a decimal, never a fraction: 10.25 + 1 is 11.25, not 45/4.
func past(b *bound, dir int64) json.Number {
	r := new(big.Rat).Set(b.value)
	if !b.exclusive {
		r.Add(r, big.NewRat(dir, 1))
	}
	if r.IsInt() {
		return json.Number(r.Num().String())
	}
	return json.Number(strings.TrimRight(strings.TrimRight(r.FloatString(40), "0"), "."))
}
