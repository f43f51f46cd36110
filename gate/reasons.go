package gate

import (
	"strings"

	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/strictjson"
)

// Stage names one step of the pipeline: transport, parse, schema, semantic,
// projection, always run in that order.
type Stage string

// The pipeline's stages. StageInternal is not a step: it marks a refusal
// caused by airlock itself (a validator panic), which still fails closed.
const (
	StageTransport Stage = "transport"
	// StageUpstream: an upstream failure (a non-success status, an MCP
	// isError: true result, an error body under a success status) that
	// matched one of the contract's declared error shapes.
	StageUpstream   Stage = "upstream"
	StageParse      Stage = "parse"
	StageSchema     Stage = "schema"
	StageSemantic   Stage = "semantic"
	StageProjection Stage = "projection"
	StageInternal   Stage = "internal"
)

// ErrorCode is the agent-facing, finite error code of a failure envelope.
type ErrorCode string

// The agent-facing error codes. A contract may narrow the set it emits
// (contract.yaml error_codes); InvalidResponse is always in it.
const (
	NotFound            ErrorCode = "NOT_FOUND"
	UpstreamUnavailable ErrorCode = "UPSTREAM_UNAVAILABLE"
	InvalidResponse     ErrorCode = "INVALID_RESPONSE"
)

// ErrorCodes lists every agent-facing error code.
var ErrorCodes = []ErrorCode{NotFound, UpstreamUnavailable, InvalidResponse}

// Reason codes: the operator-facing, stable "stage.name" of a refusal.
// Schema refusals are "schema.<keyword>" (the JSON Schema keyword of the most
// specific failing cause), semantic refusals "semantic.<rule name>" and
// matched upstream errors "upstream.<error name>"; the families are listed
// once below by their prefix.
const (
	ReasonStatus           = "transport.status"
	ReasonNotModified      = "transport.not_modified"
	ReasonTooLarge         = "transport.too_large"
	ReasonEmptyBody        = "transport.empty_body"
	ReasonContentType      = "transport.content_type"
	ReasonNotJSON          = "transport.not_json"
	ReasonEncoding         = "transport.encoding"
	ReasonReadError        = "transport.read_error"
	ReasonMCPToolError     = "transport.mcp_tool_error"
	ReasonSyntax           = strictjson.ReasonSyntax
	ReasonTruncated        = strictjson.ReasonTruncated
	ReasonDuplicate        = strictjson.ReasonDuplicate
	ReasonFoldCollision    = strictjson.ReasonFoldCollision
	ReasonInvalidUTF8      = strictjson.ReasonInvalidUTF8
	ReasonLoneSurrogate    = strictjson.ReasonLoneSurrogate
	ReasonBOM              = strictjson.ReasonBOM
	ReasonTrailingData     = strictjson.ReasonTrailingData
	ReasonDepth            = strictjson.ReasonDepth
	ReasonNumber           = strictjson.ReasonNumber
	ReasonStringTooLong    = strictjson.ReasonStringTooLong
	ReasonMCPResult        = "parse.mcp_result"
	ReasonMCPMember        = "parse.mcp_member"
	ReasonMCPIsError       = "parse.mcp_is_error"
	ReasonMCPContent       = "parse.mcp_content"
	ReasonMCPContentType   = "parse.mcp_content_type"
	ReasonMCPTextBlock     = "parse.mcp_text_block"
	ReasonMCPMismatch      = "parse.mcp_mismatch"
	ReasonSchemaFamily     = "schema.<keyword>"
	ReasonSemantic         = "semantic.<rule>"
	ReasonTextPolicy       = "projection.text_policy"
	ReasonAgentSchema      = "projection.agent_schema"
	ReasonUpstreamError    = "upstream.<name>"
	ReasonAgentErrorSchema = "projection.agent_error_schema"
	ReasonPanic            = "internal.validator_panic"
	ReasonWorkLimit        = "internal.validator_work_limit"
)

// ReasonInfo documents one reason code (or one family of them).
type ReasonInfo struct {
	// Code is the reason, e.g. "parse.duplicate_member"; families end in
	// "<keyword>" or "<rule>".
	Code  string `json:"code"`
	Stage Stage  `json:"stage"`
	// ErrorCode is the agent-facing code of the failure envelope.
	ErrorCode ErrorCode `json:"error_code"`
	// Retryable is the default retry policy: whether the same call may
	// succeed if made again. A contract may override it per reason.
	Retryable   bool   `json:"retryable"`
	Description string `json:"description"`
}

