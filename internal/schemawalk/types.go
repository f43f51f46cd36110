// Package schemawalk holds what airlock's schema walkers share: sets of
// JSON Schema types, the type of a decoded value, canonical value text, and
// the walk over compiled schemas that schemadiff, drift and mutate use.
package schemawalk

import (
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strings"
)

// Types is a set of JSON Schema types; number implies integer.
type Types uint8

// The JSON Schema types, one bit each.
const (
	Null Types = 1 << iota
	Boolean
	Object
	Array
	Number
	Integer
	String
	AllTypes = Null | Boolean | Object | Array | Number | Integer | String
)

// typeNames spells each type as JSON Schema does (Validation 2020-12 §6.1.1).
var typeNames = []struct {
	m    Types
	name string
}{{Null, "null"}, {Boolean, "boolean"}, {Object, "object"}, {Array, "array"}, {Number, "number"}, {Integer, "integer"}, {String, "string"}}

// TypesOf is the set named by a "type" keyword's names.
func TypesOf(names []string) Types {
	var m Types
	for _, n := range names {
		for _, t := range typeNames {
			if t.name == n {
				m |= t.m
			}
		}
	}
	if m&Number != 0 {
		m |= Integer
	}
	return m
}

// TypeOfValue is the type of one decoded JSON value (map[string]any,
// []any, string, json.Number, bool, nil): Integer for an integral number,
// Number|Integer for any other.
func TypeOfValue(x any) Types {
	switch x := x.(type) {
	case nil:
		return Null
	case bool:
		return Boolean
	case map[string]any:
		return Object
	case []any:
		return Array
	case string:
		return String
	case json.Number:
		if r, ok := new(big.Rat).SetString(string(x)); ok && r.IsInt() {
			return Integer
		}
		return Number | Integer
	case float64, int, int64:
		if r, ok := new(big.Rat).SetString(fmt.Sprint(x)); ok && r.IsInt() {
			return Integer
		}
		return Number | Integer
	}
	return 0
}

// String lists the types for a message ("string, null"); "any type" and
// "no type" for the full and empty sets.
func (m Types) String() string {
	if m == AllTypes {
		return "any type"
	}
	if m == 0 {
		return "no type"
	}
	var out []string
	for _, t := range typeNames {
		if m&t.m == 0 || t.m == Integer && m&Number != 0 {
			continue
		}
		out = append(out, t.name)
	}
	return strings.Join(out, ", ")
}

// Canonical is a value's JSON text with sorted keys, for comparing values.
func Canonical(x any) string {
	b, err := json.Marshal(x)
	if err != nil {
		return fmt.Sprintf("%v", x)
	}
	return string(b)
}

// ValueText shows a value in a message, capped.
func ValueText(x any) string {
	s := Canonical(x)
	if r := []rune(s); len(r) > 64 {
		s = string(r[:61]) + "..."
	}
	return s
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
