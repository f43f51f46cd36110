package strictjson

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
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
// up to End.
type Node struct {
	// Name is the member name when the value is an object's member; ""
	// otherwise (and for a member named "").
	Name string
	// Text is a string's value (unescaped) or a number's token text.
	Text string
	// End is the index just past this value's subtree: the next sibling.
	End int32
	// Len is the number of members of an object or elements of an array.
	Len int32
	// Kind is the value's type.
	Kind Kind
}

// Tape is a JSON value laid out in document order, one Node per value,
// without a map per object: the root at index 0, an object's members
// (each carrying its name) and an array's elements right after their
// head. It reads as the value Parse returns (Value), in the same order of
// members as the text. Member names are unique within an object (the
// strict parse refuses repeats).
type Tape struct {
	Nodes []Node
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
		return json.Number(n.Text)
	case KindString:
		return n.Text
	case KindArray:
		arr := make([]any, 0, n.Len)
		for j := i + 1; j < n.End; j = t.Nodes[j].End {
			arr = append(arr, t.Value(j))
		}
		return arr
	}
	obj := make(map[string]any, n.Len)
	for j := i + 1; j < n.End; j = t.Nodes[j].End {
		obj[t.Nodes[j].Name] = t.Value(j)
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
		if t.Nodes[j].Name == name {
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
	return t, t.add("", v)
}

func (t *Tape) add(name string, v any) bool {
	i := int32(len(t.Nodes))
	t.Nodes = append(t.Nodes, Node{Name: name})
	n := Node{Name: name}
	switch x := v.(type) {
	case nil:
		n.Kind = KindNull
	case bool:
		n.Kind = KindFalse
		if x {
			n.Kind = KindTrue
		}
	case string:
		n.Kind, n.Text = KindString, x
	case json.Number:
		n.Kind, n.Text = KindNumber, string(x)
	case float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		text, ok := goNumberText(x)
		if !ok {
			return false
		}
		n.Kind, n.Text = KindNumber, text
	case []any:
		n.Kind, n.Len = KindArray, int32(len(x))
		for _, e := range x {
			if !t.add("", e) {
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
			if !t.add(k, x[k]) {
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

// goNumberText writes a Go number as JSON number text: integers exactly,
// floats in the shortest form that reads back the same; ok is false for
// NaN and ±Inf.
func goNumberText(v any) (string, bool) {
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
// Memory: the tape holds one Node (48 bytes) per value, and the text of
// its strings and numbers is copied out of body into shared chunks, as
// Parse does; every value takes at least 2 bytes of body, so the tape is
// at most 24 bytes per body byte (about 5 for an API page), plus the
// parse's stacks. The tape keeps no reference to body.
func ParseTape(body []byte, lim Limits) (*Tape, error) {
	t := &Tape{Nodes: make([]Node, 0, min(len(body)/16+8, 1<<16))}
	if _, r := parse(body, lim.withDefaults(), t); r != nil {
		return nil, r
	}
	return t, nil
}

// emit appends n to the tape, named after the member being read when the
// innermost open value is an object, and returns its index. A scalar's
// subtree is itself; an object's or array's End and Len are set when it
// closes.
func (p *jsonParser) emit(n Node) int32 {
	if k := len(p.frames); k > 0 && !p.frames[k-1].array {
		n.Name = p.frames[k-1].name
	}
	i := int32(len(p.tape.Nodes))
	n.End = i + 1
	p.tape.Nodes = append(p.tape.Nodes, n)
	return i
}
