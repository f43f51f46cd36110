package strictjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Kind is the JSON type of a tape node (RFC 8259 §3).
type Kind uint8

// The kinds of values.
const (
	KindNull Kind = iota + 1
	KindFalse
	KindTrue
	KindNumber
	KindString
	KindArray
	KindObject
)

// Node is one value on a tape: a scalar, or the head of an object or
// array whose members or elements follow it, each with its own subtree,
// up to End. Its member name and its text are spans of the tape's text
// (Tape.Name, Tape.Text): a node is 28 bytes.
type Node struct {
	name, text span
	// End is the index just past this value's subtree: the next sibling.
	End int32
	// Len is the number of members of an object or elements of an array.
	Len int32
	// Kind is the value's type.
	Kind Kind
}

// span is where a string is in the tape's text.
type span struct{ off, n uint32 }

// Tape is a JSON value laid out in document order, one Node per value,
// without a map per object: the root at index 0, an object's members
// (each carrying its name) and an array's elements right after their
// head. It reads as the value Parse returns (Value), in the same order of
// members as the text. Member names are unique within an object (the
// strict parse refuses repeats).
type Tape struct {
	Nodes []Node
	// text holds every member name and every string's and number's text,
	// unescaped, one after another.
	text string
}

// Name is the member name of the value at i when it is an object's
// member; "" otherwise.
func (t *Tape) Name(i int32) string {
	sp := t.Nodes[i].name
	return t.text[sp.off : sp.off+sp.n]
}

// Text is the value of the string at i (unescaped) or the token text of
// the number at i; "" for other kinds.
func (t *Tape) Text(i int32) string {
	sp := t.Nodes[i].text
	return t.text[sp.off : sp.off+sp.n]
}

// SetString makes t the tape of the one string s.
func (t *Tape) SetString(s string) {
	t.text = s
	t.Nodes = append(t.Nodes[:0], Node{Kind: KindString, text: span{0, uint32(len(s))}, End: 1})
}

// Value builds the value at index i as Parse returns values:
// map[string]any, []any, string, json.Number, bool, nil.
func (t *Tape) Value(i int32) any {
	n := &t.Nodes[i]
	switch n.Kind {
	case KindNull:
		return nil
	case KindFalse:
		return false
	case KindTrue:
		return true
	case KindNumber:
		return json.Number(t.Text(i))
	case KindString:
		return t.Text(i)
	case KindArray:
		arr := make([]any, 0, n.Len)
		for j := i + 1; j < n.End; j = t.Nodes[j].End {
			arr = append(arr, t.Value(j))
		}
		return arr
	}
	obj := make(map[string]any, n.Len)
	for j := i + 1; j < n.End; j = t.Nodes[j].End {
		obj[t.Name(j)] = t.Value(j)
	}
	return obj
}

// Member returns the index of the member of the object at i named name,
// and whether there is one (a linear scan of its members).
func (t *Tape) Member(i int32, name string) (int32, bool) {
	n := &t.Nodes[i]
	if n.Kind != KindObject {
		return 0, false
	}
	for j := i + 1; j < n.End; j = t.Nodes[j].End {
		if t.Name(j) == name {
			return j, true
		}
	}
	return 0, false
}

// Element returns the index of element k of the array at i.
func (t *Tape) Element(i int32, k int) (int32, bool) {
	n := &t.Nodes[i]
	if n.Kind != KindArray || k < 0 || k >= int(n.Len) {
		return 0, false
	}
	j := i + 1
	for ; k > 0; k-- {
		j = t.Nodes[j].End
	}
	return j, true
}

// TapeOf lays v out on a tape: v is a value as Parse returns it (Go's
// other numeric types are written as their shortest exact text). Object
// members are laid out in code point order of their names. ok is false
// when v holds a type JSON has no value for, or a float NaN or ±Inf.
func TapeOf(v any) (t *Tape, ok bool) {
	t = &Tape{}
	return t, t.Reset(v)
}

// Reset lays v out on t as TapeOf does, reusing t's room: a caller that
// lays out many values keeps one tape (the strings of a former layout stay
// valid; they are not overwritten).
func (t *Tape) Reset(v any) bool {
	var b strings.Builder
	t.Nodes = t.Nodes[:0]
	ok := t.add(&b, "", v)
	t.text = b.String()
	return ok
}

// put adds s to the text and returns its span.
func put(b *strings.Builder, s string) span {
	sp := span{uint32(b.Len()), uint32(len(s))}
	b.WriteString(s)
	return sp
}

func (t *Tape) add(b *strings.Builder, name string, v any) bool {
	i := int32(len(t.Nodes))
	t.Nodes = append(t.Nodes, Node{})
	n := Node{name: put(b, name)}
	switch x := v.(type) {
	case nil:
		n.Kind = KindNull
	case bool:
		n.Kind = KindFalse
		if x {
			n.Kind = KindTrue
		}
	case string:
		n.Kind, n.text = KindString, put(b, x)
	case json.Number:
		n.Kind, n.text = KindNumber, put(b, string(x))
	case float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		text, ok := NumberText(x)
		if !ok {
			return false
		}
		n.Kind, n.text = KindNumber, put(b, text)
	case []any:
		n.Kind, n.Len = KindArray, int32(len(x))
		for _, e := range x {
			if !t.add(b, "", e) {
				return false
			}
		}
	case map[string]any:
		n.Kind, n.Len = KindObject, int32(len(x))
		names := make([]string, 0, len(x))
		for k := range x {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			if !t.add(b, k, x[k]) {
				return false
			}
		}
	default:
		return false
	}
	n.End = int32(len(t.Nodes))
	t.Nodes[i] = n
	return true
}

