package reports

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/airlockdev/airlock/internal/shard"
)

// Finding kinds of a drift report. The first four break the contract when
// a fixture that was not expected to be refused shows them.
const (
	// FindingForbidden: a member the schema refuses (additionalProperties,
	// unevaluatedProperties, a false property schema).
	FindingForbidden = "forbidden-member"
	// FindingMissing: a required member is absent.
	FindingMissing = "missing-required"
	// FindingRetyped: a value has a JSON type the schema does not allow.
	FindingRetyped = "retyped"
	// FindingNewEnumValue: a value outside the schema's enum or const.
	FindingNewEnumValue = "new-enum-value"
	// FindingUndeclared: a member of an open object the schema does not
	// describe; allowed, so it does not break the contract, but new.
	FindingUndeclared = "undeclared-member"
	// FindingViolation: any other schema keyword the value fails
	// (maxLength, pattern, format, …).
	FindingViolation = "violation"
)

// FindingKinds lists the kinds in report order.
var FindingKinds = []string{FindingForbidden, FindingMissing, FindingRetyped, FindingNewEnumValue, FindingUndeclared, FindingViolation}

// Drift is what airlock drift found: per tool and upstream version, what
// the recorded and historical fixtures show against the contract, and the
// changes between consecutive upstream versions.
type Drift struct {
	Summary DriftSummary `json:"summary"`
	Tools   []DriftTool  `json:"tools"`
	// Broken lists the selected tools whose contract did not load, sorted
	// by tool: none of their fixtures was read (airlock drift exits 2).
	Broken []BrokenContract `json:"broken"`
	// Shard is the part of the fixtures this report covers (drift --shard
	// K/N; the zero Shard: all). Only shard 1 holds the broken contracts and
	// the changes between upstream versions.
	Shard shard.Shard `json:"shard,omitzero"`
}

