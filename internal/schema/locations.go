package schema

import (
	"container/heap"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/airlockdev/airlock/jsonpointer"
)

// MaxLocations is the most failing instance locations a refusal lists.
const MaxLocations = 16

// MaxLocationCauses is the most causes of a validation error's tree that
// listing its failing locations examines (each cause visited, and each
// cause whose causes are looked at, counts once), so that the list costs at
// most MaxLocationCauses steps and heap operations on as many entries,
// whatever the size of the tree the validator built.
const MaxLocationCauses = 4096

// Locations lists up to limit distinct RFC 6901 locations at which the value
// failed, from the validator's tree of causes under e: the most specific
// cause's location first (MostSpecific), then the leaves of the tree, each
// cause's causes taken in instance location order (array indexes by
// number) and then schema location order, so that the list never depends
// on the validator's map order. Where a oneOf or anyOf failed in every
// branch, only the branch MostSpecific follows is listed when it is on the
// chosen cause's way; elsewhere the oneOf or anyOf itself is one location.
//
// The walk is bounded by MaxLocationCauses: a cause with more causes than
// the budget left is listed itself, not looked into, and the walk ends when
// the budget is spent, when limit locations are found, or at the end of the
// tree. A limit below 1 means 1.
func Locations(e *jsonschema.ValidationError, limit int) []string {
	return locations(mostSpecificPath(e), limit)
}

func locations(path []*jsonschema.ValidationError, limit int) []string {
	w := locWalk{path: path, budget: MaxLocationCauses, max: max(limit, 1)}
	w.add(path[len(path)-1])
	if w.max > 1 {
		w.visit(path[0])
	}
	return w.out
}

type locWalk struct {
	path   []*jsonschema.ValidationError // the chosen cause's way down
	budget int
	max    int
	out    []string
}

// add lists n's instance location once; it reports whether more are wanted.
func (w *locWalk) add(n *jsonschema.ValidationError) bool {
	loc := jsonpointer.Pointer(n.InstanceLocation).String()
	if !slices.Contains(w.out, loc) {
		w.out = append(w.out, loc)
	}
	return len(w.out) < w.max
}

// visit walks n; it reports whether the walk goes on.
func (w *locWalk) visit(n *jsonschema.ValidationError) bool {
	if w.budget--; w.budget < 0 {
		return false
	}
	if len(n.Causes) == 0 {
		return w.add(n)
	}
	switch n.ErrorKind.(type) {
	case *kind.OneOf, *kind.AnyOf:
		i := slices.Index(w.path, n)
		if i < 0 || i+1 == len(w.path) {
			return w.add(n)
		}
		return w.visit(w.path[i+1])
	}
	if len(n.Causes) > w.budget {
		return w.add(n)
	}
	w.budget -= len(n.Causes)
	// The causes in order, taken from a heap: the walk often stops after a
	// few, so the rest are never sorted.
	h := causeHeap(slices.Clone(n.Causes))
	heap.Init(&h)
	for h.Len() > 0 {
		if !w.visit(heap.Pop(&h).(*jsonschema.ValidationError)) {
			return false
		}
	}
	return true
}

// causeHeap orders causes by instance location (compareLocations), then
// schema location.
type causeHeap []*jsonschema.ValidationError

func (h causeHeap) Len() int { return len(h) }
func (h causeHeap) Less(i, j int) bool {
	if d := compareLocations(h[i].InstanceLocation, h[j].InstanceLocation); d != 0 {
		return d < 0
	}
	return h[i].SchemaURL < h[j].SchemaURL
}
func (h causeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *causeHeap) Push(x any)   { *h = append(*h, x.(*jsonschema.ValidationError)) }
func (h *causeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return x
}

// compareLocations orders instance locations token by token, array
// indexes (tokens of digits) by number, so that /items/2 comes before
// /items/10.
func compareLocations(a, b []string) int {
	for i := range min(len(a), len(b)) {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if digits(x) && digits(y) && len(x) != len(y) {
			return len(x) - len(y)
		}
		return strings.Compare(x, y)
	}
	return len(a) - len(b)
}

// digits reports whether s is a non-empty run of ASCII digits without a
// leading zero (an array index as RFC 6901 writes it).
func digits(s string) bool {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
