package schemadiff

// The report: each pair's changes once, at the shallowest instance
// location the pair applies at, rebased there, naming the other locations
// where the same pair applies (see the walk's comment in walk.go).

import (
	"slices"
	"strconv"
	"strings"

	"github.com/airlockdev/airlock/reports"
)

// maxAlsoShown is how many other instance locations a change names;
// maxAlsoCounted is where their count stops (a recursive schema applies
// at infinitely many).
const (
	maxAlsoShown   = 3
	maxAlsoCounted = 1 << 20
)

// frame is where a pair is reported: its instance location, its members'
// keyword locations, and the frame and step number of the pair that
// reached it there.
type frame struct {
	p                *pair
	inst             string
	depth            int // reference tokens in inst
	oldPtrs, newPtrs []string
	parent           *frame
	step             int
}

// report returns each pair's changes once, at the shallowest instance
// location the pair applies at (the first in walk order among equals),
// with instance and keyword locations rebased there, in walk order, and
// the other locations where the same pair applies added to the message.
func (w *walker) report(root *pair) []reports.Change {
	if root == nil {
		return nil
	}
	home := homes(root)
	where := newLocations(root, home)
	var out []reports.Change
	type cursor struct {
		f *frame
		i int
	}
	stack := []cursor{{f: home[root]}}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		f, i := top.f, top.i
		if i == len(f.p.steps) {
			stack = stack[:len(stack)-1]
			continue
		}
		top.i++
		s := f.p.steps[i]
		if s.child == nil {
			c := s.change
			c.Instance = rebaseInstance(c.Instance, f.p.inst, f.inst)
			c.OldPointer = rebasePointer(c.OldPointer, f.p.oldPtrs, f.oldPtrs)
			c.NewPointer = rebasePointer(c.NewPointer, f.p.newPtrs, f.newPtrs)
			c.Message = instanceWhere(c.Instance) + ": " + c.Message + where.also(f, c.Instance)
			out = append(out, c)
			if w.watched != nil {
				w.touched = append(w.touched, w.watched.labels(f.p, s.change.Instance))
			}
			continue
		}
		if g := home[s.child]; g.parent == f && g.step == i {
			stack = append(stack, cursor{f: g})
		}
	}
	return out
}

// locations finds the instance locations where a pair applies: one per
// path from the root pair, each step adding its child's location below
// the parent's.
type locations struct {
	// root applies at its own location, and at those of the steps that
	// reach it again (a recursive schema whose root is a $ref).
	root  *pair
	home  map[*pair]*frame
	in    map[*pair][]inEdge
	shown map[*pair][]string
	count map[*pair]int
}

// inEdge is a step of pair from that reaches a pair.
type inEdge struct {
	from *pair
	inst string // the child's location, in from's coordinates
}

func newLocations(root *pair, home map[*pair]*frame) *locations {
	l := &locations{root: root, home: home, in: map[*pair][]inEdge{}, shown: map[*pair][]string{},
		count: map[*pair]int{}}
	for p := range home {
		for _, s := range p.steps {
			if s.child != nil {
				l.in[s.child] = append(l.in[s.child], inEdge{p, s.inst})
			}
		}
	}
	// Map order must not decide the examples: edges in the order of their
	// source's home location, then of the step.
	for _, es := range l.in {
		slices.SortStableFunc(es, func(a, b inEdge) int {
			fa, fb := home[a.from], home[b.from]
			if fa.depth != fb.depth {
				return fa.depth - fb.depth
			}
			return strings.Compare(fa.inst, fb.inst)
		})
	}
	return l
}

// walk computes the shallowest instance locations (up to maxAlsoShown+1,
// without repeats; addShallowest) and the number of paths reaching p (saturating at
// maxAlsoCounted; a path through a pair still being walked, a recursion,
// counts as maxAlsoCounted, and adds the locations found for that pair so
// far). Depth-first over the steps that reach each
// pair, with a stack of its own: the graph may be as deep as it has pairs.
func (l *locations) walk(p *pair) ([]string, int) {
	if s, ok := l.shown[p]; ok {
		return s, l.count[p]
	}
	type item struct {
		p     *pair
		i     int
		shown []string
		n     int
	}
	start := func(p *pair) *item {
		if p == l.root {
			return &item{p: p, shown: []string{p.inst}, n: 1}
		}
		return &item{p: p}
	}
	busy := map[*pair]*item{} // the items on the stack
	stack := []*item{start(p)}
	busy[p] = stack[0]
	for len(stack) > 0 {
		top := stack[len(stack)-1]
		if top.i == len(l.in[top.p]) {
			delete(busy, top.p)
			l.shown[top.p], l.count[top.p] = top.shown, top.n
			stack = stack[:len(stack)-1]
			continue
		}
		e := l.in[top.p][top.i]
		ss, done := l.shown[e.from]
		if b := busy[e.from]; !done && b == nil {
			b = start(e.from)
			busy[e.from] = b
			stack = append(stack, b)
			continue // this step again once e.from is walked
		} else if !done {
			ss = b.shown // a recursion: the locations found so far
		}
		top.i++
		c := maxAlsoCounted
		if done {
			c = l.count[e.from]
		}
		for _, s := range ss {
			loc := rebaseInstance(e.inst, e.from.inst, s)
			top.shown = addShallowest(top.shown, loc)
		}
		top.n = min(top.n+c, maxAlsoCounted)
	}
	return l.shown[p], l.count[p]
}

