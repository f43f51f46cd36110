package validator

import "github.com/airlockdev/airlock/internal/strictjson"

// unevaluatedProperties and unevaluatedItems (JSON Schema Core 2020-12
// §11) apply to the members and items no adjacent keyword evaluated,
// counting the subschemas that applied to the same instance and passed.
// The evaluated set is computed only for nodes that carry these keywords,
// after every other keyword of the node passed.

// evaluatedProps adds to set the members of the object at i that n
// (valid for it) evaluated; it returns true when n evaluated every member.
// The in-place subschemas form no cycle (Compile falls back to v6 for one
// that does), so the recursion ends; each branch's verdict comes from
// run.tried.
func (r *run) evaluatedProps(n *node, i int32, set map[string]bool) bool {
	if n == nil || n.boolean != 0 {
		return false
	}
	if n.unevalProps != nil || n.additional != nil {
		return true
	}
	end := r.t.Nodes[i].End
	for j := i + 1; j < end; j = r.t.Nodes[j].End {
		if name := r.t.Name(j); n.declares(name) {
			set[name] = true
		}
	}
	for _, m := range r.appliedTo(n, i) {
		if r.evaluatedProps(m, i, set) {
			return true
		}
	}
	return false
}

// appliedTo lists the subschemas of n that applied to the value at i and
// passed: $ref, allOf, the passing anyOf/oneOf branches, if with then (or
// else), and the dependentSchemas of present members.
func (r *run) appliedTo(n *node, i int32) []*node {
	var out []*node
	if n.ref != nil {
		out = append(out, n.ref)
	}
	out = append(out, n.allOf...)
	for _, b := range n.anyOf {
		if r.try(b, i) {
			out = append(out, b)
		}
	}
	for _, b := range n.oneOf {
		if r.try(b, i) {
			out = append(out, b)
		}
	}
	if n.ifN != nil {
		if r.try(n.ifN, i) {
			out = append(out, n.ifN)
			if n.thenN != nil {
				out = append(out, n.thenN)
			}
		} else if n.elseN != nil {
			out = append(out, n.elseN)
		}
	}
	if r.t.Nodes[i].Kind == strictjson.KindObject {
		for _, ds := range n.depSchemas {
			if r.present(i, ds.name) {
				out = append(out, ds.n)
			}
		}
	}
	return out
}

// unevaluatedProps validates the members no other keyword evaluated
// against unevaluatedProperties, in code point order of their names.
func (r *run) unevaluatedProps(n *node, i int32) bool {
	set := map[string]bool{}
	// n's own unevaluatedProperties does not count for itself.
	shadow := *n
	shadow.unevalProps = nil
	if r.evaluatedProps(&shadow, i, set) {
		return true
	}
	var rest []int32
	end := r.t.Nodes[i].End
	for j := i + 1; j < end; j = r.t.Nodes[j].End {
		if !set[r.t.Name(j)] {
			rest = append(rest, j)
		}
	}
	sortByName(r.t, rest)
	valid := true
	for _, j := range rest {
		if !r.member(n.unevalProps, j) {
			if !r.more() {
				return false
			}
			valid = false
		}
	}
	return valid
}

// evaluatedItems marks in seen the items of the array at i that n (valid
// for it) evaluated; it returns true when n evaluated every item.
func (r *run) evaluatedItems(n *node, i int32, seen []bool) bool {
	if n == nil || n.boolean != 0 {
		return false
	}
	if n.items != nil || n.unevalItems != nil {
		return true
	}
	for k := 0; k < len(n.prefix) && k < len(seen); k++ {
		seen[k] = true
	}
	if n.contains != nil {
		end := r.t.Nodes[i].End
		for j, k := i+1, 0; j < end; j, k = r.t.Nodes[j].End, k+1 {
			if !seen[k] && r.try(n.contains, j) {
				seen[k] = true
			}
		}
	}
	for _, m := range r.appliedTo(n, i) {
		if r.evaluatedItems(m, i, seen) {
			return true
		}
	}
	return false
}

// unevaluatedItems validates the items no other keyword evaluated against
// unevaluatedItems, in index order.
func (r *run) unevaluatedItems(n *node, i int32) bool {
	seen := make([]bool, r.t.Nodes[i].Len)
	shadow := *n
	shadow.unevalItems = nil
	if r.evaluatedItems(&shadow, i, seen) {
		return true
	}
	valid := true
	end := r.t.Nodes[i].End
	for j, k := i+1, 0; j < end; j, k = r.t.Nodes[j].End, k+1 {
		if seen[k] {
			continue
		}
		if !r.element(n.unevalItems, j, k) {
			if !r.more() {
				return false
			}
			valid = false
		}
	}
	return valid
}
