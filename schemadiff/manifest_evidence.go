package schemadiff

// Fixture evidence of the gate-impact view: the tool's accepted,
// historical and recorded fixtures run through the old and the new
// contract, each one the new contract refuses credited to the narrowing
// that explains it (explain), and later narrowings judged on their own
// (judgeLater).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/introspect"
	"github.com/airlockdev/airlock/internal/validator"
	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/reports"
)

// evidenceKinds are the fixtures that show what the upstream really sends.
var evidenceKinds = []string{fixture.KindAccepted, fixture.KindHistorical, fixture.KindRecorded}

// evidence runs each tool's accepted, historical and recorded fixtures
// of the upstream versions both contracts have through the old and the new
// contract and attributes each fixture the old admits and the new refuses
// to the narrowing changes that explain the refusal (explain); one no
// change explains is counted, and named, as unexplained.
//
// The fixtures of a version only one contract has (a version removed or
// renamed whose folder is still there) are not run and fail nothing. When
// the tool's fixture folder holds folders of versions that neither
// contract has all of (one only the old has beside one only the new has,
// or one neither has), the tool gets no evidence, and Diff.Evidence says
// why.
func evidence(ctx context.Context, d *reports.Diff, done []pairResult, fixturesDir string) error {
	if fixturesDir == "" {
		return nil
	}
	if st, err := os.Stat(fixturesDir); err != nil || !st.IsDir() {
		d.Evidence = fmt.Sprintf("no fixture evidence: %s is not a folder of fixtures, so no narrowing was run against recorded responses", fixturesDir)
		return nil
	}
	ran, refused := 0, 0
	var unexplained, capped, skipped []string
	for _, r := range done {
		oc, nc := r.pair.Old, r.pair.New
		if oc == nil || nc == nil {
			continue
		}
		now := time.Now()
		nset := &fixture.Set{Contracts: map[string]*gate.Contract{nc.Tool(): nc}, List: []*gate.Contract{nc}, Start: now}
		oset := &fixture.Set{Contracts: map[string]*gate.Contract{nc.Tool(): oc}, List: []*gate.Contract{oc}, Start: now}
		// Discovery refuses a version folder its contract does not list:
		// discover with the contract that lists every folder, keeping only
		// the versions both have.
		discoverer, why := evidenceSet(fixturesDir, nc.Tool(), oset, nset)
		if discoverer == nil {
			skipped = append(skipped, why)
			continue
		}
		both := bothVersions(r.old, r.new)
		if len(both) == 0 {
			continue
		}
		sel, err := discoverer.Select(fixturesDir, fixture.Filter{Tools: []string{nc.Tool()}, UpstreamVersions: both, Kinds: evidenceKinds})
		if err != nil {
			return err
		}
		// Read each body within the larger byte limit, so the contract
		// with the larger one sees the whole body.
		reader := nset
		if oc.Limits().MaxBytes > nc.Limits().MaxBytes {
			reader = oset
		}
		fixtures := sel.Fixtures
		if len(fixtures) > MaxImpactFixtures {
			capped = append(capped, nc.Tool())
			fixtures = fixtures[:MaxImpactFixtures]
		}
		// Every change of the pair that may refuse (refusesMore) gets
		// evidence, refusing none until a fixture says otherwise; not those
		// of the error schemas: a response an error contract matches is
		// refused by either contract, so admitted-then-refused never
		// measures them.
		if len(fixtures) > 0 {
			for i := range r.comparisons {
				if r.kinds[i] == kindError || r.kinds[i] == kindAgentError {
					continue
				}
				for j := range d.Comparisons[r.first+i].Changes {
					c := &d.Comparisons[r.first+i].Changes[j]
					if !refusesMore(c) {
						continue
					}
					if c.Impact == nil {
						c.Impact = &reports.Impact{}
					}
					c.Impact.Fixtures = &reports.FixtureEvidence{}
				}
			}
		}
		// The new contract's validators, compiled on first need, for
		// judging a narrowing on its own (judgeLater).
		validators := map[string]*validator.Validator{}
		for _, f := range fixtures {
			if err := ctx.Err(); err != nil {
				return err
			}
			p, err := reader.Prepare(f)
			if err != nil {
				return err
			}
			ov, err := oset.CheckPrepared(ctx, f, p)
			if err != nil {
				if errors.Is(err, gate.ErrUsage) {
					continue // the old contract lacks this upstream version
				}
				return err
			}
			nv, err := nset.CheckPrepared(ctx, f, p)
			if err != nil {
				if errors.Is(err, gate.ErrUsage) {
					continue // the new contract lacks this upstream version
				}
				return err
			}
			ran++
			if !ov.Admitted || nv.Admitted {
				continue
			}
			refused++
			targets := explain(d, r, f.UpstreamVersion, nv)
			if len(targets) == 0 {
				unexplained = append(unexplained, f.Body)
			}
			for _, c := range targets {
				credit(c, f.Body)
			}
			judgeLater(d, r, f.UpstreamVersion, f.Body, ov, nv, targets, validators)
		}
	}
	d.Evidence = fmt.Sprintf("gate impact: %d fixture(s) (accepted, historical, recorded) of %s run through both contracts; %d admitted by the old contract are refused by the new one", ran, fixturesDir, refused)
	if n := len(unexplained); n > 0 {
		shown := unexplained[:min(n, reports.MaxImpactExamples)]
		more := ""
		if n > len(shown) {
			more = ", …"
		}
		d.Evidence += fmt.Sprintf(" (%d for a reason no reported change explains: %s%s)", n, strings.Join(shown, ", "), more)
	}
	if len(capped) > 0 {
		d.Evidence += fmt.Sprintf("; only the first %d fixtures of %s were run", MaxImpactFixtures, strings.Join(capped, ", "))
	}
	if len(skipped) > 0 {
		d.Evidence += "; no evidence for " + strings.Join(skipped, "; ")
	}
	return nil
}