// registry is the one list of reason codes; docs/reasons.md and the tests
// read from it (through Reasons).
var registry = []ReasonInfo{
	{ReasonStatus, StageTransport, InvalidResponse, false, "The upstream status is not a success (nor 304). The error code and retryability come from the contract's statuses: section (an exact status, then its class such as 4xx), else the defaults: 404 is NOT_FOUND; 408, 425, 429 and 5xx are UPSTREAM_UNAVAILABLE and retryable; 403 with a rate-limit header (a valid Retry-After, X-RateLimit-Remaining: 0 or RateLimit-Remaining: 0) is UPSTREAM_UNAVAILABLE and retryable; any other status is INVALID_RESPONSE. The message names the rule that decided."},
	{ReasonNotModified, StageTransport, InvalidResponse, false, "The upstream answered 304 Not Modified: the answer to a conditional request (If-None-Match, If-Modified-Since), which carries no representation to admit (RFC 9110 §15.4.5). The adapter should not send conditional requests through the gate, or should send the cached body it revalidated. A statuses: entry for 304 or 3xx changes the error code and retryability, not the reason."},
	{ReasonTooLarge, StageTransport, InvalidResponse, false, "The decoded body is longer than limits.max_bytes. Reading stops after max_bytes+1 bytes; a gzip body is counted after inflation."},
	{ReasonEmptyBody, StageTransport, UpstreamUnavailable, true, "A success status with an empty body (zero bytes, or only JSON whitespace)."},
	{ReasonContentType, StageTransport, InvalidResponse, false, "The Content-Type is missing, unparsable or not in the contract's allowlist (default application/json and application/*+json)."},
	{ReasonNotJSON, StageTransport, InvalidResponse, false, "The body starts like HTML or XML (\"<\" after optional whitespace), whatever the Content-Type says: a proxy or error page, not the upstream's answer."},
	{ReasonEncoding, StageTransport, InvalidResponse, false, "The Content-Encoding is not identity or gzip, or the gzip stream is corrupt."},
	{ReasonReadError, StageTransport, UpstreamUnavailable, true, "Reading the body failed midway (connection reset, timeout)."},
	{ReasonMCPToolError, StageTransport, UpstreamUnavailable, false, "An MCP tool result with isError: true (contracts with protocol: mcp): the upstream's own failure, passed on as an upstream failure envelope rather than a schema refusal. An error shape of the contract with when.is_error that matches the result turns it into upstream.<name> instead."},
	{ReasonSyntax, StageParse, InvalidResponse, false, "The body is not JSON text per RFC 8259 (a bad token, a missing delimiter, a non-string member name)."},
	{ReasonTruncated, StageParse, UpstreamUnavailable, true, "The body ends inside a value: the response was cut short. The offset is the body's end; instance_location is the innermost open object or array, and the message says how many are unclosed."},
	{ReasonDuplicate, StageParse, InvalidResponse, false, "An object repeats a member name, compared after unescaping (RFC 8259 §4, RFC 7493 §2.3). The audit record names every repeat found (at most 16), each with its JSON Pointer and byte offset."},
	{ReasonFoldCollision, StageParse, InvalidResponse, false, "Two member names of one object differ but are equal under Unicode simple case folding (\"Role\" and \"role\"; \"ſ\" U+017F and \"s\"; the Kelvin sign U+212A and \"k\"), which case-insensitive decoders downstream (Go's encoding/json among them) read as one member. Not an RFC 8259 rule but airlock's policy, on by default; limits.member_fold_collision: false in contract.yaml turns it off. Listed like parse.duplicate_member."},
	{ReasonInvalidUTF8, StageParse, InvalidResponse, false, "The body is not well-formed UTF-8 (RFC 8259 §8.1, RFC 7493 §2.1)."},
	{ReasonLoneSurrogate, StageParse, InvalidResponse, false, "A string escapes a UTF-16 surrogate that is not part of a pair, e.g. \"\\ud800\" (RFC 7493 §2.1)."},
	{ReasonBOM, StageParse, InvalidResponse, false, "The body starts with a byte order mark (RFC 8259 §8.1 forbids emitting one)."},
	{ReasonTrailingData, StageParse, InvalidResponse, false, "Something other than whitespace follows the first JSON value; the offset is the second value's first byte."},
	{ReasonDepth, StageParse, InvalidResponse, false, "Objects and arrays nest deeper than limits.max_depth."},
	{ReasonNumber, StageParse, InvalidResponse, false, "A number token is longer than limits.max_number_length bytes, its magnitude is outside IEEE 754 binary64 (overflows to ±Inf or underflows to 0; RFC 7493 §2.2), or its exponent is beyond ±1000 (even with a zero mantissa)."},
	{ReasonStringTooLong, StageParse, InvalidResponse, false, "A string or member name is longer than limits.max_string_length bytes once unescaped."},
	{ReasonMCPResult, StageParse, InvalidResponse, false, "Contracts with protocol: mcp: the body is not a JSON object, or (result: structured, the default) it has no structuredContent (0, false and null count as present)."},
	{ReasonMCPMember, StageParse, InvalidResponse, false, "Contracts with protocol: mcp: the CallToolResult has a member other than content, structuredContent, isError and _meta, or its _meta is not an object. instance_location names the member."},
	{ReasonMCPIsError, StageParse, InvalidResponse, false, "Contracts with protocol: mcp: isError is present and not a boolean."},
	{ReasonMCPContent, StageParse, InvalidResponse, false, "Contracts with protocol: mcp: content is not an array, a content block is not an object or has no string type, or a text block's text is not a string or it has a member other than type, text, annotations and _meta. instance_location names the block or member."},
	{ReasonMCPContentType, StageParse, InvalidResponse, false, "Contracts with protocol: mcp: a content block's type is not one MCP defines (text, image, audio, resource_link, resource)."},
	{ReasonMCPTextBlock, StageParse, InvalidResponse, false, "Contracts with protocol: mcp and result: text (or auto without structuredContent): content holds no text block or several (and the contract names none with text_block), or the block text_block names is missing or not a text block. A text that is not strict JSON is refused with the parse.* reason, its offset counted in bytes of the decoded text."},
	{ReasonMCPMismatch, StageParse, InvalidResponse, false, "Contracts with protocol: mcp and result: auto: the result has structuredContent and a text block holding JSON, and the two are different JSON values (members compared as sets, numbers by value)."},
	{ReasonSchemaFamily, StageSchema, InvalidResponse, false, "The value fails the upstream version's JSON Schema; <keyword> is the keyword of the first failing cause in the validator's fixed order — type, const, enum, format, then the keywords of the value's type (required before additionalProperties), then the subschemas applied in place, then members and items (docs/contracts.md, The validator); e.g. required, additionalProperties, type, enum, const, format, maxLength, pattern, oneOf, false."},
	{ReasonSemantic, StageSemantic, InvalidResponse, false, "A semantic rule of the contract refused the value; <rule> is the rule's name in contract.yaml (binding, context match, freshness, membership, count, cel or custom)."},
	{ReasonUpstreamError, StageUpstream, InvalidResponse, false, "The response is an upstream failure that matched the declared error shape <name> of the upstream version (contract.yaml errors): a non-success status in its when.status, an MCP result with isError: true under when.is_error, or a value under a success status in its when.status that failed the version's schema; and its schema (if any) admitted the error value. The error code and retryable are the error shape's (the default here is never used); the failure envelope carries error.detail when the shape projects one. Shapes are tried in order; a failure none matches keeps its transport.status, transport.mcp_tool_error or schema.<keyword> refusal."},
	{ReasonTextPolicy, StageProjection, InvalidResponse, false, "A string the agent would receive breaks the contract's text policy (contract.yaml text; docs/contracts.md, Text policy): in a projected field (any string or member name at or below the projected location) or in a matched upstream error's detail. The rules are a control character other than the allowed ones (default TAB and LF; other C0, DEL, C1 and noncharacters always), a bidirectional formatting character (bidi: false, the default), a zero-width or invisible character or a stray variation selector (zero_width: false, the default), a TAG character (tag_characters: false, the default), more code points than max_length, a string not already in the required normalization form. instance_location is the string's JSON Pointer in the upstream value; the message names the field and the rule (\"U+202E RIGHT-TO-LEFT OVERRIDE at code point 12\", \"241 code points, max_length 200\", \"not in NFC\") and never quotes the string. Nothing is rewritten."},
	{ReasonAgentSchema, StageProjection, InvalidResponse, false, "The projected agent data fails the contract's closed agent-facing schema."},
	{ReasonAgentErrorSchema, StageProjection, InvalidResponse, false, "A matched upstream error's projected detail fails the contract's agent_error_schema; the audit record names the error (upstream_error)."},
	{ReasonPanic, StageInternal, InvalidResponse, false, "The schema validator panicked on this value; the panic is recovered and the response refused."},
	{ReasonWorkLimit, StageInternal, InvalidResponse, false, "Validating this value against the schema took more than its work bound, 4 × (JSON values in the body + 1) × (compiled subschemas + 1) subschema applications, before finding a failure. A subschema two in-place paths share keeps its verdict on each value, so only a schema that applies one subschema to a value along many member paths (allOf: [{properties: {n: {$ref: d}}}, {properties: {n: {$ref: d}}}] nested through n), or one of more than 4,096 subschemas, can reach the bound; the validation stops there instead of running on, and the response is refused — even one the schema would admit. The message gives the figures."},
}

