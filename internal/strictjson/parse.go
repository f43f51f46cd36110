// Package strictjson is airlock's strict JSON parser: RFC 8259 plus I-JSON
// (RFC 7493) with limits, built on go-json-experiment's jsontext. It is the
// gate's parse stage and the one parser the harness uses for fixtures,
// mutants, schema files and agent outputs, so that every part of airlock
// reads JSON the same way.
//
// Parse returns values as map[string]any, []any, string, json.Number (the
// number token's exact text), bool and nil. ParseTape lays the same value
// out on a Tape instead — one node per value in document order, no map per
// object, no boxed string — which is what the gate's success path reads:
// the compiled validator, the projection and the semantic rules' view.
package strictjson

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
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
	ReasonFoldCollision = "parse.member_fold_collision"
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

// MaxRepeats is the most repeated member names one refusal lists
// (Error.Repeats): the parse goes on after the first to find the others and
// stops at the MaxRepeats-th.
const MaxRepeats = 16

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
	// FoldCollisions, when true, also refuses two member names of one object
	// that differ but are equal under Unicode simple case folding, as
	// strings.EqualFold compares them ("Role" and "role"; "ſ" U+017F and
	// "s"; the Kelvin sign U+212A and "k"): parse.member_fold_collision. A
	// case-insensitive decoder downstream (Go's encoding/json among them)
	// reads such names as one member. False, the zero value, is plain RFC
	// 8259 + I-JSON: only names equal after unescaping are refused. The
	// gate's parse stage sets it unless the contract turns it off.
	FoldCollisions bool
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
//     refused at any depth (parse.duplicate_member; RFC 7493 §2.3); with
//     lim.FoldCollisions, so are two names equal under simple case folding
//     (parse.member_fold_collision). The reason is that of the first repeat
//     in the text; the parse goes on to list the others (Error.Repeats, at
//     most MaxRepeats) until the end of the text or another error;
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
// A refusal is returned as an *Error with a byte offset and a JSON Pointer
// (see Error.Pointer); Parse never panics on any input and keeps no
// reference to body.
//
// Memory: the text of the strings and numbers returned is copied out of
// body into chunks that they share, and the arrays are cut from shared
// slabs, so that a parse makes few allocations beside its maps (chunks and
// slabs grow from 512 bytes to 16 KiB; a longer string or array has one of
// its own). A value the caller keeps keeps its chunk or slab alive, so
// what a result retains is at most what the parse allocated. That is at
// most 72 × len(body) + 64 KiB bytes: about 4 per body byte for an API
// page (a list of objects of strings, numbers and small arrays), 57 for a
// body of one-member objects and 64 for nested ones, as each object is a
// Go map of at least 48 bytes, or 336 with members. An object of more than
// 16 members is added to its map as it is read, with no other copy of its
// members and no map from name to member beside it (with FoldCollisions,
// a set of the 64-bit hashes of the names that are not their own fold, 8
// bytes a slot); its map is made for the members counted ahead in the
// body. A 16 MiB object of 1.4 million 12-byte members allocates about 5.5
// bytes per body byte and keeps 5.4 (its names in capitals: allocates 7.8,
// at most 6.7 live at once). The tests pin the bound.
//
// Cost: one pass over body, and one more over each object of more than 16
// members that no such object encloses, to count its members. Each member
// name is compared with at most 15 earlier names of its object (an object
// of up to 16 members is searched linearly; a larger one looks the name,
// and with FoldCollisions its fold, up in its map and the fold's hash in
// its set), so finding repeats costs at most 15 name comparisons per
// member; folding a name costs a constant
// per rune (unicode.SimpleFold orbits have at most 4 runes). In an object
// of more than 16 members, the earlier member a repeat repeats is found by
// reading the object again up to the repeat, at most MaxRepeats times in a
// parse (and, about once in 2^64 pairs of names, for two folds that hash
// alike). Tracking the path costs a constant per value; a refusal's
// pointers (at most MaxRepeats+1) are built from it, each at most as long
// as the body.
func Parse(body []byte, lim Limits) (any, error) {
	v, r := parse(body, lim.withDefaults(), nil)
	if r != nil {
		return nil, r
	}
	return v, nil
}

