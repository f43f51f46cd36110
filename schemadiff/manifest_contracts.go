package schemadiff

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/introspect"
	"github.com/airlockdev/airlock/internal/manifest"
	"github.com/airlockdev/airlock/internal/schema"
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
