package reports

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Severity is a lint finding's level, spelt as SARIF 2.1.0 spells a
// result's level (§3.27.10): error, warning, note.
type Severity string

// Lint severities, most severe first.
const (
	// SeverityError: the contract refuses responses it was written to
	// admit, or lets through a value nothing checked.
	SeverityError Severity = "error"
	// SeverityWarning: the contract is weaker than it looks; production
	// may send what nobody meant to admit.
	SeverityWarning Severity = "warning"
	// SeverityNote: worth knowing, nothing to fix.
	SeverityNote Severity = "note"
)

// LintRule describes one lint rule for a report: its stable id, level and
// description (the registry in package lint is the source).
type LintRule struct {
	ID          string   `json:"id"`
	Level       Severity `json:"level"`
	Description string   `json:"description"`
}

// LintFinding is one place a lint rule fired.
type LintFinding struct {
	// Rule is the rule's stable id, e.g. "open-object"; Level its level.
	Rule  string   `json:"rule"`
	Level Severity `json:"level"`
	// Tool is the contract's tool; UpstreamVersion the upstream version
	// the finding concerns ("" for the agent-facing schema or the whole
	// contract).
	Tool            string `json:"tool"`
	UpstreamVersion string `json:"upstream_version,omitempty"`
	// File is the file the finding is in (a schema file, contract.yaml, or
	// a fixture folder), as the contract was loaded; Line and Column are
	// 1-based, 0 when unknown; Column counts Unicode code points (SARIF's
	// unicodeCodePoints), not bytes.
	File   string `json:"file"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	// Pointer is the RFC 6901 JSON Pointer of the offending keyword or key
	// in File ("" for the whole file); Instance, when not "", the instance
	// location it applies to in the response ("*" for every array element
	// or additional member).
	Pointer  string `json:"pointer"`
	Instance string `json:"instance,omitempty"`
	// Message is one sentence for people.
	Message string `json:"message"`
	// Ignored is the reason the contract's lint.ignore gives for accepting
	// this finding; "" for a finding that counts. An ignored finding is
	// listed (JSON, and SARIF as a suppressed result) but not counted, and
	// fails nothing.
	Ignored string `json:"ignored,omitempty"`
}

// Lint is the result of airlock lint.
type Lint struct {
	// Rules are the rules that ran, in registry order.
	Rules []LintRule `json:"rules"`
	// Findings are sorted by file, line, column and rule.
	Findings []LintFinding `json:"findings"`
	// Skipped says why rules did not run (e.g. the fixture rules without a
	// fixtures folder), one sentence each.
	Skipped []string `json:"skipped,omitempty"`
}

// Count returns how many findings that count (not ignored) have level l.
func (l *Lint) Count(level Severity) int {
	n := 0
	for _, f := range l.Findings {
		if f.Level == level && f.Ignored == "" {
			n++
		}
	}
	return n
}

// Active returns how many findings count (are not ignored).
func (l *Lint) Active() int {
	return l.Count(SeverityError) + l.Count(SeverityWarning) + l.Count(SeverityNote)
}

// Summary is the one-line count of findings: "2 errors, 5 warnings, 0
// notes", then ", 3 ignored" when the contracts accepted some.
func (l *Lint) Summary() string { return l.Counts().Summary() }

// Counts returns l's findings counted by level (those that count) and
// ignored.
func (l *Lint) Counts() LintCounts {
	return LintCounts{Errors: l.Count(SeverityError), Warnings: l.Count(SeverityWarning), Notes: l.Count(SeverityNote), Ignored: len(l.Findings) - l.Active()}
}

// LintCounts is a lint's findings counted: Errors, Warnings and Notes
// those that count at each level, Ignored those the contracts' lint.ignore
// accepts (listed, never counted). Every count is ≥ 0.
type LintCounts struct {
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Notes    int `json:"notes"`
	Ignored  int `json:"ignored"`
}

// Active is how many findings count: Errors + Warnings + Notes.
func (c LintCounts) Active() int { return c.Errors + c.Warnings + c.Notes }

// Summary is Lint.Summary's line for these counts.
func (c LintCounts) Summary() string {
	s := fmt.Sprintf("%s, %s, %s", plural(c.Errors, "error"), plural(c.Warnings, "warning"), plural(c.Notes, "note"))
	if c.Ignored > 0 {
		s += fmt.Sprintf(", %d ignored", c.Ignored)
	}
	return s
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// lintVersion is the version of the JSON lint format.
const lintVersion = 1

//go:embed lint.schema.json
var lintSchemaJSON []byte

// LintSchema returns the published JSON Schema of WriteLintJSON's output,
// the same bytes as schemas/lint.schema.json.
func LintSchema() []byte { return append([]byte(nil), lintSchemaJSON...) }

// mapLint returns l with every text passed through clean.
func mapLint(l *Lint, clean func(string) string) Lint {
	out := Lint{Rules: make([]LintRule, len(l.Rules)), Findings: make([]LintFinding, len(l.Findings))}
	for i, r := range l.Rules {
		out.Rules[i] = LintRule{ID: clean(r.ID), Level: r.Level, Description: clean(r.Description)}
	}
	for i, f := range l.Findings {
		f.Rule, f.Tool, f.UpstreamVersion, f.File = clean(f.Rule), clean(f.Tool), clean(f.UpstreamVersion), clean(f.File)
		f.Pointer, f.Instance, f.Message, f.Ignored = clean(f.Pointer), clean(f.Instance), clean(f.Message), clean(f.Ignored)
		out.Findings[i] = f
	}
	for _, s := range l.Skipped {
		out.Skipped = append(out.Skipped, clean(s))
	}
	return out
}

// cleanLint makes every text of l safe for a terminal (see Clean): the
// text output.
func cleanLint(l *Lint) Lint { return mapLint(l, Line) }

// exactLint keeps every text of l as it is, only valid UTF-8 (an invalid
// byte becomes U+FFFD), for the JSON and SARIF outputs: their encoders
// escape every control character, and a pointer or file name must stay
// exactly what the file holds for a tool to find the place again.
func exactLint(l *Lint) Lint {
	return mapLint(l, func(s string) string { return strings.ToValidUTF8(s, "\uFFFD") })
}

// WriteLintJSON writes l per schemas/lint.schema.json, every text exact
// (exactLint): pointers and file names as the files spell them.
func WriteLintJSON(w io.Writer, l *Lint) error {
	c := exactLint(l)
	if c.Findings == nil {
		c.Findings = []LintFinding{}
	}
	doc := struct {
		Version  int           `json:"version"`
		Errors   int           `json:"errors"`
		Warnings int           `json:"warnings"`
		Notes    int           `json:"notes"`
		Ignored  int           `json:"ignored"`
		Rules    []LintRule    `json:"rules"`
		Findings []LintFinding `json:"findings"`
		Skipped  []string      `json:"skipped,omitempty"`
	}{lintVersion, l.Count(SeverityError), l.Count(SeverityWarning), l.Count(SeverityNote), len(l.Findings) - l.Active(), c.Rules, c.Findings, c.Skipped}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// WriteLintText writes l for a terminal or a log, one line per finding as
// compilers write them ("file:line:column: level: message [rule]", then
// the JSON Pointer), each skipped rule set, and the totals.
func WriteLintText(w io.Writer, l *Lint) error {
	c := cleanLint(l)
	var b strings.Builder
	for _, f := range c.Findings {
		if f.Ignored != "" {
			continue // counted in the totals; listed in JSON and SARIF
		}
		b.WriteString(f.File)
		if f.Line > 0 {
			fmt.Fprintf(&b, ":%d", f.Line)
			if f.Column > 0 {
				fmt.Fprintf(&b, ":%d", f.Column)
			}
		}
		fmt.Fprintf(&b, ": %s: %s [%s]\n", f.Level, f.Message, f.Rule)
		var at []string
		if f.Pointer != "" {
			at = append(at, "at "+pointerText(f.Pointer))
		}
		if f.Instance != "" {
			at = append(at, "instance "+instanceText(f.Instance))
		}
		if f.UpstreamVersion != "" {
			at = append(at, f.Tool+" upstream "+f.UpstreamVersion)
		} else {
			at = append(at, f.Tool)
		}
		fmt.Fprintf(&b, "    %s\n", strings.Join(at, ", "))
	}
	for _, s := range c.Skipped {
		fmt.Fprintf(&b, "skipped: %s\n", s)
	}
	fmt.Fprintf(&b, "lint: %s\n", l.Summary())
	_, err := io.WriteString(w, b.String())
	return err
}
