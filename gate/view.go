package gate

import (
	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/semantic"
)

// The semantic rules read a value, not a tape, and the built-in ones only
// look up their own JSON Pointers. So the gate builds from the tape only
// what those pointers reach — every object and array on the way, holding
// only the members and elements some pointer goes on into (others of an
// array stay nil, so indexes hold), and the whole value where a pointer
// ends — and no map for the rest of the body. A contract with a CEL or
// custom rule, or a pointer to the whole value, gets the whole value. The projection
// reads the tape directly (projectTape), and the text policy and the
// inexact-number warnings read the projected data (walkProjected).

// readPaths lists the pointers an upstream version's semantic rules look
// up, and whether they need the whole value instead. (The projection reads
// the tape itself: projectTape.)
func readPaths(u *upstream) (paths []jsonpointer.Pointer, whole bool) {
	for _, r := range u.rules {
		switch r := r.(type) {
		case semantic.Binding:
			paths = append(paths, r.Pointer)
		case semantic.ContextMatch:
			paths = append(paths, r.Pointer)
		case semantic.Freshness:
			paths = append(paths, r.Pointer)
		case semantic.Membership:
			paths = append(paths, r.Pointer)
		case semantic.Count:
			paths = append(paths, r.Pointer)
			if r.EqualsPointer != nil {
				paths = append(paths, r.EqualsPointer)
			}
		default:
			return nil, true // CEL and custom rules read anything
		}
	}
	for _, p := range paths {
		if len(p) == 0 {
			return nil, true
		}
	}
	return paths, false
}

// view is the value u's semantic rules read from t (see readPaths); nil
// when nothing reads one.
func (u *upstream) view(t *strictjson.Tape) any {
	switch {
	case u.whole:
		return t.Value(0)
	case len(u.paths) == 0:
		return nil
	}
	return viewAt(t, 0, u.paths, 0)
}

// viewAt builds the part of the value at i that paths (each the rest of
// a pointer, at depth tokens in) reach.
func viewAt(t *strictjson.Tape, i int32, paths []jsonpointer.Pointer, depth int) any {
	for _, p := range paths {
		if len(p) == depth {
			return t.Value(i) // a pointer ends here: all of it
		}
	}
	nd := &t.Nodes[i]
	switch nd.Kind {
	case strictjson.KindObject:
		obj := map[string]any{}
		for j := i + 1; j < nd.End; j = t.Nodes[j].End {
			name := t.Name(j)
			matched, deeper := false, false
			for _, p := range paths {
				if p[depth] == name {
					matched, deeper = true, deeper || len(p) > depth+1
				}
			}
			switch {
			case !matched:
			case !deeper:
				obj[name] = t.Value(j)
			default:
				var next []jsonpointer.Pointer
				for _, p := range paths {
					if p[depth] == name {
						next = append(next, p)
					}
				}
				obj[name] = viewAt(t, j, next, depth+1)
			}
		}
		return obj
	case strictjson.KindArray:
		// The pointers that go into every element ("*"), once; those that
		// name one index, per element.
		var star []jsonpointer.Pointer
		indexed := false
		for _, p := range paths {
			if p[depth] == "*" {
				star = append(star, p)
			} else {
				indexed = true
			}
		}
		arr := make([]any, nd.Len)
		k := 0
		for j := i + 1; j < nd.End; j, k = t.Nodes[j].End, k+1 {
			next := star
			if indexed {
				next = slicesClip(star)
				for _, p := range paths {
					if at, ok := jsonpointer.Index(p[depth], int(nd.Len)); ok && at == k {
						next = append(next, p)
					}
				}
			}
			if next != nil {
				arr[k] = viewAt(t, j, next, depth+1)
			}
		}
		return arr
	}
	// A pointer that goes on into a scalar finds nothing, here as in the
	// whole value.
	return t.Value(i)
}

// slicesClip returns s with no room to append into (append copies).
func slicesClip(s []jsonpointer.Pointer) []jsonpointer.Pointer { return s[:len(s):len(s)] }

// lookupTape finds the value at p on t (jsonpointer.Pointer.Lookup's
// rules: canonical array indexes, "*" an ordinary member name).
func lookupTape(t *strictjson.Tape, p jsonpointer.Pointer) (int32, bool) {
	i := int32(0)
	for _, tok := range p {
		j, ok := stepTape(t, i, tok)
		if !ok {
			return 0, false
		}
		i = j
	}
	return i, true
}

// stepTape follows one token from the value at i: a member of an object,
// an element of an array by canonical index.
func stepTape(t *strictjson.Tape, i int32, tok string) (int32, bool) {
	switch t.Nodes[i].Kind {
	case strictjson.KindObject:
		return t.Member(i, tok)
	case strictjson.KindArray:
		k, ok := jsonpointer.Index(tok, int(t.Nodes[i].Len))
		if !ok {
			return 0, false
		}
		return t.Element(i, k)
	}
	return 0, false
}
