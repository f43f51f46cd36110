// Package strictjson is airlock's strict JSON parser: RFC 8259 plus I-JSON
// (RFC 7493) with limits, built on go-json-experiment's jsontext. It is the
// gate's parse stage and the one parser the harness uses for fixtures,
// mutants, schema files and agent outputs, so that every part of airlock
// reads JSON the same way.
//
// Values are map[string]any, []any, string, json.Number (the number token's
// exact text), bool and nil.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// Reason codes of a parse refusal: the same strings as gate's Reason*
// constants of the parse stage, where each is documented.
const (
	ReasonSyntax        = "parse.syntax"
	ReasonTruncated     = "parse.truncated"
	ReasonDuplicate     = "parse.duplicate_member"
	ReasonInvalidUTF8   = "parse.invalid_utf8"
	ReasonLoneSurrogate = "parse.lone_surrogate"
	ReasonBOM           = "parse.bom"
	ReasonTrailingData  = "parse.trailing_data"
	ReasonDepth         = "parse.depth"
	ReasonNumber        = "parse.number"
	ReasonStringTooLong = "parse.string_too_long"
)

// Default limits, used where Limits leaves a field at 0.
const (
	DefaultMaxDepth        = 64      // nesting of objects and arrays
	DefaultMaxNumberLength = 128     // bytes in one number token
	DefaultMaxStringLength = 1 << 16 // 64 KiB in one unescaped string or member name
)

// Limits bound the work one parse can cause; a field at 0 means its
// default. (The byte limit of a body is the caller's: Parse reads what it
// is given.)
type Limits struct {
	// MaxDepth is the deepest nesting of objects and arrays accepted (a
	// top-level scalar is depth 0, "[]" depth 1); deeper input is
	// parse.depth.
	MaxDepth int
	// MaxNumberLength is the longest number token, in bytes; a longer one is
	// parse.number.
	MaxNumberLength int
	// MaxStringLength is the longest string or member name, in bytes after
	// unescaping; a longer one is parse.string_too_long.
	MaxStringLength int
}

func (l Limits) withDefaults() Limits {
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxNumberLength <= 0 {
		l.MaxNumberLength = DefaultMaxNumberLength
	}
	if l.MaxStringLength <= 0 {
		l.MaxStringLength = DefaultMaxStringLength
	}
	return l
}

// Parse decodes body as one strict JSON text and returns its value as
// map[string]any, []any, string, json.Number (the number's exact text),
// bool or nil.
//
// The policy is RFC 8259 plus I-JSON (RFC 7493), with limits:
//   - a byte order mark (UTF-8, or UTF-16 in either order) at the start is
//     refused (parse.bom; RFC 8259 §8.1);
//   - a member name repeated in one object, compared after unescaping, is
//     refused at any depth (parse.duplicate_member; RFC 7493 §2.3);
//   - invalid UTF-8 (parse.invalid_utf8) and an escaped lone surrogate
//     (parse.lone_surrogate) are refused, never replaced by U+FFFD
//     (RFC 7493 §2.1);
//   - input that ends inside the value is parse.truncated, anything after the
//     value other than whitespace is parse.trailing_data, other grammar
//     errors are parse.syntax;
//   - nesting deeper than lim.MaxDepth is parse.depth; a number token longer
//     than lim.MaxNumberLength bytes, whose magnitude overflows or
//     underflows IEEE 754 binary64, or whose exponent is beyond ±1000 (even
//     with a zero mantissa), is parse.number (RFC 7493 §2.2); a
//     string longer than lim.MaxStringLength bytes once unescaped is
//     parse.string_too_long.
//
// Noncharacters (U+FFFE, U+FDD0, …), U+2028/U+2029 and "\u0000" are accepted:
// they are well-formed and the schema can refuse them where they matter.
//
// A refusal is returned as an *Error; Parse never panics on any input and
// keeps no reference to body.
func Parse(body []byte, lim Limits) (any, error) {
	v, r := parse(body, lim.withDefaults())
	if r != nil {
		return nil, r
	}
	return v, nil
}

// Error is a parse refusal: the reason code (one of the Reason constants),
// the byte offset in the body where the problem was found (-1 when none),
// and a message from the parser.
type Error struct {
	Reason  string
	Offset  int64
	Message string
}

// Error renders "reason at byte offset: message".
func (e *Error) Error() string {
	return fmt.Sprintf("%s at byte %d: %s", e.Reason, e.Offset, e.Message)
}

// jsonParser builds the value from jsontext's tokens.
type jsonParser struct {
	dec    *jsontext.Decoder
	lim    Limits
	names  map[string]string // interned member names: arrays of objects repeat them
	values map[string]any    // shared short string values (see strValue)
	// members and elems are stacks of the open objects' members and open
	// arrays' elements: each object and array is built once its size is
	// known, so no map or slice is grown and copied on the way.
	members []member
	elems   []any
}

