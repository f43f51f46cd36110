package strictyaml

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// The pre-scan reads a file the way the YAML scanner of go.yaml.in/yaml/v3
// (a port of libyaml) will split it into tokens, without building anything:
// plain, quoted and block scalars with their line folding, the indicators
// "- ? : , [ ] { }", tags, comments, document markers and directives, and
// block indentation with its simple-key rule (a key is a scalar or flow
// collection followed by ": " on the same line, within 1,024 characters).
// From that it counts the nodes and the nesting the parser will build and
// refuses, with a line and column:
//   - a character YAML does not allow, invalid UTF-8, a byte order mark
//     after the first byte;
//   - nesting past MaxDepth, indentation past MaxIndent, more than
//     MaxNodes nodes (MaxSchemaNodes for a file checked against a schema);
//   - an anchor or an alias (&a, *a): refused before anything could
//     expand them ("billion laughs");
//   - a second document: "---" after content or after a first "---",
//     content or a directive after "...";
//   - a tag directive (%TAG): the parser looks each tag up in a list of
//     them all;
//   - the syntax errors the scanner would report (a tab in indentation,
//     "- ", "? " or ": " where no block collection can start, a key
//     without its ":", a quoted scalar never closed, a bad block scalar
//     header, a character that cannot start a token), with the column the
//     parser leaves out.
//
// The parser's other errors (of its grammar: "did not find expected key")
// are left to it. A file the parser accepts is refused only for the
// reasons above.
type scan struct {
	data     []byte
	maxNodes int
	i        int // byte offset of the next character
	line     int // 1-based line of the next character
	col      int // 0-based column, in characters, of the next character
	idx      int // characters read so far

	indent int          // current block indentation; -1 outside every block collection
	levels []blockLevel // open block collections, innermost last
	flows  []flowLevel  // open flow collections, innermost last
	keys   []simpleKey  // the possible simple key of each flow level (len(flows)+1)
	keyOK  bool         // a simple key may start here
	pend   pending      // a node is due: after "- ", "? ", ": " or "---"

	lastLine int // line of the previous token
	depth    int // open collections
	deepest  int // most open collections so far
	nodes    int // nodes counted so far
	doc      int // docNone, docStarted, docContent or docEnded
	docLine  int // line of the first "---", or of the "..."

	err  *scanError // the refusal
	stop bool       // the parser fails here: stop counting
}

// scanError is a refusal of the pre-scan; line and column are 1-based.
type scanError struct {
	line, col int
	msg       string
}

const (
	docNone    = iota // nothing yet (comments, directives)
	docStarted        // a "---", no content yet
	docContent        // content
	docEnded          // a "..." after the document
)

type blockLevel struct {
	indent     int  // column of the collection's keys or entries
	seq        bool // a sequence ("- a"); else a mapping
	indentless bool // a mapping whose value is a sequence at the mapping's own indentation is open ("key:\n- a")
}

type flowLevel struct {
	seq      bool // "[" (else "{")
	pair     bool // "[": a single-pair mapping ("[a: b]") is open
	hasNode  bool // "{": the current entry has a key
	hasValue bool // "{": the current entry has a ":"
}

type simpleKey struct {
	possible       bool
	required       bool // at the indentation of a block mapping: it must be a key
	line, col, idx int
}

type pending struct {
	on     bool
	line   int
	indent int // block indentation when the node became due
}

// prescan checks data against the bounds and rules above; nil when it
// passes. It also returns its count of nodes and the deepest nesting it
// saw, up to where it stopped.
func prescan(data []byte, maxNodes int) (nodes, depth int, err *scanError) {
	s := runScan(data, maxNodes)
	return s.nodes, s.deepest, s.err
}

func runScan(data []byte, maxNodes int) *scan {
	if err := checkChars(data); err != nil {
		return &scan{err: err, stop: true}
	}
	s := &scan{data: data, maxNodes: maxNodes, line: 1, indent: -1, keyOK: true, keys: make([]simpleKey, 1, 8)}
	if len(data) >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF {
		s.i = 3 // the reader drops a leading byte order mark
	}
	for !s.stop {
		s.skipToToken()
		if s.stop {
			break
		}
		s.staleKey()
		if s.eof() {
			s.removeKey()
			s.unroll(-1)
			s.fill(false) // the due node was empty
			break
		}
		s.unroll(s.col)
		s.token()
	}
	return s
}

