package reports

import (
	"fmt"
	"io"
	"strings"
)

// MaxSummary caps, in bytes, a job summary (--summary). GitHub refuses a
// step summary over 1 MiB (GitHub Docs, "Adding a job summary"); ours stays
// at half of that so that a step may append to it. Whatever does not fit
// is counted in a last line, "… N more not shown", and the report files
// (JUnit, JSON, SARIF) list everything.
const MaxSummary = 512 << 10

// MaxSummaryFailures is how many failures a run's summary lists in full
// (expected, actual, message, detail); the rest are counted in one line.
const MaxSummaryFailures = 50

// maxSummaryDetail caps, in bytes, the detail (a diff) of one failure in a
// summary.
const maxSummaryDetail = 4 << 10

// summaryTrailer is the room kept for the last "… N more not shown" line.
const summaryTrailer = 512

// summary is a Markdown document that stops growing at MaxSummary: a piece
// that does not fit is dropped and counted, and so is every later one.
type summary struct {
	b       strings.Builder
	limit   int
	omitted int
}

func newSummary() *summary { return &summary{limit: MaxSummary} }

// add appends s unless it (or an earlier piece) overflowed the cap; items
// is how many listed things s holds (rows, failures) for the count of
// what was left out.
func (s *summary) add(items int, text string) {
	if s.omitted > 0 || s.b.Len()+len(text) > s.limit-summaryTrailer {
		s.omitted += items
		return
	}
	s.b.WriteString(text)
}

func (s *summary) printf(items int, format string, a ...any) { s.add(items, fmt.Sprintf(format, a...)) }

// write ends the document with the count of what was left out, if any.
func (s *summary) write(w io.Writer) error {
	if s.omitted > 0 {
		fmt.Fprintf(&s.b, "\n… %d more not shown (the summary is capped at %d KiB; the report files list everything)\n", s.omitted, MaxSummary>>10)
	}
	_, err := io.WriteString(w, s.b.String())
	return err
}

// mdIdent is a name or path as a Markdown code span: Ident (distinct names
// print distinctly, control characters escaped), then mdCode.
func mdIdent(s string) string { return mdCode(Ident(s)) }

