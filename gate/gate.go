// Package gate is airlock's validation engine. It stands between an
// upstream and an AI agent: raw bytes go in; out comes either a small,
// closed agent output built only from contracted fields or a fixed failure
// envelope with a finite error code, plus an audit record for the operator.
//
// The pipeline runs in a fixed order and a later stage never sees what an
// earlier one refused: transport (status, byte limit, empty body, content
// type, HTML/XML sniff), parse (strict RFC 8259 + I-JSON with limits),
// schema (JSON Schema 2020-12 with format assertion), semantic (rules from
// package semantic), projection (an allowlist of JSON Pointers into a new
// object, its strings checked against the contract's text policy, checked
// against the closed agent-facing schema), envelope, audit.
//
// An upstream failure takes its own path after transport: a non-success
// status, an MCP result with isError: true, or a success-status value that
// fails the schema is matched against the upstream version's declared
// error shapes (contract.yaml errors; the body parsed by the same strict
// parse stage), and the first that matches gives the failure envelope its
// code, retryable and optional detail (reason upstream.<name>). A failure
// no shape matches keeps its transport or schema refusal.
//
// A connector loads its contracts once (Load from an fs.FS such as an
// embed.FS, or LoadDir from disk), then calls Contract.Check for every
// upstream response and hands Verdict.Output to the agent and
// Verdict.Audit to its operator log. A Contract is immutable and safe for
// concurrent use.
//
// In production a contract runs in a mode (Options.Mode, Contract.WithMode):
// strict hands the agent Verdict.Output; warn (shadow) judges the same but
// Verdict.AgentOutput hands the agent the original result; off does not
// check. Options.Observe (a metrics hook) and Options.Logger (one slog
// line per verdict) report every verdict to the operator.
//
// A refused response is a Verdict, not an error; errors are reserved for
// configuration problems (*ConfigError), misuse (ErrUsage: an unknown
// upstream version, a request without an id) and cancellation (the
// context's error).
package gate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/airlockdev/airlock/internal/sanitize"
	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/semantic"
)

// Call says which request a response answers and when it is judged.
type Call struct {
	// UpstreamVersion selects the schema, rules and projection; "" means
	// the contract's current version.
	UpstreamVersion string
	// Request is the adapter's outstanding request; its ID is required and
	// becomes the envelope's request_id.
	Request semantic.Request
	// Now is the clock's now for freshness rules (semantic.Freshness), the
	// now of CEL rules (semantic.CEL) and the audit record; the zero time means time.Now().
	Now time.Time
}

// Verdict is the gate's answer for one response.
type Verdict struct {
	// Admitted is true when every stage passed.
	Admitted bool
	// Stage and Reason say where and why a response was refused; both are
	// empty when admitted.
	Stage  Stage
	Reason string
	// ErrorCode and Retryable are the failure envelope's; empty and false
	// when admitted.
	ErrorCode ErrorCode
	Retryable bool
	// RetryAfter is the delay the upstream's Retry-After asked for (RFC
	// 9110 §10.2.3), in whole seconds (0 when its date is past, at most
	// MaxRetryAfter seconds), when HasRetryAfter: it is read from a
	// response refused for its status (transport.status,
	// transport.not_modified) only. A Retry-After that cannot be read is
	// a retry_after.invalid warning instead. For the operator and the
	// adapter's scheduling, never part of the agent output.
	RetryAfter    time.Duration
	HasRetryAfter bool
	// UpstreamError is the name of the declared upstream error shape
	// (contract.yaml errors[].name) the refused response matched, for
	// upstream.<name> and projection.agent_error_schema; "" otherwise.
	UpstreamError string
	// Detail is the failure envelope's error.detail: the matched error
	// shape's projection of closed, enum-valued fields of the error value;
	// nil when it declares none (or its detail was refused).
	Detail map[string]any
	// Output is the agent output: the success or the failure envelope.
	Output []byte
	// Body is the decoded body the gate read (at most the byte limit plus
	// one byte; after gzip inflation). It is for the operator and the
	// harness, never for the agent.
	Body []byte
	// Audit is the operator's record of this verdict.
	Audit AuditRecord
	// Warnings are what the operator should know about the response that
	// did not decide the verdict (copied into Audit.Warnings, capped at
	// MaxWarnings); never part of the agent output.
	Warnings []Warning
	// Mode is the contract's mode when it judged (Contract.Mode): in
	// ModeWarn the verdict is complete but the agent gets the original
	// result; in ModeOff nothing was read or checked (Admitted false, Output
	// nil, Audit.Outcome "passed"). Verdict.AgentOutput applies it.
	Mode Mode

	// value is what the schema stage saw (see introspect.Value), built
	// from tape at first use (valueOf); hasValue is false when the
	// response was refused before it.
	value    any
	hasValue bool
	tape     *strictjson.Tape
	// errValue is the value a matched error shape saw (see
	// introspect.ErrorValue).
	errValue    any
	hasErrValue bool
	// from is where an MCP result's value was in the body (see
	// introspect.Extracted).
	from extracted
}

