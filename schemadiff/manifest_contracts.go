package schemadiff

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/introspect"
	"github.com/airlockdev/airlock/internal/manifest"
	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/validator"
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
	// OldError, when not nil, is why the old contract did not load (Old is
	// then nil): the pair is reported as the new contract added (or, New
	// nil too, the old one removed), the entry's message giving the error.
	// Tool names the tool then.
	OldError error
	Tool     string
}

// Contracts compares two contract directories (two revisions of one
// tool's contract): the agent-facing schemas, the agent error schemas (when
// both name one), each upstream version present in both, in version order,
// each followed by its error contracts present in both (matched by name,
// their schema files compared by content, whatever they are called), then
// the manifests (the manifest rules of the registry), with the gate-impact
// view of every change. Problems loading
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

// The kinds of a pair's comparisons, in the order comparePair makes them.
type compKind int

const (
	kindAgent      compKind = iota // the agent-facing schema
	kindAgentError                 // the agent error schema (agent_error_schema)
	kindVersion                    // an upstream version's schema
	kindError                      // an error contract's schema (errors entry)
	kindManifest                   // the manifest
)

// pairResult is one pair's comparisons: the agent schema, the agent error
// schema (when both have one), each upstream version in both followed by
// its error contracts in both, then the manifest.
type pairResult struct {
	pair        ContractPair
	old, new    *ManifestView
	comparisons []reports.Comparison
	versions    []string   // per comparison: the upstream version, "" for the agent schemas and the manifest
	kinds       []compKind // per comparison: what it compares
	// touched holds, per schema comparison and per change in order, the
	// watched labels the change touches (projectedLabel+field,
	// ruleLabel+rule name; see compareWatching); none for the manifest.
	touched [][][]string
	first   int // index of comparisons[0] in the Diff
}

func (r *pairResult) add(cmp reports.Comparison, version string, kind compKind, touched [][]string) {
	r.comparisons = append(r.comparisons, cmp)
	r.versions = append(r.versions, version)
	r.kinds = append(r.kinds, kind)
	r.touched = append(r.touched, touched)
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
	// renamedOnly holds the manifest keys of schema files renamed whose
	// contents compare equal: the gate judges as before, so the manifest's
	// "schema changed" entry for them is dropped.
	renamedOnly := map[string]bool{}
	if oc != nil && nc != nil {
		om, nm := r.old.M, r.new.M
		// The agent schema: every agent field is watched at its member.
		watch := map[string][]jsonpointer.Pointer{}
		for _, f := range agentFields(p) {
			watch[projectedLabel+f] = []jsonpointer.Pointer{{f}}
		}
		cmp, touched, err := compareWatching(nc.Tool()+" agent schema",
			contractSchema(oc, om.AgentSchema, introspect.AgentSchema(oc)),
			contractSchema(nc, nm.AgentSchema, introspect.AgentSchema(nc)), watch)
		if err != nil {
			return r, err
		}
		r.add(cmp, "", kindAgent, touched)
		// The agent error schema: every detail field is watched at its
		// member.
		if om.AgentErrorSchema != "" && nm.AgentErrorSchema != "" {
			watch := map[string][]jsonpointer.Pointer{}
			for _, f := range detailFields(om, nm) {
				watch[projectedLabel+detailLabel+f] = []jsonpointer.Pointer{{f}}
			}
			cmp, touched, err := compareFiles(nc.Tool()+" agent error schema", oc, om.AgentErrorSchema, nc, nm.AgentErrorSchema, watch)
			if err != nil {
				return r, err
			}
			r.add(cmp, "", kindAgentError, touched)
			if om.AgentErrorSchema != nm.AgentErrorSchema && len(cmp.Changes) == 0 {
				renamedOnly["/agent_error_schema"] = true
			}
		}
		for _, v := range SortVersions(oc.UpstreamVersions()) {
			nv, ok := nm.UpstreamVersions[v]
			if !ok {
				continue
			}
			cmp, touched, err := diffVersions(oc, nc, v, v, versionWatch(p, []*ManifestView{r.old, r.new}, v))
			if err != nil {
				return r, err
			}
			r.add(cmp, v, kindVersion, touched)
			// Each error contract in both, matched by name as the manifest
			// comparison matches it: its schema compared by content,
			// whatever its file is called, its detail pointers watched.
			newAt := byName(nv.Errors, func(s manifest.ErrorSpec) string { return s.Name })
			for _, oe := range om.UpstreamVersions[v].Errors {
				j, ok := newAt[oe.Name]
				if !ok {
					continue
				}
				ns := nv.Errors[j]
				watch := map[string][]jsonpointer.Pointer{}
				for _, s := range []manifest.ErrorSpec{oe, ns} {
					for f, ptr := range s.Detail {
						if q, err := jsonpointer.Parse(ptr); err == nil {
							watch[projectedLabel+detailLabel+f] = append(watch[projectedLabel+detailLabel+f], q)
						}
					}
				}
				cmp, touched, err := compareFiles(fmt.Sprintf("%s upstream %s error %s", nc.Tool(), v, oe.Name), oc, oe.Schema, nc, ns.Schema, watch)
				if err != nil {
					return r, err
				}
				r.add(cmp, v, kindError, touched)
				if oe.Schema != ns.Schema && len(cmp.Changes) == 0 && slices.Equal(oe.When.Status, ns.When.Status) && oe.When.IsError == ns.When.IsError && equalMaps(oe.Detail, ns.Detail) {
					renamedOnly[key("upstream_versions", v, "errors", strconv.Itoa(j))] = true
				}
			}
		}
	}
	tool, oldFile, newFile := "", "", ""
	if r.old != nil {
		tool, oldFile = r.old.M.Tool, r.old.File
	}
	if r.new != nil {
		tool, newFile = r.new.M.Tool, r.new.File
	}
	changes := slices.DeleteFunc(Manifests(r.old, r.new), func(c reports.Change) bool {
		return (c.Rule == RuleManifestErrorContractChanged || c.Rule == RuleManifestAgentErrorSchemaChanged) && renamedOnly[c.NewPointer]
	})
	if p.OldError != nil {
		// The old side did not load: the gate could not judge this tool's
		// responses with it, so the new contract is compared as added (or,
		// gone too, as removed), and the entry says why.
		tool, oldFile = cmpOr(tool, p.Tool), p.OldManifest
		if len(changes) == 0 {
			changes = []reports.Change{{Rule: manifestContractRemoved.ID, Level: manifestContractRemoved.Level,
				Message: fmt.Sprintf("contract %s was removed", tool), File: p.OldManifest}}
		}
		for i := range changes {
			changes[i].Message += "; the old contract did not load: " + p.OldError.Error()
		}
	}
	r.add(reports.Comparison{Name: tool + " manifest", Old: oldFile, New: newFile, Changes: changes}, "", kindManifest, nil)
	for i := range r.comparisons {
		r.comparisons[i].Tool = tool
	}
	return r, nil
}

