package reports

import "github.com/airlockdev/airlock/internal/sanitize"

// Default caps, in bytes, for text written into reports.
const (
	MaxMessage = 512      // a failure message, one line
	MaxDetail  = 16 << 10 // a failure body (diff, details)
)

// Clean makes s safe for any report, terminal or XML 1.0 document, with the
// rules every airlock output shares (package internal/sanitize): ANSI
// escape sequences are removed; invalid UTF-8 bytes, control characters
// (C0 except tab and, when multiline, newline; DEL; C1), U+2028, U+2029,
// bidirectional controls (U+202E, …) and characters XML 1.0 forbids
// (U+FFFE, U+FFFF) become visible \xNN or \u{NNNN} text; with multiline
// false, newlines, carriage returns and tabs become spaces so the result is
// one line (with multiline true, carriage returns become spaces). The
// result is at most max bytes, ending in "…" when cut.
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