type member struct {
	name  string
	value any
}

const maxInterned = 4096

// parsers holds idle parsers, so that a call reuses a decoder's state and
// the scratch stacks of an earlier one instead of allocating them.
var parsers = sync.Pool{New: func() any {
	return &jsonParser{dec: jsontext.NewDecoder(noInput)}
}}

// noInput is what an idle parser's decoder reads, so that the pool holds no
// reference to a body.
var noInput = strings.NewReader("")

// maxPooledStack is the largest scratch stack, in entries, kept for reuse;
// larger ones are dropped rather than pinned in the pool.
const maxPooledStack = 1 << 10

// release makes p idle and returns it to the pool, keeping no reference to
// the body or to any value built from it.
func (p *jsonParser) release() {
	p.dec.Reset(noInput)
	clear(p.members)
	clear(p.elems)
	p.members, p.elems = p.members[:0], p.elems[:0]
	if cap(p.members) > maxPooledStack {
		p.members = nil
	}
	if cap(p.elems) > maxPooledStack {
		p.elems = nil
	}
	if len(p.names) > maxPooledStack {
		p.names = nil
	} else {
		clear(p.names)
	}
	if len(p.values) > maxPooledStack {
		p.values = nil
	} else {
		clear(p.values)
	}
	parsers.Put(p)
}

func parse(body []byte, lim Limits) (any, *Error) {
	for _, bom := range [][]byte{{0xEF, 0xBB, 0xBF}, {0xFE, 0xFF}, {0xFF, 0xFE}} {
		if bytes.HasPrefix(body, bom) {
			return nil, &Error{Reason: ReasonBOM, Offset: 0, Message: "body starts with a byte order mark"}
		}
	}
	p := parsers.Get().(*jsonParser)
	defer p.release()
	p.lim = lim
	// A *bytes.Buffer lets jsontext read body in place, without a copy.
	p.dec.Reset(bytes.NewBuffer(body))
	v, r := p.value(0)
	if r != nil {
		return nil, r
	}
	off := p.dec.InputOffset()
	if _, err := p.dec.ReadToken(); err != io.EOF {
		if err != nil {
			if se := (*jsontext.SyntacticError)(nil); errors.As(err, &se) {
				off = se.ByteOffset
			}
		}
		return nil, &Error{Reason: ReasonTrailingData, Offset: off, Message: "data after the top-level value"}
	}
	return v, nil
}

func (p *jsonParser) value(depth int) (any, *Error) {
	switch p.dec.PeekKind() {
	case '{':
		return p.object(depth)
	case '[':
		return p.array(depth)
	case '"':
		raw, err := p.dec.ReadValue()
		if err != nil {
			return nil, classify(err)
		}
		return p.strValue(raw)
	case '0':
		raw, err := p.dec.ReadValue()
		if err != nil {
			return nil, classify(err)
		}
		return p.number(raw)
	case 't', 'f', 'n':
		tok, err := p.dec.ReadToken()
		if err != nil {
			return nil, classify(err)
		}
		if tok.Kind() == 'n' {
			return nil, nil
		}
		return tok.Bool(), nil
	default:
		// PeekKind reports 0 on an error or at the end of input; ReadToken
		// returns that error. Any other kind here ('}' or ']') is misplaced.
		_, err := p.dec.ReadToken()
		if err == nil || err == io.EOF {
			return nil, &Error{Reason: ReasonTruncated, Offset: p.dec.InputOffset(), Message: "input ends where a value was expected"}
		}
		return nil, classify(err)
	}
}

// object reads an object whose "{" is next; its members are collected on
// the members stack and the map is built once their number is known.
func (p *jsonParser) object(depth int) (any, *Error) {
	if depth >= p.lim.MaxDepth {
		return nil, p.tooDeep()
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return nil, classify(err)
	}
	base := len(p.members)
	for p.dec.PeekKind() != '}' {
		raw, err := p.dec.ReadValue()
		if err != nil {
			return nil, classify(err)
		}
		if raw.Kind() != '"' {
			return nil, &Error{Reason: ReasonSyntax, Offset: p.dec.InputOffset(), Message: "member name is not a string"}
		}
		name, r := p.str(raw, true)
		if r != nil {
			return nil, r
		}
		v, r := p.value(depth + 1)
		if r != nil {
			return nil, r
		}
		p.members = append(p.members, member{name, v})
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return nil, classify(err)
	}
	obj := make(map[string]any, len(p.members)-base)
	for _, m := range p.members[base:] {
		obj[m.name] = m.value
	}
	clear(p.members[base:])
	p.members = p.members[:base]
	return obj, nil
}

