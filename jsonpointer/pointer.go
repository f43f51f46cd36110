// Package jsonpointer implements JSON Pointer (RFC 6901) over decoded JSON
// values (map[string]any, []any, string, json.Number, bool or nil), with one
// extension used by airlock's projections: a reference token that is
// exactly "*" stands for every element of an array (Pointer.Expand).
//
// Pointers are parsed once (Parse) and stored as their unescaped reference
// tokens; String gives the RFC 6901 spelling back.
package jsonpointer

import (
	"fmt"
	"strconv"
	"strings"
)

// Pointer is a parsed RFC 6901 JSON Pointer: its reference tokens, unescaped
// ("~1" → "/", "~0" → "~"). The empty pointer "" refers to the whole document.
//
// One extension, for projections only: a token that is exactly "*" matches
// every element of an array (see Pointer.Expand and Pointer.Wildcard). A
// member literally named "*" is still reachable through an object by Lookup.
type Pointer []string

// Parse parses s per RFC 6901 §3. It returns an error for a pointer
// that does not start with "/" (unless empty) and for a "~" not followed by
// "0" or "1" (RFC 6901 §4).
func Parse(s string) (Pointer, error) {
	if s == "" {
		return Pointer{}, nil
	}
	if s[0] != '/' {
		return nil, fmt.Errorf("JSON Pointer %q must be empty or start with \"/\" (RFC 6901 §3)", s)
	}
	parts := strings.Split(s[1:], "/")
	for i, p := range parts {
		if !strings.Contains(p, "~") {
			continue
		}
		for j := 0; j < len(p); j++ {
			if p[j] == '~' && (j+1 == len(p) || (p[j+1] != '0' && p[j+1] != '1')) {
				return nil, fmt.Errorf("JSON Pointer %q: \"~\" must be followed by 0 or 1 (RFC 6901 §4)", s)
			}
		}
		parts[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(p)
	}
	return Pointer(parts), nil
}

// String returns the RFC 6901 spelling of p (the inverse of Parse): ""
// for the whole document, otherwise "/" before each escaped token.
func (p Pointer) String() string {
	var b strings.Builder
	for _, t := range p {
		b.WriteByte('/')
		b.WriteString(EscapeToken(t))
	}
	return b.String()
}

// EscapeToken escapes one reference token per RFC 6901 §3 ("~" → "~0", "/" → "~1").
func EscapeToken(t string) string {
	if !strings.ContainsAny(t, "~/") {
		return t
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(t)
}

// Wildcard reports whether p has a "*" token.
func (p Pointer) Wildcard() bool {
	for _, t := range p {
		if t == "*" {
			return true
		}
	}
	return false
}

// Lookup evaluates p against a decoded JSON value (map[string]any, []any,
// string, json.Number, bool or nil) per RFC 6901 §4. It reports false when a
// token names a missing member, an array index is not a canonical decimal
// ("0", "17"; not "01" or "-"), is out of range, or the value is a scalar.
// A "*" token is an ordinary member name here; use Pointer.Expand to map it
// over an array.
func (p Pointer) Lookup(v any) (any, bool) {
	for _, t := range p {
		switch c := v.(type) {
		case map[string]any:
			next, ok := c[t]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, ok := arrayIndex(t, len(c))
			if !ok {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// LookupString is Lookup for a value that must be a JSON string.
func (p Pointer) LookupString(v any) (string, bool) {
	x, ok := p.Lookup(v)
	if !ok {
		return "", false
	}
	s, ok := x.(string)
	return s, ok
}

// Index reads t as an index into an array of n elements, as Lookup does:
// a canonical decimal ("0", "17"; not "01", "-" or "+1") below n.
func Index(t string, n int) (int, bool) { return arrayIndex(t, n) }

func arrayIndex(t string, n int) (int, bool) {
	if t == "" || len(t) > 1 && t[0] == '0' {
		return 0, false
	}
	for _, c := range []byte(t) {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	i, err := strconv.Atoi(t)
	if err != nil || i >= n {
		return 0, false
	}
	return i, true
}

// Expand evaluates p against a decoded JSON value the way airlock's
// projection stage does: tokens are looked up as by Lookup, except that a
// token "*" requires an array and maps the rest of p over every element,
// giving a new []any (nested "*" tokens give nested arrays; an empty array
// gives an empty array). It reports false when any path reaches nothing: a
// missing member, a bad index, a "*" over a non-array, or an element that
// lacks the rest of the path. The values returned are the input's own
// (not copied) except for the arrays "*" builds.
func (p Pointer) Expand(v any) (any, bool) {
	for i, t := range p {
		if t == "*" {
			arr, ok := v.([]any)
			if !ok {
				return nil, false
			}
			out := make([]any, 0, len(arr))
			for _, el := range arr {
				x, ok := p[i+1:].Expand(el)
				if !ok {
					return nil, false
				}
				out = append(out, x)
			}
			return out, true
		}
		next, ok := p[i : i+1].Lookup(v)
		if !ok {
			return nil, false
		}
		v = next
	}
	return v, true
}
