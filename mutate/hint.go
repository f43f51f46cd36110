package mutate

import (
	"bytes"
	"cmp"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/config"
	"github.com/airlockdev/airlock/internal/fileio"
	"github.com/airlockdev/airlock/internal/introspect"
	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/schemawalk"
	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/internal/strictyaml"
	"github.com/airlockdev/airlock/jsonpointer"
)

// Hint locations: for an admitted mutant, where the keyword of its hint
// goes (docs/mutate.md, Hints). They are found only for admitted mutants,
// after the proof, so generating mutants stays cheap; lines are placed in
// one pass per file over all results (placeHints).

// HintLocation is where a survivor's hint applies.
type HintLocation struct {
	// File is the schema file (or contract.yaml, for a rule) named as
	// configuration errors name it: the contract folder as given, then
	// the file's name ("schemas/note_status/upstream.schema.json").
	File string
	// Line is the 1-based line of Pointer in File; 0 when unknown.
	Line int
	// Pointer is the RFC 6901 JSON Pointer inside File where the keyword
	// goes: the keyword location of the subschema that applies at
	// Instance (the first one schemawalk.At reaches in the contract's own
	// files: the member's own subschema before its $ref targets; never a
	// shared component, see Add), or for a semantic rule the
	// manifest key of the upstream version's rules (or of the version,
	// when it has none).
	Pointer string
	// Instance is the RFC 6901 instance location the keyword constrains,
	// in the value the upstream schema validates (for an MCP contract,
	// inside structuredContent or the text block's JSON text, as the
	// manifest's pointers are): the mutated value's, or for a mutant that adds a member (an
	// unexpected property, a success with an error, a case-folded name)
	// or swaps a discriminator, the enclosing object's. When no subschema
	// applies there, the nearest enclosing location that has one.
	Instance string
	// Value is the survivor's new value as JSON text, at most 64
	// characters (schemawalk.ValueText); "" for a bytes mutant. Reports
	// print it through reports.Line (control characters escaped).
	Value string
	// Add, when not "", is the RFC 6901 JSON Pointer, relative to Pointer,
	// of the subschema to add at the place: the instance location lies
	// inside a shared component (schemas/_components, which other
	// contracts use), and Pointer names the deepest subschema on the way
	// that lies in the contract's own files (for an imported contract, the
	// root beside its $ref). It is "/properties/<member>" per object member
	// and "/items" per array element on the way from there
	// ("/properties/state", "/properties/labels/items/properties/name").
	Add string
	// Shared is the shared component's subschema that applies at Instance
	// (the place the keyword would go if it could be edited), when Add is
	// not "".
	Shared *HintLocation
	// Ref, for a keyword that closes an object (unevaluatedProperties:
	// false) under Add, is the $ref to Shared, relative to File, to write
	// beside it: unevaluatedProperties sees only the members its own
	// subschema evaluates.
	Ref string

	tool, name string // the contract and the file's name in its folder, for placeHints
	manifest   bool   // File is contract.yaml
}

// String is "file:line: pointer" (":line" left out when unknown).
func (h *HintLocation) String() string {
	if h == nil {
		return ""
	}
	s := h.File
	if h.Line > 0 {
		s += fmt.Sprintf(":%d", h.Line)
	}
	return s + ": " + ShowPointer(h.Pointer)
}

// ShowPointer prints an RFC 6901 JSON Pointer for a reader: itself, or
// "(root)" for the empty pointer, which names the whole document.
func ShowPointer(p string) string {
	if p == "" {
		return "(root)"
	}
	return p
}

// parentKinds are the mutations whose keyword goes on the object that
// holds the mutated location, not on the location itself.
var parentKinds = []string{"unexpected_property", "success_with_error", "case_folded_name", "discriminator_swapped"}

