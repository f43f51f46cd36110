package schemadiff

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/reports"
)

// The walk: two compiled schemas side by side, one instance location at a
// time. At each location it builds a View of each side and calls the
// registry's handlers in order; handlers report changes and ask for child
// locations (properties, array elements, alternatives) through their
// Emitter.
//
// The walk is memoised per pair of member lists (the schemas that apply at
// a location, old and new, keyed by the schemas, not by the path that
// reached them): a pair is compared once, wherever it is reached, so a
// component that a description $refs from a thousand places costs one
// comparison, and a recursive schema ends where its pair is reached again
// (the pair being compared is returned as it is). The trial pairings of
// alternatives are pairs of the same memo. The comparison of a pair is
// kept as a list of steps (its own changes, and its child pairs in the
// order the handlers asked for them), in the coordinates of the place it
// was first compared; report then finds the shallowest instance location
// of each pair (homes), walks the graph from the root pair in step order,
// and reports each pair's changes once, rebased there, each naming the
// other instance locations where the same pair applies (up to
// maxAlsoShown, then a count). The output grows with the changes, not
// with the number of places a definition is used.

// walker walks two compiled schemas side by side.
type walker struct {
	old, new *Schema
	handlers []Handler
	// memo holds every pair compared, by key; ids numbers the schemas
	// for the keys.
	memo map[string]*pair
	ids  map[*jsonschema.Schema]uint32
	// refOnlyMemo caches refOnly.
	refOnlyMemo map[*jsonschema.Schema]bool
	// pairs counts the pair comparisons made (a truncated pair compared
	// again counts again); more than maxPairs is an error.
	pairs, maxPairs int
	// steps counts the child steps recorded (a memo hit costs one), more
	// than maxSteps is an error too: the report walks every step.
	steps, maxSteps int
	// widest is the widest distribution of alternatives seen, named in
	// the error when maxPairs is exceeded.
	widest widestAlternatives
	err    error
	// watched, when set, follows the caller's watched instance locations
	// down the pair graph; report then gives touched, per reported change
	// in order, the labels it touches (watch.go).
	watched *watchFlow
	touched [][]string
}

// widestAlternatives is where the most alternatives were distributed.
type widestAlternatives struct {
	count int
	file  string
	inst  string
}

func newWalker(o, n *Schema, hs []Handler) *walker {
	w := &walker{old: o, new: n, handlers: hs, memo: map[string]*pair{}, ids: map[*jsonschema.Schema]uint32{},
		refOnlyMemo: map[*jsonschema.Schema]bool{}}
	w.maxPairs = maxPairsPerNode*(o.nodes()+n.nodes()) + minPairs
	w.maxSteps = maxStepsPerPair * w.maxPairs
	return w
}

// pair is the comparison of one pair of member lists, computed once.
type pair struct {
	// inst, oldPtrs and newPtrs are the instance location and the members'
	// keyword locations where the pair was compared: the coordinates of
	// its steps, rebased by report to where the pair is reported.
	inst             string
	oldPtrs, newPtrs []string
	done             bool
	steps            []step
	// cost is the number of changes at and below the pair, each child
	// counted wherever it is reached (saturating at maxCost); breaking is
	// true when one of them is breaking. They rank pairings of
	// alternatives.
	cost     int
	breaking bool
}

// step is one change of a pair (child nil) or one child comparison.
type step struct {
	change reports.Change // Message holds the text after the location
	child  *pair
	inst   string
	// oldPtrs and newPtrs are the child's members' keyword locations.
	oldPtrs, newPtrs []string
}

// maxCost caps pair.cost, so that counting shared children cannot overflow.
const maxCost = 1 << 30

