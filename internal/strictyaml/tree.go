package strictyaml

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/airlockdev/airlock/internal/config"
)

// check walks the parsed tree before anything decodes it: the bounds again,
// exactly (the pre-scan already refused what exceeds MaxDepth and
// MaxNodes), the key bounds, and what airlock's files must not hold: an
// anchor or alias, a duplicate key, a merge key, a key that is not a
// scalar. The first problem in document order is reported.
func check(file string, root *yaml.Node, maxNodes int) error {
	w := walker{file: file, maxNodes: maxNodes}
	return w.walk(root, 1)
}

type walker struct {
	file        string
	maxNodes    int
	nodes, keys int
}

const tooManyNodes = "more than %d YAML nodes (scalars, mappings, sequences); airlock's files are small"

func (w *walker) fail(n *yaml.Node, format string, args ...any) error {
	return &config.Error{File: w.file, Line: n.Line, Column: n.Column, Msg: fmt.Sprintf(format, args...)}
}

// walk checks n, a node at the given depth (counting collections).
func (w *walker) walk(n *yaml.Node, depth int) error {
	w.nodes++
	if w.nodes > w.maxNodes {
		return w.fail(n, tooManyNodes, w.maxNodes)
	}
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		return w.fail(n, "YAML anchors and aliases are not allowed in airlock's files")
	}
	if n.Kind == yaml.ScalarNode {
		return w.scalar(n)
	}
	if n.Kind != yaml.MappingNode && n.Kind != yaml.SequenceNode {
		return nil
	}
	if depth > MaxDepth {
		return w.fail(n, "nested more than %d levels deep; airlock's files are shallow", MaxDepth)
	}
	if n.Kind == yaml.SequenceNode {
		for _, c := range n.Content {
			if err := w.walk(c, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if len(n.Content)/2 > MaxMappingKeys {
		return w.fail(n, "a mapping of more than %d keys; airlock's files are small", MaxMappingKeys)
	}
	var seen map[string]*yaml.Node // for larger mappings; smaller ones are searched
	if len(n.Content) > 32 {
		seen = make(map[string]*yaml.Node, len(n.Content)/2)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		w.keys++
		if w.keys > MaxKeys {
			return w.fail(k, "more than %d keys in the file; airlock's files are small", MaxKeys)
		}
		if err := w.walk(k, depth+1); err != nil {
			return err
		}
		if k.Kind != yaml.ScalarNode {
			return w.fail(k, "a key must be a scalar (a string, number or boolean), not a %s", kindName(k))
		}
		if k.ShortTag() == "!!merge" {
			return w.fail(k, "merge keys (<<) are not allowed in airlock's files; quote the key to mean the string \"<<\"")
		}
		var prev *yaml.Node
		if seen != nil {
			prev = seen[k.Value]
			seen[k.Value] = k
		} else {
			for j := 0; j < i; j += 2 {
				if n.Content[j].Value == k.Value {
					prev = n.Content[j]
					break
				}
			}
		}
		if prev != nil {
			return w.fail(k, "mapping key %q already defined at line %d", k.Value, prev.Line)
		}
		if err := w.walk(n.Content[i+1], depth+1); err != nil {
			return err
		}
	}
	return nil
}

// scalar makes a scalar mean what it says in JSON, the model of every
// airlock file: a date stays the text it is (the decoder would turn it into
// a time.Time, and back into another spelling), and an integer past 64
// bits, which the decoder would round through float64, is an error.
func (w *walker) scalar(n *yaml.Node) error {
	switch n.ShortTag() {
	case "!!timestamp":
		n.Tag = "!!str"
	case "!!float":
		if n.Style == 0 && isInteger(n.Value) {
			return w.fail(n, "the integer %s does not fit in 64 bits and would be rounded; quote it to keep it as a string", n.Value)
		}
	}
	return nil
}

// isInteger reports whether s is a decimal integer: an optional sign, then
// digits (and the underscores YAML 1.1 allows between them).
func isInteger(s string) bool {
	s = strings.TrimLeft(s, "+-")
	return s != "" && strings.Trim(s, "0123456789_") == ""
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "sequence"
	}
	return "node"
}

// toJSON converts a checked tree to the JSON value the schema validator
// reads: map[string]any, []any, string, bool, nil, and json.Number for
// numbers, keeping a number's text when it is a JSON number already (no
// rounding through float64). A nil tree is null.
func toJSON(file string, n *yaml.Node) (any, error) {
	if n == nil {
		return nil, nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			v, err := toJSON(file, n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m[n.Content[i].Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		for i, c := range n.Content {
			v, err := toJSON(file, c)
			if err != nil {
				return nil, err
			}
			s[i] = v
		}
		return s, nil
	}
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, &config.Error{File: file, Line: n.Line, Column: n.Column, Msg: err.Error(), Err: err}
		}
		return b, nil
	case "!!int", "!!float":
		if isJSONNumber(n.Value) {
			return json.Number(n.Value), nil
		}
		var x any
		if err := n.Decode(&x); err != nil {
			return nil, &config.Error{File: file, Line: n.Line, Column: n.Column, Msg: err.Error(), Err: err}
		}
		if f, ok := x.(float64); ok && (math.IsInf(f, 0) || math.IsNaN(f)) {
			return nil, &config.Error{File: file, Line: n.Line, Column: n.Column, Msg: fmt.Sprintf("%s is not representable as JSON", n.Value)}
		}
		b, err := json.Marshal(x)
		if err != nil {
			return nil, &config.Error{File: file, Line: n.Line, Column: n.Column, Msg: fmt.Sprintf("%s is not representable as JSON", n.Value)}
		}
		return json.Number(b), nil
	}
	return n.Value, nil
}

// isJSONNumber reports whether s is a number as RFC 8259 §6 spells it.
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - start
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// lineOf finds the line and column of the value at an RFC 6901 location
// in a checked tree; it falls back to the nearest ancestor that exists,
// and to 1, 1 for an empty document.
func lineOf(root *yaml.Node, pointer string) (int, int) {
	if root == nil {
		return 1, 1
	}
	n := nearest(root, pointer)
	return n.Line, n.Column
}

// nearest is the node at pointer, or its nearest existing ancestor.
func nearest(root *yaml.Node, pointer string) *yaml.Node {
	n := root
	if pointer != "" {
		for _, tok := range strings.Split(pointer[1:], "/") {
			tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
			next := child(n, tok)
			if next == nil {
				break
			}
			n = next
		}
	}
	return n
}

// nodeAt is the node at pointer; nil when there is none.
func nodeAt(root *yaml.Node, pointer string) *yaml.Node {
	n := root
	if pointer == "" || root == nil {
		return n
	}
	for _, tok := range strings.Split(pointer[1:], "/") {
		if n = child(n, strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)); n == nil {
			return nil
		}
	}
	return n
}

// child is the value under key tok of a mapping, or the element at index
// tok of a sequence; nil when there is none.
func child(n *yaml.Node, tok string) *yaml.Node {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == tok {
				return n.Content[i+1]
			}
		}
	case yaml.SequenceNode:
		if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(n.Content) {
			return n.Content[i]
		}
	}
	return nil
}

// columnOn is the column of the first value (not a key) with the given
// tag ("!!seq", "" for any) that starts on line, else of the first value
// there, else of the first key there; 0 when nothing starts there.
func columnOn(root *yaml.Node, line int, tag string) int {
	var value, key int
	var find func(n *yaml.Node, isKey bool) int
	find = func(n *yaml.Node, isKey bool) int {
		if n.Line == line {
			switch {
			case isKey:
				key = cmp.Or(key, n.Column)
			case tag != "" && n.ShortTag() == tag:
				return n.Column
			default:
				value = cmp.Or(value, n.Column)
			}
		}
		for i, c := range n.Content {
			if col := find(c, n.Kind == yaml.MappingNode && i%2 == 0); col != 0 {
				return col
			}
		}
		return 0
	}
	if col := find(root, false); col != 0 {
		return col
	}
	return cmp.Or(value, key)
}
