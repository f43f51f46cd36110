package importer

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/semantic"
)

// Schemas is a set of JSON Schema 2020-12 documents as decoded JSON
// (map[string]any, []any, …), by slash-separated path
// ("schemas/<tool>/upstream.v1.schema.json",
// "schemas/_components/<api>/<version>/<name>.schema.json"). A $ref is
// resolved as a relative URI reference against its document's path, with
// an optional RFC 6901 fragment; nothing else is reached.
type Schemas map[string]any

// loc is one schema inside a Schemas set: its document, its JSON Pointer
// in it, and the value there.
type loc struct {
	file, ptr string
	node      any
}

// maxRefHops bounds a chain of $ref-only schemas.
const maxRefHops = 64

// target resolves ref, written in file, to a location.
func (s Schemas) target(file, ref string) (loc, error) {
	u, err := url.Parse(ref)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return loc{}, fmt.Errorf("%s: $ref %q: only relative references are followed", file, ref)
	}
	f := file
	if u.Path != "" {
		f = path.Join(path.Dir(file), u.Path)
	}
	doc, ok := s[f]
	if !ok {
		return loc{}, fmt.Errorf("%s: $ref %q: no document %s", file, ref, f)
	}
	p, err := jsonpointer.Parse(u.Fragment)
	if err != nil {
		return loc{}, fmt.Errorf("%s: $ref %q: %w", file, ref, err)
	}
	v, ok := p.Lookup(doc)
	if !ok {
		return loc{}, fmt.Errorf("%s: $ref %q: nothing at #%s in %s", file, ref, u.Fragment, f)
	}
	return loc{file: f, ptr: p.String(), node: v}, nil
}

// refOf returns the node's $ref, if it has one.
func refOf(node any) (string, bool) {
	m, ok := node.(map[string]any)
	if !ok {
		return "", false
	}
	r, ok := m["$ref"].(string)
	return r, ok
}

// member finds where the schema at l declares the member named token
// (properties, or additionalProperties when no properties entry names it)
// or, for token "*", the items of an array, following $ref, allOf, anyOf
// and oneOf. It returns every declaration found and whether the member is
// required at l (required by l itself or an allOf part, or by every
// branch of an anyOf/oneOf).
//
// Each schema is walked once (a schema reached again answers from memory),
// so the work is linear in the schemas reached, whatever the sharing.
func (s Schemas) member(l loc, token string) (found []loc, required bool, err error) {
	memo := map[string]bool{}
	seen := map[string]bool{}
	add := func(d loc) {
		if k := d.file + "#" + d.ptr; !seen[k] {
			seen[k] = true
			found = append(found, d)
		}
	}
	var walk func(l loc, depth int) (bool, error)
	walk = func(l loc, depth int) (bool, error) {
		if depth > maxRefHops {
			return false, fmt.Errorf("%s#%s: schemas nest or refer past %d levels", l.file, l.ptr, maxRefHops)
		}
		key := l.file + "#" + l.ptr
		if r, ok := memo[key]; ok {
			return r, nil
		}
		memo[key] = false // while it is walked: a loop requires nothing
		m, ok := l.node.(map[string]any)
		if !ok {
			return false, nil
		}
		req := false
		defer func() { memo[key] = req }()
		if token == "*" {
			if it, ok := m["items"]; ok {
				add(loc{l.file, l.ptr + "/items", it})
			}
		} else {
			if props, ok := m["properties"].(map[string]any); ok {
				if p, ok := props[token]; ok {
					add(loc{l.file, l.ptr + "/properties/" + jsonpointer.EscapeToken(token), p})
				}
			}
			if r, ok := m["required"].([]any); ok && slices.Contains(r, any(token)) {
				req = true
			}
		}
		if ref, ok := refOf(m); ok {
			t, err := s.target(l.file, ref)
			if err != nil {
				return false, err
			}
			r, err := walk(t, depth+1)
			if err != nil {
				return false, err
			}
			req = req || r
		}
		if all, ok := m["allOf"].([]any); ok {
			for i, sub := range all {
				r, err := walk(loc{l.file, fmt.Sprintf("%s/allOf/%d", l.ptr, i), sub}, depth+1)
				if err != nil {
					return false, err
				}
				req = req || r
			}
		}
		for _, kw := range []string{"anyOf", "oneOf"} {
			if alts, ok := m[kw].([]any); ok && len(alts) > 0 {
				every := true
				for i, sub := range alts {
					r, err := walk(loc{l.file, fmt.Sprintf("%s/%s/%d", l.ptr, kw, i), sub}, depth+1)
					if err != nil {
						return false, err
					}
					every = every && r
				}
				req = req || every
			}
		}
		return req, nil
	}
	required, err = walk(l, 0)
	if err == nil && len(found) == 0 && token != "*" {
		// Not named: additionalProperties, when it is a schema, is the member's.
		if m, ok := l.node.(map[string]any); ok {
			if ap, ok := m["additionalProperties"].(map[string]any); ok {
				add(loc{l.file, l.ptr + "/additionalProperties", ap})
			}
		}
	}
	return found, required, err
}

