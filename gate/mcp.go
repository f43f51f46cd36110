package gate

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/semantic"
)

// Upstream protocols a contract can declare (contract.yaml "protocol").
const (
	// ProtocolJSON: the body is the tool result itself (the default).
	ProtocolJSON = "json"
	// ProtocolMCP: the body is an MCP CallToolResult, {"content": [...],
	// "structuredContent": ..., "isError": bool, "_meta": {...}} (MCP
	// specification, 2025-06-18, "Tool Result"). The schema, rules and
	// projection apply to the value the contract's result names
	// (ResultStructured, ResultText, ResultAuto); content blocks never reach
	// the agent.
	ProtocolMCP = "mcp"
)

// Where an MCP contract finds the value it checks (contract.yaml "result",
// top level or per upstream version; only with protocol: mcp).
const (
	// ResultStructured: structuredContent, which must be present (0, false
	// and null count as present). The default.
	ResultStructured = "structured"
	// ResultText: the JSON text of one text content block (the only one, or
	// the block text_block names), parsed by the parse stage exactly as a
	// raw body, under the contract's limits. structuredContent, if any, is
	// not read.
	ResultText = "text"
	// ResultAuto: structuredContent when present, else as ResultText. When
	// both are present and the text block holds JSON ("{" or "[" after
	// optional whitespace), the two must be equal as JSON values
	// (parse.mcp_mismatch).
	ResultAuto = "auto"
)

// mcpMembers are the members of a CallToolResult; mcpContentTypes the
// content block types (MCP specification, 2025-06-18, "Tool Result").
var (
	mcpMembers      = []string{"content", "structuredContent", "isError", "_meta"}
	mcpContentTypes = []string{"text", "image", "audio", "resource_link", "resource"}
	mcpTextMembers  = []string{"type", "text", "annotations", "_meta"}
)

// extracted says where in the raw body the checked value of an MCP result
// came from: the pointer of structuredContent, or of a text block's text
// (text true: the value is the JSON text inside that string).
type extracted struct {
	at   jsonpointer.Pointer
	text bool
}

// unwrapMCP takes a parsed CallToolResult apart and returns the value the
// contract's upstream version checks. The wrapper is checked first, the
// same way for every result mode: not an object (parse.mcp_result); a
// member other than content, structuredContent, isError and _meta, or a
// _meta that is not an object (parse.mcp_member); an isError that is not a
// boolean (parse.mcp_is_error); isError true (transport.mcp_tool_error, an
// upstream failure envelope); content that is not an array, a block that
// is not an object or has no string type, a text block whose text is not a
// string or with a member other than type, text, annotations and _meta
// (parse.mcp_content); a block type other than text, image, audio,
// resource_link and resource (parse.mcp_content_type). Then the value:
// structuredContent missing under result structured (parse.mcp_result); no
// single text block, or a text_block that is not one (parse.mcp_text_block);
// a text that is not strict JSON (the parse.* reasons, located inside the
// text); under auto, a JSON text that differs from structuredContent
// (parse.mcp_mismatch).
//
// When allowIsError, a result with isError: true is taken apart like any
// other (without its isError member) and isErr is true: the caller matches
// it against the version's error shapes.
func (c *Contract) unwrapMCP(v any, u *upstream, allowIsError bool) (value any, from extracted, isErr bool, r *refusal) {
	value, from, r = c.unwrapResult(v, u, allowIsError)
	if r == errIsError {
		obj := v.(map[string]any)
		rest := make(map[string]any, len(obj))
		for k, x := range obj {
			if k != "isError" {
				rest[k] = x
			}
		}
		value, from, r = c.unwrapResult(rest, u, false)
		return value, from, true, r
	}
	return value, from, false, r
}

// errIsError is unwrapResult's signal of an isError: true result it was
// allowed to pass on.
var errIsError = &refusal{reason: ReasonMCPToolError, offset: -1}

// unwrapResult is unwrapMCP for one CallToolResult; with allowIsError an
// isError: true result gives errIsError.
func (c *Contract) unwrapResult(v any, u *upstream, allowIsError bool) (any, extracted, *refusal) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, extracted{}, &refusal{reason: ReasonMCPResult, offset: -1, message: "an MCP tool result must be a JSON object"}
	}
	for _, k := range sortedNames(obj) {
		if !slices.Contains(mcpMembers, k) {
			return nil, extracted{}, &refusal{reason: ReasonMCPMember, offset: -1, instanceLocation: "/" + jsonpointer.EscapeToken(k),
				message: fmt.Sprintf("a CallToolResult has no member %q (members: content, structuredContent, isError, _meta)", k)}
		}
	}
	if m, has := obj["_meta"]; has {
		if _, ok := m.(map[string]any); !ok {
			return nil, extracted{}, &refusal{reason: ReasonMCPMember, offset: -1, instanceLocation: "/_meta", message: "_meta must be an object"}
		}
	}
	if e, has := obj["isError"]; has {
		b, ok := e.(bool)
		if !ok {
			return nil, extracted{}, &refusal{reason: ReasonMCPIsError, offset: -1, instanceLocation: "/isError", message: "isError must be a boolean"}
		}
		if b && allowIsError {
			return nil, extracted{}, errIsError
		}
		if b {
			return nil, extracted{}, &refusal{reason: ReasonMCPToolError, offset: -1, instanceLocation: "/isError", message: "the tool reported an error (isError: true)"}
		}
	}
	var blocks []any
	if cv, has := obj["content"]; has {
		if blocks, ok = cv.([]any); !ok {
			return nil, extracted{}, &refusal{reason: ReasonMCPContent, offset: -1, instanceLocation: "/content", message: "content must be an array"}
		}
	}
	var texts []int
	for i, b := range blocks {
		at := "/content/" + strconv.Itoa(i)
		if r := checkBlock(b, at); r != nil {
			return nil, extracted{}, r
		}
		if b.(map[string]any)["type"] == "text" {
			texts = append(texts, i)
		}
	}
	sc, hasSC := obj["structuredContent"]
	switch {
	case u.result == ResultStructured && !hasSC:
		return nil, extracted{}, &refusal{reason: ReasonMCPResult, offset: -1, message: fmt.Sprintf("no structuredContent (members: %d); a server that answers in a text block needs result: text or auto", len(obj))}
	case u.result == ResultStructured:
		return sc, extracted{at: jsonpointer.Pointer{"structuredContent"}}, nil
	case u.result == ResultAuto && hasSC:
		if r := c.sameAsText(sc, blocks, texts, u.textBlock); r != nil {
			return nil, extracted{}, r
		}
		return sc, extracted{at: jsonpointer.Pointer{"structuredContent"}}, nil
	}
	i, r := chooseText(blocks, texts, u.textBlock)
	if r != nil {
		return nil, extracted{}, r
	}
	value, r := c.parseText(blocks[i].(map[string]any)["text"].(string), i)
	if r != nil {
		return nil, extracted{}, r
	}
	return value, extracted{at: jsonpointer.Pointer{"content", strconv.Itoa(i), "text"}, text: true}, nil
}

