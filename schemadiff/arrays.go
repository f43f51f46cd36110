package schemadiff

import (
	"strconv"

	"github.com/airlockdev/airlock/internal/schemawalk"
	"github.com/airlockdev/airlock/reports"
)

// The array family: item counts and uniqueItems, then the element schemas
// (prefixItems by position, items for the rest), compared one level down.

var (
	itemsLoosened = Rule{ID: RuleItemsLoosened, Level: reports.Breaking,
		Description: "An array may have more or fewer items than before (maxItems raised or dropped, minItems lowered or dropped) or repeated items (uniqueItems dropped)."}
	itemsTightened = Rule{ID: RuleItemsTightened, Level: reports.Compatible,
		Description: "Array item bounds were tightened or added (maxItems lowered, minItems raised, uniqueItems added)."}
)

// compareArrays compares minItems, maxItems and uniqueItems, then each
// prefix position ("/0", "/1", …) and the remaining elements ("/*"), where
// both sides allow arrays.
func compareArrays(o, n *View, e *Emitter) {
	if common(o, n)&schemawalk.Array == 0 {
		return
	}
	compareBound(o.minItems, n.minItems, false, itemsLoosened, itemsTightened, o, n, e)
	compareBound(o.maxItems, n.maxItems, true, itemsLoosened, itemsTightened, o, n, e)
	switch {
	case o.unique && !n.unique:
		e.Emit(itemsLoosened, o.uniquePtr, n.ptr, "uniqueItems dropped: items may repeat")
	case !o.unique && n.unique:
		e.Emit(itemsTightened, o.ptr, n.uniquePtr, "uniqueItems added")
	}
	for i := range max(len(o.prefix), len(n.prefix)) {
		om, nm := itemsOf(o), itemsOf(n)
		if i < len(o.prefix) {
			om = o.prefix[i]
		}
		if i < len(n.prefix) {
			nm = n.prefix[i]
		}
		e.descend(e.Instance()+"/"+strconv.Itoa(i), om, nm)
	}
	if len(o.items) > 0 || len(n.items) > 0 {
		e.descend(e.Instance()+"/*", itemsOf(o), itemsOf(n))
	}
}

// itemsOf is what applies to elements past the prefix: the items schemas,
// or the empty schema at the array's own location.
func itemsOf(v *View) []member {
	if len(v.items) > 0 {
		return v.items
	}
	return []member{{ptr: v.ptr}}
}
