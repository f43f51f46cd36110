// Package drift reads the recorded and historical fixtures of each tool and
// upstream version and reports what they show against the contract: the
// observed shape (observe.go), members the schema forbids or misses,
// retyped members and new enum values (findings.go), refusals by reason
// (aggregate.go), and the schema changes between consecutive upstream
// versions (through schemadiff).
package drift

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/shard"
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
	// Shard observes only the fixtures of one shard (fixture.Filter.Shard;
	// the zero Shard: all). The contract-level entries, broken contracts
	// and the changes between upstream versions, are in shard 1's report
	// alone (shard.Shard.ReportsContract); the report records the shard and
	// the digest of the selection it partitions (fixture.Set.Shard).
	Shard shard.Shard
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
// upstream versions (natural version order). A selected contract that does
// not load is listed in the report's Broken (its fixtures are not read)
// and every other tool is reported completely; any other configuration
// error is a *gate.ConfigError. What the fixtures show is data in the
// report.
func Run(ctx context.Context, opts Options) (*reports.Drift, error) {
	set, err := fixture.Open(opts.SchemasDir, opts.FixturesDir, fixture.Filter{
		Tools: opts.Tools, UpstreamVersions: opts.UpstreamVersions,
		Kinds: []string{fixture.KindRecorded, fixture.KindHistorical},
		Shard: opts.Shard,
	}, opts.Gate)
	if err != nil {
		return nil, err
	}
	tools, err := selectTools(set, opts)
	if err != nil {
		return nil, err
	}
	schemas, versionsOf := versionSchemas(set, tools, opts.UpstreamVersions)
	outs, err := observeAll(ctx, set, opts.Workers, schemas)
	if err != nil {
		return nil, err
	}

	rep := &reports.Drift{Summary: reports.DriftSummary{Fixtures: len(set.Fixtures), VersionChangesBreak: !opts.IgnoreVersionChanges}, Shard: set.Shard}
	for _, b := range set.Broken {
		if !opts.Shard.ReportsContract() {
			break
		}
		rep.Broken = append(rep.Broken, reports.BrokenContract{Tool: b.Tool, File: b.Err.File, Line: b.Err.Line, Column: b.Err.Column, Message: b.Err.Error()})
	}
	for _, t := range tools {
		dt, err := toolDrift(set, t, versionsOf[t], schemas, outs, &rep.Summary, opts.Shard.ReportsContract())
		if err != nil {
			return nil, err
		}
		rep.Tools = append(rep.Tools, dt)
	}
	s := &rep.Summary
	s.Breaking = s.BreakingFindings > 0 || s.UnexpectedRefusals > 0 || s.VersionChangesBreak && s.BreakingVersionChanges > 0
	return rep, nil
}

// versionKey names one upstream version of one tool: {tool, version}.
type versionKey = [2]string

// selectTools returns the selected tools, sorted, refusing an upstream
// version no selected contract has (unless a selected contract is broken:
// the version may be its).
func selectTools(set *fixture.Set, opts Options) ([]string, error) {
	tools := slices.Sorted(maps.Keys(set.Contracts))
	if len(opts.Tools) > 0 {
		tools = slices.DeleteFunc(tools, func(t string) bool { return !slices.Contains(opts.Tools, t) })
	}
	brokenSelected := slices.ContainsFunc(set.Broken, func(b fixture.Broken) bool {
		return len(opts.Tools) == 0 || slices.Contains(opts.Tools, b.Tool)
	})
	for _, v := range opts.UpstreamVersions {
		if !brokenSelected && !slices.ContainsFunc(tools, func(t string) bool { return slices.Contains(set.Contracts[t].UpstreamVersions(), v) }) {
			return nil, &gate.ConfigError{File: "--upstream-version", Msg: fmt.Sprintf("no selected contract has upstream version %q", v)}
		}
	}
	return tools, nil
}

// versionSchemas returns each selected version's schema, as its contract
// compiled it, and each tool's selected versions in natural order.
func versionSchemas(set *fixture.Set, tools, selected []string) (map[versionKey]*schemadiff.Schema, map[string][]string) {
	schemas := map[versionKey]*schemadiff.Schema{}
	versionsOf := map[string][]string{}
	for _, t := range tools {
		c := set.Contracts[t]
		for _, v := range schemadiff.SortVersions(c.UpstreamVersions()) {
			if len(selected) > 0 && !slices.Contains(selected, v) {
				continue
			}
			f, _ := schemadiff.UpstreamSchema(c, v) // v is one of c's versions
			schemas[versionKey{t, v}] = f
			versionsOf[t] = append(versionsOf[t], v)
		}
	}
	return schemas, versionsOf
}

// observeAll observes every fixture of set, workers at once, and joins
// their errors.
func observeAll(ctx context.Context, set *fixture.Set, workers int, schemas map[versionKey]*schemadiff.Schema) ([]fixtureDrift, error) {
	fixtures := set.Fixtures
	outs := make([]fixtureDrift, len(fixtures))
	fixture.ForEach(ctx, len(fixtures), workers, func(i int) {
		f := fixtures[i]
		outs[i] = observeFixture(ctx, set, f, schemas[versionKey{f.Tool, f.UpstreamVersion}])
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
	return outs, nil
}

// toolDrift reports one tool: each version's aggregate and, when
// versionChanges, the schema changes between consecutive versions,
// counted into sum.
func toolDrift(set *fixture.Set, t string, vs []string, schemas map[versionKey]*schemadiff.Schema, outs []fixtureDrift, sum *reports.DriftSummary, versionChanges bool) (reports.DriftTool, error) {
	c := set.Contracts[t]
	dt := reports.DriftTool{Tool: t, ContractVersion: c.Version(), VersionChanges: []reports.Comparison{}}
	for _, v := range vs {
		agg := newDriftAggregate()
		for i, f := range set.Fixtures {
			if f.Tool == t && f.UpstreamVersion == v {
				agg.add(f, outs[i])
			}
		}
		dv := agg.report(v)
		for _, f := range dv.Findings {
			if f.Breaking {
				sum.BreakingFindings++
			}
		}
		for _, r := range dv.Refusals {
			sum.UnexpectedRefusals += r.Unexpected
		}
		dt.Versions = append(dt.Versions, dv)
	}
	for i := 1; i < len(vs) && versionChanges; i++ {
		name := fmt.Sprintf("%s upstream %s → %s", t, vs[i-1], vs[i])
		cmp, err := schemadiff.Compare(name, schemas[versionKey{t, vs[i-1]}], schemas[versionKey{t, vs[i]}])
		if err != nil {
			return dt, err
		}
		for _, ch := range cmp.Changes {
			if ch.Level == reports.Breaking {
				sum.BreakingVersionChanges++
			}
		}
		dt.VersionChanges = append(dt.VersionChanges, cmp)
	}
	return dt, nil
}