// refusingRules are the rules of a level other than compatible whose
// change can still refuse what the old contract admitted, so that a
// refusal is credited to them as to a narrowing: a member retyped (number
// to string refuses every number), a const, pattern or format changed, a
// semantic rule changed (it checks something else).
var refusingRules = []string{RuleTypeChanged, RuleConstChanged, RulePatternChanged, RuleFormatChanged, RuleManifestRuleChanged}

// refusesMore reports whether change c may make the new contract refuse a
// fixture the old admitted, and so gets fixture evidence: a narrowing (a
// compatible change) other than a version removed (its fixtures are not
// run: the new contract cannot judge them at all), or a change of
// refusingRules.
func refusesMore(c *reports.Change) bool {
	if c.Level == reports.Compatible {
		return c.Rule != RuleManifestVersionRemoved
	}
	return slices.Contains(refusingRules, c.Rule)
}

// credit counts a fixture (its body path) against narrowing c.
func credit(c *reports.Change, body string) {
	fe := c.Impact.Fixtures
	fe.Refused++
	if len(fe.Examples) < reports.MaxImpactExamples {
		fe.Examples = append(fe.Examples, body)
	}
}

// stageRank orders the gate's stages as it runs them; an unknown stage
// (internal) is 0, so every narrowing counts as later.
func stageRank(s gate.Stage) int {
	switch s {
	case gate.StageParse:
		return 1
	case gate.StageSchema, gate.StageUpstream:
		return 2
	case gate.StageSemantic:
		return 3
	case gate.StageProjection:
		return 4
	}
	return 0
}

