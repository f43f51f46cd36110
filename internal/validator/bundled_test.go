package validator_test

// The differential run over what airlock ships: every bundled contract
// (schemas/), every fixture under fixtures/ and every mutant `airlock
// mutate` derives from them (no cap), each through the whole gate; the
// value that reached the schema stage is then validated by jsonschema/v6 and
// by the compiled validator against the version's compiled schema, and the
// verdicts must agree. Where the gate refused a fixture for a schema.*
// reason, the compiled validator must name the same keyword, so no
// fixture's expected reason changes; where a mutant was refused for a
// schema.* reason it expects, the compiled validator's keyword must be one
// it expects too. The same values also go through the version's error-shape
// schemas, and admitted data and matched error details through the agent
// schemas.
//
// This is an external test package: it imports gate, fixture and mutate,
// which may import package validator without a cycle.

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/conformance"
	"github.com/airlockdev/airlock/internal/introspect"
	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/internal/validator"
	"github.com/airlockdev/airlock/mutate"
)

// compiledSchema is one compiled schema of a contract and its validator.
type compiledSchema struct {
	name string // contract/file, for messages
	s    *jsonschema.Schema
	vd   *validator.Validator
	docs map[string]bool
}

// contractSchemas are one contract's compiled schemas.
type contractSchemas struct {
	upstream   map[string]*compiledSchema   // by upstream version
	errorShape map[string][]*compiledSchema // by upstream version
	agent      *compiledSchema
	agentError *compiledSchema // nil: none
}

// bundledStats count what was compared, per contract.
type bundledStats struct {
	values, agree          int // values compared, same verdict
	refusals, sameKeyword  int // refused by both; with the same keyword
	fixtures, mutants      int
	fixtureReasons         int // fixtures refused for a schema.* reason, keyword checked
	mutantReasons          int // mutants refused for an expected schema.* reason, keyword checked
	schemas, fallbackCount int
}

type bundledRun struct {
	t        *testing.T
	set      *fixture.Set
	contract map[string]*contractSchemas
	stats    map[string]*bundledStats
	fallback map[string]int // schemas by Fallback() reason
}

