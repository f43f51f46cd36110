package drift

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/introspect"
	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/schemawalk"
	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/reports"
	"github.com/airlockdev/airlock/schemadiff"
)

// Options configure Run.
type Options struct {
	// SchemasDir holds one folder per tool contract; FixturesDir the trees.
	SchemasDir  string
	FixturesDir string
	// Tools and UpstreamVersions select; empty selects all.
	Tools            []string
	UpstreamVersions []string
	// IgnoreVersionChanges reports breaking changes between consecutive
	// upstream versions without counting them toward Summary.Breaking.
	IgnoreVersionChanges bool
	// Workers is the number of fixtures checked at once; 0 means one per CPU.
	Workers int
	// Gate are the contract loading options (custom rules).
	Gate gate.Options
}

// Enum-like strings: at most this many distinct values, each at most this
// many characters, are listed in the observed shape.
const (
	maxEnumLikeValues = 8
	maxEnumLikeLength = 32
)

// Drift reads every recorded and historical fixture of the selected tools
// and upstream versions, runs it through the gate, and reports what the
// fixtures show against the contract: the observed shape, members the
// schema forbids, required members missing, retyped members, new enum
// values, refusals by reason, and the schema changes between consecutive
// upstream versions (natural version order). A configuration error is a
// *gate.ConfigError; what the fixtures show is data in the report.
func Run(ctx context.Context, opts Options) (*reports.Drift, error) {
	set, err := fixture.Open(opts.SchemasDir, opts.FixturesDir, fixture.Filter{
		Tools: opts.Tools, UpstreamVersions: opts.UpstreamVersions,
		Kinds: []string{fixture.KindRecorded, fixture.KindHistorical},
	}, opts.Gate)
	if err != nil {
		return nil, err
	}
	fixtures := set.Fixtures
	tools := slices.Sorted(maps.Keys(set.Contracts))
	if len(opts.Tools) > 0 {
		tools = slices.DeleteFunc(tools, func(t string) bool { return !slices.Contains(opts.Tools, t) })
	}
	for _, v := range opts.UpstreamVersions {
		if !slices.ContainsFunc(tools, func(t string) bool { return slices.Contains(set.Contracts[t].UpstreamVersions(), v) }) {
			return nil, &gate.ConfigError{File: "--upstream-version", Msg: fmt.Sprintf("no selected contract has upstream version %q", v)}
		}
	}

	// Each selected version's schema, as its contract compiled it.
	schemas := map[[2]string]*schemadiff.Schema{}
	versionsOf := map[string][]string{}
	for _, t := range tools {
		c := set.Contracts[t]
		for _, v := range schemadiff.SortVersions(c.UpstreamVersions()) {
			if len(opts.UpstreamVersions) > 0 && !slices.Contains(opts.UpstreamVersions, v) {
				continue
			}
			f, _ := schemadiff.UpstreamSchema(c, v) // v is one of c's versions
			schemas[[2]string{t, v}] = f
			versionsOf[t] = append(versionsOf[t], v)
		}
	}

	outs := make([]fixtureDrift, len(fixtures))
	fixture.ForEach(ctx, len(fixtures), opts.Workers, func(i int) {
		f := fixtures[i]
		outs[i] = observeFixture(ctx, set, f, schemas[[2]string{f.Tool, f.UpstreamVersion}])
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var errs []error
	for _, o := range outs {
		if o.err != nil {
			errs = append(errs, o.err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	rep := &reports.Drift{Summary: reports.DriftSummary{Fixtures: len(fixtures), VersionChangesBreak: !opts.IgnoreVersionChanges}}
	for _, t := range tools {
		c := set.Contracts[t]
		dt := reports.DriftTool{Tool: t, ContractVersion: c.Version(), VersionChanges: []reports.Comparison{}}
		for _, v := range versionsOf[t] {
			agg := newDriftAggregate()
			for i, f := range fixtures {
				if f.Tool == t && f.UpstreamVersion == v {
					agg.add(f, outs[i])
				}
			}
			dv := agg.report(v)
			for _, f := range dv.Findings {
				if f.Breaking {
					rep.Summary.BreakingFindings++
				}
			}
			for _, r := range dv.Refusals {
				rep.Summary.UnexpectedRefusals += r.Unexpected
			}
			dt.Versions = append(dt.Versions, dv)
		}
		vs := versionsOf[t]
		for i := 1; i < len(vs); i++ {
			name := fmt.Sprintf("%s upstream %s → %s", t, vs[i-1], vs[i])
			cmp, err := schemadiff.Compare(name, schemas[[2]string{t, vs[i-1]}], schemas[[2]string{t, vs[i]}])
			if err != nil {
				return nil, err
			}
			for _, ch := range cmp.Changes {
				if ch.Level == reports.Breaking {
					rep.Summary.BreakingVersionChanges++
				}
			}
			dt.VersionChanges = append(dt.VersionChanges, cmp)
		}
		rep.Tools = append(rep.Tools, dt)
	}
	s := &rep.Summary
	s.Breaking = s.BreakingFindings > 0 || s.UnexpectedRefusals > 0 || s.VersionChangesBreak && s.BreakingVersionChanges > 0
	return rep, nil
}

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

// schemaFindings validates value and turns every leaf cause into a
// finding; inside a failed oneOf/anyOf only the branch with the fewest
// failures is followed (the shape the value came closest to).
func schemaFindings(root *jsonschema.Schema, value any) (out []rawFinding) {
	defer func() {
		if p := recover(); p != nil {
			out = []rawFinding{{kind: reports.FindingViolation, keyword: "internal.validator_panic"}}
		}
	}()
	err := root.Validate(value)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil
	}
	var leaves []*jsonschema.ValidationError
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
			return
		}
		switch e.ErrorKind.(type) {
		case *kind.OneOf, *kind.AnyOf:
			best, n := e.Causes[0], schema.LeafCount(e.Causes[0])
			for _, c := range e.Causes[1:] {
				if m := schema.LeafCount(c); m < n {
					best, n = c, m
				}
			}
			walk(best)
		default:
			for _, c := range e.Causes {
				walk(c)
			}
		}
	}
	walk(ve)
	for _, e := range leaves {
		out = append(out, classifyLeaf(e, value)...)
	}
	return out
}

// starred turns an instance location into the report's form: array
// indices become "*".
func starred(value any, toks []string) string {
	var b strings.Builder
	cur := value
	for _, t := range toks {
		switch x := cur.(type) {
		case []any:
			b.WriteString("/*")
			if i, err := strconv.Atoi(t); err == nil && i >= 0 && i < len(x) {
				cur = x[i]
			} else {
				cur = nil
			}
		case map[string]any:
			b.WriteString("/" + jsonpointer.EscapeToken(t))
			cur = x[t]
		default:
			b.WriteString("/" + jsonpointer.EscapeToken(t))
			cur = nil
		}
	}
	return b.String()
}

func classifyLeaf(e *jsonschema.ValidationError, value any) []rawFinding {
	ptr := starred(value, e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		var out []rawFinding
		for _, p := range k.Properties {
			out = append(out, rawFinding{kind: reports.FindingForbidden, pointer: ptr + "/" + jsonpointer.EscapeToken(p), keyword: "additionalProperties"})
		}
		return out
	case *kind.FalseSchema:
		_, frag, _ := strings.Cut(e.SchemaURL, "#")
		toks := strings.Split(frag, "/")
		last, before := toks[len(toks)-1], ""
		if len(toks) > 1 {
			before = toks[len(toks)-2]
		}
		switch {
		case last == "additionalProperties" || last == "unevaluatedProperties":
			return []rawFinding{{kind: reports.FindingForbidden, pointer: ptr, keyword: last}}
		case before == "properties":
			return []rawFinding{{kind: reports.FindingForbidden, pointer: ptr, keyword: "false"}}
		case slices.Contains(subschemaKeywordsOf, last):
			return []rawFinding{{kind: reports.FindingViolation, pointer: ptr, keyword: last}}
		}
		return []rawFinding{{kind: reports.FindingViolation, pointer: ptr, keyword: "false"}}
	case *kind.Required:
		var out []rawFinding
		for _, m := range k.Missing {
			out = append(out, rawFinding{kind: reports.FindingMissing, pointer: ptr + "/" + jsonpointer.EscapeToken(m), keyword: "required"})
		}
		return out
	case *kind.Type:
		got := k.Got
		if x, ok := jsonpointer.Pointer(e.InstanceLocation).Lookup(value); ok {
			got = jsonType(x) // the validator says "number" for 17
		}
		return []rawFinding{{kind: reports.FindingRetyped, pointer: ptr, keyword: "type", seen: []string{got}, allowed: k.Want}}
	case *kind.Enum:
		return valueFinding(ptr, "enum", k.Got, k.Want)
	case *kind.Const:
		return valueFinding(ptr, "const", k.Got, []any{k.Want})
	}
	kw := "invalid"
	if p := e.ErrorKind.KeywordPath(); len(p) > 0 {
		kw = p[0]
	}
	return []rawFinding{{kind: reports.FindingViolation, pointer: ptr, keyword: kw}}
}

// subschemaKeywordsOf are keywords whose false schema refuses an array
// element or a value rather than a member.
var subschemaKeywordsOf = []string{"items", "prefixItems", "unevaluatedItems", "contains", "propertyNames", "not", "if", "then", "else"}

// valueFinding: a scalar outside the allowed values is a new enum value;
// an object or array where only scalars are allowed is a retyped member.
func valueFinding(ptr, kw string, got any, want []any) []rawFinding {
	var allowed []string
	var types schemawalk.Types
	for i, w := range want {
		if i < 16 {
			allowed = append(allowed, schemawalk.ValueText(w))
		} else if i == 16 {
			allowed = append(allowed, "…")
		}
		types |= schemawalk.TypeOfValue(w)
	}
	switch got.(type) {
	case map[string]any, []any:
		if types&schemawalk.TypeOfValue(got) == 0 {
			return []rawFinding{{kind: reports.FindingRetyped, pointer: ptr, keyword: kw, seen: []string{jsonType(got)}, allowed: strings.Split(types.String(), ", ")}}
		}
		return []rawFinding{{kind: reports.FindingViolation, pointer: ptr, keyword: kw}}
	}
	return []rawFinding{{kind: reports.FindingNewEnumValue, pointer: ptr, keyword: kw, value: schemawalk.ValueText(got), allowed: allowed}}
}

// driftAggregate sums what the fixtures of one upstream version show.
type driftAggregate struct {
	fixtures, recorded, historical, admitted, refused int
	refusals                                          map[string]*reports.RefusalCount
	findings                                          map[string]*findingAgg
	order                                             []string
	observed                                          map[string]*observedAgg
}

type findingAgg struct {
	f          rawFinding
	fixtures   []string
	unexpected int
}

type observedAgg struct {
	types       map[string]bool
	count       int
	strings     map[string]bool
	occurrences int
	overflow    bool
	minLen      int
	maxLen      int
	hasString   bool
	declared    bool
}

func newDriftAggregate() *driftAggregate {
	return &driftAggregate{refusals: map[string]*reports.RefusalCount{}, findings: map[string]*findingAgg{}, observed: map[string]*observedAgg{}}
}

func (a *driftAggregate) add(f fixture.Fixture, d fixtureDrift) {
	name := f.Kind + "/" + f.Name
	a.fixtures++
	if f.Kind == fixture.KindRecorded {
		a.recorded++
	} else {
		a.historical++
	}
	if d.admitted {
		a.admitted++
	} else {
		a.refused++
		r := a.refusals[d.reason]
		if r == nil {
			r = &reports.RefusalCount{Reason: d.reason}
			a.refusals[d.reason] = r
		}
		r.Count++
		r.Fixtures = append(r.Fixtures, name)
		if !d.expected {
			r.Unexpected++
		}
	}
	seen := map[string]bool{}
	for _, x := range d.findings {
		k := x.key()
		if seen[k] {
			continue
		}
		seen[k] = true
		g := a.findings[k]
		if g == nil {
			g = &findingAgg{f: x}
			a.findings[k] = g
			a.order = append(a.order, k)
		}
		g.fixtures = append(g.fixtures, name)
		if !d.expected {
			g.unexpected++
		}
	}
	for ptr, s := range d.shape {
		o := a.observed[ptr]
		if o == nil {
			o = &observedAgg{types: map[string]bool{}, strings: map[string]bool{}, declared: true}
			a.observed[ptr] = o
		}
		o.count++
		o.declared = o.declared && s.declared
		for t := range s.types {
			o.types[t] = true
		}
		for _, str := range s.strings {
			n := utf8.RuneCountInString(str)
			if !o.hasString || n < o.minLen {
				o.minLen = n
			}
			if !o.hasString || n > o.maxLen {
				o.maxLen = n
			}
			o.hasString = true
			o.occurrences++
			if n > maxEnumLikeLength {
				o.overflow = true
				continue
			}
			if !o.strings[str] && len(o.strings) == maxEnumLikeValues {
				o.overflow = true
				continue
			}
			o.strings[str] = true
		}
	}
}

// breakingKinds are the finding kinds that break the contract.
var breakingKinds = []string{reports.FindingForbidden, reports.FindingMissing, reports.FindingRetyped, reports.FindingNewEnumValue}

func (a *driftAggregate) report(version string) reports.DriftVersion {
	v := reports.DriftVersion{
		UpstreamVersion: version, Fixtures: a.fixtures, Recorded: a.recorded, Historical: a.historical,
		Admitted: a.admitted, Refused: a.refused,
		Refusals: []reports.RefusalCount{}, Findings: []reports.DriftFinding{}, Observed: []reports.ObservedPath{},
	}
	for _, reason := range slices.Sorted(maps.Keys(a.refusals)) {
		v.Refusals = append(v.Refusals, *a.refusals[reason])
	}
	for _, k := range a.order {
		g := a.findings[k]
		v.Findings = append(v.Findings, reports.DriftFinding{
			Kind: g.f.kind, Pointer: g.f.pointer, Keyword: g.f.keyword, Value: g.f.value,
			Seen: g.f.seen, Allowed: g.f.allowed,
			Count: len(g.fixtures), Fixtures: g.fixtures,
			Breaking: g.unexpected > 0 && slices.Contains(breakingKinds, g.f.kind),
			Message:  findingMessage(g, len(g.fixtures)),
		})
	}
	sort.SliceStable(v.Findings, func(i, j int) bool {
		x, y := v.Findings[i], v.Findings[j]
		if x.Breaking != y.Breaking {
			return x.Breaking
		}
		if a, b := slices.Index(reports.FindingKinds, x.Kind), slices.Index(reports.FindingKinds, y.Kind); a != b {
			return a < b
		}
		return x.Pointer < y.Pointer
	})
	for _, ptr := range slices.Sorted(maps.Keys(a.observed)) {
		o := a.observed[ptr]
		p := reports.ObservedPath{Pointer: ptr, Types: slices.Sorted(maps.Keys(o.types)), Count: o.count, Declared: o.declared}
		if o.hasString {
			p.MinLength, p.MaxLength = &o.minLen, &o.maxLen
			everyValueDiffers := len(o.strings) == o.occurrences && o.occurrences > 3
			if !o.overflow && !everyValueDiffers {
				p.Values = slices.Sorted(maps.Keys(o.strings))
			}
		}
		v.Observed = append(v.Observed, p)
	}
	return v
}

var plainPointer = regexp.MustCompile(`^[\x20-\x7e]*$`)

func findingMessage(g *findingAgg, n int) string {
	f := g.f
	where := f.pointer
	if where == "" {
		where = "the response"
	} else if !plainPointer.MatchString(where) {
		where = strconv.Quote(where)
	}
	in := fmt.Sprintf("in %d fixture(s)", n)
	expected := ""
	if g.unexpected == 0 && slices.Contains(breakingKinds, f.kind) {
		expected = "; every such fixture is an expected refusal"
	}
	switch f.kind {
	case reports.FindingForbidden:
		return fmt.Sprintf("%s is present %s but the schema forbids it (%s)%s", where, in, f.keyword, expected)
	case reports.FindingMissing:
		return fmt.Sprintf("%s is required but missing %s%s", where, in, expected)
	case reports.FindingRetyped:
		return fmt.Sprintf("%s is %s %s where the schema allows %s%s", where, strings.Join(f.seen, ", "), in, strings.Join(f.allowed, ", "), expected)
	case reports.FindingNewEnumValue:
		return fmt.Sprintf("%s is %s %s, not one of the schema's values%s", where, f.value, in, expected)
	case reports.FindingUndeclared:
		return fmt.Sprintf("%s is present %s and allowed, but the schema does not describe it", where, in)
	}
	return fmt.Sprintf("%s fails %s %s", where, f.keyword, in)
}
