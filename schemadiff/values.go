package schemadiff

import (
	"strings"

	"github.com/airlockdev/airlock/internal/schemawalk"
	"github.com/airlockdev/airlock/reports"
)

// The value family: enum and const (merged: the values every applicable
// schema allows).

var (
	enumValueAdded = Rule{ID: RuleEnumValueAdded, Level: reports.Breaking,
		Description: "An enum gained a value (or a const became an enum that includes it): the consumer may see a value it does not know."}
	enumValueRemoved = Rule{ID: RuleEnumValueRemoved, Level: reports.Compatible,
		Description: "An enum lost a value: the producer sends a subset of what it used to."}
	enumRemoved = Rule{ID: RuleEnumRemoved, Level: reports.Breaking,
		Description: "An enum or const was dropped: any value of the allowed types may now arrive."}
	enumAdded = Rule{ID: RuleEnumAdded, Level: reports.Compatible,
		Description: "An enum or const now restricts a value that used to be free."}
	constChanged = Rule{ID: RuleConstChanged, Level: reports.Breaking,
		Description: "A const value changed: the one value the consumer expected is no longer sent."}
)

// compareValues classifies a change of the allowed values: values added
// (each reported, in the new order), then values removed (in the old order).
func compareValues(o, n *View, e *Emitter) {
	op, np := orPtr(o.valuesPtr, o.ptr), orPtr(n.valuesPtr, n.ptr)
	switch {
	case !o.hasValues && !n.hasValues:
	case !n.hasValues:
		e.Emit(enumRemoved, op, np, "no longer restricted to %s", valuesText(o.values))
	case !o.hasValues:
		e.Emit(enumAdded, op, np, "now restricted to %s", valuesText(n.values))
	case o.constOnly && n.constOnly && len(o.values) == 1 && len(n.values) == 1:
		if a, b := schemawalk.Canonical(o.values[0]), schemawalk.Canonical(n.values[0]); a != b {
			e.Emit(constChanged, op, np, "const changed from %s to %s", schemawalk.ValueText(o.values[0]), schemawalk.ValueText(n.values[0]))
		}
	default:
		oldSet, newSet := valueSet(o.values), valueSet(n.values)
		for _, x := range n.values {
			if !oldSet[schemawalk.Canonical(x)] {
				e.Emit(enumValueAdded, op, np, "value %s was added to the allowed values", schemawalk.ValueText(x))
			}
		}
		for _, x := range o.values {
			if !newSet[schemawalk.Canonical(x)] {
				e.Emit(enumValueRemoved, op, np, "value %s is no longer allowed", schemawalk.ValueText(x))
			}
		}
	}
}

// valueSet is the set of the values' canonical texts.
func valueSet(vals []any) map[string]bool {
	out := map[string]bool{}
	for _, x := range vals {
		out[schemawalk.Canonical(x)] = true
	}
	return out
}

// valuesText lists values for a message, the first eight then "…".
func valuesText(vals []any) string {
	parts := make([]string, 0, len(vals))
	for i, x := range vals {
		if i == 8 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, schemawalk.ValueText(x))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