// locate returns where the keyword that would refuse mu goes, or nil
// when its hint is the gate's own (bytes family) or no schema or rule of
// the contract applies.
func (m *mutator) locate(mu Mutant) *HintLocation {
	if m.contract == nil {
		return nil
	}
	value := ""
	if mu.Family != FamilyBytes {
		value = schemawalk.ValueText(mu.After)
	}
	if mu.Family == FamilySemantic {
		_, _, shown := introspect.Source(m.contract)
		key := "/upstream_versions/" + jsonpointer.EscapeToken(m.version)
		if len(introspect.Manifest(m.contract).UpstreamVersions[m.version].Rules) > 0 {
			key += "/rules"
		}
		inst := mu.Pointer
		if loc, err := jsonpointer.Parse(mu.Pointer); err == nil && hasPrefix(loc, m.scope) {
			inst = loc[len(m.scope):].String()
		}
		return &HintLocation{File: showFile(shown, gate.ManifestFile), Pointer: key, Instance: inst, Value: value,
			tool: m.contract.Tool(), name: gate.ManifestFile, manifest: true}
	}
	if mu.Family == FamilyBytes && mu.Kind != "case_folded_name" || m.schema == nil {
		return nil
	}
	loc, err := jsonpointer.Parse(mu.Pointer)
	if err != nil || !hasPrefix(loc, m.scope) {
		return nil
	}
	if slices.Contains(parentKinds, mu.Kind) && len(loc) > len(m.scope) {
		loc = loc[:len(loc)-1]
	}
	inScope, _ := m.scope.Lookup(m.value)
	dir := introspect.SchemaDir(m.contract)
	rel := loc[len(m.scope):]
	// One walk along rel, as schemawalk.At does, keeping the subschemas
	// that apply at each depth: the instance location is the deepest where
	// one applies.
	sets := walkSets(m.schema, inScope, rel)
	for len(sets) > 0 && len(sets[len(sets)-1]) == 0 {
		sets = sets[:len(sets)-1]
	}
	if len(sets) == 0 {
		return nil
	}
	rel = rel[:len(sets)-1]
	at := sets[len(sets)-1]
	h := &HintLocation{Instance: rel.String(), Value: value, tool: m.contract.Tool()}
	// The place: the first subschema at the deepest location on the way
	// that lies in the contract's own files, never a shared component.
	for d := len(rel); d >= 0 && h.File == ""; d-- {
		for _, s := range sets[d] {
			if p, ok := dir.Locate(s.Location, ""); ok && !strings.HasPrefix(p.Name, schema.ComponentPrefix) {
				h.File, h.Pointer, h.name = p.File, p.Pointer, p.Name
				h.Add = addPath(inScope, rel[:d], rel[d:])
				break
			}
		}
	}
	if h.File == "" {
		return nil
	}
	if h.Add != "" {
		// The shared subschema that applies at the instance location, left
		// alone; a closing keyword needs a $ref to it beside it (it sees
		// only the members evaluated there).
		for _, s := range at {
			if p, ok := dir.Locate(s.Location, ""); ok {
				h.Shared = &HintLocation{File: p.File, Pointer: p.Pointer, Instance: h.Instance, tool: h.tool, name: p.Name}
				break
			}
		}
		if h.Shared != nil && slices.Contains(closingKinds, mu.Kind) {
			h.Ref = h.Shared.name + "#" + (&url.URL{Fragment: h.Shared.Pointer}).EscapedFragment()
		}
	}
	return h
}

// walkSets returns the subschemas of root that apply at each depth along
// loc inside value, as schemawalk.At gives them for loc[:d] (d = 0 …
// len(loc)), in one walk: O(len(loc)) steps. It stops early, shorter,
// where loc leaves value (a member or element that is not there).
func walkSets(root *jsonschema.Schema, value any, loc jsonpointer.Pointer) [][]*jsonschema.Schema {
	var out [][]*jsonschema.Schema
	schemawalk.Along(root, value, loc, schemawalk.Applicable, func(set []*jsonschema.Schema) { out = append(out, set) })
	return out
}

// closingKinds are the mutations whose keyword closes an object
// (unevaluatedProperties: false): beside a shared subschema it needs a
// $ref to it, or it refuses every member.
var closingKinds = []string{"unexpected_property", "success_with_error", "case_folded_name"}

