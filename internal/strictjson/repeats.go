package strictjson

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Repeated member names: exact repeats (RFC 7493 §2.3) and, with
// Limits.FoldCollisions, names equal under Unicode simple case folding.

// checkName looks for an earlier member of the innermost object whose name
// equals name (or folds to the same, with Limits.FoldCollisions) and records
// a Repeat if there is one. It returns errEnough once MaxRepeats are found.
//
// An object of up to smallObject members is searched linearly; a larger one
// keeps a map from each name (or its folded form) to its first member, built
// when the object passes smallObject members. So each name costs at most
// smallObject-1 comparisons, or one fold and one map lookup.
func (p *jsonParser) checkName(name string, off int64) *Error {
	f := &p.frames[len(p.frames)-1]
	prior := p.members[f.base:]
	j := -1
	if f.keys == nil && len(prior) < smallObject {
		for i := range prior {
			if p.sameName(prior[i].name, name) {
				j = i
				break
			}
		}
	} else {
		if f.keys == nil {
			f.keys = make(map[string]int, 2*smallObject)
			for i := range prior {
				k := p.key(prior[i].name)
				if _, ok := f.keys[k]; !ok {
					f.keys[k] = i
				}
			}
		}
		k := p.key(name)
		if i, ok := f.keys[k]; ok {
			j = i
		} else {
			f.keys[k] = len(prior)
		}
	}
	if j < 0 {
		return nil
	}
	earlier, folded := prior[j], prior[j].name != name
	if folded {
		// An exact repeat of another earlier name is reported as one. This
		// scan runs at most MaxRepeats times in a parse.
		for i := range prior {
			if prior[i].name == name {
				earlier, folded = prior[i], false
				break
			}
		}
	}
	var b strings.Builder
	b.WriteString(p.pointer())
	b.WriteByte('/')
	writeToken(&b, name)
	p.repeats = append(p.repeats, Repeat{
		Pointer: b.String(), Offset: off, Name: name,
		Earlier: earlier.name, EarlierOffset: earlier.off, Folded: folded,
	})
	if len(p.repeats) >= MaxRepeats {
		return errEnough
	}
	return nil
}

// sameName compares two member names of one object.
func (p *jsonParser) sameName(a, b string) bool {
	if p.lim.FoldCollisions {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// key is the map key of a member name: the name itself, or its folded form
// with Limits.FoldCollisions (FoldName(a) == FoldName(b) exactly when
// strings.EqualFold(a, b)).
func (p *jsonParser) key(name string) string {
	if p.lim.FoldCollisions {
		return FoldName(name)
	}
	return name
}

// FoldName returns s with every rune replaced by one representative of its
// Unicode simple case folding orbit (unicode.SimpleFold): the orbit's
// smallest rune, in lower case when that is an ASCII capital. Two strings
// have the same FoldName exactly when strings.EqualFold reports them equal:
// FoldName("Role") == FoldName("ROLE") == "role", and "ſ" (U+017F) and the
// Kelvin sign (U+212A) fold to "s" and "k". A string that is its own fold
// (lower-case ASCII, digits, most punctuation) is returned without a copy.
// Invalid UTF-8 bytes are kept as they are.
func FoldName(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			break
		}
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b.WriteByte(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteByte(s[i])
		} else {
			b.WriteRune(foldRune(r))
		}
		i += n
	}
	return b.String()
}

// foldRune is the representative of r's simple case folding orbit.
func foldRune(r rune) rune {
	m := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < m {
			m = f
		}
	}
	if 'A' <= m && m <= 'Z' {
		m += 'a' - 'A'
	}
	return m
}

// repeatError is the refusal of the repeats found; stopped is what ended
// the parse early (errEnough, another refusal) or nil when the whole text
// was read.
func (p *jsonParser) repeatError(stopped *Error) *Error {
	first := p.repeats[0]
	r := &Error{Reason: ReasonDuplicate, Offset: first.Offset, Pointer: first.Pointer, Repeats: p.repeats}
	if first.Folded {
		r.Reason = ReasonFoldCollision
	}
	p.repeats = nil
	var b strings.Builder
	if len(r.Repeats) > 1 {
		fmt.Fprintf(&b, "%d repeated member names: ", len(r.Repeats))
	}
	for i, rep := range r.Repeats {
		if i > 0 {
			b.WriteString("; ")
		}
		if rep.Folded {
			fmt.Fprintf(&b, "member name %q at %q (byte %d) equals %q (byte %d) under Unicode simple case folding",
				clip(rep.Name), clip(rep.Pointer), rep.Offset, clip(rep.Earlier), rep.EarlierOffset)
		} else {
			fmt.Fprintf(&b, "duplicate member name %q at %q (byte %d; first at byte %d)",
				clip(rep.Name), clip(rep.Pointer), rep.Offset, rep.EarlierOffset)
		}
	}
	switch {
	case stopped == errEnough:
		fmt.Fprintf(&b, "; not looking for more after %d", MaxRepeats)
	case stopped != nil:
		fmt.Fprintf(&b, "; the parse stopped at byte %d: %s", stopped.Offset, stopped.Reason)
	}
	r.Message = b.String()
	return r
}