// jsonParser builds the value from jsontext's tokens.
type jsonParser struct {
	dec *jsontext.Decoder
	in  bytes.Buffer // what dec reads: the body, in place
	// body is the body, to read an object again (see earlier).
	body []byte
	lim  Limits
	// text holds the strings and numbers of the value being built.
	text    text
	names   map[string]string // interned member names: arrays of objects repeat them
	values  map[string]any    // shared short string values (see strValue)
	numbers map[string]any    // shared short numbers, likewise
	// slab is where arrays are cut from (see newArray); nextSlab is the
	// size of the next one.
	slab     []any
	nextSlab int
	// unquoted is scratch space for unescaping a string; folded for
	// folding a member name.
	unquoted, folded []byte
	// foldSets are idle maps for frame.folds.m, cleared.
	foldSets []map[uint32]uint32
	// members and elems are stacks of the open objects' members and open
	// arrays' elements: each array, and each object of up to smallObject
	// members, is built once its size is known, so no map or slice is grown
	// and copied on the way. (A larger object's members are moved into its
	// map, which grows as they are read: see frame.obj.) A full stack
	// doubles (append alone grows a large slice by a quarter, and so copies
	// it more often); it holds at most smallObject members of each open
	// object.
	members []member
	elems   []any
	// frames are the open objects and arrays, outermost first: the path to
	// the value being read, for the JSON Pointer of an error.
	frames []frame
	// repeats are the repeated member names found so far.
	repeats []Repeat
	// size is the body's length in bytes.
	size int64
	// tape, when set, is what the parse lays the value out on instead of
	// building it (ParseTape): value, object and array then return nil.
	tape *tapeBuilder
	// nameSpans are the member names written to the tape so far.
	nameSpans map[string]span
	// counted is where the last count of members ahead ended (see more).
	counted int64
}

type member struct {
	name  string
	value any
	off   int64 // where the name's opening quote is
}

// frame is one open object or array.
type frame struct {
	array bool
	// open is true while a member's value or an element is being read; the
	// pointer then ends in name (objects) or index (arrays).
	open  bool
	name  string
	index int
	// base is where the object's members start on the members stack.
	base int
	// start is the offset of the object's "{".
	start int64
	// nameSpan is where name is in the tape's text (ParseTape).
	nameSpan span
	// obj is the map of an object past smallObject members: they are moved
	// off the members stack into it, and each later one is added once its
	// value is read. It is also where a name is looked up for an exact
	// repeat.
	obj map[string]any
	// folds holds, with Limits.FoldCollisions, the hash of FoldName(name)
	// for each name in obj that is not its own fold ("Role", not "role"):
	// a name folds like an earlier one when its fold is a name in obj or
	// its fold's hash is in folds (see checkName).
	folds hashSet
}

// smallObject is the number of members up to which an object's names are
// searched linearly for a repeat and its members kept on the members
// stack; past it the object keeps a map.
const smallObject = 16

const maxInterned = 4096

// decoderOptions: repeated names are found by the parser itself, so that
// it can go on and name them all.
var decoderOptions = jsontext.AllowDuplicateNames(true)

// parsers holds idle parsers, so that a call reuses a decoder's state and
// the scratch stacks of an earlier one instead of allocating them.
var parsers = sync.Pool{New: func() any {
	return &jsonParser{dec: jsontext.NewDecoder(noInput, decoderOptions)}
}}

// noInput is what an idle parser's decoder reads, so that the pool holds no
// reference to a body.
var noInput = strings.NewReader("")

// maxPooledStack is the largest scratch stack, in entries, kept for reuse;
// larger ones are dropped rather than pinned in the pool.
const maxPooledStack = 1 << 10

// maxPooledScratch is the largest scratch buffer, in bytes, kept for reuse.
const maxPooledScratch = 1 << 16