// mdFence returns text as a fenced code block whose fence is longer than
// any run of backticks in it, so nothing in it ends the block.
func mdFence(text string) string {
	longest, run := 0, 0
	for _, r := range text {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + "text\n" + strings.TrimRight(text, "\n") + "\n" + fence + "\n"
}

func verdictMark(ok bool) string {
	if ok {
		return "✅"
	}
	return "❌"
}

// WriteRunSummary writes run as GitHub-flavoured Markdown for a job summary
// ($GITHUB_STEP_SUMMARY): the totals, a table per tool and suite of
// passed, failed, unchecked and errored testcases, the mutation score per
// tool and upstream version when the run has a mutation suite
// (MutationScores), then the failures and broken contracts: the first
// MaxSummaryFailures in full (fixture path, suite, expected, actual,
// message, detail), then a count. Every text from a fixture or an upstream
// is cleaned (Clean, Ident) and Markdown-escaped, so a name with "|", "`",
// "<script>" or a newline neither breaks a table nor reaches the page as
// HTML. The whole is at most MaxSummary bytes.
//
// Its lint line, and the line saying --strict fails the run on it, are
// those of run.Lint (as WriteRunSummaryLint writes them) when the results
// carry one (the unsharded run's, or shard 1's, read back and merged by
// airlock merge); without it there is no lint line.
func WriteRunSummary(w io.Writer, run *Run) error {
	return writeRunSummary(w, run, "airlock run", nil)
}

// RunLintRecord is the lint line a run's JSON results carry ("lint",
// schemas/results.schema.json): the counts of the lint of the selected
// contracts and fixtures, whether the run had --strict, whether --strict
// failed the run on them (Strict and a finding that counts), and the
// command line that lists them. Written by the unsharded run and by
// shard 1 (shard.Shard.ReportsContract), so that airlock merge's summary
// says what the unsharded run's says.
type RunLintRecord struct {
	LintCounts
	Strict       bool   `json:"strict"`
	StrictFailed bool   `json:"strict_failed"`
	Command      string `json:"command"`
}

// Record is l as JSON results carry it; nil when l.Lint is nil.
func (l RunLint) Record() *RunLintRecord {
	if l.Lint == nil {
		return nil
	}
	return &RunLintRecord{LintCounts: l.Lint.Counts(), Strict: l.Strict, StrictFailed: l.Fails(), Command: l.command()}
}

// RunLint is what airlock run's lint line says (the lint of the run's
// contracts and fixtures), for its job summary (WriteRunSummaryLint).
type RunLint struct {
	// Lint is the lint of the selected contracts and fixtures; nil when the
	// run does not report it: a shard other than 1 (lint is a
	// contract-level entry, shard.Shard.ReportsContract), or a lint that
	// could not run.
	Lint *Lint
	// Strict is run --strict: any finding that counts (Lint.Active), a
	// warning or a note included, fails the run.
	Strict bool
	// Command is the command line that lists the findings, e.g.
	// "airlock lint --schemas proj/schemas"; "" means "airlock lint".
	Command string
}

// Fails reports whether the lint fails the run: Strict and a finding
// that counts.
func (l RunLint) Fails() bool { return l.Strict && l.Lint != nil && l.Lint.Active() > 0 }

// command is Command, "airlock lint" when empty, cleaned.
func (l RunLint) command() string {
	if l.Command == "" {
		return "airlock lint"
	}
	return Line(l.Command)
}

// WriteRunSummaryLint is WriteRunSummary with airlock run's lint line
// below the totals: "lint: 0 errors, 212 warnings, 0 notes", marked ✅
// without a finding that counts, ⚠️ with some that do not fail the run,
// ❌ with some that do (--strict); "lint: reported by shard 1/N" in
// another shard's summary when lint is nil. When the lint fails the run,
// a line right below the heading says so first ("❌ The run fails:
// --strict and 212 lint findings …"), so that a summary whose testcases
// all passed does not read as a passing run.
func WriteRunSummaryLint(w io.Writer, run *Run, lint RunLint) error {
	return writeRunSummary(w, run, "airlock run", &lint)
}

// WriteMutateSummary is WriteRunSummary for airlock mutate: run holds the
// mutation suite's testcases (mutate.Report.Cases).
func WriteMutateSummary(w io.Writer, run *Run) error {
	return writeRunSummary(w, run, "airlock mutate", nil)
}

// lintFindings is "1 lint finding" or "N lint findings".
func lintFindings(n int) string {
	if n == 1 {
		return "1 lint finding"
	}
	return fmt.Sprintf("%d lint findings", n)
}

func writeRunSummary(w io.Writer, run *Run, title string, lint *RunLint) error {
	rec, hasLine := run.Lint, run.Lint != nil
	if lint != nil {
		rec, hasLine = lint.Record(), true
	}
	s := newSummary()
	p, f, u := run.Counts()
	e := run.Errored()
	s.printf(0, "## %s", title)
	if !run.Shard.IsZero() {
		s.printf(0, " (shard %s)", run.Shard.String())
	}
	s.add(0, "\n")
	if rec != nil && rec.StrictFailed {
		s.printf(0, "\n**❌ The run fails: `--strict` and %s (%s).** %s lists them.\n",
			lintFindings(rec.Active()), mdText(rec.Summary()), mdCode(Line(rec.Command)))
	}
	s.printf(0, "\n%s %d testcases: %d passed, %d failed, %d unchecked, %d contract errors (%.2fs)\n",
		verdictMark(f == 0 && e == 0), len(run.Cases), p, f, u, e, run.Duration.Seconds())
	if hasLine {
		switch {
		case rec == nil && !run.Shard.ReportsContract():
			s.printf(0, "\nlint: reported by shard 1/%d\n", run.Shard.Count)
		case rec == nil:
		case rec.Active() == 0:
			s.printf(0, "\n✅ lint: %s\n", mdText(rec.Summary()))
		case rec.StrictFailed:
			s.printf(0, "\n❌ lint: %s; these fail the run (`--strict`); %s lists them\n", mdText(rec.Summary()), mdCode(Line(rec.Command)))
		default:
			s.printf(0, "\n⚠️ lint: %s; these do not fail the run (without `--strict`); %s lists them\n", mdText(rec.Summary()), mdCode(Line(rec.Command)))
		}
	}
	groups := run.Groups()
	if len(groups) > 0 {
		s.add(0, "\n| | tool | suite | passed | failed | unchecked | errored |\n| --- | --- | --- | ---: | ---: | ---: | ---: |\n")
		for _, g := range groups {
			s.printf(1, "| %s | %s | %s | %d | %d | %d | %d |\n", verdictMark(g.Failed == 0 && g.Errored == 0),
				mdIdent(g.Tool), mdIdent(g.Suite), g.Passed, g.Failed, g.Unchecked, g.Errored)
		}
	}
	if scores := MutationScores(run); len(scores) > 0 {
		s.add(0, "\n### Mutation score\n\n| tool | upstream version | killed | not killed | score |\n| --- | --- | ---: | ---: | ---: |\n")
		for _, sc := range scores {
			score := "not scored"
			if sc.Killed+sc.NotKilled > 0 {
				score = fmt.Sprintf("%.2f%%", sc.Percent())
			}
			s.printf(1, "| %s | %s | %d | %d | %s |\n", mdIdent(sc.Tool), mdIdent(sc.UpstreamVersion), sc.Killed, sc.NotKilled, score)
		}
	}
	shown, more := 0, 0
	for _, c := range run.Cases {
		if c.Status != Failed && c.Status != Errored {
			continue
		}
		if shown == 0 {
			s.add(0, "\n### Failures\n")
		}
		if shown == MaxSummaryFailures {
			more++
			continue
		}
		shown++
		var b strings.Builder
		if c.Status == Errored {
			fmt.Fprintf(&b, "\n❌ %s: contract does not load (%s)\n\n> %s\n", codeSpan(Ident(c.Tool), false), codeSpan(Ident(c.File)+lineColumn(c.Line, c.Column), false), mdText(c.Message))
		} else {
			fmt.Fprintf(&b, "\n❌ %s · %s\n\n- expected: %s\n- actual: %s\n", codeSpan(Ident(c.File), false), codeSpan(Ident(c.Classname()+" "+c.Name), false),
				codeSpan(c.Expected, false), codeSpan(c.Actual, false))
			if c.Message != "" {
				fmt.Fprintf(&b, "- %s\n", mdText(c.Message))
			}
			if c.Detail != "" {
				fmt.Fprintf(&b, "\n<details><summary>detail</summary>\n\n%s\n</details>\n", mdFence(Clean(c.Detail, maxSummaryDetail, true)))
			}
		}
		s.add(1, b.String())
	}
	if more > 0 {
		s.printf(more, "\n… %d more failures not shown here (the JUnit and JSON reports list them)\n", more)
	}
	return s.write(w)
}

// lineColumn is ":line:column" (":line" without a column), "" without a
// line.
func lineColumn(line, col int) string {
	switch {
	case line <= 0:
		return ""
	case col <= 0:
		return fmt.Sprintf(":%d", line)
	}
	return fmt.Sprintf(":%d:%d", line, col)
}

// MutationScore is one tool and upstream version's mutation score counted
// from a run's mutation testcases.
type MutationScore struct {
	Tool, UpstreamVersion string
	// Killed counts the passed mutants that were refused; NotKilled the
	// failed ones (survivors, wrong reasons, leaks, and with --strict the
	// unseen), stale baseline entries excluded. Unseen (without --strict),
	// baselined and equivalent mutants count in neither, as in mutate.Score.
	Killed, NotKilled int
}

// Percent is Killed / (Killed + NotKilled) in percent, rounded down to two
// decimals as mutate.Score.Percent rounds it; 100 when nothing was scored.
func (m MutationScore) Percent() float64 {
	scored := m.Killed + m.NotKilled
	if scored == 0 {
		return 100
	}
	return float64(int64(m.Killed)*10000/int64(scored)) / 100
}

// MutationScores counts the scores of run's mutation testcases (suite
// "mutation", as mutate.Report.Cases writes them: a killed mutant passed
// with its refusal's reason as actual, an unseen or baselined one passed
// with an actual starting "admitted (", a stale baseline entry failed with
// "#baseline:" in its name), per tool and upstream version in run order.
// Nil for a run without mutation testcases.
func MutationScores(run *Run) []MutationScore {
	var out []MutationScore
	index := map[[2]string]int{}
	for _, c := range run.Cases {
		if c.Suite != "mutation" || c.UpstreamVersion == "" {
			continue
		}
		k := [2]string{c.Tool, c.UpstreamVersion}
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, MutationScore{Tool: c.Tool, UpstreamVersion: c.UpstreamVersion})
		}
		switch {
		case c.Status == Passed && !strings.HasPrefix(c.Actual, "admitted ("):
			out[i].Killed++
		case c.Status == Failed && !strings.Contains(c.Name, "#baseline:"):
			out[i].NotKilled++
		}
	}
	return out
}

