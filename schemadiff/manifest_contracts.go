package schemadiff

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/introspect"
	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/reports"
)

// ContractOptions are the options of a diff of whole contracts.
type ContractOptions struct {
	// Gate is how the contracts load.
	Gate gate.Options
	// Fixtures is the fixtures folder (fixtures/<tool>/<upstream-version>/
	// <kind>/) whose accepted, historical and recorded fixtures the
	// gate-impact view runs through the old and the new contract. ""
	// gathers no evidence; a folder that does not exist gives none either,
	// and Diff.Evidence says so.
	Fixtures string
}

// MaxImpactFixtures is the most fixtures of one tool the gate-impact view
// runs through both contracts; Diff.Evidence says when a tool has more and
// the rest were not run. Each costs two gate checks, so the view's time is
// at most 2 × MaxImpactFixtures checks per tool.
const MaxImpactFixtures = 10000

// ContractPair is two revisions of one tool's contract. Either may be nil:
// a contract added (Old nil) or removed (New nil).
type ContractPair struct {
	Old, New *gate.Contract
	// OldManifest and NewManifest name each contract.yaml in reports; ""
	// names it as the contract's folder does.
	OldManifest, NewManifest string
}

// Contracts compares two contract directories (two revisions of one
// tool's contract): the agent-facing schemas, each upstream version present
// in both, in version order, then the manifests (the manifest rules of the
// registry), with the gate-impact view of every change. Problems loading
// either contract or the fixtures are *gate.ConfigError values.
func Contracts(ctx context.Context, oldDir, newDir string, opts ContractOptions) (*reports.Diff, error) {
	oc, err := gate.LoadDir(oldDir, opts.Gate)
	if err != nil {
		return nil, err
	}
	nc, err := gate.LoadDir(newDir, opts.Gate)
	if err != nil {
		return nil, err
	}
	return ComparePairs(ctx, []ContractPair{{Old: oc, New: nc}}, opts)
}

// ComparePairs compares each pair as Contracts does (a pair with one side
// only gets its manifest comparison: the contract added or removed), then
// runs the gate-impact view over all of them.
func ComparePairs(ctx context.Context, pairs []ContractPair, opts ContractOptions) (*reports.Diff, error) {
	d := &reports.Diff{}
	var done []pairResult
	for _, p := range pairs {
		r, err := comparePair(p)
		if err != nil {
			return nil, err
		}
		d.Comparisons = append(d.Comparisons, r.comparisons...)
		done = append(done, r)
	}
	// Impact reads the comparisons through indexes into d.Comparisons.
	at := 0
	for i := range done {
		done[i].first = at
		at += len(done[i].comparisons)
	}
	if err := impact(ctx, d, done, opts.Fixtures); err != nil {
		return nil, err
	}
	return d, nil
}

// pairResult is one pair's comparisons: the agent schema (agent true),
// each upstream version in both (version set), then the manifest.
type pairResult struct {
	pair        ContractPair
	old, new    *ManifestView
	comparisons []reports.Comparison
	versions    []string // per comparison: the upstream version, "" for the agent schema and the manifest
	// touched holds, per schema comparison and per change in order, the
	// watched labels the change touches (projectedLabel+field,
	// ruleLabel+rule name; see compareWatching); none for the manifest.
	touched [][][]string
	first   int // index of comparisons[0] in the Diff
}

func comparePair(p ContractPair) (pairResult, error) {
	r := pairResult{pair: p}
	var err error
	if p.Old != nil {
		if r.old, err = NewManifestView(p.Old, p.OldManifest); err != nil {
			return r, err
		}
	}
	if p.New != nil {
		if r.new, err = NewManifestView(p.New, p.NewManifest); err != nil {
			return r, err
		}
	}
	oc, nc := p.Old, p.New
	if oc != nil && nc != nil {
		// The agent schema: every agent field is watched at its member.
		watch := map[string][]jsonpointer.Pointer{}
		for _, f := range agentFields(p) {
			watch[projectedLabel+f] = []jsonpointer.Pointer{{f}}
		}
		cmp, touched, err := compareWatching(nc.Tool()+" agent schema",
			contractSchema(oc, introspect.Manifest(oc).AgentSchema, introspect.AgentSchema(oc)),
			contractSchema(nc, introspect.Manifest(nc).AgentSchema, introspect.AgentSchema(nc)), watch)
		if err != nil {
			return r, err
		}
		r.comparisons, r.versions, r.touched = append(r.comparisons, cmp), append(r.versions, ""), append(r.touched, touched)
		for _, v := range SortVersions(oc.UpstreamVersions()) {
			if _, ok := introspect.Manifest(nc).UpstreamVersions[v]; !ok {
				continue
			}
			cmp, touched, err := diffVersions(oc, nc, v, v, versionWatch(p, []*ManifestView{r.old, r.new}, v))
			if err != nil {
				return r, err
			}
			r.comparisons, r.versions, r.touched = append(r.comparisons, cmp), append(r.versions, v), append(r.touched, touched)
		}
	}
	tool, oldFile, newFile := "", "", ""
	if r.old != nil {
		tool, oldFile = r.old.M.Tool, r.old.File
	}
	if r.new != nil {
		tool, newFile = r.new.M.Tool, r.new.File
	}
	r.comparisons = append(r.comparisons, reports.Comparison{Name: tool + " manifest", Old: oldFile, New: newFile, Changes: Manifests(r.old, r.new)})
	r.versions = append(r.versions, "")
	return r, nil
}