// narrowingStage returns the rank (stageRank) of the stage at which
// narrowing c of comparison kind k and version cv refuses, and whether it
// applies to a fixture of upstream version ver at all: an upstream
// version's schema to its own fixtures, a rule to its version's, the
// limits, content types, policies and the agent-facing schema to every
// fixture. A version removed applies to none (its fixtures are not run).
func narrowingStage(k compKind, cv, ver string, c *reports.Change) (int, bool) {
	switch k {
	case kindVersion:
		return 2, cv == ver
	case kindAgent:
		return 4, true
	case kindManifest:
		switch c.Rule {
		case RuleManifestLimitLowered:
			if c.NewPointer == "/limits/max_bytes" {
				return 0, true
			}
			return 1, true
		case RuleManifestContentTypesNarrowed:
			return 0, true
		case RuleManifestFormatPolicyTightened:
			return 2, true
		case RuleManifestRuleAdded, RuleManifestRuleTightened, RuleManifestRuleChanged:
			return 3, strings.HasPrefix(c.NewPointer, key("upstream_versions", ver, "rules")+"/")
		case RuleManifestTextPolicyTightened:
			return 4, true
		}
	}
	return 0, false
}

// changeName names a change for "refused earlier by": its rule id and its
// JSON Pointer (the new manifest's key for a manifest change, the instance
// location and comparison for a schema change).
func changeName(cmp string, c *reports.Change) string {
	if c.File != "" {
		return c.Rule + " " + cmpOr(c.NewPointer, `""`)
	}
	return fmt.Sprintf("%s at %s (%s)", c.Rule, cmpOr(c.Instance, `""`), cmp)
}

// judgeLater judges the narrowings of pair r at stages after the one
// where the new contract refused a fixture (body, upstream version ver;
// ov the old contract's admitting verdict, nv the new refusal, explained
// by targets): the gate never ran them. A narrowing of the upstream
// version's schema (with a format policy tightened) is judged by
// validating the old verdict's value against the new schema, as the
// schema stage would; one of the agent-facing schema by validating the
// old agent output's data against the new agent schema, when the
// projection of ver and the text policy are the same in both contracts
// (so the new contract would project the same data). A fixture the
// narrowing refuses that way is credited to it. Any other later narrowing
// (a semantic rule, a text policy), or one whose judgment is not possible
// (the protocol changed, the validator panicked), counts the fixture as
// not judged, naming what refused it first. The cost is at most two
// validations per fixture.
func judgeLater(d *reports.Diff, r pairResult, ver, body string, ov, nv *gate.Verdict, targets []*reports.Change, validators map[string]*validator.Validator) {
	at := stageRank(nv.Stage)
	var earlier []string
	for i := range r.comparisons {
		for j := range d.Comparisons[r.first+i].Changes {
			c := &d.Comparisons[r.first+i].Changes[j]
			if slices.Contains(targets, c) {
				earlier = append(earlier, changeName(d.Comparisons[r.first+i].Name, c))
			}
		}
	}
	if len(earlier) == 0 {
		earlier = []string{"reason " + nv.Reason}
	}
	protocolChanged := slices.ContainsFunc(d.Comparisons[r.first+len(r.comparisons)-1].Changes, func(c reports.Change) bool {
		return c.Rule == RuleManifestProtocolChanged
	})
	// The direct judgments, made once per fixture on first need.
	var schemaDone, agentDone, schemaOK, agentOK bool
	var schemaBy, agentBy []*reports.Change
	judgeSchema := func() {
		schemaDone = true
		value, ok := introspect.Value(ov)
		sch, has := introspect.Schema(r.pair.New, ver)
		if !ok || !has || protocolChanged {
			return
		}
		vd := validators["v:"+ver]
		if vd == nil {
			vd = validator.Compile(sch)
			validators["v:"+ver] = vd
		}
		f, err := vd.ValidateSized(value, len(ov.Body), gate.MaxInstanceLocations)
		if err != nil {
			return
		}
		schemaOK = true
		if f == nil {
			return
		}
		e := &explainer{d: d, r: r, ver: ver}
		e.schemaFailure(kindVersion, f.Keyword, f.InstanceLocation, f.InstanceLocations, value, true)
		if f.Keyword == "format" {
			e.manifestRules(RuleManifestFormatPolicyTightened)
		}
		schemaBy = e.out
	}
	judgeAgent := func() {
		agentDone = true
		op, _ := r.pair.Old.Projection(ver)
		np, _ := r.pair.New.Projection(ver)
		if protocolChanged || !slices.EqualFunc(op, np, func(a, b gate.ProjectionField) bool {
			return a.Field == b.Field && slices.Equal(a.Pointer, b.Pointer)
		}) || !reflect.DeepEqual(r.old.M.Text, r.new.M.Text) {
			return
		}
		var env struct {
			Data map[string]any `json:"data"`
		}
		dec := json.NewDecoder(bytes.NewReader(ov.Output))
		dec.UseNumber()
		if err := dec.Decode(&env); err != nil || env.Data == nil {
			return
		}
		vd := validators["agent"]
		if vd == nil {
			vd = validator.Compile(introspect.AgentSchema(r.pair.New))
			validators["agent"] = vd
		}
		f, err := vd.ValidateSized(env.Data, len(ov.Body), gate.MaxInstanceLocations)
		if err != nil {
			return
		}
		agentOK = true
		if f == nil {
			return
		}
		e := &explainer{d: d, r: r, ver: ver}
		e.schemaFailure(kindAgent, f.Keyword, f.InstanceLocation, f.InstanceLocations, nil, false)
		agentBy = e.out
	}
	for i := range r.comparisons {
		for j := range d.Comparisons[r.first+i].Changes {
			c := &d.Comparisons[r.first+i].Changes[j]
			if c.Impact == nil || c.Impact.Fixtures == nil || slices.Contains(targets, c) {
				continue
			}
			stage, applies := narrowingStage(r.kinds[i], r.versions[i], ver, c)
			if !applies || stage <= at {
				continue
			}
			judged, refuses := false, false
			switch {
			case r.kinds[i] == kindVersion || c.Rule == RuleManifestFormatPolicyTightened:
				if !schemaDone {
					judgeSchema()
				}
				judged, refuses = schemaOK, slices.Contains(schemaBy, c)
			case r.kinds[i] == kindAgent:
				if !agentDone {
					judgeAgent()
				}
				judged, refuses = agentOK, slices.Contains(agentBy, c)
			}
			switch {
			case refuses:
				credit(c, body)
			case !judged:
				fe := c.Impact.Fixtures
				fe.NotJudged++
				for _, n := range earlier {
					if !slices.Contains(fe.RefusedEarlierBy, n) && len(fe.RefusedEarlierBy) < reports.MaxImpactExamples {
						fe.RefusedEarlierBy = append(fe.RefusedEarlierBy, n)
					}
				}
			}
		}
	}
}

