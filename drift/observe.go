package drift

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/introspect"
	"github.com/airlockdev/airlock/internal/schemawalk"
	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/reports"
	"github.com/airlockdev/airlock/schemadiff"
)

// fixtureDrift is what one fixture shows.
type fixtureDrift struct {
	admitted bool
	reason   string
	// expected: the refusal is the one the sidecar expects.
	expected bool
	// shape maps each instance location (with "*") to what was seen there.
	shape    map[string]*seenAt
	findings []rawFinding
	err      error
}

// seenAt is what one fixture has at one instance location.
type seenAt struct {
	types    map[string]bool
	strings  []string
	declared bool
}

// rawFinding is one finding in one fixture, before aggregation.
type rawFinding struct {
	kind, pointer, keyword, value string
	seen, allowed                 []string
}

func (f rawFinding) key() string {
	return strings.Join([]string{f.kind, f.pointer, f.keyword, f.value, strings.Join(f.seen, ",")}, "\x00")
}

// observeFixture runs one fixture through the gate and, when its value parsed,
// records its shape and what the schema says about it.
func observeFixture(ctx context.Context, set *fixture.Set, f fixture.Fixture, schema *schemadiff.Schema) fixtureDrift {
	p, err := set.Prepare(f)
	if err != nil {
		return fixtureDrift{err: err}
	}
	v, err := set.CheckPrepared(ctx, f, p)
	if err != nil {
		return fixtureDrift{err: err}
	}
	out := fixtureDrift{admitted: v.Admitted, reason: v.Reason}
	out.expected = !v.Admitted && p.Expect.Outcome == "refused" && (p.Expect.Reason == "" || p.Expect.Reason == v.Reason)
	if !v.Admitted && (v.Stage == gate.StageTransport || v.Stage == gate.StageParse) {
		return out
	}
	// The value the gate validated (an MCP result's structuredContent),
	// as the gate decoded it: no second parse.
	value, ok := introspect.Value(v)
	if !ok {
		return out
	}
	out.shape = map[string]*seenAt{}
	observe(value, []*jsonschema.Schema{schema.Root()}, "", true, out.shape)
	out.findings = schemaFindings(schema.Root(), value)
	// A member of an open object the schema does not describe: the
	// outermost such location, unless the schema refused it (or a member
	// around it) anyway.
	flagged := map[string]bool{}
	for _, x := range out.findings {
		if x.kind == reports.FindingForbidden || x.kind == reports.FindingRetyped {
			flagged[x.pointer] = true
		}
	}
	for _, ptr := range slices.Sorted(maps.Keys(out.shape)) {
		if out.shape[ptr].declared || flaggedAt(flagged, ptr) {
			continue
		}
		if parent := parentPointer(ptr); parent != "" && !out.shape[parent].declared {
			continue
		}
		out.findings = append(out.findings, rawFinding{kind: reports.FindingUndeclared, pointer: ptr})
	}
	return out
}

// flaggedAt reports whether ptr or a location around it is flagged.
func flaggedAt(flagged map[string]bool, ptr string) bool {
	for p := ptr; p != ""; p = parentPointer(p) {
		if flagged[p] {
			return true
		}
	}
	return false
}

func parentPointer(p string) string {
	if i := strings.LastIndexByte(p, '/'); i > 0 {
		return p[:i]
	}
	return ""
}

// observe walks value and records, per instance location, the types seen,
// the strings, and whether the schema describes the member.
func observe(value any, schemas []*jsonschema.Schema, ptr string, declared bool, out map[string]*seenAt) {
	if ptr != "" {
		s := out[ptr]
		if s == nil {
			s = &seenAt{types: map[string]bool{}, declared: true}
			out[ptr] = s
		}
		s.types[jsonType(value)] = true
		s.declared = s.declared && declared
		if str, ok := value.(string); ok {
			s.strings = append(s.strings, str)
		}
	}
	expanded := schemawalk.Applicable(schemas)
	switch x := value.(type) {
	case map[string]any:
		for name, child := range x {
			next, known := schemawalk.Member(expanded, name)
			observe(child, next, ptr+"/"+jsonpointer.EscapeToken(name), declared && known, out)
		}
	case []any:
		for i, child := range x {
			observe(child, schemawalk.Element(expanded, i), ptr+"/*", declared, out)
		}
	}
}

// jsonType names a decoded value's JSON type; integral numbers are
// "integer".
func jsonType(v any) string {
	m := schemawalk.TypeOfValue(v)
	switch {
	case m == schemawalk.Integer:
		return "integer"
	case m&schemawalk.Number != 0:
		return "number"
	}
	return schemawalk.Types(m).String()
}
