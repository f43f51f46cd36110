// Package mutate derives near-miss mutants from the accepted and
// historical fixtures a contract admits and proves that the gate refuses
// each one. It holds the four mutation families, a file each: structure
// (the value's shape), values (one scalar), bytes (below the JSON value:
// the parse and transport stages) and semantic (a value bound to the
// request); the proof (proof.go: through the whole gate, refused for the
// family's reason or by the projection stage, the output exactly the
// failure envelope, the mutant's canary nowhere in it; an admitted mutant
// either reaches the agent or is unseen); equivalence (equivalent.go:
// mutants that are the fixture, or whose value the schema names, are not
// run); the baseline of accepted survivors (baseline.go); where each
// survivor's hint goes (hint.go); the score per contract and upstream
// version (score.go); and writing mutants as near-miss fixtures
// (write.go). docs/mutate.md is the user's account of all of it.
//
// Mutants are a pure function of the fixture's bytes, its place in the
// fixture tree, the contract and the seed: the same inputs give the same
// mutants, ids, canaries, hints and written files, in the same order.
//
// Mutants are descriptions until proved: the cap (Options.MaxPerFixture)
// chooses among a fixture's mutants by index before any body is built,
// each worker builds one body at a time and drops it after the gate's
// check, and the oversize mutant is a stream (see mutateFixture). A
// Report's results hold no body; Mutant.Check and WriteMutants build it
// again from the fixture.
package mutate

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/bits"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/introspect"
	"github.com/airlockdev/airlock/internal/shard"
	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/reports"
	"github.com/airlockdev/airlock/semantic"
)

// Suite is the name of the suite mutation results form in a run's report.
const Suite = "mutation"

// DefaultMaxMutants is the default cap of mutants per fixture.
const DefaultMaxMutants = 400

// Options configure Mutate.
type Options struct {
	// SchemasDir holds one folder per tool contract; FixturesDir the
	// fixture trees; Filter selects fixtures (empty: all).
	SchemasDir  string
	FixturesDir string
	Filter      fixture.Filter
	// Workers is the number of fixtures mutated at once; 0 means
	// runtime.GOMAXPROCS(0).
	Workers int
	// Gate is the contract loading options (custom rules).
	Gate gate.Options
	// Seed makes the choice of mutants under the cap reproducible; 0 means 1.
	Seed uint64
	// MaxPerFixture caps the mutants of one fixture; 0 means
	// DefaultMaxMutants, a negative value means no cap.
	MaxPerFixture int
	// Strict counts Unseen mutants against the score and as failures
	// (MutantResult.Fails); the caller fails on stale baseline entries
	// too (Report.Stale). Default false: unseen mutants are reported apart.
	Strict bool
	// Progress, when set, is called after each accepted or historical
	// fixture is mutated with how many are done and how many there are,
	// from the worker that mutated it (calls may come from several
	// goroutines at once). nil: none.
	Progress func(done, total int)
}

// Report is the result of Mutate.
type Report struct {
	Results []MutantResult
	Scores  []Score
	// Skipped lists fixtures whose original was not admitted, with why.
	Skipped []string
	// Broken lists the selected contracts that did not load, sorted by
	// tool (fixture.Set.Broken): their fixtures were not mutated.
	Broken []fixture.Broken
	// Stale lists the baseline entries that silence nothing any more, by
	// tool, in file order (applyBaseline says when an entry is judged).
	Stale []StaleEntry
	// Unscored lists, by tool then upstream version (as the manifest
	// sorts them), each selected upstream version of a loaded contract that
	// no mutant was run for: no accepted or historical fixture of it was
	// admitted. Its score is unknown, not 100%.
	Unscored []Unscored
	// Strict is Options.Strict.
	Strict bool
	// Shard is Options.Filter.Shard with the digest of the selection it
	// partitions (fixture.Set.Shard): under a shard the results are of that
	// shard's fixtures, and Broken, Unscored and the stale entries of no
	// selected fixture are reported by shard 1 alone.
	Shard shard.Shard
	// Duration is the wall time of the run, from loading the contracts to
	// the scores. The results' Durations add up to at most it: with
	// several workers, whose mutants overlap in time, each result's
	// Duration is its share of it (shareDurations).
	Duration time.Duration
}

