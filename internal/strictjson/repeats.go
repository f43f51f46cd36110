package strictjson

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// Repeated member names: exact repeats (RFC 7493 §2.3) and, with
// Limits.FoldCollisions, names equal under Unicode simple case folding.

// checkName looks for an earlier member of the innermost object whose name
// equals name (or folds to the same, with Limits.FoldCollisions) and records
// a Repeat if there is one. It returns errEnough once MaxRepeats are found.
//
// An object of up to smallObject members is searched linearly. A larger
// one has its map (frame.obj), where an exact repeat is found, and with
// Limits.FoldCollisions a set of the hashes of the folds of those of its
// names that are not their own fold (frame.folds): a name folds like an
// earlier one exactly when its fold is an earlier name (the earlier name
// is its own fold) or its fold's hash is in the set (it is not). So each
// name costs at most smallObject-1 comparisons, or a fold, one hash and
// three lookups. Which earlier member a repeat repeats is then found by
// reading the object again up to the name (see earlier): this happens once
// for each repeat, at most MaxRepeats times in a parse, and for two names
// of one object whose folds differ but hash alike, which a random seed
// keeps to about one in 2^64 pairs.
func (p *jsonParser) checkName(name string, off int64) *Error {
	f := &p.frames[len(p.frames)-1]
	var earlier member
	found := false
	if f.obj == nil {
		prior := p.members[f.base:]
		for i := range prior {
			if p.sameName(prior[i].name, name) {
				earlier, found = prior[i], true
				break
			}
		}
		if found && earlier.name != name {
			// An exact repeat of another earlier name is reported as
			// one.
			for i := range prior {
				if prior[i].name == name {
					earlier = prior[i]
					break
				}
			}
		}
	} else {
		_, found = f.obj[name]
		if p.lim.FoldCollisions && p.fold(f, name, false) {
			found = true
		}
		if found {
			earlier, found = p.earlier(f.start, name, off)
		}
	}
	if !found {
		return nil
	}
	var b strings.Builder
	b.WriteString(p.pointer())
	b.WriteByte('/')
	writeToken(&b, name)
	p.repeats = append(p.repeats, Repeat{
		Pointer: b.String(), Offset: off, Name: name,
		Earlier: earlier.name, EarlierOffset: earlier.off, Folded: earlier.name != name,
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

// seed keys the hashes of folded member names, so that a body cannot be
// made of names whose hashes collide.
var seed = maphash.MakeSeed()

// fold adds the hash of name's fold to f.folds when name is not its own
// fold. Unless only adding, it first reports whether name may fold like
// an earlier name of the object: its fold is one (in f.obj), or it is in
// f.folds.
func (p *jsonParser) fold(f *frame, name string, only bool) bool {
	if folded(name) == len(name) {
		// Lower-case ASCII: its own fold, and in f.obj already if
		// another name was.
		return !only && f.folds.has(maphash.String(seed, name))
	}
	p.folded = appendFold(p.folded[:0], name)
	h := maphash.Bytes(seed, p.folded)
	hit := false
	if !only {
		if f.folds.has(h) {
			hit = true
		} else if string(p.folded) != name {
			_, hit = f.obj[string(p.folded)]
		}
	}
	if string(p.folded) != name {
		if f.folds.m == nil {
			if n := len(p.foldSets); n > 0 {
				f.folds.m = p.foldSets[n-1]
				p.foldSets[n-1] = nil
				p.foldSets = p.foldSets[:n-1]
			} else {
				f.folds.m = make(map[uint32]uint32, 2*smallObject)
			}
		}
		f.folds.add(h)
	}
	return hit
}

// hashSet is a set of 64-bit hashes in 8 bytes a slot: m maps the high
// half of a hash to its low half, and more holds the hashes whose high
// half is another's (about n²/2^33 of n hashes).
type hashSet struct {
	m    map[uint32]uint32
	more map[uint64]struct{}
}

func (s *hashSet) has(h uint64) bool {
	if lo, ok := s.m[uint32(h>>32)]; ok && lo == uint32(h) {
		return true
	}
	_, ok := s.more[h]
	return ok
}

// add adds h; s.m is not nil.
func (s *hashSet) add(h uint64) {
	lo, ok := s.m[uint32(h>>32)]
	switch {
	case !ok:
		s.m[uint32(h>>32)] = uint32(h)
	case lo != uint32(h):
		if s.more == nil {
			s.more = make(map[uint64]struct{})
		}
		s.more[h] = struct{}{}
	}
}

// earlier finds the member that a name at off repeats in the object whose
// "{" is at start, by reading the object again up to that name: the first
// member of the same name, or else (with Limits.FoldCollisions) the first
// whose name folds alike. It reports false when there is none: the name's
// fold only hashed like an earlier one's.
func (p *jsonParser) earlier(start int64, name string, off int64) (member, bool) {
	// A *bytes.Buffer is read in place, as in parse.
	dec := jsontext.NewDecoder(bytes.NewBuffer(p.body[start:off]), decoderOptions)
	var found member
	if _, err := dec.ReadToken(); err != nil {
		return found, false // not reached: the object was read once
	}
	for ok := false; ; {
		raw, err := dec.ReadValue()
		if err != nil {
			// The end of the object read so far.
			return found, ok
		}
		at := start + dec.InputOffset() - int64(len(raw))
		unq, err := jsontext.AppendUnquote(p.unquoted[:0], raw)
		if err != nil {
			return found, ok // not reached: the name was read once
		}
		p.unquoted = unq
		switch {
		case string(unq) == name:
			return member{name: name, off: at}, true
		case !ok && p.lim.FoldCollisions && strings.EqualFold(string(unq), name):
			found, ok = member{name: string(unq), off: at}, true
		}
		if err := dec.SkipValue(); err != nil {
			return found, ok
		}
	}
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
