package mutate

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
)

// The proof: each mutant goes through the whole gate under its fixture's
// request and clock, and is classified by what came out (docs/mutate.md,
// Classification).

// Outcome classifies one mutant's proof.
type Outcome string

// Mutant outcomes. Killed counts for the score; Survived, WrongReason and
// Leaked against it (they fail a run); Unseen counts against it only under
// Options.Strict; Baselined and Equivalent never count.
const (
	// Killed: refused for a reason of the family it was built to trip, or
	// by the projection stage (the agent-facing schema or the text policy:
	// counted in the projection family), its output exactly the failure
	// envelope, its canary nowhere in it.
	Killed Outcome = "killed"
	// Survived: admitted, and it reaches the agent: the agent output
	// differs from the fixture's, or carries the mutant's canary, or the
	// mutant is of the semantic family (boundToRequest: a response that
	// names another request, project or change is another call's answer,
	// wrong evidence whatever is projected). A hole in the contract.
	Survived Outcome = "survived"
	// Unseen: admitted, and the agent output is byte for byte the
	// fixture's: the change lies in a field nothing projects, and the
	// mutant is not boundToRequest. Reported
	// apart; a failure only under Options.Strict.
	Unseen Outcome = "unseen"
	// Baselined: admitted (survived or unseen), and listed in the
	// contract's mutate.baseline.yaml with a reason (MutantResult.Baseline).
	Baselined Outcome = "baselined"
	// Equivalent: not run. The mutant is the fixture, or its new value is
	// one the schema allows by its own terms at that location
	// (equivalent.go); MutantResult.Problem says which.
	Equivalent Outcome = "equivalent"
	// WrongReason: refused, but by another stage or reason.
	WrongReason Outcome = "wrong_reason"
	// Leaked: refused, but the output is not the exact failure envelope or
	// carries the canary.
	Leaked Outcome = "leaked"
)

// Severity ranks an outcome for listing failing results, most severe
// first: 0 Survived (it reaches the agent), 1 Leaked, 2 WrongReason, 3
// Unseen (failing only under Options.Strict), 4 anything else. Reports list
// failures in this order so that a capped listing (--max-shown) never
// hides a survivor behind unseen mutants.
func (o Outcome) Severity() int {
	switch o {
	case Survived:
		return 0
	case Leaked:
		return 1
	case WrongReason:
		return 2
	case Unseen:
		return 3
	}
	return 4
}

// BySeverity sorts results in place by Outcome.Severity, keeping the order
// (fixture, then generation) within one outcome.
func BySeverity(results []MutantResult) {
	slices.SortStableFunc(results, func(a, b MutantResult) int { return a.Outcome.Severity() - b.Outcome.Severity() })
}

// MutantResult is one mutant and what the gate did with it.
type MutantResult struct {
	Fixture fixture.Fixture
	Mutant  Mutant
	Outcome Outcome
	// Actual is "admitted", the gate's reason, or "not run" (Equivalent).
	Actual string
	// Problem says what failed, for anything but Killed; for Equivalent,
	// why the mutant was dropped; for Baselined, how it was admitted
	// (survived or unseen).
	Problem string
	// Family is the family the result counts in: the mutant's, or
	// FamilyProjection for a mutant the projection stage refused.
	Family string
	// Location is where the keyword of the hint goes, for an admitted
	// mutant (Survived, Unseen, Baselined) whose hint names a schema
	// keyword or a manifest rule; nil otherwise.
	Location *HintLocation
	// Baseline is the entry that accepted this survivor (Baselined only).
	Baseline *BaselineEntry
	// Duration is the time this mutant took: building its body, the
	// gate's check and the classification, plus an equal share of its
	// fixture's set-up (reading it, the original's check, generating its
	// mutants). When several workers overlap and these add up to more
	// than the run's wall time (Report.Duration), each is scaled down to
	// its share of it, in proportion, so that they add up to at most it.
	Duration time.Duration
}

// Diff is a go-cmp diff of the original against the mutant, byte-stable:
// go-cmp writes the space after each line's "-", "+" or indentation as
// U+00A0 in about half of the processes (on purpose, so that callers do
// not rely on its format; cmp/report_text.go), and Diff writes it as a
// space, so two runs print the same bytes. A U+00A0 inside a value is
// kept.
func (r MutantResult) Diff() string {
	return stableDiff(cmp.Diff(r.Mutant.Before, r.Mutant.After))
}

// stableDiff replaces, on each line of a go-cmp diff, every U+00A0 of the
// line's lead (its "-" or "+" marker and indentation: spaces and U+00A0
// only) with a space.
func stableDiff(d string) string {
	if !strings.Contains(d, "\u00a0") {
		return d
	}
	lines := strings.SplitAfter(d, "\n")
	for i, l := range lines {
		rest := strings.TrimLeft(l, " -+\u00a0")
		lead := l[:len(l)-len(rest)]
		lines[i] = strings.ReplaceAll(lead, "\u00a0", " ") + rest
	}
	return strings.Join(lines, "")
}

