package runner

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// marshalMeta writes a sidecar in the published format, keys in a fixed
// order, every string double-quoted (so no value is ever read back as
// another YAML type), after a comment line.
func marshalMeta(m *Meta, comment string) []byte {
	var b strings.Builder
	for _, line := range strings.Split(comment, "\n") {
		b.WriteString("# " + line + "\n")
	}
	if m.Status != nil {
		fmt.Fprintf(&b, "status: %d\n", *m.Status)
	}
	if m.ContentType != nil {
		fmt.Fprintf(&b, "content_type: %s\n", yamlQuote(*m.ContentType))
	}
	if m.ContentEncoding != nil {
		fmt.Fprintf(&b, "content_encoding: %s\n", yamlQuote(*m.ContentEncoding))
	}
	if r := m.Request; r != nil && (r.ID != nil || len(r.Context) > 0) {
		b.WriteString("request:\n")
		if r.ID != nil {
			fmt.Fprintf(&b, "  id: %s\n", yamlQuote(*r.ID))
		}
		writeStringMap(&b, "  ", "context", r.Context)
	}
	if m.Clock != nil {
		fmt.Fprintf(&b, "clock: %s\n", yamlQuote(*m.Clock))
	}
	if e := m.Expect; e != nil && (e.Outcome != "" || e.Reason != "") {
		var parts []string
		if e.Outcome != "" {
			parts = append(parts, "outcome: "+e.Outcome)
		}
		if e.Reason != "" {
			parts = append(parts, "reason: "+yamlQuote(e.Reason))
		}
		fmt.Fprintf(&b, "expect: {%s}\n", strings.Join(parts, ", "))
	}
	if m.Notes != "" {
		fmt.Fprintf(&b, "notes: %s\n", yamlQuote(m.Notes))
	}
	if p := m.Recorded; p != nil {
		b.WriteString("recorded:\n")
		if p.Source != "" {
			fmt.Fprintf(&b, "  source: %s\n", yamlQuote(p.Source))
		}
		writeStringMap(&b, "  ", "request_headers", p.RequestHeaders)
		writeStringMap(&b, "  ", "response_headers", p.ResponseHeaders)
		if p.Time != "" {
			fmt.Fprintf(&b, "  time: %s\n", yamlQuote(p.Time))
		}
		fmt.Fprintf(&b, "  duration_ms: %d\n", p.DurationMS)
		fmt.Fprintf(&b, "  size: %d\n", p.Size)
		if p.SHA256 != "" {
			fmt.Fprintf(&b, "  sha256: %s\n", yamlQuote(p.SHA256))
		}
		if p.AirlockVersion != "" {
			fmt.Fprintf(&b, "  airlock_version: %s\n", yamlQuote(p.AirlockVersion))
		}
		if v := p.Verdict; v != nil {
			parts := []string{"outcome: " + v.Outcome}
			if v.Reason != "" {
				parts = append(parts, "reason: "+yamlQuote(v.Reason))
			}
			if v.ContractVersion != "" {
				parts = append(parts, "contract_version: "+yamlQuote(v.ContractVersion))
			}
			fmt.Fprintf(&b, "  verdict: {%s}\n", strings.Join(parts, ", "))
		}
		if len(p.Redacted) > 0 {
			b.WriteString("  redacted:\n")
			for _, r := range p.Redacted {
				parts := []string{"where: " + r.Where}
				if r.Name != "" {
					parts = append(parts, "name: "+yamlQuote(r.Name))
				}
				if r.Index != nil {
					parts = append(parts, "index: "+strconv.Itoa(*r.Index))
				}
				if r.Where == RedactedBody || r.Where == RedactedArguments {
					parts = append(parts, "pointer: "+yamlQuote(r.Pointer))
				}
				if r.Inner != "" {
					parts = append(parts, "inner: "+yamlQuote(r.Inner))
				}
				fmt.Fprintf(&b, "    - {%s}\n", strings.Join(parts, ", "))
			}
		}
		if p.ExitStatus != nil {
			fmt.Fprintf(&b, "  exit_status: %d\n", *p.ExitStatus)
		}
		if p.StderrBytes != nil {
			fmt.Fprintf(&b, "  stderr_bytes: %d\n", *p.StderrBytes)
		}
		if p.MCPTool != "" {
			fmt.Fprintf(&b, "  mcp_tool: %s\n", yamlQuote(p.MCPTool))
		}
		if p.OutputSchema != "" {
			fmt.Fprintf(&b, "  output_schema: %s\n", yamlQuote(p.OutputSchema))
		}
	}
	return []byte(b.String())
}

func writeStringMap(b *strings.Builder, indent, key string, m map[string]string) {
	if len(m) == 0 {
		return
	}
	fmt.Fprintf(b, "%s%s:\n", indent, key)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "%s  %s: %s\n", indent, yamlQuote(k), yamlQuote(m[k]))
	}
}

// yamlQuote returns s as a YAML double-quoted scalar (YAML 1.2 §7.3.1):
// quote and backslash escaped, and every character outside YAML's
// printable set (C0 and C1 controls, DEL, surrogates, U+FFFE/U+FFFF) as a
// \u escape, plus U+2028, U+2029 and U+FEFF, so the line structure and
// the bytes survive a round trip. Invalid UTF-8 becomes U+FFFD.
func yamlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 || r == 0xfeff || r == 0xfffe || r == 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		case r == utf8.RuneError:
			b.WriteString(`\ufffd`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
