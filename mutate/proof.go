package mutate

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
)

// The proof: each mutant goes through the whole gate under its fixture's
// request and clock, and is classified by what came out.

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
	// Duration is the time this mutant took: building its body, the
	// gate's check and the classification, plus an equal share of its
	// fixture's set-up (reading it, the original's check, generating its
	// mutants). The Durations of one fixture's results add up to at most
	// the wall time spent on that fixture.
	Duration time.Duration
}

// Diff is a go-cmp diff of the original against the mutant.
func (r MutantResult) Diff() string {
	return cmp.Diff(r.Mutant.Before, r.Mutant.After)
}

// prove checks each mutant of f through the gate, with the fixture's
// expectation (request, clock, status, content type) and the mutant's
// status and content type where it sets them, and classifies the verdicts
// in the mutants' order. One mutant body at a time: each is built from its
// description, checked, classified and dropped; the results hold none.
func prove(ctx context.Context, set *fixture.Set, f fixture.Fixture, p fixture.Prepared, mutants []Mutant) ([]MutantResult, error) {
	tool := set.Contracts[f.Tool].Tool()
	results := make([]MutantResult, 0, len(mutants))
	for i := range mutants {
		start := time.Now()
		mu := mutants[i]
		mutants[i] = Mutant{}
		mu.materialise()
		v, err := mu.Check(ctx, set, f, p)
		if err != nil {
			return nil, err
		}
		r := classify(f, tool, p.Expect.Request.ID, mu, v)
		r.Mutant.drop()
		r.Duration = time.Since(start)
		results = append(results, r)
	}
	return results, nil
}

// Check asks the gate about the mutant, in place of fixture f (prepared as
// p): its body, with its status and content type where it sets them. The
// body is the mutant's Body while it is proved, its stream for the
// oversize mutant, or else built again from f (one generation of f's
// mutants; an error when f no longer gives this mutant, see rebuild).
func (mu Mutant) Check(ctx context.Context, set *fixture.Set, f fixture.Fixture, p fixture.Prepared) (*gate.Verdict, error) {
	status, ct := p.Expect.Status, p.Expect.ContentType
	if mu.Status != 0 {
		status = mu.Status
	}
	if mu.ContentType != "" {
		ct = mu.ContentType
	}
	body, err := mu.open(ctx, set, f, p)
	if err != nil {
		return nil, err
	}
	return set.CheckReader(ctx, f, p.Expect, body, status, ct, "")
}

// classify is the proof of one mutant of f from its verdict for tool under
// the request requestID: Survived when admitted; Leaked when the refusal's
// output is not exactly the failure envelope for the tool and request, or
// carries the canary; WrongReason
// when refused for a reason the mutant does not expect; else Killed.
func classify(f fixture.Fixture, tool, requestID string, mu Mutant, v *gate.Verdict) MutantResult {
	r := MutantResult{Fixture: f, Mutant: mu, Actual: "admitted", Outcome: Killed}
	switch {
	case v.Admitted:
		r.Outcome, r.Problem = Survived, "admitted: "+mu.Hint+" would refuse it"
	case !fixture.IsVerdictFailure(v.Output, tool, requestID, v):
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
	return r
}