// MaxDeclarations bounds the places one member on a projected pointer may
// be declared in (through allOf, anyOf and oneOf branches).
const MaxDeclarations = 1000

// distinct returns the declarations ls with $ref-only schemas followed and
// repeats dropped: ten branches that all refer to one schema are one
// declaration, so the walk down a pointer stays linear in the schemas it
// reaches. More than MaxDeclarations is an error.
func (s Schemas) distinct(ls []loc) ([]loc, error) {
	seen := map[string]bool{}
	var out []loc
	for _, l := range ls {
		d, err := s.deref(l)
		if err != nil {
			return nil, err
		}
		if k := d.file + "#" + d.ptr; !seen[k] {
			seen[k] = true
			out = append(out, d)
		}
	}
	if len(out) > MaxDeclarations {
		return nil, fmt.Errorf("%w: the member is declared in %d places (at most %d); project narrower fields", ErrAgentTooLarge, len(out), MaxDeclarations)
	}
	return out, nil
}

// deref follows a chain of $ref-only schemas (a $ref with no other
// keyword that applies) from l.
func (s Schemas) deref(l loc) (loc, error) {
	for i := 0; i < maxRefHops; i++ {
		ref, ok := refOf(l.node)
		if !ok || len(l.node.(map[string]any)) > 1 && !annotationsOnly(l.node.(map[string]any)) {
			return l, nil
		}
		t, err := s.target(l.file, ref)
		if err != nil {
			return l, err
		}
		l = t
	}
	return l, fmt.Errorf("%s#%s: a chain of more than %d $refs", l.file, l.ptr, maxRefHops)
}

// annotationsOnly reports whether a $ref's siblings are all annotations.
func annotationsOnly(m map[string]any) bool {
	for k := range m {
		switch k {
		case "$ref", "description", "title", "deprecated", "readOnly", "writeOnly", "$comment", "default", "examples":
		default:
			return false
		}
	}
	return true
}

// scalarTypes are the JSON types a default projection copies.
var scalarTypes = []string{"string", "integer", "number", "boolean", "null"}

