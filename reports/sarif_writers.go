package reports

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/airlockdev/airlock/internal/shard"
)

// WriteLintSARIF writes l as a SARIF 2.1.0 log (see sarif.go for what every
// airlock log holds): every rule of l.Rules (the lint registry, in its
// order) as a reportingDescriptor with its help text and default level,
// and every finding as a result with its rule id and index, level,
// message, a physical location (the file as a relative URI reference, and
// the line and column when known, columns in Unicode code points) and a
// logical location (kind "object", name the JSON Pointer, fully qualified
// name "tool/upstream-version#/pointer"); a finding the contract ignores
// carries a suppression (kind inSource, status accepted, its reason as the
// justification). automationDetails.id is "airlock/lint/".
func WriteLintSARIF(w io.Writer, l *Lint, version string) error {
	c := exactLint(l)
	rules := make([]SARIFRule, len(c.Rules))
	for i, r := range c.Rules {
		rules[i] = SARIFRule{ID: r.ID, Level: string(r.Level), Description: r.Description, HelpURI: docsURI("lint.md")}
	}
	b := newSARIF("lint", version, rules, shard.Shard{})
	for _, f := range c.Findings {
		res, err := b.add(f.Rule, string(f.Level), f.Message, sarifPlace{File: f.File, Line: f.Line, Column: f.Column,
			Name: pointerText(f.Pointer), FullName: logicalName(f), Kind: "object"})
		if err != nil {
			return err
		}
		if f.Ignored != "" {
			res.Suppressions = []*sarifSuppression{{Kind: "inSource", Status: "accepted", Justification: exactText(f.Ignored, maxSARIFText)}}
		}
	}
	return b.write(w)
}

// docsURI is the page of docs/name in the module's documentation.
func docsURI(name string) string {
	return "https://github.com/airlockdev/airlock/blob/main/docs/" + name
}

// readmeURI is the README, where fixtures and suites are described.
const readmeURI = "https://github.com/airlockdev/airlock#readme"

// logicalName is a finding's place for people and code-scanning UIs:
// "tool/upstream-version#/pointer" ("tool#/pointer" without a version).
func logicalName(f LintFinding) string {
	s := f.Tool
	if f.UpstreamVersion != "" {
		s += "/" + f.UpstreamVersion
	}
	return s + "#" + f.Pointer
}

// Rule ids of airlock run's SARIF log: one per kind of fixture failure,
// so a code-scanning user can filter and triage by cause (RunRules,
// RunRuleOf).
const (
	RunRuleUnexpectedRefusal   = "unexpected-refusal"
	RunRuleUnexpectedAdmission = "unexpected-admission"
	RunRuleWrongReason         = "wrong-reason"
	RunRuleWrongStage          = "wrong-stage"
	RunRuleLeak                = "leak"
	RunRuleProjection          = "projection-mismatch"
	RunRuleMutation            = "mutant-reaches-agent"
	RunRuleBrokenContract      = "broken-contract"
)

// RunRules is airlock run's SARIF rule registry, in this fixed order; every
// rule is at level error (a failed or errored testcase fails the run).
var RunRules = []SARIFRule{
	{ID: RunRuleBrokenContract, Level: "error", HelpURI: docsURI("contracts.md"), Description: "The contract does not load (a bad manifest, a dangling $ref, a keyword the gate refuses): none of the tool's fixtures could run. The message names the file, line and key; fix the contract, airlock lint lists the same error."},
	{ID: RunRuleUnexpectedRefusal, Level: "error", HelpURI: readmeURI, Description: "The gate refused a fixture that must be admitted (accepted, historical, or a recorded fixture expected admitted). Either the contract became stricter than the upstream it describes, or the fixture is wrong; the message names the reason the gate gave."},
	{ID: RunRuleUnexpectedAdmission, Level: "error", HelpURI: readmeURI, Description: "The gate admitted a fixture that must be refused (a near-miss, a retired historical shape). The contract lets through a response it was written to refuse: tighten the schema or the semantic rule the sidecar's reason names."},
	{ID: RunRuleWrongReason, Level: "error", HelpURI: docsURI("reasons.md"), Description: "The gate refused the fixture, but for another reason than its sidecar expects. A refusal alone is not enough: the near-miss no longer proves the check it was written for. Fix the contract or the expected reason."},
	{ID: RunRuleWrongStage, Level: "error", HelpURI: readmeURI, Description: "The fixture's expectation was met, but one suite disagrees (for instance the refusal came from another stage than the suite the fixture is meant for). The message says which suite and what it saw."},
	{ID: RunRuleProjection, Level: "error", HelpURI: readmeURI, Description: "An admitted fixture's agent output differs from its golden (<name>.agent.json), or does not validate against the agent-facing schema. What the agent sees changed: review the difference, then refresh the golden with airlock run --update if it is meant."},
	{ID: RunRuleLeak, Level: "error", HelpURI: readmeURI, Description: "A rejected byte reached the agent output: a token of the raw body outside every projected path (4 bytes or longer), or a refused fixture's output that is not the fixed failure envelope. This is the gate's central promise; fix the projection at once."},
	{ID: RunRuleMutation, Level: "error", HelpURI: docsURI("mutate.md"), Description: "A mutant of an admitted fixture was admitted and its agent output differs from the fixture's: a changed response reaches the agent unseen by the contract (or, with --strict, an unseen mutant or a stale baseline entry). Tighten the contract, or accept the mutant in mutate.baseline.yaml."},
}

