package strictjson

import (
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// The fast path of ParseTape: a scanner of its own that lays out the
// bodies the strict parse admits — nearly every body an upstream sends —
// without jsontext's machinery. It knows only success: at anything that
// is or might be a refusal (a syntax error, a byte that is not UTF-8, a
// lone surrogate, a control character in a string, a number or string past
// the limits or the number policy, nesting past the depth limit, a
// repeated member name or one that folds like another, an object of more
// than smallObject members, data after the value) it gives up, and
// ParseTape runs the jsontext parser over the whole body, which finds the
// refusal and reports it exactly. So a refused body costs at most one
// scan more, and what the fast path admits is what the parser admits: the
// tests hold the two to the same tape on the JSONTestSuite corpus and
// under FuzzTape.

// scanner is the fast path's state, pooled.
type scanner struct {
	b     []byte
	i     int
	lim   Limits
	t     *Tape
	text  strings.Builder
	depth int
	// names holds, for each open object, the names read so far (at most
	// smallObject each); spans maps a name to its span in the text.
	names   []seenName
	spans   map[string]span
	scratch []byte
}

var scanners = sync.Pool{New: func() any { return new(scanner) }}

// seenName is a member name read, and whether it is all ASCII: two ASCII
// names of different lengths never fold alike, so they are not compared.
type seenName struct {
	s     string
	ascii bool
}

// plain marks the bytes a string's common case is made of: printable
// ASCII other than the quote and the backslash.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// isASCII reports whether s is all ASCII.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// fastTape lays body out on a tape, or reports false when the parser must
// judge it (see above).
func fastTape(body []byte, lim Limits) (*Tape, bool) {
	s := scanners.Get().(*scanner)
	defer func() {
		s.b, s.t, s.text = nil, nil, strings.Builder{}
		s.names = s.names[:0]
		if len(s.spans) > maxInterned {
			s.spans = nil
		} else {
			clear(s.spans)
		}
		if cap(s.scratch) > maxPooledScratch {
			s.scratch = nil
		}
		scanners.Put(s)
	}()
	s.b, s.i, s.lim, s.depth = body, 0, lim, 0
	s.t = &Tape{Nodes: make([]Node, 0, countValues(body))}
	s.text.Grow(len(body))
	s.space()
	if !s.value(span{}) {
		return nil, false
	}
	s.space()
	if s.i != len(s.b) {
		return nil, false
	}
	s.t.text = s.text.String()
	return s.t, true
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// emit appends a node and returns its index.
func (s *scanner) emit(k Kind, name, text span) int32 {
	i := int32(len(s.t.Nodes))
	s.t.Nodes = append(s.t.Nodes, Node{Kind: k, name: name, text: text, End: i + 1})
	return i
}

// value reads one value, named name when it is a member.
func (s *scanner) value(name span) bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.object(name)
	case c == '[':
		return s.array(name)
	case c == '"':
		sp, ok := s.str()
		if ok {
			s.emit(KindString, name, sp)
		}
		return ok
	case c == 't':
		return s.literal("true", KindTrue, name)
	case c == 'f':
		return s.literal("false", KindFalse, name)
	case c == 'n':
		return s.literal("null", KindNull, name)
	case c == '-' || c >= '0' && c <= '9':
		return s.number(name)
	}
	return false
}

func (s *scanner) literal(word string, k Kind, name span) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	if !s.delimited() {
		return false
	}
	s.emit(k, name, span{})
	return true
}

// delimited reports whether a scalar just read ends where a value may:
// at the end, whitespace, a comma or a closing bracket.
func (s *scanner) delimited() bool {
	if s.i == len(s.b) {
		return true
	}
	switch s.b[s.i] {
	case ' ', '\t', '\n', '\r', ',', ']', '}':
		return true
	}
	return false
}

// digits returns the index after the run of ASCII digits that starts at i.
func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// number reads a number token (RFC 8259 §6) within the length limit and
// the number policy (numberProblem).
func (s *scanner) number(name span) bool {
	start := s.i
	b := s.b
	i := s.i
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		d := digits(b, i+1)
		if d == i+1 {
			return false
		}
		i = d
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := digits(b, i)
		if d == i {
			return false
		}
		i = d
	}
	s.i = i
	if !s.delimited() || i-start > s.lim.MaxNumberLength {
		return false
	}
	sp := span{uint32(s.text.Len()), uint32(i - start)}
	s.text.Write(b[start:i])
	if numberProblem(s.text.String()[sp.off:]) != "" {
		return false
	}
	s.emit(KindNumber, name, sp)
	return true
}

