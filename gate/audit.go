package gate

import (
	"bytes"
	"encoding/json"
)

// Version is airlock's version, recorded in every audit record. Builds may
// set it with -ldflags "-X github.com/airlockdev/airlock/gate.Version=…".
var Version = "0.1.0-dev"

// MaxAuditMessage is the longest validator or parser message, source,
// keyword or instance location, in bytes, kept in an audit record; longer
// ones are cut and end in "…".
const MaxAuditMessage = 512

// AuditRecord is the operator's record of one verdict; it never reaches the
// agent. Absent values are empty strings or zero; Offset is -1 when the
// refusal has no byte position.
type AuditRecord struct {
	// Time is the clock's now (Call.Now), RFC 3339 with nanoseconds, UTC.
	Time            string `json:"time"`
	Tool            string `json:"tool"`
	ContractVersion string `json:"contract_version"`
	UpstreamVersion string `json:"upstream_version"`
	RequestID       string `json:"request_id"`
	// Source is Response.Source with secrets redacted by the contract's
	// redact.Redactor (Options.Redactor; Redactor.Source: URL userinfo, the
	// values of secret query and fragment parameters, credential-shaped
	// words), then sanitised like Message. The recorder uses the same
	// policy, so both keep the same bytes of a URL.
	Source string `json:"source,omitempty"`
	// Status is the upstream status as given (0: none).
	Status int `json:"status"`
	// ContentType is Response.ContentType, sanitised and capped at 256 bytes.
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
	// MaxAuditMessage bytes; invalid UTF-8, control characters (C0, DEL,
	// C1, bidi controls, U+2028/U+2029), U+FFFE and U+FFFF escaped as
	// \xNN or \u{NNNN} text.
	Message string `json:"message,omitempty"`
	// Offset is the byte offset of a parse or transport error in the body.
	Offset int64 `json:"offset"`
	// OutputSHA256 is the hex SHA-256 of the agent output.
	OutputSHA256   string `json:"output_sha256"`
	AirlockVersion string `json:"airlock_version"`
	// DurationMicros is the gate's wall time for this verdict, in microseconds.
	DurationMicros int64 `json:"duration_us"`
	// Warnings are Verdict.Warnings, sanitised like Message.
	Warnings []Warning `json:"warnings,omitempty"`
}

// MaxWarnings is the most warnings one verdict keeps.
const MaxWarnings = 16

// Warning is one thing about a response that did not decide the verdict
// but that the operator should know (a number beyond what I-JSON consumers
// keep exactly, a format the contract only annotates that the value fails).
// It goes to the verdict and the audit record, never to the agent.
type Warning struct {
	// Code is a stable dotted name, e.g. "number.inexact" or
	// "format.annotated"; docs/reasons.md lists them.
	Code string `json:"code"`
	// InstanceLocation is the RFC 6901 location of the value.
	InstanceLocation string `json:"instance_location,omitempty"`
	// Message says what and why, in English.
	Message string `json:"message,omitempty"`
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
