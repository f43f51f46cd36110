package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// quote spells s as a YAML double-quoted scalar (a JSON string is one).
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// renderManifest writes a new contract.yaml for the draft.
func renderManifest(d *Draft, schemaName string) []byte {
	var b strings.Builder
	for _, l := range d.Header {
		writeCommentLine(&b, "", l)
	}
	fmt.Fprintf(&b, "tool: %s\n", d.Tool)
	b.WriteString("version: \"0.1.0\"\n")
	if d.Description != "" {
		fmt.Fprintf(&b, "description: %s\n", quote(truncate(d.Description, 2000)))
	}
	if d.Protocol != "" {
		fmt.Fprintf(&b, "protocol: %s\n", d.Protocol)
	}
	if d.Result != "" {
		fmt.Fprintf(&b, "result: %s\n", d.Result)
	}
	fmt.Fprintf(&b, "current: %s\n", quote(d.Version.Name))
	b.WriteString("agent_schema: agent.schema.json\n")
	if len(d.Formats) > 0 {
		for _, l := range d.FormatsWhy {
			writeCommentLine(&b, "", l)
		}
		b.WriteString("formats:\n")
		for _, f := range d.Formats {
			fmt.Fprintf(&b, "  %s: %s\n", f.Name, f.Policy)
		}
	}
	b.WriteString("upstream_versions:\n")
	b.WriteString(renderVersion(d, schemaName, "  "))
	return []byte(b.String())
}

// renderVersion writes the upstream_versions entry of the draft's version.
func renderVersion(d *Draft, schemaName, indent string) string {
	var b strings.Builder
	for _, l := range d.Version.Comment {
		writeCommentLine(&b, indent, l)
	}
	fmt.Fprintf(&b, "%s%s:\n", indent, quote(d.Version.Name))
	in := indent + "  "
	if d.Version.Description != "" {
		fmt.Fprintf(&b, "%sdescription: %s\n", in, quote(truncate(d.Version.Description, 2000)))
	}
	fmt.Fprintf(&b, "%sschema: %s\n", in, schemaName)
	fmt.Fprintf(&b, "%sprojection:\n", in)
	for _, f := range d.Version.Projection {
		fmt.Fprintf(&b, "%s  %s: %s\n", in, f.Name, quote(f.Pointer))
	}
	return b.String()
}

func writeCommentLine(b *strings.Builder, indent, l string) {
	for _, part := range strings.Split(l, "\n") {
		part = strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return ' '
			}
			return r
		}, part)
		if part == "" {
			fmt.Fprintf(b, "%s#\n", indent)
			continue
		}
		fmt.Fprintf(b, "%s# %s\n", indent, part)
	}
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// addVersion returns manifest old with the draft's version added under
// upstream_versions; comments and the rest stay as they were (re-indented
// by the YAML encoder).
func addVersion(old []byte, d *Draft, schemaName string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(old, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("not a YAML mapping")
	}
	top := doc.Content[0]
	var versions *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "upstream_versions" {
			versions = top.Content[i+1]
		}
	}
	if versions == nil || versions.Kind != yaml.MappingNode {
		return nil, errors.New("upstream_versions is not a mapping")
	}
	var entry yaml.Node
	if err := yaml.Unmarshal([]byte(renderVersion(d, schemaName, "")), &entry); err != nil {
		return nil, err
	}
	pairs := entry.Content[0].Content
	versions.Content = append(versions.Content, pairs...)
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