// str reads a string whose quote is next, unescaped into the text, within
// the length limit; false at anything the parser refuses.
func (s *scanner) str() (span, bool) {
	b := s.b
	i := s.i + 1
	start := i
	// The common case: printable ASCII, no escape.
	for i < len(b) && plain[b[i]] {
		i++
	}
	if i < len(b) && b[i] == '"' {
		if i-start > s.lim.MaxStringLength {
			return span{}, false
		}
		sp := span{uint32(s.text.Len()), uint32(i - start)}
		s.text.Write(b[start:i])
		s.i = i + 1
		return sp, true
	}
	out := append(s.scratch[:0], b[start:i]...)
	for {
		if i >= len(b) {
			return span{}, false
		}
		c := b[i]
		switch {
		case c == '"':
			s.scratch = out
			if len(out) > s.lim.MaxStringLength {
				return span{}, false
			}
			sp := span{uint32(s.text.Len()), uint32(len(out))}
			s.text.Write(out)
			s.i = i + 1
			return sp, true
		case c < 0x20:
			return span{}, false
		case c == '\\':
			if i+1 >= len(b) {
				return span{}, false
			}
			i++
			switch b[i] {
			case '"', '\\', '/':
				out = append(out, b[i])
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := hex4(b, i+1)
				if !ok {
					return span{}, false
				}
				i += 4
				if utf16.IsSurrogate(r) {
					// Only a high surrogate followed by an escaped low one.
					if r >= 0xDC00 || i+6 >= len(b) || b[i+1] != '\\' || b[i+2] != 'u' {
						return span{}, false
					}
					lo, ok := hex4(b, i+3)
					if !ok || lo < 0xDC00 || lo > 0xDFFF {
						return span{}, false
					}
					r = utf16.DecodeRune(r, lo)
					i += 6
				}
				out = utf8.AppendRune(out, r)
			default:
				return span{}, false
			}
			i++
		case c < 0x80:
			out = append(out, c)
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n <= 1 {
				return span{}, false
			}
			out = append(out, b[i:i+n]...)
			i += n
		}
	}
}

// hex4 reads the four hex digits of a \u escape at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// open reads the "[" or "{" of a container of kind k within the depth
// limit and lays out its head; shut closes it after n members or
// elements.
func (s *scanner) open(k Kind, name span) (int32, bool) {
	if s.depth >= s.lim.MaxDepth {
		return 0, false
	}
	s.depth++
	head := s.emit(k, name, span{})
	s.i++
	s.space()
	return head, true
}

func (s *scanner) shut(head, n int32) bool {
	s.t.Nodes[head].Len = n
	s.t.Nodes[head].End = int32(len(s.t.Nodes))
	s.depth--
	return s.delimited()
}

func (s *scanner) array(name span) bool {
	head, ok := s.open(KindArray, name)
	if !ok {
		return false
	}
	n := int32(0)
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
	} else {
		for {
			if !s.value(span{}) {
				return false
			}
			n++
			if done, ok := s.next(']'); !ok {
				return false
			} else if done {
				break
			}
		}
	}
	return s.shut(head, n)
}

// next reads what follows a member or element: the closing bracket
// (done), or a comma and the space after it; ok is false at anything else.
func (s *scanner) next(closing byte) (done, ok bool) {
	s.space()
	if s.i >= len(s.b) {
		return false, false
	}
	switch s.b[s.i] {
	case closing:
		s.i++
		return true, true
	case ',':
		s.i++
		s.space()
		return false, true
	}
	return false, false
}

func (s *scanner) object(name span) bool {
	head, ok := s.open(KindObject, name)
	if !ok {
		return false
	}
	base := len(s.names)
	n := int32(0)
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
	} else {
		for {
			if s.i >= len(s.b) || s.b[s.i] != '"' || n == smallObject {
				return false // a larger object's names are the parser's to index
			}
			nsp, key, ok := s.name()
			if !ok {
				return false
			}
			ascii := isASCII(key)
			for _, prior := range s.names[base:] {
				if prior.s == key {
					return false
				}
				if s.lim.FoldCollisions && (len(prior.s) == len(key) || !ascii || !prior.ascii) && strings.EqualFold(prior.s, key) {
					return false
				}
			}
			s.names = append(s.names, seenName{key, ascii})
			s.space()
			if s.i >= len(s.b) || s.b[s.i] != ':' {
				return false
			}
			s.i++
			s.space()
			if !s.value(nsp) {
				return false
			}
			n++
			if done, ok := s.next('}'); !ok {
				return false
			} else if done {
				break
			}
		}
	}
	s.names = s.names[:base]
	return s.shut(head, n)
}

// name reads a member name: its span in the text (written once per
// distinct name) and the name as a string of the text.
func (s *scanner) name() (span, string, bool) {
	b := s.b
	i := s.i + 1
	for i < len(b) && plain[b[i]] {
		i++
	}
	if i < len(b) && b[i] == '"' && i-s.i-1 <= s.lim.MaxStringLength {
		// A plain name: looked up by its bytes before it is written.
		if prior, seen := s.spans[string(b[s.i+1:i])]; seen {
			s.i = i + 1
			return prior, s.text.String()[prior.off : prior.off+prior.n], true
		}
	}
	sp, ok := s.str()
	if !ok {
		return span{}, "", false
	}
	key := s.text.String()[sp.off : sp.off+sp.n]
	if prior, seen := s.spans[key]; seen {
		return prior, key, true // an escaped spelling of a known name
	}
	if s.spans == nil {
		s.spans = map[string]span{}
	}
	if len(s.spans) < maxInterned {
		s.spans[key] = sp
	}
	return sp, key, true
}
