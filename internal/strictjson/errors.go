// The strict parser's refusals: the error type, where a refusal is, and
// how jsontext's errors map to reasons.

package strictjson

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// Error renders "reason at byte offset, pointer "…": message".
func (e *Error) Error() string {
	return fmt.Sprintf("%s at byte %d, pointer %q: %s", e.Reason, e.Offset, e.Pointer, e.Message)
}

// Error is a parse refusal: the reason code (one of the Reason constants),
// where the problem was found, and a message from the parser.
type Error struct {
	Reason string
	// Offset is the byte offset in the body where the problem was found: the
	// repeated name's opening quote, the first byte after the top-level
	// value that is not whitespace (parse.trailing_data), the body's length
	// (parse.truncated), the token at fault; -1 when none.
	Offset int64
	// Pointer is the RFC 6901 JSON Pointer of where the problem lies: the
	// value (a string, number, literal, or a container opened too deep)
	// the offset falls in; for a repeated member name, that member
	// ("/a/b" for the second "b" of the object at "/a"); for a problem in a
	// member name or between values (a missing comma), the enclosing object
	// or array; for parse.truncated, the innermost open object or array;
	// "" for the whole text (a BOM, trailing data, a top-level scalar).
	Pointer string
	Message string
	// Repeats lists, for parse.duplicate_member and
	// parse.member_fold_collision, each repeated member name found, in the
	// order of the text, at most MaxRepeats; Repeats[0] is the one at Offset
	// and Pointer. Nil for other reasons.
	Repeats []Repeat
	// Unclosed is, for parse.truncated, the number of objects and arrays
	// still open where the input ends (0 when it ends inside a top-level
	// scalar); 0 for other reasons.
	Unclosed int
}

// Repeat is one member name that repeats an earlier name of its object.
type Repeat struct {
	// Pointer is the repeated member's RFC 6901 JSON Pointer.
	Pointer string
	// Offset is the byte offset of the repeated member's name.
	Offset int64
	// Name is the repeated member's name, unescaped.
	Name string
	// Earlier is the earlier member's name: equal to Name for an exact
	// repeat, equal under simple case folding when Folded.
	Earlier string
	// EarlierOffset is the byte offset of the earlier member's name.
	EarlierOffset int64
	// Folded is true when the names differ and are equal only under case
	// folding (parse.member_fold_collision); an exact repeat of some earlier
	// name of the object is always reported as one (Folded false).
	Folded bool
}

// errorAt is a refusal at off, located at the value being read.
func (p *jsonParser) errorAt(reason string, off int64, msg string) *Error {
	return &Error{Reason: reason, Offset: off, Pointer: p.pointer(), Message: msg}
}

// fail turns a jsontext error into a refusal located at the value being
// read (see classify); input that ends too soon is p.truncated.
func (p *jsonParser) fail(err error) *Error {
	r := classify(err)
	if r.Reason == ReasonTruncated {
		return p.truncated(false)
	}
	r.Pointer = p.pointer()
	return r
}

// truncated is the refusal of input that ends before the end of the value,
// at the offset of its end: it names the innermost open object or array
// and how many are open. missing says the input ended where a value was
// expected.
func (p *jsonParser) truncated(missing bool) *Error {
	n := len(p.frames)
	r := &Error{Reason: ReasonTruncated, Offset: p.size, Unclosed: n}
	if n == 0 {
		r.Message = "input ends inside the top-level value"
		if missing {
			r.Message = "input ends where a value was expected"
		}
		return r
	}
	inner := p.frames[n-1]
	kind := "object"
	if inner.array {
		kind = "array"
	}
	r.Pointer = p.pathOf(p.frames[:n-1])
	r.Message = fmt.Sprintf("input ends with %d %s unclosed; the innermost is the %s at %q",
		n, plural(n, "object or array", "objects and arrays"), kind, clip(r.Pointer))
	if inner.open {
		if missing {
			r.Message += fmt.Sprintf(", where the value at %q was expected", clip(p.pointer()))
		} else {
			r.Message += fmt.Sprintf(", inside the value at %q", clip(p.pointer()))
		}
	}
	return r
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// pointer is the RFC 6901 JSON Pointer of the value being read: the member
// or element each open frame is reading, or the innermost container itself
// between its members or elements.
func (p *jsonParser) pointer() string { return p.pathOf(p.frames) }

func (p *jsonParser) pathOf(frames []frame) string {
	var b strings.Builder
	for _, f := range frames {
		if !f.open {
			continue // only the innermost frame can be between members
		}
		b.WriteByte('/')
		if f.array {
			b.WriteString(strconv.Itoa(f.index))
		} else {
			writeToken(&b, f.name)
		}
	}
	return b.String()
}

// writeToken writes a member name as an RFC 6901 reference token: "~" as
// "~0" and "/" as "~1" (RFC 6901 §3).
func writeToken(b *strings.Builder, name string) {
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case '~':
			b.WriteString("~0")
		case '/':
			b.WriteString("~1")
		default:
			b.WriteByte(name[i])
		}
	}
}

// clip shortens s for a message; Error.Pointer and Error.Repeats keep the
// whole text.
func clip(s string) string {
	const max = 128
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// classify maps a jsontext error to a parse reason. jsontext reports invalid
// UTF-8 and bad escapes through unexported error types, so those two are
// told apart by message; the conformance tests pin the mapping.
func classify(err error) *Error {
	r := &Error{Reason: ReasonSyntax, Offset: -1, Message: err.Error()}
	if se := (*jsontext.SyntacticError)(nil); errors.As(err, &se) {
		r.Offset = se.ByteOffset
		if se.Err != nil {
			r.Message = se.Err.Error()
		}
	}
	msg := err.Error()
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		r.Reason = ReasonTruncated
	case errors.Is(err, jsontext.ErrDuplicateName):
		r.Reason = ReasonDuplicate
	case strings.Contains(msg, "invalid UTF-8"):
		r.Reason = ReasonInvalidUTF8
	case loneSurrogate.MatchString(msg):
		r.Reason = ReasonLoneSurrogate
	case strings.Contains(msg, "after top-level value"):
		r.Reason = ReasonTrailingData
	}
	return r
}
