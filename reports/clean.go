package reports

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/airlockdev/airlock/internal/sanitize"
)

// Default caps, in bytes, for text written into reports.
const (
	MaxMessage = 512      // a failure message, one line
	MaxDetail  = 16 << 10 // a failure body (diff, details)
)

// Clean makes s safe for any report, terminal, XML 1.0 document or HTML
// viewer, with the rules every airlock output shares (package
// internal/sanitize): ANSI
// escape sequences are removed; invalid UTF-8 bytes, control characters
// (C0 except tab and, when multiline, newline; DEL; C1), U+2028, U+2029,
// bidirectional controls (U+202E, …) and characters XML 1.0 forbids
// (U+FFFE, U+FFFF) become visible \xNN or \u{NNNN} text; with multiline
// false, newlines, carriage returns and tabs become spaces so the result is
// one line (with multiline true, carriage returns become spaces). The
// result never holds "<!" (which opens an HTML comment such as "<!--") or
// "]]>" (which ends a CDATA section): their "!" and ">" are written \x21
// and \x3e, so "<!--" reads "<\x21--". The result is at most max bytes,
// ending in "…" when cut.
func Clean(s string, max int, multiline bool) string {
	if multiline {
		return sanitize.Text(s, max, sanitize.Block)
	}
	return sanitize.Text(s, max, sanitize.Line)
}

// Line is Clean for a one-line message capped at MaxMessage.
func Line(s string) string { return Clean(s, MaxMessage, false) }

// Block is Clean for a multi-line body capped at MaxDetail.
func Block(s string) string { return Clean(s, MaxDetail, true) }

// MaxIdent caps, in bytes, a name written with Ident.
const MaxIdent = 1024

// Ident makes a name safe for any report, like Line, but so that distinct
// names always print distinctly: nothing is removed, newline, tab,
// carriage return and ESC are escaped (\x0a, \x09, \x0d, \x1b) like every
// other control character, and a backslash is written \\, so every printed
// name decodes back to exactly one raw name. A name that would print longer
// than MaxIdent bytes is cut and ends in \… and the hexadecimal first half
// of the raw name's SHA-256; an uncut name never holds a backslash that
// starts no escape, so a cut name never meets an uncut one. For fixture
// names and paths, JUnit classnames and suite names.
func Ident(s string) string {
	full := sanitize.Text(s, 4*len(s)+len(sanitize.Ellipsis), sanitize.Name)
	if len(full) <= MaxIdent {
		return full
	}
	sum := sha256.Sum256([]byte(s))
	tail := hex.EncodeToString(sum[:16])
	cut := sanitize.Text(s, MaxIdent-1-len(tail), sanitize.Name) // ends in the ellipsis
	return strings.TrimSuffix(cut, sanitize.Ellipsis) + `\` + sanitize.Ellipsis + tail
}