// Emitter is what a Handler reports through, for one instance location:
// Emit records a change of one of the handler's rules, and the walk's own
// methods let a handler compare child locations. An Emitter is valid only
// during the handler call it was passed to.
type Emitter struct {
	w    *walker
	p    *pair // the pair being compared, whose steps Emit appends to
	inst string
	// nest counts the comparisons at this same instance location above
	// this one (oneOf/anyOf alternatives and their trials), which add no
	// reference token to inst.
	nest int
	done bool
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
	e.p.steps = append(e.p.steps, step{change: reports.Change{
		Rule: r.ID, Level: r.Level, Instance: inst, OldPointer: oldPtr, NewPointer: newPtr,
		Message: fmt.Sprintf(format, a...),
	}})
}

// Done ends the comparison of the current location after this handler:
// the handlers after it in the registry are not called (e.g. the types
// share nothing, so no other keyword can be compared).
func (e *Emitter) Done() { e.done = true }

// descend compares what two member lists allow at instance location inst:
// a child location (a property, an element) or, for alternatives, the
// current one again.
func (e *Emitter) descend(inst string, o, n []member) {
	child := e.w.compare(o, n, inst, e.nestAt(inst))
	if child == nil {
		return
	}
	if e.w.steps++; e.w.steps > e.w.maxSteps {
		e.w.fail()
		return
	}
	e.p.steps = append(e.p.steps, step{child: child, inst: inst, oldPtrs: ptrsOf(o), newPtrs: ptrsOf(n)})
}

// trial compares two member lists at the current location on the side,
// without reporting: the number of changes a pairing of alternatives would
// give, and whether one is breaking. The comparison is memoised like any
// other, so the pairing chosen is not compared again.
func (e *Emitter) trial(o, n []member) (cost int, breaking bool) {
	p := e.w.compare(o, n, e.inst, e.nest+1)
	if p == nil {
		return 0, false
	}
	return p.cost, p.breaking
}

// nestAt is the nest of a comparison at inst asked for by e: one more than
// e's at the same location, 0 at a child location.
func (e *Emitter) nestAt(inst string) int {
	if inst == e.inst {
		return e.nest + 1
	}
	return 0
}

// where names an instance location in a message.
func instanceWhere(inst string) string {
	if inst == "" {
		return "the response"
	}
	return inst
}

// compare compares what two member lists allow at instance location inst
// (nest comparisons deep at that same location) and returns the pair, or
// nil when it was not compared: the walk failed, or inst has more than
// maxDiffDepth reference tokens or nest exceeds maxDiffDepth, which fails
// the walk with an error naming inst (tooDeep). A pair being compared (a
// recursive schema reached again) is returned as it is.
func (w *walker) compare(o, n []member, inst string, nest int) *pair {
	if w.err != nil {
		return nil
	}
	key := w.key(o, n)
	if p := w.memo[key]; p != nil {
		return p
	}
	if tokens(inst) > maxDiffDepth || nest > maxDiffDepth {
		w.tooDeep(o, n, inst, nest)
		return nil
	}
	if w.pairs++; w.pairs > w.maxPairs {
		w.fail()
		return nil
	}
	p := &pair{inst: inst, oldPtrs: ptrsOf(o), newPtrs: ptrsOf(n)}
	w.memo[key] = p
	ov, nv := build(w.old, o), build(w.new, n)
	ov.members, nv.members = o, n
	if err := cmp.Or(ov.err, nv.err); err != nil {
		w.err = err
		return nil
	}
	e := &Emitter{w: w, p: p, inst: inst, nest: nest}
	for _, h := range w.handlers {
		h(ov, nv, e)
		if e.done || w.err != nil {
			break
		}
	}
	for _, s := range p.steps {
		switch {
		case s.child == nil:
			p.cost++
			p.breaking = p.breaking || s.change.Level == reports.Breaking
		case s.child.done:
			p.cost += s.child.cost
			p.breaking = p.breaking || s.child.breaking
		}
		p.cost = min(p.cost, maxCost)
	}
	p.done = true
	return p
}

