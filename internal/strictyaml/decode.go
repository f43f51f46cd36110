// Package strictyaml decodes airlock's YAML files (contract manifests,
// fixture sidecars and defaults, request files) strictly and within
// bounds. A file holds one YAML document of at most config.MaxFile bytes;
// a pre-scan bounds its nesting and node count before the YAML parser
// (go.yaml.in/yaml/v3) runs, and refuses anchors, aliases and a second
// document; the parsed tree is checked for duplicate keys, merge keys,
// non-scalar keys and the key bounds before anything decodes it; the
// document may then be checked against the format's published JSON
// Schema, and a key the target type does not declare is an error. Every
// error is a *config.Error (gate.ConfigError) naming the file and line,
// and the column where the parser tells it. limits.go has the bounds.
package strictyaml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/airlockdev/airlock/internal/config"
	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/jsonpointer"
)

// Decode decodes one strict YAML document into v (a pointer to a value
// with yaml tags):
//   - a file of more than config.MaxFile bytes, nesting past MaxDepth,
//     indentation past MaxIndent, more than MaxNodes nodes
//     (MaxSchemaNodes when sch is non-nil), a mapping of more than
//     MaxMappingKeys keys, more than MaxKeys keys, an anchor or alias, a
//     second document ("---" or "..." followed by more), a duplicate key
//     at any depth, a merge key ("<<") and a key that is not a scalar are
//     errors;
//   - when sch is non-nil the document is first validated against it (the
//     published JSON Schema of the format), so a wrong type or a missing
//     field is reported with the schema's words;
//   - a key v does not declare is an error;
//   - a date (!!timestamp) decodes as the text it is, and a plain integer
//     past 64 bits is an error rather than a rounded float64;
//   - an empty document (nothing but comments) leaves v as it is;
//   - the error is a *config.Error naming file, line and (where known)
//     column.
func Decode(file string, data []byte, sch *jsonschema.Schema, v any) error {
	maxNodes := MaxNodes
	if sch != nil {
		maxNodes = MaxSchemaNodes
	}
	root, err := parse(file, data, maxNodes)
	if err != nil {
		return err
	}
	if sch != nil {
		doc, err := toJSON(file, root)
		if err != nil {
			return err
		}
		if f, panicErr := schema.Validate(sch, doc); panicErr != nil {
			return &config.Error{File: file, Msg: panicErr.Error()}
		} else if f != nil {
			key := f.InstanceLocation
			if f.Member != "" { // an unknown key: point at it, not at its parent
				key += "/" + jsonpointer.EscapeToken(f.Member)
			}
			if e := misspelt(file, root, f); e != nil {
				return e
			}
			line, col := lineOf(root, key)
			return &config.Error{File: file, Line: line, Column: col, Key: key, Msg: f.Message}
		}
	}
	if root == nil {
		return nil
	}
	if err := checkKnown(file, root, reflect.TypeOf(v)); err != nil {
		return err
	}
	if err := root.Decode(v); err != nil {
		return decodeError(file, root, err)
	}
	return nil
}

// Positions answers KeyPosition for one document parsed once, for a
// caller that asks about many pointers.
type Positions struct{ root *yaml.Node }

// NewPositions parses data (within the decoder's bounds) for KeyPosition;
// a document that does not parse gives 0, 0 for every pointer.
func NewPositions(data []byte) *Positions {
	root, err := parse("", data, MaxNodes)
	if err != nil {
		return &Positions{}
	}
	return &Positions{root: root}
}