// BrokenContract is a tool whose contract did not load.
type BrokenContract struct {
	// Tool is the contract folder's name.
	Tool string `json:"tool"`
	// File is the file the configuration error names; Line and Column the
	// 1-based place in it, 0 when unknown.
	File   string `json:"file"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	// Message is the error's one-line text: file:line:column: key: message.
	Message string `json:"message"`
}

// DriftSummary says whether anything breaks the contract, and why.
type DriftSummary struct {
	// Breaking is true when anything below breaks the contract: airlock
	// drift then exits 1.
	Breaking bool `json:"breaking"`
	// Fixtures is how many recorded and historical fixtures were read.
	Fixtures int `json:"fixtures"`
	// BreakingFindings counts findings with Breaking set.
	BreakingFindings int `json:"breaking_findings"`
	// UnexpectedRefusals counts fixtures the gate refused although their
	// sidecar did not expect that refusal.
	UnexpectedRefusals int `json:"unexpected_refusals"`
	// BreakingVersionChanges counts breaking changes between consecutive
	// upstream versions; they make the report breaking only when
	// VersionChangesBreak is set.
	BreakingVersionChanges int  `json:"breaking_version_changes"`
	VersionChangesBreak    bool `json:"version_changes_break"`
}

// DriftTool is one tool's part of the report.
type DriftTool struct {
	Tool            string         `json:"tool"`
	ContractVersion string         `json:"contract_version"`
	Versions        []DriftVersion `json:"upstream_versions"`
	// VersionChanges compares each upstream version's schema with the
	// previous one's (versions in natural order).
	VersionChanges []Comparison `json:"version_changes"`
}

// DriftVersion is what one upstream version's fixtures show.
type DriftVersion struct {
	UpstreamVersion string `json:"upstream_version"`
	// Fixtures = Recorded + Historical = Admitted + Refused.
	Fixtures   int            `json:"fixtures"`
	Recorded   int            `json:"recorded"`
	Historical int            `json:"historical"`
	Admitted   int            `json:"admitted"`
	Refused    int            `json:"refused"`
	Refusals   []RefusalCount `json:"refusals"`
	Findings   []DriftFinding `json:"findings"`
	Observed   []ObservedPath `json:"observed"`
}

// RefusalCount is how often the gate refused this version's fixtures for
// one reason.
type RefusalCount struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
	// Unexpected counts refusals the fixture's sidecar did not expect.
	Unexpected int `json:"unexpected"`
	// Fixtures are "<kind>/<file name>".
	Fixtures []string `json:"fixtures"`
}

// DriftFinding is one difference between the fixtures and the schema,
// aggregated over fixtures.
type DriftFinding struct {
	Kind string `json:"kind"`
	// Pointer is the instance location (JSON Pointer, "*" for every array
	// element) of the member or value.
	Pointer string `json:"pointer"`
	// Keyword is the failing schema keyword of a violation.
	Keyword string `json:"keyword,omitempty"`
	// Value is the JSON text of a new enum value.
	Value string `json:"value,omitempty"`
	// Seen and Allowed are JSON types (retyped) or values (new-enum-value).
	Seen    []string `json:"seen,omitempty"`
	Allowed []string `json:"allowed,omitempty"`
	// Count is how many fixtures show it; Fixtures are "<kind>/<file name>".
	Count    int      `json:"count"`
	Fixtures []string `json:"fixtures"`
	// Breaking: the kind breaks the contract and at least one fixture
	// showing it was not an expected refusal.
	Breaking bool   `json:"breaking"`
	Message  string `json:"message"`
}

// ObservedPath is the shape fixtures show at one instance location.
type ObservedPath struct {
	Pointer string `json:"pointer"`
	// Types are the JSON types seen ("integer" for integral numbers).
	Types []string `json:"types"`
	// Count is how many fixtures have the path.
	Count int `json:"count"`
	// Values are the distinct strings seen when they look like an enum
	// (few and short); absent otherwise.
	Values []string `json:"values,omitempty"`
	// MinLength and MaxLength are string lengths in characters.
	MinLength *int `json:"min_length,omitempty"`
	MaxLength *int `json:"max_length,omitempty"`
	// Declared is false when the schema does not describe the member.
	Declared bool `json:"declared"`
}

// driftVersion is the version of the JSON drift format.
const driftVersion = 1

//go:embed drift.schema.json
var driftSchemaJSON []byte

// DriftSchema returns the published JSON Schema of WriteDriftJSON's
// output, the same bytes as schemas/drift.schema.json.
func DriftSchema() []byte { return append([]byte(nil), driftSchemaJSON...) }

func lines(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = Line(s)
	}
	return out
}

// cleanDrift returns a copy of d with every text made safe for a report
// and nil lists made empty.
func cleanDrift(d *Drift) Drift {
	out := Drift{Summary: d.Summary, Tools: make([]DriftTool, len(d.Tools)), Broken: make([]BrokenContract, len(d.Broken))}
	for i, b := range d.Broken {
		out.Broken[i] = BrokenContract{Tool: Ident(b.Tool), File: Ident(b.File), Line: max(b.Line, 0), Column: max(b.Column, 0), Message: Line(b.Message)}
	}
	for i, t := range d.Tools {
		t.Tool, t.ContractVersion = Line(t.Tool), Line(t.ContractVersion)
		t.VersionChanges = cleanComparisons(t.VersionChanges)
		versions := make([]DriftVersion, len(t.Versions))
		for j, v := range t.Versions {
			v.UpstreamVersion = Line(v.UpstreamVersion)
			refusals := make([]RefusalCount, len(v.Refusals))
			for k, r := range v.Refusals {
				r.Reason, r.Fixtures = Line(r.Reason), lines(r.Fixtures)
				refusals[k] = r
			}
			findings := make([]DriftFinding, len(v.Findings))
			for k, f := range v.Findings {
				f.Pointer, f.Keyword, f.Value, f.Message = Line(f.Pointer), Line(f.Keyword), Line(f.Value), Line(f.Message)
				f.Seen, f.Allowed, f.Fixtures = lines(f.Seen), lines(f.Allowed), lines(f.Fixtures)
				findings[k] = f
			}
			observed := make([]ObservedPath, len(v.Observed))
			for k, o := range v.Observed {
				o.Pointer, o.Types = Line(o.Pointer), lines(o.Types)
				if o.Values != nil {
					o.Values = lines(o.Values)
				}
				observed[k] = o
			}
			v.Refusals, v.Findings, v.Observed = refusals, findings, observed
			versions[j] = v
		}
		t.Versions = versions
		out.Tools[i] = t
	}
	return out
}

// WriteDriftJSON writes d per schemas/drift.schema.json.
func WriteDriftJSON(w io.Writer, d *Drift) error {
	c := cleanDrift(d)
	doc := struct {
		Version int              `json:"version"`
		Summary DriftSummary     `json:"summary"`
		Tools   []DriftTool      `json:"tools"`
		Broken  []BrokenContract `json:"broken"`
		Shard   shard.Shard      `json:"shard,omitzero"`
	}{driftVersion, c.Summary, c.Tools, c.Broken, d.Shard}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// DriftHeadline is the report's one-line verdict.
func DriftHeadline(d *Drift) string {
	s := d.Summary
	verdict := "no drift breaks the contract"
	switch {
	case s.Breaking:
		verdict = "drift breaks the contract"
	case len(d.Broken) > 0:
		verdict = "no drift breaks the contracts read, but not every contract loads"
	}
	versionNote := ""
	if !s.VersionChangesBreak && s.BreakingVersionChanges > 0 {
		versionNote = " (not counted)"
	}
	brokenNote := ""
	if n := len(d.Broken); n > 0 {
		brokenNote = fmt.Sprintf("; %d broken contract(s) not read", n)
	}
	return fmt.Sprintf("%s: %d fixture(s), %d breaking finding(s), %d unexpected refusal(s), %d breaking change(s) between upstream versions%s%s",
		verdict, s.Fixtures, s.BreakingFindings, s.UnexpectedRefusals, s.BreakingVersionChanges, versionNote, brokenNote)
}

// WriteDriftMarkdown writes d as Markdown for a pull request: the verdict,
// a "Broken contracts" table (tool, error) when a contract did not load,
// then per tool a table of upstream versions, each version's findings,
// refusals and observed shape, and the changes between versions.
func WriteDriftMarkdown(w io.Writer, d *Drift) error {
	c := cleanDrift(d)
	var b strings.Builder
	b.WriteString("# airlock drift\n\n")
	mark := "✅"
	if c.Summary.Breaking || len(c.Broken) > 0 {
		mark = "❌"
	}
	fmt.Fprintf(&b, "%s %s\n", mark, mdText(DriftHeadline(&c)))
	if len(c.Broken) > 0 {
		b.WriteString("\n## Broken contracts\n\nThese contracts did not load; none of their fixtures was read.\n\n| tool | configuration error |\n| --- | --- |\n")
		for _, x := range c.Broken {
			fmt.Fprintf(&b, "| %s | %s |\n", mdCode(x.Tool), mdCode(x.Message))
		}
	}
	for _, t := range c.Tools {
		fmt.Fprintf(&b, "\n## %s (contract %s)\n\n", mdCode(t.Tool), mdCode(t.ContractVersion))
		b.WriteString("| upstream version | fixtures | recorded | historical | admitted | refused | breaking findings |\n| --- | --- | --- | --- | --- | --- | --- |\n")
		for _, v := range t.Versions {
			n := 0
			for _, f := range v.Findings {
				if f.Breaking {
					n++
				}
			}
			fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d |\n", mdCode(v.UpstreamVersion), v.Fixtures, v.Recorded, v.Historical, v.Admitted, v.Refused, n)
		}
		for _, v := range t.Versions {
			if v.Fixtures == 0 {
				continue
			}
			fmt.Fprintf(&b, "\n### %s %s\n", mdCode(t.Tool), mdCode(v.UpstreamVersion))
			if len(v.Findings) > 0 {
				b.WriteString("\n| | finding | pointer | detail | fixtures |\n| --- | --- | --- | --- | --- |\n")
				for _, f := range v.Findings {
					m := "ℹ️"
					if f.Breaking {
						m = "❌"
					}
					fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", m, f.Kind, mdCode(f.Pointer), mdText(f.Message), fixtureList(f.Count, f.Fixtures))
				}
			} else {
				b.WriteString("\nNo findings: every fixture fits the schema.\n")
			}
			if len(v.Refusals) > 0 {
				b.WriteString("\n| refused for | count | unexpected | fixtures |\n| --- | --- | --- | --- |\n")
				for _, r := range v.Refusals {
					fmt.Fprintf(&b, "| %s | %d | %d | %s |\n", mdCode(r.Reason), r.Count, r.Unexpected, fixtureList(r.Count, r.Fixtures))
				}
			}
			if len(v.Observed) > 0 {
				fmt.Fprintf(&b, "\n<details><summary>Observed shape (%d paths)</summary>\n\n", len(v.Observed))
				b.WriteString("| pointer | types | seen in | values | length | declared |\n| --- | --- | --- | --- | --- | --- |\n")
				for _, o := range v.Observed {
					var vals []string
					for _, x := range o.Values {
						vals = append(vals, mdCode(x))
					}
					length := ""
					if o.MinLength != nil && o.MaxLength != nil {
						length = fmt.Sprintf("%d–%d", *o.MinLength, *o.MaxLength)
					}
					declared := "yes"
					if !o.Declared {
						declared = "**no**"
					}
					fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s |\n", mdCode(o.Pointer), mdText(strings.Join(o.Types, ", ")), o.Count, strings.Join(vals, " "), length, declared)
				}
				b.WriteString("\n</details>\n")
			}
		}
		for _, cmp := range t.VersionChanges {
			fmt.Fprintf(&b, "\n### %s\n\n", mdText(cmp.Name))
			writeChangeTable(&b, cmp.Changes)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fixtureList shows at most three fixture names and how many more.
func fixtureList(count int, names []string) string {
	var parts []string
	for i, n := range names {
		if i == 3 {
			break
		}
		parts = append(parts, mdCode(n))
	}
	s := strings.Join(parts, ", ")
	if more := count - len(parts); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}
