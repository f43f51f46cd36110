package reports_test

import (
	"bytes"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/internal/shard"
	"github.com/airlockdev/airlock/reports"
)

// lintOf is a lint with warnings warnings and one ignored finding.
func lintOf(warnings int) *reports.Lint {
	l := &reports.Lint{Findings: []reports.LintFinding{{Rule: "x", Level: reports.SeverityError, File: "f", Ignored: "accepted"}}}
	for range warnings {
		l.Findings = append(l.Findings, reports.LintFinding{Rule: "unbounded-string", Level: reports.SeverityWarning, File: "schemas/_components/x.json"})
	}
	return l
}

// passingRun is 27 passed testcases.
func passingRun() *reports.Run {
	r := &reports.Run{}
	for range 27 {
		r.Cases = append(r.Cases, reports.Case{Tool: "t", UpstreamVersion: "v1", Kind: "accepted", Suite: "parse", Name: "a.json", File: "f/a.json", Status: reports.Passed})
	}
	return r
}

var _ = Describe("run's lint line in its summary and annotations (--strict)", func() {
	It("says first, prominently, that --strict fails a run whose testcases all passed, and which command lists the findings", func() {
		lint := reports.RunLint{Lint: lintOf(212), Strict: true, Command: "airlock lint --schemas proj/schemas"}
		Expect(lint.Fails()).To(BeTrue())
		var buf bytes.Buffer
		Expect(reports.WriteRunSummaryLint(&buf, passingRun(), lint)).To(Succeed())
		md := buf.String()
		Expect(md).To(HavePrefix("## airlock run\n\n**❌ The run fails: `--strict` and 212 lint findings (0 errors, 212 warnings, 0 notes, 1 ignored).** `airlock lint --schemas proj/schemas` lists them.\n\n✅ 27 testcases: 27 passed"))
		Expect(md).To(ContainSubstring("\n❌ lint: 0 errors, 212 warnings, 0 notes, 1 ignored; these fail the run (`--strict`); `airlock lint --schemas proj/schemas` lists them\n"))
	})

	It("shows the lint totals without failing when --strict is off, or nothing counts", func() {
		var buf bytes.Buffer
		Expect(reports.WriteRunSummaryLint(&buf, passingRun(), reports.RunLint{Lint: lintOf(3)})).To(Succeed())
		Expect(buf.String()).NotTo(ContainSubstring("The run fails"))
		Expect(buf.String()).To(ContainSubstring("\n⚠️ lint: 0 errors, 3 warnings, 0 notes, 1 ignored; these do not fail the run (without `--strict`); `airlock lint` lists them\n"))

		buf.Reset()
		Expect(reports.WriteRunSummaryLint(&buf, passingRun(), reports.RunLint{Lint: lintOf(0), Strict: true})).To(Succeed())
		Expect(buf.String()).NotTo(ContainSubstring("The run fails"))
		Expect(buf.String()).To(ContainSubstring("\n✅ lint: 0 errors, 0 warnings, 0 notes, 1 ignored\n"))
	})

	It("leaves lint to shard 1, and WriteRunSummary (merge) writes no lint line for results without one", func() {
		r := passingRun()
		r.Shard = shard.Shard{Index: 2, Count: 3}
		var buf bytes.Buffer
		Expect(reports.WriteRunSummaryLint(&buf, r, reports.RunLint{Strict: true})).To(Succeed())
		Expect(buf.String()).To(ContainSubstring("\nlint: reported by shard 1/3\n"))
		Expect(buf.String()).NotTo(ContainSubstring("fails"))

		buf.Reset()
		Expect(reports.WriteRunSummary(&buf, passingRun())).To(Succeed())
		Expect(buf.String()).NotTo(ContainSubstring("lint"))
	})

	It("is an error annotation without a file naming the count and the command", func() {
		a := reports.StrictLintAnnotation(reports.RunLint{Lint: lintOf(212), Strict: true, Command: "airlock lint --schemas 'my dir'"})
		var buf bytes.Buffer
		Expect(reports.WriteAnnotations(&buf, []reports.Annotation{a}, reports.GitHubOptions{})).To(Succeed())
		Expect(buf.String()).To(Equal("::error title=airlock run --strict::the run fails under --strict with 212 lint findings (0 errors, 212 warnings, 0 notes, 1 ignored); airlock lint --schemas 'my dir' lists them, and with --format github annotates each\n"))
	})
})
