package strictjson

import (
	"bytes"
	"cmp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// PointerOffset returns the byte offset in body, a JSON text, of what the
// RFC 6901 JSON Pointer ptr names: when ptr's last token names an object
// member, the offset of that member's name (its opening quote: where a
// reader fixes a misspelled key); otherwise (the root "", an array element)
// the first byte of the value. Offsets count bytes from 0; turn one into a
// line and column with config.LineCol.
//
// ok is false when ptr is not a valid JSON Pointer ("" or "/…", "~" only in
// "~0" and "~1"), when it names nothing in body (a missing member, an index
// past the end, "-", an index with a leading zero), or when body is not
// well-formed JSON up to the place it names. Duplicate member names and
// invalid UTF-8 are tolerated (the first member of a name wins): this
// locates, it does not validate. The work is linear in the bytes of body
// before the place found.
func PointerOffset(body []byte, ptr string) (off int64, ok bool) {
	toks, ok := splitPointer(ptr)
	if !ok {
		return 0, false
	}
	dec := jsontext.NewDecoder(bytes.NewReader(body),
		jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if len(toks) == 0 {
		v, err := dec.ReadValue()
		if err != nil {
			return 0, false
		}
		return dec.InputOffset() - int64(len(v)), true
	}
	for i, tok := range toks {
		last := i == len(toks)-1
		switch dec.PeekKind() {
		case '{':
			if _, err := dec.ReadToken(); err != nil {
				return 0, false
			}
			found := false
			for dec.PeekKind() == '"' {
				name, err := dec.ReadValue()
				if err != nil {
					return 0, false
				}
				start := dec.InputOffset() - int64(len(name))
				s, err := jsontext.AppendUnquote(nil, name)
				if err != nil {
					return 0, false
				}
				if string(s) == tok {
					if last {
						return start, true
					}
					found = true
					break
				}
				if err := dec.SkipValue(); err != nil {
					return 0, false
				}
			}
			if !found {
				return 0, false
			}
		case '[':
			n, ok := arrayIndex(tok)
			if !ok {
				return 0, false
			}
			if _, err := dec.ReadToken(); err != nil {
				return 0, false
			}
			for range n {
				if dec.PeekKind() == ']' {
					return 0, false
				}
				if err := dec.SkipValue(); err != nil {
					return 0, false
				}
			}
			if k := dec.PeekKind(); k == ']' || k == 0 {
				return 0, false
			}
			if last {
				v, err := dec.ReadValue()
				if err != nil {
					return 0, false
				}
				return dec.InputOffset() - int64(len(v)), true
			}
		default:
			return 0, false
		}
	}
	return 0, false
}

// splitPointer splits an RFC 6901 pointer into unescaped reference tokens.
func splitPointer(ptr string) ([]string, bool) {
	if ptr == "" {
		return nil, true
	}
	if ptr[0] != '/' {
		return nil, false
	}
	toks := strings.Split(ptr[1:], "/")
	for i, t := range toks {
		if !strings.Contains(t, "~") {
			continue
		}
		var b strings.Builder
		for j := 0; j < len(t); j++ {
			if t[j] != '~' {
				b.WriteByte(t[j])
				continue
			}
			if j+1 == len(t) || (t[j+1] != '0' && t[j+1] != '1') {
				return nil, false
			}
			b.WriteByte("~/"[t[j+1]-'0'])
			j++
		}
		toks[i] = b.String()
	}
	return toks, true
}

// arrayIndex parses an RFC 6901 array index: "0", or digits without a
// leading zero.
func arrayIndex(tok string) (int, bool) {
	if tok == "" || len(tok) > 1 && tok[0] == '0' {
		return 0, false
	}
	for _, c := range []byte(tok) {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(tok)
	return n, err == nil
}

// PointerOffsets is PointerOffset for many pointers at once, in one pass
// over body: the offset of each pointer of ptrs that names something (the
// same offsets PointerOffset gives), by pointer; pointers that name
// nothing, or are not valid, are absent. Only the parts of body on the
// way to a wanted place are decoded; the rest is skipped. The work is
// linear in the bytes of body plus the length of ptrs, whatever their
// number, where calling PointerOffset for each would rescan body every
// time.
func PointerOffsets(body []byte, ptrs []string) map[string]int64 {
	root := &offsetTrie{}
	for _, p := range ptrs {
		toks, ok := splitPointer(p)
		if !ok {
			continue
		}
		n := root
		for _, t := range toks {
			if n.children == nil {
				n.children = map[string]*offsetTrie{}
			}
			c := n.children[t]
			if c == nil {
				c = &offsetTrie{}
				n.children[t] = c
			}
			n = c
		}
		n.ptrs = append(n.ptrs, p)
	}
	out := map[string]int64{}
	dec := jsontext.NewDecoder(bytes.NewReader(body),
		jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	root.walk(dec, true, out)
	return out
}

// offsetTrie is the wanted pointers, one node per reference token.
type offsetTrie struct {
	children map[string]*offsetTrie
	ptrs     []string // the pointers that end here (one text, or spellings of it)
}

// record sets the offset of every pointer ending at n, unless an earlier
// place (a duplicate member name) already set it.
func (n *offsetTrie) record(out map[string]int64, off int64) {
	for _, p := range n.ptrs {
		if _, done := out[p]; !done {
			out[p] = off
		}
	}
}

// walk reads the value at dec's position, recording the offsets n and its
// children want. here is whether n's own pointers take the value's first
// byte (the root, an array element) rather than a member name's. It
// returns false when body is not well-formed up to where it stopped.
func (n *offsetTrie) walk(dec *jsontext.Decoder, here bool, out map[string]int64) bool {
	kind := dec.PeekKind()
	if len(n.children) == 0 || kind != '{' && kind != '[' {
		if !here || len(n.ptrs) == 0 {
			return dec.SkipValue() == nil
		}
		v, err := dec.ReadValue()
		if err != nil {
			return false
		}
		n.record(out, dec.InputOffset()-int64(len(v)))
		return true
	}
	if _, err := dec.ReadToken(); err != nil {
		return false
	}
	if here {
		n.record(out, dec.InputOffset()-1)
	}
	if kind == '{' {
		for dec.PeekKind() == '"' {
			name, err := dec.ReadValue()
			if err != nil {
				return false
			}
			start := dec.InputOffset() - int64(len(name))
			s, err := jsontext.AppendUnquote(nil, name)
			if err != nil {
				return false
			}
			c := n.children[string(s)]
			if c == nil {
				if dec.SkipValue() != nil {
					return false
				}
				continue
			}
			c.record(out, start)
			if !c.walk(dec, false, out) {
				return false
			}
		}
	} else {
		for i := 0; dec.PeekKind() != ']'; i++ {
			if dec.PeekKind() == 0 {
				return false
			}
			c := n.children[strconv.Itoa(i)]
			if c == nil {
				if dec.SkipValue() != nil {
					return false
				}
				continue
			}
			if !c.walk(dec, true, out) {
				return false
			}
		}
	}
	_, err := dec.ReadToken()
	return err == nil
}

// LineColumns calls set(i, line, column) for every offs[i] that lies in
// text (0 ≤ offs[i] ≤ len(text)), with the 1-based line and column of that
// byte offset, columns counted in Unicode code points (SARIF's
// unicodeCodePoints; an invalid byte counts as one). Calls come in
// increasing offset order: the offsets are sorted first, so placing any
// number of them costs one pass over text, even when text is one long line.
func LineColumns(text []byte, offs []int64, set func(i, line, col int)) {
	order := make([]int, len(offs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(offs[a], offs[b]) })
	line, col, pos := 1, 1, 0
	for _, i := range order {
		off := offs[i]
		if off < 0 || off > int64(len(text)) {
			continue
		}
		for pos < int(off) {
			r, n := utf8.DecodeRune(text[pos:])
			if r == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
			pos += n
		}
		set(i, line, col)
	}
}
