package schemadiff

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/reports"
)

// Where a schema change is written: a change's NewPointer is a keyword
// location from the new schema's root through any $ref (JSON Schema Core
// 2020-12 §12.3.1), so it may leave the root file for a sibling or a
// shared component. place follows it through the compiled schemas to a
// file and a JSON Pointer in that file, then to the line and column of
// the longest prefix of that pointer the file holds (a removed member's
// NewPointer names the enclosing schema, which the file has). All changes
// of one file are placed in one pass over it (strictjson.PointerOffsets),
// so placing costs each file's size once plus the pointers' length; a
// second pass, over the prefixes of the pointers the file lacks, places
// those at their nearest enclosing value.

// place sets NewFile, NewLine and NewColumn of every schema change of
// changes (a change without File) from the new schema n.
func (n *Schema) place(changes []reports.Change) {
	if n == nil || n.root == nil || n.dir == nil {
		return
	}
	type want struct {
		change int
		toks   []string
	}
	byName := map[string][]want{}
	var names []string
	for i := range changes {
		if changes[i].File != "" {
			continue
		}
		doc, toks, ok := n.resolve(changes[i].NewPointer)
		if !ok {
			continue
		}
		pos, ok := n.dir.Locate(doc+"#", "")
		if !ok {
			continue
		}
		changes[i].NewFile = pos.File
		if _, seen := byName[pos.Name]; !seen {
			names = append(names, pos.Name)
		}
		byName[pos.Name] = append(byName[pos.Name], want{change: i, toks: toks})
	}
	for _, name := range names {
		raw := n.dir.Bytes(name)
		if raw == nil {
			continue
		}
		ws := byName[name]
		// First pass: the pointers themselves; the file nearly always has
		// them (a removed member's NewPointer already names the enclosing
		// schema). Second pass, for those it lacks only: every prefix,
		// the longest found wins.
		ptrs := make([]string, len(ws))
		for i, w := range ws {
			ptrs[i] = jsonpointer.Pointer(w.toks).String()
		}
		offs := strictjson.PointerOffsets(raw, ptrs)
		var at []int64
		var which []int
		var missed []want
		var prefixes []string
		for i, w := range ws {
			if off, ok := offs[ptrs[i]]; ok {
				at, which = append(at, off), append(which, w.change)
				continue
			}
			missed = append(missed, w)
			for k := 0; k < len(w.toks); k++ {
				prefixes = append(prefixes, jsonpointer.Pointer(w.toks[:k]).String())
			}
		}
		if len(missed) > 0 {
			offs = strictjson.PointerOffsets(raw, prefixes)
			for _, w := range missed {
				for k := len(w.toks) - 1; k >= 0; k-- {
					if off, ok := offs[jsonpointer.Pointer(w.toks[:k]).String()]; ok {
						at, which = append(at, off), append(which, w.change)
						break
					}
				}
			}
		}
		strictjson.LineColumns(raw, at, func(j, line, col int) { changes[which[j]].NewLine, changes[which[j]].NewColumn = line, col })
	}
}

// resolve follows keyword location kw (a JSON Pointer from the root,
// through $ref) through the compiled schemas: it returns the document URL
// and the JSON Pointer tokens, in that document, of the place kw names.
// Tokens past the last subschema it can follow are kept as written (a
// keyword and its value's members); a $ref it cannot follow ends the walk
// at the $ref keyword.
func (n *Schema) resolve(kw string) (doc string, toks []string, ok bool) {
	p, err := jsonpointer.Parse(kw)
	if err != nil {
		return "", nil, false
	}
	cur := n.root
	doc, toks = splitLoc(cur.Location)
	for i := 0; i < len(p); {
		next, used := subschema(cur, p[i:])
		if next != nil && next.Location != "" {
			cur, i = next, i+used
			doc, toks = splitLoc(next.Location)
			continue
		}
		if p[i] == "$ref" || p[i] == "$dynamicRef" {
			return doc, append(toks, p[i]), true
		}
		return doc, append(toks, p[i:]...), true
	}
	return doc, toks, true
}

// splitLoc splits a compiled schema's Location into its document URL and
// the tokens of its (percent-encoded) fragment.
func splitLoc(loc string) (string, []string) {
	doc, frag, _ := strings.Cut(loc, "#")
	if u, err := url.PathUnescape(frag); err == nil {
		frag = u
	}
	p, err := jsonpointer.Parse(frag)
	if err != nil {
		return doc, nil
	}
	return doc, slices.Clone([]string(p))
}

// subschema is the subschema of s that the leading tokens of toks name
// (an applicator keyword and, for a map or an array, its member), and how
// many tokens it used; nil when toks does not start with one.
func subschema(s *jsonschema.Schema, toks []string) (*jsonschema.Schema, int) {
	if s == nil || len(toks) == 0 {
		return nil, 0
	}
	index := func(list []*jsonschema.Schema) (*jsonschema.Schema, int) {
		if len(toks) < 2 {
			return nil, 0
		}
		i, err := strconv.Atoi(toks[1])
		if err != nil || i < 0 || i >= len(list) {
			return nil, 0
		}
		return list[i], 2
	}
	one := func(x *jsonschema.Schema) (*jsonschema.Schema, int) { return x, 1 }
	switch toks[0] {
	case "$ref":
		return one(s.Ref)
	case "$dynamicRef":
		if s.DynamicRef != nil {
			return one(s.DynamicRef.Ref)
		}
	case "not":
		return one(s.Not)
	case "if":
		return one(s.If)
	case "then":
		return one(s.Then)
	case "else":
		return one(s.Else)
	case "contains":
		return one(s.Contains)
	case "propertyNames":
		return one(s.PropertyNames)
	case "unevaluatedItems":
		return one(s.UnevaluatedItems)
	case "unevaluatedProperties":
		return one(s.UnevaluatedProperties)
	case "contentSchema":
		return one(s.ContentSchema)
	case "allOf":
		return index(s.AllOf)
	case "anyOf":
		return index(s.AnyOf)
	case "oneOf":
		return index(s.OneOf)
	case "prefixItems":
		return index(s.PrefixItems)
	case "items":
		if s.Items2020 != nil {
			return one(s.Items2020)
		}
		switch it := s.Items.(type) {
		case *jsonschema.Schema:
			return one(it)
		case []*jsonschema.Schema:
			return index(it)
		}
	case "additionalItems":
		if x, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
			return one(x)
		}
	case "additionalProperties":
		if x, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
			return one(x)
		}
	case "properties":
		if len(toks) > 1 {
			return s.Properties[toks[1]], 2
		}
	case "dependentSchemas":
		if len(toks) > 1 {
			return s.DependentSchemas[toks[1]], 2
		}
	case "patternProperties":
		if len(toks) > 1 {
			for re, x := range s.PatternProperties {
				if re.String() == toks[1] {
					return x, 2
				}
			}
		}
	}
	return nil, 0
}
