// Package sanitize makes untrusted text (upstream bytes, validator and
// parser messages, file names, command output) safe to store in an audit
// record, print on a terminal or embed in a report: one set of rules for
// the gate's audit record and every report writer.
//
// Whatever the mode, the result is valid UTF-8 and holds no character a
// terminal or an XML 1.0 document would act on: invalid UTF-8 bytes, C0
// control characters, DEL, C1 control characters, U+2028 and U+2029,
// Unicode bidirectional controls (U+202E, U+2066, …) and the noncharacters
// U+FFFE and U+FFFF (which XML 1.0 §2.2 forbids) become visible escapes;
// only the mode's line breaks and tabs survive as themselves.
package sanitize

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Mode says what Text does with ANSI escape sequences, line breaks and tabs.
type Mode int

const (
	// Escape keeps everything visible: an ANSI escape sequence keeps its
	// text with ESC written as \x1b, and newline, carriage return and tab
	// are escaped (\x0a, \x0d, \x09). For audit records and logs, where the
	// operator should see what the upstream sent.
	Escape Mode = iota
	// Line removes ANSI escape sequences and turns newline, carriage return
	// and tab into spaces, so the result is one line. For one-line report
	// messages.
	Line
	// Block removes ANSI escape sequences, keeps newlines and tabs, and
	// turns carriage returns into spaces. For multi-line report bodies.
	Block
)

// Ellipsis ends a result that Text cut.
const Ellipsis = "…"

// ansi matches ANSI/VT100 escape sequences (ECMA-48 CSI and OSC forms, and
// a lone ESC with one following byte).
var ansi = regexp.MustCompile(`\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|.)?`)

// Text makes s safe as described in the package comment, in mode, and cuts
// the result to at most max bytes: when the whole result does not fit, it
// keeps the longest prefix of whole escapes and whole UTF-8 sequences that
// fits with Ellipsis after it. A max below len(Ellipsis) gives at most
// Ellipsis. An invalid byte becomes \xNN, a C0 control or DEL \xNN, any
// other escaped character \u{NNNN} (hexadecimal, at least four digits).
func Text(s string, max int, mode Mode) string {
	if mode != Escape {
		s = ansi.ReplaceAllString(s, "")
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		piece, size := next(s[i:], mode)
		if b.Len()+len(piece) > max-len(Ellipsis) {
			// Cut only when the rest does not fit whole.
			if rest := Text(s[i:], 4*(len(s)-i)+len(Ellipsis), mode); b.Len()+len(rest) <= max {
				return b.String() + rest
			}
			if b.Len()+len(Ellipsis) <= max {
				b.WriteString(Ellipsis)
			}
			return b.String()
		}
		b.WriteString(piece)
		i += size
	}
	return b.String()
}

// next returns the safe spelling of the first character of s in mode and
// the number of bytes it consumed.
func next(s string, mode Mode) (string, int) {
	r, size := utf8.DecodeRuneInString(s)
	switch {
	case r == utf8.RuneError && size <= 1:
		return fmt.Sprintf(`\x%02x`, s[0]), 1
	case mode == Block && (r == '\n' || r == '\t'):
		return s[:size], size
	case mode != Escape && (r == '\n' || r == '\t' || r == '\r'):
		return " ", size
	case r < 0x20 || r == 0x7f:
		return fmt.Sprintf(`\x%02x`, r), size
	case r >= 0x80 && r < 0xa0, r == 0xfffe, r == 0xffff, r == 0x2028, r == 0x2029, unicode.Is(unicode.Bidi_Control, r):
		return fmt.Sprintf(`\u{%04x}`, r), size
	}
	return s[:size], size
}
