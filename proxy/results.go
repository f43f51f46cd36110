package proxy

import (
	"bytes"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The CallToolResult and JSON-RPC responses the proxy builds for the
// agent, and the request context it reads from a call's arguments.

// contextOf returns the scalar members of a call's arguments as a request
// context: strings, numbers (json.Number, exact), booleans and null.
// Objects and arrays are left out; arguments that are not an object give
// nil.
func contextOf(args json.RawMessage) map[string]any {
	if len(args) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil {
		return nil
	}
	for k, v := range m {
		switch v.(type) {
		case string, json.Number, bool, nil:
		default:
			delete(m, k)
		}
	}
	return m
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type callToolResult struct {
	Content           []textBlock     `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}

func successResult(data json.RawMessage) json.RawMessage {
	out, _ := json.Marshal(callToolResult{Content: []textBlock{{"text", string(data)}}, StructuredContent: data})
	return out
}

func failureResult(envelope []byte) json.RawMessage {
	out, _ := json.Marshal(callToolResult{Content: []textBlock{{"text", string(envelope)}}, IsError: true})
	return out
}

func resultResponse(id jsonrpc.ID, result json.RawMessage) *jsonrpc.Response {
	return &jsonrpc.Response{ID: id, Result: result}
}

func errorResponse(id jsonrpc.ID, code int64, message string) *jsonrpc.Response {
	return &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: code, Message: message}}
}