// WriteLintSummary writes l as a job summary: the totals, then a table of
// the findings that count (level, rule, file:line, message), at most
// MaxSummary bytes in all.
func WriteLintSummary(w io.Writer, l *Lint) error {
	s := newSummary()
	s.printf(0, "## airlock lint\n\n%s lint: %s\n", verdictMark(l.Count(SeverityError) == 0), l.Summary())
	first := true
	for _, f := range l.Findings {
		if f.Ignored != "" {
			continue
		}
		if first {
			s.add(0, "\n| level | rule | where | message |\n| --- | --- | --- | --- |\n")
			first = false
		}
		where := f.File
		if f.Line > 0 {
			where += fmt.Sprintf(":%d", f.Line)
			if f.Column > 0 {
				where += fmt.Sprintf(":%d", f.Column)
			}
		}
		msg := mdText(f.Message)
		if f.Pointer != "" {
			msg += " (at " + mdCode(pointerText(f.Pointer)) + ")"
		}
		s.printf(1, "| %s | %s | %s | %s |\n", f.Level, mdCode(f.Rule), mdIdent(where), msg)
	}
	for i, sk := range l.Skipped {
		if i == 0 {
			s.add(0, "\n")
		}
		s.printf(1, "- skipped: %s\n", mdText(sk))
	}
	return s.write(w)
}

