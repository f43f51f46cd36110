package schemadiff

import (
	"github.com/airlockdev/airlock/internal/schemawalk"
	"github.com/airlockdev/airlock/reports"
)

// The type family: which JSON types a value may have (type, narrowed by
// enum/const; the false schema allows none).

var (
	typeChanged = Rule{ID: RuleTypeChanged, Level: reports.Breaking,
		Description: "The JSON types allowed changed so that neither side contains the other (e.g. string to object)."}
	typeWidened = Rule{ID: RuleTypeWidened, Level: reports.Breaking,
		Description: "More JSON types are allowed than before (a type was added, integer became number, or type was dropped): values of a type the consumer never saw may arrive."}
	typeNarrowed = Rule{ID: RuleTypeNarrowed, Level: reports.Compatible,
		Description: "Fewer JSON types are allowed than before (a type was removed, number became integer, or type was added)."}
	becameNullable = Rule{ID: RuleBecameNullable, Level: reports.Breaking,
		Description: "null was added to the allowed types: a value the consumer always got may now be null."}
)

// compareTypes classifies a change of the allowed types. When either side
// allows nothing (false), or the two sides share no type, nothing else at
// the location can be compared and the location is done.
func compareTypes(o, n *View, e *Emitter) {
	switch {
	case o.never && n.never:
		e.Done()
		return
	case o.never:
		e.Emit(typeWidened, o.neverPtr, n.ptr, "the old schema allowed nothing here (false); the new one admits %s", n.allowed)
		e.Done()
		return
	case n.never:
		e.Emit(typeNarrowed, o.ptr, n.neverPtr, "the new schema allows nothing here (false)")
		e.Done()
		return
	}
	if !o.typed && !n.typed {
		return
	}
	ot, nt := o.allowed, n.allowed
	op, np := orPtr(o.typesPtr, o.ptr), orPtr(n.typesPtr, n.ptr)
	added, lost := nt&^ot, ot&^nt
	switch {
	case ot == nt:
	case added == 0:
		e.Emit(typeNarrowed, op, np, "type narrowed from %s to %s", ot, nt)
	case lost == 0 && added == schemawalk.Null:
		e.Emit(becameNullable, op, np, "may now be null (type %s became %s)", ot, nt)
	case lost == 0:
		e.Emit(typeWidened, op, np, "type widened from %s to %s", ot, nt)
	default:
		e.Emit(typeChanged, op, np, "type changed from %s to %s", ot, nt)
		if ot&nt == 0 {
			e.Done()
		}
	}
}

// common is the set of types both views allow.
func common(o, n *View) schemawalk.Types { return o.allowed & n.allowed }
