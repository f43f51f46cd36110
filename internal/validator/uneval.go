package validator

// unevaluatedProperties and unevaluatedItems (JSON Schema Core 2020-12
// §11) apply to the members and items no adjacent keyword evaluated,
// counting the subschemas that applied to the same instance and passed.
// The evaluated set is computed only for nodes that carry these keywords,
// after every other keyword of the node passed.

// evaluatedProps adds to set the members of obj that n (valid for obj)
// evaluated; it returns true when n evaluated every member.
func (r *run) evaluatedProps(n *node, obj map[string]any, set map[string]bool, depth int) bool {
	if n == nil || n.boolean != 0 || depth > maxEvalDepth {
		return false
	}
	if n.unevalProps != nil || (n.additional != nil && n.additional.boolean != -1) {
		return true
	}
	for name := range obj {
		if n.declares(name) {
			set[name] = true
		}
	}
	for _, m := range r.appliedTo(n, obj) {
		if r.evaluatedProps(m, obj, set, depth+1) {
			return true
		}
	}
	return false
}

// maxEvalDepth bounds how deep the evaluated sets follow subschemas
// applied in place (strict loading refuses cycles without descent; this
// keeps a pathological chain linear).
const maxEvalDepth = 64

// appliedTo lists the subschemas of n that applied to v and passed: $ref,
// allOf, the passing anyOf/oneOf branches, if with then (or else), and
// the dependentSchemas of present members.
func (r *run) appliedTo(n *node, v any) []*node {
	var out []*node
	if n.ref != nil {
		out = append(out, n.ref)
	}
	out = append(out, n.allOf...)
	for _, b := range n.anyOf {
		if r.try(b, v) {
			out = append(out, b)
		}
	}
	for _, b := range n.oneOf {
		if r.try(b, v) {
			out = append(out, b)
		}
	}
	if n.ifN != nil {
		if r.try(n.ifN, v) {
			out = append(out, n.ifN)
			if n.thenN != nil {
				out = append(out, n.thenN)
			}
		} else if n.elseN != nil {
			out = append(out, n.elseN)
		}
	}
	if obj, ok := v.(map[string]any); ok {
		for _, ds := range n.depSchemas {
			if _, present := obj[ds.name]; present {
				out = append(out, ds.n)
			}
		}
	}
	return out
}

// unevaluatedProps validates the members no other keyword evaluated
// against unevaluatedProperties, in code point order of their names.
func (r *run) unevaluatedProps(n *node, obj map[string]any) bool {
	set := map[string]bool{}
	saved := n.unevalProps
	// n's own unevaluatedProperties does not count for itself.
	shadow := *n
	shadow.unevalProps = nil
	if r.evaluatedProps(&shadow, obj, set, 0) {
		return true
	}
	var rest []string
	for name := range obj {
		if !set[name] {
			rest = append(rest, name)
		}
	}
	sortStrings(rest)
	valid := true
	for _, name := range rest {
		r.push(name)
		ok := r.validate(saved, obj[name])
		r.pop()
		if !ok {
			if !r.more() {
				return false
			}
			valid = false
		}
	}
	return valid
}

// evaluatedItems marks in seen the items of arr that n (valid for arr)
// evaluated; it returns true when n evaluated every item.
func (r *run) evaluatedItems(n *node, arr []any, seen []bool, depth int) bool {
	if n == nil || n.boolean != 0 || depth > maxEvalDepth {
		return false
	}
	if n.items != nil || n.unevalItems != nil {
		return true
	}
	for i := 0; i < len(n.prefix) && i < len(arr); i++ {
		seen[i] = true
	}
	if n.contains != nil {
		for i, x := range arr {
			if !seen[i] && r.try(n.contains, x) {
				seen[i] = true
			}
		}
	}
	for _, m := range r.appliedTo(n, arr) {
		if r.evaluatedItems(m, arr, seen, depth+1) {
			return true
		}
	}
	return false
}

// unevaluatedItems validates the items no other keyword evaluated against
// unevaluatedItems, in index order.
func (r *run) unevaluatedItems(n *node, arr []any) bool {
	seen := make([]bool, len(arr))
	shadow := *n
	shadow.unevalItems = nil
	if r.evaluatedItems(&shadow, arr, seen, 0) {
		return true
	}
	valid := true
	for i, x := range arr {
		if seen[i] {
			continue
		}
		r.pushIndex(i)
		ok := r.validate(n.unevalItems, x)
		r.pop()
		if !ok {
			if !r.more() {
				return false
			}
			valid = false
		}
	}
	return valid
}