// addShallowest adds loc to shown, kept the maxAlsoShown+1 shallowest
// instance locations (fewest reference tokens, then in byte order),
// without repeats.
func addShallowest(shown []string, loc string) []string {
	less := func(a, b string) bool {
		if ta, tb := tokens(a), tokens(b); ta != tb {
			return ta < tb
		}
		return a < b
	}
	if slices.Contains(shown, loc) || len(shown) > maxAlsoShown && !less(loc, shown[len(shown)-1]) {
		return shown
	}
	i := len(shown)
	for i > 0 && less(loc, shown[i-1]) {
		i--
	}
	shown = slices.Insert(shown, i, loc)
	if len(shown) > maxAlsoShown+1 {
		shown = shown[:maxAlsoShown+1]
	}
	return shown
}

// also says where else a change reported at inst in frame f applies: the
// other locations of f's pair, with the rest of inst below them.
func (l *locations) also(f *frame, inst string) string {
	shown, n := l.walk(f.p)
	rest := strings.TrimPrefix(inst, f.inst)
	var others []string
	for _, s := range shown {
		if s != f.inst && len(others) < maxAlsoShown {
			others = append(others, instanceWhere(s+rest))
		}
	}
	more := n - 1 - len(others)
	switch {
	case len(others) == 0 && more <= 0:
		return ""
	case n >= maxAlsoCounted:
		return " (reported once; the same schemas also apply at " + strings.Join(others, ", ") + " and at more instance locations, as they recur)"
	case more <= 0:
		return " (reported once; the same schemas also apply at " + joinAnd(others) + ")"
	}
	return " (reported once; the same schemas also apply at " + strings.Join(others, ", ") + " and at " + strconv.Itoa(more) + " more instance location(s))"
}

func joinAnd(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// homes finds, for each pair reachable from root, the frame it is reported
// in: the shallowest instance location it is reached at, the first in
// breadth-first order among equals. A child location is one reference
// token below its parent (a property, an element) or at the same location
// (an alternative), so a breadth-first search by depth, same-depth
// children joining the current level, gives the depths.
func homes(root *pair) map[*pair]*frame {
	home := map[*pair]*frame{root: {p: root, inst: root.inst, oldPtrs: root.oldPtrs, newPtrs: root.newPtrs}}
	level := []*frame{home[root]}
	for len(level) > 0 {
		var next []*frame
		for k := 0; k < len(level); k++ {
			f := level[k]
			if home[f.p] != f {
				continue // a shallower frame replaced it
			}
			for i, s := range f.p.steps {
				if s.child == nil {
					continue
				}
				inst := rebaseInstance(s.inst, f.p.inst, f.inst)
				depth := tokens(inst)
				if h, ok := home[s.child]; ok && h.depth <= depth {
					continue
				}
				g := &frame{p: s.child, inst: inst, depth: depth, parent: f, step: i,
					oldPtrs: rebasePointers(s.oldPtrs, f.p.oldPtrs, f.oldPtrs),
					newPtrs: rebasePointers(s.newPtrs, f.p.newPtrs, f.newPtrs)}
				home[s.child] = g
				if depth == f.depth {
					level = append(level, g)
				} else {
					next = append(next, g)
				}
			}
		}
		level = next
	}
	return home
}

// tokens is the number of reference tokens of an instance location.
func tokens(inst string) int { return strings.Count(inst, "/") }

// rebaseInstance moves instance location inst from below from to below to.
func rebaseInstance(inst, from, to string) string {
	if rest, ok := strings.CutPrefix(inst, from); ok {
		return to + rest
	}
	return inst
}

// rebasePointer moves keyword location ptr from below the member location
// of from that is its longest prefix to below the member location of to at
// the same index (the same schema, reached by another path); a pointer
// below none of them is returned as it is.
func rebasePointer(ptr string, from, to []string) string {
	best := -1
	for i, f := range from {
		if (ptr == f || strings.HasPrefix(ptr, f+"/") || f == "") && (best < 0 || len(f) > len(from[best])) {
			best = i
		}
	}
	if best < 0 || best >= len(to) {
		return ptr
	}
	return to[best] + ptr[len(from[best]):]
}

func rebasePointers(ptrs, from, to []string) []string {
	if slices.Equal(from, to) {
		return ptrs
	}
	out := make([]string, len(ptrs))
	for i, p := range ptrs {
		out[i] = rebasePointer(p, from, to)
	}
	return out
}
