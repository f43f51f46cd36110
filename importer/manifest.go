package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
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
	if files := componentIgnores(d); len(files) > 0 {
		b.WriteString("lint:\n  ignore:\n")
		for _, l := range componentIgnoreWhy {
			writeCommentLine(&b, "    ", l)
		}
		for _, f := range files {
			fmt.Fprintf(&b, "    - rule: %s\n      file: %s\n      reason: %s\n", quote("*"), quote(f), quote(componentIgnoreReason))
		}
	}
	return []byte(b.String())
}

// componentIgnoreReason is the reason of the lint.ignore entry an import
// writes for each folder of shared components its schema refers to, and
// componentIgnoreWhy the comment above the entries.
const componentIgnoreReason = "the vendor's shared components stay as imported (docs/import.md); the objects on the way to the projected fields are closed in this contract's own schema"

var componentIgnoreWhy = []string{
	"Lint's findings in the vendor's components are accepted: they are not",
	"edited here (docs/lint.md, Imported vendor components). Findings in",
	"this folder's own files still count.",
}

// componentIgnores returns the lint.ignore files that cover the folders of
// the draft's components, as its schema's $refs name them
// ("../_components/<api>/<version>/*"), sorted, each once.
func componentIgnores(d *Draft) []string {
	var out []string
	for _, f := range d.Components {
		g := "../" + path.Dir(f.Path) + "/*"
		if !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	slices.Sort(out)
	return out
}

// addComponentIgnores adds to the top-level mapping of a manifest the
// lint.ignore entries of componentIgnores that it does not have (by file,
// rule "*"): a version added from another description's folder gets its
// own. A lint or ignore key that is not a mapping or a sequence is left
// alone (the manifest schema refuses it anyway).
func addComponentIgnores(top *yaml.Node, d *Draft) error {
	files := componentIgnores(d)
	if len(files) == 0 {
		return nil
	}
	lint := mappingValue(top, "lint")
	if lint == nil {
		lint = &yaml.Node{Kind: yaml.MappingNode}
		top.Content = append(top.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "lint"}, lint)
	}
	if lint.Kind != yaml.MappingNode {
		return nil
	}
	ignore := mappingValue(lint, "ignore")
	if ignore == nil {
		ignore = &yaml.Node{Kind: yaml.SequenceNode}
		lint.Content = append(lint.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "ignore"}, ignore)
	}
	if ignore.Kind != yaml.SequenceNode {
		return nil
	}
	for _, f := range files {
		if slices.ContainsFunc(ignore.Content, func(e *yaml.Node) bool {
			r, fl := mappingValue(e, "rule"), mappingValue(e, "file")
			return r != nil && r.Value == "*" && fl != nil && fl.Value == f
		}) {
			continue
		}
		var entry yaml.Node
		text := fmt.Sprintf("rule: %s\nfile: %s\nreason: %s\n", quote("*"), quote(f), quote(componentIgnoreReason))
		if err := yaml.Unmarshal([]byte(text), &entry); err != nil {
			return err
		}
		ignore.Content = append(ignore.Content, entry.Content[0])
	}
	return nil
}

// mappingValue returns the value of key in mapping node m, nil when m is
// not a mapping or has no such key.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
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
	if err := addComponentIgnores(top, d); err != nil {
		return nil, err
	}
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
