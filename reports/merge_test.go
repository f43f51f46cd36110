package reports_test

import (
	"bytes"
	"runtime"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/internal/shard"
	"github.com/airlockdev/airlock/reports"
)

// testSet and otherSet are two fixture-set digests (shard.Shard.Set).
const (
	testSet  = "0123456789abcdef0123456789abcdef"
	otherSet = "fedcba9876543210fedcba9876543210"
)

// shardRun is airlock run's report of shard k of n of fixture set testSet
// with cases of the given fixture names (suite parse, tool t, version v1,
// kind accepted).
func shardRun(k, n int, names ...string) *reports.Run {
	run := &reports.Run{Command: reports.CommandRun, Shard: shard.Shard{Index: k, Count: n, Set: testSet}}
	for _, name := range names {
		run.Cases = append(run.Cases, reports.Case{Tool: "t", UpstreamVersion: "v1", Kind: "accepted", Suite: "parse", Name: name, File: "f/t/v1/accepted/" + name, Status: reports.Passed, Expected: "admitted", Actual: "admitted"})
	}
	return run
}

// readBack writes run as JSON results and reads it back as merge does.
func readBack(run *reports.Run) *reports.Run {
	var b bytes.Buffer
	Expect(reports.WriteJSON(&b, run)).To(Succeed())
	r, err := reports.ReadResults(b.Bytes())
	Expect(err).NotTo(HaveOccurred())
	return r
}

