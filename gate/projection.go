package gate

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