// touches reports whether two instance locations overlap: one is a prefix
// of the other, token by token, "*" matching any token.
func touches(a, b jsonpointer.Pointer) bool {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] && a[i] != "*" && b[i] != "*" {
			return false
		}
	}
	return true
}

// rulePointers returns the pointers each semantic rule of upstream version
// v reads, by rule name (cel and custom rules read the whole value and are
// left out: they would touch every change).
func rulePointers(views []*ManifestView, v string) map[string][]jsonpointer.Pointer {
	out := map[string][]jsonpointer.Pointer{}
	for _, mv := range views {
		if mv == nil {
			continue
		}
		for _, r := range mv.M.UpstreamVersions[v].Rules {
			kind, ptr := ruleKind(r)
			ptrs := []string{ptr}
			if kind == "count" {
				ptrs = append(ptrs, r.Count.EqualsPointer)
			}
			if kind == "cel" || kind == "custom" {
				continue
			}
			for _, s := range ptrs {
				if p, err := jsonpointer.Parse(s); err == nil && s != "" {
					out[r.Name] = append(out[r.Name], p)
				}
			}
		}
	}
	return out
}

// projected returns, by agent field, the projection pointers of version v
// in either contract.
func projected(p ContractPair, v string) map[string][]jsonpointer.Pointer {
	out := map[string][]jsonpointer.Pointer{}
	for _, c := range []*gate.Contract{p.Old, p.New} {
		if c == nil {
			continue
		}
		fields, _ := c.Projection(v)
		for _, f := range fields {
			out[f.Field] = append(out[f.Field], f.Pointer)
		}
	}
	return out
}