// typesOf returns the types a schema (after deref) allows, as far as its
// own "type", "const" and "enum" say; nil when it does not say.
func typesOf(m map[string]any) []string {
	switch t := m["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// isScalar reports whether every value the schema at l admits is a
// scalar, as its type (or, through anyOf/oneOf of a null and one other
// schema, the other's type) says.
func (s Schemas) isScalar(l loc) bool { return s.scalar(l, map[string]bool{}, 0) }

// scalar is isScalar, each schema judged once (memo; a loop is not scalar).
func (s Schemas) scalar(l loc, memo map[string]bool, depth int) bool {
	key := l.file + "#" + l.ptr
	if r, ok := memo[key]; ok || depth > maxRefHops {
		return r
	}
	memo[key] = false
	r := s.scalarAt(l, memo, depth)
	memo[key] = r
	return r
}

func (s Schemas) scalarAt(l loc, memo map[string]bool, depth int) bool {
	l, err := s.deref(l)
	if err != nil {
		return false
	}
	m, ok := l.node.(map[string]any)
	if !ok {
		return false
	}
	if ts := typesOf(m); ts != nil {
		for _, t := range ts {
			if !slices.Contains(scalarTypes, t) {
				return false
			}
		}
		return true
	}
	if _, ok := m["const"]; ok {
		return scalarValue(m["const"])
	}
	if e, ok := m["enum"].([]any); ok {
		for _, v := range e {
			if !scalarValue(v) {
				return false
			}
		}
		return true
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		if alts, ok := m[kw].([]any); ok && len(alts) > 0 {
			for i, a := range alts {
				if !s.scalar(loc{l.file, fmt.Sprintf("%s/%s/%d", l.ptr, kw, i), a}, memo, depth+1) {
					return false
				}
			}
			return true
		}
	}
	return false
}

func scalarValue(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return false
	}
	return true
}

// DefaultProjection returns the projection a draft gets when the owner
// names none: every member of the top-level object (file's root schema)
// whose schema admits only scalars, each under its own name made an agent
// field name (lower case, other characters "_"), sorted. It also returns
// the members left out (objects, arrays, names that do not fit).
func (s Schemas) DefaultProjection(file string) (fields []Field, skipped []string, err error) {
	root := loc{file: file, ptr: "", node: s[file]}
	names, err := s.memberNames(root)
	if err != nil {
		return nil, nil, err
	}
	used := map[string]bool{}
	for _, n := range names {
		decl, _, err := s.member(root, n)
		if err != nil {
			return nil, nil, err
		}
		scalar := len(decl) > 0
		for _, d := range decl {
			scalar = scalar && s.isScalar(d)
		}
		field := AgentFieldName(n)
		if !scalar || field == "" || used[field] {
			skipped = append(skipped, n)
			continue
		}
		used[field] = true
		fields = append(fields, Field{Name: field, Pointer: "/" + jsonpointer.EscapeToken(n)})
	}
	return fields, skipped, nil
}

// memberNames lists the member names the schema at l declares in
// properties, through $ref, allOf, anyOf and oneOf, sorted.
func (s Schemas) memberNames(l loc) ([]string, error) {
	seen := map[string]bool{}
	visited := map[string]bool{}
	var walk func(l loc, depth int) error
	walk = func(l loc, depth int) error {
		if depth > maxRefHops {
			return fmt.Errorf("%s#%s: schemas nest or refer past %d levels", l.file, l.ptr, maxRefHops)
		}
		if key := l.file + "#" + l.ptr; visited[key] {
			return nil
		} else {
			visited[key] = true
		}
		m, ok := l.node.(map[string]any)
		if !ok {
			return nil
		}
		if props, ok := m["properties"].(map[string]any); ok {
			for k := range props {
				seen[k] = true
			}
		}
		if ref, ok := refOf(m); ok {
			t, err := s.target(l.file, ref)
			if err != nil {
				return err
			}
			if err := walk(t, depth+1); err != nil {
				return err
			}
		}
		for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
			if subs, ok := m[kw].([]any); ok {
				for i, sub := range subs {
					if err := walk(loc{l.file, fmt.Sprintf("%s/%s/%d", l.ptr, kw, i), sub}, depth+1); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	if err := walk(l, 0); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

// AgentFieldName makes a member name an agent field name
// (^[a-z][a-z0-9_]{0,63}$): lower case, every other character "_",
// camelCase split with "_"; "" when nothing is left.
func AgentFieldName(name string) string {
	var b strings.Builder
	prevLower := false
	for _, r := range name {
		switch {
		case r >= 'A' && r <= 'Z':
			if prevLower {
				b.WriteByte('_')
			}
			b.WriteRune(r + 'a' - 'A')
			prevLower = false
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			prevLower = true
		default:
			b.WriteByte('_')
			prevLower = false
		}
	}
	out := strings.Trim(b.String(), "_")
	for strings.Contains(out, "__") {
		out = strings.ReplaceAll(out, "__", "_")
	}
	if out != "" && out[0] >= '0' && out[0] <= '9' {
		out = "f_" + out
	}
	if len(out) > 64 {
		out = strings.TrimRight(out[:64], "_")
	}
	if !semantic.ValidName(out) {
		return ""
	}
	return out
}

// CloseAlong closes the objects on the way to each projected field in the
// schema at file's root, without touching any other document: at the root
// and at each member on a field's pointer (but the last), it sets
// unevaluatedProperties false; where the way continues into a schema that
// another document holds (a shared component), it adds a "properties" (or
// "items") entry beside the $ref that refers to the member's declaration
// there, and closes that. An object on the way that still admits unnamed
// members through additionalProperties or patternProperties stays open
// to them: unevaluatedProperties counts them as evaluated. It returns the
// instance locations closed.
func (s Schemas) CloseAlong(file string, fields []Field) ([]string, error) {
	root, ok := s[file].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: the root schema is not an object", file)
	}
	closed := map[string]bool{}
	for _, f := range fields {
		ptr, err := jsonpointer.Parse(f.Pointer)
		if err != nil {
			return nil, err
		}
		node, at := root, loc{file: file, ptr: "", node: root}
		for i, t := range ptr {
			if t != "*" {
				setClosed(node)
				closed[jsonpointer.Pointer(ptr[:i]).String()] = true
			}
			if i == len(ptr)-1 {
				break
			}
			kw := "properties"
			if t == "*" {
				kw = "items"
			}
			// The member's schema in this document, to close in place.
			var child map[string]any
			if t == "*" {
				child, _ = node["items"].(map[string]any)
			} else if props, ok := node["properties"].(map[string]any); ok {
				child, _ = props[t].(map[string]any)
			}
			found, _, err := s.member(at, t)
			if err != nil {
				return nil, err
			}
			if found, err = s.distinct(found); err != nil {
				return nil, err
			}
			if child == nil {
				// Declared elsewhere: refer to the declarations from here.
				var refs []any
				for _, d := range found {
					refs = append(refs, map[string]any{"$ref": relRef(file, d)})
				}
				if len(refs) == 0 {
					break // nothing declares it: nothing to close on the way
				}
				child = map[string]any{}
				if len(refs) == 1 {
					child = refs[0].(map[string]any)
				} else {
					child["anyOf"] = refs
				}
				if kw == "items" {
					node["items"] = child
				} else {
					props, _ := node["properties"].(map[string]any)
					if props == nil {
						props = map[string]any{}
						node["properties"] = props
					}
					props[t] = child
				}
			}
			seg := "/items"
			if t != "*" {
				seg = "/properties/" + jsonpointer.EscapeToken(t)
			}
			node = child
			at = loc{file: file, ptr: at.ptr + seg, node: child}
		}
	}
	out := make([]string, 0, len(closed))
	for k := range closed {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

// setClosed closes one object schema unless it already says how
// unevaluated members go.
func setClosed(m map[string]any) {
	if _, ok := m["unevaluatedProperties"]; !ok {
		m["unevaluatedProperties"] = false
	}
}

// relRef spells a reference from document from to location l.
func relRef(from string, l loc) string {
	rel := l.file
	if l.file != from {
		rel = relPath(path.Dir(from), l.file)
	} else {
		rel = ""
	}
	if l.ptr == "" {
		return rel
	}
	frag := (&url.URL{Fragment: l.ptr}).EscapedFragment()
	return rel + "#" + frag
}

// relPath returns target relative to folder dir (both slash-separated).
func relPath(dir, target string) string {
	a := strings.Split(dir, "/")
	b := strings.Split(target, "/")
	i := 0
	for i < len(a) && i < len(b)-1 && a[i] == b[i] {
		i++
	}
	var parts []string
	for j := i; j < len(a); j++ {
		if a[j] != "." && a[j] != "" {
			parts = append(parts, "..")
		}
	}
	parts = append(parts, b[i:]...)
	return strings.Join(parts, "/")
}

// ErrNoDefaultProjection is wrapped by Project's error when no fields are
// named and the upstream value has no top-level scalar member.
var ErrNoDefaultProjection = errors.New("no top-level scalar member to project by default; name the fields with --project FIELD=/pointer")

// Projected is a draft's projection, completed by Project.
type Projected struct {
	Fields []Field
	// Agent is the closed agent-facing schema (AgentSchema).
	Agent map[string]any
	// Closed lists the instance locations CloseAlong closed.
	Closed []string
	// Notes say what the owner must review.
	Notes []string
}

// maxNamesInNote bounds the field names a note lists.
const maxNamesInNote = 12

// Project completes the projection of the upstream schema at file: fields,
// or DefaultProjection when there are none (a note names what it chose and
// what it left out); the agent-facing schema; and, when closeAlong is true,
// the objects on the way to each field closed (CloseAlong, after the agent
// schema is derived: closing adds entries to the upstream schema). A note
// also names each field whose pointer crosses an array ("*") and is not
// always there: when one element lacks the rest of the pointer, the whole
// field is left out (docs/contracts.md, "Projection").
func (s Schemas) Project(file string, fields []Field, closeAlong bool) (*Projected, error) {
	p := &Projected{Fields: fields}
	if len(fields) == 0 {
		chosen, skipped, err := s.DefaultProjection(file)
		if err != nil {
			return nil, err
		}
		if len(chosen) == 0 {
			if len(skipped) > 0 {
				return nil, fmt.Errorf("%w (members: %s)", ErrNoDefaultProjection, namesNote(skipped))
			}
			return nil, ErrNoDefaultProjection
		}
		p.Fields = chosen
		names := make([]string, len(chosen))
		for i, f := range chosen {
			names[i] = f.Name
		}
		n := fmt.Sprintf("projection chose %d top-level scalar fields (%s); review them and keep only what the agent needs (--project FIELD=/pointer)", len(chosen), namesNote(names))
		if len(skipped) > 0 {
			n += fmt.Sprintf("; left out %d members that are objects, arrays or not field names (%s)", len(skipped), namesNote(skipped))
		}
		p.Notes = append(p.Notes, n)
	}
	agent, err := s.AgentSchema(file, p.Fields)
	if err != nil {
		return nil, err
	}
	p.Agent = agent
	req, _ := agent["required"].([]any)
	for _, f := range p.Fields {
		if strings.Contains(f.Pointer, "/*/") && !slices.Contains(req, any(f.Name)) {
			p.Notes = append(p.Notes, fmt.Sprintf("field %s (%s) crosses an array to a member that is not always there: when one element lacks it, the whole field is left out", f.Name, f.Pointer))
		}
	}
	if closeAlong {
		if p.Closed, err = s.CloseAlong(file, p.Fields); err != nil {
			return nil, err
		}
		if len(p.Closed) > 0 {
			p.Notes = append(p.Notes, fmt.Sprintf("closed %d object(s) on the projected path (%s): a member there that the schema does not name is refused; objects elsewhere stay as the schema says", len(p.Closed), namesNote(quoteAll(p.Closed))))
		}
	}
	return p, nil
}

// namesNote lists names for a note, at most maxNamesInNote of them.
func namesNote(names []string) string {
	if len(names) <= maxNamesInNote {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:maxNamesInNote], ", ") + fmt.Sprintf(" and %d more", len(names)-maxNamesInNote)
}
