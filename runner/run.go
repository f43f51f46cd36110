// Package runner holds airlock's suites: each fixture of a fixture.Set goes
// through the gate, and the parse, schema, semantic and projection suites
// are checked separately, plus the no-leak proof for every fixture (leak.go)
// and the golden agent outputs (written under Options.Update). Results are
// reports.Case values in a deterministic order.
package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/fileio"
	"github.com/airlockdev/airlock/internal/introspect"
	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/reports"
)

// maxGolden is the largest golden agent output read, in bytes.
const maxGolden = 16 << 20

// Suites, in report order.
const (
	SuiteParse      = "parse"
	SuiteSchema     = "schema"
	SuiteSemantic   = "semantic"
	SuiteProjection = "projection"
	// SuiteError checks the fixtures of kind error (and any expectation of
	// upstream.<name>): the response matched a declared upstream error.
	SuiteError    = "error"
	SuiteNoLeak   = "no-leak"
	SuiteMutation = "mutation"
)

// Suites lists the suites a run can select.
var Suites = []string{SuiteParse, SuiteSchema, SuiteSemantic, SuiteProjection, SuiteError, SuiteNoLeak}

// Options configure a run.
type Options struct {
	// SchemasDir holds one folder per tool contract; FixturesDir the trees.
	SchemasDir  string
	FixturesDir string
	Filter      fixture.Filter
	// Suites selects suites by name; empty means all.
	Suites []string
	// Update writes or refreshes the golden agent output of every fixture
	// that is expected admitted and is admitted. Bodies and sidecars are
	// never touched.
	Update bool
	// Workers is the number of fixtures checked at once; 0 means
	// runtime.GOMAXPROCS(0).
	Workers int
	// Contract loading options (custom rules).
	Gate gate.Options
	// Progress, when set, is called after each fixture is checked with how
	// many are done and how many there are, from the worker that checked
	// it (calls may come from several goroutines at once). nil: none.
	Progress func(done, total int)
}

// Result is a finished run.
type Result struct {
	// Run holds, besides the fixtures' cases, one reports.Errored case
	// (suite reports.SuiteContract) per broken contract, in tool order.
	Run reports.Run
	// Broken lists the selected contracts that did not load, sorted by
	// tool (fixture.Set.Broken); their fixtures were not run. Empty in
	// every shard but shard 1 (shard.Shard.ReportsContract).
	Broken []fixture.Broken
	// Fixtures is how many fixtures were checked.
	Fixtures int
	// Updated lists the goldens written by Update, with "created" or
	// "updated".
	Updated []string
	// Set is the contracts and fixtures the run started from (shared:
	// read only), for a caller that looks at the same contracts again.
	Set *fixture.Set
}

