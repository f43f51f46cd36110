package importer

import (
	"fmt"
	"sort"
	"strings"

	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/jsonpointer"
)

// Dialects To2020 recognises from a document's $schema.
const (
	Draft04     = "draft-04"
	Draft06     = "draft-06"
	Draft07     = "draft-07"
	Draft201909 = "2019-09"
	Draft202012 = "2020-12"
)

// DialectOf names the JSON Schema dialect a document's $schema declares:
// one of the Draft* constants, "" when $schema is absent, or the $schema
// text itself when it names none of them.
func DialectOf(doc map[string]any) string {
	s, ok := doc["$schema"].(string)
	if !ok {
		return ""
	}
	for _, d := range []string{Draft04, Draft06, Draft07, Draft201909, Draft202012} {
		if strings.Contains(s, d) || d == Draft04 && strings.Contains(s, "draft-03") {
			return d
		}
	}
	return s
}

// To2020 converts a JSON Schema document into the 2020-12 the gate's
// strict loader reads, returning a new document and a note per change the
// owner should know of. An older dialect (draft-04, -06, -07, 2019-09, or
// no $schema at all) is rewritten:
//
//   - definitions → $defs, and every $ref token "definitions" → "$defs";
//   - items as an array → prefixItems, additionalItems → items (beside an
//     array items; alone it is dropped, as older dialects ignore it);
//   - dependencies → dependentRequired (a list of names) or
//     dependentSchemas (a schema);
//   - draft-04's boolean exclusiveMinimum/exclusiveMaximum → the number
//     form (true moves minimum/maximum's value; false is dropped);
//   - $recursiveRef → $dynamicRef, $recursiveAnchor → $dynamicAnchor;
//   - $schema and $id (draft-04's id) are dropped;
//   - in draft-04, -06 and -07 a $ref's siblings are ignored by the dialect, so
//     the ones that are not annotations are dropped (noted).
//
// In every dialect, 2020-12 included, keywords 2020-12 does not define
// (x-* extensions, OpenAPI's nullable, example, …) are dropped and counted
// in a note, and a format the gate does not assert is dropped with a note
// naming it (the strict loader refuses both). A 2020-12 document with
// neither comes back equal to doc.
func To2020(doc map[string]any) (map[string]any, []string) {
	d := DialectOf(doc)
	c := &dialectConverter{old: d != Draft202012, draft04: d == Draft04, preRefSiblings: d == Draft04 || d == Draft06 || d == Draft07}
	out, _ := c.schema(doc, "").(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	if c.old {
		delete(out, "$schema")
		delete(out, "$id")
		if d != "" {
			c.notes = append(c.notes, fmt.Sprintf("the outputSchema declares JSON Schema %s; converted to 2020-12 (docs/import.md, \"Dialect\")", d))
		}
	}
	if len(c.unknown) > 0 {
		sort.Strings(c.unknown)
		shown := c.unknown
		if len(shown) > 8 {
			shown = append(shown[:8:8], fmt.Sprintf("… %d more", len(c.unknown)-8))
		}
		c.notes = append(c.notes, fmt.Sprintf("dropped %d keyword(s) JSON Schema 2020-12 does not define (the gate would refuse them): %s", len(c.unknown), strings.Join(shown, ", ")))
	}
	return out, c.notes
}

type dialectConverter struct {
	old, draft04, preRefSiblings bool
	unknown                      []string
	notes                        []string
}

// schema converts one schema at pointer at (booleans and non-objects pass).
func (c *dialectConverter) schema(v any, at string) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	if c.preRefSiblings {
		if _, ok := m["$ref"].(string); ok && !annotationsOnly(m) {
			var dropped []string
			for k := range m {
				if k != "$ref" && !annotationsOnly(map[string]any{k: nil}) && k != "definitions" && k != "$schema" && k != "$id" {
					dropped = append(dropped, k)
				}
			}
			if len(dropped) > 0 {
				sort.Strings(dropped)
				c.notes = append(c.notes, fmt.Sprintf("%s: dropped %s beside $ref (the declared dialect ignores a $ref's siblings)", orRoot(at), strings.Join(dropped, ", ")))
				keep := map[string]any{}
				for k, x := range m {
					if !contains(dropped, k) {
						keep[k] = x
					}
				}
				m = keep
			}
		}
	}
	for k, x := range m {
		here := at + "/" + jsonpointer.EscapeToken(k)
		if c.old {
			switch k {
			case "$schema", "$id":
				if at == "" {
					continue
				}
				// A nested $id would rebase refs: not followed.
				c.unknown = append(c.unknown, here)
				continue
			case "id":
				if c.draft04 {
					continue
				}
			case "definitions":
				out["$defs"] = c.schemaMap(x, at+"/$defs")
				continue
			case "$ref":
				if s, ok := x.(string); ok {
					out["$ref"] = rewriteRef(s)
					continue
				}
			case "$recursiveRef":
				out["$dynamicRef"] = x
				continue
			case "$recursiveAnchor":
				// 2019-09's boolean anchor has no 2020-12 spelling without a
				// name; $dynamicAnchor wants one.
				c.unknown = append(c.unknown, here)
				continue
			case "items":
				if arr, ok := x.([]any); ok {
					out["prefixItems"] = c.schemaArray(arr, at+"/prefixItems")
					if ai, ok := m["additionalItems"]; ok {
						out["items"] = c.schema(ai, at+"/items")
					}
					continue
				}
			case "additionalItems":
				if _, ok := m["items"].([]any); !ok {
					// Without an array items, older dialects ignore it.
					c.notes = append(c.notes, fmt.Sprintf("%s: dropped additionalItems (no array items beside it, so the declared dialect ignores it)", here))
				}
				continue
			case "dependencies":
				deps, ok := x.(map[string]any)
				if !ok {
					c.unknown = append(c.unknown, here)
					continue
				}
				for name, dep := range deps {
					if list, ok := dep.([]any); ok {
						dr, _ := out["dependentRequired"].(map[string]any)
						if dr == nil {
							dr = map[string]any{}
							out["dependentRequired"] = dr
						}
						dr[name] = list
						continue
					}
					ds, _ := out["dependentSchemas"].(map[string]any)
					if ds == nil {
						ds = map[string]any{}
						out["dependentSchemas"] = ds
					}
					ds[name] = c.schema(dep, at+"/dependentSchemas/"+jsonpointer.EscapeToken(name))
				}
				continue
			case "exclusiveMinimum", "exclusiveMaximum":
				if b, ok := x.(bool); ok {
					bound := "minimum"
					if k == "exclusiveMaximum" {
						bound = "maximum"
					}
					if n, has := m[bound]; b && has {
						out[k] = n
					}
					continue
				}
			case "minimum", "maximum":
				if b, _ := m["exclusive"+strings.ToUpper(k[:1])+k[1:]].(bool); b {
					continue // moved to the exclusive keyword
				}
			}
		}
		if !schema.IsKeyword(k) {
			c.unknown = append(c.unknown, here)
			continue
		}
		switch k {
		case "format":
			if f, ok := x.(string); ok && !contains(schema.Formats(), f) {
				c.notes = append(c.notes, fmt.Sprintf("%s: dropped format %q (the gate asserts only %s; bound the value with pattern or maxLength instead)", here, f, strings.Join(schema.Formats(), ", ")))
				continue
			}
			out[k] = x
		case "items", "contains", "additionalProperties", "propertyNames", "if", "then", "else", "not",
			"unevaluatedItems", "unevaluatedProperties", "contentSchema":
			out[k] = c.schema(x, here)
		case "allOf", "anyOf", "oneOf", "prefixItems":
			if arr, ok := x.([]any); ok {
				out[k] = c.schemaArray(arr, here)
			} else {
				out[k] = x
			}
		case "properties", "patternProperties", "$defs", "dependentSchemas":
			out[k] = c.schemaMap(x, here)
		default:
			out[k] = x
		}
	}
	return out
}

func (c *dialectConverter) schemaArray(arr []any, at string) []any {
	out := make([]any, len(arr))
	for i, s := range arr {
		out[i] = c.schema(s, fmt.Sprintf("%s/%d", at, i))
	}
	return out
}

func (c *dialectConverter) schemaMap(v any, at string) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	for k, s := range m {
		out[k] = c.schema(s, at+"/"+jsonpointer.EscapeToken(k))
	}
	return out
}

// rewriteRef rewrites the "definitions" tokens of a $ref's fragment.
func rewriteRef(ref string) string {
	i := strings.IndexByte(ref, '#')
	if i < 0 {
		return ref
	}
	toks := strings.Split(ref[i+1:], "/")
	for j, t := range toks {
		if t == "definitions" && (j == 1 || j > 1 && toks[j-1] != "properties" && toks[j-1] != "$defs" && toks[j-1] != "definitions") {
			toks[j] = "$defs"
		}
	}
	return ref[:i+1] + strings.Join(toks, "/")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
