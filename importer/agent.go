package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/airlockdev/airlock/jsonpointer"
)

// DefaultMaxLength bounds, in the agent-facing schema, a projected string
// whose upstream schema gives no maxLength, enum or const (code points):
// what reaches the agent is bounded, and `airlock lint` finds no unbounded
// projected text. Tighten it to what the field really holds.
const DefaultMaxLength = 4096

// MaxAgentNodes bounds the schema objects an agent-facing schema may copy
// from the upstream schemas (each $ref target is copied once, under
// $defs): a projected field that reaches more is an error (ErrAgentTooLarge).
const MaxAgentNodes = 20000

// ErrAgentTooLarge is wrapped by AgentSchema's error when the projected
// fields' schemas reach more than MaxAgentNodes schema objects: project
// narrower fields (their scalar members).
var ErrAgentTooLarge = errors.New("the agent-facing schema would be too large")

// AgentSchema derives the closed agent-facing schema of a projection from
// the upstream schema at file's root: an object with exactly the agent
// fields (additionalProperties false), each field's schema a copy of the
// projected member's schema, an array of it per "*" of the pointer. The
// copy is self-contained: each $ref target is copied once under $defs (so
// the size is at most the size of the schemas reached, a recursive schema
// stays recursive, at most MaxAgentNodes schema objects). Every value that
// may be an object is closed with unevaluatedProperties false where the
// value sits (a field, a property, an array's items), never inside an
// allOf/anyOf/oneOf branch, whose siblings may name other members; every
// string without maxLength, enum or const is bounded by DefaultMaxLength.
// A field is required when every member on its pointer is.
func (s Schemas) AgentSchema(file string, fields []Field) (map[string]any, error) {
	c := &agentCopier{s: s, defs: map[string]any{}, names: map[string]string{}, used: map[string]bool{}}
	props := map[string]any{}
	var required []any
	for _, f := range fields {
		sch, req, err := c.field(file, f.Pointer)
		if err != nil {
			return nil, fmt.Errorf("agent field %s (%s): %w", f.Name, f.Pointer, err)
		}
		props[f.Name] = sch
		if req {
			required = append(required, f.Name)
		}
	}
	out := map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"type":                 "object",
		"additionalProperties": false,
		"properties":           props,
	}
	if len(required) > 0 {
		out["required"] = required
	}
	if len(c.defs) > 0 {
		out["$defs"] = c.defs
	}
	return out, nil
}

// agentCopier copies upstream schemas into one agent-facing schema.
type agentCopier struct {
	s     Schemas
	defs  map[string]any    // $defs name → copied schema
	names map[string]string // file#ptr → $defs name
	used  map[string]bool   // $defs names taken
	nodes int
}

// field returns the agent schema of the member at pointer p and whether
// the projection always yields it.
func (c *agentCopier) field(file, p string) (any, bool, error) {
	ptr, err := jsonpointer.Parse(p)
	if err != nil {
		return nil, false, err
	}
	at := []loc{{file: file, ptr: "", node: c.s[file]}}
	required, stars := true, 0
	for _, t := range ptr {
		var next []loc
		reqAll := true
		for _, l := range at {
			found, req, err := c.s.member(l, t)
			if err != nil {
				return nil, false, err
			}
			next = append(next, found...)
			reqAll = reqAll && req
		}
		if t == "*" {
			stars++
		} else {
			required = required && reqAll
		}
		if len(next) == 0 {
			return nil, false, fmt.Errorf("the upstream schema declares no member %q on the way", t)
		}
		if at, err = c.s.distinct(next); err != nil {
			return nil, false, err
		}
	}
	// Branches that declare the member alike give one schema.
	var alts []any
	seen := map[string]bool{}
	for _, l := range at {
		cp, err := c.copy(l, true, 0)
		if err != nil {
			return nil, false, err
		}
		key, err := json.Marshal(cp)
		if err != nil {
			return nil, false, err
		}
		if !seen[string(key)] {
			seen[string(key)] = true
			alts = append(alts, cp)
		}
	}
	sch := alts[0]
	if len(alts) > 1 {
		sch = map[string]any{"anyOf": alts}
	}
	for i := 0; i < stars; i++ {
		sch = map[string]any{"type": "array", "items": sch}
	}
	return sch, required, nil
}

// The subschema keywords by where their value sits: a value position holds
// the schema of a value of its own (closed there when it may be an
// object); a branch position applies beside others to the same value.
var (
	valueOne   = []string{"items", "additionalProperties", "contains", "unevaluatedItems", "contentSchema"}
	valueList  = []string{"prefixItems"}
	valueMap   = []string{"properties", "patternProperties"}
	branchOne  = []string{"not", "if", "then", "else", "propertyNames", "unevaluatedProperties"}
	branchList = []string{"allOf", "anyOf", "oneOf"}
	branchMap  = []string{"dependentSchemas"}
)