// Reasons returns a copy of the reason registry, in pipeline order.
func Reasons() []ReasonInfo { return append([]ReasonInfo(nil), registry...) }

// LookupReason returns the registry entry for a reason code; a
// "schema.<keyword>" or "semantic.<rule>" code returns its family's entry.
func LookupReason(code string) (ReasonInfo, bool) {
	for _, r := range registry {
		if r.Code == code {
			return r, true
		}
	}
	switch {
	case strings.HasPrefix(code, "schema."):
		// The keyword must be one that can fail: a 2020-12 keyword, or
		// "false" (a false schema) or "invalid" (no keyword given), so a
		// sidecar expecting "schema.additionalProperty" is a typo, not a
		// reason no response can ever have.
		if kw := code[len("schema."):]; schema.IsKeyword(kw) || kw == "false" || kw == "invalid" {
			return LookupReason(ReasonSchemaFamily)
		}
	case strings.HasPrefix(code, "semantic.") && len(code) > len("semantic."):
		return LookupReason(ReasonSemantic)
	case strings.HasPrefix(code, "upstream.") && len(code) > len("upstream."):
		return LookupReason(ReasonUpstreamError)
	}
	return ReasonInfo{}, false
}

// StageOf returns the stage a reason code belongs to ("" when unknown).
func StageOf(code string) Stage {
	r, ok := LookupReason(code)
	if !ok {
		return ""
	}
	return r.Stage
}

