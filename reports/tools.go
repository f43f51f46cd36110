package reports

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
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

// Tool is one MCP tool. Texts are as the server sent them; in the JSON,
// control, C1 and bidirectional control characters are \u escapes (the
// same text once decoded). A consumer that shows them sanitises them.
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
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := w.Write(escapeInvisible(buf.Bytes()))
	return err
}

// escapeInvisible writes the characters a terminal acts on that
// encoding/json leaves as they are (C1 controls, bidirectional controls,
// U+FFFE and U+FFFF) as \uXXXX escapes: JSON decodes them back to the
// same text, and a listing printed on a terminal cannot reorder it. They
// can only occur inside strings.
func escapeInvisible(b []byte) []byte {
	var out bytes.Buffer
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c || r == 0xfffe || r == 0xffff {
			fmt.Fprintf(&out, `\u%04x`, r)
		} else {
			out.Write(b[:size])
		}
		b = b[size:]
	}
	return out.Bytes()
}

//go:embed tools.schema.json
var toolsSchemaJSON []byte

// ToolsSchema returns the published JSON Schema of WriteToolsJSON's
// output, the same bytes as schemas/tools.schema.json.
func ToolsSchema() []byte { return append([]byte(nil), toolsSchemaJSON...) }