// fail records that the walk needs more than maxPairs comparisons.
func (w *walker) fail() {
	msg := fmt.Sprintf("too large to compare with %s: more than %d schema pairs (%d per JSON object or array of the two schemas' documents, plus %d)", w.old.path, w.maxPairs, maxPairsPerNode, minPairs)
	if w.steps > w.maxSteps {
		msg = fmt.Sprintf("too large to compare with %s: more than %d steps between schema pairs (%d per pair the bound allows: %d per JSON object or array of the two schemas' documents, plus %d)", w.old.path, w.maxSteps, maxStepsPerPair, maxPairsPerNode, minPairs)
	}
	if w.widest.count > 1 {
		msg += fmt.Sprintf("; the widest oneOf/anyOf distribution seen has %d alternatives, at instance location %s (%s)", w.widest.count, pointerOrRoot(w.widest.inst), w.widest.file)
	}
	w.err = &gate.ConfigError{File: w.new.path, Msg: msg}
}

// tooDeep fails the walk at a location it does not compare: one with more
// than maxDiffDepth reference tokens (the gate's default parse depth cap,
// gate.DefaultMaxDepth), or more than maxDiffDepth oneOf/anyOf
// distributions nested at one location. The error names the instance
// location and the members' keyword locations on the new side, so that a
// diff never reports "no changes" for what it did not compare.
func (w *walker) tooDeep(o, n []member, inst string, nest int) {
	what := fmt.Sprintf("it has more than %d reference tokens (the gate's default nesting cap)", maxDiffDepth)
	if nest > maxDiffDepth {
		what = fmt.Sprintf("more than %d oneOf/anyOf distributions nest there", maxDiffDepth)
	}
	ms := n
	if len(ms) == 0 {
		ms = o
	}
	where := ""
	if len(ms) > 0 {
		where = "; new schema at " + pointerOrRoot(ms[0].ptr)
	}
	w.err = &gate.ConfigError{File: w.new.path, Key: inst,
		Msg: fmt.Sprintf("cannot compare instance location %s: %s%s; the diff stops rather than report no change it did not check", pointerOrRoot(inst), what, where)}
}

// key identifies a pair of member lists by their schemas (each given a
// number the first time it is seen) and flat marks; keyword locations are
// left out, so the same schemas reached by another path share the key. A
// member that is only a $ref (refOnly) is keyed by its target, marked as
// reached through a $ref: a component $ref'd from a thousand properties is
// one pair, compared once and reported once, not one per $ref site.
func (w *walker) key(o, n []member) string {
	b := make([]byte, 0, 4*(len(o)+len(n))+1)
	put := func(side *Schema, ms []member) {
		for _, m := range ms {
			id := uint32(0)
			if s := m.s; s != nil {
				if w.refOnly(side, s) {
					s, id = s.Ref, 2
				}
				x, ok := w.ids[s]
				if !ok {
					x = uint32(len(w.ids)+1) << 2
					w.ids[s] = x
				}
				id |= x
			}
			if m.flat {
				id |= 1
			}
			b = binary.LittleEndian.AppendUint32(b, id)
		}
	}
	put(w.old, o)
	b = append(b, '|')
	put(w.new, n)
	return string(b)
}

// refOnly reports whether s is a $ref and nothing the diff compares
// besides: no other keyword that constrains an instance, no $id, $anchor
// or $dynamicAnchor (they would change what $refs and $dynamicRefs
// resolve to), no raw format keyword (the compiled form drops unknown
// ones); annotations (title, description, default, examples, deprecated,
// readOnly, writeOnly, $comment) are allowed, as no handler reads them.
// Such a schema's view is its target's plus the $ref itself, which
// compareRefs reads from the target's location, the same from every site.
func (w *walker) refOnly(side *Schema, s *jsonschema.Schema) bool {
	if r, ok := w.refOnlyMemo[s]; ok {
		return r
	}
	r := s.Ref != nil && s.Bool == nil
	if r {
		v := reflect.ValueOf(s).Elem()
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() || annotationFields[f.Name] {
				continue
			}
			if !v.Field(i).IsZero() {
				r = false
				break
			}
		}
	}
	if r {
		if _, ok := side.keyword(s.Location, "format"); ok {
			r = false
		}
	}
	w.refOnlyMemo[s] = r
	return r
}

