package gate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Version is airlock's version, recorded in every audit record. Builds may
// set it with -ldflags "-X github.com/airlockdev/airlock/gate.Version=…".
var Version = "0.1.0-dev"

// MaxAuditMessage is the longest validator or parser message, in bytes,
// kept in an audit record; longer ones are cut and end in "…".
const MaxAuditMessage = 512

// AuditRecord is the operator's record of one verdict; it never reaches the
// agent. Absent values are empty strings or zero; Offset is -1 when the
// refusal has no byte position.
type AuditRecord struct {
	// Time is the clock's now, RFC 3339 with nanoseconds, UTC.
	Time            string `json:"time"`
	Tool            string `json:"tool"`
	ContractVersion string `json:"contract_version"`
	UpstreamVersion string `json:"upstream_version"`
	RequestID       string `json:"request_id"`
	// Source is Response.Source with credentials redacted (RedactSource).
	Source string `json:"source,omitempty"`
	// Status is the upstream status as given (0: none).
	Status      int    `json:"status"`
	ContentType string `json:"content_type"`
	// Size is the number of decoded body bytes read (at most limit+1).
	Size int64 `json:"size"`
	// SHA256 is the hex SHA-256 of those bytes.
	SHA256    string    `json:"sha256"`
	Outcome   string    `json:"outcome"`
	Stage     Stage     `json:"stage,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	ErrorCode ErrorCode `json:"error_code,omitempty"`
	Retryable bool      `json:"retryable"`
	// KeywordLocation is the failing schema keyword's location, relative to
	// the contract directory ("upstream.v1.schema.json#/properties/x/maxLength").
	KeywordLocation string `json:"keyword_location,omitempty"`
	// InstanceLocation is the RFC 6901 location of the failing value.
	InstanceLocation string `json:"instance_location,omitempty"`
	// Message is the validator's, parser's or rule's message, at most
	// MaxAuditMessage bytes, control characters and invalid UTF-8 escaped.
	Message string `json:"message,omitempty"`
	// Offset is the byte offset of a parse or transport error in the body.
	Offset int64 `json:"offset"`
	// OutputSHA256 is the hex SHA-256 of the agent output.
	OutputSHA256   string `json:"output_sha256"`
	AirlockVersion string `json:"airlock_version"`
	// DurationMicros is the gate's wall time for this verdict, in microseconds.
	DurationMicros int64 `json:"duration_us"`
}

// JSON returns the record as one line of JSON (no trailing newline).
func (a AuditRecord) JSON() []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(a); err != nil {
		// Every field is a string, number or bool: Encode cannot fail.
		panic(err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// SanitizeMessage makes s safe to store and print: invalid UTF-8 bytes,
// C0 and C1 control characters and DEL become \xNN or \u{NNNN} text, and
// the result is cut to at most max bytes (ending in "…" when cut).
func SanitizeMessage(s string, max int) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		var piece string
		switch {
		case r == utf8.RuneError && size <= 1:
			piece = fmt.Sprintf(`\x%02x`, s[i])
		case r < 0x20 || r == 0x7f:
			piece = fmt.Sprintf(`\x%02x`, r)
		case r >= 0x80 && r < 0xa0, r == 0x2028, r == 0x2029, unicode.Is(unicode.Bidi_Control, r):
			piece = fmt.Sprintf(`\u{%04x}`, r)
		default:
			piece = s[i : i+size]
		}
		if b.Len()+len(piece) > max-len("…") {
			// Cut only when the rest does not fit whole (an escape is at most 4 bytes per input byte).
			if b.Len()+len(s)-i <= max {
				if rest := SanitizeMessage(s[i:], 4*(len(s)-i)+len("…")); b.Len()+len(rest) <= max {
					return b.String() + rest
				}
			}
			b.WriteString("…")
			return b.String()
		}
		b.WriteString(piece)
		i += size
	}
	return b.String()
}

var secretParam = regexp.MustCompile(`(?i)(token|secret|passw|key|credential|auth|sig|session)`)

// secretText finds what url.Parse cannot show RedactSource: a password or a
// secret-looking parameter in a URL that does not parse, inside a command
// line, in a query pair Query drops (bad escape, ";") or in a fragment.
var secretText = regexp.MustCompile(`(?i)(://[^/?#@\s:]*:)[^/?#@\s]*(@)|([?&;#][^=&;#\s]*(?:token|secret|passw|key|credential|auth|sig|session)[^=&;#\s]*=)[^&;#\s]*`)

func redactText(s string) string { return secretText.ReplaceAllString(s, "${1}${3}REDACTED${2}") }

// RedactSource removes credentials from a source description before it is
// recorded: a URL's userinfo password and the values of query parameters
// whose names look secret (token, secret, password, key, credential, auth,
// signature, session) become "REDACTED". A source that is not a URL (a
// command line) or does not parse gets the same redaction by pattern. The
// result is sanitised and capped.
func RedactSource(src string) string {
	u, err := url.Parse(src)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return SanitizeMessage(redactText(src), MaxAuditMessage)
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "REDACTED")
		}
	}
	q := u.Query()
	changed := false
	for k := range q {
		if secretParam.MatchString(k) {
			q[k] = []string{"REDACTED"}
			changed = true
		}
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	return SanitizeMessage(redactText(u.String()), MaxAuditMessage)
}