// release makes p idle and returns it to the pool, keeping no reference to
// the body or to any value built from it.
func (p *jsonParser) release() {
	p.dec.Reset(noInput, decoderOptions)
	p.in = bytes.Buffer{}
	p.body, p.counted = nil, 0
	p.text = text{}
	p.slab, p.nextSlab = nil, 0
	if cap(p.unquoted) > maxPooledScratch {
		p.unquoted = nil
	}
	if cap(p.folded) > maxPooledScratch {
		p.folded = nil
	}
	clear(p.members)
	clear(p.elems)
	clear(p.frames)
	p.members, p.elems, p.frames = p.members[:0], p.elems[:0], p.frames[:0]
	p.repeats = nil
	p.tape = nil
	if len(p.nameSpans) > maxPooledStack {
		p.nameSpans = nil
	} else {
		clear(p.nameSpans)
	}
	if cap(p.members) > maxPooledStack {
		p.members = nil
	}
	if cap(p.elems) > maxPooledStack {
		p.elems = nil
	}
	if cap(p.frames) > maxPooledStack {
		p.frames = nil
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
	if len(p.numbers) > maxPooledStack {
		p.numbers = nil
	} else {
		clear(p.numbers)
	}
	parsers.Put(p)
}

// errEnough stops the parse once MaxRepeats repeated names are found.
var errEnough = &Error{Reason: "enough repeats"}

func parse(body []byte, lim Limits, tape *tapeBuilder) (any, *Error) {
	for _, bom := range [][]byte{{0xEF, 0xBB, 0xBF}, {0xFE, 0xFF}, {0xFF, 0xFE}} {
		if bytes.HasPrefix(body, bom) {
			return nil, &Error{Reason: ReasonBOM, Offset: 0, Message: "body starts with a byte order mark"}
		}
	}
	p := parsers.Get().(*jsonParser)
	defer p.release()
	p.lim, p.size, p.body, p.tape = lim, int64(len(body)), body, tape
	// A *bytes.Buffer lets jsontext read body in place, without a copy.
	p.in = *bytes.NewBuffer(body)
	p.dec.Reset(&p.in, decoderOptions)
	v, r := p.value()
	if r == nil {
		end := p.dec.InputOffset()
		if _, err := p.dec.ReadToken(); err != io.EOF {
			// The offset of the second value: past the whitespace that
			// follows the first.
			off := end
			for off < int64(len(body)) && isSpace(body[off]) {
				off++
			}
			r = &Error{Reason: ReasonTrailingData, Offset: off, Message: "data after the top-level value"}
		}
	}
	if len(p.repeats) > 0 {
		return nil, p.repeatError(r)
	}
	if r != nil {
		return nil, r
	}
	return v, nil
}

// isSpace reports whether c is JSON whitespace (RFC 8259 §2).
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (p *jsonParser) value() (any, *Error) {
	switch p.dec.PeekKind() {
	case '{':
		return p.object()
	case '[':
		return p.array()
	case '"':
		raw, err := p.dec.ReadValue()
		if err != nil {
			return nil, p.fail(err)
		}
		if p.tape != nil {
			sp, r := p.tapeString(raw)
			if r == nil {
				p.emit(KindString, sp)
			}
			return nil, r
		}
		return p.strValue(raw)
	case '0':
		raw, err := p.dec.ReadValue()
		if err != nil {
			return nil, p.fail(err)
		}
		if p.tape != nil {
			sp, r := p.tapeNumber(raw)
			if r == nil {
				p.emit(KindNumber, sp)
			}
			return nil, r
		}
		return p.number(raw)
	case 't', 'f', 'n':
		tok, err := p.dec.ReadToken()
		if err != nil {
			return nil, p.fail(err)
		}
		if p.tape != nil {
			k := KindNull
			if tok.Kind() != 'n' {
				k = KindFalse
				if tok.Bool() {
					k = KindTrue
				}
			}
			p.emit(k, span{})
			return nil, nil
		}
		if tok.Kind() == 'n' {
			return nil, nil
		}
		return tok.Bool(), nil
	default:
		// PeekKind reports 0 on an error or at the end of input; ReadToken
		// returns that error. Any other kind here ('}' or ']') is misplaced.
		_, err := p.dec.ReadToken()
		if err == nil || err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, p.truncated(true)
		}
		return nil, p.fail(err)
	}
}

