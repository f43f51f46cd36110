package mutate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/google/go-cmp/cmp"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/fileio"
	"github.com/airlockdev/airlock/internal/introspect"
	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/reports"
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
}

// Outcome classifies one mutant's proof.
type Outcome string

// Mutant outcomes. Only Killed counts toward the score.
const (
	// Killed: refused for a reason of the family it was built to trip, its
	// output exactly the failure envelope, its canary nowhere in it.
	Killed Outcome = "killed"
	// Survived: admitted. A hole in the contract.
	Survived Outcome = "survived"
	// WrongReason: refused, but by another stage or reason.
	WrongReason Outcome = "wrong_reason"
	// Leaked: refused, but the output is not the exact failure envelope or
	// carries the canary.
	Leaked Outcome = "leaked"
)

// MutantResult is one mutant and what the gate did with it.
type MutantResult struct {
	Fixture fixture.Fixture
	Mutant  Mutant
	Outcome Outcome
	// Actual is "admitted" or the gate's reason.
	Actual string
	// Problem says what failed, for anything but Killed.
	Problem string
}

// Diff is a go-cmp diff of the original against the mutant.
func (r MutantResult) Diff() string {
	return cmp.Diff(r.Mutant.Before, r.Mutant.After)
}

// Score is the mutation score of one contract and upstream version.
type Score struct {
	Tool, UpstreamVersion string
	Generated, Killed     int
	// ByFamily counts generated and killed mutants per family.
	ByFamily map[string][2]int
}

// Ratio is killed / generated (1 when nothing was generated).
func (s Score) Ratio() float64 {
	if s.Generated == 0 {
		return 1
	}
	return float64(s.Killed) / float64(s.Generated)
}

// Report is the result of Mutate.
type Report struct {
	Results []MutantResult
	Scores  []Score
	// Skipped lists fixtures whose original was not admitted, with why.
	Skipped []string
}

// Survivors returns the results that are not Killed.
func (r *Report) Survivors() []MutantResult {
	var out []MutantResult
	for _, x := range r.Results {
		if x.Outcome != Killed {
			out = append(out, x)
		}
	}
	return out
}