// NumberText writes a Go number (float64, float32 and the integer types)
// as JSON number text: integers exactly, floats in the shortest form that
// reads back the same; ok is false for NaN, ±Inf and anything else.
func NumberText(v any) (string, bool) {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "", false
		}
		return strconv.FormatFloat(x, 'g', -1, 64), true
	case float32:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return "", false
		}
		return strconv.FormatFloat(f, 'g', -1, 32), true
	case int:
		return strconv.FormatInt(int64(x), 10), true
	case int8:
		return strconv.FormatInt(int64(x), 10), true
	case int16:
		return strconv.FormatInt(int64(x), 10), true
	case int32:
		return strconv.FormatInt(int64(x), 10), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case uint:
		return strconv.FormatUint(uint64(x), 10), true
	case uint8:
		return strconv.FormatUint(uint64(x), 10), true
	case uint16:
		return strconv.FormatUint(uint64(x), 10), true
	case uint32:
		return strconv.FormatUint(uint64(x), 10), true
	case uint64:
		return strconv.FormatUint(x, 10), true
	}
	return "", false
}

// ParseTape is Parse laid out on a tape: the same strict parse, the same
// refusals (a refusal is an *Error, as Parse's), the value in document
// order without a map per object or a boxed value per string.
//
// Memory: the tape holds one 28-byte Node per value and one copy of the
// names and strings (unescaped) and numbers; every value takes at least
// 2 bytes of body, so the tape is at most 15 bytes per body byte (about 3
// for an API page), plus the parse's stacks, and half as much again while
// its slices grow. It keeps no reference to body. A body of 4 GiB or more
// is refused (parse.string_too_long), as a tape's offsets are 32 bits.
func ParseTape(body []byte, lim Limits) (*Tape, error) {
	if uint64(len(body)) > math.MaxUint32 {
		return nil, &Error{Reason: ReasonStringTooLong, Offset: -1,
			Message: fmt.Sprintf("body of %d bytes is longer than a tape holds (4 GiB)", len(body))}
	}
	if t, ok := fastTape(body, lim.withDefaults()); ok {
		return t, nil
	}
	// Sized once: no copy while they grow, no room twice what is needed.
	t := &Tape{Nodes: make([]Node, 0, countValues(body))}
	var b strings.Builder
	b.Grow(len(body))
	if _, r := parse(body, lim.withDefaults(), &tapeBuilder{t: t, text: &b}); r != nil {
		return nil, r
	}
	t.text = b.String()
	return t, nil
}

// tapeBuilder is a tape being written by a parse: its nodes and its text.
type tapeBuilder struct {
	t    *Tape
	text *strings.Builder
}

// tapeName is str for a member name on a tape: the name unescaped into
// the tape's text once (names repeat across the elements of an array; the
// parser's pooled map remembers them), returned as that text's string
// (which stays valid as the text grows) and its span.
func (p *jsonParser) tapeName(raw []byte) (string, span, *Error) {
	inner, r := p.unescape(raw)
	if r != nil {
		return "", span{}, r
	}
	b := p.tape.text
	if sp, ok := p.nameSpans[string(inner)]; ok {
		return b.String()[sp.off : sp.off+sp.n], sp, nil
	}
	sp := span{uint32(b.Len()), uint32(len(inner))}
	b.Write(inner)
	name := b.String()[sp.off:]
	if p.nameSpans == nil {
		p.nameSpans = map[string]span{}
	}
	if len(p.nameSpans) < maxInterned {
		p.nameSpans[name] = sp
	}
	return name, sp, nil
}

// emit appends a node of kind k whose text is the span text (the zero
// span for none) to the tape, named after the member being read when the
// innermost open value is an object, and returns its index. A scalar's
// subtree is itself; an object's or array's End and Len are set when it
// closes.
func (p *jsonParser) emit(k Kind, text span) int32 {
	n := Node{Kind: k, text: text}
	if d := len(p.frames); d > 0 && !p.frames[d-1].array {
		n.name = p.frames[d-1].nameSpan
	}
	i := int32(len(p.tape.t.Nodes))
	n.End = i + 1
	p.tape.t.Nodes = append(p.tape.t.Nodes, n)
	return i
}

// countValues is at least the number of values a JSON text holds, and at
// most 1 + the commas, "[" and "{" outside its strings (each value but the
// first of an array or object follows a comma): a tape's exact room in one
// pass, without reading the values. On input that is not JSON it is only
// a guess, and the tape grows as it must.
func countValues(body []byte) int {
	// Most bodies hold a value every few bytes: counting the three bytes
	// anywhere (a vectorised count, strings included) then over-counts by
	// the ones inside strings only, and room for one value per 8 bytes is at
	// most 3.5 bytes per body byte. Past that, count outside strings.
	if n := 1 + bytes.Count(body, comma) + bytes.Count(body, openArray) + bytes.Count(body, openObject); n <= len(body)/8+1 {
		return n
	}
	n, inString := 1, false
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case inString:
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ',' || c == '[' || c == '{':
			n++
		}
	}
	return n
}

var comma, openArray, openObject = []byte{','}, []byte{'['}, []byte{'{'}