// object reads an object whose "{" is next; its members are collected on
// the members stack and the map is built once their number is known.
func (p *jsonParser) object() (any, *Error) {
	if len(p.frames) >= p.lim.MaxDepth {
		return nil, p.tooDeep()
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return nil, p.fail(err)
	}
	head := int32(-1)
	if p.tape != nil {
		head = p.emit(KindObject, span{})
	}
	base := len(p.members)
	p.frames = append(p.frames, frame{base: base, start: p.dec.InputOffset() - 1})
	top := len(p.frames) - 1
	for p.dec.PeekKind() != '}' {
		raw, err := p.dec.ReadValue()
		if err != nil {
			return nil, p.fail(err)
		}
		if raw.Kind() != '"' {
			return nil, p.errorAt(ReasonSyntax, p.dec.InputOffset(), "member name is not a string")
		}
		off := p.dec.InputOffset() - int64(len(raw))
		var name string
		var nsp span
		var r *Error
		if p.tape != nil {
			name, nsp, r = p.tapeName(raw)
		} else {
			name, r = p.str(raw, true)
		}
		if r != nil {
			return nil, r
		}
		if r := p.checkName(name, off); r != nil {
			return nil, r
		}
		// frames may grow (and move) while the value is read: index it.
		p.frames[top].name, p.frames[top].nameSpan, p.frames[top].open = name, nsp, true
		v, r := p.value()
		if r != nil {
			return nil, r
		}
		f := &p.frames[top]
		f.open = false
		if f.obj != nil {
			f.obj[name] = v
			continue
		}
		if len(p.members) == cap(p.members) {
			p.members = slices.Grow(p.members, len(p.members))
		}
		p.members = append(p.members, member{name, v, off})
		if len(p.members)-base == smallObject {
			// The next member is looked up in the map (see checkName).
			if p.lim.FoldCollisions {
				for _, m := range p.members[base:] {
					p.fold(f, m.name, true)
				}
			}
			f.obj = p.build(base, p.more())
		}
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return nil, p.fail(err)
	}
	f := p.frames[top]
	if f.folds.m != nil && len(f.folds.m) <= maxPooledStack {
		clear(f.folds.m)
		p.foldSets = append(p.foldSets, f.folds.m)
	}
	p.frames[top] = frame{}
	p.frames = p.frames[:top]
	if head >= 0 {
		// On a tape the members are nodes: the map of a large object was
		// only the index its names were looked up in.
		n := len(p.members) - base
		if f.obj != nil {
			n = len(f.obj)
		} else {
			clear(p.members[base:])
			p.members = p.members[:base]
		}
		p.tape.t.Nodes[head].Len = int32(n)
		p.tape.t.Nodes[head].End = int32(len(p.tape.t.Nodes))
		return nil, nil
	}
	if f.obj != nil {
		return f.obj, nil
	}
	return p.build(base, 0), nil
}

// build moves the members of an object, from base on the members stack,
// into a new map with room for them and more, and pops them.
func (p *jsonParser) build(base, more int) map[string]any {
	obj := make(map[string]any, len(p.members)-base+more)
	for _, m := range p.members[base:] {
		obj[m.name] = m.value
	}
	clear(p.members[base:])
	p.members = p.members[:base]
	return obj
}

