package gate

import "strconv"

// SuccessEnvelope returns the agent output of an admitted response:
//
//	{"tool":T,"request_id":R,"outcome":"success","data":D}
//
// with members in that order, no whitespace, and data serialised by
// AppendCanonical. requestID is the adapter's, never the upstream's.
func SuccessEnvelope(tool, requestID string, data map[string]any) []byte {
	b := appendHead(make([]byte, 0, 128), tool, requestID, "success")
	b = append(b, `,"data":`...)
	b = AppendCanonical(b, data)
	return append(b, '}')
}

// FailureEnvelope returns the agent output of a refused response, exactly
//
//	{"tool":T,"request_id":R,"outcome":"failure","error":{"code":C,"retryable":B}}
//
// It carries no upstream byte and no message text.
func FailureEnvelope(tool, requestID string, code ErrorCode, retryable bool) []byte {
	b := appendHead(make([]byte, 0, 128), tool, requestID, "failure")
	b = append(b, `,"error":{"code":`...)
	b = appendString(b, string(code))
	b = append(b, `,"retryable":`...)
	b = strconv.AppendBool(b, retryable)
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