// checkChars refuses what the YAML reader refuses (invalid UTF-8, control
// characters: YAML 1.1 §5.1) and a byte order mark after the first byte.
func checkChars(data []byte) *scanError {
	line, col := 1, 1
	for i := 0; i < len(data); {
		c := data[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\n':
				line, col = line+1, 1
			case c == '\t' || c == '\r' || c >= 0x20 && c <= 0x7E:
				col++
			default:
				return &scanError{line, col, fmt.Sprintf("control character %#02x; YAML does not allow it (write it as an escape in a double-quoted string)", c)}
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			return &scanError{line, col, "not valid UTF-8"}
		case r == 0xFEFF && i > 0:
			return &scanError{line, col, "a byte order mark (U+FEFF) inside the file"}
		case r == 0x85 || r >= 0xA0 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000:
		default:
			return &scanError{line, col, fmt.Sprintf("control character %U; YAML does not allow it", r)}
		}
		i += n
		col++
	}
	return nil
}

func (s *scan) fail(line, col int, format string, args ...any) {
	if s.err == nil {
		s.err = &scanError{line, col + 1, fmt.Sprintf(format, args...)}
	}
	s.stop = true
}

func (s *scan) at(i int) byte {
	if i < len(s.data) {
		return s.data[i]
	}
	return 0
}

func (s *scan) eof() bool { return s.i >= len(s.data) }

// breakLen is the width in bytes of the line break at i, 0 if none. Like
// the YAML 1.1 reader, it counts CR LF, CR, LF, NEL, LS and PS.
func (s *scan) breakLen(i int) int {
	switch s.at(i) {
	case '\n':
		return 1
	case '\r':
		if s.at(i+1) == '\n' {
			return 2
		}
		return 1
	case 0xC2:
		if s.at(i+1) == 0x85 {
			return 2
		}
	case 0xE2:
		if s.at(i+1) == 0x80 && (s.at(i+2) == 0xA8 || s.at(i+2) == 0xA9) {
			return 3
		}
	}
	return 0
}

func (s *scan) blank(i int) bool { c := s.at(i); return c == ' ' || c == '\t' }

func (s *scan) blankz(i int) bool { return i >= len(s.data) || s.blank(i) || s.breakLen(i) > 0 }

// next moves past one character; a line break is one character.
func (s *scan) next() {
	if s.eof() {
		return
	}
	if n := s.breakLen(s.i); n > 0 {
		s.i += n
		s.line++
		s.col = 0
		s.idx++
		return
	}
	c := s.data[s.i]
	switch {
	case c < 0x80:
		s.i++
	case c < 0xE0:
		s.i += 2
	case c < 0xF0:
		s.i += 3
	default:
		s.i += 4
	}
	s.col++
	s.idx++
}

// marker reports a document marker ("---" or "...") at the next
// character: '-', '.' or 0.
func (s *scan) marker() byte {
	if s.col != 0 || s.i+3 > len(s.data) || !s.blankz(s.i+3) {
		return 0
	}
	switch string(s.data[s.i : s.i+3]) {
	case "---":
		return '-'
	case "...":
		return '.'
	}
	return 0
}

// skipToToken skips spaces, comments and line breaks (and tabs where YAML
// allows them: in flow context and after a key).
func (s *scan) skipToToken() {
	for {
		for s.at(s.i) == ' ' || s.at(s.i) == '\t' && (len(s.flows) > 0 || !s.keyOK) {
			s.next()
		}
		if s.at(s.i) == '#' {
			for !s.eof() && s.breakLen(s.i) == 0 {
				s.next()
			}
		}
		if s.eof() || s.breakLen(s.i) == 0 {
			return
		}
		s.next()
		if len(s.flows) == 0 {
			s.keyOK = true
		}
	}
}

