package gate

import "fmt"

// Upstream protocols a contract can declare (contract.yaml "protocol").
const (
	// ProtocolJSON: the body is the tool result itself (the default).
	ProtocolJSON = "json"
	// ProtocolMCP: the body is an MCP CallToolResult, {"content": [...],
	// "structuredContent": ..., "isError": bool} (MCP specification,
	// 2025-06-18, "Tool Result"). The schema, rules and projection apply to
	// structuredContent; content blocks (text, images, resources) never
	// reach the agent.
	ProtocolMCP = "mcp"
)

// unwrapMCP takes a parsed CallToolResult apart. A result with isError true
// is the upstream's own failure (transport.mcp_tool_error, an upstream
// failure envelope); a result that is not an object, whose isError is not a
// boolean, whose content is not an array, or that lacks structuredContent is
// parse.mcp_result. structuredContent counts as present whatever its value,
// 0, false and null included.
func unwrapMCP(v any) (any, *refusal) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, &refusal{reason: ReasonMCPResult, offset: -1, message: "an MCP tool result must be a JSON object"}
	}
	if e, has := obj["isError"]; has {
		b, ok := e.(bool)
		if !ok {
			return nil, &refusal{reason: ReasonMCPResult, offset: -1, instanceLocation: "/isError", message: "isError must be a boolean"}
		}
		if b {
			return nil, &refusal{reason: ReasonMCPToolError, offset: -1, instanceLocation: "/isError", message: "the tool reported an error (isError: true)"}
		}
	}
	if c, has := obj["content"]; has {
		if _, ok := c.([]any); !ok {
			return nil, &refusal{reason: ReasonMCPResult, offset: -1, instanceLocation: "/content", message: "content must be an array"}
		}
	}
	sc, has := obj["structuredContent"]
	if !has {
		return nil, &refusal{reason: ReasonMCPResult, offset: -1, message: fmt.Sprintf("no structuredContent (members: %d)", len(obj))}
	}
	return sc, nil
}