// maxCopyDepth bounds the nesting of one copied schema.
const maxCopyDepth = 256

// copy copies the schema at l; value says it sits in a value position.
func (c *agentCopier) copy(l loc, value bool, depth int) (any, error) {
	m, ok := l.node.(map[string]any)
	if !ok {
		return l.node, nil // true or false
	}
	if c.nodes++; c.nodes > MaxAgentNodes {
		return nil, fmt.Errorf("%w: more than %d schema objects reached (at %s#%s); project narrower fields", ErrAgentTooLarge, MaxAgentNodes, l.file, l.ptr)
	}
	if depth > maxCopyDepth {
		return nil, fmt.Errorf("%w: schemas nest past %d levels (at %s#%s)", ErrAgentTooLarge, maxCopyDepth, l.file, l.ptr)
	}
	sub := func(k string, v any, value bool) (any, error) {
		return c.copy(loc{l.file, l.ptr + "/" + k, v}, value, depth+1)
	}
	out := map[string]any{}
	for k, v := range m {
		var err error
		switch {
		case k == "$ref":
			t, terr := c.s.target(l.file, v.(string))
			if terr != nil {
				return nil, terr
			}
			name, derr := c.def(t, depth)
			if derr != nil {
				return nil, derr
			}
			out[k] = "#/$defs/" + jsonpointer.EscapeToken(name)
		case k == "$defs" || k == "$schema" || k == "$id" || k == "$anchor" || k == "examples" || k == "default":
		case slices.Contains(valueOne, k):
			out[k], err = sub(k, v, true)
		case slices.Contains(branchOne, k):
			out[k], err = sub(k, v, false)
		case slices.Contains(valueList, k), slices.Contains(branchList, k):
			list, _ := v.([]any)
			cs := make([]any, len(list))
			for i, x := range list {
				if cs[i], err = sub(fmt.Sprintf("%s/%d", k, i), x, slices.Contains(valueList, k)); err != nil {
					break
				}
			}
			out[k] = cs
		case slices.Contains(valueMap, k), slices.Contains(branchMap, k):
			mm, _ := v.(map[string]any)
			cm := make(map[string]any, len(mm))
			for name, x := range mm {
				if cm[name], err = sub(k+"/"+jsonpointer.EscapeToken(name), x, slices.Contains(valueMap, k)); err != nil {
					break
				}
			}
			out[k] = cm
		default:
			out[k] = v
		}
		if err != nil {
			return nil, err
		}
	}
	bound(out)
	if value {
		closeValue(out)
	}
	return out, nil
}

// def returns the $defs name of the copy of the schema at t, copying it
// the first time.
func (c *agentCopier) def(t loc, depth int) (string, error) {
	key := t.file + "#" + t.ptr
	if name, ok := c.names[key]; ok {
		return name, nil
	}
	base := strings.TrimSuffix(path.Base(t.file), ".schema.json")
	base = strings.TrimSuffix(base, ".json")
	if t.ptr != "" {
		base += strings.ReplaceAll(t.ptr, "/", "-")
	}
	base = strings.Trim(componentName().ReplaceAllString(base, "-"), "-.")
	if base == "" {
		base = "def"
	}
	name := base
	for i := 2; c.used[name]; i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	c.used[name], c.names[key] = true, name
	cp, err := c.copy(t, false, depth+1)
	if err != nil {
		return "", err
	}
	c.defs[name] = cp
	return name, nil
}

// bound bounds a string schema without maxLength, enum or const.
func bound(m map[string]any) {
	_, hasEnum := m["enum"]
	_, hasConst := m["const"]
	if slices.Contains(typesOf(m), "string") && m["maxLength"] == nil && !hasEnum && !hasConst {
		m["maxLength"] = DefaultMaxLength
	}
}

// closeValue closes the schema of a value that may be an object (its type
// allows one, or it does not say) unless it already says how other
// members go.
func closeValue(m map[string]any) {
	ts := typesOf(m)
	if len(ts) > 0 && !slices.Contains(ts, "object") {
		return
	}
	if len(ts) == 0 {
		_, hasProps := m["properties"]
		_, composed := m["$ref"]
		for _, k := range branchList {
			if _, ok := m[k]; ok {
				composed = true
			}
		}
		if !hasProps && !composed {
			return // says nothing about objects: any value
		}
	}
	if m["additionalProperties"] != nil || m["unevaluatedProperties"] != nil || m["patternProperties"] != nil {
		return
	}
	m["unevaluatedProperties"] = false
}
