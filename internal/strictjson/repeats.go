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
// smallObject-1 comparisons, or one fold and one map lookup. The maps are
// reused from one large object to the next; a folded name that differs from
// the name is kept in p.text.
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
			if n := len(p.keyMaps); n > 0 {
				f.keys = p.keyMaps[n-1]
				p.keyMaps[n-1] = nil
				p.keyMaps = p.keyMaps[:n-1]
			} else {
				f.keys = make(map[string]int, 2*smallObject)
			}
			for i := range prior {
				p.findKey(f.keys, prior[i].name, i)
			}
		}
		if i, ok := p.findKey(f.keys, name, len(prior)); ok {
			j = i
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

// findKey looks a member name up in keys, an object's map from the key of
// each name to its first member, and adds it with member index i when it
// is not there. The key is the name itself, or its folded form with
// Limits.FoldCollisions (FoldName(a) == FoldName(b) exactly when
// strings.EqualFold(a, b)).
func (p *jsonParser) findKey(keys map[string]int, name string, i int) (int, bool) {
	k := name
	if p.lim.FoldCollisions && folded(name) < len(name) {
		p.folded = appendFold(p.folded[:0], name)
		if j, ok := keys[string(p.folded)]; ok {
			return j, true
		}
		k = p.text.add(p.folded, p.size-p.dec.InputOffset()+int64(len(p.folded)))
	} else if j, ok := keys[k]; ok {
		return j, true
	}
	keys[k] = i
	return 0, false
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
	if folded(s) == len(s) {
		return s
	}
	return string(appendFold(make([]byte, 0, len(s)), s))
}

// folded returns the length of the longest prefix of s that is its own
// fold: bytes of ASCII other than capitals.
func folded(s string) int {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			break
		}
		i++
	}
	return i
}

// appendFold appends FoldName(s) to dst. The fold is never longer than s:
// the representative of an orbit is its smallest rune, which is not
// longer in UTF-8 than any other of the orbit.
func appendFold(dst []byte, s string) []byte {
	i := folded(s)
	dst = append(dst, s[:i]...)
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, s[i])
		} else {
			dst = utf8.AppendRune(dst, foldRune(r))
		}
		i += n
	}
	return dst
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
