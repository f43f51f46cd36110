package strictjson

import (
	"bytes"
	"strconv"
	"strings"

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
