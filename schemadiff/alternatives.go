package schemadiff

import (
	"slices"
	"sort"

	"github.com/airlockdev/airlock/internal/schemawalk"
	"github.com/airlockdev/airlock/reports"
)

// The alternatives family: oneOf and anyOf. Each side is distributed into
// alternatives (the walk's alternatives: the base schema with one branch
// of each group; an alternative that admits no value, say one an allOf
// beside the oneOf excludes, is left out, as it adds no shape a response
// could have); each new alternative is paired with the old one closest
// to it (fewest changes, then nearest position), and the pairs are compared
// one level down. A new alternative that some old one already covers (no
// breaking change between them) is compared with it, not reported as added.
// Alternatives a discriminator tells apart (their const/enum at the same
// property allow no common value) are never paired.

var (
	branchAdded = Rule{ID: RuleBranchAdded, Level: reports.Breaking,
		Description: "A oneOf/anyOf alternative was added (or a single shape became one of several): responses of a shape the consumer never saw may arrive."}
	branchRemoved = Rule{ID: RuleBranchRemoved, Level: reports.Compatible,
		Description: "A oneOf/anyOf alternative was removed: the producer sends one shape fewer."}
)

// compareAlternatives pairs and compares the alternatives where either
// side has oneOf/anyOf, reports the unpaired ones, and ends the location:
// the pairs' comparisons said the rest.
func compareAlternatives(o, n *View, e *Emitter) {
	if len(o.groups) == 0 && len(n.groups) == 0 {
		return
	}
	e.Done()
	oa, na := e.alternatives(e.w.old, o), e.alternatives(e.w.new, n)
	if e.w.err != nil {
		return
	}
	pairOf := pairAlternatives(oa, na, e)
	for j, i := range pairOf {
		if i >= 0 {
			e.descend(e.Instance(), oa[i].members, na[j].members)
		}
	}
	for i := range oa {
		if !slices.Contains(pairOf, i) {
			e.Emit(branchRemoved, oa[i].ptr, groupPtr(n), "the alternative at %s (%s) was removed", pointerOrRoot(oa[i].ptr), oa[i].view.allowed)
		}
	}
	for j, i := range pairOf {
		if i < 0 {
			e.Emit(branchAdded, groupPtr(o), na[j].ptr, "an alternative (%s) was added at %s: responses of a shape the old schema refused may arrive", na[j].view.allowed, pointerOrRoot(na[j].ptr))
		}
	}
}

// pairAlternatives returns, for each new alternative, the index of the old
// one it is compared with, or -1 for an added alternative. Two alternatives
// can pair when they share a type (each admits something: alternatives
// dropped those that do not); the cheapest
// pairs (fewest changes in a trial comparison, then nearest position) are
// taken first, one old per new; a new one left over pairs with any old one
// that covers it.
func pairAlternatives(oa, na []alternative, e *Emitter) []int {
	type result struct {
		cost     int
		breaking bool
	}
	trials := map[[2]int]result{}
	trial := func(i, j int) result {
		r, ok := trials[[2]int{i, j}]
		if !ok {
			r.cost, r.breaking = e.trial(oa[i].members, na[j].members)
			trials[[2]int{i, j}] = r
		}
		return r
	}
	type cand struct{ i, j, cost int }
	var cands []cand
	od := discriminators(e.w.old, oa)
	nd := discriminators(e.w.new, na)
	for i := range oa {
		for j := range na {
			if oa[i].view.allowed&na[j].view.allowed != 0 && !ruledOut(od[i], nd[j]) {
				cands = append(cands, cand{i, j, trial(i, j).cost})
			}
		}
	}
	sort.SliceStable(cands, func(a, b int) bool {
		x, y := cands[a], cands[b]
		if x.cost != y.cost {
			return x.cost < y.cost
		}
		if dx, dy := absInt(x.i-x.j), absInt(y.i-y.j); dx != dy {
			return dx < dy
		}
		return x.i < y.i
	})
	pairOf := make([]int, len(na))
	for j := range pairOf {
		pairOf[j] = -1
	}
	usedOld := make([]bool, len(oa))
	for _, c := range cands {
		if !usedOld[c.i] && pairOf[c.j] < 0 {
			usedOld[c.i], pairOf[c.j] = true, c.i
		}
	}
	for j := range na {
		if pairOf[j] >= 0 {
			continue
		}
		for _, c := range cands {
			if c.j == j && !trial(c.i, j).breaking {
				pairOf[j] = c.i
				break
			}
		}
	}
	return pairOf
}

// discriminators gives, per alternative, the values its const/enum allow
// at each property that has them (canonical JSON text), so that pairing
// can leave out alternatives a discriminator tells apart: a tagged union
// of B branches costs about B trials, not B².
func discriminators(side *Schema, as []alternative) []map[string]map[string]bool {
	out := make([]map[string]map[string]bool, len(as))
	for i, a := range as {
		for name, ms := range a.view.props {
			if !mayFixValues(ms) {
				continue
			}
			pv := build(side, ms)
			if !pv.hasValues || len(pv.values) == 0 || pv.err != nil {
				continue // no value at all is no discriminator
			}
			set := map[string]bool{}
			for _, x := range pv.values {
				set[schemawalk.Canonical(x)] = true
			}
			if out[i] == nil {
				out[i] = map[string]map[string]bool{}
			}
			out[i][name] = set
		}
	}
	return out
}

// mayFixValues is a quick test that a property's members may hold a const
// or enum (themselves, or through $ref or allOf), so that discriminators
// builds views only of those.
func mayFixValues(ms []member) bool {
	for _, m := range ms {
		if s := m.s; s != nil && (s.Const != nil || s.Enum != nil || s.Ref != nil || len(s.AllOf) > 0) {
			return true
		}
	}
	return false
}

// ruledOut reports whether two alternatives' discriminators allow no
// common value at some property both fix: a response of one is never one
// of the other (when it has the property), so they are not paired.
func ruledOut(o, n map[string]map[string]bool) bool {
	for name, ov := range o {
		nv, ok := n[name]
		if !ok {
			continue
		}
		common := false
		for x := range ov {
			if nv[x] {
				common = true
				break
			}
		}
		if !common {
			return true
		}
	}
	return false
}

// groupPtr is the keyword location of a view's first oneOf/anyOf, or of
// the view when it has none.
func groupPtr(v *View) string {
	if len(v.groups) > 0 {
		return v.groups[0].ptr
	}
	return v.ptr
}

// pointerOrRoot shows a keyword location in a message, "#" for the root.
func pointerOrRoot(p string) string {
	if p == "" {
		return "#"
	}
	return p
}

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