// Mutate derives near-miss mutants from every accepted and historical
// fixture the gate admits and proves each one: refused for the family it
// was built to trip, its agent output exactly the failure envelope, its
// canary nowhere in that output. Results are in fixture then generation
// order; configuration errors are *gate.ConfigError values.
func Mutate(ctx context.Context, opts Options) (*Report, error) {
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	if opts.MaxPerFixture == 0 {
		opts.MaxPerFixture = DefaultMaxMutants
	}
	set, err := fixture.Open(opts.SchemasDir, opts.FixturesDir, opts.Filter, opts.Gate)
	if err != nil {
		return nil, err
	}
	fixtures := slices.DeleteFunc(slices.Clone(set.Fixtures), func(f fixture.Fixture) bool {
		return f.Kind != fixture.KindAccepted && f.Kind != fixture.KindHistorical
	})
	if len(fixtures) == 0 {
		return nil, &gate.ConfigError{File: opts.FixturesDir, Msg: "no accepted or historical fixtures selected: nothing to mutate"}
	}
	type perFixture struct {
		results []MutantResult
		skipped string
		err     error
	}
	outs := make([]perFixture, len(fixtures))
	docs := map[string]*schemaDocs{}
	for tool, c := range set.Contracts {
		docs[tool] = newSchemaDocs(c)
	}
	fixture.ForEach(ctx, len(fixtures), opts.Workers, func(i int) {
		res, skipped, err := mutateFixture(ctx, set, fixtures[i], docs[fixtures[i].Tool], opts)
		outs[i] = perFixture{res, skipped, err}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	rep := &Report{}
	var errs []error
	scores := map[[2]string]*Score{}
	var order [][2]string
	for i, o := range outs {
		if o.err != nil {
			errs = append(errs, o.err)
			continue
		}
		if o.skipped != "" {
			rep.Skipped = append(rep.Skipped, fixtures[i].Body+": "+o.skipped)
			continue
		}
		k := [2]string{fixtures[i].Tool, fixtures[i].UpstreamVersion}
		s := scores[k]
		if s == nil {
			s = &Score{Tool: k[0], UpstreamVersion: k[1], ByFamily: map[string][2]int{}}
			scores[k] = s
			order = append(order, k)
		}
		for _, r := range o.results {
			fam := s.ByFamily[r.Mutant.Family]
			s.Generated++
			fam[0]++
			if r.Outcome == Killed {
				s.Killed++
				fam[1]++
			}
			s.ByFamily[r.Mutant.Family] = fam
		}
		rep.Results = append(rep.Results, o.results...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(rep.Results) == 0 {
		return nil, &gate.ConfigError{File: opts.FixturesDir, Msg: fmt.Sprintf("no mutant generated: none of the %d selected fixtures was admitted (%s)", len(fixtures), strings.Join(rep.Skipped, "; "))}
	}
	for _, k := range order {
		rep.Scores = append(rep.Scores, *scores[k])
	}
	return rep, nil
}

func mutateFixture(ctx context.Context, set *fixture.Set, f fixture.Fixture, docs *schemaDocs, opts Options) ([]MutantResult, string, error) {
	p, err := set.Prepare(f)
	if err != nil {
		return nil, "", err
	}
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
	value, err := rawValue(c, orig)
	if err != nil {
		return nil, "", fmt.Errorf("%s: admitted body does not parse: %w", f.Body, err)
	}
	uv := introspect.Manifest(c).UpstreamVersions[f.UpstreamVersion]
	// For an MCP contract, rules and schema facts are relative to
	// structuredContent while mutants change the whole CallToolResult.
	prefix := ""
	if c.Protocol() == gate.ProtocolMCP {
		prefix = "/structuredContent"
	}
	scope, _ := jsonpointer.Parse(prefix)
	var rules []RuleSpecView
	for _, r := range uv.Rules {
		switch {
		case r.Binding != nil:
			rules = append(rules, RuleSpecView{r.Name, prefix + r.Binding.Pointer, true})
		case r.Context != nil:
			rules = append(rules, RuleSpecView{r.Name, prefix + r.Context.Pointer, true})
		case r.Membership != nil:
			rules = append(rules, RuleSpecView{r.Name, prefix + r.Membership.Pointer, true})
		case r.Freshness != nil:
			rules = append(rules, RuleSpecView{r.Name, prefix + r.Freshness.Pointer, false})
		}
	}
	// Canaries and the sample depend on the fixture's place in its tree, not
	// on where the tree is checked out.
	key := f.Tool + "/" + f.UpstreamVersion + "/" + f.Kind + "/" + f.Name
	h := fnv.New32a()
	h.Write([]byte(key))
	m := &mutator{
		raw:     orig.Body,
		value:   value,
		limits:  c.Limits(),
		rules:   rules,
		request: p.Expect.Request,
		scope:   scope,
		facts: func(loc []string) facts {
			if prefix != "" {
				if len(loc) == 0 || loc[0] != "structuredContent" {
					return facts{maxLength: -1}
				}
				loc = loc[1:]
			}
			return docs.at(uv.Schema, loc)
		},
		canaryID: fmt.Sprintf("%08x", h.Sum32()),
	}
	m.generate()
	mutants := limitMutants(m.out, opts.MaxPerFixture, opts.Seed, key)

	results := make([]MutantResult, 0, len(mutants))
	for _, mu := range mutants {
		status, ct := p.Expect.Status, p.Expect.ContentType
		if mu.Status != 0 {
			status = mu.Status
		}
		if mu.ContentType != "" {
			ct = mu.ContentType
		}
		v, err := set.Check(ctx, f, p.Expect, mu.Body, status, ct, "")
		if err != nil {
			return nil, "", err
		}
		r := MutantResult{Fixture: f, Mutant: mu, Actual: "admitted", Outcome: Killed}
		switch {
		case v.Admitted:
			r.Outcome, r.Problem = Survived, "admitted: "+mu.Hint+" would refuse it"
		case !fixture.IsFailureEnvelope(v.Output, c.Tool(), p.Expect.Request.ID, v.ErrorCode, v.Retryable):
			r.Actual, r.Outcome, r.Problem = v.Reason, Leaked, "refused output is not exactly the failure envelope"
		case mu.Canary != "" && bytes.Contains(v.Output, []byte(mu.Canary)):
			r.Actual, r.Outcome, r.Problem = v.Reason, Leaked, "the canary "+mu.Canary+" reached the agent output"
		case !mu.expects(v.Reason):
			r.Actual, r.Outcome, r.Problem = v.Reason, WrongReason, fmt.Sprintf("refused by %s, expected %s", v.Reason, strings.Join(mu.Expect, " or "))
		default:
			r.Actual = v.Reason
		}
		if v.Admitted && mu.Canary != "" && bytes.Contains(v.Output, []byte(mu.Canary)) {
			r.Problem += "; its canary reached the agent output"
		}
		results = append(results, r)
	}
	return results, "", nil
}

// Cases turns mutation results into testcases of the "mutation" suite.
func (r *Report) Cases() []reports.Case {
	out := make([]reports.Case, 0, len(r.Results))
	for _, x := range r.Results {
		c := reports.Case{
			Tool: x.Fixture.Tool, UpstreamVersion: x.Fixture.UpstreamVersion, Kind: x.Fixture.Kind,
			Suite: Suite, Name: x.Fixture.Name + "#" + x.Mutant.ID, File: x.Fixture.Body,
			Status: reports.Passed, Expected: strings.Join(x.Mutant.Expect, " | "), Actual: x.Actual,
		}
		if x.Outcome != Killed {
			c.Status = reports.Failed
			c.Message = string(x.Outcome) + ": " + x.Problem
			c.Detail = "hint: " + x.Mutant.Hint + "\n-original +mutant\n" + x.Diff()
		}
		out = append(out, c)
	}
	return out
}

// writeMutant writes one result as a near-miss fixture under dir
// (dir/<tool>/<upstream-version>/near-miss/<stem>.<mutant>.json plus a
// sidecar with the fixture's request, clock, status and content type and the
// expected reason: the mutant's intended reason for a survivor, the gate's
// actual reason otherwise). An existing file is never overwritten. It
// returns the body's path.
func writeMutant(ctx context.Context, set *fixture.Set, dir string, x MutantResult) (string, error) {
	p, err := set.Prepare(x.Fixture)
	if err != nil {
		return "", err
	}
	folder := filepath.Join(dir, x.Fixture.Tool, x.Fixture.UpstreamVersion, fixture.KindNearMiss)
	stem := x.Fixture.Stem + "." + slug(x.Mutant.ID)
	ext := ".json"
	if x.Mutant.Kind == "html_error_page" {
		ext = ".html"
	}
	// A killed mutant expects what the gate said; any other expects the
	// reason it was built to trip, so the fixture fails until the contract
	// is fixed.
	reason := x.Actual
	if x.Outcome != Killed {
		reason = x.Mutant.Reason
	}
	status, ct := p.Expect.Status, p.Expect.ContentType
	if x.Mutant.Status != 0 {
		status = x.Mutant.Status
	}
	if x.Mutant.ContentType != "" {
		ct = x.Mutant.ContentType
	}
	id := p.Expect.Request.ID
	clock := p.Expect.Now.UTC().Format("2006-01-02T15:04:05.999999999Z07:00")
	meta := &fixture.Meta{
		Status: &status, ContentType: &ct,
		Request: &fixture.MetaRequest{ID: &id, Context: p.Expect.Request.Context},
		Clock:   &clock,
		Expect:  &fixture.Expect{Outcome: "refused", Reason: reason},
		Notes:   "mutation " + x.Mutant.ID + " (" + string(x.Outcome) + "); hint: " + x.Mutant.Hint,
	}
	comment := "Generated by airlock mutate from " + strconv.Quote(filepath.ToSlash(x.Fixture.Body)) + "."
	body := filepath.Join(folder, stem+ext)
	side := filepath.Join(folder, stem+fixture.MetaSuffix)
	files := []fileio.NewFile{{Path: body, Data: x.Mutant.Body}, {Path: side, Data: fixture.MarshalMeta(meta, comment)}}
	if err := fileio.CreateAll(ctx, folder, files); err != nil {
		return "", err
	}
	return body, nil
}

// WriteMutants writes the given results as near-miss fixtures under dir;
// see writeMutant. It returns the bodies written and the results it skipped
// (existing files) as messages.
func WriteMutants(ctx context.Context, opts Options, dir string, results []MutantResult) (written, skipped []string, err error) {
	set, err := fixture.Open(opts.SchemasDir, "", fixture.Filter{}, opts.Gate)
	if err != nil {
		return nil, nil, err
	}
	for _, x := range results {
		path, err := writeMutant(ctx, set, dir, x)
		if err != nil {
			if errors.Is(err, fileio.ErrExists) {
				skipped = append(skipped, err.Error())
				continue
			}
			return written, skipped, err
		}
		written = append(written, path)
	}
	return written, skipped, nil
}

// slug makes a mutant id usable in a file name.
func slug(id string) string {
	var b strings.Builder
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return strings.Trim(b.String(), "_")
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