// annotationFields are the fields of jsonschema.Schema that refOnly allows
// beside Ref: where the schema is, and annotations (Core 2020-12 §7.7,
// Validation 2020-12 §9).
var annotationFields = map[string]bool{"Ref": true, "DraftVersion": true, "Location": true,
	"Title": true, "Description": true, "Default": true, "Comment": true,
	"ReadOnly": true, "WriteOnly": true, "Examples": true, "Deprecated": true}

func ptrsOf(ms []member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ptr
	}
	return out
}

// alternative is one distributed oneOf/anyOf choice: the flattened base
// members plus one branch of each group.
type alternative struct {
	members []member
	ptr     string
	view    *View
}

// alternatives distributes the oneOf/anyOf groups of v (built from v's
// members on side) into alternatives, each built into its own view, and
// drops those that admit no value (a false schema, or no type left: an
// allOf beside the oneOf excludes the branch), since they add no shape a
// response could have. The distribution is a product: more than
// maxAlternatives fail the walk with an error naming the groups.
func (e *Emitter) alternatives(side *Schema, v *View) []alternative {
	if e.w.err != nil {
		return nil
	}
	ms := v.members
	out := []alternative{{members: ms, ptr: v.ptr}}
	if len(v.groups) > 0 {
		count := 1
		for _, g := range v.groups {
			count = min(count*len(g.branches), maxAlternatives+1)
		}
		if count > maxAlternatives {
			e.w.err = tooManyAlternatives(side, v, e.inst)
			return nil
		}
		if count > e.w.widest.count {
			e.w.widest = widestAlternatives{count: count, inst: e.inst, file: groupsText(side, v.groups)}
		}
		base := make([]member, len(ms))
		for i, m := range ms {
			base[i] = member{s: m.s, ptr: m.ptr, flat: true}
		}
		out = []alternative{{members: base}}
		for _, g := range v.groups {
			next := make([]alternative, 0, len(out)*len(g.branches))
			for _, a := range out {
				for _, b := range g.branches {
					next = append(next, alternative{members: append(slices.Clone(a.members), b), ptr: b.ptr})
				}
			}
			out = next
		}
	}
	kept := out[:0]
	for _, a := range out {
		a.view = build(side, a.members)
		if !a.view.never && a.view.allowed != 0 {
			kept = append(kept, a)
		}
	}
	return kept
}

// tooManyAlternatives is the error for a location whose oneOf/anyOf
// groups distribute into more than maxAlternatives alternatives: it names
// the file and JSON Pointer of each group and its number of branches.
func tooManyAlternatives(side *Schema, v *View, inst string) error {
	product := 1
	for _, g := range v.groups {
		product = min(product*len(g.branches), 1<<30)
	}
	first := v.groups[0]
	ce := &gate.ConfigError{File: side.path, Key: first.ptr}
	if pos, ok := side.dir.Locate(first.loc, ""); ok {
		ce.File, ce.Key = pos.File, pos.Pointer
	}
	what := "its oneOf/anyOf groups multiply into"
	if len(v.groups) == 1 {
		what = "its " + first.keyword + " has"
	}
	ce.Msg = fmt.Sprintf("at instance location %s, %s %d alternatives, more than the %d the diff compares (each alternative is paired with each of the other side's; the groups multiply): %s", pointerOrRoot(inst), what, product, maxAlternatives, groupsText(side, v.groups))
	return ce
}

// groupsText lists groups for an error: each keyword, its file and JSON
// Pointer, and its number of branches, the first eight.
func groupsText(side *Schema, gs []group) string {
	var parts []string
	for i, g := range gs {
		if i == 8 {
			parts = append(parts, fmt.Sprintf("… %d more", len(gs)-8))
			break
		}
		where := side.relative(g.loc)
		if pos, ok := side.dir.Locate(g.loc, ""); ok {
			where = pos.File + "#" + pos.Pointer
		}
		parts = append(parts, fmt.Sprintf("%s at %s (%d branches)", g.keyword, where, len(g.branches)))
	}
	return strings.Join(parts, ", ")
}
