package gate

import (
	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/jsonpointer"
)

// project runs the projection stage: it builds a new object from the
// allowlist, each agent field taking the value at its JSON Pointer
// (RFC 6901; jsonpointer.Pointer.Expand). A "*" token maps every element of an array (nested
// stars give nested arrays). A pointer that reaches nothing leaves its field
// out; the closed agent-facing schema then decides whether that is allowed.
func project(fields []projField, v any) map[string]any {
	out := make(map[string]any, len(fields))
	for _, f := range fields {
		if x, ok := f.pointer.Expand(v); ok {
			out[f.field] = x
		}
	}
	return out
}

// projectTape is project for a value on a tape: the same fields, each
// built from the tape (Expand's rules) without building the rest of the
// value.
func projectTape(fields []projField, t *strictjson.Tape) map[string]any {
	out := make(map[string]any, len(fields))
	for _, f := range fields {
		if x, ok := expandTape(t, 0, f.pointer); ok {
			out[f.field] = x
		}
	}
	return out
}

// expandTape is jsonpointer.Pointer.Expand on the value at i of t.
func expandTape(t *strictjson.Tape, i int32, p jsonpointer.Pointer) (any, bool) {
	for k, tok := range p {
		nd := &t.Nodes[i]
		if tok == "*" {
			if nd.Kind != strictjson.KindArray {
				return nil, false
			}
			out := make([]any, 0, nd.Len)
			for j := i + 1; j < nd.End; j = t.Nodes[j].End {
				x, ok := expandTape(t, j, p[k+1:])
				if !ok {
					return nil, false
				}
				out = append(out, x)
			}
			return out, true
		}
		j, ok := stepTape(t, i, tok)
		if !ok {
			return nil, false
		}
		i = j
	}
	return t.Value(i), true
}

// walkProjected calls at for each value a projection pointer reached in
// the upstream value, with its location there, in document order — but
// reads x, the field's projected data (Expand's result): the tokens other
// than "*" only add to the location, and at each "*" x is the array
// Expand built, one element per element of the upstream array. A field is
// in the data only when the pointer reached something on every path, so
// the walk meets exactly the values Expand took. It stops when at returns
// false (and then returns false). Locations share one growing stack: at
// must copy a location it keeps (Pointer.String).
func walkProjected(p jsonpointer.Pointer, x any, loc jsonpointer.Pointer, at func(x any, loc jsonpointer.Pointer) bool) bool {
	for i, tok := range p {
		if tok == "*" {
			arr, _ := x.([]any)
			for j, el := range arr {
				if !walkProjected(p[i+1:], el, append(loc, index(j)), at) {
					return false
				}
			}
			return true
		}
		loc = append(loc, tok)
	}
	return at(x, loc)
}
