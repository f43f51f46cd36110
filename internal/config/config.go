// Package config holds what every reader of airlock's configuration files
// shares: the typed error that names the file, line, column and key of a
// problem (gate.ConfigError is this type), and the size bound of a
// configuration file.
package config

import (
	"fmt"
	"strings"
)

// MaxFile is the largest manifest, sidecar or request file, in bytes, that
// airlock reads (1 MiB).
const MaxFile = 1 << 20

// Error is a configuration error (exit code 2): a manifest, sidecar or
// schema file that is unreadable, malformed, or names something that does
// not exist. It is never used for command-line flags.
type Error struct {
	// File is the path as given (for a contract loaded from an fs.FS, the
	// path inside it).
	File string
	// Line and Column are 1-based; 0 when unknown.
	Line   int
	Column int
	// Key is the offending key's RFC 6901 location in the file
	// ("/upstream_versions/v1/schema"), "" when unknown. A schema file's
	// error cuts a token longer than 256 bytes and ends it in "…".
	Key string
	// Msg says what was found and what was expected.
	Msg string
	// Err is the underlying error, if any; Unwrap returns it.
	Err error
}

// Error renders "file:line:column: key: message".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	if e.Key != "" {
		fmt.Fprintf(&b, "%s: ", e.Key)
	}
	b.WriteString(e.Msg)
	if e.Err != nil && e.Msg == "" {
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying error, so errors.Is and errors.As see it.
func (e *Error) Unwrap() error { return e.Err }

// LineCol converts a byte offset in b into a 1-based line and column (the
// column counts bytes); 0, 0 when off is outside b.
func LineCol(b []byte, off int64) (int, int) {
	if off < 0 || off > int64(len(b)) {
		return 0, 0
	}
	line, col := 1, 1
	for _, c := range b[:off] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}