// addPath is the RFC 6901 JSON Pointer, relative to the subschema that
// applies at instance location from inside value, of the subschema to add
// there for the instance location from+rest: "/properties/<member>" for
// each object member on the way, "/items" for each array element (items
// applies to every element). "" when rest is empty.
func addPath(value any, from, rest jsonpointer.Pointer) string {
	cur, _ := from.Lookup(value)
	var b strings.Builder
	for _, tok := range rest {
		switch v := cur.(type) {
		case []any:
			b.WriteString("/items")
			i, _ := strconv.Atoi(tok)
			if i >= 0 && i < len(v) {
				cur = v[i]
			}
		case map[string]any:
			b.WriteString("/properties/" + jsonpointer.EscapeToken(tok))
			cur = v[tok]
		default:
			b.WriteString("/properties/" + jsonpointer.EscapeToken(tok))
			cur = nil
		}
	}
	return b.String()
}

// AddText says what to add at the place, when the instance location lies
// inside a shared component: "properties/state: {KEYWORD} there; the
// shared FILE:LINE: POINTER stays as it is (other contracts use it)", with
// KEYWORD the hint (or, for a closing keyword, the $ref to the shared
// subschema and unevaluatedProperties: false), and which shared subschema
// stays as it is. "" when the keyword goes at the place itself.
func (h *HintLocation) AddText(hint string) string {
	if h == nil || h.Add == "" {
		return ""
	}
	kw := hint
	if h.Ref != "" {
		kw = fmt.Sprintf("\"$ref\": %q, \"unevaluatedProperties\": false", h.Ref)
	}
	s := fmt.Sprintf("%s: {%s} there", strings.TrimPrefix(h.Add, "/"), kw)
	if h.Shared != nil {
		s += "; the shared " + h.Shared.String() + " stays as it is (other contracts use it)"
	}
	return s
}

// shared is h.Shared; nil for a nil h.
func (h *HintLocation) shared() *HintLocation {
	if h == nil {
		return nil
	}
	return h.Shared
}

// showFile names a file of a contract folder shown as shown, as
// schema.Dir.Show does.
func showFile(shown, name string) string {
	return strings.TrimSuffix(shown, "/") + "/" + name
}

// placeHints sets the line of every hint location of results, reading
// each file once: a schema file's text as the gate read it
// (strictjson.PointerOffsets finds every pointer in one pass), the
// manifest through the contract's own file system (strictyaml.Positions).
// A location whose line cannot be found keeps Line 0.
func placeHints(set *fixture.Set, results []MutantResult) {
	type fileKey struct {
		tool, name string
		manifest   bool
	}
	byFile := map[fileKey][]*HintLocation{}
	var order []fileKey
	for i := range results {
		for _, h := range []*HintLocation{results[i].Location, results[i].Location.shared()} {
			if h == nil {
				continue
			}
			k := fileKey{h.tool, h.name, h.manifest}
			if _, seen := byFile[k]; !seen {
				order = append(order, k)
			}
			byFile[k] = append(byFile[k], h)
		}
	}
	for _, k := range order {
		c := set.Contracts[k.tool]
		if c == nil {
			continue
		}
		hs := byFile[k]
		if k.manifest {
			fsys, dir, _ := introspect.Source(c)
			raw, err := fileio.ReadFS(fsys, path.Join(dir, k.name), config.MaxFile)
			if err != nil {
				continue
			}
			pos := strictyaml.NewPositions(raw)
			for _, h := range hs {
				h.Line, _ = pos.KeyPosition(h.Pointer)
			}
			continue
		}
		raw := introspect.SchemaDir(c).Bytes(k.name)
		ptrs := make([]string, 0, len(hs))
		for _, h := range hs {
			ptrs = append(ptrs, h.Pointer)
		}
		offs := strictjson.PointerOffsets(raw, ptrs)
		// Lines in one sweep over the text, offsets in order.
		slices.SortStableFunc(hs, func(a, b *HintLocation) int { return cmp.Compare(offs[a.Pointer], offs[b.Pointer]) })
		line, pos := 1, int64(0)
		for _, h := range hs {
			off, ok := offs[h.Pointer]
			if !ok || off > int64(len(raw)) {
				continue
			}
			line += bytes.Count(raw[pos:off], []byte("\n"))
			pos = off
			h.Line = line
		}
	}
}
