package reports_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/reports"
)

// hostileName is a fixture name a pull request could add: table and code
// span syntax, HTML, a newline, property separators of workflow commands.
const hostileName = "evil|`tick`\\|<script>alert(1)</script>,a:b\nline.json"

// unescapedPipes counts the "|" of a Markdown table row that split cells:
// those after an even run of backslashes (GFM tables).
func unescapedPipes(line string) int {
	n, run := 0, 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			run++
			continue
		case '|':
			if run%2 == 0 {
				n++
			}
		}
		run = 0
	}
	return n
}

// tableRowsKeepTheirCells checks that every table row of md splits into
// as many cells as its header row.
func tableRowsKeepTheirCells(md string) {
	want := -1
	for _, l := range strings.Split(md, "\n") {
		if !strings.HasPrefix(l, "|") {
			want = -1
			continue
		}
		if want < 0 {
			want = unescapedPipes(l)
			continue
		}
		Expect(unescapedPipes(l)).To(Equal(want), "row %q", l)
	}
}

// noRawHTML checks that md holds no "<" outside code spans and fenced
// blocks but the <details> and <summary> tags the summary writes itself.
func noRawHTML(md string) {
	fence := ""
	for _, l := range strings.Split(md, "\n") {
		if fence != "" {
			if strings.Trim(l, "`") == "" && len(l) >= len(fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(l, "```") {
			fence = l[:len(l)-len(strings.TrimLeft(l, "`"))]
			continue
		}
		outside := stripCodeSpans(l)
		outside = strings.NewReplacer("<details>", "", "</details>", "", "<summary>", "", "</summary>", "").Replace(outside)
		Expect(outside).NotTo(ContainSubstring("<"), "line %q", l)
	}
}

// stripCodeSpans removes the code spans of a Markdown line: a run of
// backticks up to the next run of the same length (CommonMark, "Code
// spans"); an unmatched run stays.
func stripCodeSpans(l string) string {
	var b strings.Builder
	for i := 0; i < len(l); {
		if l[i] == '\\' && i+1 < len(l) {
			i += 2 // a backslash escape: an escaped backtick opens no span
			continue
		}
		if l[i] != '`' {
			b.WriteByte(l[i])
			i++
			continue
		}
		j := i
		for j < len(l) && l[j] == '`' {
			j++
		}
		fence := l[i:j]
		end := -1
		for k := j; k < len(l); {
			if l[k] != '`' {
				k++
				continue
			}
			m := k
			for m < len(l) && l[m] == '`' {
				m++
			}
			if m-k == len(fence) {
				end = m
				break
			}
			k = m
		}
		if end < 0 {
			b.WriteString(fence)
			i = j
			continue
		}
		i = end
	}
	return b.String()
}

func failingRun() *reports.Run {
	return &reports.Run{Cases: []reports.Case{
		{Tool: "note_status", UpstreamVersion: "v1", Kind: "accepted", Suite: "parse", Name: "ok.json", File: "fixtures/note_status/v1/accepted/ok.json", Status: reports.Passed, Expected: "admitted", Actual: "admitted"},
		{Tool: "note_status", UpstreamVersion: "v1", Kind: "accepted", Suite: "parse", Name: hostileName, File: "fixtures/note_status/v1/accepted/" + hostileName,
			Status: reports.Failed, Expected: "admitted", Actual: "parse.duplicate_member", Message: hostile, Detail: "```\n</details><script>x</script>\n" + hostile},
		{Tool: "broken", Suite: reports.SuiteContract, Name: "contract.yaml", File: "schemas/broken/contract.yaml", Status: reports.Errored, Message: "schemas/broken/contract.yaml:3:1: " + hostile},
		{Tool: "note_status", UpstreamVersion: "v1", Kind: "accepted", Suite: "mutation", Name: "ok.json#values.a", File: "fixtures/note_status/v1/accepted/ok.json", Status: reports.Passed, Actual: "schema.enum"},
		{Tool: "note_status", UpstreamVersion: "v1", Kind: "accepted", Suite: "mutation", Name: "ok.json#values.b", File: "fixtures/note_status/v1/accepted/ok.json", Status: reports.Passed, Actual: "schema.type"},
		{Tool: "note_status", UpstreamVersion: "v1", Kind: "accepted", Suite: "mutation", Name: "ok.json#values.c", File: "fixtures/note_status/v1/accepted/ok.json", Status: reports.Failed, Actual: "admitted"},
		{Tool: "note_status", UpstreamVersion: "v1", Kind: "accepted", Suite: "mutation", Name: "ok.json#values.d", File: "fixtures/note_status/v1/accepted/ok.json", Status: reports.Passed, Actual: "admitted (unseen)"},
	}}
}

var _ = Describe("job summary (--summary)", func() {
	It("writes a run's counts per tool and suite, the mutation score and the failures, escaped", func() {
		var buf bytes.Buffer
		Expect(reports.WriteRunSummary(&buf, failingRun())).To(Succeed())
		md := buf.String()
		Expect(md).To(HavePrefix("## airlock run\n"))
		Expect(md).To(ContainSubstring("❌ 7 testcases: 4 passed, 2 failed, 0 unchecked, 1 contract errors"))
		Expect(md).To(ContainSubstring("| ❌ | `note_status` | `parse` | 1 | 1 | 0 | 0 |\n"))
		Expect(md).To(ContainSubstring("| ❌ | `broken` | `contract` | 0 | 0 | 0 | 1 |\n"))
		Expect(md).To(ContainSubstring("### Mutation score"))
		Expect(md).To(ContainSubstring("| `note_status` | `v1` | 2 | 1 | 66.66% |\n"), "killed 2 of 3 scored; unseen not scored, rounded down")
		Expect(md).To(ContainSubstring("- expected: `admitted`\n- actual: `parse.duplicate_member`\n"))
		Expect(md).To(ContainSubstring(`line.json`))
		Expect(md).To(ContainSubstring(`\x0aline.json`), "the name's newline is escaped, the name kept on one line")
		Expect(md).To(ContainSubstring("&lt;img src=x onerror=alert(1)&gt;"), "messages are HTML-escaped")
		Expect(md).NotTo(ContainSubstring("\x1b"))
		Expect(md).NotTo(ContainSubstring("\x00"))
		tableRowsKeepTheirCells(md)
		noRawHTML(md)
		Expect(md).To(ContainSubstring("````text\n"), "the detail's fence is longer than its backtick runs")
	})

	It("caps a run's summary at MaxSummary with a count of what was left out", func() {
		run := &reports.Run{}
		long := strings.Repeat("x", 900)
		for i := range 20000 {
			run.Cases = append(run.Cases, reports.Case{Tool: fmt.Sprintf("tool_%05d", i), UpstreamVersion: "v1", Kind: "accepted", Suite: "schema",
				Name: "f.json", File: "fixtures/f.json", Status: reports.Failed, Expected: "admitted", Actual: "schema.type", Message: long, Detail: long})
		}
		var buf bytes.Buffer
		Expect(reports.WriteRunSummary(&buf, run)).To(Succeed())
		Expect(buf.Len()).To(BeNumerically("<=", reports.MaxSummary))
		Expect(buf.Len()).To(BeNumerically(">", reports.MaxSummary-4096), "the cap is used, not a fraction of it")
		Expect(buf.String()).To(MatchRegexp(`\n… \d+ more not shown \(the summary is capped at 512 KiB; the report files list everything\)\n$`))
		tableRowsKeepTheirCells(buf.String())
	})

	It("lists at most MaxSummaryFailures failures in full, then counts the rest", func() {
		run := &reports.Run{}
		for i := range reports.MaxSummaryFailures + 7 {
			run.Cases = append(run.Cases, reports.Case{Tool: "t", UpstreamVersion: "v1", Kind: "accepted", Suite: "schema",
				Name: fmt.Sprintf("f%d.json", i), File: "fixtures/f.json", Status: reports.Failed, Expected: "admitted", Actual: "schema.type"})
		}
		var buf bytes.Buffer
		Expect(reports.WriteRunSummary(&buf, run)).To(Succeed())
		Expect(strings.Count(buf.String(), "- expected:")).To(Equal(reports.MaxSummaryFailures))
		Expect(buf.String()).To(ContainSubstring("… 7 more failures not shown here"))
	})

	It("writes lint, diff and drift summaries with their findings, escaped", func() {
		l := &reports.Lint{Findings: []reports.LintFinding{
			{Rule: "open-object", Level: reports.SeverityError, Tool: "t", File: "schemas/t/" + hostileName, Line: 4, Column: 2, Pointer: "/properties/a|b", Message: hostile},
			{Rule: "unbounded-string", Level: reports.SeverityWarning, Tool: "t", File: "schemas/t/x.json", Line: 9, Message: "m", Ignored: "accepted"},
		}}
		var buf bytes.Buffer
		Expect(reports.WriteLintSummary(&buf, l)).To(Succeed())
		md := buf.String()
		Expect(md).To(ContainSubstring("❌ lint: 1 error, 0 warnings, 0 notes, 1 ignored"))
		Expect(md).To(ContainSubstring(":4:2 ``"))
		Expect(md).NotTo(ContainSubstring("unbounded-string"), "an ignored finding is counted, not listed")
		tableRowsKeepTheirCells(md)
		noRawHTML(md)

		buf.Reset()
		Expect(reports.WriteDiffSummary(&buf, sampleDiff())).To(Succeed())
		md = buf.String()
		Expect(md).To(ContainSubstring("## airlock diff\n\n❌ 3 change(s): 1 breaking"))
		Expect(md).To(ContainSubstring("`response-property-removed`"))
		Expect(md).NotTo(ContainSubstring("response-property-enum-value-removed"), "a compatible change without gate impact is not listed")
		tableRowsKeepTheirCells(md)
		noRawHTML(md)

		d := &reports.Drift{Summary: reports.DriftSummary{Breaking: true, Fixtures: 2, BreakingFindings: 1}, Tools: []reports.DriftTool{{Tool: "t", Versions: []reports.DriftVersion{{
			UpstreamVersion: "v1", Fixtures: 2,
			Findings: []reports.DriftFinding{{Kind: reports.FindingForbidden, Pointer: "/x|y", Count: 1, Fixtures: []string{"recorded/" + hostileName}, Breaking: true, Message: hostile}},
			Refusals: []reports.RefusalCount{{Reason: "schema.type", Count: 1, Unexpected: 1, Fixtures: []string{"recorded/r.json"}}},
		}}}}}
		buf.Reset()
		Expect(reports.WriteDriftSummary(&buf, d)).To(Succeed())
		md = buf.String()
		Expect(md).To(ContainSubstring("❌ drift breaks the contract"))
		Expect(md).To(ContainSubstring("| `t` | `v1` | forbidden-member | `/x\\|y` |"))
		Expect(md).To(ContainSubstring("unexpected refusal | `schema.type`"))
		tableRowsKeepTheirCells(md)
		noRawHTML(md)
	})
})

var _ = Describe("GitHub annotations (--format github)", func() {
	It("escapes messages and properties as the Actions toolkit does, paths relative to the workspace", func() {
		var buf bytes.Buffer
		anns := []reports.Annotation{
			{Level: reports.AnnotationWarning, File: "/ws/schemas/t/a.json", Line: 3, Col: 7, Title: "lint: a,b", Message: "100% sure"},
			{Level: reports.AnnotationError, File: "fixtures/t/v1/accepted/" + hostileName, Title: "t.parse failed", Message: "first\r\nsecond ::error::forged"},
			{Level: reports.AnnotationNotice, File: "/elsewhere/x.json", Line: 2, Message: "outside"},
		}
		Expect(reports.WriteAnnotations(&buf, anns, reports.GitHubOptions{Workspace: "/ws", Dir: "/ws"})).To(Succeed())
		lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
		Expect(lines).To(HaveLen(3), "one line per annotation: no newline survives")
		Expect(lines[0]).To(HavePrefix("::error file=fixtures/t/v1/accepted/evil|`tick`\\\\|<script>alert(1)</script>%2Ca%3Ab\\x0aline.json,title=t.parse failed::first  second ::error::forged"), "errors first")
		Expect(lines[1]).To(Equal("::warning file=schemas/t/a.json,line=3,col=7,title=lint%3A a%2Cb::100%25 sure"))
		Expect(lines[2]).To(Equal("::notice::/elsewhere/x.json: outside"), "a file outside the workspace gets no file property")
		for _, l := range lines {
			Expect(l).To(MatchRegexp(`^::(error|warning|notice)( [^:]*)?::`))
		}
	})

	It("writes at most MaxAnnotations, then one notice with the count left out", func() {
		var anns []reports.Annotation
		for i := range reports.MaxAnnotations + 12 {
			anns = append(anns, reports.Annotation{Level: reports.AnnotationError, File: fmt.Sprintf("f%d.json", i), Message: "m"})
		}
		var buf bytes.Buffer
		Expect(reports.WriteAnnotations(&buf, anns, reports.GitHubOptions{})).To(Succeed())
		lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
		Expect(lines).To(HaveLen(reports.MaxAnnotations + 1))
		Expect(lines[reports.MaxAnnotations-1]).To(HavePrefix("::error file=f49.json::"))
		Expect(lines[reports.MaxAnnotations]).To(Equal("::notice title=airlock::12 more annotations not shown (at most 50 are written; the report files list every finding)"))
	})

	It("annotates failed testcases, lint findings by level, breaking changes and drift findings", func() {
		run := reports.RunAnnotations(failingRun())
		Expect(run).To(HaveLen(3), "the failed parse case, the broken contract and the failed mutant")
		Expect(run[0].File).To(Equal("fixtures/note_status/v1/accepted/" + hostileName))
		Expect(run[1].File).To(Equal("schemas/broken/contract.yaml"))

		lint := reports.LintAnnotations(&reports.Lint{Findings: []reports.LintFinding{
			{Rule: "a", Level: reports.SeverityNote, File: "x", Line: 1},
			{Rule: "b", Level: reports.SeverityWarning, File: "x", Line: 2, Column: 3},
			{Rule: "c", Level: reports.SeverityError, File: "x", Ignored: "why"},
		}})
		Expect(lint).To(HaveLen(2))
		Expect(lint[0].Level).To(Equal(reports.AnnotationNotice))
		Expect(lint[1]).To(Equal(reports.Annotation{Level: reports.AnnotationWarning, File: "x", Line: 2, Col: 3, Title: "airlock lint b"}))

		diff := reports.DiffAnnotations(sampleDiff())
		Expect(diff).To(HaveLen(1))
		Expect(diff[0].File).To(Equal("schemas/deploy_status/upstream.v1.schema.json"))
		Expect(diff[0].Title).To(Equal("airlock diff breaking response-property-removed"))

		d := &reports.Drift{Tools: []reports.DriftTool{{Tool: "t", Versions: []reports.DriftVersion{{UpstreamVersion: "v1",
			Findings: []reports.DriftFinding{{Kind: reports.FindingForbidden, Fixtures: []string{"recorded/r.json"}, Count: 1, Breaking: true}, {Kind: reports.FindingUndeclared}}}}}}}
		drift := reports.DriftAnnotations(d, "fixtures")
		Expect(drift).To(HaveLen(1))
		Expect(drift[0].File).To(Equal("fixtures/t/v1/recorded/r.json"))
	})
})

var _ = Describe("GitLab Code Quality (lint --format codequality)", func() {
	lint := func() *reports.Lint {
		return &reports.Lint{Findings: []reports.LintFinding{
			{Rule: "open-object", Level: reports.SeverityError, Tool: "t", UpstreamVersion: "v1", File: "schemas/t/up.json", Line: 4, Column: 2, Pointer: "/properties/a", Message: hostile},
			{Rule: "open-object", Level: reports.SeverityError, Tool: "t", UpstreamVersion: "v1", File: "schemas/t/up.json", Line: 9, Pointer: "/properties/a", Message: "twice at one pointer"},
			{Rule: "no-fixtures", Level: reports.SeverityNote, Tool: "t", File: "/ci/project/fixtures/t"},
			{Rule: "unbounded-string", Level: reports.SeverityWarning, Tool: "t", File: "schemas/t/up.json", Line: 5, Ignored: "accepted"},
		}}
	}

	It("writes the documented format: an array of issues with a stable, distinct fingerprint", func() {
		schema, err := os.ReadFile("testdata/codequality.schema.json")
		Expect(err).NotTo(HaveOccurred())
		var buf bytes.Buffer
		Expect(reports.WriteLintCodeQuality(&buf, lint(), "/ci/project", "/ci/project")).To(Succeed())
		validates(schema, buf.Bytes())
		var issues []struct {
			Description, CheckName, Fingerprint, Severity string
			Location                                      struct {
				Path  string
				Lines struct{ Begin int }
			}
		}
		Expect(json.Unmarshal(buf.Bytes(), &issues)).To(Succeed())
		Expect(issues).To(HaveLen(3), "the ignored finding is left out")
		Expect(issues[0].Severity).To(Equal("major"))
		Expect(issues[0].Location.Path).To(Equal("schemas/t/up.json"))
		Expect(issues[0].Location.Lines.Begin).To(Equal(4))
		Expect(issues[0].Description).To(HavePrefix(hostile), "exact text; JSON escapes it")
		Expect(issues[0].Fingerprint).NotTo(Equal(issues[1].Fingerprint), "two findings at one place stay distinct")
		Expect(issues[2].Severity).To(Equal("info"))
		Expect(issues[2].Location.Path).To(Equal("fixtures/t"), "relative to $CI_PROJECT_DIR")
		Expect(issues[2].Location.Lines.Begin).To(Equal(1), "the format needs a line")

		moved := lint()
		moved.Findings[0].Line, moved.Findings[0].Message = 40, "reworded"
		var again bytes.Buffer
		Expect(reports.WriteLintCodeQuality(&again, moved, "/ci/project", "/ci/project")).To(Succeed())
		var issues2 []struct{ Fingerprint string }
		Expect(json.Unmarshal(again.Bytes(), &issues2)).To(Succeed())
		Expect(issues2[0].Fingerprint).To(Equal(issues[0].Fingerprint), "stable when the line and wording change")
	})

	It("writes an empty array for no finding", func() {
		var buf bytes.Buffer
		Expect(reports.WriteLintCodeQuality(&buf, &reports.Lint{}, "", "")).To(Succeed())
		Expect(buf.String()).To(Equal("[]\n"))
	})
})
