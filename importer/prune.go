package importer

import (
	"bytes"
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// A large description costs kin-openapi's document model about 40–50
// bytes per byte of JSON (GitHub's 13 MB description: 650–750 MB). An
// import needs one operation and what it reaches, so a JSON description is
// first pruned to that: the operation's path item, the members of
// components (and Swagger 2.0's definitions, parameters, responses) that
// it reaches through "$ref": "#/…" (transitively), and every other
// top-level member but the paths and webhooks of other operations. Only
// the raw bytes of the kept members are held (json.RawMessage), and
// kin-openapi reads the pruned description as it would the whole one. A
// reference the scan cannot follow (an escaped "$ref" name, say) makes
// kin-openapi fail to resolve it; the import then reads the whole
// description instead (ImportOpenAPI).

// keyed are the top-level members whose entries are kept one by one, as
// references reach them; components has kinds, then entries.
var keyed = map[string]bool{"paths": true, "definitions": true, "parameters": true, "responses": true,
	"x-webhooks": true, "webhooks": true}

var refString = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"\$ref"\s*:\s*"(#[^"]*)"`) })

// pruneJSON returns the description cut to the operation named op
// (operationId or "METHOD /path") and what it reaches, and the list of
// every operation (for the error of an unknown one); ok is false when raw
// is not a JSON object of the expected shape or op is not found.
func pruneJSON(raw []byte, op string) (pruned []byte, ops []Operation, ok bool) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, nil, false
	}
	var paths map[string]map[string]json.RawMessage
	if err := json.Unmarshal(top["paths"], &paths); err != nil {
		return nil, nil, false
	}
	keep := ""
	method, p, isPath := strings.Cut(strings.TrimSpace(op), " ")
	for path, item := range paths {
		for m, body := range item {
			if !httpMethods[strings.ToLower(m)] {
				continue
			}
			var o struct {
				OperationID string `json:"operationId"`
			}
			_ = json.Unmarshal(body, &o)
			ops = append(ops, Operation{ID: o.OperationID, Method: strings.ToUpper(m), Path: path})
			if o.OperationID != "" && o.OperationID == op || isPath && strings.EqualFold(m, method) && path == strings.TrimSpace(p) {
				keep = path
			}
		}
	}
	sort.Slice(ops, func(i, j int) bool {
		if ops[i].Path != ops[j].Path {
			return ops[i].Path < ops[j].Path
		}
		return ops[i].Method < ops[j].Method
	})
	if keep == "" {
		return nil, ops, false
	}
	// Decode the keyed members one level (components two) lazily.
	entries := map[string]map[string]json.RawMessage{}
	kinds := map[string]map[string]json.RawMessage{}
	var comps map[string]json.RawMessage
	if c, ok := top["components"]; ok {
		if err := json.Unmarshal(c, &comps); err != nil {
			return nil, ops, false
		}
	}
	out := map[string]any{}
	keptEntries := map[string]map[string]json.RawMessage{}
	keptKinds := map[string]map[string]json.RawMessage{}
	var queue [][]byte
	for k, v := range top {
		switch {
		case k == "paths" || keyed[k] || k == "components":
		default:
			out[k] = v
			queue = append(queue, v)
		}
	}
	itemRaw, _ := json.Marshal(paths[keep])
	keptEntries["paths"] = map[string]json.RawMessage{keep: itemRaw}
	queue = append(queue, itemRaw)
	for len(queue) > 0 {
		b := queue[0]
		queue = queue[1:]
		if !bytes.Contains(b, []byte(`"$ref"`)) {
			continue
		}
		for _, m := range refString().FindAllSubmatch(b, -1) {
			toks := strings.Split(strings.TrimPrefix(string(m[1]), "#/"), "/")
			for i, t := range toks {
				toks[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(t)
			}
			switch {
			case len(toks) >= 3 && toks[0] == "components":
				kind, name := toks[1], toks[2]
				if kinds[kind] == nil {
					var all map[string]json.RawMessage
					if err := json.Unmarshal(comps[kind], &all); err != nil {
						continue
					}
					kinds[kind] = all
				}
				if keptKinds[kind] == nil {
					keptKinds[kind] = map[string]json.RawMessage{}
				}
				if _, done := keptKinds[kind][name]; done {
					continue
				}
				if v, ok := kinds[kind][name]; ok {
					keptKinds[kind][name] = v
					queue = append(queue, v)
				}
			case len(toks) >= 2 && keyed[toks[0]]:
				if entries[toks[0]] == nil {
					var all map[string]json.RawMessage
					if err := json.Unmarshal(top[toks[0]], &all); err != nil {
						continue
					}
					entries[toks[0]] = all
				}
				if keptEntries[toks[0]] == nil {
					keptEntries[toks[0]] = map[string]json.RawMessage{}
				}
				if _, done := keptEntries[toks[0]][toks[1]]; done {
					continue
				}
				if v, ok := entries[toks[0]][toks[1]]; ok {
					keptEntries[toks[0]][toks[1]] = v
					queue = append(queue, v)
				}
			}
		}
	}
	for k, v := range keptEntries {
		out[k] = v
	}
	if comps != nil {
		c := map[string]any{}
		for kind, v := range comps {
			if kept, ok := keptKinds[kind]; ok {
				c[kind] = kept
			} else if kind == "securitySchemes" {
				c[kind] = v
			}
		}
		out["components"] = c
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, ops, false
	}
	return b, ops, true
}

