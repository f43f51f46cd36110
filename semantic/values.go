package semantic

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
)

// Equal reports whether two JSON values are the same value of the same JSON
// type: two strings with the same bytes, two booleans, two nulls, or two
// numbers with the same exact decimal value (json.Number "42", "42.0" and
// "4.2e1" are equal; no float64 rounding: "9007199254740993" differs from
// "9007199254740992"). A Go integer (int, int8 … uint64) or a finite
// float32/float64 counts as a number, so a context built in Go may hold 42
// instead of json.Number("42"). A string never equals a number ("42" ≠ 42),
// and arrays, objects and any other Go type are equal to nothing.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	}
	ca, ok := canonicalNumber(a)
	if !ok {
		return false
	}
	cb, ok := canonicalNumber(b)
	return ok && ca == cb
}

// EqualJSON is JSON equality of two decoded values (JSON Schema Core
// 2020-12 §4.2.2, the sense of const and enum): scalars as Equal compares
// them (numbers by exact value, never expanding an exponent), arrays
// element by element in order, objects by the same member names with
// equal values, whatever their order.
func EqualJSON(a, b any) bool {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !EqualJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !EqualJSON(v, w) {
				return false
			}
		}
		return true
	}
	return Equal(a, b)
}

// NumberText returns the JSON text of a number value: a json.Number as it
// is written, a Go integer in decimal, a finite float in the shortest
// decimal that reads back as the same float. It reports false for anything
// else (strings included) and for a json.Number that is not valid JSON
// number syntax.
func NumberText(v any) (string, bool) {
	switch x := v.(type) {
	case json.Number:
		if _, ok := canonicalText(string(x)); !ok {
			return "", false
		}
		return string(x), true
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return "", false
		}
		return strconv.FormatFloat(x, 'g', -1, 64), true
	case float32:
		return NumberText(float64(x))
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(rv.Uint(), 10), true
	}
	return "", false
}

// canonicalNumber is the canonical decimal text of a number value (see
// canonicalText).
func canonicalNumber(v any) (string, bool) {
	s, ok := NumberText(v)
	if !ok {
		return "", false
	}
	return canonicalText(s)
}

// canonicalText parses a number as RFC 8259 §6 spells it (a leading "+"
// and "E+" exponents are accepted too, for Go's float formatting) and
// returns one spelling per exact value: sign, significant digits without
// leading or trailing zeros, "e" and the exponent of the last digit
// ("-25e-1" for -2.50, "0" for any zero). The exponent is computed with
// big.Int, so "1e99999999999999999999" is compared exactly and cheaply.
func canonicalText(s string) (string, bool) {
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, hasFrac := strings.Cut(mant, ".")
	if intPart == "" || hasFrac && frac == "" || !allDigits(intPart) || !allDigits(frac) {
		return "", false
	}
	e := new(big.Int)
	if hasExp {
		if _, ok := e.SetString(strings.TrimPrefix(exp, "+"), 10); !ok || strings.HasPrefix(exp, "+-") || strings.HasPrefix(exp, "-+") {
			return "", false
		}
	}
	d := strings.TrimLeft(intPart+frac, "0")
	e.Sub(e, big.NewInt(int64(len(frac))))
	if d == "" {
		return "0", true
	}
	trimmed := strings.TrimRight(d, "0")
	e.Add(e, big.NewInt(int64(len(d)-len(trimmed))))
	sign := ""
	if neg {
		sign = "-"
	}
	return fmt.Sprintf("%s%se%s", sign, trimmed, e.String()), true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// NormalizeContext rewrites the values of a request context decoded from
// YAML into JSON values in place: an integer (yaml.v3 gives int, int64 or
// uint64) or a finite float becomes a json.Number of its decimal text;
// strings, booleans, nulls and json.Numbers stay. It returns an error naming
// the first key (in no particular order) whose value is not a JSON scalar
// (a list, a mapping, a timestamp, NaN). A nil map stays nil.
func NormalizeContext(ctx map[string]any) error {
	for k, v := range ctx {
		switch v.(type) {
		case string, bool, nil, json.Number:
			continue
		}
		s, ok := NumberText(v)
		if !ok {
			return fmt.Errorf("context value %q: a %T is not a JSON string, number, boolean or null", k, v)
		}
		ctx[k] = json.Number(s)
	}
	return nil
}

// describe names a JSON value's type and, for a scalar, its value, for a
// violation message: `the string "42"`, `the number 42`, `null`.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", clip(x))
	case bool:
		return fmt.Sprintf("the boolean %t", x)
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	if s, ok := NumberText(v); ok {
		return "the number " + clip(s)
	}
	return fmt.Sprintf("a %T", v)
}
