// Package strictyaml decodes airlock's YAML files (contract manifests,
// fixture sidecars, request files) strictly and within bounds: nesting is
// bounded before the YAML parser runs, anchors and aliases are refused, a
// duplicate or unknown key is an error, the document may first be checked
// against the format's published JSON Schema, and every error is a
// *config.Error (gate.ConfigError) naming the file, line and column.
package strictyaml

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/config"
	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/jsonpointer"
)

// Nesting bounds for airlock's YAML files, checked before parsing: the YAML
// parser's memory grows with the square of deep nesting.
const (
	MaxFlowDepth = 32  // nested [ and { in flow style
	MaxIndent    = 128 // columns of block indentation
)

// tooDeep scans data for flow nesting or block indentation past the bounds,
// skipping quoted scalars and comments; it returns the line and a message.
func tooDeep(data []byte) (int, string) {
	line, col, depth := 1, 0, 0
	var quote byte
	comment, indenting, escaped := false, true, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c == '\n' {
			line, col, comment, indenting, escaped = line+1, 0, false, true, false
			continue
		}
		col++
		if indenting {
			if c == ' ' {
				if col > MaxIndent {
					return line, fmt.Sprintf("indented more than %d columns; airlock's files are shallow", MaxIndent)
				}
				continue
			}
			indenting = false
		}
		switch {
		case comment:
		case quote != 0:
			// In a double-quoted scalar a backslash escapes the next
			// character: "a\\" ends at its second quote, "a\"" at its
			// third. A single-quoted one has no escapes ('' closes and
			// reopens it, to the same effect).
			switch {
			case escaped:
				escaped = false
			case c == '\\' && quote == '"':
				escaped = true
			case c == quote:
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#':
			comment = true
		case c == '[' || c == '{':
			depth++
			if depth > MaxFlowDepth {
				return line, fmt.Sprintf("nested more than %d levels deep; airlock's files are shallow", MaxFlowDepth)
			}
		case c == ']' || c == '}':
			depth = max(depth-1, 0)
		}
	}
	return 0, ""
}

// refusesAliases finds the first anchor or alias in a YAML document.
type refusesAliases struct{ tok *token.Token }

func (r *refusesAliases) Visit(n ast.Node) ast.Visitor {
	if r.tok != nil {
		return nil
	}
	switch n.(type) {
	case *ast.AliasNode, *ast.AnchorNode:
		r.tok = n.GetToken()
		return nil
	}
	return r
}

// yamlError is what goccy/go-yaml's syntax, type, duplicate-key and
// unknown-field errors have in common.
type yamlError interface {
	GetMessage() string
	GetToken() *token.Token
}

// Decode decodes one strict YAML document into v (a pointer to a struct
// with yaml tags):
//   - a duplicate key, at any depth, is an error;
//   - when sch is non-nil the document is first validated against it (the
//     published JSON Schema of the format), so a wrong type or a missing
//     field is reported with the schema's words;
//   - a key v does not declare is an error;
//   - a file of more than config.MaxFile bytes, nesting past the bounds,
//     and any anchor or alias are errors;
//   - the error is a *config.Error naming file, line and column.
func Decode(file string, data []byte, sch *jsonschema.Schema, v any) error {
	if len(data) > config.MaxFile {
		return &config.Error{File: file, Msg: fmt.Sprintf("%d bytes; a configuration file may hold at most %d", len(data), config.MaxFile)}
	}
	if line, why := tooDeep(data); why != "" {
		return &config.Error{File: file, Line: line, Msg: why}
	}
	astFile, err := parser.ParseBytes(data, 0)
	if err != nil {
		return yamlConfigError(file, err)
	}
	// Anchors and aliases are refused before anything expands them: a few
	// hundred bytes of nested aliases expand to gigabytes ("billion laughs").
	var alias refusesAliases
	for _, d := range astFile.Docs {
		ast.Walk(&alias, d)
	}
	if alias.tok != nil {
		ce := &config.Error{File: file, Msg: "YAML anchors and aliases are not allowed in airlock's files"}
		if alias.tok.Position != nil {
			ce.Line, ce.Column = alias.tok.Position.Line, alias.tok.Position.Column
		}
		return ce
	}
	if sch != nil {
		var generic any
		if err := yaml.Unmarshal(data, &generic); err != nil {
			return yamlConfigError(file, err)
		}
		doc, err := toJSONValue(generic)
		if err != nil {
			return &config.Error{File: file, Msg: err.Error()}
		}
		if f, panicErr := schema.Validate(sch, doc); panicErr != nil {
			return &config.Error{File: file, Msg: panicErr.Error()}
		} else if f != nil {
			key := f.InstanceLocation
			if f.Member != "" { // an unknown key: point at it, not at its parent
				key += "/" + jsonpointer.EscapeToken(f.Member)
			}
			line, col := lineOf(astFile, key)
			return &config.Error{File: file, Line: line, Column: col, Key: key, Msg: f.Message}
		}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data), yaml.Strict())
	if err := dec.Decode(v); err != nil {
		return yamlConfigError(file, err)
	}
	return nil
}

func yamlConfigError(file string, err error) error {
	var ye yamlError
	if errors.As(err, &ye) {
		ce := &config.Error{File: file, Msg: ye.GetMessage(), Err: err}
		if t := ye.GetToken(); t != nil && t.Position != nil {
			ce.Line, ce.Column = t.Position.Line, t.Position.Column
		}
		return ce
	}
	return &config.Error{File: file, Msg: err.Error(), Err: err}
}

// toJSONValue round-trips a YAML value through JSON so that the schema sees
// JSON types (json.Number for numbers, map[string]any for mappings).
func toJSONValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("not representable as JSON: %v", err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var out any
	if err := d.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

// lineOf finds the line and column of the node at an RFC 6901 location in a
// parsed YAML file; it falls back to the nearest ancestor that exists.
func lineOf(f *ast.File, pointer string) (int, int) {
	if len(f.Docs) == 0 {
		return 0, 0
	}
	var toks []string
	if pointer != "" {
		toks = strings.Split(pointer[1:], "/")
	}
	for n := len(toks); n >= 0; n-- {
		b := (&yaml.PathBuilder{}).Root()
		for _, t := range toks[:n] {
			t = strings.NewReplacer("~1", "/", "~0", "~").Replace(t)
			if i, err := strconv.Atoi(t); err == nil && i >= 0 {
				b = b.Index(uint(i))
			} else {
				b = b.Child(t)
			}
		}
		node, err := b.Build().FilterFile(f)
		if err == nil && node != nil && node.GetToken() != nil && node.GetToken().Position != nil {
			p := node.GetToken().Position
			return p.Line, p.Column
		}
	}
	return 1, 1
}

// Position returns the 1-based line and column of the value at an
// RFC 6901 location in a YAML document, or of its nearest existing
// ancestor; 0, 0 when the document does not parse.
func Position(data []byte, pointer string) (int, int) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return 0, 0
	}
	return lineOf(f, pointer)
}
