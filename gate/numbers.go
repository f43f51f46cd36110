package gate

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/airlockdev/airlock/jsonpointer"
)

// maxExactInteger is 2^53-1, the largest integer I-JSON says a receiver can
// be expected to treat exactly (RFC 7493 §2.2: [-(2^53)+1, (2^53)-1]); its
// decimal digits.
const maxExactInteger = "9007199254740991"

// inexactInteger reports whether the number token n (JSON syntax, RFC 8259
// §6, as the parse stage keeps it) is an integer outside I-JSON's exact
// range: its magnitude is 2^53 or more, so a consumer that reads numbers as
// IEEE 754 doubles (JavaScript, many JSON libraries) cannot be relied on to
// keep it. The value, not the spelling, decides: 1e16 and 9007199254740992.0
// are such integers; 1.5, 0.1 and 12345678901234567.5 are not integers and
// never reported. It works on the digits alone (no big arithmetic): the
// parse stage caps a token at limits.max_number_length bytes and its
// exponent at ±1000.
func inexactInteger(n json.Number) bool {
	s := strings.TrimPrefix(string(n), "-")
	mantissa, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil {
			return false // not the parse stage's number
		}
		mantissa, exp = s[:i], e
	}
	whole, frac, _ := strings.Cut(mantissa, ".")
	digits := strings.TrimLeft(whole+frac, "0")
	exp -= len(frac)
	trimmed := strings.TrimRight(digits, "0")
	exp += len(digits) - len(trimmed)
	digits = trimmed
	// The value is digits × 10^exp, with digits free of leading and
	// trailing zeros.
	if digits == "" || exp < 0 {
		return false // zero, or not an integer
	}
	switch width := len(digits) + exp; {
	case width != len(maxExactInteger):
		return width > len(maxExactInteger)
	default:
		return digits+strings.Repeat("0", exp) > maxExactInteger
	}
}

// inexactNumbers returns a number.inexact warning for each integer outside
// I-JSON's exact range (inexactInteger) that reaches the agent: every number
// at or below a projected location of v whose agent field is in data. A
// number elsewhere in the body reaches no one and is not reported. The
// warning's location is the number's in v (the value the schema judged), in
// projection field order, then document order (members by name, elements by
// index); one per location, at most max.
func inexactNumbers(fields []projField, data map[string]any, max int) []Warning {
	var out []Warning
	var seen map[string]bool // made at the first warning
	var scan func(x any, loc jsonpointer.Pointer, field string) bool
	scan = func(x any, loc jsonpointer.Pointer, field string) bool {
		switch x := x.(type) {
		case json.Number:
			if !inexactInteger(x) {
				return true
			}
			at := loc.String()
			if seen[at] {
				return true
			}
			if seen == nil {
				seen = map[string]bool{}
			}
			if len(out) == max {
				return false
			}
			seen[at] = true
			out = append(out, Warning{Code: WarningInexactNumber, InstanceLocation: at, Message: fmt.Sprintf(
				"the integer %s, copied to the agent's %s, is outside I-JSON's exact range [-(2^53)+1, 2^53-1] (RFC 7493 §2.2): a consumer that reads numbers as IEEE 754 doubles will round it",
				x, field)})
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				if !scan(x[k], append(loc, k), field) {
					return false
				}
			}
		case []any:
			for i, el := range x {
				if !scan(el, append(loc, index(i)), field) {
					return false
				}
			}
		}
		return true
	}
	var loc jsonpointer.Pointer // one stack for every field's walk
	for _, f := range fields {
		if _, ok := data[f.field]; !ok {
			continue
		}
		field := "data/" + jsonpointer.EscapeToken(f.field)
		if loc == nil {
			loc = make(jsonpointer.Pointer, 0, 16)
		}
		if !walkProjected(f.pointer, data[f.field], loc[:0], func(x any, at jsonpointer.Pointer) bool { return scan(x, at, field) }) {
			break
		}
	}
	return out
}
