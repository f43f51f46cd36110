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
// object, checked against the closed agent-facing schema), envelope, audit.
//
// A refused response is a Verdict, not an error; errors are reserved for
// configuration problems (*ConfigError) and misuse (an unknown upstream
// version, a request without an id).
package gate

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

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
	// Now is the clock's now for freshness rules and the audit record; the
	// zero time means time.Now().
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
	// Output is the agent output: the success or the failure envelope.
	Output []byte
	// Body is the decoded body the gate read (at most the byte limit plus
	// one byte; after gzip inflation). It is for the operator and the
	// harness, never for the agent.
	Body []byte
	// Audit is the operator's record of this verdict.
	Audit AuditRecord
}

// ErrUsage is wrapped by errors Check returns for a call it cannot judge.
var ErrUsage = errors.New("invalid call")

// refusal is a stage's reason to refuse, before envelope and audit.
type refusal struct {
	reason           string
	message          string
	offset           int64 // -1: none
	keywordLocation  string
	instanceLocation string
	code             ErrorCode // set when setCode
	retryable        bool      // used when setCode
	setCode          bool
}

// Check runs resp through the pipeline for call. It returns an error only
// when the call itself is unusable (unknown upstream version, empty request
// id); every problem with the response is a refused Verdict.
func (c *Contract) Check(resp Response, call Call) (*Verdict, error) {
	start := time.Now()
	name := call.UpstreamVersion
	if name == "" {
		name = c.current
	}
	u := c.versions[name]
	if u == nil {
		return nil, fmt.Errorf("%w: tool %s has no upstream version %q (have %v)", ErrUsage, c.Tool, name, c.UpstreamVersions())
	}
	if call.Request.ID == "" {
		return nil, fmt.Errorf("%w: the request has no id", ErrUsage)
	}
	now := call.Now
	if now.IsZero() {
		now = start
	}

	body, r := c.transport(resp)
	var data map[string]any
	if r == nil {
		data, r = c.stages(u, body, call.Request, now)
	}

	v := &Verdict{Body: body, Audit: AuditRecord{
		Time:            now.UTC().Format(time.RFC3339Nano),
		Tool:            c.Tool,
		ContractVersion: c.Version,
		UpstreamVersion: name,
		RequestID:       call.Request.ID,
		Source:          RedactSource(resp.Source),
		Status:          resp.Status,
		ContentType:     SanitizeMessage(resp.ContentType, 256),
		Size:            int64(len(body)),
		Offset:          -1,
		AirlockVersion:  Version,
	}}
	sum := sha256.Sum256(body)
	v.Audit.SHA256 = hex.EncodeToString(sum[:])
	if r == nil {
		v.Admitted = true
		v.Output = SuccessEnvelope(c.Tool, call.Request.ID, data)
		v.Audit.Outcome = "success"
	} else {
		v.Reason = r.reason
		v.Stage = StageOf(r.reason)
		v.ErrorCode, v.Retryable = c.policy(r)
		v.Output = FailureEnvelope(c.Tool, call.Request.ID, v.ErrorCode, v.Retryable)
		v.Audit.Outcome = "failure"
		v.Audit.Stage, v.Audit.Reason = v.Stage, v.Reason
		v.Audit.ErrorCode, v.Audit.Retryable = v.ErrorCode, v.Retryable
		v.Audit.KeywordLocation = SanitizeMessage(c.relative(r.keywordLocation), MaxAuditMessage)
		v.Audit.InstanceLocation = SanitizeMessage(r.instanceLocation, MaxAuditMessage)
		v.Audit.Message = SanitizeMessage(c.relative(r.message), MaxAuditMessage)
		v.Audit.Offset = r.offset
	}
	out := sha256.Sum256(v.Output)
	v.Audit.OutputSHA256 = hex.EncodeToString(out[:])
	v.Audit.DurationMicros = time.Since(start).Microseconds()
	return v, nil
}

// stages runs parse, schema, semantic and projection on a body that passed
// the transport stage.
func (c *Contract) stages(u *upstream, body []byte, req semantic.Request, now time.Time) (map[string]any, *refusal) {
	value, r := parse(body, c.limits)
	if r != nil {
		return nil, r
	}
	if c.Manifest.Protocol == ProtocolMCP {
		if value, r = unwrapMCP(value); r != nil {
			return nil, r
		}
	}
	if r := schemaStage(u.schema, value); r != nil {
		return nil, r
	}
	if viol := semantic.Check(u.rules, semantic.Input{Value: value, Request: req, Now: now}); viol != nil {
		return nil, &refusal{reason: "semantic." + viol.Rule, message: viol.Message, instanceLocation: viol.Pointer, offset: -1}
	}
	data := project(u.projection, value)
	if r := schemaStage(c.agentSchema, data); r != nil {
		r.reason = ReasonAgentSchema
		return nil, r
	}
	return data, nil
}

func schemaStage(sch *jsonschema.Schema, v any) *refusal {
	f, panicErr := validate(sch, v)
	if panicErr != nil {
		return &refusal{reason: ReasonPanic, message: panicErr.Error(), offset: -1}
	}
	if f == nil {
		return nil
	}
	return &refusal{
		reason:           "schema." + f.keyword,
		message:          f.message,
		keywordLocation:  f.keywordLocation,
		instanceLocation: f.instanceLocation,
		offset:           -1,
	}
}

// policy gives a refusal's agent-facing code and retryability: the
// registry's defaults, the status mapping of transport.status, the
// contract's retryable overrides, and its narrowed error_codes.
func (c *Contract) policy(r *refusal) (ErrorCode, bool) {
	info, _ := LookupReason(r.reason)
	code, retry := info.ErrorCode, info.Retryable
	if r.setCode {
		code, retry = r.code, r.retryable
	}
	if v, ok := c.Manifest.Retryable[r.reason]; ok {
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