// ErrUsage is wrapped by the errors Check returns for a call it cannot
// judge: an upstream version the contract does not have, a request without
// an id. A connector bug, not an upstream problem.
var ErrUsage = errors.New("invalid call")

// refusal is a stage's reason to refuse, before envelope and audit.
type refusal struct {
	reason           string
	message          string
	offset           int64 // -1: none
	keywordLocation  string
	instanceLocation string
	// instanceLocations are every failing location found, instanceLocation
	// first; nil means instanceLocation alone.
	instanceLocations []string
	code              ErrorCode // set when setCode
	retryable         bool      // used when setCode
	setCode           bool
	// upstreamError names the matched error shape (upstream.<name>, or
	// projection.agent_error_schema of its detail); detail is the
	// projected detail object (nil: none); errValue the error value.
	upstreamError string
	detail        map[string]any
	errValue      any
	hasErrValue   bool
}

// Check runs resp through the pipeline for call and returns the verdict:
// admitted with the success envelope, or refused with the failure envelope,
// the stage and the reason; always with the audit record.
//
// It returns an error only when the call itself is unusable (wrapping
// ErrUsage: an unknown upstream version, an empty request id) or when ctx
// is done before the verdict (ctx.Err(), checked before each stage; a
// cancelled check yields no verdict). Every problem with the response is a
// refused Verdict. Check reads resp.Body at most once, up to the byte limit
// plus one byte, and does not close it.
//
// The contract's mode (Options.Mode) sets Verdict.Mode: in ModeWarn the
// verdict is the same as in ModeStrict; in ModeOff Check reads nothing and
// returns a verdict with outcome "passed" (see Verdict.Mode). Each verdict
// is then reported to Options.Observe and Options.Logger when set.
func (c *Contract) Check(ctx context.Context, resp Response, call Call) (*Verdict, error) {
	start := time.Now()
	name := call.UpstreamVersion
	if name == "" {
		name = c.current
	}
	u := c.versions[name]
	if u == nil {
		return nil, fmt.Errorf("%w: tool %s has no upstream version %q (have %v)", ErrUsage, c.tool, name, c.UpstreamVersions())
	}
	if call.Request.ID == "" {
		return nil, fmt.Errorf("%w: the request has no id", ErrUsage)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	now := call.Now
	if now.IsZero() {
		now = start
	}
	if c.mode == ModeOff {
		v := c.passed(call, name, now)
		c.observe(ctx, v, 0)
		return v, nil
	}

	status := resp.Status
	if status == 0 {
		status = 200
	}
	body, r := c.transport(resp, u)
	v := &Verdict{Body: body, Mode: c.mode}
	if r != nil && (r.reason == ReasonStatus || r.reason == ReasonNotModified) {
		retryAfter(v, resp.Header, now)
	}
	var data map[string]any
	switch {
	case r == nil:
		var err error
		if data, r, err = c.stages(ctx, v, u, body, call.Request, now, status); err != nil {
			return nil, err
		}
	case r.reason == ReasonStatus && u.errorCandidates(status, false):
		// An upstream failure: its own path, matched against the declared
		// error shapes; unmatched, the status refusal stands.
		value, ok := c.errorBody(body, resp.ContentType, u)
		if m := c.matchError(u, status, false, value, ok, len(body)); m != nil {
			r = m
		}
	}
	c.finish(v, r, data, resp, call, name, now)
	took := time.Since(start)
	v.Audit.DurationMicros = took.Microseconds()
	c.observe(ctx, v, took)
	return v, nil
}

// instance returns the value at an instance location of the checked
// value (nil when there is none, or when it is the request id, which the
// caller gave and is no secret), for the redaction of messages that quote
// it.
func (v *Verdict) instance(location, requestID string) any {
	if !v.hasValue {
		return nil
	}
	p, err := jsonpointer.Parse(location)
	if err != nil {
		return nil
	}
	var x any
	if v.value == nil && v.tape != nil {
		// A message quotes a scalar, or a small value at most: a large
		// object or array is not built only to be looked at.
		if i, ok := lookupTape(v.tape, p); ok && v.tape.Nodes[i].End-i <= maxQuoted {
			x = v.tape.Value(i)
		}
	} else {
		x, _ = p.Lookup(v.value)
	}
	if s, ok := x.(string); ok && s == requestID {
		return nil
	}
	return x
}

// maxQuoted is the most values (tape nodes) an instance a message may
// quote is built from for its redaction (see instance).
const maxQuoted = 64

// valueOf is the value the schema stage saw, built from the tape at the
// first call; ok is false when the response was refused before it.
func (v *Verdict) valueOf() (any, bool) {
	if !v.hasValue {
		return nil, false
	}
	if v.value == nil && v.tape != nil {
		v.value = v.tape.Value(0)
	}
	return v.value, true
}

// finish fills in the envelope and the audit record.
func (c *Contract) finish(v *Verdict, r *refusal, data map[string]any, resp Response, call Call, name string, now time.Time) {
	v.Audit = AuditRecord{
		Time:            now.UTC().Format(time.RFC3339Nano),
		Tool:            c.tool,
		ContractVersion: c.version,
		UpstreamVersion: name,
		RequestID:       call.Request.ID,
		Source:          sanitize.Text(c.redactor.Source(resp.Source), MaxAuditMessage, sanitize.Escape),
		Status:          resp.Status,
		ContentType:     sanitize.Text(resp.ContentType, 256, sanitize.Escape),
		Size:            int64(len(v.Body)),
		Offset:          -1,
		AirlockVersion:  Version,
	}
	sum := sha256.Sum256(v.Body)
	v.Audit.SHA256 = hex.EncodeToString(sum[:])
	if r == nil {
		v.Admitted = true
		v.Output = successEnvelope(c.tool, call.Request.ID, data)
		v.Audit.Outcome = "success"
	} else {
		v.Reason = r.reason
		v.Stage = StageOf(r.reason)
		v.ErrorCode, v.Retryable = c.policy(r)
		v.UpstreamError, v.Detail = r.upstreamError, r.detail
		v.errValue, v.hasErrValue = r.errValue, r.hasErrValue
		v.Output = failureEnvelope(c.tool, call.Request.ID, v.ErrorCode, v.Retryable, r.detail)
		v.Audit.UpstreamError = r.upstreamError
		v.Audit.Outcome = "failure"
		v.Audit.Stage, v.Audit.Reason = v.Stage, v.Reason
		v.Audit.ErrorCode, v.Audit.Retryable = v.ErrorCode, v.Retryable
		v.Audit.KeywordLocation = sanitize.Text(c.relative(r.keywordLocation), MaxAuditMessage, sanitize.Escape)
		v.Audit.InstanceLocation = sanitize.Text(r.instanceLocation, MaxAuditMessage, sanitize.Escape)
		v.Audit.InstanceLocations = auditLocations(r, v.Stage)
		v.Audit.Message = sanitize.Text(c.redactor.Message(c.relative(r.message), r.instanceLocation, v.instance(r.instanceLocation, call.Request.ID)), MaxAuditMessage, sanitize.Escape)
		v.Audit.Offset = r.offset
		if v.HasRetryAfter {
			s := int64(v.RetryAfter / time.Second)
			v.Audit.RetryAfterSeconds = &s
		}
	}
	if len(v.Warnings) > MaxWarnings {
		v.Warnings = v.Warnings[:MaxWarnings]
	}
	for i := range v.Warnings {
		// The value a message quotes is redacted, in the verdict too.
		v.Warnings[i].Message = c.redactor.Message(v.Warnings[i].Message, v.Warnings[i].InstanceLocation, v.instance(v.Warnings[i].InstanceLocation, call.Request.ID))
		w := v.Warnings[i]
		w.InstanceLocation = sanitize.Text(w.InstanceLocation, MaxAuditMessage, sanitize.Escape)
		w.Message = sanitize.Text(w.Message, MaxAuditMessage, sanitize.Escape)
		v.Audit.Warnings = append(v.Audit.Warnings, w)
	}
	out := sha256.Sum256(v.Output)
	v.Audit.OutputSHA256 = hex.EncodeToString(out[:])
}

// stages runs parse, schema, semantic and projection on a body that passed
// the transport stage, checking ctx before each; it records the value the
// schema stage sees in v.
func (c *Contract) stages(ctx context.Context, v *Verdict, u *upstream, body []byte, req semantic.Request, now time.Time, status int) (map[string]any, *refusal, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	var tape *strictjson.Tape
	if c.protocol == ProtocolMCP {
		value, r := parse(body, c.limits, c.locations)
		if r != nil {
			return nil, r, nil
		}
		var isErr bool
		value, v.from, isErr, r = c.unwrapMCP(value, u, u.errorCandidates(status, true))
		if isErr {
			v.from = extracted{}
			if m := c.matchError(u, status, true, value, r == nil, len(body)); m != nil {
				return nil, m, nil
			}
			return nil, &refusal{reason: ReasonMCPToolError, offset: -1, instanceLocation: "/isError", message: "the tool reported an error (isError: true) that no declared error shape matched"}, nil
		}
		if r != nil {
			return nil, r, nil
		}
		// A value the strict parse gave always has a tape.
		tape, _ = strictjson.TapeOf(value)
		v.value = value
	} else {
		var r *refusal
		if tape, r = parseTape(body, c.limits, c.locations); r != nil {
			return nil, r, nil
		}
	}
	v.tape, v.hasValue = tape, true
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if r := c.schemaStage(u.schema, tape, len(body)); r != nil {
		// A success status whose value is not a success may be the
		// upstream's own error body.
		if u.errorCandidates(status, false) {
			value, _ := v.valueOf()
			if m := c.matchError(u, status, false, value, true, len(body)); m != nil {
				return nil, m, nil
			}
		}
		return nil, r, nil
	}
	value := u.view(tape)
	v.Warnings = append(v.Warnings, c.annotations(u, v, len(body))...)
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if viol := semantic.Check(u.rules, semantic.Input{Value: value, Request: req, Now: now}); viol != nil {
		return nil, &refusal{reason: "semantic." + viol.Rule, message: viol.Message, instanceLocation: viol.Pointer, offset: -1}, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	data := projectTape(u.projection, tape)
	if r := c.checkText(u.projection, data, c.text.field, "field"); r != nil {
		return nil, r, nil
	}
	// Read before untrusted_text wraps strings (walkProjected reads data).
	inexact := inexactNumbers(u.projection, data, MaxWarnings-len(v.Warnings))
	for f, x := range data {
		if c.text.field(f).untrusted {
			data[f] = wrapUntrusted(x)
		}
	}
	if r := c.schemaStage(c.agentSchema, data, len(body)); r != nil {
		r.reason = ReasonAgentSchema
		return nil, r, nil
	}
	v.Warnings = append(v.Warnings, inexact...)
	return data, nil, nil
}

// policy gives a refusal's agent-facing code and retryability: the
// registry's defaults, the status policy of transport.status and
// transport.not_modified (statusOutcome), the
// contract's retryable overrides, and its narrowed error_codes.
func (c *Contract) policy(r *refusal) (ErrorCode, bool) {
	info, _ := LookupReason(r.reason)
	code, retry := info.ErrorCode, info.Retryable
	if r.setCode {
		code, retry = r.code, r.retryable
	}
	if v, ok := c.retryable[r.reason]; ok {
		retry = v
	}
	allowed := false
	for _, e := range c.errorCodes {
		allowed = allowed || e == code
	}
	if !allowed {
		code = InvalidResponse
	}
	return code, retry
}