// evidenceSet returns the set whose contract lists every upstream version
// folder of fixturesDir/tool (the new contract's first), or nil and why
// neither does. A tool without a fixture folder gets the new contract's.
func evidenceSet(fixturesDir, tool string, oset, nset *fixture.Set) (*fixture.Set, string) {
	entries, err := os.ReadDir(filepath.Join(fixturesDir, tool))
	if err != nil {
		return nset, ""
	}
	var folders []string
	for _, e := range entries {
		if e.IsDir() {
			folders = append(folders, e.Name())
		}
	}
	for _, s := range []*fixture.Set{nset, oset} {
		have := s.List[0].UpstreamVersions()
		if !slices.ContainsFunc(folders, func(v string) bool { return !slices.Contains(have, v) }) {
			return s, ""
		}
	}
	return nil, fmt.Sprintf("%s: %s holds folders of upstream versions %v, which neither contract lists all of (old %v, new %v)",
		tool, filepath.Join(fixturesDir, tool), folders, oset.List[0].UpstreamVersions(), nset.List[0].UpstreamVersions())
}

// The schema rules whose narrowing a refusal's keyword can come from
// (JSON Schema Validation 2020-12 §6, JSON Schema Core 2020-12 §10):
// schema.required by a property that became required, schema.enum and
// schema.const by an enum or const change, schema.type by a type narrowed
// (no longer nullable among them), the string keywords by their rules,
// schema.additionalProperties, unevaluatedProperties and a false schema by
// an object closed, the numeric, array and object bounds by theirs, a
// oneOf/anyOf by a branch removed.
var keywordRules = map[string][]string{
	"required":              {RuleBecameRequired},
	"dependentRequired":     {RuleBecameRequired},
	"enum":                  {RuleEnumValueRemoved, RuleEnumAdded, RuleConstChanged},
	"const":                 {RuleEnumValueRemoved, RuleEnumAdded, RuleConstChanged},
	"type":                  {RuleTypeNarrowed, RuleTypeChanged},
	"maxLength":             {RuleLengthTightened},
	"minLength":             {RuleLengthTightened},
	"pattern":               {RulePatternAdded, RulePatternChanged},
	"format":                {RuleFormatAdded, RuleFormatChanged},
	"additionalProperties":  {RuleObjectClosed},
	"unevaluatedProperties": {RuleObjectClosed},
	"false":                 {RuleObjectClosed, RuleTypeNarrowed},
	"minimum":               {RuleRangeTightened},
	"maximum":               {RuleRangeTightened},
	"exclusiveMinimum":      {RuleRangeTightened},
	"exclusiveMaximum":      {RuleRangeTightened},
	"multipleOf":            {RuleRangeTightened},
	"minItems":              {RuleItemsTightened},
	"maxItems":              {RuleItemsTightened},
	"minProperties":         {RuleMembersTightened},
	"maxProperties":         {RuleMembersTightened},
	"oneOf":                 {RuleBranchRemoved},
	"anyOf":                 {RuleBranchRemoved},
}