// more is about how many members the object being read has after the
// one just read, for the size of its map, so that a large object's map is
// made once rather than grown (growing leaves as much garbage as it keeps).
// It counts the object's member names ahead in the body (strings followed
// by ":" outside nested values) up to its "}" or the end of the body, and
// at most one per 8 bytes left: the map of a body that is not JSON is no
// larger than that of a valid object of 8-byte members ("abc":0,), and the
// map of an object of shorter members grows past its count. Inside an
// object whose members were counted so it counts none, and the map grows
// as it is read: each byte is counted over at most once.
func (p *jsonParser) more() int {
	from := p.dec.InputOffset()
	if from < p.counted {
		return 0
	}
	b := p.body[from:]
	n, depth, i := 0, 0, 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if depth > 0 {
				continue
			}
			j := i + 1
			for j < len(b) && isSpace(b[j]) {
				j++
			}
			if j < len(b) && b[j] == ':' {
				n++
			}
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		}
		if depth < 0 {
			break
		}
	}
	p.counted = from + int64(i)
	return min(n, len(b)/8)
}

// array reads an array whose "[" is next.
func (p *jsonParser) array() (any, *Error) {
	if len(p.frames) >= p.lim.MaxDepth {
		return nil, p.tooDeep()
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return nil, p.fail(err)
	}
	head := int32(-1)
	if p.tape != nil {
		head = p.emit(KindArray, span{})
	}
	base := len(p.elems)
	p.frames = append(p.frames, frame{array: true})
	top := len(p.frames) - 1
	for {
		k := p.dec.PeekKind()
		if k == ']' {
			break
		}
		if k == 0 {
			// The end of input or an error between elements: located at
			// the array, not at an element that does not exist.
			_, err := p.dec.ReadToken()
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, p.fail(err)
		}
		p.frames[top].open = true
		v, r := p.value()
		if r != nil {
			return nil, r
		}
		p.frames[top].open = false
		p.frames[top].index++
		if head >= 0 {
			continue
		}
		if len(p.elems) == cap(p.elems) {
			p.elems = slices.Grow(p.elems, len(p.elems))
		}
		p.elems = append(p.elems, v)
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return nil, p.fail(err)
	}
	if head >= 0 {
		p.tape.t.Nodes[head].Len = int32(p.frames[top].index)
		p.tape.t.Nodes[head].End = int32(len(p.tape.t.Nodes))
		p.frames = p.frames[:top]
		return nil, nil
	}
	p.frames = p.frames[:top]
	arr := p.newArray(p.elems[base:])
	clear(p.elems[base:])
	p.elems = p.elems[:base]
	return arr, nil
}

// The first slab of a parse is made for minSlab elements (16 bytes each),
// each next one for twice as many as the last, up to maxSlab (a longer
// array gets a slab of its own size).
const (
	minSlab = 32
	maxSlab = 1 << 10
)

// newArray returns a copy of elems cut from the slab: arrays share a slab
// instead of being allocated one by one. Each has its length as its
// capacity, so an append to it copies it instead of writing into the next
// array. A new slab is made for what is left of the input at most: every
// element still to be read takes two bytes of it at least (the value, then
// "," or "]"), and the elements read but not yet placed are on the stack.
func (p *jsonParser) newArray(elems []any) []any {
	n := len(elems)
	if n == 0 {
		return make([]any, 0)
	}
	if len(p.slab) < n {
		p.nextSlab = min(max(2*p.nextSlab, minSlab), maxSlab)
		rest := (p.size-p.dec.InputOffset())/2 + int64(len(p.elems)-n)
		p.slab = make([]any, max(n, int(min(rest, int64(p.nextSlab)))))
	}
	arr := p.slab[:n:n]
	p.slab = p.slab[n:]
	copy(arr, elems)
	return arr
}

func (p *jsonParser) tooDeep() *Error {
	return p.errorAt(ReasonDepth, p.dec.InputOffset(), fmt.Sprintf("nesting deeper than %d", p.lim.MaxDepth))
}

// maxSharedString is the longest string value, in bytes, that a parse
// shares between equal occurrences: short strings (states, kinds, names)
// repeat across the elements of an array.
const maxSharedString = 16

// loneSurrogate matches jsontext's report of a \uD800–\uDFFF escape that is
// not half of a valid pair.
var loneSurrogate = regexp.MustCompile(`(?i)(surrogate pair|escape sequence) .*\\u[d][89a-f]`)