// Unscored is an upstream version of a contract that has no score.
type Unscored struct {
	Tool, UpstreamVersion string
	// Dir is the version's fixture folder, FixturesDir/tool/version.
	Dir string
	// Fixtures is the number of its accepted and historical fixtures
	// selected; Skipped says, for each, why it was not mutated
	// ("path: not admitted (schema.required)"), as Report.Skipped does.
	Fixtures int
	Skipped  []string
}

// String is "no admitted accepted or historical fixture (N skipped:
// path: why; …)"; "(0 skipped: none is selected in the fixture tree)"
// when it has none.
func (u Unscored) String() string {
	if u.Fixtures == 0 {
		return "no admitted accepted or historical fixture (0 skipped: none is selected in the fixture tree)"
	}
	return fmt.Sprintf("no admitted accepted or historical fixture (%d skipped: %s)", len(u.Skipped), strings.Join(u.Skipped, "; "))
}

// Survivors returns the results that fail (MutantResult.Fails): those
// that reach the agent, wrong reasons and leaks, and under Strict the
// unseen ones. Killed, baselined and equivalent mutants are not in it,
// nor unseen ones unless Strict.
func (r *Report) Survivors() []MutantResult {
	var out []MutantResult
	for _, x := range r.Results {
		if x.Fails(r.Strict) {
			out = append(out, x)
		}
	}
	return out
}