// agentFields lists the agent fields of every version of either contract.
func agentFields(p ContractPair) []string {
	seen := map[string]bool{}
	for _, c := range []*gate.Contract{p.Old, p.New} {
		if c == nil {
			continue
		}
		for _, v := range c.UpstreamVersions() {
			fields, _ := c.Projection(v)
			for _, f := range fields {
				seen[f.Field] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for f := range seen {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// Labels of watched instance locations (compareWatching): an agent field
// by its projection pointers, a rule by its pointers.
const (
	projectedLabel = "field:"
	ruleLabel      = "rule:"
)

// versionWatch is what the schema comparison of upstream version v
// watches: each agent field's projection pointers and each rule's
// pointers, in either contract.
func versionWatch(p ContractPair, views []*ManifestView, v string) map[string][]jsonpointer.Pointer {
	watch := map[string][]jsonpointer.Pointer{}
	for f, ptrs := range projected(p, v) {
		watch[projectedLabel+f] = ptrs
	}
	for name, ptrs := range rulePointers(views, v) {
		watch[ruleLabel+name] = ptrs
	}
	return watch
}

// impact fills the gate-impact view of d: every schema change's projected
// fields and rules, and the fixture evidence of every narrowing.
func impact(ctx context.Context, d *reports.Diff, done []pairResult, fixturesDir string) error {
	for _, r := range done {
		for i := range r.versions {
			cmp := &d.Comparisons[r.first+i]
			if i == len(r.versions)-1 {
				continue // the manifest: its changes are judged by level
			}
			for j := range cmp.Changes {
				c := &cmp.Changes[j]
				im := &reports.Impact{}
				// Labels come sorted, so each list is sorted too.
				for _, label := range r.touched[i][j] {
					if f, ok := strings.CutPrefix(label, projectedLabel); ok {
						im.Projected = append(im.Projected, f)
					} else if name, ok := strings.CutPrefix(label, ruleLabel); ok {
						im.Rules = append(im.Rules, name)
					}
				}
				c.Impact = im
			}
		}
	}
	return evidence(ctx, d, done, fixturesDir)
}

// evidenceKinds are the fixtures that show what the upstream really sends.
var evidenceKinds = []string{fixture.KindAccepted, fixture.KindHistorical, fixture.KindRecorded}

// evidence runs each tool's accepted, historical and recorded fixtures
// through the old and the new contract and attributes each fixture the old
// admits and the new refuses to the narrowing changes that explain the
// refusal.
func evidence(ctx context.Context, d *reports.Diff, done []pairResult, fixturesDir string) error {
	if fixturesDir == "" {
		return nil
	}
	if st, err := os.Stat(fixturesDir); err != nil || !st.IsDir() {
		d.Evidence = fmt.Sprintf("no fixture evidence: %s is not a folder of fixtures, so no narrowing was run against recorded responses", fixturesDir)
		return nil
	}
	ran, refused, unexplained := 0, 0, 0
	var capped []string
	for _, r := range done {
		oc, nc := r.pair.Old, r.pair.New
		if oc == nil || nc == nil {
			continue
		}
		now := time.Now()
		nset := &fixture.Set{Contracts: map[string]*gate.Contract{nc.Tool(): nc}, List: []*gate.Contract{nc}, Start: now}
		oset := &fixture.Set{Contracts: map[string]*gate.Contract{nc.Tool(): oc}, List: []*gate.Contract{oc}, Start: now}
		sel, err := nset.Select(fixturesDir, fixture.Filter{Tools: []string{nc.Tool()}, Kinds: evidenceKinds})
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
		// Every narrowing of the pair gets evidence, refusing none until a
		// fixture says otherwise.
		if len(fixtures) > 0 {
			for i := range r.comparisons {
				for j := range d.Comparisons[r.first+i].Changes {
					c := &d.Comparisons[r.first+i].Changes[j]
					if c.Level != reports.Compatible {
						continue
					}
					if c.Impact == nil {
						c.Impact = &reports.Impact{}
					}
					c.Impact.Fixtures = &reports.FixtureEvidence{}
				}
			}
		}
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
				return err
			}
			ran++
			if !ov.Admitted || nv.Admitted {
				continue
			}
			refused++
			targets := explain(d, r, f.UpstreamVersion, nv)
			if len(targets) == 0 {
				unexplained++
			}
			for _, c := range targets {
				fe := c.Impact.Fixtures
				fe.Refused++
				if len(fe.Examples) < reports.MaxImpactExamples {
					fe.Examples = append(fe.Examples, f.Body)
				}
			}
		}
	}
	d.Evidence = fmt.Sprintf("gate impact: %d fixture(s) (accepted, historical, recorded) of %s run through both contracts; %d admitted by the old contract are refused by the new one", ran, fixturesDir, refused)
	if unexplained > 0 {
		d.Evidence += fmt.Sprintf(" (%d for a reason no reported change explains)", unexplained)
	}
	if len(capped) > 0 {
		d.Evidence += fmt.Sprintf("; only the first %d fixtures of %s were run", MaxImpactFixtures, strings.Join(capped, ", "))
	}
	return nil
}

// explain returns the narrowing changes of pair r that account for the
// new contract's refusal v of a fixture of upstream version ver: by the
// refusal's stage, the narrowings of that version's schema at an
// overlapping instance location (else all of them), the semantic rule
// added, tightened or changed under the refusal's name, the limits and
// content types lowered, or the text policy and agent schema narrowed.
func explain(d *reports.Diff, r pairResult, ver string, v *gate.Verdict) []*reports.Change {
	var out []*reports.Change
	narrowings := func(i int, keep func(c *reports.Change) bool) {
		for j := range d.Comparisons[r.first+i].Changes {
			c := &d.Comparisons[r.first+i].Changes[j]
			if c.Impact != nil && c.Impact.Fixtures != nil && keep(c) {
				out = append(out, c)
			}
		}
	}
	manifestAt := len(r.comparisons) - 1
	manifestRules := func(ids ...string) {
		narrowings(manifestAt, func(c *reports.Change) bool { return slices.Contains(ids, c.Rule) })
	}
	switch v.Stage {
	case gate.StageSchema:
		locs := v.Audit.InstanceLocations
		if len(locs) == 0 {
			locs = []string{v.Audit.InstanceLocation}
		}
		for i, cv := range r.versions {
			if cv != ver || i == 0 || i == manifestAt {
				continue
			}
			narrowings(i, func(c *reports.Change) bool {
				inst, err := jsonpointer.Parse(c.Instance)
				if err != nil {
					return false
				}
				for _, l := range locs {
					if p, err := jsonpointer.Parse(l); err == nil && touches(inst, p) {
						return true
					}
				}
				return false
			})
			if len(out) == 0 {
				narrowings(i, func(*reports.Change) bool { return true })
			}
		}
		if v.Reason == "schema.format" {
			manifestRules(RuleManifestFormatPolicyTightened)
		}
	case gate.StageSemantic:
		name := strings.TrimPrefix(v.Reason, "semantic.")
		prefix := key("upstream_versions", ver, "rules") + "/"
		narrowings(manifestAt, func(c *reports.Change) bool {
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
		manifestRules(RuleManifestLimitLowered, RuleManifestContentTypesNarrowed)
	case gate.StageProjection:
		manifestRules(RuleManifestTextPolicyTightened)
		if len(out) == 0 {
			narrowings(0, func(*reports.Change) bool { return true })
		}
	}
	return out
}
