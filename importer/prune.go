package importer

import (
	"bytes"
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"sync"
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
