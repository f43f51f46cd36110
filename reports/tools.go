package reports

import (
	_ "embed"
	"encoding/json"
	"io"
)

// Tools is airlock tools --format json: an MCP server's tools and their
// schemas (schemas/tools.schema.json).
type Tools struct {
	// Server is the server as airlock shows it, secrets redacted.
	Server string
	// Truncated is true when the server offered more tools (or pages)
	// than airlock lists.
	Truncated bool
	Tools     []Tool
}

// Tool is one MCP tool. Texts are as the server sent them (JSON escapes
// control characters); a consumer that shows them sanitises them.
type Tool struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description"`
	// InputSchema and OutputSchema are the tool's JSON Schemas as sent
	// (members and numbers kept); null when it declares none or when one
	// was left out for its size (Omitted).
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	// Omitted maps "inputSchema" or "outputSchema" to the size in bytes
	// of a schema left out because it is longer than the limit.
	Omitted map[string]int `json:"omitted,omitempty"`
}

// toolsVersion is the version of the JSON tools format.
const toolsVersion = 1

// WriteToolsJSON writes t as one indented JSON document and a newline:
// {"version": 1, "server", "truncated", "tools": [...]}.
func WriteToolsJSON(w io.Writer, t *Tools) error {
	tools := append([]Tool{}, t.Tools...)
	for i := range tools {
		for _, s := range []*json.RawMessage{&tools[i].InputSchema, &tools[i].OutputSchema} {
			if len(*s) == 0 {
				*s = json.RawMessage("null")
			}
		}
	}
	doc := struct {
		Version   int    `json:"version"`
		Server    string `json:"server"`
		Truncated bool   `json:"truncated"`
		Tools     []Tool `json:"tools"`
	}{toolsVersion, t.Server, t.Truncated, tools}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

//go:embed tools.schema.json
var toolsSchemaJSON []byte

// ToolsSchema returns the published JSON Schema of WriteToolsJSON's
// output, the same bytes as schemas/tools.schema.json.
func ToolsSchema() []byte { return append([]byte(nil), toolsSchemaJSON...) }