// token reads one token at the next character.
func (s *scan) token() {
	line, col := s.line, s.col
	c := s.data[s.i]
	if col == 0 && c == '%' {
		if s.doc != docNone {
			s.fail(line, col, "a directive after the document begins a second YAML document; airlock's files hold one document")
			return
		}
		if bytes.HasPrefix(s.data[s.i:], []byte("%TAG")) {
			// The parser looks each tag handle up in a list of every
			// directive: many of both would cost their product.
			s.fail(line, col, "tag directives (%%TAG) are not allowed in airlock's files")
			return
		}
		for !s.eof() && s.breakLen(s.i) == 0 {
			s.next()
		}
		return
	}
	switch s.marker() {
	case '-':
		if s.doc != docNone {
			s.fail(line, col, "a second YAML document (\"---\") begins here; airlock's files hold one document")
			return
		}
		s.doc, s.docLine = docStarted, line
		s.unroll(-1)
		s.removeKey()
		s.keyOK = false
		s.i, s.col, s.idx = s.i+3, s.col+3, s.idx+3
		s.pend = pending{on: true, line: line, indent: -1}
		return
	case '.':
		if s.doc != docNone {
			s.unroll(-1)
			s.fill(false) // the due node was empty
			s.doc, s.docLine = docEnded, line
		}
		s.removeKey()
		s.keyOK = false
		s.i, s.col, s.idx = s.i+3, s.col+3, s.idx+3
		return
	}
	switch s.doc {
	case docEnded:
		s.fail(line, col, "content after the end of the document (\"...\" on line %d) begins a second YAML document; airlock's files hold one document", s.docLine)
		return
	default:
		s.doc = docContent
	}
	if len(s.flows) == 0 && line != s.lastLine && col > MaxIndent {
		s.fail(line, col, "indented more than %d columns; airlock's files are shallow", MaxIndent)
		return
	}
	s.lastLine = line

	flow := len(s.flows) > 0
	switch {
	case c == '[' || c == '{':
		s.saveKey()
		s.nodeStart(line, col)
		s.flows = append(s.flows, flowLevel{seq: c == '['})
		s.keys = append(s.keys, simpleKey{})
		s.enter(line, col)
		s.keyOK = true
		s.next()
	case c == ']' || c == '}':
		s.removeKey()
		s.fill(false) // the due node was empty
		if flow {
			s.endEntry()
			s.depth--
			s.flows = s.flows[:len(s.flows)-1]
			s.keys = s.keys[:len(s.keys)-1]
		}
		s.keyOK = false
		s.next()
	case c == ',':
		s.removeKey()
		s.fill(false) // the due node was empty
		if flow {
			s.endEntry()
		}
		s.keyOK = true
		s.next()
	case c == '-' && s.blankz(s.i+1):
		s.blockEntry(line, col)
	case c == '?' && (flow || s.blankz(s.i+1)):
		s.complexKey(line, col)
	case c == ':' && (flow || s.blankz(s.i+1)):
		s.value(line, col)
	case c == '*' || c == '&':
		s.fail(line, col, "YAML anchors and aliases are not allowed in airlock's files")
	case c == '!':
		s.saveKey()
		s.keyOK = false
		s.nodeStart(line, col) // counted apart from its node: errs high
		for !s.blankz(s.i) && !(flow && s.at(s.i) == ',') {
			s.next()
		}
	case (c == '|' || c == '>') && !flow:
		s.removeKey()
		s.keyOK = true
		s.nodeStart(line, col)
		s.blockScalar()
	case c == '\'' || c == '"':
		s.saveKey()
		s.keyOK = false
		s.nodeStart(line, col)
		s.quoted(c)
	case s.plainStart(c, flow):
		s.saveKey()
		s.keyOK = false
		s.nodeStart(line, col)
		s.plain()
	case c == '\t':
		s.fail(line, col, "a tab character in indentation; YAML indents with spaces")
	default:
		s.fail(line, col, "%q cannot start a YAML token", c)
	}
}

func (s *scan) plainStart(c byte, flow bool) bool {
	switch c {
	case '-':
		return !s.blank(s.i + 1)
	case '?', ':':
		return !flow && !s.blankz(s.i+1)
	case ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', ' ', '\t':
		return false
	}
	return s.breakLen(s.i) == 0
}

// blockEntry reads "- ".
func (s *scan) blockEntry(line, col int) {
	if len(s.flows) == 0 {
		if !s.keyOK {
			s.fail(line, col, "a sequence entry (\"- \") cannot start here")
			return
		}
		filled := s.roll(line, col, true)
		if top := s.top(); !filled && top != nil && !top.seq && !top.indentless && col == s.indent {
			// "key:\n- a": a sequence at the mapping's own indentation
			// is the key's value.
			top.indentless = true
			s.count(line, col, 1)
			s.enter(line, col)
			filled = s.pend.indent == s.indent
		}
		s.fill(filled)
	}
	s.removeKey()
	s.keyOK = true
	s.next()
	s.pend = pending{on: true, line: line, indent: s.indent}
}

// complexKey reads "? ".
func (s *scan) complexKey(line, col int) {
	if len(s.flows) == 0 {
		if !s.keyOK {
			s.fail(line, col, "a complex key (\"? \") cannot start here")
			return
		}
		s.fill(s.roll(line, col, false))
		s.endIndentless(col)
	} else {
		s.fill(false)
		s.pairInFlow(line, col)
	}
	s.count(line, col, 1) // its value may be empty: errs high when it is not
	s.removeKey()
	s.keyOK = len(s.flows) == 0
	s.next()
	s.pend = pending{on: true, line: line, indent: s.indent}
}

// value reads ": " (or ":" in flow context).
func (s *scan) value(line, col int) {
	flow := len(s.flows) > 0
	k := &s.keys[len(s.keys)-1]
	if k.possible && k.line == line && k.idx+1024 >= s.idx {
		// The scalar or flow collection before it is the key; the
		// mapping starts at the key's column.
		k.possible = false
		if flow {
			s.pairInFlow(line, col)
		} else {
			s.roll(line, k.col, false)
			s.endIndentless(k.col)
		}
		s.keyOK = false
	} else {
		if flow {
			s.fill(false)
			s.pairInFlow(line, col)
		} else {
			if !s.keyOK {
				s.fail(line, col, "a mapping value (\": \") cannot start here")
				return
			}
			s.fill(s.roll(line, col, false))
			s.endIndentless(col)
		}
		s.count(line, col, 1) // the empty key
		s.keyOK = !flow
	}
	s.next()
	s.pend = pending{on: true, line: line, indent: s.indent}
}

