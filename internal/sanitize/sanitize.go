// Package sanitize makes untrusted text (upstream bytes, validator and
// parser messages, file names, command output) safe to store in an audit
// record, print on a terminal or embed in a report: one set of rules for
// the gate's audit record and every report writer.
//
// Whatever the mode, the result is valid UTF-8 and holds no character a
// terminal or an XML 1.0 document would act on: invalid UTF-8 bytes, C0
// control characters, DEL, C1 control characters, U+2028 and U+2029,
// Unicode bidirectional controls (U+202E, U+2066, …), the noncharacters
// (U+FFFE and U+FFFF, which XML 1.0 §2.2 forbids, and the others), and the
// characters that render as nothing — format characters above U+00FF
// (zero-width space and joiners, TAG characters), variation selectors and
// other default-ignorable code points, which could hide text from the
// person reading the record — become visible escapes; only the mode's
// line breaks and tabs survive as themselves.
//
// For reports, which HTML viewers load (the report modes Line, Block and
// Name), the text also never holds "<!" (the start of an HTML or XML
// comment, CDATA section or declaration) or "]]>" (the end of a CDATA
// section): the "!" of "<!" is written \x21 and the ">" of "]]>" is written
// \x3e, so "<!--" reads "<\x21--" and "]]>" reads "]]\x3e". Escape (audit
// records, which are JSON) leaves both as they are.
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
	// Name is for identifiers (a testcase's name and classname, a suite's
	// name): like Escape it removes nothing and escapes newline, carriage
	// return, tab and ESC, and it also writes a backslash as \\, so the
	// result is one line and distinct inputs always give distinct results
	// (every backslash in the result starts an escape, so it decodes back).
	// A cut result is no longer distinct, so give a max that fits the name.
	Name
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
	if mode == Line || mode == Block {
		s = ansi.ReplaceAllString(s, "")
	}
	return text(s, 0, max, mode)
}

// text is Text on s[from:], with s[:from] as the context that decides
// whether a "!" or ">" at from is part of "<!" or "]]>".
func text(s string, from, max int, mode Mode) string {
	var b strings.Builder
	for i := from; i < len(s); {
		piece, size := next(s, i, mode)
		if b.Len()+len(piece) > max-len(Ellipsis) {
			// Cut only when the rest does not fit whole (no character
			// grows more than fourfold).
			if rest := text(s, i, 4*(len(s)-i)+len(Ellipsis), mode); b.Len()+len(rest) <= max {
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

// next returns the safe spelling of the character of s at i in mode and
// the number of bytes it consumed.
func next(s string, i int, mode Mode) (string, int) {
	r, size := utf8.DecodeRuneInString(s[i:])
	switch {
	case r == utf8.RuneError && size <= 1:
		return fmt.Sprintf(`\x%02x`, s[i]), 1
	case mode == Block && (r == '\n' || r == '\t'):
		return s[i : i+size], size
	case (mode == Line || mode == Block) && (r == '\n' || r == '\t' || r == '\r'):
		return " ", size
	case r < 0x20 || r == 0x7f:
		return fmt.Sprintf(`\x%02x`, r), size
	case r >= 0x80 && r < 0xa0, r == 0x2028, r == 0x2029, unicode.Is(unicode.Bidi_Control, r),
		r > 0xff && (unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Noncharacter_Code_Point, r) ||
			unicode.Is(unicode.Variation_Selector, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r)):
		return fmt.Sprintf(`\u{%04x}`, r), size
	case mode == Name && r == '\\':
		return `\\`, size
	case mode != Escape && r == '!' && strings.HasSuffix(s[:i], "<"),
		mode != Escape && r == '>' && strings.HasSuffix(s[:i], "]]"):
		return fmt.Sprintf(`\x%02x`, r), size
	}
	return s[i : i+size], size
}