// KeyPosition is Position for the key itself when pointer ends at a member
// of a mapping (the line a reader looks for: "v2:" rather than the first
// line of its value); otherwise it is Position. Columns count characters.
func (p *Positions) KeyPosition(pointer string) (int, int) {
	if p.root == nil {
		return 0, 0
	}
	i := strings.LastIndex(pointer, "/")
	if i < 0 {
		return lineOf(p.root, pointer)
	}
	parent := p.root
	if i > 0 {
		parent = nodeAt(p.root, pointer[:i])
	}
	tok := strings.NewReplacer("~1", "/", "~0", "~").Replace(pointer[i+1:])
	if parent != nil && parent.Kind == yaml.MappingNode {
		for j := 0; j+1 < len(parent.Content); j += 2 {
			if parent.Content[j].Value == tok {
				return parent.Content[j].Line, parent.Content[j].Column
			}
		}
	}
	return lineOf(p.root, pointer)
}

// Position returns the 1-based line and column of the value at an
// RFC 6901 location in a YAML document, or of its nearest existing
// ancestor; 0, 0 when the document does not parse within the bounds.
func Position(data []byte, pointer string) (int, int) {
	root, err := parse("", data, MaxNodes)
	if err != nil {
		return 0, 0
	}
	return lineOf(root, pointer)
}

// parse pre-scans data, parses its one document and checks the tree; nil
// for an empty document.
func parse(file string, data []byte, maxNodes int) (*yaml.Node, error) {
	if len(data) > config.MaxFile {
		return nil, &config.Error{File: file, Msg: fmt.Sprintf("%d bytes; a configuration file may hold at most %d", len(data), config.MaxFile)}
	}
	if _, _, e := prescan(data, maxNodes); e != nil {
		return nil, &config.Error{File: file, Line: e.line, Column: e.col, Msg: e.msg}
	}
	root, err := parseDoc(data)
	if err != nil {
		return nil, syntaxError(file, data, err)
	}
	if root == nil {
		return nil, nil
	}
	if err := check(file, root, maxNodes); err != nil {
		return nil, err
	}
	return root, nil
}

