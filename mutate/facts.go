package mutate

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/introspect"
	"github.com/airlockdev/airlock/jsonpointer"
)

// facts are what a contract's upstream schema says about one instance
// location, gathered from every subschema that may apply there (through
// properties, items, prefixItems, $ref, allOf, anyOf, oneOf, if/then/else).
// The mutation engine uses them to aim mutants (an enum's near value, a
// string just past maxLength, a number just past maximum) and to know a
// oneOf's discriminator; they never decide a verdict.
type facts struct {
	enums     []string // string values of enum keywords
	consts    []string // string values of const keywords (one per branch)
	maxLength int      // smallest maxLength; -1 when none
	maximum   *json.Number
	minimum   *json.Number
	dateTime  bool // format: date-time
}

// schemaDocs resolves $refs within a contract's schema files, as the
// contract loaded them (read-only, safe to share between goroutines).
type schemaDocs struct {
	c *gate.Contract
}

func newSchemaDocs(c *gate.Contract) *schemaDocs { return &schemaDocs{c: c} }

func (d *schemaDocs) doc(file string) any { return introspect.SchemaDocument(d.c, filepath.Base(file)) }

// schemaRef is a subschema and the file it lives in (for relative $refs).
type schemaRef struct {
	file string
	s    map[string]any
}

// expand follows $ref and the applicators that apply to the same instance.
func (d *schemaDocs) expand(in []schemaRef) []schemaRef {
	var out []schemaRef
	var visit func(r schemaRef, depth int)
	visit = func(r schemaRef, depth int) {
		if r.s == nil || depth > 32 {
			return
		}
		out = append(out, r)
		if ref, ok := r.s["$ref"].(string); ok {
			visit(d.resolve(r.file, ref), depth+1)
		}
		for _, k := range []string{"allOf", "anyOf", "oneOf"} {
			if arr, ok := r.s[k].([]any); ok {
				for _, b := range arr {
					if m, ok := b.(map[string]any); ok {
						visit(schemaRef{r.file, m}, depth+1)
					}
				}
			}
		}
		for _, k := range []string{"then", "else"} {
			if m, ok := r.s[k].(map[string]any); ok {
				visit(schemaRef{r.file, m}, depth+1)
			}
		}
	}
	for _, r := range in {
		visit(r, 0)
	}
	return out
}

// resolve finds a $ref target: "#/json/pointer", "file.json" or
// "file.json#/pointer" inside the contract folder. Other refs give nil.
func (d *schemaDocs) resolve(from, ref string) schemaRef {
	file, frag, _ := strings.Cut(ref, "#")
	if file == "" {
		file = from
	} else if strings.Contains(file, "://") {
		return schemaRef{}
	}
	root := d.doc(file)
	p, err := jsonpointer.Parse(frag)
	if err != nil {
		return schemaRef{}
	}
	v, ok := p.Lookup(root)
	if !ok {
		return schemaRef{}
	}
	m, _ := v.(map[string]any)
	return schemaRef{file, m}
}

// at gathers the facts for an instance location in a schema file.
func (d *schemaDocs) at(file string, loc []string) facts {
	root, _ := d.doc(file).(map[string]any)
	cur := d.expand([]schemaRef{{file, root}})
	for _, tok := range loc {
		var next []schemaRef
		for _, r := range cur {
			if props, ok := r.s["properties"].(map[string]any); ok {
				if m, ok := props[tok].(map[string]any); ok {
					next = append(next, schemaRef{r.file, m})
				}
			}
			if i, err := strconv.Atoi(tok); err == nil {
				if pre, ok := r.s["prefixItems"].([]any); ok && i < len(pre) {
					if m, ok := pre[i].(map[string]any); ok {
						next = append(next, schemaRef{r.file, m})
					}
				} else if m, ok := r.s["items"].(map[string]any); ok {
					next = append(next, schemaRef{r.file, m})
				}
			}
		}
		cur = d.expand(next)
	}
	f := facts{maxLength: -1}
	for _, r := range cur {
		if arr, ok := r.s["enum"].([]any); ok {
			for _, e := range arr {
				if s, ok := e.(string); ok {
					f.enums = append(f.enums, s)
				}
			}
		}
		if s, ok := r.s["const"].(string); ok {
			f.consts = append(f.consts, s)
		}
		if n, ok := r.s["maxLength"].(json.Number); ok {
			if v, err := strconv.Atoi(string(n)); err == nil && (f.maxLength < 0 || v < f.maxLength) {
				f.maxLength = v
			}
		}
		for k, dst := range map[string]**json.Number{"maximum": &f.maximum, "exclusiveMaximum": &f.maximum, "minimum": &f.minimum, "exclusiveMinimum": &f.minimum} {
			if n, ok := r.s[k].(json.Number); ok && *dst == nil {
				n := n
				*dst = &n
			}
		}
		if r.s["format"] == "date-time" {
			f.dateTime = true
		}
	}
	return f
}
