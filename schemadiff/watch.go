package schemadiff

import (
	"slices"

	"github.com/airlockdev/airlock/jsonpointer"
)

// Watched instance locations: the gate-impact view asks, for each change,
// which projected fields and rule pointers it touches. A change behind a
// shared pair is reported once, at one instance location, but it applies
// at every location the pair is reached from; judging the reported
// location alone would miss a projected field that reaches the same
// component by another path. watchFlow follows the watched pointers down
// the pair graph instead, so every location counts without listing them
// (a component used a thousand times, or a recursive one, costs one
// entry per watched suffix per pair).

// watchFlow holds, per pair, what of the watched pointers lies at or
// below it: labels whose pointer lies at or above one of the pair's
// locations (every change of the pair touches them), and the rest of a
// watched pointer below a location (a change touches it when one of the
// two is a prefix of the other).
type watchFlow struct {
	all  map[*pair]map[string]bool
	rest map[*pair]map[string]watchRest
}

// watchRest is the part of a watched pointer below a pair's location.
type watchRest struct {
	label string
	rest  jsonpointer.Pointer
}

// newWatchFlow propagates watch (label → RFC 6901 pointers, "*" for any
// array element or member) from the root pair along every step, to a
// fixed point: each pair's sets only grow and are bounded by the watched
// pointers' suffixes, so cycles end.
func newWatchFlow(root *pair, watch map[string][]jsonpointer.Pointer) *watchFlow {
	wf := &watchFlow{all: map[*pair]map[string]bool{}, rest: map[*pair]map[string]watchRest{}}
	if root == nil || len(watch) == 0 {
		return wf
	}
	base := instTokens(root.inst)
	queue := []*pair{}
	for label, ptrs := range watch {
		for _, p := range ptrs {
			if wf.add(root, label, p, base) {
				queue = append(queue, root)
			}
		}
	}
	for len(queue) > 0 {
		p := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		here := instTokens(p.inst)
		for _, s := range p.steps {
			if s.child == nil {
				continue
			}
			at := instTokens(s.inst)
			if len(at) < len(here) {
				continue // not below the pair: never the case for a child
			}
			rel := at[len(here):]
			grew := false
			for label := range wf.all[p] {
				grew = wf.setAll(s.child, label) || grew
			}
			for _, r := range wf.rest[p] {
				if !overlaps(r.rest, rel) {
					continue
				}
				if len(r.rest) <= len(rel) {
					grew = wf.setAll(s.child, r.label) || grew
				} else {
					grew = wf.setRest(s.child, watchRest{r.label, r.rest[len(rel):]}) || grew
				}
			}
			if grew {
				queue = append(queue, s.child)
			}
		}
	}
	return wf
}

// add records watched pointer ptr of label at root, whose location has
// the tokens base.
func (wf *watchFlow) add(root *pair, label string, ptr jsonpointer.Pointer, base []string) bool {
	if !overlaps(ptr, base) {
		return false
	}
	if len(ptr) <= len(base) {
		return wf.setAll(root, label)
	}
	return wf.setRest(root, watchRest{label, ptr[len(base):]})
}

func (wf *watchFlow) setAll(p *pair, label string) bool {
	m := wf.all[p]
	if m == nil {
		m = map[string]bool{}
		wf.all[p] = m
	}
	if m[label] {
		return false
	}
	m[label] = true
	return true
}

func (wf *watchFlow) setRest(p *pair, r watchRest) bool {
	m := wf.rest[p]
	if m == nil {
		m = map[string]watchRest{}
		wf.rest[p] = m
	}
	key := r.label + "\x00" + r.rest.String()
	if _, ok := m[key]; ok {
		return false
	}
	m[key] = r
	return true
}

// labels returns, sorted and each once, the labels a change of pair p at
// instance location inst (in p's coordinates) touches at any of the
// locations p is reached from.
func (wf *watchFlow) labels(p *pair, inst string) []string {
	var out []string
	for label := range wf.all[p] {
		out = append(out, label)
	}
	here, at := instTokens(p.inst), instTokens(inst)
	rel := at
	if len(at) >= len(here) {
		rel = at[len(here):]
	}
	for _, r := range wf.rest[p] {
		if overlaps(r.rest, rel) {
			out = append(out, r.label)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// overlaps reports whether one token list is a prefix of the other, token
// by token, "*" matching any token.
func overlaps(a, b []string) bool {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] && a[i] != "*" && b[i] != "*" {
			return false
		}
	}
	return true
}

// instTokens splits an instance location of the walk ("" for the whole
// response, "/a/*/b") into its reference tokens, unescaped.
func instTokens(inst string) []string {
	p, err := jsonpointer.Parse(inst)
	if err != nil {
		return nil
	}
	return p
}