var _ = Describe("merging shard reports", func() {
	It("carries shard 1's lint line to the merged results and summary, as the unsharded run's", func() {
		lint := &reports.RunLintRecord{LintCounts: reports.LintCounts{Warnings: 5, Ignored: 1}, Strict: true, StrictFailed: true, Command: "airlock lint --schemas p"}
		s1, s2 := shardRun(1, 2, "a.json"), shardRun(2, 2, "b.json")
		s1.Lint = lint
		merged, err := reports.MergeRuns([]string{"s2.json", "s1.json"}, []*reports.Run{readBack(s2), readBack(s1)})
		Expect(err).NotTo(HaveOccurred())
		Expect(merged.Lint).To(Equal(lint))
		full := shardRun(1, 2, "a.json", "b.json")
		full.Shard, full.Lint = shard.Shard{}, lint
		var got, want bytes.Buffer
		Expect(reports.WriteRunSummary(&got, merged)).To(Succeed())
		Expect(reports.WriteRunSummaryLint(&want, full, reports.RunLint{Lint: &reports.Lint{Findings: []reports.LintFinding{
			{Level: reports.SeverityWarning}, {Level: reports.SeverityWarning}, {Level: reports.SeverityWarning}, {Level: reports.SeverityWarning}, {Level: reports.SeverityWarning},
			{Level: reports.SeverityWarning, Ignored: "known"}}}, Strict: true, Command: "airlock lint --schemas p"})).To(Succeed())
		Expect(got.String()).To(ContainSubstring("**❌ The run fails: `--strict` and 5 lint findings (0 errors, 5 warnings, 0 notes, 1 ignored).**"))
		Expect(got.String()).To(ContainSubstring("❌ lint: 0 errors, 5 warnings, 0 notes, 1 ignored; these fail the run"))
		Expect(got.String()).To(Equal(want.String()))
	})

	It("tells report kinds apart by content", func() {
		for text, kind := range map[string]string{
			"\ufeff  <?xml version=\"1.0\"?>\n<testsuites name=\"airlock\"/>": reports.KindJUnit,
			`{"version": 1, "cases": []}`:                                     reports.KindResults,
			`{"version": "2.1.0", "runs": []}`:                                reports.KindSARIF,
			`{"version": 1, "summary": {}, "tools": []}`:                      reports.KindDrift,
		} {
			got, err := reports.DetectKind([]byte(text))
			Expect(err).NotTo(HaveOccurred(), text)
			Expect(got).To(Equal(kind), text)
		}
		for text, msg := range map[string]string{
			"":        "empty file",
			"<html/>": "root element <html>",
			"<!DOCTYPE x [<!ENTITY a \"b\">]><x>&a;</x>": "root element <x>",
			`{"a": 1}`:    "none of airlock's results",
			`{"cases": [`: "not a JSON report",
			"\x00\x01":    "neither XML nor JSON",
		} {
			_, err := reports.DetectKind([]byte(text))
			Expect(err).To(MatchError(ContainSubstring(msg)), "%q", text)
		}
	})

	It("refuses hostile or foreign JSON results and JUnit reports with a clear error", func() {
		for text, msg := range map[string]string{
			`{"version": 2, "cases": []}`:                                                              "version 2",
			`{"version": 1, "cases": [], "extra": 1}`:                                                  `unknown field "extra"`,
			`{"version": 1, "cases": []} {}`:                                                           "data after the document",
			`{"version": 1, "cases": [], "shard": {"index": 3, "count": 2}}`:                           "want 1 ≤ K ≤ N",
			`{"version": 1, "cases": [], "shard": {"index": 1, "count": 2, "set": "ABC"}}`:             "shard set \"ABC\": want 32 lower-case hex digits",
			`{"version": 1, "cases": [], "shard": {"index": 0, "count": 0, "set": "` + testSet + `"}}`: "a shard set without a shard count",
			`{"version": 1, "cases": [], "command": "lint"}`:                                           `command "lint"; want "run" or "mutate"`,
			`{"version": 1, "cases": [], "lint": {"errors": -1, "warnings": 0, "notes": 0, "ignored": 0, "strict": false, "strict_failed": false, "command": ""}}`:                                                             "lint: a negative count",
			`{"version": 1, "cases": [], "lint": {"errors": 0, "warnings": 2, "notes": 0, "ignored": 0, "strict": true, "strict_failed": false, "command": ""}}`:                                                               "strict_failed disagrees",
			`{"version": 1, "cases": [], "shard": {"index": 2, "count": 2, "set": "` + testSet + `"}, "lint": {"errors": 0, "warnings": 0, "notes": 0, "ignored": 0, "strict": false, "strict_failed": false, "command": ""}}`: "lint in shard 2/2",
		} {
			_, err := reports.ReadResults([]byte(text))
			Expect(err).To(MatchError(ContainSubstring(msg)), text)
		}
		_, err := reports.ReadResults(bytes.Repeat([]byte(" "), reports.MaxMergeInput+1))
		Expect(err).To(MatchError(ContainSubstring("at most")))
		for text, msg := range map[string]string{
			`<testsuites name="other"/>`:                                       "not an airlock JUnit report",
			`<testsuites name="airlock shard 0/2"/>`:                           "want 1 ≤ K ≤ N",
			`<testsuites name="airlock lint shard 1/2"/>`:                      "not an airlock JUnit report",
			`<testsuites name="airlock run shard 1/2 set 0123"/>`:              "set: want 32 lower-case hex digits",
			`<testsuites name="airlock run shard 1/2 set ` + testSet + ` x"/>`: "not an airlock JUnit report",
			`<testsuites name="airlock  run"/>`:                                "not an airlock JUnit report",
			`<testsuites name="airlock"><testsuite name="x"/></testsuites>`:    "want tool.suite",
			`<testsuites name="airlock"></testsuites><more/>`:                  "content after </testsuites>",
			`<testsuites name="airlock"><testsuite name="a.b">`:                "not a JUnit XML report",
		} {
			_, err := reports.ReadJUnit([]byte(text))
			Expect(err).To(MatchError(ContainSubstring(msg)), text)
		}
	})

	It("reads back exactly what WriteJUnit writes, and refuses other structure and disagreeing counts", func() {
		var b bytes.Buffer
		Expect(reports.WriteJUnit(&b, sampleRun())).To(Succeed())
		r, err := reports.ReadJUnit(b.Bytes())
		Expect(err).NotTo(HaveOccurred(), "every status, hostile messages included")
		Expect(r.Shard.IsZero()).To(BeTrue())

		const head = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"
		tc := `<testcase classname="t.v1.accepted.parse" name="a.json" time="0.000">`
		for text, msg := range map[string]string{
			// Declared counts against the testcases held.
			`<testsuites name="airlock" tests="2" failures="0" errors="0" time="0"><testsuite name="t.parse" tests="2" failures="0" errors="0" skipped="0" time="0">` + tc + `</testcase></testsuite></testsuites>`:                                 "declares tests=2 failures=0 errors=0 skipped=0 but holds 1 testcases, 0 failures",
			`<testsuites name="airlock" tests="1" failures="0" errors="0" time="0"><testsuite name="t.parse" tests="1" failures="0" errors="0" skipped="0" time="0">` + tc + `<failure message="m">x</failure></testcase></testsuite></testsuites>`: "holds 1 testcases, 1 failures",
			`<testsuites name="airlock" tests="1" failures="0" errors="0" time="0"><testsuite name="t.parse" tests="1" failures="0" errors="0" skipped="0" time="0">` + tc + `<skipped message="m"/></testcase></testsuite></testsuites>`:           "0 errors, 1 skipped",
			`<testsuites name="airlock" tests="5" failures="0" errors="0" time="0"><testsuite name="t.parse" tests="1" failures="0" errors="0" skipped="0" time="0">` + tc + `</testcase></testsuite></testsuites>`:                                 "<testsuites> declares tests=5 failures=0 errors=0 but its testsuites add up to 1, 0, 0",
			`<testsuites name="airlock" tests="-1" failures="0" errors="0" time="0"></testsuites>`:                                                                                                                                                  `tests="-1": want a count`,
			// Structure WriteJUnit never writes.
			`<testsuites name="airlock"><testsuite name="t.parse"><testsuite name="t.parse">`:                                            "line 1, column 54: unexpected <testsuite>",
			`<testsuites name="airlock"><testsuite name="t.parse" tests="0" failures="0" errors="0" skipped="0" time="0"/></testsuites>`: "holds no testcase",
			`<testsuites name="airlock"><testsuite name="t.parse"><testcase name="a"/></testsuite></testsuites>`:                         "<testcase> without its classname attribute",
			`<testsuites name="airlock"><testsuite name="t.parse">` + tc + `<failure/><failure/></testcase>`:                             "unexpected <failure>",
			`<testsuites name="airlock"><testsuite name="t.parse">` + tc + `<failure><b>x</b></failure>`:                                 "unexpected <b>",
			`<testsuites name="airlock"><properties/></testsuites>`:                                                                      "unexpected <properties>",
			`<testsuites name="airlock" extra="1"></testsuites>`:                                                                         "unknown attribute extra",
			`<testsuites xmlns:x="u" name="airlock"></testsuites>`:                                                                       "no namespace is expected",
			`<testsuites name="airlock">text</testsuites>`:                                                                               "text outside",
			`<testsuites name="airlock"><!-- c --></testsuites>`:                                                                         "a comment inside an element",
			`<!DOCTYPE testsuites [<!ENTITY a "b">]><testsuites name="airlock"/>`:                                                        "a <!…> declaration",
			head + `<?other x?><testsuites name="airlock"/>`:                                                                             "a processing instruction <?other?>",
			``: "no <testsuites> element",
		} {
			_, err := reports.ReadJUnit([]byte(text))
			Expect(err).To(MatchError(ContainSubstring(msg)), text)
		}

		// ~1.3M nested empty <testsuite> elements (63 MiB): refused at the
		// second, having read a few kilobytes of it.
		nested := append([]byte(`<testsuites name="airlock">`), bytes.Repeat([]byte(`<testsuite name="a.b">`), 3_000_000)...)
		nested = nested[:min(len(nested), reports.MaxMergeInput-1)]
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err = reports.ReadJUnit(nested)
		runtime.ReadMemStats(&after)
		Expect(err).To(MatchError(ContainSubstring("unexpected <testsuite>")))
		Expect(after.TotalAlloc-before.TotalAlloc).To(BeNumerically("<", 1<<20), "bytes allocated refusing a 63 MiB nested input")
	})

	It("refuses a set with a missing, duplicated, mismatched or unsharded shard, naming files and shards", func() {
		names := []string{"a.json", "b.json", "c.json"}
		_, err := reports.MergeRuns(names[:2], []*reports.Run{readBack(shardRun(1, 3)), readBack(shardRun(3, 3))})
		Expect(err).To(MatchError("JSON results reports: missing shard 2/3 (have 2 of 3)"))
		_, err = reports.MergeRuns(names[:2], []*reports.Run{readBack(shardRun(1, 2)), readBack(shardRun(1, 2))})
		Expect(err).To(MatchError("a.json and b.json are both shard 1/2 of the JSON results reports"))
		_, err = reports.MergeRuns(names[:2], []*reports.Run{readBack(shardRun(1, 2)), readBack(shardRun(2, 3))})
		Expect(err).To(MatchError("a.json is shard 1/2 but b.json is shard 2/3: the JSON results reports are of different shard counts"))
		_, err = reports.MergeRuns(names[:1], []*reports.Run{readBack(&reports.Run{})})
		Expect(err).To(MatchError(ContainSubstring("a.json: an unsharded JSON results report")))
		_, err = reports.MergeRuns(names[:2], []*reports.Run{readBack(shardRun(1, 2, "x.json")), readBack(shardRun(2, 2, "x.json"))})
		Expect(err).To(MatchError(ContainSubstring("a.json and b.json both hold testcase t.v1.accepted.parse x.json")))
	})

	It("refuses shards of different fixture sets, or without one, naming the files", func() {
		other := shardRun(2, 2, "y.json")
		other.Shard.Set = otherSet
		_, err := reports.MergeRuns([]string{"a1.json", "b2.json"}, []*reports.Run{readBack(shardRun(1, 2, "x.json")), readBack(other)})
		Expect(err).To(MatchError("shards of different fixture sets: a1.json (shard 1/2, set " + testSet + ") and b2.json (shard 2/2, set " + otherSet + "); run every shard on the same checkout with the same filters"))
		Expect(err).To(BeAssignableToTypeOf(&reports.SetError{}))
		old := shardRun(2, 2, "y.json")
		old.Shard.Set = ""
		_, err = reports.MergeRuns([]string{"a1.json", "old.json"}, []*reports.Run{readBack(shardRun(1, 2, "x.json")), readBack(old)})
		Expect(err).To(MatchError(ContainSubstring("old.json: shard 2/2 records no fixture set")))

		junit := func(r *reports.Run) *reports.JUnitReport {
			var b bytes.Buffer
			Expect(reports.WriteJUnit(&b, r)).To(Succeed())
			j, err := reports.ReadJUnit(b.Bytes())
			Expect(err).NotTo(HaveOccurred())
			return j
		}
		err = reports.MergeJUnit(&bytes.Buffer{}, []string{"a1.xml", "b2.xml"}, []*reports.JUnitReport{junit(shardRun(1, 2, "x.json")), junit(other)})
		Expect(err).To(MatchError(ContainSubstring("shards of different fixture sets: a1.xml (shard 1/2, set " + testSet + ") and b2.xml")))
	})

	It("refuses shards of different commands, and keeps the command in the merged reports", func() {
		mu := shardRun(1, 2, "x.json")
		mu.Command = reports.CommandMutate
		_, err := reports.MergeRuns([]string{"mu1.json", "ru2.json"}, []*reports.Run{readBack(mu), readBack(shardRun(2, 2, "y.json"))})
		Expect(err).To(MatchError("mu1.json is a report of airlock mutate but ru2.json of airlock run: merge joins the shards of one command"))
		mu2 := shardRun(2, 2, "y.json")
		mu2.Command = reports.CommandMutate
		merged, err := reports.MergeRuns([]string{"mu1.json", "mu2.json"}, []*reports.Run{readBack(mu), readBack(mu2)})
		Expect(err).NotTo(HaveOccurred())
		Expect(merged.Command).To(Equal(reports.CommandMutate))
		var b bytes.Buffer
		Expect(reports.WriteJSON(&b, merged)).To(Succeed())
		Expect(b.String()).To(ContainSubstring(`"command": "mutate",`))
		Expect(b.String()).NotTo(ContainSubstring(`"shard"`))
		validates(reports.ResultsSchema(), b.Bytes())
		b.Reset()
		Expect(reports.WriteJSON(&b, mu)).To(Succeed())
		validates(reports.ResultsSchema(), b.Bytes())
		Expect(b.String()).To(ContainSubstring(`"set": "` + testSet + `"`))

		var x1, x2, out bytes.Buffer
		Expect(reports.WriteJUnit(&x1, mu)).To(Succeed())
		Expect(x1.String()).To(ContainSubstring(`<testsuites name="airlock mutate shard 1/2 set ` + testSet + `" `))
		Expect(reports.WriteJUnit(&x2, shardRun(2, 2, "y.json"))).To(Succeed())
		j1, err := reports.ReadJUnit(x1.Bytes())
		Expect(err).NotTo(HaveOccurred())
		Expect(j1.Command).To(Equal(reports.CommandMutate))
		Expect(j1.Shard).To(Equal(shard.Shard{Index: 1, Count: 2, Set: testSet}))
		j2, err := reports.ReadJUnit(x2.Bytes())
		Expect(err).NotTo(HaveOccurred())
		err = reports.MergeJUnit(&out, []string{"mu1.xml", "ru2.xml"}, []*reports.JUnitReport{j1, j2})
		Expect(err).To(MatchError(ContainSubstring("mu1.xml is a report of airlock mutate but ru2.xml of airlock run")))
		x2.Reset()
		Expect(reports.WriteJUnit(&x2, mu2)).To(Succeed())
		j2, err = reports.ReadJUnit(x2.Bytes())
		Expect(err).NotTo(HaveOccurred())
		Expect(reports.MergeJUnit(&out, []string{"mu1.xml", "mu2.xml"}, []*reports.JUnitReport{j1, j2})).To(Succeed())
		Expect(out.String()).To(ContainSubstring(`<testsuites name="airlock mutate" tests="2" `))
	})

	It("orders testcases by the raw names Ident printed, and keeps them as printed", func() {
		// Raw order: "a\x01" < "a!" < "a\\"; printed, "a\\x01" sorts after "a!".
		names := []string{"a\\", "a\x01", "a!"}
		merged, err := reports.MergeRuns([]string{"1", "2"}, []*reports.Run{readBack(shardRun(1, 2, names[0], names[1])), readBack(shardRun(2, 2, names[2]))})
		Expect(err).NotTo(HaveOccurred())
		var got []string
		for _, c := range merged.Cases {
			got = append(got, c.Name)
		}
		Expect(got).To(Equal([]string{reports.Ident("a\x01"), "a!", reports.Ident("a\\")}))
		var b bytes.Buffer
		Expect(reports.WriteJSON(&b, merged)).To(Succeed())
		Expect(b.String()).To(ContainSubstring(`"name": "a\\\\"`), "a printed name is not escaped twice")
		Expect(strings.Count(b.String(), `\\\\\\\\`)).To(BeZero())
		Expect(merged.Shard.IsZero()).To(BeTrue())
	})
})