// detailLabel prefixes the agent fields of an upstream error's detail in
// Impact.Projected: "detail.upstream_code".
const detailLabel = "detail."

// detailFields lists the detail fields of every error contract of either
// manifest, sorted.
func detailFields(ms ...manifest.Manifest) []string {
	seen := map[string]bool{}
	for _, m := range ms {
		for _, uv := range m.UpstreamVersions {
			for _, s := range uv.Errors {
				for f := range s.Detail {
					seen[f] = true
				}
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// compareFiles compares schema file oldName of oc with newName of nc (an
// error contract's schema, the agent error schema), compiled again from
// each contract's folder the way the gate compiled them when the contract
// loaded (same folder, shared components and format policy).
func compareFiles(name string, oc *gate.Contract, oldName string, nc *gate.Contract, newName string, watch map[string][]jsonpointer.Pointer) (reports.Comparison, [][]string, error) {
	o, err := compileContractFile(oc, oldName)
	if err != nil {
		return reports.Comparison{}, nil, err
	}
	n, err := compileContractFile(nc, newName)
	if err != nil {
		return reports.Comparison{}, nil, err
	}
	return compareWatching(name, o, n, watch)
}

// compileContractFile compiles schema file name of contract c in a folder
// view of its own (the contract's is read-only after load): the file and
// the documents its $refs reach were read and checked when c loaded, so
// this cannot fail on a contract that loaded, short of its files changing
// since; then the error is the compiler's, naming the file.
func compileContractFile(c *gate.Contract, name string) (*Schema, error) {
	sd := introspect.SchemaDir(c)
	d := schema.NewDir(sd.FS, sd.Folder, sd.Shown)
	d.Components, d.ComponentsShown, d.Formats = sd.Components, sd.ComponentsShown, sd.Formats
	policy, _, err := schema.ParseFormatPolicy(introspect.Manifest(c).Formats)
	if err != nil {
		return nil, err
	}
	root, err := d.CompileWith(name, policy)
	if err != nil {
		return nil, err
	}
	return &Schema{path: path.Join(sd.Shown, name), name: name, dir: d, docs: d.Docs, root: root}, nil
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
			kind, ptr := r.Kind()
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
// fields and rules, the agent fields of the manifest changes that alter
// what reaches the agent (manifestImpact), and the fixture evidence of
// every narrowing.
func impact(ctx context.Context, d *reports.Diff, done []pairResult, fixturesDir string) error {
	for _, r := range done {
		for i, kind := range r.kinds {
			cmp := &d.Comparisons[r.first+i]
			if kind == kindManifest {
				for j := range cmp.Changes {
					c := &cmp.Changes[j]
					im := &reports.Impact{Projected: manifestImpact(r, c)}
					if c.Rule == RuleManifestProjectionFieldRepoint && r.old != nil && r.new != nil {
						im.Repointed = repointed(r, c)
					}
					// A breaking manifest change that is not about the
					// projection makes the gate admit what it refused; so
					// does a new contract (a tool whose responses nothing
					// admitted before).
					im.Loosens = c.Level == reports.Breaking && c.Rule != RuleManifestProjectionFieldRemoved && c.Rule != RuleManifestProjectionFieldRepoint ||
						c.Rule == RuleManifestContractAdded
					if im.Counts() {
						c.Impact = im
					}
				}
				continue
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

// manifestImpact returns the agent fields a manifest change alters, sorted,
// for the changes that change what reaches the agent whatever their level:
// a projection field added, removed or re-pointed (that field), an
// upstream version added (its projection: responses naming it reach the
// agent), current changed (the projections of the old and the new current
// version: calls naming no version are judged and projected by another).
// nil for every other change.
func manifestImpact(r pairResult, c *reports.Change) []string {
	if r.old == nil || r.new == nil {
		return nil
	}
	fieldsOf := func(v *ManifestView, version string) []string {
		return slices.Sorted(maps.Keys(v.M.UpstreamVersions[version].Projection))
	}
	switch c.Rule {
	case RuleManifestProjectionFieldAdded:
		return []string{lastKey(c.NewPointer)}
	case RuleManifestProjectionFieldRemoved, RuleManifestProjectionFieldRepoint:
		return []string{lastKey(c.OldPointer)}
	case RuleManifestVersionAdded:
		return fieldsOf(r.new, lastKey(c.NewPointer))
	case RuleManifestCurrentChanged:
		out := append(fieldsOf(r.old, r.old.Contract.Current()), fieldsOf(r.new, r.new.Contract.Current())...)
		slices.Sort(out)
		return slices.Compact(out)
	}
	return nil
}

// repointed is the agent field, upstream version and old and new
// projection pointers of a manifest-projection-field-repointed change (its
// pointers are /upstream_versions/<version>/projection/<field>).
func repointed(r pairResult, c *reports.Change) *reports.Repointed {
	p, err := jsonpointer.Parse(c.NewPointer)
	if err != nil || len(p) != 4 {
		return nil
	}
	v, f := p[1], p[3]
	return &reports.Repointed{Field: f, UpstreamVersion: v,
		Old: r.old.M.UpstreamVersions[v].Projection[f], New: r.new.M.UpstreamVersions[v].Projection[f]}
}

// lastKey is the last reference token of a manifest JSON Pointer, unescaped.
func lastKey(ptr string) string {
	p, err := jsonpointer.Parse(ptr)
	if err != nil || len(p) == 0 {
		return ""
	}
	return p[len(p)-1]
}

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
		// Every narrowing of the pair gets evidence, refusing none until a
		// fixture says otherwise; not those of the error schemas: a response
		// an error contract matches is refused by either contract, so
		// admitted-then-refused never measures them.
		if len(fixtures) > 0 {
			for i := range r.comparisons {
				if r.kinds[i] == kindError || r.kinds[i] == kindAgentError {
					continue
				}
				for j := range d.Comparisons[r.first+i].Changes {
					c := &d.Comparisons[r.first+i].Changes[j]
					// A version removed is not judged: its fixtures are not
					// run (the new contract cannot judge them at all).
					if c.Level != reports.Compatible || c.Rule == RuleManifestVersionRemoved {
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
		case RuleManifestRuleAdded, RuleManifestRuleTightened:
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