// structuralRules are narrowings that can explain a refusal of any keyword
// at or below their instance location: a property added to an open object
// (its new subschema refuses), a branch removed, a $ref re-targeted.
var structuralRules = []string{RulePropertyAddedOpen, RuleBranchRemoved, RuleRefTargetChanged}

// explainer collects the narrowing changes of pair r (those with fixture
// evidence) that account for one refusal of a fixture of upstream version
// ver.
type explainer struct {
	d   *reports.Diff
	r   pairResult
	ver string
	out []*reports.Change
}

// narrowings adds the narrowings of comparison i of the pair that keep
// accepts.
func (e *explainer) narrowings(i int, keep func(c *reports.Change) bool) {
	for j := range e.d.Comparisons[e.r.first+i].Changes {
		c := &e.d.Comparisons[e.r.first+i].Changes[j]
		if c.Impact != nil && c.Impact.Fixtures != nil && keep(c) {
			e.out = append(e.out, c)
		}
	}
}

func (e *explainer) manifestRules(ids ...string) {
	e.narrowings(len(e.r.comparisons)-1, func(c *reports.Change) bool { return slices.Contains(ids, c.Rule) })
}

// bySchema attributes a schema refusal with keyword kw at locs (RFC 6901
// instance locations) of value (when hasValue) to the narrowings of the
// comparisons of kind k (and, for kindVersion, of version ver): by keyword
// and location first, else a structural narrowing at or above a location.
func (e *explainer) bySchema(k compKind, kw string, locs []string, value any, hasValue bool) {
	var at []jsonpointer.Pointer
	for _, l := range locs {
		if p, err := jsonpointer.Parse(l); err == nil {
			at = append(at, p)
		}
	}
	for i, cv := range e.r.versions {
		if e.r.kinds[i] != k || k == kindVersion && cv != e.ver {
			continue
		}
		before := len(e.out)
		e.narrowings(i, func(c *reports.Change) bool {
			if !slices.Contains(keywordRules[kw], c.Rule) {
				return false
			}
			inst, err := jsonpointer.Parse(c.Instance)
			if err != nil {
				return false
			}
			for _, p := range at {
				if !touches(inst, p) {
					continue
				}
				// A property that became required explains the refusal
				// only if the refused object lacks it.
				if c.Rule == RuleBecameRequired && hasValue && len(inst) == len(p)+1 {
					if obj, ok := p.Lookup(value); ok {
						if m, ok := obj.(map[string]any); ok {
							if _, has := m[inst[len(inst)-1]]; has {
								continue
							}
						}
					}
				}
				return true
			}
			return false
		})
		if len(e.out) > before {
			continue
		}
		e.narrowings(i, func(c *reports.Change) bool {
			if !slices.Contains(structuralRules, c.Rule) {
				return false
			}
			inst, err := jsonpointer.Parse(c.Instance)
			if err != nil {
				return false
			}
			for _, p := range at {
				if len(inst) <= len(p) && touches(inst, p) {
					return true
				}
			}
			return false
		})
	}
}

