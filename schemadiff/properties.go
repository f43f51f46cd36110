package schemadiff

import (
	"maps"
	"slices"

	"github.com/airlockdev/airlock/internal/schemawalk"
	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/reports"
)

// The object families: properties (defined, required) and the closure of
// an object (additionalProperties, unevaluatedProperties). Whether a new or
// dropped property matters depends on the closure: a member of an open
// object could already arrive with any value.

var (
	propertyRemoved = Rule{ID: RulePropertyRemoved, Level: reports.Breaking,
		Description: "A property is no longer defined although the consumer could rely on it: it was required (responses may now omit the member) or its object is open (the member may now arrive with any value)."}
	optionalPropertyRemoved = Rule{ID: RuleOptionalPropertyRemoved, Level: reports.ContractChange,
		Description: "An optional property of a closed object is no longer defined: responses can no longer carry the member, so whatever read it (a projection, an agent field) now gets nothing."}
	propertyAdded = Rule{ID: RulePropertyAdded, Level: reports.ContractChange,
		Description: "A property was added to a closed object: responses may carry a member the old schema refused, so the shape the consumer sees changes. Never silent, even when the property is optional."}
	propertyAddedOpen = Rule{ID: RulePropertyAddedOpen, Level: reports.Compatible,
		Description: "A property was defined in an open object: a member that could already arrive with any value is now constrained."}
	becameOptional = Rule{ID: RuleBecameOptional, Level: reports.Breaking,
		Description: "A property is no longer required: responses may omit a member the consumer could count on."}
	becameRequired = Rule{ID: RuleBecameRequired, Level: reports.Compatible,
		Description: "A property became required: responses always carry a member that used to be optional."}
	objectOpened = Rule{ID: RuleObjectOpened, Level: reports.Breaking,
		Description: "additionalProperties or unevaluatedProperties no longer refuses unknown members (false became a schema, true or absent): members the consumer never saw may arrive."}
	objectClosed = Rule{ID: RuleObjectClosed, Level: reports.Compatible,
		Description: "additionalProperties or unevaluatedProperties now refuses or constrains unknown members."}
)

// compareProperties compares, in name order, each property defined on
// either side (one defined on both is compared one level down), then each
// property required on one side only, where both sides allow objects.
func compareProperties(o, n *View, e *Emitter) {
	if common(o, n)&schemawalk.Object == 0 {
		return
	}
	for _, name := range unionKeys(o.props, n.props) {
		om, inOld := o.props[name]
		nm, inNew := n.props[name]
		child := e.Instance() + "/" + jsonpointer.EscapeToken(name)
		switch {
		case inOld && inNew:
			e.descend(child, om, nm)
		case inOld:
			propertyGone(o, n, e, name, child, om[0].ptr)
		default:
			propertyNew(o, n, e, name, child, nm[0].ptr)
		}
	}
	for _, name := range unionKeys(o.required, n.required) {
		or, nr := o.required[name], n.required[name]
		_, inOld := o.props[name]
		_, inNew := n.props[name]
		if (or != "") == (nr != "") || inOld != inNew {
			continue
		}
		child := e.Instance() + "/" + jsonpointer.EscapeToken(name)
		if or != "" {
			e.EmitAt(becameOptional, child, or, orPtr(n.reqPtr, n.ptr), "the property is no longer required: responses may omit it")
		} else {
			e.EmitAt(becameRequired, child, orPtr(o.reqPtr, o.ptr), nr, "the property became required")
		}
	}
}

// propertyGone reports property name, defined at oldPtr, that the new
// schema no longer defines.
func propertyGone(o, n *View, e *Emitter, name, child, oldPtr string) {
	newPtr := orPtr(n.propsPtr, n.ptr)
	switch {
	case o.required[name] != "":
		e.EmitAt(propertyRemoved, child, oldPtr, newPtr, "the required property is no longer defined: responses may omit it")
	case n.closure != objClosed:
		e.EmitAt(propertyRemoved, child, oldPtr, newPtr, "the property is no longer defined and its object is open: the member may arrive with any value")
	default:
		e.EmitAt(optionalPropertyRemoved, child, oldPtr, newPtr, "the optional property is no longer defined: the closed object can no longer carry it")
	}
}

// propertyNew reports property name, defined at newPtr, that the old
// schema did not define.
func propertyNew(o, n *View, e *Emitter, name, child, newPtr string) {
	req := "an optional"
	if n.required[name] != "" {
		req = "a required"
	}
	oldPtr := orPtr(o.propsPtr, o.ptr)
	if o.closure == objClosed {
		e.EmitAt(propertyAdded, child, oldPtr, newPtr, "%s property was added to a closed object: responses may carry a member the old schema refused", req)
	} else {
		e.EmitAt(propertyAddedOpen, child, oldPtr, newPtr, "%s property is now defined in its open object", req)
	}
}

// closureText names each closure in a message.
var closureText = []string{"open", "constrained by a schema", "closed"}

// compareClosure classifies a change of how the object treats members no
// property names; when both sides constrain them by a schema, those schemas
// are compared one level down ("/*"). Only where both sides allow objects.
func compareClosure(o, n *View, e *Emitter) {
	if common(o, n)&schemawalk.Object == 0 {
		return
	}
	op, np := orPtr(o.closurePtr, o.ptr), orPtr(n.closurePtr, n.ptr)
	switch {
	case n.closure < o.closure:
		e.Emit(objectOpened, op, np, "unknown members are no longer refused (the object went from %s to %s)", closureText[o.closure], closureText[n.closure])
	case n.closure > o.closure:
		e.Emit(objectClosed, op, np, "unknown members are now refused or constrained (the object went from %s to %s)", closureText[o.closure], closureText[n.closure])
	case o.closure == objConstrained:
		e.descend(e.Instance()+"/*", o.additional, n.additional)
	}
}

// unionKeys is the sorted union of the keys of a and b.
func unionKeys[V any](a, b map[string]V) []string {
	names := map[string]bool{}
	for k := range a {
		names[k] = true
	}
	for k := range b {
		names[k] = true
	}
	return slices.Sorted(maps.Keys(names))
}