// array reads an array whose "[" is next.
func (p *jsonParser) array(depth int) (any, *Error) {
	if depth >= p.lim.MaxDepth {
		return nil, p.tooDeep()
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return nil, classify(err)
	}
	base := len(p.elems)
	for p.dec.PeekKind() != ']' {
		v, r := p.value(depth + 1)
		if r != nil {
			return nil, r
		}
		p.elems = append(p.elems, v)
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return nil, classify(err)
	}
	arr := make([]any, len(p.elems)-base)
	copy(arr, p.elems[base:])
	clear(p.elems[base:])
	p.elems = p.elems[:base]
	return arr, nil
}

func (p *jsonParser) tooDeep() *Error {
	return &Error{
		Reason:  ReasonDepth,
		Offset:  p.dec.InputOffset(),
		Message: fmt.Sprintf("nesting deeper than %d", p.lim.MaxDepth),
	}
}

// str unquotes a raw string token that jsontext already checked, enforcing
// the string length cap on the unescaped bytes.
func (p *jsonParser) str(raw jsontext.Value, name bool) (string, *Error) {
	inner := raw[1 : len(raw)-1]
	if len(inner) > p.lim.MaxStringLength || bytes.IndexByte(inner, '\\') >= 0 {
		unq, err := jsontext.AppendUnquote(nil, raw)
		if err != nil {
			return "", classify(err)
		}
		if len(unq) > p.lim.MaxStringLength {
			return "", &Error{
				Reason:  ReasonStringTooLong,
				Offset:  p.dec.InputOffset() - int64(len(raw)),
				Message: fmt.Sprintf("string of %d bytes exceeds the limit of %d", len(unq), p.lim.MaxStringLength),
			}
		}
		return string(unq), nil
	}
	if !name {
		return string(inner), nil
	}
	if s, ok := p.names[string(inner)]; ok {
		return s, nil
	}
	s := string(inner)
	if p.names == nil {
		p.names = make(map[string]string)
	}
	if len(p.names) < maxInterned {
		p.names[s] = s
	}
	return s, nil
}

// maxSharedString is the longest string value, in bytes, that a parse
// shares between equal occurrences: short strings (states, kinds, names)
// repeat across the elements of an array.
const maxSharedString = 16

// strValue is str for a string value. Equal short strings without escapes
// share one boxed value, which saves two allocations per repeat; strings
// are immutable, so the sharing cannot be observed.
func (p *jsonParser) strValue(raw jsontext.Value) (any, *Error) {
	inner := raw[1 : len(raw)-1]
	if len(inner) > maxSharedString || bytes.IndexByte(inner, '\\') >= 0 {
		return p.str(raw, false)
	}
	if v, ok := p.values[string(inner)]; ok {
		return v, nil
	}
	var v any = string(inner)
	if p.values == nil {
		p.values = make(map[string]any)
	}
	if len(p.values) < maxInterned {
		p.values[v.(string)] = v
	}
	return v, nil
}

// number keeps the token's exact text and enforces the number policy.
func (p *jsonParser) number(raw jsontext.Value) (any, *Error) {
	start := p.dec.InputOffset() - int64(len(raw))
	if len(raw) > p.lim.MaxNumberLength {
		return nil, &Error{
			Reason:  ReasonNumber,
			Offset:  start,
			Message: fmt.Sprintf("number token of %d bytes exceeds the limit of %d", len(raw), p.lim.MaxNumberLength),
		}
	}
	s := string(raw)
	// Without an exponent only a token of over 300 bytes (max_number_length
	// allows 4096) can lie outside binary64's range.
	if strings.IndexAny(s, "eE") >= 0 || len(s) > 300 {
		f, err := strconv.ParseFloat(s, 64)
		cut := strings.IndexAny(s+"e", "eE")
		mantissa, exponent := s[:cut], strings.TrimLeft(strings.TrimPrefix(s[min(cut+1, len(s)):], "+"), "-0")
		switch {
		case len(exponent) > 4 || len(exponent) == 4 && exponent > "1000":
			// Even a zero mantissa (0e99999999999999999999 parses as 0) must
			// not reach the validator, which expands the exponent.
			return nil, &Error{Reason: ReasonNumber, Offset: start, Message: "number exponent beyond ±1000"}
		case err != nil:
			return nil, &Error{Reason: ReasonNumber, Offset: start, Message: "number overflows IEEE 754 binary64"}
		case f == 0 && strings.Trim(mantissa, "-0.") != "":
			return nil, &Error{Reason: ReasonNumber, Offset: start, Message: "number underflows IEEE 754 binary64"}
		}
	}
	return json.Number(s), nil
}

// loneSurrogate matches jsontext's report of a \uD800–\uDFFF escape that is
// not half of a valid pair.
var loneSurrogate = regexp.MustCompile(`(?i)(surrogate pair|escape sequence) .*\\u[d][89a-f]`)

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
