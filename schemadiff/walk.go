package schemadiff

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/reports"
)

// The walk: two compiled schemas side by side, one instance location at a
// time. At each location it builds a View of each side and calls the
// registry's handlers in order; handlers report changes and ask for child
// locations (properties, array elements, alternatives) through their
// Emitter.

// walker walks two compiled schemas side by side.
type walker struct {
	old, new *Schema
	handlers []Handler
	changes  []reports.Change
	// active holds the $ref pairs being compared, so recursive schemas end.
	active map[string]bool
	// budget is the number of schema pairs left to compare; at 0 the walk
	// stops and Compare refuses the schemas as too large.
	budget int
}

func newWalker(o, n *Schema, hs []Handler, budget int) *walker {
	return &walker{old: o, new: n, handlers: hs, active: map[string]bool{}, budget: budget}
}

// Emitter is what a Handler reports through, for one instance location:
// Emit records a change of one of the handler's rules, and the walk's own
// methods let a handler compare child locations. An Emitter is valid only
// during the handler call it was passed to.
type Emitter struct {
	w     *walker
	inst  string
	depth int
	done  bool
}

// Instance is the instance location being compared: an RFC 6901 JSON
// Pointer into the response, "*" for every array element or additional
// member, "" for the whole response.
func (e *Emitter) Instance() string { return e.inst }

// Emit reports a change of rule r at the current instance location, with
// its keyword location in each schema (oldPtr, newPtr: JSON Pointers from
// the schema's root; where a keyword exists on one side only, the other
// side's pointer names the enclosing schema). The message is format and a,
// prefixed with the instance location ("the response" for "").
func (e *Emitter) Emit(r Rule, oldPtr, newPtr, format string, a ...any) {
	e.EmitAt(r, e.inst, oldPtr, newPtr, format, a...)
}

// EmitAt is Emit at instance location inst (a child of the current one,
// e.g. a property that was added).
func (e *Emitter) EmitAt(r Rule, inst, oldPtr, newPtr, format string, a ...any) {
	e.w.changes = append(e.w.changes, reports.Change{
		Rule: r.ID, Level: r.Level, Instance: inst, OldPointer: oldPtr, NewPointer: newPtr,
		Message: instanceWhere(inst) + ": " + fmt.Sprintf(format, a...),
	})
}

// Done ends the comparison of the current location after this handler:
// the handlers after it in the registry are not called (e.g. the types
// share nothing, so no other keyword can be compared).
func (e *Emitter) Done() { e.done = true }

// descend compares what two member lists allow at instance location inst,
// one level deeper.
func (e *Emitter) descend(inst string, o, n []member) {
	e.w.compare(o, n, inst, e.depth+1)
}

// where names an instance location in a message.
func instanceWhere(inst string) string {
	if inst == "" {
		return "the response"
	}
	return inst
}

// compare compares what two member lists allow at instance location inst.
func (w *walker) compare(o, n []member, inst string, depth int) {
	if depth > maxDiffDepth || w.budget <= 0 {
		return
	}
	w.budget--
	ov, nv := build(w.old, o), build(w.new, n)
	if key := cycleKey(ov.entered, nv.entered); key != "" {
		if w.active[key] {
			return
		}
		w.active[key] = true
		defer delete(w.active, key)
	}
	ov.members, nv.members = o, n
	e := &Emitter{w: w, inst: inst, depth: depth}
	for _, h := range w.handlers {
		h(ov, nv, e)
		if e.done {
			return
		}
	}
}

// cycleKey names the pair of $ref targets two views entered, "" for none.
func cycleKey(o, n []*jsonschema.Schema) string {
	if len(o) == 0 && len(n) == 0 {
		return ""
	}
	var b strings.Builder
	for _, s := range o {
		fmt.Fprintf(&b, "%p,", s)
	}
	b.WriteString("|")
	for _, s := range n {
		fmt.Fprintf(&b, "%p,", s)
	}
	return b.String()
}

// trial compares two member lists at the current location on the side,
// without reporting: the changes a pairing of alternatives would give.
// Its work counts toward the budget (at most a tenth of the whole).
func (e *Emitter) trial(o, n []member) []reports.Change {
	w := e.w
	start := min(w.budget, maxDiffCompares/10)
	t := newWalker(w.old, w.new, w.handlers, start)
	maps.Copy(t.active, w.active)
	t.compare(o, n, e.inst, e.depth+1)
	w.budget -= start - t.budget
	return t.changes
}

// alternative is one distributed oneOf/anyOf choice: the flattened base
// members plus one branch of each group.
type alternative struct {
	members []member
	ptr     string
	view    *View
}

// alternatives distributes the oneOf/anyOf groups of v (built from v's
// members on side) into alternatives, each built into its own view. More
// than maxAlternatives exhaust the budget, so Compare refuses the schemas.
func (e *Emitter) alternatives(side *Schema, v *View) []alternative {
	ms := v.members
	out := []alternative{{members: ms, ptr: v.ptr}}
	if len(v.groups) > 0 {
		base := make([]member, len(ms))
		for i, m := range ms {
			base[i] = member{s: m.s, ptr: m.ptr, flat: true}
		}
		out = []alternative{{members: base}}
		for _, g := range v.groups {
			var next []alternative
			for _, a := range out {
				for _, b := range g.branches {
					if len(next) == maxAlternatives {
						e.w.budget = 0 // too many to compare: Compare reports it
						break
					}
					next = append(next, alternative{members: append(slices.Clone(a.members), b), ptr: b.ptr})
				}
			}
			out = next
		}
	}
	for i := range out {
		out[i].view = build(side, out[i].members)
	}
	return out
}