// parseDoc parses the one document in data and makes sure nothing follows
// it: the parser stops reading after the first document, so a top-level
// node after the root (a key dedented past the root mapping) would be
// dropped without a word. Its root is nil for an empty document.
func parseDoc(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc, next yaml.Node
	if err := dec.Decode(&doc); err == io.EOF {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if err := dec.Decode(&next); err == nil {
		return nil, fmt.Errorf("yaml: line %d: %s", next.Line, secondDocument) // the pre-scan refuses this first
	} else if err != io.EOF {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

const secondDocument = "a second YAML document; airlock's files hold one document"

// The YAML parser's errors read "yaml: line N: message", without the
// column. N is 1-based for errors of its scanner, 0-based for errors of
// its parser (left out when 0), and for a parser error with a context
// ("while parsing a block mapping") it is the line where that context
// starts when that line is not the first, else the line of the problem.
var yamlErrLine = regexp.MustCompile(`^yaml: (?:line (\d+): )?`)

// parserErrors are the parser's messages; for those with a context, what
// the context is. Every other message comes from the scanner.
var parserErrors = map[string]string{
	"did not find expected key":              "the block mapping",
	"did not find expected '-' indicator":    "the block sequence",
	"did not find expected ',' or ']'":       "the flow sequence",
	"did not find expected ',' or '}'":       "the flow mapping",
	"did not find expected node content":     "the node",
	"found undefined tag handle":             "the node",
	"did not find expected <document start>": "",
	"found duplicate %YAML directive":        "",
	"found incompatible YAML document":       "",
	"found duplicate %TAG directive":         "",
}

// syntaxError reports the parser's error err on data at a line that means
// one thing: it parses data again after a blank first line, so that a
// context always has a line other than the first and is always the one
// reported, and every line number is the 1-based line of data.
func syntaxError(file string, data []byte, err error) error {
	bom := 0
	if bytes.HasPrefix(data, []byte("\xEF\xBB\xBF")) {
		bom = 3
	}
	shifted := append(append(append(make([]byte, 0, len(data)+1), data[:bom]...), '\n'), data[bom:]...)
	_, again := parseDoc(shifted)
	if again == nil {
		again = err
	}
	msg := again.Error()
	n := 0
	if m := yamlErrLine.FindStringSubmatch(msg); m != nil {
		n, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	}
	ce := &config.Error{File: file, Msg: msg, Err: err}
	switch context, parser := parserErrors[msg]; {
	case msg == secondDocument:
		ce.Line = n - 1
	case parser && context != "":
		ce.Line = n
		ce.Msg = fmt.Sprintf("%s in %s that starts on this line", msg, context)
	case msg == "did not find expected <document start>":
		ce.Line = n
		ce.Msg = "content after the end of the document's top-level node; is it indented less than the lines before it?"
	case parser:
		ce.Line = n
	default:
		ce.Line = n - 1
	}
	ce.Line = max(ce.Line, 1)
	return ce
}

// typeErrLine reads the line and the YAML tag of a decoder type error.
var typeErrLine = regexp.MustCompile(`^line (\d+): (?:cannot unmarshal (!!\w+))?`)

// decodeError turns the decoder's first type error ("line N: cannot
// unmarshal !!seq into string") into a *config.Error at that line, with
// the column of the first value that starts there.
func decodeError(file string, root *yaml.Node, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		return &config.Error{File: file, Msg: err.Error(), Err: err}
	}
	msg := te.Errors[0]
	ce := &config.Error{File: file, Msg: msg, Err: err}
	if m := typeErrLine.FindStringSubmatch(msg); m != nil {
		ce.Line, _ = strconv.Atoi(m[1])
		ce.Msg = msg[len("line "+m[1]+": "):]
		ce.Column = columnOn(root, ce.Line, m[2])
	}
	return ce
}

// misspelt turns a missing required key into an error at the key that
// misspells it, when the mapping has one within two edits
// ("agent_shcema" for "agent_schema"); nil otherwise.
func misspelt(file string, root *yaml.Node, f *schema.Failure) *config.Error {
	if f.Keyword != "required" || len(f.Missing) == 0 {
		return nil
	}
	n := root
	if f.InstanceLocation != "" {
		for _, tok := range strings.Split(f.InstanceLocation[1:], "/") {
			if n = child(n, strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)); n == nil {
				return nil
			}
		}
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if near := schema.Nearest(k.Value, f.Missing); near != "" {
			return &config.Error{File: file, Line: k.Line, Column: k.Column, Key: f.InstanceLocation + "/" + jsonpointer.EscapeToken(k.Value),
				Msg: fmt.Sprintf("unknown key %q; did you mean %q?", k.Value, near)}
		}
	}
	return nil
}

// jsonNumber is a number as JSON writes it (RFC 8259 §6), compiled at its
// first use.
var jsonNumber = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)
})

// NumberTexts returns the text of every number among the values of the
// mapping at pointer in data, by key — what a decoder loses when it turns
// "9007199254740993.0" into a float64 or reads "0123" as octal — so a
// caller can keep each number exactly (as a json.Number). A number YAML
// reads (a plain scalar resolved as int or float) but JSON does not write
// that way (a leading zero, 0x, 0o, an underscore, a leading "+" or ".",
// .inf, .nan) is an error naming its key, line and column: quoted, it is a
// string. No mapping at pointer gives an empty result.
func NumberTexts(data []byte, pointer string) (texts map[string]string, key string, line, col int, err error) {
	root, perr := parse("", data, MaxNodes)
	if perr != nil {
		return nil, "", 0, 0, nil // Decode reports it
	}
	n := nodeAt(root, pointer)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, "", 0, 0, nil
	}
	texts = map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if v.Kind != yaml.ScalarNode || v.Style != 0 || v.Tag != "!!int" && v.Tag != "!!float" {
			continue
		}
		if !jsonNumber().MatchString(v.Value) {
			return nil, k.Value, v.Line, v.Column, fmt.Errorf("%q is not a number as JSON writes it (no leading zero, 0x, 0o, _, + or .inf); write it as JSON does, or quote it to make it a string", v.Value)
		}
		texts[k.Value] = v.Value
	}
	return texts, "", 0, 0, nil
}
