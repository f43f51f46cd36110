package reports

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/airlockdev/airlock/internal/shard"
)

// JUnit XML valid against the Jenkins xUnit plugin's junit-10.xsd (a copy
// is in testdata/), which GitLab, Jenkins and the common GitHub Actions
// reporters load: <testsuites> holding one <testsuite> per tool and suite
// (name tool.suite), one <testcase> per fixture and suite with classname
// tool.upstream-version.kind.suite and name the fixture's file name (for
// the mutation suite fixture#mutant). The suite is part of the classname
// because each fixture is a testcase in several suites, and tools that key
// testcases on (classname, name) would merge them otherwise; the pair is
// unique in a report. Times are seconds with three decimals: a testsuite's
// is the sum of its testcases' Durations, and the testcases' are rounded
// so that they add up to it exactly (each is the rounded running total
// minus the one before); the testsuites' time is the run's wall time. The
// <testsuites> name is "airlock <command>" (Run.Command; "airlock" when
// it is ""), and for a shard's run "airlock <command> shard K/N set
// <digest>" (Run.Shard, its Set). A failed case
// has <failure message="one line" type="reason">details</failure>, an
// unchecked one <skipped message="…">fixture: path</skipped>, a passed one
// with a Message (a mutant admitted but unseen or baselined) that line as
// its <system-out>, and a broken
// contract's case (classname tool.contract, name contract.yaml) <error
// message="file:line:column: key: message" type="configuration">file: path
// and the message</error>, counted in the errors attributes; the schema
// has no file attribute on <testcase>, so the fixture's path is the first
// line of those bodies.
//
// Names, classnames and suite names are written with Ident, so two
// fixtures whose names differ only in control characters print distinctly;
// messages and bodies with Line and Block. No text holds "<!" or "]]>",
// which HTML viewers of the report would act on (see Clean).

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Error     *junitFailure `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
	Body    string `xml:",chardata"`
}

// seconds is d in seconds with three decimals: junit-10.xsd's time pattern
// allows no more.
func seconds(d time.Duration) string { return millisText(millis(d)) }

// millis is d in whole milliseconds, rounded half up.
func millis(d time.Duration) int64 { return int64((d + time.Millisecond/2) / time.Millisecond) }

// millisText is ms milliseconds as seconds with three decimals.
func millisText(ms int64) string { return strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64) }

// WriteJUnit writes the run as JUnit XML to w with encoding/xml; every
// attribute and text passes through Ident, Line or Block first.
func WriteJUnit(w io.Writer, run *Run) error {
	doc := junitSuites{Name: junitName(run.Command, run.Shard), Time: seconds(run.Duration)}
	taken := map[[2]string]bool{}
	for _, g := range run.Groups() {
		s := junitSuite{
			Name:     Ident(g.Tool + "." + g.Suite),
			Tests:    len(g.Cases),
			Failures: g.Failed,
			Errors:   g.Errored,
			Skipped:  g.Unchecked,
			Time:     seconds(g.Duration),
		}
		var total time.Duration // running total of the cases' Durations
		var done int64          // its milliseconds, written so far
		for _, c := range g.Cases {
			total += c.Duration
			ms := millis(total) - done
			done += ms
			jc := junitCase{
				Classname: Ident(c.Classname()),
				Name:      unique(taken, Ident(c.Classname()), Ident(c.Name)),
				Time:      millisText(ms),
			}
			switch c.Status {
			case Failed:
				body := fmt.Sprintf("fixture: %s\nexpected: %s\nactual: %s\n", Ident(c.File), Line(c.Expected), Line(c.Actual))
				if c.Detail != "" {
					body += "\n" + c.Detail + "\n"
				}
				jc.Failure = &junitFailure{Message: Line(c.Message), Type: Line(c.Actual), Body: Block(body)}
			case Errored:
				body := fmt.Sprintf("file: %s\n%s\n", Ident(c.File), Line(c.Message))
				jc.Error = &junitFailure{Message: Line(c.Message), Type: "configuration", Body: Block(body)}
			case Unchecked:
				jc.Skipped = &junitSkipped{Message: Line("unchecked: " + c.Message), Body: "fixture: " + Ident(c.File)}
			case Passed:
				if c.Message != "" {
					jc.SystemOut = Line(c.Message)
				}
			}
			s.Cases = append(s.Cases, jc)
		}
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Suites = append(doc.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// junitName is the <testsuites> name: "airlock", then " <command>" when
// command is not "", then for shard K of N " shard K/N", then " set
// <digest>" when s.Set is not "", so that even an empty shard's report
// says which command, shard and fixture set it is (airlock merge reads it
// back with parseJUnitName).
func junitName(command string, s shard.Shard) string {
	name := "airlock"
	if command != "" {
		name += " " + command
	}
	if !s.IsZero() {
		name += " shard " + s.String()
		if s.Set != "" {
			name += " set " + s.Set
		}
	}
	return name
}

// parseJUnitName reads a <testsuites> name junitName writes: "airlock
// [run|mutate] [shard K/N [set DIGEST]]", one space between words.
func parseJUnitName(name string) (command string, s shard.Shard, err error) {
	bad := func(why string) error {
		return fmt.Errorf("<testsuites name=%q>: %s", Line(name), why)
	}
	words := strings.Split(name, " ")
	if words[0] != "airlock" {
		return "", s, bad(`not an airlock JUnit report (want "airlock [run|mutate] [shard K/N set DIGEST]")`)
	}
	words = words[1:]
	if len(words) > 0 && (words[0] == CommandRun || words[0] == CommandMutate) {
		command, words = words[0], words[1:]
	}
	if len(words) >= 2 && words[0] == "shard" {
		if s, err = shard.Parse(words[1]); err != nil {
			return "", s, bad(err.Error())
		}
		words = words[2:]
		if len(words) >= 2 && words[0] == "set" {
			if !shard.ValidSet(words[1]) {
				return "", s, bad(fmt.Sprintf("set: want %d lower-case hex digits", shard.SetLen))
			}
			s.Set, words = words[1], words[2:]
		}
	}
	if len(words) > 0 {
		return "", shard.Shard{}, bad(`not an airlock JUnit report (want "airlock [run|mutate] [shard K/N set DIGEST]")`)
	}
	return command, s, nil
}

// unique returns name, or when (classname, name) is already taken in this
// report name with " [2]", " [3]", … added, and takes the pair. Runs never
// repeat a (tool, upstream version, kind, suite, fixture name); only a
// hand-written fixture name holding "#" could meet a mutation testcase's
// fixture#mutant of another fixture, and the report still keeps both.
func unique(taken map[[2]string]bool, classname, name string) string {
	try := name
	for n := 2; taken[[2]string{classname, try}]; n++ {
		try = fmt.Sprintf("%s [%d]", name, n)
	}
	taken[[2]string{classname, try}] = true
	return try
}