// schemaFailure attributes a failure of the schema stage (or, k
// kindAgent, of the agent-facing schema) to the narrowings that explain it:
// by the chosen cause's location first, then by every failing location.
func (e *explainer) schemaFailure(k compKind, kw, loc string, locs []string, value any, hasValue bool) {
	e.bySchema(k, kw, []string{loc}, value, hasValue)
	if len(e.out) == 0 {
		e.bySchema(k, kw, locs, value, hasValue)
	}
}

// explain returns the narrowing changes of pair r that account for the
// new contract's refusal v of a fixture of upstream version ver, by the
// refusal's stage: for a schema refusal, the narrowings of that version's
// schema first by the refusal's keyword (keywordRules; for
// schema.required only a property the refused object lacks), then by
// instance location (the change's and the refusal's overlap), else a
// structural narrowing at or above the refusal's location, plus a format
// policy tightened for schema.format; for a semantic refusal the rule
// added, tightened or changed under the refusal's name; for transport and
// parse the limits and content types narrowed; for a projection refusal
// the text policy tightened, or the agent-facing schema's narrowings by
// keyword and location as for a schema refusal. nil when nothing explains
// it: the caller reports it as unexplained, never spread over every
// narrowing.
func explain(d *reports.Diff, r pairResult, ver string, v *gate.Verdict) []*reports.Change {
	e := &explainer{d: d, r: r, ver: ver}
	locations := func() []string {
		if len(v.Audit.InstanceLocations) > 0 {
			return v.Audit.InstanceLocations
		}
		return []string{v.Audit.InstanceLocation}
	}
	switch v.Stage {
	case gate.StageSchema:
		value, ok := introspect.Value(v)
		// The chosen cause's keyword is the reason's; its location is
		// InstanceLocation, listed first.
		e.schemaFailure(kindVersion, strings.TrimPrefix(v.Reason, "schema."), v.Audit.InstanceLocation, locations(), value, ok)
		if v.Reason == "schema.format" {
			e.manifestRules(RuleManifestFormatPolicyTightened)
		}
	case gate.StageSemantic:
		name := strings.TrimPrefix(v.Reason, "semantic.")
		prefix := key("upstream_versions", ver, "rules") + "/"
		e.narrowings(len(r.comparisons)-1, func(c *reports.Change) bool {
			if c.Rule != RuleManifestRuleAdded && c.Rule != RuleManifestRuleTightened && c.Rule != RuleManifestRuleChanged {
				return false
			}
			rest, ok := strings.CutPrefix(c.NewPointer, prefix)
			if !ok {
				return false
			}
			idx, _, _ := strings.Cut(rest, "/")
			j, err := strconv.Atoi(idx)
			rules := r.new.M.UpstreamVersions[ver].Rules
			return err == nil && j < len(rules) && rules[j].Name == name
		})
	case gate.StageTransport, gate.StageParse:
		e.manifestRules(RuleManifestLimitLowered, RuleManifestContentTypesNarrowed)
	case gate.StageProjection:
		e.manifestRules(RuleManifestTextPolicyTightened)
		if len(e.out) == 0 && v.Reason == gate.ReasonAgentSchema && v.Audit.KeywordLocation != "" {
			kl := v.Audit.KeywordLocation
			e.bySchema(kindAgent, kl[strings.LastIndex(kl, "/")+1:], locations(), nil, false)
		}
	}
	return e.out
}