// admitted reports whether the gate admitted the mutant.
func (r MutantResult) admitted() bool {
	return r.Outcome == Survived || r.Outcome == Unseen || r.Outcome == Baselined
}

// Fails reports whether the result fails a run: Survived, WrongReason and
// Leaked always, Unseen when strict.
func (r MutantResult) Fails(strict bool) bool {
	switch r.Outcome {
	case Survived, WrongReason, Leaked:
		return true
	case Unseen:
		return strict
	}
	return false
}

// judge is what the proof of one fixture's mutants needs beyond the gate
// (mm: classification, equivalence, hint locations): the fixture's own
// verdict, and its mutator for the schema facts.
type judge struct {
	orig *gate.Verdict
	m    *mutator
}

// prove checks each mutant of f through the gate, with the fixture's
// expectation (request, clock, status, content type) and the mutant's
// status and content type where it sets them, and classifies the verdicts
// in the mutants' order. An equivalent mutant is not checked. One mutant
// body at a time: each is built from its description, checked, classified
// and dropped; the results hold none.
func prove(ctx context.Context, set *fixture.Set, f fixture.Fixture, p fixture.Prepared, j *judge, mutants []Mutant) ([]MutantResult, error) {
	tool := set.Contracts[f.Tool].Tool()
	results := make([]MutantResult, 0, len(mutants))
	for i := range mutants {
		start := time.Now()
		mu := mutants[i]
		mutants[i] = Mutant{}
		if why := j.m.equivalent(mu); why != "" { // mm: dropped before running
			results = append(results, MutantResult{Fixture: f, Mutant: mu, Outcome: Equivalent, Actual: "not run", Problem: why, Family: mu.Family, Duration: time.Since(start)})
			continue
		}
		mu.materialise()
		v, err := mu.Check(ctx, set, f, p)
		if err != nil {
			return nil, err
		}
		r := classify(f, tool, p.Expect.Request.ID, mu, v, j.orig.Output)
		if r.admitted() { // mm: hint locations for survivors only
			r.Location = j.m.locate(mu)
		}
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
// the request requestID, against orig, the agent output of the fixture
// itself:
//   - admitted: Survived when the output differs from orig or carries the
//     canary (it reaches the agent), or when the mutant is boundToRequest
//     (the agent gets a response that belongs to another call, even when
//     the changed field is not projected), else Unseen;
//   - refused: Leaked when the output is not exactly the failure envelope
//     for the tool and request, or carries the canary; Killed when the
//     reason is one the mutant expects, or any reason of the projection
//     stage (counted in FamilyProjection); else WrongReason.
func classify(f fixture.Fixture, tool, requestID string, mu Mutant, v *gate.Verdict, orig []byte) MutantResult {
	r := MutantResult{Fixture: f, Mutant: mu, Actual: "admitted", Outcome: Killed, Family: mu.Family}
	canary := mu.Canary != "" && bytes.Contains(v.Output, []byte(mu.Canary))
	switch {
	case v.Admitted && (canary || !bytes.Equal(v.Output, orig)):
		r.Outcome, r.Problem = Survived, "admitted and reaches the agent: "+mu.Hint+" would refuse it"
		if canary {
			r.Problem += "; its canary reached the agent output"
		}
	case v.Admitted && mu.boundToRequest():
		r.Outcome, r.Problem = Survived, "admitted and reaches the agent: the response belongs to another request, though the agent output is the fixture's: "+mu.Hint+" would refuse it"
	case v.Admitted:
		r.Outcome, r.Problem = Unseen, "admitted, but the agent output is the fixture's: nothing projected changed"
	case !fixture.IsVerdictFailure(v.Output, tool, requestID, v):
		r.Actual, r.Outcome, r.Problem = v.Reason, Leaked, "refused output is not exactly the failure envelope"
	case canary:
		r.Actual, r.Outcome, r.Problem = v.Reason, Leaked, "the canary "+mu.Canary+" reached the agent output"
	case v.Stage == gate.StageProjection:
		r.Actual, r.Family = v.Reason, FamilyProjection
	case !mu.expects(v.Reason):
		r.Actual, r.Outcome, r.Problem = v.Reason, WrongReason, fmt.Sprintf("refused by %s, expected %s", v.Reason, strings.Join(mu.Expect, " or "))
	default:
		r.Actual = v.Reason
	}
	return r
}

// boundToRequest reports whether mu swaps a value bound to the request
// (the semantic family: the request id, or a project or change the request
// named, echoed in the response): admitted, the whole response is another
// call's answer. A stale date-time is not: an old date in a field nothing
// projects and no freshness rule reads is a real answer (a commit's author
// date), so it is judged by what reaches the agent like any other value.
func (mu Mutant) boundToRequest() bool { return mu.Family == FamilySemantic }