// Run loads the contracts, discovers the fixtures and checks them in
// parallel; the report order is deterministic (tool, upstream version,
// kind, name). A contract that does not load is no error: it is in
// Result.Broken and is one Errored testcase of its tool, and every other
// tool runs completely. Any other configuration error (the schemas folder,
// a sidecar, the tree, a selection that matches no fixture and no broken
// contract) returns a *gate.ConfigError; every fixture's own failure is a
// failed testcase in the result, never an error.
//
// Result.Run.Command is reports.CommandRun. Under Options.Filter.Shard the
// run checks that shard's fixtures only and Result.Run.Shard says which
// shard it was, and of which fixture set (fixture.Set.Shard, the digest
// of the whole selection); an empty shard is a result
// without cases, not the "no fixtures selected" error (which only an
// unsharded selection gets), and the broken contracts (Result.Broken and
// their testcases) are reported by shard 1 alone
// (shard.Shard.ReportsContract), so merged shards hold each once.
//
// Under Update the run holds the fixture tree's lock (fileio.Tree.Lock)
// and writes goldens through its journal, so a kill leaves nothing the next
// command does not clean up.
func Run(ctx context.Context, opts Options) (*Result, error) {
	rc, err := setup(opts)
	if err != nil {
		return nil, err
	}
	if opts.Update {
		if rc.w, err = fileio.NewTree(opts.FixturesDir).Lock(ctx); err != nil {
			return nil, err
		}
		defer rc.w.Close()
	}
	fixtures := rc.set.Fixtures
	if len(fixtures) == 0 && len(rc.set.Broken) == 0 && opts.Filter.Shard.IsZero() {
		return nil, &gate.ConfigError{File: opts.FixturesDir, Msg: "no fixtures selected: nothing would be checked"}
	}
	start := rc.set.Start

	outs := make([]fixtureResult, len(fixtures))
	var done atomic.Int64
	fixture.ForEach(ctx, len(fixtures), opts.Workers, func(i int) {
		outs[i] = rc.check(ctx, fixtures[i])
		if opts.Progress != nil {
			opts.Progress(int(done.Add(1)), len(fixtures))
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	res := &Result{Fixtures: len(fixtures), Set: rc.set}
	res.Run.Shard = rc.set.Shard
	res.Run.Command = reports.CommandRun
	if opts.Filter.Shard.ReportsContract() {
		res.Broken = rc.set.Broken
	}
	var cfgErrs []error
	for _, o := range outs {
		if o.err != nil {
			cfgErrs = append(cfgErrs, o.err)
			continue
		}
		res.Run.Cases = append(res.Run.Cases, o.cases...)
		if o.updated != "" {
			res.Updated = append(res.Updated, o.updated)
		}
	}
	if len(cfgErrs) > 0 {
		return res, errors.Join(cfgErrs...)
	}
	res.Run.Cases = withBroken(res.Run.Cases, res.Broken)
	res.Run.Duration = time.Since(start)
	return res, nil
}

// withBroken returns cases with one reports.ContractError case per broken
// contract added in tool order (cases are in tool order already): name the
// manifest's file name, file the file the error names, message its text.
func withBroken(cases []reports.Case, broken []fixture.Broken) []reports.Case {
	if len(broken) == 0 {
		return cases
	}
	for _, b := range broken {
		cases = append(cases, reports.ContractError(b.Tool, gate.ManifestFile, b.Err.File, b.Err.Line, b.Err.Column, b.Err.Error()))
	}
	slices.SortStableFunc(cases, func(a, b reports.Case) int { return strings.Compare(a.Tool, b.Tool) })
	return cases
}

// setup opens the contracts and fixtures and checks the suite selection.
func setup(opts Options) (*runContext, error) {
	for _, s := range opts.Suites {
		if !slices.Contains(Suites, s) {
			return nil, fmt.Errorf("%w: unknown suite %q (want one of %v)", gate.ErrUsage, s, Suites)
		}
	}
	set, err := fixture.Open(opts.SchemasDir, opts.FixturesDir, opts.Filter, opts.Gate)
	if err != nil {
		return nil, err
	}
	rc := &runContext{opts: opts, set: set, constants: map[string]map[string]bool{}}
	for _, c := range set.List {
		// The agent schema as the contract parsed it: no second read.
		rc.constants[c.Tool()] = SchemaConstants(introspect.SchemaDocument(c, introspect.Manifest(c).AgentSchema))
	}
	return rc, nil
}

type runContext struct {
	w         *fileio.Writer // under Update: writes goldens
	opts      Options
	set       *fixture.Set
	constants map[string]map[string]bool
}

type fixtureResult struct {
	cases   []reports.Case
	updated string
	err     error
}

func (rc *runContext) wants(suite string) bool {
	return len(rc.opts.Suites) == 0 || slices.Contains(rc.opts.Suites, suite)
}

// suiteOf maps a stage to the suite that owns its refusals.
func suiteOf(stage gate.Stage) string {
	switch stage {
	case gate.StageTransport, gate.StageParse:
		return SuiteParse
	case gate.StageSchema, gate.StageInternal:
		return SuiteSchema
	case gate.StageSemantic:
		return SuiteSemantic
	case gate.StageUpstream:
		return SuiteError
	}
	return SuiteProjection
}

// check runs one fixture through the gate and its suites.
func (rc *runContext) check(ctx context.Context, f fixture.Fixture) fixtureResult {
	t0 := time.Now()
	p, err := rc.set.Prepare(f)
	if err != nil {
		return fixtureResult{err: err}
	}
	exp := p.Expect
	c := rc.set.Contracts[f.Tool]
	v, err := rc.set.CheckPrepared(ctx, f, p)
	if err != nil {
		return fixtureResult{err: err}
	}

	actual := "admitted"
	if !v.Admitted {
		actual = v.Reason
	}
	expected := exp.Outcome
	if exp.Reason != "" {
		expected = exp.Reason
	}
	var warnings []string
	for _, w := range v.Warnings {
		warnings = append(warnings, w.Code+" at "+strconv.Quote(w.InstanceLocation))
	}
	var out fixtureResult
	add := func(suite string, status reports.Status, msg, detail string) {
		if !rc.wants(suite) {
			return
		}
		out.cases = append(out.cases, reports.Case{
			Tool: f.Tool, UpstreamVersion: f.UpstreamVersion, Kind: f.Kind, Suite: suite,
			Name: f.Name, File: f.Body, Status: status,
			Expected: expected, Actual: actual, Message: msg, Detail: detail,
			Warnings: warnings,
		})
	}

	refusedIn := ""
	if !v.Admitted {
		refusedIn = suiteOf(v.Stage)
	}
	switch {
	case exp.Outcome == "admitted":
		out.updated = rc.checkAdmitted(ctx, f, c, v, refusedIn, add)
	case f.Kind == fixture.KindError && exp.Reason == "":
		checkMatchedError(v, add)
	case exp.Reason == "":
		checkUnstated(f, v, exp, refusedIn, add)
	default:
		checkRefused(v, exp, add)
	}

	// no-leak, for every fixture.
	if rc.wants(SuiteNoLeak) {
		status, msg, detail := rc.noLeak(f, c, v, exp)
		add(SuiteNoLeak, status, msg, detail)
	}
	// The fixture's time is counted once, on its first testcase, so suite
	// and run totals add up.
	if len(out.cases) > 0 {
		out.cases[0].Duration = time.Since(t0)
	}
	return out
}

// addCase adds one testcase of a fixture to its result, if its suite is selected.
type addCase func(suite string, status reports.Status, msg, detail string)

// checkAdmitted adds the cases of a fixture expected to be admitted: each
// stage's suite passes when the gate got past that stage, and the
// projection suite compares the golden. It returns the golden it updated.
func (rc *runContext) checkAdmitted(ctx context.Context, f fixture.Fixture, c *gate.Contract, v *gate.Verdict, refusedIn string, add addCase) string {
	if refusedIn == SuiteError {
		add(SuiteError, reports.Failed, fmt.Sprintf("expected admitted, refused as the declared upstream error %s", v.Reason), auditDetail(v))
		return ""
	}
	for _, s := range []string{SuiteParse, SuiteSchema, SuiteSemantic} {
		switch {
		case refusedIn == s:
			add(s, reports.Failed, fmt.Sprintf("expected admitted, refused by %s", v.Reason), auditDetail(v))
		case refusedIn != "" && slices.Index(Suites, refusedIn) < slices.Index(Suites, s):
			add(s, reports.Unchecked, "not reached: refused earlier by "+v.Reason, "")
		default:
			add(s, reports.Passed, "", "")
		}
	}
	switch {
	case refusedIn == SuiteProjection:
		add(SuiteProjection, reports.Failed, fmt.Sprintf("expected admitted, refused by %s", v.Reason), auditDetail(v))
	case refusedIn != "":
		add(SuiteProjection, reports.Unchecked, "not reached: refused earlier by "+v.Reason, "")
	default:
		status, msg, detail, updated := rc.projectionCase(ctx, f, c, v)
		add(SuiteProjection, status, msg, detail)
		return updated
	}
	return ""
}

// checkUnstated adds the case of a fixture expecting a refusal without a
// stated reason, which cannot be checked.
func checkUnstated(f fixture.Fixture, v *gate.Verdict, exp fixture.Expectation, refusedIn string, add addCase) {
	suite := refusedIn
	if suite == "" {
		suite = SuiteParse
	}
	msg := "the fixture names no expected reason (expect.reason in its sidecar)"
	if f.Kind == fixture.KindRecorded {
		msg = "a recorded fixture states no expectation: promote it (airlock promote) or set expect in its sidecar"
	}
	if v.Admitted && exp.Outcome == "refused" {
		add(suite, reports.Failed, "expected a refusal, admitted", "")
	} else {
		add(suite, reports.Unchecked, msg, "")
	}
}

// checkMatchedError adds the case of an error fixture that names no
// reason: it passes when the response matched any declared upstream error.
func checkMatchedError(v *gate.Verdict, add addCase) {
	switch {
	case v.Admitted:
		add(SuiteError, reports.Failed, "expected a declared upstream error, admitted", "agent output: "+string(v.Output))
	case v.Stage != gate.StageUpstream:
		add(SuiteError, reports.Failed, fmt.Sprintf("expected a declared upstream error (upstream.<name>), refused by %s", v.Reason), auditDetail(v))
	default:
		add(SuiteError, reports.Passed, "", "")
	}
}

// checkRefused adds the case of a fixture expecting a refusal for a stated
// reason, in the suite of that reason's stage.
func checkRefused(v *gate.Verdict, exp fixture.Expectation, add addCase) {
	suite := suiteOf(gate.StageOf(exp.Reason))
	switch {
	case v.Admitted:
		add(suite, reports.Failed, fmt.Sprintf("expected refusal %s, admitted", exp.Reason), "agent output: "+string(v.Output))
	case v.Reason != exp.Reason:
		add(suite, reports.Failed, fmt.Sprintf("expected refusal %s, refused by %s", exp.Reason, v.Reason), auditDetail(v))
	default:
		add(suite, reports.Passed, "", "")
	}
}

// shownLocation prints an instance location, "" (the whole value) as "".
func shownLocation(l string) string {
	if l == "" {
		return `""`
	}
	return l
}

func auditDetail(v *gate.Verdict) string {
	a := v.Audit
	s := fmt.Sprintf("stage: %s\nreason: %s\n", a.Stage, a.Reason)
	if a.KeywordLocation != "" {
		s += "keyword location: " + a.KeywordLocation + "\n"
	}
	if len(a.InstanceLocations) > 0 || a.InstanceLocation != "" {
		s += "instance location: " + shownLocation(a.InstanceLocation) + "\n"
	}
	if len(a.InstanceLocations) > 1 {
		shown := make([]string, len(a.InstanceLocations))
		for i, l := range a.InstanceLocations {
			shown[i] = shownLocation(l)
		}
		s += "failing locations: " + strings.Join(shown, ", ") + "\n"
	}
	if a.Offset >= 0 {
		s += fmt.Sprintf("byte offset: %d\n", a.Offset)
	}
	if a.Message != "" {
		s += "message: " + a.Message + "\n"
	}
	return s
}

// projectionCase checks an admitted fixture's agent output against its
// golden and the agent-facing schema, writing the golden under Update.
func (rc *runContext) projectionCase(ctx context.Context, f fixture.Fixture, c *gate.Contract, v *gate.Verdict) (reports.Status, string, string, string) {
	data, err := agentData(v.Output)
	if err != nil {
		return reports.Failed, "agent output is not a success envelope: " + err.Error(), "", ""
	}
	if err := introspect.AgentSchema(c).Validate(data); err != nil {
		return reports.Failed, "agent output fails the agent-facing schema", err.Error(), ""
	}
	golden, err := fileio.NewTree(f.Root).ReadFile(f.Golden, maxGolden)
	switch {
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return reports.Failed, "cannot read golden: " + err.Error(), "", ""
	case rc.opts.Update && (err != nil || !bytes.Equal(bytes.TrimRight(golden, "\n"), v.Output)):
		what := "updated"
		if err != nil {
			what = "created"
		}
		if werr := rc.w.WriteFileAtomic(ctx, f.Golden, append(slices.Clone(v.Output), '\n')); werr != nil {
			return reports.Failed, "cannot write golden: " + werr.Error(), "", ""
		}
		return reports.Passed, "", "", what + " " + f.Golden
	case err != nil:
		return reports.Failed, "no golden agent output " + filepath.Base(f.Golden) + " (write it with airlock run --update)", "", ""
	}
	if want := bytes.TrimRight(golden, "\n"); !bytes.Equal(want, v.Output) {
		return reports.Failed, "agent output differs from the golden " + filepath.Base(f.Golden),
			"-golden +actual\n" + cmp.Diff(jsonOrText(want), jsonOrText(v.Output)), ""
	}
	return reports.Passed, "", "", ""
}

// noLeak checks that no rejected byte reaches the agent output.
func (rc *runContext) noLeak(f fixture.Fixture, c *gate.Contract, v *gate.Verdict, exp fixture.Expectation) (reports.Status, string, string) {
	if !v.Admitted {
		if !fixture.IsVerdictFailure(v.Output, c.Tool(), exp.Request.ID, v) {
			return reports.Failed, "refused output is not exactly the failure envelope", "agent output: " + string(v.Output)
		}
		if err := DetailCheck(c, f.UpstreamVersion, v); err != nil {
			return reports.Failed, "the failure envelope's detail is not the error contract's projection", err.Error()
		}
		return reports.Passed, "", ""
	}
	proj := rawProjection(c, f.UpstreamVersion, v)
	lc := LeakCheck{Tool: c.Tool(), RequestID: exp.Request.ID, Projection: proj, Constants: rc.constants[c.Tool()], Untrusted: c.UntrustedFields()}
	if at, text := introspect.Extracted(v); text {
		lc.Embedded = at
	}
	leaks, err := lc.Find(v.Body, v.Output)
	if err != nil {
		return reports.Failed, "leak check could not run: " + err.Error(), ""
	}
	if len(leaks) > 0 {
		detail := ""
		for _, l := range leaks {
			detail += l.String() + "\n"
		}
		return reports.Failed, fmt.Sprintf("%d raw token(s) leak into the agent output, first: %s", len(leaks), leaks[0]), detail
	}
	return reports.Passed, "", ""
}

func agentData(output []byte) (any, error) {
	v, err := strictjson.Parse(output, strictjson.Limits{})
	if err != nil {
		return nil, err
	}
	env, ok := v.(map[string]any)
	if !ok || env["outcome"] != "success" {
		return nil, errors.New(`no "outcome":"success"`)
	}
	data, ok := env["data"]
	if !ok {
		return nil, errors.New(`no "data" member`)
	}
	return data, nil
}

// jsonOrText decodes b for a structural diff, or keeps it as text.
func jsonOrText(b []byte) any {
	if v, err := strictjson.Parse(b, strictjson.Limits{}); err == nil {
		return v
	}
	return string(b)
}

// rawProjection returns a version's projection as pointers into the raw
// body of verdict v: for an MCP contract they start at /structuredContent,
// or at the text block the value was read from (introspect.RawProjection).
func rawProjection(c *gate.Contract, version string, v *gate.Verdict) []gate.ProjectionField {
	raw := introspect.RawProjection(c, version, v)
	out := make([]gate.ProjectionField, len(raw))
	for i, f := range raw {
		out[i] = gate.ProjectionField{Field: f.Field, Pointer: f.Pointer}
	}
	return out
}