// checkBlock checks one content block at location at.
func checkBlock(b any, at string) *refusal {
	blk, ok := b.(map[string]any)
	if !ok {
		return &refusal{reason: ReasonMCPContent, offset: -1, instanceLocation: at, message: "a content block must be an object"}
	}
	t, ok := blk["type"].(string)
	if !ok {
		return &refusal{reason: ReasonMCPContent, offset: -1, instanceLocation: at + "/type", message: "a content block needs a string type"}
	}
	if !slices.Contains(mcpContentTypes, t) {
		return &refusal{reason: ReasonMCPContentType, offset: -1, instanceLocation: at + "/type",
			message: fmt.Sprintf("unknown content block type %q (text, image, audio, resource_link, resource)", t)}
	}
	if t != "text" {
		return nil
	}
	if _, ok := blk["text"].(string); !ok {
		return &refusal{reason: ReasonMCPContent, offset: -1, instanceLocation: at + "/text", message: "a text block's text must be a string"}
	}
	for _, k := range sortedNames(blk) {
		if !slices.Contains(mcpTextMembers, k) {
			return &refusal{reason: ReasonMCPContent, offset: -1, instanceLocation: at + "/" + jsonpointer.EscapeToken(k),
				message: fmt.Sprintf("a text block has no member %q (members: type, text, annotations, _meta)", k)}
		}
	}
	return nil
}

// chooseText returns the index in content of the text block to read: the
// one text_block names (block >= 0), else the only text block.
func chooseText(blocks []any, texts []int, block int) (int, *refusal) {
	if block >= 0 {
		if !slices.Contains(texts, block) {
			what := "there is no such block"
			if block < len(blocks) {
				what = fmt.Sprintf("it is a %v block", blocks[block].(map[string]any)["type"])
			}
			return 0, &refusal{reason: ReasonMCPTextBlock, offset: -1, instanceLocation: "/content/" + strconv.Itoa(block),
				message: fmt.Sprintf("text_block %d is not a text block: %s (content has %d blocks, %d of them text)", block, what, len(blocks), len(texts))}
		}
		return block, nil
	}
	if len(texts) != 1 {
		return 0, &refusal{reason: ReasonMCPTextBlock, offset: -1, instanceLocation: "/content",
			message: fmt.Sprintf("%d text blocks, and the contract reads the only one (name one with text_block)", len(texts))}
	}
	return texts[0], nil
}

// parseText runs the parse stage on the text of content block i. A refusal
// keeps the parse reason; its offset counts bytes of the text as decoded
// (not of the body), its instance location is inside the parsed text, as a
// schema refusal's is inside the extracted value, and the message names
// the block.
func (c *Contract) parseText(text string, i int) (any, *refusal) {
	value, r := parse([]byte(text), c.limits, c.locations)
	if r != nil {
		r.message = fmt.Sprintf("in the JSON text of /content/%d/text (offset: bytes into the decoded text): %s", i, r.message)
	}
	return value, r
}

// sameAsText checks an auto result that has structuredContent: the text
// block it would otherwise read (text_block, or the only text block), when
// it holds JSON, must parse strictly and equal sc as a JSON value. A text
// that does not start like JSON (a rendering for people) is left alone.
func (c *Contract) sameAsText(sc any, blocks []any, texts []int, block int) *refusal {
	if block < 0 && len(texts) != 1 {
		return nil
	}
	i, r := chooseText(blocks, texts, block)
	if r != nil {
		return r
	}
	text := blocks[i].(map[string]any)["text"].(string)
	if !looksLikeJSON(text) {
		return nil
	}
	value, r := c.parseText(text, i)
	if r != nil {
		return r
	}
	if !semantic.EqualJSON(sc, value) {
		return &refusal{reason: ReasonMCPMismatch, offset: -1, instanceLocation: "/content/" + strconv.Itoa(i) + "/text",
			message: fmt.Sprintf("structuredContent and the JSON text of /content/%d/text are different JSON values", i)}
	}
	return nil
}

// looksLikeJSON reports whether s starts with "{" or "[" after JSON
// whitespace.
func looksLikeJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			continue
		case '{', '[':
			return true
		}
		return false
	}
	return false
}

// sortedNames returns an object's member names, sorted.
func sortedNames(m map[string]any) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}