// Mutate derives near-miss mutants from every accepted and historical
// fixture the gate admits and proves each one: refused for the family it
// was built to trip, its agent output exactly the failure envelope, its
// canary nowhere in that output. Results are in fixture then generation
// order. A contract that does not load is in Report.Broken, and the other
// tools are mutated completely; other configuration errors (including a
// selection with no fixture to mutate and no broken contract) are
// *gate.ConfigError values.
func Mutate(ctx context.Context, opts Options) (*Report, error) {
	start := time.Now()
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	if opts.MaxPerFixture == 0 {
		opts.MaxPerFixture = DefaultMaxMutants
	}
	// Only accepted and historical fixtures are mutated: discovery selects
	// only those, so a shard's share (--shard) is of the fixtures mutate
	// works on, not of near-misses it would skip.
	filter := opts.Filter
	filter.Kinds = mutatedKinds(filter.Kinds)
	set, err := fixture.Open(opts.SchemasDir, opts.FixturesDir, filter, opts.Gate)
	if err != nil {
		return nil, err
	}
	fixtures := slices.DeleteFunc(slices.Clone(set.Fixtures), func(f fixture.Fixture) bool {
		return f.Kind != fixture.KindAccepted && f.Kind != fixture.KindHistorical
	})
	sharded := !opts.Filter.Shard.IsZero()
	if len(fixtures) == 0 && len(set.Broken) == 0 && !sharded {
		return nil, &gate.ConfigError{File: opts.FixturesDir, Msg: "no accepted or historical fixtures selected: nothing to mutate"}
	}
	type perFixture struct {
		results []MutantResult
		skipped string
		err     error
	}
	outs := make([]perFixture, len(fixtures))
	var done atomic.Int64
	fixture.ForEach(ctx, len(fixtures), opts.Workers, func(i int) {
		f := fixtures[i]
		res, skipped, err := mutateFixture(ctx, set, f, opts)
		outs[i] = perFixture{res, skipped, err}
		if opts.Progress != nil {
			opts.Progress(int(done.Add(1)), len(fixtures))
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	rep := &Report{Strict: opts.Strict, Shard: set.Shard}
	if opts.Filter.Shard.ReportsContract() {
		rep.Broken = set.Broken
	}
	var errs []error
	for i, o := range outs {
		switch {
		case o.err != nil:
			errs = append(errs, o.err)
		case o.skipped != "":
			rep.Skipped = append(rep.Skipped, fixtures[i].Body+": "+o.skipped)
		default:
			rep.Results = append(rep.Results, o.results...)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	skipped := make([]string, len(outs))
	for i, o := range outs {
		skipped[i] = o.skipped
	}
	if sharded {
		if rep.Unscored, err = unscoredSharded(ctx, set, opts, fixtures, skipped, rep.Results); err != nil {
			return nil, err
		}
	} else {
		rep.Unscored = unscored(set, opts.FixturesDir, fixtures, skipped, scoredOf(rep.Results), opts.Filter)
	}
	if len(rep.Results) == 0 && len(rep.Broken) == 0 && !sharded {
		return nil, &gate.ConfigError{File: opts.FixturesDir, Msg: fmt.Sprintf("no mutant generated: none of the %d selected fixtures was admitted (%s)", len(fixtures), strings.Join(rep.Skipped, "; "))}
	}
	// mm: the baseline, the hints' lines and the scores, over every result.
	if err := applyBaseline(set, fixtures, opts, rep); err != nil {
		return nil, err
	}
	placeHints(set, rep.Results)
	rep.Scores = scoresOf(rep.Results, opts.Strict)
	rep.Duration = time.Since(start)
	shareDurations(rep.Results, rep.Duration)
	return rep, nil
}

// shareDurations makes the results' Durations add up to at most wall, the
// run's wall time: when workers overlapped and the mutants' own times add
// up to more, each becomes its share of wall in proportion to its own time
// (d × wall / sum, rounded down, computed exactly in 128 bits), so a
// report's per-suite sums never exceed the run's wall time. When they add
// up to wall or less (one worker), they are left as they are.
func shareDurations(results []MutantResult, wall time.Duration) {
	var sum uint64
	for _, r := range results {
		if r.Duration > 0 {
			sum += uint64(r.Duration)
		}
	}
	if wall <= 0 || sum <= uint64(wall) {
		return
	}
	for i := range results {
		d := results[i].Duration
		if d <= 0 {
			continue
		}
		hi, lo := bits.Mul64(uint64(d), uint64(wall))
		q, _ := bits.Div64(hi, lo, sum) // d ≤ sum, so the quotient fits: ≤ wall
		results[i].Duration = time.Duration(q)
	}
}

// mutateFixture generates the mutants of one fixture and proves them. It
// returns why it skipped the fixture instead when the fixture is not
// expected, or not found, to be admitted.
//
// Generation runs twice and builds no body: a first pass counts the
// mutants, the cap chooses among them by index (sampleMutants), and a
// second pass keeps the descriptions of the chosen ones only. Canaries are
// numbered in generation order in both passes, so the chosen mutants are
// the ones, with the same canaries, that generating every mutant and then
// sampling gives. Each kept mutant's body is then built, checked and
// dropped in turn (prove): memory is the fixture (raw and parsed), the
// kept descriptions (O(cap)), 4 bytes per generated mutant while
// choosing, and one mutant body.
func mutateFixture(ctx context.Context, set *fixture.Set, f fixture.Fixture, opts Options) ([]MutantResult, string, error) {
	start := time.Now()
	p, err := set.Prepare(f)
	if err != nil {
		return nil, "", err
	}
	j, skipped, err := fixtureMutator(ctx, set, f, p)
	if j == nil {
		return nil, skipped, err
	}
	m := j.m
	if opts.MaxPerFixture > 0 {
		m.counting = true
		m.generate()
		idx := sampleMutants(m.tiers, opts.MaxPerFixture, opts.Seed, fixtureKey(f))
		m.counting, m.tiers = false, nil
		m.restart(keepIndices(idx))
	}
	m.generate()
	mutants := m.out
	m.out = nil
	setup := time.Since(start)
	results, err := prove(ctx, set, f, p, j, mutants)
	if err != nil {
		return nil, "", err
	}
	if len(results) > 0 {
		share := setup / time.Duration(len(results))
		for i := range results {
			results[i].Duration += share
		}
	}
	return results, "", nil
}

// fixtureMutator checks f (prepared as p) and prepares the mutation of its
// admitted verdict (the judge: that verdict and the mutator); a nil judge comes with why f is skipped (not
// expected, or not found, to be admitted) or an error.
func fixtureMutator(ctx context.Context, set *fixture.Set, f fixture.Fixture, p fixture.Prepared) (*judge, string, error) {
	if p.Expect.Outcome != "admitted" {
		return nil, "expected refused", nil
	}
	orig, err := set.CheckPrepared(ctx, f, p)
	if err != nil {
		return nil, "", err
	}
	if !orig.Admitted {
		return nil, "not admitted (" + orig.Reason + ")", nil
	}
	c := set.Contracts[f.Tool]
	schema, _ := introspect.Schema(c, f.UpstreamVersion) // discovery keeps only c's versions
	m, err := newMutator(c, f, orig, p.Expect.Request, schema)
	if err != nil {
		return nil, "", err
	}
	return &judge{orig: orig, m: m}, "", nil
}

// restart makes m generate again from the start, keeping the mutants keep
// chooses (nil: every one); facts already gathered are kept.
func (m *mutator) restart(keep func(int) bool) {
	m.n, m.seq, m.out, m.keep = 0, 0, nil, keep
}

// keepIndices is a mutator's keep for the sorted generation indices idx;
// nil idx keeps every mutant.
func keepIndices(idx []int) func(int) bool {
	if idx == nil {
		return nil
	}
	return func(seq int) bool {
		_, found := slices.BinarySearch(idx, seq)
		return found
	}
}

// rebuild derives again, from fixture f prepared as p, the descriptions of
// mutants ms (results of a Mutate run over f), in the order of ms, ready to
// build: one generation for all of them. A mutant not from Mutate, or one
// the fixture no longer gives (the fixture, its sidecar or the contract
// changed since), is a *gate.ConfigError naming the fixture.
func rebuild(ctx context.Context, set *fixture.Set, f fixture.Fixture, p fixture.Prepared, ms []Mutant) ([]Mutant, error) {
	idx := make([]int, 0, len(ms))
	for _, mu := range ms {
		if mu.seq == 0 {
			return nil, &gate.ConfigError{File: f.Body, Msg: "mutant " + mu.ID + " was not generated by airlock mutate: cannot build its body"}
		}
		idx = append(idx, mu.seq-1)
	}
	slices.Sort(idx)
	idx = slices.Compact(idx)
	jm, skipped, err := fixtureMutator(ctx, set, f, p)
	if jm == nil {
		if err == nil {
			err = &gate.ConfigError{File: f.Body, Msg: "cannot build its mutants again: " + skipped + " (changed since the mutation run?)"}
		}
		return nil, err
	}
	m := jm.m
	m.keep = keepIndices(idx)
	m.generate()
	out := make([]Mutant, len(ms))
	for i, mu := range ms {
		j, found := slices.BinarySearchFunc(m.out, mu.seq, func(x Mutant, seq int) int { return x.seq - seq })
		if !found || m.out[j].ID != mu.ID {
			return nil, &gate.ConfigError{File: f.Body, Msg: "mutant " + mu.ID + " is no longer generated from this fixture (the fixture, its sidecar or the contract changed since the mutation run)"}
		}
		out[i] = m.out[j]
	}
	return out, nil
}

// agentPaths lists what the agent sees of upstream version v of c, as
// instance locations relative to the value the contract validates: the
// projection's pointers, then ruled, the pointers the rules read (RFC 6901
// text; "" for a rule that may read anything).
func agentPaths(c *gate.Contract, v string, ruled []string) []jsonpointer.Pointer {
	var out []jsonpointer.Pointer
	fields, _ := c.Projection(v)
	for _, f := range fields {
		out = append(out, f.Pointer)
	}
	for _, s := range ruled {
		if p, err := jsonpointer.Parse(s); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// builtBodies counts the mutant bodies built since the process started;
// the specs read it (export_test.go) to check that no more than the cap
// are built per fixture.
var builtBodies atomic.Int64

func countBuilt() { builtBodies.Add(1) }

// fixtureKey is the fixture's place in its tree, tool/version/kind/name:
// canaries and the sample under the cap depend on it, not on where the
// tree is checked out.
func fixtureKey(f fixture.Fixture) string {
	return f.Tool + "/" + f.UpstreamVersion + "/" + f.Kind + "/" + f.Name
}

// newMutator prepares the mutation of the admitted verdict orig of f under
// req.
func newMutator(c *gate.Contract, f fixture.Fixture, orig *gate.Verdict, req semantic.Request, schema *jsonschema.Schema) (*mutator, error) {
	body := orig.Body
	value, err := rawValue(c, orig)
	if err != nil {
		return nil, fmt.Errorf("%s: admitted body does not parse: %w", f.Body, err)
	}
	uv := introspect.Manifest(c).UpstreamVersions[f.UpstreamVersion]
	// For an MCP contract, rules and schema facts are relative to
	// structuredContent, or to a text block's JSON text, while mutants
	// change the whole CallToolResult. A text result is mutated with its
	// JSON text parsed in place of the string, and written back into it.
	prefix := ""
	var text *textResult
	if c.Protocol() == gate.ProtocolMCP {
		prefix = "/structuredContent"
		if at, isText := introspect.Extracted(orig); isText {
			prefix = at.String()
			s, _ := at.Lookup(value)
			inner, _ := introspect.Value(orig)
			text = &textResult{wrapper: value, json: s.(string), at: at}
			value = setAt(value, at, inner)
		}
	}
	scope, _ := jsonpointer.Parse(prefix)
	var rules []RuleSpecView
	var ruled []string // every pointer a rule reads, relative to the validated value
	opaque := false
	for _, r := range uv.Rules {
		switch {
		case r.Binding != nil:
			rules = append(rules, RuleSpecView{r.Name, prefix + r.Binding.Pointer, true})
			ruled = append(ruled, r.Binding.Pointer)
		case r.Context != nil:
			rules = append(rules, RuleSpecView{r.Name, prefix + r.Context.Pointer, true})
			ruled = append(ruled, r.Context.Pointer)
		case r.Membership != nil:
			rules = append(rules, RuleSpecView{r.Name, prefix + r.Membership.Pointer, true})
			ruled = append(ruled, r.Membership.Pointer)
		case r.Freshness != nil:
			rules = append(rules, RuleSpecView{r.Name, prefix + r.Freshness.Pointer, false})
			ruled = append(ruled, r.Freshness.Pointer)
		case r.Count != nil:
			opaque = true // mm: count, cel, custom
			ruled = append(ruled, r.Count.Pointer)
			if r.Count.EqualsPointer != "" {
				ruled = append(ruled, r.Count.EqualsPointer)
			}
		default:
			opaque = true             // mm: count, cel, custom
			ruled = append(ruled, "") // may read anything
		}
	}
	h := fnv.New32a()
	h.Write([]byte(fixtureKey(f)))
	return &mutator{
		raw:      body,
		text:     text,
		value:    value,
		limits:   c.Limits(),
		rules:    rules,
		request:  req,
		scope:    scope,
		schema:   schema,
		canaryID: fmt.Sprintf("%08x", h.Sum32()),
		// mm: equivalence and hint locations
		contract: c, version: f.UpstreamVersion, opaqueRules: opaque,
		agentPaths: agentPaths(c, f.UpstreamVersion, ruled),
	}, nil
}

// EquivalentMessage starts the Message of an equivalent mutant's case
// (reports.Unchecked by design: --fail-unchecked does not count it).
const EquivalentMessage = "equivalent (not run): "

// UnscoredName is the testcase name of an upstream version with no score
// (Report.Unscored), on the class tool.version.accepted.mutation.
const UnscoredName = reports.UnscoredName

// Cases turns mutation results into testcases of the "mutation" suite, and
// each broken contract into its tool's reports.ContractError case (suite
// reports.SuiteContract, status reports.Errored), in tool order. A result
// that fails (MutantResult.Fails) is Failed, its message naming the
// outcome, the problem and where the hint's keyword goes (file:line:
// pointer), its detail the hint, that place, the survivor's value and the
// diff; unseen (unless Strict) and baselined mutants pass with Actual
// "admitted (unseen)" or "admitted (baselined)" and a Message saying so
// (for a baselined one, the entry's reason, file and line: JUnit writes it
// as the testcase's system-out); equivalent mutants were not run: they are
// Unchecked cases (JUnit skipped) with Actual "not run" and the Message
// "equivalent (not run): " and why. Each upstream version with no score
// (Report.Unscored) is an Unchecked case named UnscoredName with Actual
// "not run" and the Message "not scored: " and why. Under Strict each stale baseline entry is a
// Failed case named "baseline:<mutant id>" on its fixture's class, its
// file the baseline file.
func (r *Report) Cases() []reports.Case {
	out := make([]reports.Case, 0, len(r.Results)+len(r.Broken))
	for _, b := range r.Broken {
		out = append(out, reports.ContractError(b.Tool, gate.ManifestFile, b.Err.File, b.Err.Line, b.Err.Column, b.Err.Error()))
	}
	for _, x := range r.Results {
		c := reports.Case{
			Tool: x.Fixture.Tool, UpstreamVersion: x.Fixture.UpstreamVersion, Kind: x.Fixture.Kind,
			Suite: Suite, Name: x.Fixture.Name + "#" + x.Mutant.ID, File: x.Fixture.Body,
			Status: reports.Passed, Expected: strings.Join(x.Mutant.Expect, " | "), Actual: x.Actual,
			Duration: x.Duration,
		}
		switch {
		case x.Fails(r.Strict):
			c.Status = reports.Failed
			c.Message = string(x.Outcome) + ": " + x.Problem
			if x.Location != nil {
				c.Message += " (at " + x.Location.String() + ")"
			}
			c.Detail = x.HintText() + "\n-original +mutant\n" + x.Diff()
		case x.Outcome == Equivalent:
			c.Status, c.Message = reports.Unchecked, EquivalentMessage+x.Problem
		case x.Outcome == Unseen:
			c.Actual = "admitted (unseen)"
			c.Message = "admitted (unseen): the agent output is the fixture's"
		case x.Outcome == Baselined:
			c.Actual = "admitted (baselined)"
			c.Message = "admitted (baselined): " + x.Problem
			if e := x.Baseline; e != nil {
				c.Message = fmt.Sprintf("admitted (baselined): %s (%s:%d)", e.Reason, e.File, e.Line)
			}
		}
		out = append(out, c)
	}
	for _, u := range r.Unscored {
		out = append(out, reports.Case{
			Tool: u.Tool, UpstreamVersion: u.UpstreamVersion, Kind: fixture.KindAccepted, Suite: Suite,
			Name: UnscoredName, File: u.Dir, Status: reports.Unchecked, Expected: "a score", Actual: "not run",
			Message: "not scored: " + u.String(),
		})
	}
	if r.Strict {
		// By fixture (upstream version, kind, name), then file order: the
		// order a merge of shards, each judging its own fixtures' entries,
		// reproduces (reports.MergeRuns).
		stale := slices.Clone(r.Stale)
		slices.SortStableFunc(stale, func(a, b StaleEntry) int { return compareStale(a.Fixture, b.Fixture) })
		for _, st := range stale {
			parts := strings.Split(st.Fixture, "/") // checked by ReadBaseline
			out = append(out, reports.Case{
				Tool: parts[0], UpstreamVersion: parts[1], Kind: parts[2], Suite: Suite,
				Name: parts[3] + "#baseline:" + st.Mutant, File: st.File, Status: reports.Failed,
				Expected: "a surviving mutant", Actual: st.Why,
				Message: fmt.Sprintf("stale baseline entry at %s:%d: %s", st.File, st.Line, st.Why),
			})
		}
	}
	slices.SortStableFunc(out, func(a, b reports.Case) int { return strings.Compare(a.Tool, b.Tool) })
	return out
}

// compareStale orders two baseline entries' fixtures, tool/upstream-
// version/kind/name, by upstream version, kind in fixture.Kinds order and
// name (tools are ordered by the caller).
func compareStale(a, b string) int {
	pa, pb := strings.SplitN(a, "/", 4), strings.SplitN(b, "/", 4)
	if len(pa) < 4 || len(pb) < 4 {
		return strings.Compare(a, b)
	}
	if c := strings.Compare(pa[1], pb[1]); c != 0 {
		return c
	}
	if c := slices.Index(fixture.Kinds, pa[2]) - slices.Index(fixture.Kinds, pb[2]); c != 0 {
		return c
	}
	return strings.Compare(pa[3], pb[3])
}

// HintText is the hint of an admitted mutant in full, one item a line:
// the keyword or rule to add, where it goes (file:line: pointer, and the
// instance location it constrains), what to add there when the location
// lies inside a shared component (HintLocation.AddText), and the
// survivor's value.
func (r MutantResult) HintText() string {
	s := "hint: " + r.Mutant.Hint
	if h := r.Location; h != nil {
		s += "\nwhere: " + h.String() + " (instance " + ShowPointer(h.Instance) + ")"
		if add := h.AddText(r.Mutant.Hint); add != "" {
			s += "\nadd: " + add
		}
		if h.Value != "" {
			s += "\nvalue: " + h.Value
		}
	}
	return s
}

// rawValue is the decoded body mutants are made from: the value the gate
// validated, or for an MCP contract the whole CallToolResult around it
// (mutants change the wrapper too), parsed under the contract's limits.
func rawValue(c *gate.Contract, v *gate.Verdict) (any, error) {
	if c.Protocol() != gate.ProtocolMCP {
		if value, ok := introspect.Value(v); ok {
			return value, nil
		}
	}
	l := c.Limits()
	return strictjson.Parse(v.Body, strictjson.Limits{MaxDepth: l.MaxDepth, MaxNumberLength: l.MaxNumberLength, MaxStringLength: l.MaxStringLength})
}

// mutatedKinds narrows a filter's kinds to those mutate works on,
// accepted and historical: both for an empty list, else the ones the list
// names. A list naming neither is kept as it is, so that nothing is
// selected (an empty list would select every kind).
func mutatedKinds(kinds []string) []string {
	mutated := []string{fixture.KindAccepted, fixture.KindHistorical}
	if len(kinds) == 0 {
		return mutated
	}
	var out []string
	for _, k := range kinds {
		if slices.Contains(mutated, k) {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		return kinds
	}
	return out
}
