package reports

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Default caps, in bytes, for text written into reports.
const (
	MaxMessage = 512      // a failure message, one line
	MaxDetail  = 16 << 10 // a failure body (diff, details)
)

// ansi matches ANSI/VT100 escape sequences (CSI and OSC forms, and a lone
// ESC with one following byte).
var ansi = regexp.MustCompile(`\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|.)?`)

// Clean makes s safe for any report, terminal or XML 1.0 document: ANSI
// escape sequences are removed; invalid UTF-8 bytes, control characters
// (C0 except tab and, when multiline, newline; DEL; C1), bidirectional
// controls (U+202E, …) and characters XML 1.0 forbids (U+FFFE, U+FFFF)
// become visible \xNN or \u{NNNN} text;
// with multiline false, newlines and tabs become spaces so the result is one
// line; the result is at most max bytes, ending in "…" when cut.
func Clean(s string, max int, multiline bool) string {
	s = ansi.ReplaceAllString(s, "")
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		var piece string
		switch {
		case r == utf8.RuneError && size <= 1:
			piece = fmt.Sprintf(`\x%02x`, s[i])
		case r == '\n' && multiline, r == '\t' && multiline:
			piece = s[i : i+size]
		case r == '\n' || r == '\t' || r == '\r':
			piece = " "
		case r < 0x20 || r == 0x7f:
			piece = fmt.Sprintf(`\x%02x`, r)
		case r >= 0x80 && r < 0xa0, r == 0xfffe, r == 0xffff, r == 0x2028, r == 0x2029, unicode.Is(unicode.Bidi_Control, r):
			piece = fmt.Sprintf(`\u{%04x}`, r)
		default:
			piece = s[i : i+size]
		}
		if b.Len()+len(piece) > max-len("…") {
			b.WriteString("…")
			return b.String()
		}
		b.WriteString(piece)
		i += size
	}
	return b.String()
}

// Line is Clean for a one-line message capped at MaxMessage.
func Line(s string) string { return Clean(s, MaxMessage, false) }

// Block is Clean for a multi-line body capped at MaxDetail.
func Block(s string) string { return Clean(s, MaxDetail, true) }
