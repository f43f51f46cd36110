package schemadiff

import (
	"math/big"

	"github.com/airlockdev/airlock/internal/schemawalk"
	"github.com/airlockdev/airlock/reports"
)

// The bound families: string lengths, numeric ranges (with multipleOf) and
// object member counts. Item counts are in arrays.go, with the elements.

var (
	lengthLoosened = Rule{ID: RuleLengthLoosened, Level: reports.Breaking,
		Description: "A string may be longer (maxLength raised or dropped) or shorter (minLength lowered or dropped) than before."}
	lengthTightened = Rule{ID: RuleLengthTightened, Level: reports.Compatible,
		Description: "String length bounds were tightened or added (maxLength lowered, minLength raised)."}
	rangeLoosened = Rule{ID: RuleRangeLoosened, Level: reports.Breaking,
		Description: "A number may fall outside the old range: maximum or exclusiveMaximum raised or dropped, minimum or exclusiveMinimum lowered or dropped, an exclusive bound made inclusive, or multipleOf dropped or changed to a value that is not a multiple of the old one."}
	rangeTightened = Rule{ID: RuleRangeTightened, Level: reports.Compatible,
		Description: "A numeric range was tightened or added (maximum lowered, minimum raised, a bound made exclusive, multipleOf added or made a multiple of the old one)."}
	membersLoosened = Rule{ID: RuleMembersLoosened, Level: reports.Breaking,
		Description: "An object may have more or fewer members than before (maxProperties raised or dropped, minProperties lowered or dropped)."}
	membersTightened = Rule{ID: RuleMembersTightened, Level: reports.Compatible,
		Description: "Object member-count bounds were tightened or added (maxProperties lowered, minProperties raised)."}
)

// compareLengths compares minLength, then maxLength, where both sides
// allow strings.
func compareLengths(o, n *View, e *Emitter) {
	if common(o, n)&schemawalk.String == 0 {
		return
	}
	compareBound(o.minLength, n.minLength, false, lengthLoosened, lengthTightened, o, n, e)
	compareBound(o.maxLength, n.maxLength, true, lengthLoosened, lengthTightened, o, n, e)
}

// compareRanges compares the lower bound, the upper bound and multipleOf,
// where both sides allow numbers.
func compareRanges(o, n *View, e *Emitter) {
	if common(o, n)&(schemawalk.Number|schemawalk.Integer) == 0 {
		return
	}
	compareBound(o.minimum, n.minimum, false, rangeLoosened, rangeTightened, o, n, e)
	compareBound(o.maximum, n.maximum, true, rangeLoosened, rangeTightened, o, n, e)
	om, nm := o.multipleOf, n.multipleOf
	switch {
	case om == nil && nm == nil:
	case om == nil:
		e.Emit(rangeTightened, o.ptr, nm.ptr, "%s added", nm)
	case nm == nil:
		e.Emit(rangeLoosened, om.ptr, n.ptr, "%s dropped", om)
	case om.val.Cmp(nm.val) != 0:
		rule := rangeLoosened
		if new(big.Rat).Quo(nm.val, om.val).IsInt() {
			rule = rangeTightened
		}
		e.Emit(rule, om.ptr, nm.ptr, "%s became %s", om, nm)
	}
}

// compareMembers compares minProperties, then maxProperties, where both
// sides allow objects.
func compareMembers(o, n *View, e *Emitter) {
	if common(o, n)&schemawalk.Object == 0 {
		return
	}
	compareBound(o.minProps, n.minProps, false, membersLoosened, membersTightened, o, n, e)
	compareBound(o.maxProps, n.maxProps, true, membersLoosened, membersTightened, o, n, e)
}

// compareBound classifies a change of one bound (ob, nb; nil when absent)
// as loosened or tightened; upper tells which way is looser. An equal
// value made exclusive tightens, made inclusive loosens.
func compareBound(ob, nb *bound, upper bool, loosened, tightened Rule, o, n *View, e *Emitter) {
	if ob == nil && nb == nil {
		return
	}
	op, np := o.ptr, n.ptr
	if ob != nil {
		op = ob.ptr
	}
	if nb != nil {
		np = nb.ptr
	}
	switch {
	case ob == nil:
		e.Emit(tightened, op, np, "%s added", nb)
		return
	case nb == nil:
		e.Emit(loosened, op, np, "%s dropped", ob)
		return
	}
	c := nb.val.Cmp(ob.val)
	if !upper {
		c = -c
	}
	var looser bool
	switch {
	case c > 0:
		looser = true
	case c < 0:
		looser = false
	case ob.excl == nb.excl:
		return
	default:
		looser = ob.excl && !nb.excl
	}
	rule := tightened
	if looser {
		rule = loosened
	}
	e.Emit(rule, op, np, "%s became %s", ob, nb)
}