// pairInFlow notes a key or value indicator in a flow collection: in a
// flow mapping the entry has a value; in a flow sequence the entry is a
// single-pair mapping, one node and one level more.
func (s *scan) pairInFlow(line, col int) {
	f := &s.flows[len(s.flows)-1]
	if !f.seq {
		f.hasValue = true
		return
	}
	if !f.pair {
		f.pair = true
		s.count(line, col, 1)
		s.enter(line, col)
	}
}

// endEntry closes the current entry of a flow collection at "," or a
// closing bracket: "{a}" gives a an empty value; "[a: b]" closes its
// single-pair mapping.
func (s *scan) endEntry() {
	f := &s.flows[len(s.flows)-1]
	if !f.seq && f.hasNode && !f.hasValue {
		s.count(s.line, s.col, 1)
	}
	if f.pair {
		s.depth--
	}
	f.pair, f.hasNode, f.hasValue = false, false, false
}

func (s *scan) top() *blockLevel {
	if len(s.levels) == 0 {
		return nil
	}
	return &s.levels[len(s.levels)-1]
}

// endIndentless ends a sequence at its mapping's indentation when a key of
// the mapping follows it.
func (s *scan) endIndentless(col int) {
	if top := s.top(); top != nil && top.indentless && col == s.indent {
		top.indentless = false
		s.depth--
	}
}

// roll starts a block collection at col when col is deeper than the
// current indentation; it reports whether it did.
func (s *scan) roll(line, col int, seq bool) bool {
	if len(s.flows) > 0 || s.indent >= col {
		return false
	}
	s.levels = append(s.levels, blockLevel{indent: col, seq: seq})
	s.indent = col
	s.count(line, col, 1)
	s.enter(line, col)
	return true
}

// unroll closes the block collections indented deeper than col.
func (s *scan) unroll(col int) {
	if len(s.flows) > 0 {
		return
	}
	for s.indent > col {
		top := s.levels[len(s.levels)-1]
		s.depth--
		if top.indentless {
			s.depth--
		}
		s.levels = s.levels[:len(s.levels)-1]
		s.indent = -1
		if t := s.top(); t != nil {
			s.indent = t.indent
		}
	}
}

func (s *scan) saveKey() {
	if s.keyOK {
		s.removeKey()
		s.keys[len(s.keys)-1] = simpleKey{possible: true, required: len(s.flows) == 0 && s.indent == s.col, line: s.line, col: s.col, idx: s.idx}
	}
}

// removeKey drops the possible simple key of the current flow level; one
// at a block mapping's indentation had to be a key.
func (s *scan) removeKey() {
	k := &s.keys[len(s.keys)-1]
	if k.possible && k.required {
		s.fail(k.line, k.col, "could not find the ':' of this key (a line at a mapping's indentation holds a key and its ':')")
	}
	k.possible = false
}

// staleKey drops the possible simple key of the current flow level once
// the scan has left its line or gone 1,024 characters past it.
func (s *scan) staleKey() {
	k := &s.keys[len(s.keys)-1]
	if k.possible && (k.line < s.line || k.idx+1024 < s.idx) {
		s.removeKey()
	}
}

// nodeStart counts a scalar, a flow collection or a tag at line, col, and
// settles the node that was due: it is this one when it follows on the
// same line, deeper than the indentation it was due at, or in flow
// context; else the due node was empty.
func (s *scan) nodeStart(line, col int) {
	if s.pend.on {
		s.fill(len(s.flows) > 0 || line == s.pend.line || col > s.pend.indent)
	}
	s.count(line, col, 1)
	if len(s.flows) > 0 {
		s.flows[len(s.flows)-1].hasNode = true
	}
}

// fill settles the node that was due: filled, or an empty node (before a
// closing bracket, a separator, a document end or the end of the file).
func (s *scan) fill(filled bool) {
	if s.pend.on {
		s.pend.on = false
		if !filled {
			s.count(s.line, s.col, 1)
		}
	}
}

func (s *scan) count(line, col, n int) {
	s.nodes += n
	if s.nodes > s.maxNodes {
		s.fail(line, col, tooManyNodes, s.maxNodes)
	}
}

func (s *scan) enter(line, col int) {
	s.depth++
	s.deepest = max(s.deepest, s.depth)
	if s.depth > MaxDepth {
		s.fail(line, col, "nested more than %d levels deep; airlock's files are shallow", MaxDepth)
	}
}