// WriteDiffSummary writes d as a job summary: the totals, then a table of
// the breaking changes and of the other changes with gate impact
// (comparison, level, rule, where, message, gate impact), at most
// MaxSummary bytes in all. Where is file:line:column (Change.Where), or
// the instance location when the file is not known.
func WriteDiffSummary(w io.Writer, d *Diff) error {
	s := newSummary()
	s.printf(0, "## airlock diff\n\n%s %s\n", verdictMark(!d.Breaking()), mdText(diffTotals(d)))
	if d.Evidence != "" {
		s.printf(0, "\n%s\n", mdText(d.Evidence))
	}
	first := true
	for _, cmp := range d.Comparisons {
		for _, c := range cmp.Changes {
			if c.Level != Breaking && !c.TouchesGate() {
				continue
			}
			if first {
				s.add(0, "\n| comparison | level | rule | where | message | gate impact |\n| --- | --- | --- | --- | --- | --- |\n")
				first = false
			}
			where := c.Where()
			if where == "" {
				where = "instance " + instanceText(c.Instance)
			}
			s.printf(1, "| %s | %s | %s | %s | %s | %s |\n", mdText(cmp.Name), levelMark(c.Level), mdCode(c.Rule), mdIdent(where),
				mdText(c.Message), mdText(strings.TrimPrefix(impactText(c.Impact), "gate impact: ")))
		}
	}
	if first {
		s.add(0, "\nNo breaking change and no change with gate impact.\n")
	}
	return s.write(w)
}

// idents is Ident of each of in.
func idents(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = Ident(s)
	}
	return out
}

// WriteDriftSummary writes d as a job summary: the headline, the broken
// contracts, then a table of the breaking findings and unexpected refusals
// (tool, upstream version, what, where, fixtures), at most MaxSummary bytes
// in all.
func WriteDriftSummary(w io.Writer, d *Drift) error {
	s := newSummary()
	s.printf(0, "## airlock drift\n\n%s %s\n", verdictMark(!d.Summary.Breaking && len(d.Broken) == 0), mdText(DriftHeadline(d)))
	for i, b := range d.Broken {
		if i == 0 {
			s.add(0, "\n| broken contract | configuration error |\n| --- | --- |\n")
		}
		s.printf(1, "| %s | %s |\n", mdIdent(b.Tool), mdText(b.Message))
	}
	first := true
	row := func(t DriftTool, v DriftVersion, what, where, msg string, count int, fixtures []string) {
		if first {
			s.add(0, "\n| tool | upstream version | finding | where | message | fixtures |\n| --- | --- | --- | --- | --- | --- |\n")
			first = false
		}
		s.printf(1, "| %s | %s | %s | %s | %s | %s |\n", mdIdent(t.Tool), mdIdent(v.UpstreamVersion), mdText(what), mdCode(where), mdText(msg), fixtureList(count, idents(fixtures)))
	}
	for _, t := range d.Tools {
		for _, v := range t.Versions {
			for _, f := range v.Findings {
				if f.Breaking {
					row(t, v, f.Kind, instanceText(f.Pointer), f.Message, f.Count, f.Fixtures)
				}
			}
			for _, r := range v.Refusals {
				if r.Unexpected > 0 {
					row(t, v, "unexpected refusal", r.Reason, fmt.Sprintf("%d of %d refusal(s) not expected by their sidecars", r.Unexpected, r.Count), r.Count, r.Fixtures)
				}
			}
		}
	}
	if first && len(d.Broken) == 0 {
		s.add(0, "\nNo breaking finding.\n")
	}
	return s.write(w)
}
