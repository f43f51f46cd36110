package reports_test

import (
	"bytes"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/reports"
)

// junitDoc is the part of a JUnit report the specs read back.
type junitDoc struct {
	XMLName xml.Name   `xml:"testsuites"`
	Attrs   []xml.Attr `xml:",any,attr"`
	Suites  []struct {
		Name  string `xml:"name,attr"`
		Time  string `xml:"time,attr"`
		Cases []struct {
			Classname string     `xml:"classname,attr"`
			Name      string     `xml:"name,attr"`
			Attrs     []xml.Attr `xml:",any,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Body    string `xml:",chardata"`
			} `xml:"failure"`
			Skipped *struct {
				Message string `xml:"message,attr"`
				Body    string `xml:",chardata"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func writeJUnit(cases ...reports.Case) (junitDoc, string) {
	GinkgoHelper()
	var buf bytes.Buffer
	Expect(reports.WriteJUnit(&buf, &reports.Run{Cases: cases})).To(Succeed())
	var doc junitDoc
	dec := xml.NewDecoder(bytes.NewReader(buf.Bytes()))
	dec.Strict = true
	Expect(dec.Decode(&doc)).To(Succeed(), buf.String())
	return doc, buf.String()
}

var _ = Describe("Ident", func() {
	It("prints names that differ only in control characters, backslashes or ANSI sequences distinctly", func() {
		names := []string{
			"a\x01.json", "a\x02.json", `a\x01.json`, "a\\\x01.json", "a .json", "a\t.json", "a\n.json", "a\r.json",
			"a.json", "a\x1b[31m.json", "a\x1b[0m.json", "a\u202e.json", `a\u{202e}.json`, "a\xff.json", "a\u00ff.json",
			"a\u0085.json", `a\u{0085}.json`, "a<!--.json", `a<\x21--.json`, "a]]>.json", `a]]\x3e.json`,
		}
		seen := map[string]string{}
		for _, n := range names {
			got := reports.Ident(n)
			Expect(seen).NotTo(HaveKey(got), "%q and %q both print as %q", seen[got], n, got)
			seen[got] = n
			Expect(got).NotTo(ContainSubstring("<!"))
			Expect(got).NotTo(ContainSubstring("]]>"))
			Expect(got).NotTo(MatchRegexp(`[\x00-\x1f\x7f]`))
		}
		Expect(reports.Ident("a\x01.json")).To(Equal(`a\x01.json`))
		Expect(reports.Ident(`a\x01.json`)).To(Equal(`a\\x01.json`))
		Expect(reports.Ident("plain-name_1.json")).To(Equal("plain-name_1.json"))
	})

	It("caps long names and keeps them distinct with a hash of the raw name", func() {
		long := strings.Repeat("\x01", 2000)
		a, b := reports.Ident(long+"a"), reports.Ident(long+"b")
		Expect(len(a)).To(BeNumerically("<=", reports.MaxIdent))
		Expect(a).NotTo(Equal(b))
		Expect(a).To(MatchRegexp(`^(\\x01)+\\…[0-9a-f]{32}$`))
		// An uncut name never holds the marker's lone backslash.
		Expect(reports.Ident(`\…` + strings.Repeat("0", 32))).To(HavePrefix(`\\…`))
	})
})

var _ = Describe("WriteJUnit", func() {
	It("writes the junit-10.xsd shape: no skipped on testsuites, no file on testcase, times with three decimals", func() {
		_, out := writeJUnit(
			reports.Case{Tool: "t", UpstreamVersion: "v1", Kind: "accepted", Suite: "parse", Name: "a.json", File: "fixtures/t/v1/accepted/a.json", Status: reports.Passed, Duration: 1234567},
			reports.Case{Tool: "t", UpstreamVersion: "v1", Kind: "near-miss", Suite: "parse", Name: "u.json", File: "fixtures/t/v1/near-miss/u.json", Status: reports.Unchecked, Message: "no reason"},
		)
		Expect(out).To(MatchRegexp(`<testsuites name="airlock" tests="2" failures="0" errors="0" time="[0-9]+\.[0-9]{3}">`))
		Expect(out).To(ContainSubstring(`<testsuite name="t.parse" tests="2" failures="0" errors="0" skipped="1" time="0.001">`))
		Expect(out).To(ContainSubstring(`<testcase classname="t.v1.accepted.parse" name="a.json" time="0.001">`))
		Expect(out).To(ContainSubstring(`<skipped message="unchecked: no reason">fixture: fixtures/t/v1/near-miss/u.json</skipped>`))
		Expect(out).NotTo(ContainSubstring(` file=`))
		Expect(regexp.MustCompile(`time="[^"]*"`).FindAllString(out, -1)).To(HaveEach(MatchRegexp(`^time="[0-9]+\.[0-9]{3}"$`)))
	})

	It("gives a passed testcase with a message (an unseen or baselined mutant) that line as its system-out, valid against junit-10.xsd", func() {
		_, out := writeJUnit(
			reports.Case{Tool: "t", UpstreamVersion: "v1", Kind: "accepted", Suite: "mutation", Name: "a.json#values.x@/a", File: "a.json", Status: reports.Passed, Message: "admitted (baselined): free text\n (schemas/t/mutate.baseline.yaml:4)"},
			reports.Case{Tool: "t", UpstreamVersion: "v1", Kind: "accepted", Suite: "mutation", Name: "a.json#values.y@/a", File: "a.json", Status: reports.Passed},
		)
		Expect(out).To(ContainSubstring(`<testcase classname="t.v1.accepted.mutation" name="a.json#values.x@/a" time="0.000">` + "\n" +
			`      <system-out>admitted (baselined): free text  (schemas/t/mutate.baseline.yaml:4)</system-out>`))
		Expect(out).To(ContainSubstring(`<testcase classname="t.v1.accepted.mutation" name="a.json#values.y@/a" time="0.000"></testcase>`))
		if xmllint, err := exec.LookPath("xmllint"); err == nil {
			f := filepath.Join(GinkgoT().TempDir(), "j.xml")
			Expect(os.WriteFile(f, []byte(out), 0o644)).To(Succeed())
			b, err := exec.Command(xmllint, "--noout", "--schema", filepath.Join("testdata", "junit-10.xsd"), f).CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), string(b))
		} else {
			Fail("xmllint is needed to check the report against junit-10.xsd")
		}
	})

	It("rounds the testcases' times so that they add up to their testsuite's", func() {
		var cases []reports.Case
		for i := range 7 {
			// 0.4 ms each: 2.8 ms in all, written 0.003 for the suite.
			cases = append(cases, reports.Case{Tool: "t", UpstreamVersion: "v1", Kind: "accepted", Suite: "mutation", Name: "a.json#m" + strconv.Itoa(i), Status: reports.Passed, Duration: 400 * time.Microsecond})
		}
		doc, _ := writeJUnit(cases...)
		Expect(doc.Suites).To(HaveLen(1))
		Expect(doc.Suites[0].Time).To(Equal("0.003"))
		sum := 0
		for _, c := range doc.Suites[0].Cases {
			for _, a := range c.Attrs {
				if a.Name.Local == "time" {
					ms, err := strconv.Atoi(strings.Replace(a.Value, ".", "", 1))
					Expect(err).NotTo(HaveOccurred())
					sum += ms
				}
			}
		}
		Expect(sum).To(Equal(3), "the cases' milliseconds add up to the suite's")
	})

	It("puts the suite into the classname, so a fixture's testcases keep distinct (classname, name) pairs", func() {
		var cases []reports.Case
		for _, s := range []string{"parse", "schema", "semantic", "projection", "no-leak"} {
			cases = append(cases, reports.Case{Tool: "t", UpstreamVersion: "v1", Kind: "accepted", Suite: s, Name: "a.json", Status: reports.Passed})
		}
		doc, _ := writeJUnit(cases...)
		pairs := map[[2]string]bool{}
		for _, s := range doc.Suites {
			for _, c := range s.Cases {
				Expect(c.Name).To(Equal("a.json"))
				Expect(strings.TrimPrefix(s.Name, "t.")).To(Equal(c.Classname[strings.LastIndex(c.Classname, ".")+1:]))
				pairs[[2]string{c.Classname, c.Name}] = true
			}
		}
		Expect(pairs).To(HaveLen(5))
	})

	It("keeps even a name that repeats a pair distinct", func() {
		// A hand-written fixture "x.json#m" and fixture "x.json" with mutant
		// "m": the runner gives both the same raw name in one suite.
		c := reports.Case{Tool: "t", UpstreamVersion: "v1", Kind: "accepted", Suite: "mutation", Name: "x.json#m", Status: reports.Passed}
		doc, _ := writeJUnit(c, c, reports.Case{Tool: "t", UpstreamVersion: "v1", Kind: "accepted", Suite: "mutation", Name: "x.json#m [2]", Status: reports.Passed})
		var names []string
		for _, c := range doc.Suites[0].Cases {
			names = append(names, c.Name)
		}
		Expect(names).To(Equal([]string{"x.json#m", "x.json#m [2]", "x.json#m [2] [2]"}))
	})

	It("never lets <!-- or ]]> or a control character reach an attribute or a text, and tells such names apart", func() {
		evil := "<!--x--> ]]> \x01\x1b[2J\"'&<b>"
		doc, _ := writeJUnit(
			reports.Case{Tool: "t", UpstreamVersion: "v<!--1", Kind: "near-miss", Suite: "parse", Name: evil + "\x01", File: "f/" + evil, Status: reports.Failed,
				Expected: evil, Actual: evil, Message: evil, Detail: evil + "\n" + evil},
			reports.Case{Tool: "t", UpstreamVersion: "v<!--1", Kind: "near-miss", Suite: "parse", Name: evil + "\x02", File: "f/" + evil, Status: reports.Unchecked, Message: evil},
		)
		cs := doc.Suites[0].Cases
		Expect(cs[0].Name).NotTo(Equal(cs[1].Name))
		Expect(cs[0].Name).To(Equal(`<\x21--x--> ]]\x3e \x01\x1b[2J"'&<b>\x01`))
		for _, s := range []string{cs[0].Classname, cs[0].Name, cs[0].Failure.Message, cs[0].Failure.Body, cs[1].Name, cs[1].Skipped.Message, cs[1].Skipped.Body} {
			Expect(s).NotTo(ContainSubstring("<!--"))
			Expect(s).NotTo(ContainSubstring("]]>"))
			Expect(s).NotTo(MatchRegexp(`[\x00-\x08\x0b-\x1f\x7f]`))
		}
		Expect(cs[0].Failure.Message).To(Equal(`<\x21--x--> ]]\x3e \x01"'&<b>`))
	})
})
