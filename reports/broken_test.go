package reports_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/reports"
)

const brokenMsg = `schemas/bad/upstream.schema.json:4:12: /properties/id/$ref: cannot load "missing.schema.json"`

// brokenRun is one passed fixture of tool good and the error case of the
// broken contract of tool bad.
func brokenRun() *reports.Run {
	return &reports.Run{Cases: []reports.Case{
		reports.ContractError("bad", "contract.yaml", "schemas/bad/upstream.schema.json", 4, 12, brokenMsg),
		{Tool: "good", UpstreamVersion: "v1", Kind: "accepted", Suite: "parse", Name: "a.json", File: "fixtures/good/v1/accepted/a.json", Status: reports.Passed, Expected: "admitted", Actual: "admitted"},
	}}
}

var _ = Describe("a broken contract's testcase", func() {
	It("is an error case of suite contract, classname tool.contract, counted apart from passed, failed and unchecked", func() {
		c := reports.ContractError("bad", "contract.yaml", "schemas/bad/upstream.schema.json", 0, 0, brokenMsg)
		Expect(c.Status).To(Equal(reports.Errored))
		Expect(c.Suite).To(Equal(reports.SuiteContract))
		Expect(c.Classname()).To(Equal("bad.contract"))
		run := brokenRun()
		p, f, u := run.Counts()
		Expect([]int{p, f, u, run.Errored()}).To(Equal([]int{1, 0, 0, 1}))
		g := run.Groups()
		Expect(g[0].Suite).To(Equal(reports.SuiteContract))
		Expect(g[0].Errored).To(Equal(1))
		Expect(g[0].Unchecked).To(Equal(0))
	})

	It("is a JUnit <error type=\"configuration\"> counted in the errors attributes", func() {
		_, out := writeJUnit(brokenRun().Cases...)
		Expect(out).To(MatchRegexp(`<testsuites name="airlock" tests="2" failures="0" errors="1" time="[0-9.]+">`))
		Expect(out).To(ContainSubstring(`<testsuite name="bad.contract" tests="1" failures="0" errors="1" skipped="0" time="0.000">`))
		Expect(out).To(ContainSubstring(`<testcase classname="bad.contract" name="contract.yaml" time="0.000">`))
		Expect(out).To(ContainSubstring(`<error message="schemas/bad/upstream.schema.json:4:12: /properties/id/$ref: cannot load &#34;missing.schema.json&#34;" type="configuration">file: schemas/bad/upstream.schema.json&#xA;schemas/bad/upstream.schema.json:4:12: `))
		Expect(out).To(ContainSubstring(`<testsuite name="good.parse" tests="1" failures="0" errors="0" skipped="0"`))
	})

	It("is an ERROR line on the console, and the summary counts it", func() {
		var buf bytes.Buffer
		Expect(reports.WriteConsole(&buf, brokenRun(), reports.ConsoleOptions{})).To(Succeed())
		lines := strings.Split(buf.String(), "\n")
		Expect(lines[0]).To(Equal("ERROR bad: contract configuration error: " + brokenMsg))
		Expect(lines[1]).To(HavePrefix("ok   good.parse"))
		Expect(buf.String()).To(MatchRegexp(`\n2 testcases: 1 passed, 0 failed, 0 unchecked, 1 contract error \(`))
		Expect(buf.String()).NotTo(ContainSubstring("FAIL"))
	})

	It("is a case with status error in JSON results that validate against the published schema", func() {
		var buf bytes.Buffer
		Expect(reports.WriteJSON(&buf, brokenRun())).To(Succeed())
		validates(reports.ResultsSchema(), buf.Bytes())
		var doc struct {
			Errored, Unchecked int
			Cases              []reports.Case
		}
		Expect(json.Unmarshal(buf.Bytes(), &doc)).To(Succeed())
		Expect(doc.Errored).To(Equal(1))
		Expect(doc.Unchecked).To(Equal(0))
		Expect(doc.Cases[0].Status).To(Equal(reports.Errored))
		Expect(doc.Cases[0].Message).To(Equal(brokenMsg))
	})

	It("publishes the same results schema as schemas/results.schema.json", func() {
		b, err := os.ReadFile("../schemas/results.schema.json")
		Expect(err).NotTo(HaveOccurred())
		Expect(reports.ResultsSchema()).To(Equal(b), "refresh it with: airlock schema results > schemas/results.schema.json")
	})

	It("is a Broken contracts section in a drift report, and in its JSON", func() {
		d := sampleDrift(false)
		d.Broken = []reports.BrokenContract{{Tool: "bad", File: "schemas/bad/upstream.schema.json", Message: brokenMsg + hostile}}
		var js, md bytes.Buffer
		Expect(reports.WriteDriftJSON(&js, d)).To(Succeed())
		validates(reports.DriftSchema(), js.Bytes())
		Expect(js.String()).To(ContainSubstring(`"broken": [`))
		Expect(js.String()).NotTo(ContainSubstring(`\u001b`))
		Expect(reports.WriteDriftMarkdown(&md, d)).To(Succeed())
		Expect(md.String()).To(HavePrefix("# airlock drift\n\n❌ "))
		Expect(md.String()).To(ContainSubstring("; 1 broken contract(s) not read\n\n## Broken contracts\n"))
		Expect(md.String()).To(ContainSubstring("| `bad` | `` " + brokenMsg + "a\\|b`c <img"))
		Expect(md.String()).NotTo(ContainSubstring("\x1b"))
		Expect(reports.DriftHeadline(d)).To(HaveSuffix("; 1 broken contract(s) not read"))
	})
})