// Warning codes: the stable "family.name" of a Warning, which reports
// something about a response that did not decide the verdict.
const (
	// WarningFormatAnnotated: a value fails a format the contract's format
	// policy only annotates (formats: {email: annotate}).
	WarningFormatAnnotated = "format.annotated"
	// WarningInexactNumber: an integer the agent receives is outside
	// I-JSON's exact range.
	WarningInexactNumber = "number.inexact"
	// WarningRetryAfter: a refused status's Retry-After could not be read
	// and was ignored.
	WarningRetryAfter = "retry_after.invalid"
)

// WarningInfo documents one warning code.
type WarningInfo struct {
	Code        string `json:"code"`
	Description string `json:"description"`
}

// warningRegistry is the one list of warning codes; docs/reasons.md and the
// tests read from it (through WarningCodes).
var warningRegistry = []WarningInfo{
	{WarningFormatAnnotated, "A value fails a format that the contract's format policy only annotates (formats: {email: annotate}, or default: annotate): it was admitted, and the warning names the value's instance location, the format, the checker's message and the keyword location. Found by validating the admitted value a second time with the annotated formats asserted."},
	{WarningInexactNumber, "An integer the agent output carries (at or below a projected location) is outside I-JSON's exact range [-(2^53)+1, 2^53-1] (RFC 7493 §2.2), e.g. 9007199254740993 or 1e16: airlock passes its digits on exactly, but a consumer that reads JSON numbers as IEEE 754 doubles (JavaScript, many JSON libraries) rounds it. Numbers outside the projection reach no one and are not reported."},
	{WarningRetryAfter, "A response refused for its status carries a Retry-After that is neither delay-seconds nor an HTTP-date (RFC 9110 §10.2.3): a sign, a fraction, a unit, garbage, an unparsable date, or more than one field line. It is ignored (no retry_after_s in the audit record); the verdict is decided as without it, except that an unreadable Retry-After does not make a 403 a rate limit."},
}

// WarningCodes returns a copy of the warning registry.
func WarningCodes() []WarningInfo { return append([]WarningInfo(nil), warningRegistry...) }