var httpMethods = map[string]bool{"get": true, "put": true, "post": true, "delete": true, "options": true, "head": true, "patch": true, "trace": true}

// yamlJSON converts a YAML description to JSON, so that it is pruned like
// a JSON one (kin-openapi's own YAML reading grows faster than the file:
// 12.5 s for 4 MB). Mappings become objects (keys by their text),
// sequences arrays, scalars what YAML 1.2's core schema makes them
// (timestamps stay strings). An alias is expanded; at most budget nodes
// are made in all (the description's size bounds it, so a billion laughs
// cannot blow it up). ok is false for what it does not convert (a merge
// key, a non-scalar key, a node past the budget): the caller then reads
// the YAML as kin-openapi does.
func yamlJSON(data []byte, budget int) ([]byte, bool) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, false
	}
	n := 0
	var conv func(node *yaml.Node, depth int) (any, bool)
	conv = func(node *yaml.Node, depth int) (any, bool) {
		if n++; n > budget || depth > 512 {
			return nil, false
		}
		switch node.Kind {
		case yaml.AliasNode:
			return conv(node.Alias, depth+1)
		case yaml.MappingNode:
			m := make(map[string]any, len(node.Content)/2)
			for i := 0; i+1 < len(node.Content); i += 2 {
				k := node.Content[i]
				if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
					return nil, false
				}
				v, ok := conv(node.Content[i+1], depth+1)
				if !ok {
					return nil, false
				}
				m[k.Value] = v
			}
			return m, true
		case yaml.SequenceNode:
			l := make([]any, 0, len(node.Content))
			for _, c := range node.Content {
				v, ok := conv(c, depth+1)
				if !ok {
					return nil, false
				}
				l = append(l, v)
			}
			return l, true
		case yaml.ScalarNode:
			switch node.ShortTag() {
			case "!!str", "!!timestamp", "!!binary":
				return node.Value, true
			case "!!null":
				return nil, true
			case "!!bool":
				var b bool
				return b, node.Decode(&b) == nil
			case "!!int", "!!float":
				var f any
				if node.Decode(&f) != nil {
					return nil, false
				}
				b, err := json.Marshal(f)
				if err != nil {
					return nil, false // .inf, .nan: not JSON
				}
				return json.RawMessage(b), true
			}
		}
		return nil, false
	}
	v, ok := conv(doc.Content[0], 0)
	if !ok {
		return nil, false
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	return b, true
}
