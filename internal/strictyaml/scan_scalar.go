package strictyaml

// The pre-scan's scalars (see scan.go): plain, quoted and block scalars are
// skipped over as the YAML scanner would split them, building nothing; the
// structure scan counts each as one node.

// plain reads a plain scalar, continuation lines included (YAML 1.1 §9.1.3;
// as the scanner does: it ends at ": ", " #", a document marker, a flow
// indicator in flow context, or a line indented no deeper than the current
// block).
func (s *scan) plain() {
	indent := s.indent + 1
	leadingBreak := false
	for {
		if s.marker() != 0 || s.at(s.i) == '#' {
			break
		}
		for !s.blankz(s.i) {
			c := s.data[s.i]
			if c == ':' && s.blankz(s.i+1) {
				break
			}
			if len(s.flows) > 0 && (c == ',' || c == '?' || c == '[' || c == ']' || c == '{' || c == '}') {
				break
			}
			leadingBreak = false
			s.next()
		}
		if !s.blank(s.i) && s.breakLen(s.i) == 0 {
			break
		}
		for s.blank(s.i) || s.breakLen(s.i) > 0 {
			if s.blank(s.i) {
				if leadingBreak && s.col < indent && s.data[s.i] == '\t' {
					s.fail(s.line, s.col, "a tab character in indentation; YAML indents with spaces")
					return
				}
			} else {
				leadingBreak = true
			}
			s.next()
		}
		if len(s.flows) == 0 && s.col < indent {
			break
		}
	}
	if leadingBreak {
		s.keyOK = true
	}
}

// quoted reads a single- or double-quoted scalar.
func (s *scan) quoted(q byte) {
	line, col := s.line, s.col
	s.next()
	for {
		if s.eof() {
			s.fail(line, col, "a quoted string (%c) that is never closed", q)
			return
		}
		if s.marker() != 0 {
			s.fail(s.line, s.col, "a document marker (---, ...) inside the quoted string that starts on line %d", line)
			return
		}
		for !s.blankz(s.i) {
			c := s.data[s.i]
			if q == '\'' && c == '\'' && s.at(s.i+1) == '\'' {
				s.next()
				s.next()
				continue
			}
			if c == q {
				break
			}
			if q == '"' && c == '\\' {
				s.next()
				if s.breakLen(s.i) > 0 {
					s.next()
					break
				}
			}
			s.next()
		}
		if !s.eof() && s.data[s.i] == q {
			s.next()
			return
		}
		for s.blank(s.i) || s.breakLen(s.i) > 0 {
			s.next()
		}
	}
}

// blockScalar reads a literal or folded block scalar: its header, then
// every line indented at least as deep as its content.
func (s *scan) blockScalar() {
	s.next()
	increment := 0
	digit := func() bool {
		if d := s.at(s.i); d >= '0' && d <= '9' {
			if d == '0' {
				return false
			}
			increment = int(d - '0')
			s.next()
		}
		return true
	}
	if c := s.at(s.i); c == '+' || c == '-' {
		s.next()
		if !digit() {
			s.fail(s.line, s.col, "a block scalar's indentation indicator must be 1 to 9, not 0")
			return
		}
	} else if c >= '0' && c <= '9' {
		if !digit() {
			s.fail(s.line, s.col, "a block scalar's indentation indicator must be 1 to 9, not 0")
			return
		}
		if c := s.at(s.i); c == '+' || c == '-' {
			s.next()
		}
	}
	for s.blank(s.i) {
		s.next()
	}
	if s.at(s.i) == '#' {
		for !s.eof() && s.breakLen(s.i) == 0 {
			s.next()
		}
	}
	if !s.eof() && s.breakLen(s.i) == 0 {
		s.fail(s.line, s.col, "text after a block scalar's header (%s); the text starts on the next line", "| or >")
		return
	}
	s.next()
	indent := 0
	if increment > 0 {
		indent = max(s.indent, 0) + increment
	}
	if !s.blockBreaks(&indent) {
		return
	}
	for s.col == indent && !s.eof() {
		for !s.eof() && s.breakLen(s.i) == 0 {
			s.next()
		}
		s.next()
		if !s.blockBreaks(&indent) {
			return
		}
	}
}

// blockBreaks skips the indentation and the empty lines of a block scalar;
// with *indent 0 it settles the indentation from the first content line.
func (s *scan) blockBreaks(indent *int) bool {
	deepest := 0
	for {
		for (*indent == 0 || s.col < *indent) && s.at(s.i) == ' ' {
			s.next()
		}
		deepest = max(deepest, s.col)
		if (*indent == 0 || s.col < *indent) && s.at(s.i) == '\t' {
			s.fail(s.line, s.col, "a tab character in indentation; YAML indents with spaces")
			return false
		}
		if s.breakLen(s.i) == 0 {
			break
		}
		s.next()
	}
	if *indent == 0 {
		*indent = max(deepest, s.indent+1, 1)
	}
	return true
}
