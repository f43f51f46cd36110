package gate

import (
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/airlockdev/airlock/internal/strictjson"
)

// successEnvelope returns the agent output of an admitted response:
//
//	{"tool":T,"request_id":R,"outcome":"success","data":D}
//
// with members in that order, no whitespace, and data serialised
// canonically (strictjson.AppendCanonical: members sorted by name, numbers
// in their exact text). requestID is the adapter's, never the upstream's.
func successEnvelope(tool, requestID string, data map[string]any) []byte {
	b := appendHead(make([]byte, 0, 128), tool, requestID, "success")
	b = append(b, `,"data":`...)
	b = strictjson.AppendCanonical(b, data)
	return append(b, '}')
}

// FailureEnvelope returns the agent output of a refused response, exactly
//
//	{"tool":T,"request_id":R,"outcome":"failure","error":{"code":C,"retryable":B}}
//
// with members in that order and no whitespace (FailureEnvelopeDetail
// gives the one form with more: error.detail of a matched upstream error); strings are JSON-quoted
// with the minimal escaping of RFC 8785 §3.2.2.2 (invalid UTF-8 becomes
// U+FFFD). It carries no upstream byte and no message text. Check returns
// it in Verdict.Output for every refusal; a connector may also send it
// itself, e.g. UpstreamUnavailable with retryable true when the upstream
// call timed out before there was a response to check.
func FailureEnvelope(tool, requestID string, code ErrorCode, retryable bool) []byte {
	return failureEnvelope(tool, requestID, code, retryable, nil)
}

// FailureEnvelopeDetail is the failure envelope of a response that matched
// a declared upstream error whose contract projects a detail
// (Verdict.Detail):
//
//	{"tool":T,"request_id":R,"outcome":"failure","error":{"code":C,"retryable":B,"detail":D}}
//
// D serialised canonically like a success envelope's data (members sorted
// by name, numbers in their exact text). Its values come only from the
// error contract's detail pointers, each of which reaches an enum or const
// of the error schema (checked at load). A nil detail gives FailureEnvelope.
func FailureEnvelopeDetail(tool, requestID string, code ErrorCode, retryable bool, detail map[string]any) []byte {
	return failureEnvelope(tool, requestID, code, retryable, detail)
}

func failureEnvelope(tool, requestID string, code ErrorCode, retryable bool, detail map[string]any) []byte {
	b := appendHead(make([]byte, 0, 128), tool, requestID, "failure")
	b = append(b, `,"error":{"code":`...)
	b = appendString(b, string(code))
	b = append(b, `,"retryable":`...)
	b = strconv.AppendBool(b, retryable)
	if detail != nil {
		b = append(b, `,"detail":`...)
		b = strictjson.AppendCanonical(b, detail)
	}
	return append(b, "}}"...)
}

func appendHead(b []byte, tool, requestID, outcome string) []byte {
	b = append(b, `{"tool":`...)
	b = appendString(b, tool)
	b = append(b, `,"request_id":`...)
	b = appendString(b, requestID)
	b = append(b, `,"outcome":`...)
	return appendString(b, outcome)
}

// appendString quotes s with the minimal escaping of RFC 8785 §3.2.2.2;
// invalid UTF-8 comes out with U+FFFD replacements, never as raw bytes.
func appendString(dst []byte, s string) []byte {
	out, _ := jsontext.AppendQuote(dst, s)
	return out
}