// RunRuleOf is the rule of RunRules a failed or errored testcase belongs
// to: a broken contract (suite contract), a leak (suite no-leak), a
// mutation survivor (suite mutation), then by expected and actual outcome:
// admitted expected and refused (unexpected-refusal), refused expected and
// admitted (unexpected-admission), two different reasons (wrong-reason);
// else an admitted fixture's projection suite (projection-mismatch), and
// any other disagreement (wrong-stage).
func RunRuleOf(c Case) string {
	switch {
	case c.Suite == SuiteContract:
		return RunRuleBrokenContract
	case c.Suite == "no-leak":
		return RunRuleLeak
	case c.Suite == "mutation":
		return RunRuleMutation
	case c.Expected == "admitted" && c.Actual != "admitted" && c.Actual != "":
		return RunRuleUnexpectedRefusal
	case c.Expected != "admitted" && c.Expected != "" && c.Actual == "admitted":
		return RunRuleUnexpectedAdmission
	case c.Expected != c.Actual && c.Expected != "" && c.Actual != "":
		return RunRuleWrongReason
	case c.Suite == "projection":
		return RunRuleProjection
	}
	return RunRuleWrongStage
}

// WriteRunSARIF writes r's failed and errored testcases (leaks of the
// no-leak suite and mutation survivors included; passed and unchecked ones
// are not results) as a SARIF 2.1.0 log: rules RunRules, one result per
// testcase at level error with its rule (RunRuleOf), the message "suite:
// message (expected E, got A)", the fixture file as physical location (line
// 1; a broken contract's file at the line and column its error names, when
// known) and the logical location
// "tool/upstream-version/kind/name" (kind "resource", name the fixture's
// name), the suite, expected and actual outcome in result.properties.
// run.properties "airlock/shard" records r.Shard ("K/N") and
// "airlock/shardSet" its Set digest; automationDetails.id is
// "airlock/run/" for every shard.
func WriteRunSARIF(w io.Writer, r *Run, version string) error {
	b := newSARIF("run", version, RunRules, r.Shard)
	for _, c := range r.Cases {
		if c.Status != Failed && c.Status != Errored {
			continue
		}
		msg := c.Suite + ": " + c.Message
		if c.Message == "" {
			msg = c.Suite + ": failed"
		}
		if c.Expected != "" || c.Actual != "" {
			msg += fmt.Sprintf(" (expected %s, got %s)", orNone(c.Expected), orNone(c.Actual))
		}
		full := strings.Join(nonEmpty(c.Tool, c.UpstreamVersion, c.Kind, c.Name), "/")
		line, col := 1, 0
		if c.Status == Errored {
			line, col = c.Line, c.Column
		}
		res, err := b.add(RunRuleOf(c), "error", msg, sarifPlace{File: c.File, Line: line, Column: col, Name: c.Name, FullName: full, Kind: "resource"})
		if err != nil {
			return err
		}
		props := map[string]any{"suite": c.Suite}
		if c.Expected != "" {
			props["expected"] = exactText(c.Expected, maxSARIFName)
		}
		if c.Actual != "" {
			props["actual"] = exactText(c.Actual, maxSARIFName)
		}
		res.Properties = props
	}
	return b.write(w)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func nonEmpty(in ...string) []string {
	var out []string
	for _, s := range in {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// DiffRule is one rule of airlock diff's registry (schemadiff.Rules) for a
// report: its stable id, level and description.
type DiffRule struct {
	ID          string
	Level       Level
	Description string
}

// DiffSARIFLevel is the SARIF level of a change level: breaking is error,
// contract-change warning (someone must decide on it), compatible note.
func DiffSARIFLevel(l Level) string {
	switch l {
	case Breaking:
		return "error"
	case ContractChange:
		return "warning"
	}
	return "note"
}

func diffSARIFRules(rules []DiffRule) []SARIFRule {
	out := make([]SARIFRule, len(rules))
	for i, r := range rules {
		out[i] = SARIFRule{ID: r.ID, Level: DiffSARIFLevel(r.Level), Description: r.Description, HelpURI: docsURI("diff.md")}
	}
	return out
}

// WriteDiffSARIF writes every change of d as a SARIF 2.1.0 log: rules the
// diff registry (rules, schemadiff.Rules in its order), one result per
// change at DiffSARIFLevel of its level, placed where the change is
// written: a manifest change at its File and Line, a schema change at
// NewFile, NewLine and NewColumn (where its NewPointer lies in the new
// schema's files; a removed member points at the enclosing schema), or the
// comparison's new file without a line when neither is known. The logical
// location is the comparison's name and the change's instance location
// ("deploy_status upstream v0 → v1#/items/*/state", kind "object"); the
// change's level, old and new pointers are in result.properties.
// automationDetails.id is "airlock/diff/".
func WriteDiffSARIF(w io.Writer, d *Diff, rules []DiffRule, version string) error {
	b := newSARIF("diff", version, diffSARIFRules(rules), shard.Shard{})
	for _, cmp := range d.Comparisons {
		for _, c := range cmp.Changes {
			if err := addChange(b, cmp, c, DiffSARIFLevel(c.Level)); err != nil {
				return err
			}
		}
	}
	return b.write(w)
}

// addChange adds change c of comparison cmp at level.
func addChange(b *sarifBuilder, cmp Comparison, c Change, level string) error {
	at := sarifPlace{Name: instanceText(c.Instance), FullName: cmp.Name + "#" + c.Instance, Kind: "object"}
	at.File, at.Line, at.Column = c.location()
	if at.File == "" {
		at.File = cmp.New
	}
	res, err := b.add(c.Rule, level, c.Message, at)
	if err != nil {
		return err
	}
	res.Properties = map[string]any{"level": string(c.Level), "oldPointer": exactText(c.OldPointer, maxSARIFName), "newPointer": exactText(c.NewPointer, maxSARIFName)}
	return nil
}

// Rule ids of airlock drift's SARIF log besides the finding kinds
// (FindingKinds) and the diff rules of its version changes.
const (
	DriftRuleUnexpectedRefusal = "unexpected-refusal"
	DriftRuleBrokenContract    = "broken-contract"
)

// driftKindRules describes the finding kinds and drift's own rules.
var driftKindRules = []SARIFRule{
	{ID: DriftRuleBrokenContract, Level: "error", Description: "The contract does not load: none of its tool's fixtures was read. The message names the file, line and key."},
	{ID: FindingForbidden, Level: "error", Description: "Recorded or historical responses carry a member the schema forbids (additionalProperties, unevaluatedProperties, a false property schema). Production would refuse them: the upstream changed, or the schema is too strict."},
	{ID: FindingMissing, Level: "error", Description: "Recorded or historical responses lack a member the schema requires. Production would refuse them."},
	{ID: FindingRetyped, Level: "error", Description: "Recorded or historical responses carry a value of a JSON type the schema does not allow. Production would refuse them."},
	{ID: FindingNewEnumValue, Level: "error", Description: "Recorded or historical responses carry a value outside the schema's enum or const. Production would refuse them."},
	{ID: FindingUndeclared, Level: "note", Description: "Responses carry a member of an open object that the schema does not describe: allowed, so nothing breaks, but new."},
	{ID: FindingViolation, Level: "warning", Description: "Responses fail another schema keyword (maxLength, pattern, format, …)."},
	{ID: DriftRuleUnexpectedRefusal, Level: "error", Description: "The gate refused recorded or historical fixtures whose sidecars did not expect that refusal."},
}

// DriftSARIFOptions are what WriteDriftSARIF needs besides the report.
type DriftSARIFOptions struct {
	// Version is airlock's version (the driver's).
	Version string
	// FixturesDir is the fixture tree the report read: a finding's
	// fixtures are FixturesDir/<tool>/<upstream-version>/<kind>/<name>.
	FixturesDir string
	// DiffRules is the diff registry (schemadiff.Rules), for the version
	// changes.
	DiffRules []DiffRule
}

// maxSARIFRelated is the most fixtures one drift result lists: the first
// as its location, the rest as related locations (code scanning shows at
// most 10 locations).
const maxSARIFRelated = 10

// WriteDriftSARIF writes d as a SARIF 2.1.0 log: rules the drift
// registry (broken-contract, the finding kinds of FindingKinds,
// unexpected-refusal) then the diff registry for the version changes,
// in that fixed order. Results: a broken contract at its file, line and
// column (error); each finding at its first fixture (line 1), up to 9 more as related
// locations, logical location "tool/upstream-version#pointer" — level
// error when it breaks the contract (Breaking), note for a breaking kind
// every fixture of which was an expected refusal and for an undeclared
// member, warning for another violation; each reason with unexpected
// refusals (error) at its fixtures; each version change at its place in
// the new schema (as WriteDiffSARIF), breaking ones at error only when
// the report fails on them (VersionChangesBreak), else warning.
// automationDetails.id is "airlock/drift/".
func WriteDriftSARIF(w io.Writer, d *Drift, o DriftSARIFOptions) error {
	rules := append(append([]SARIFRule{}, driftKindRules...), diffSARIFRules(o.DiffRules)...)
	for i := range rules[:len(driftKindRules)] {
		rules[i].HelpURI = docsURI("drift.md")
	}
	b := newSARIF("drift", o.Version, rules, d.Shard)
	for _, br := range d.Broken {
		if _, err := b.add(DriftRuleBrokenContract, "error", br.Message, sarifPlace{File: br.File, Line: br.Line, Column: br.Column, Name: br.Tool, FullName: br.Tool, Kind: "module"}); err != nil {
			return err
		}
	}
	for _, t := range d.Tools {
		for _, v := range t.Versions {
			places := func(fixtures []string, ptr string) (sarifPlace, []sarifPlace) {
				var ps []sarifPlace
				for i, f := range fixtures {
					if i == maxSARIFRelated {
						break
					}
					p := sarifPlace{Name: pointerText(ptr), FullName: t.Tool + "/" + v.UpstreamVersion + "#" + ptr, Kind: "object"}
					if o.FixturesDir != "" {
						p.File, p.Line = filepath.Join(o.FixturesDir, t.Tool, v.UpstreamVersion, filepath.FromSlash(f)), 1
					}
					ps = append(ps, p)
				}
				if len(ps) == 0 {
					return sarifPlace{Name: pointerText(ptr), FullName: t.Tool + "/" + v.UpstreamVersion + "#" + ptr, Kind: "object"}, nil
				}
				return ps[0], ps[1:]
			}
			for _, f := range v.Findings {
				level := "warning"
				switch {
				case f.Breaking:
					level = "error"
				case f.Kind != FindingViolation: // undeclared, or only expected refusals
					level = "note"
				}
				at, rel := places(f.Fixtures, f.Pointer)
				if _, err := b.add(f.Kind, level, f.Message, at, rel...); err != nil {
					return err
				}
			}
			for _, r := range v.Refusals {
				if r.Unexpected == 0 {
					continue
				}
				at, rel := places(r.Fixtures, "")
				at.Name, at.FullName = r.Reason, t.Tool+"/"+v.UpstreamVersion
				msg := fmt.Sprintf("%d of %d refusal(s) for %s were not expected by their sidecars", r.Unexpected, r.Count, r.Reason)
				if _, err := b.add(DriftRuleUnexpectedRefusal, "error", msg, at, rel...); err != nil {
					return err
				}
			}
		}
		for _, cmp := range t.VersionChanges {
			for _, c := range cmp.Changes {
				level := DiffSARIFLevel(c.Level)
				if c.Level == Breaking && !d.Summary.VersionChangesBreak {
					level = "warning"
				}
				if err := addChange(b, cmp, c, level); err != nil {
					return err
				}
			}
		}
	}
	return b.write(w)
}
