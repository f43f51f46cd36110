package gate

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"sync"

	"github.com/airlockdev/airlock/internal/sanitize"
	"github.com/airlockdev/airlock/internal/schema"
)

// Version is airlock's version, recorded in every audit record. Builds may
// set it with -ldflags "-X github.com/airlockdev/airlock/gate.Version=…".
var Version = "0.1.0-dev"

// MaxAuditMessage is the longest validator or parser message, source,
// keyword or instance location, in bytes, kept in an audit record; longer
// ones are cut and end in "…".
const MaxAuditMessage = 512

// MaxInstanceLocations is the most failing instance locations one audit
// record lists (AuditRecord.InstanceLocations; Options.InstanceLocations
// may lower it).
const MaxInstanceLocations = schema.MaxLocations

// AuditRecord is the operator's record of one verdict; it never reaches the
// agent. Absent values are empty strings or zero; Offset is -1 when the
// refusal has no byte position. Its JSON form (JSON, MarshalJSON) leaves
// out empty optional fields, except instance_location: a refusal of the
// parse, schema, semantic or projection stage always has one, and "" (the
// whole value, RFC 6901) is written as "".
type AuditRecord struct {
	// Time is the clock's now (Call.Now), RFC 3339 with nanoseconds, UTC.
	Time            string `json:"time"`
	Tool            string `json:"tool"`
	ContractVersion string `json:"contract_version"`
	UpstreamVersion string `json:"upstream_version"`
	RequestID       string `json:"request_id"`
	// Source is Response.Source with secrets redacted by the contract's
	// redact.Redactor (Options.Redactor; Redactor.Source: a URL's password
	// and secret parameters, a command line's credential flags, tokens by
	// their published formats; see package redact), then sanitised like
	// Message. The recorder uses the same policy, so both keep the same
	// bytes of a URL or command line.
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
	// UpstreamError names the declared upstream error shape the response
	// matched (Verdict.UpstreamError); left out when none.
	UpstreamError string `json:"upstream_error,omitempty"`
	// RetryAfterSeconds is Verdict.RetryAfter in whole seconds: the
	// upstream's Retry-After (RFC 9110 §10.2.3) on a response refused for
	// its status, 0 when its HTTP-date is past; nil (left out) when there
	// was none or it could not be read.
	RetryAfterSeconds *int64 `json:"retry_after_s,omitempty"`
	// KeywordLocation is the failing schema keyword's location, relative to
	// the contract directory ("upstream.v1.schema.json#/properties/x/maxLength").
	KeywordLocation string `json:"keyword_location,omitempty"`
	// InstanceLocation is the RFC 6901 location of the failing value: for
	// a schema refusal the first failing cause's; for a parse refusal the
	// value the byte offset falls in, the repeated member of
	// parse.duplicate_member and parse.member_fold_collision, the
	// innermost open object or array of parse.truncated, "" (the whole
	// text) for a BOM or trailing data; for a semantic refusal the rule's
	// pointer; for projection.agent_schema a location in the agent data.
	InstanceLocation string `json:"instance_location,omitempty"`
	// InstanceLocations lists every failing location found, distinct,
	// InstanceLocation first, at most MaxInstanceLocations: for a schema
	// refusal the failing causes of the validator's error tree (a walk of at
	// most 4096 causes, in instance location order, following the closest
	// branch of a oneOf or anyOf only on the chosen cause's way), for
	// parse.duplicate_member and parse.member_fold_collision each repeated
	// member (the message names them with offsets), otherwise
	// InstanceLocation alone. Absent when the refusal has no location
	// (transport), and on admission. Sanitised like Message.
	InstanceLocations []string `json:"instance_locations,omitempty"`
	// Message is the validator's, parser's or rule's message, with the
	// secrets of any value it quotes redacted (redact.Redactor.Text), at
	// most MaxAuditMessage bytes; invalid UTF-8, control characters (C0, DEL,
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
	// Message says what and why, in English; a value it quotes has its
	// secrets redacted (redact.Redactor.Text).
	Message string `json:"message,omitempty"`
}

// locatedStages are the stages whose refusals always have an instance
// location, "" included.
var locatedStages = []Stage{StageParse, StageSchema, StageSemantic, StageProjection}

// located reports whether the record's instance_location is written: a
// non-empty one, or any of a located stage's refusal.
func (a AuditRecord) located() bool {
	return a.InstanceLocation != "" || a.Outcome == "failure" && slices.Contains(locatedStages, a.Stage)
}

// auditLocations is the record's InstanceLocations for refusal r of stage:
// sanitised, distinct, r.instanceLocation first.
func auditLocations(r *refusal, stage Stage) []string {
	if r.instanceLocation == "" && len(r.instanceLocations) == 0 && !slices.Contains(locatedStages, stage) {
		return nil
	}
	locs := []string{sanitize.Text(r.instanceLocation, MaxAuditMessage, sanitize.Escape)}
	for _, l := range r.instanceLocations {
		if l = sanitize.Text(l, MaxAuditMessage, sanitize.Escape); !slices.Contains(locs, l) && len(locs) < MaxInstanceLocations {
			locs = append(locs, l)
		}
	}
	return locs
}

// auditJSONType is AuditRecord with instance_location as a *string, so that
// the whole value's location "" can be written while an absent one is left
// out; every other field, tag and the order are AuditRecord's. It is made
// at the first record written, not at start-up.
var auditJSONType = sync.OnceValue(func() reflect.Type {
	t := reflect.TypeFor[AuditRecord]()
	var fields []reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		if f.Name == "InstanceLocation" {
			f.Type = reflect.TypeFor[*string]()
		}
		fields = append(fields, f)
	}
	return reflect.StructOf(fields)
})

// MarshalJSON encodes the record as JSON (see AuditRecord for the fields
// left out when empty).
func (a AuditRecord) MarshalJSON() ([]byte, error) {
	typ := auditJSONType()
	out := reflect.New(typ).Elem()
	in := reflect.ValueOf(a)
	for i := range out.NumField() {
		name := typ.Field(i).Name
		if name == "InstanceLocation" {
			if a.located() {
				loc := a.InstanceLocation
				out.Field(i).Set(reflect.ValueOf(&loc))
			}
			continue
		}
		out.Field(i).Set(in.FieldByName(name))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out.Interface()); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
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