func TestDifferentialBundled(t *testing.T) {
	root, err := conformance.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	schemasDir, fixturesDir := filepath.Join(root, "schemas"), filepath.Join(root, "fixtures")
	set, err := fixture.Open(schemasDir, fixturesDir, fixture.Filter{}, gate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range set.Broken {
		t.Errorf("bundled contract %s does not load: %v", b.Tool, b.Err)
	}
	if len(set.List) == 0 || len(set.Fixtures) == 0 {
		t.Fatalf("%d contracts, %d fixtures: nothing to compare", len(set.List), len(set.Fixtures))
	}
	run := &bundledRun{t: t, set: set, contract: map[string]*contractSchemas{}, stats: map[string]*bundledStats{}, fallback: map[string]int{}}
	for _, c := range set.List {
		run.compile(c)
	}

	ctx := context.Background()
	prepared := map[string]fixture.Prepared{}
	for _, f := range set.Fixtures {
		p, err := set.Prepare(f)
		if err != nil {
			t.Fatal(err)
		}
		prepared[f.Body] = p
		v, err := set.CheckPrepared(ctx, f, p)
		if err != nil {
			t.Fatal(err)
		}
		run.stats[f.Tool].fixtures++
		run.verdict(f, v, f.Body, func(ref, got result) {
			// A fixture refused at the schema stage: the compiled
			// validator must give the gate the same reason, and the one
			// the fixture expects.
			if !strings.HasPrefix(v.Reason, "schema.") {
				return
			}
			run.stats[f.Tool].fixtureReasons++
			if want := "schema." + ref.failure.Keyword; v.Reason != want {
				t.Errorf("%s: the gate refused with %s, v6 alone says %s", f.Body, v.Reason, want)
			}
			if got.out != invalid || "schema."+got.failure.Keyword != v.Reason {
				t.Errorf("%s: the gate refuses with %s; with the compiled validator it would be %s", f.Body, v.Reason, got)
			}
			if p.Expect.Reason != "" && p.Expect.Reason != v.Reason {
				t.Errorf("%s: expects %s, the gate says %s", f.Body, p.Expect.Reason, v.Reason)
			}
		})
	}

	rep, err := mutate.Mutate(ctx, mutate.Options{SchemasDir: schemasDir, FixturesDir: fixturesDir, MaxPerFixture: -1, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) == 0 {
		t.Fatal("mutate generated no mutant")
	}
	for _, x := range rep.Results {
		if x.Outcome == mutate.Equivalent {
			continue // dropped before running: no verdict to compare
		}
		f, mu := x.Fixture, x.Mutant
		p, ok := prepared[f.Body]
		if !ok {
			t.Fatalf("%s: a mutant of a fixture the set did not discover", f.Body)
		}
		v, err := mu.Check(ctx, set, f, p)
		if err != nil {
			t.Fatal(err)
		}
		if v.Reason != x.Actual && !(v.Admitted && x.Actual == "admitted") {
			t.Errorf("%s#%s: the gate says %q now and %q in the mutation run", f.Body, mu.ID, v.Reason, x.Actual)
		}
		run.stats[f.Tool].mutants++
		run.verdict(f, v, f.Body+"#"+mu.ID, func(ref, got result) {
			// Refused at the schema stage for a reason the mutant
			// expects: the compiled validator's reason must be one too.
			if !strings.HasPrefix(v.Reason, "schema.") || !expects(mu.Expect, v.Reason) {
				return
			}
			run.stats[f.Tool].mutantReasons++
			if got.out != invalid || !expects(mu.Expect, "schema."+got.failure.Keyword) {
				t.Errorf("%s#%s: refused with %s (expected: %s); with the compiled validator: %s", f.Body, mu.ID, v.Reason, strings.Join(mu.Expect, " | "), got)
			}
		})
	}
	run.log()
}

// expects is mutate's rule: an exact reason, or "stage.*" for any of a stage.
func expects(list []string, reason string) bool {
	for _, e := range list {
		if e == reason || strings.HasSuffix(e, ".*") && strings.HasPrefix(reason, strings.TrimSuffix(e, "*")) {
			return true
		}
	}
	return false
}

// compile builds the validators of every schema of contract c: each
// upstream version's (as the gate compiled it), the agent schemas, and the
// error shapes' (compiled again from the contract folder, the gate's way:
// the gate keeps them private).
func (run *bundledRun) compile(c *gate.Contract) {
	t := run.t
	cs := &contractSchemas{upstream: map[string]*compiledSchema{}, errorShape: map[string][]*compiledSchema{}}
	run.contract[c.Tool()] = cs
	run.stats[c.Tool()] = &bundledStats{}
	m := introspect.Manifest(c)
	fsys, dir, shown := introspect.Source(c)
	policy, _, err := schema.ParseFormatPolicy(m.Formats)
	if err != nil {
		t.Fatal(err)
	}
	d := schema.NewDir(fsys, dir, shown)
	fresh := func(name string) *jsonschema.Schema {
		s, err := d.CompileWith(name, policy)
		if err != nil {
			t.Fatalf("%s: %s: %v", c.Tool(), name, err)
		}
		return s
	}
	for _, ver := range c.UpstreamVersions() {
		s, ok := introspect.Schema(c, ver)
		if !ok {
			t.Fatalf("%s: no schema for version %s", c.Tool(), ver)
		}
		uv := m.UpstreamVersions[ver]
		cs.upstream[ver] = run.validator(c.Tool(), uv.Schema, s)
		for _, e := range uv.Errors {
			if e.Schema != "" {
				cs.errorShape[ver] = append(cs.errorShape[ver], run.validator(c.Tool(), e.Schema, fresh(e.Schema)))
			}
		}
	}
	cs.agent = run.validator(c.Tool(), m.AgentSchema, introspect.AgentSchema(c))
	if m.AgentErrorSchema != "" {
		cs.agentError = run.validator(c.Tool(), m.AgentErrorSchema, fresh(m.AgentErrorSchema))
	}
}

func (run *bundledRun) validator(tool, file string, s *jsonschema.Schema) *compiledSchema {
	vd, err := compileOurs(s)
	if err != nil {
		run.t.Fatalf("%s/%s: %v", tool, file, err)
	}
	st := run.stats[tool]
	st.schemas++
	if why := vd.Fallback(); why != "" {
		st.fallbackCount++
		run.fallback[why]++
	}
	return &compiledSchema{name: tool + "/" + file, s: s, vd: vd, docs: resources(s)}
}

// verdict compares the two validators on every value verdict v of fixture
// f put before a schema: the schema stage's value against the version's
// schema (onSchema is then called with both results) and its error shapes',
// the error value a matched shape saw, admitted data against the agent
// schema and a matched error's detail against the agent error schema.
func (run *bundledRun) verdict(f fixture.Fixture, v *gate.Verdict, what string, onSchema func(ref, got result)) {
	cs := run.contract[f.Tool]
	if value, ok := introspect.Value(v); ok {
		ref, got := run.compare(f.Tool, what, cs.upstream[f.UpstreamVersion], value)
		if ref.out == invalid && got.out == invalid {
			onSchema(ref, got)
		}
		for _, e := range cs.errorShape[f.UpstreamVersion] {
			run.compare(f.Tool, what, e, value)
		}
	} else if strings.HasPrefix(v.Reason, "schema.") {
		run.t.Errorf("%s: refused with %s but introspect.Value has no value", what, v.Reason)
	}
	if ev, ok := introspect.ErrorValue(v); ok {
		for _, e := range cs.errorShape[f.UpstreamVersion] {
			run.compare(f.Tool, what+" (error value)", e, ev)
		}
	}
	if v.Admitted {
		data, err := successData(v.Output)
		if err != nil {
			run.t.Errorf("%s: admitted, but the output: %v", what, err)
			return
		}
		run.compare(f.Tool, what+" (agent data)", cs.agent, data)
	}
	if v.Detail != nil && cs.agentError != nil {
		run.compare(f.Tool, what+" (error detail)", cs.agentError, v.Detail)
	}
}

// compare validates value with both validators against cs: the verdicts
// must agree, and a refusal of both must describe itself truthfully.
func (run *bundledRun) compare(tool, what string, cs *compiledSchema, value any) (ref, got result) {
	st := run.stats[tool]
	st.values++
	ref, got = runOracle(cs.s, value), runOurs(cs.vd, value)
	switch {
	case got.out == crashed || got.out == inconsistent:
		run.t.Errorf("%s against %s: the compiled validator: %s", what, cs.name, got)
	case got.out != ref.out:
		run.t.Errorf("%s against %s: the compiled validator says %s, v6 %s", what, cs.name, got, ref)
	default:
		st.agree++
	}
	if got.out == invalid && ref.out == invalid {
		st.refusals++
		if got.failure.Keyword == ref.failure.Keyword {
			st.sameKeyword++
		}
		if msg := checkFailure(got.failure, value, cs.docs, 1); msg != "" {
			run.t.Errorf("%s against %s: ours: %s", what, cs.name, msg)
		}
		if msg := checkFailure(ref.failure, value, cs.docs, 1); msg != "" {
			run.t.Errorf("%s against %s: v6: %s", what, cs.name, msg)
		}
	}
	return ref, got
}

// successData is the data member of a success envelope.
func successData(output []byte) (any, error) {
	v, err := strictjson.Parse(output, strictjson.Limits{})
	if err != nil {
		return nil, err
	}
	env, ok := v.(map[string]any)
	if !ok || env["outcome"] != "success" {
		return nil, fmt.Errorf(`not a success envelope`)
	}
	data, ok := env["data"]
	if !ok {
		return nil, fmt.Errorf(`no "data" member`)
	}
	return data, nil
}

func (run *bundledRun) log() {
	var b strings.Builder
	b.WriteString("bundled contracts, fixtures and mutants, compiled validator vs jsonschema/v6\n")
	fmt.Fprintf(&b, "%-16s %8s %7s %7s %6s %9s %9s %8s %8s %8s\n", "contract", "fixtures", "mutants", "values", "agree", "refusals", "same-kw", "fx-kw", "mu-kw", "fallback")
	var all bundledStats
	tools := make([]string, 0, len(run.stats))
	for tool := range run.stats {
		tools = append(tools, tool)
	}
	slices.Sort(tools)
	line := func(name string, s bundledStats) {
		fmt.Fprintf(&b, "%-16s %8d %7d %7d %6d %9d %9d %8d %8d %4d/%-3d\n", name, s.fixtures, s.mutants, s.values, s.agree, s.refusals, s.sameKeyword, s.fixtureReasons, s.mutantReasons, s.fallbackCount, s.schemas)
	}
	for _, tool := range tools {
		s := *run.stats[tool]
		line(tool, s)
		all.values += s.values
		all.agree += s.agree
		all.refusals += s.refusals
		all.sameKeyword += s.sameKeyword
		all.fixtures += s.fixtures
		all.mutants += s.mutants
		all.fixtureReasons += s.fixtureReasons
		all.mutantReasons += s.mutantReasons
		all.schemas += s.schemas
		all.fallbackCount += s.fallbackCount
	}
	line("= all", all)
	b.WriteString("(values: validations compared; refusals: invalid for both, same-kw: with the same keyword;\n" +
		" fx-kw, mu-kw: fixtures and mutants refused for a schema.* reason whose keyword was checked; fallback: schemas on fallback/schemas)\n")
	for _, why := range slices.Sorted(maps.Keys(run.fallback)) {
		fmt.Fprintf(&b, "  %4d schemas on fallback: %s\n", run.fallback[why], why)
	}
	run.t.Log(b.String())
}
