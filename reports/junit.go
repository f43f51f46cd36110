package reports

import (
	"encoding/xml"
	"fmt"
	"io"
)

// JUnit XML, in the shape GitLab, Jenkins and the common GitHub Actions
// reporters load: <testsuites> holding one <testsuite> per tool and suite,
// one <testcase> per fixture with classname tool.upstream-version.kind, name
// the fixture, file its path and time in seconds. A failed case has
// <failure message="one line" type="reason">details</failure>; an unchecked
// one has <skipped message="…"/>.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
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
	File      string        `xml:"file,attr,omitempty"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

func seconds(c interface{ Seconds() float64 }) string { return fmt.Sprintf("%.6f", c.Seconds()) }

// WriteJUnit writes the run as JUnit XML to w with encoding/xml; every
// attribute and text passes through Clean first.
func WriteJUnit(w io.Writer, run *Run) error {
	doc := junitSuites{Name: "airlock", Time: seconds(run.Duration)}
	for _, g := range run.Groups() {
		s := junitSuite{
			Name:     Line(g.Tool + "." + g.Suite),
			Tests:    len(g.Cases),
			Failures: g.Failed,
			Skipped:  g.Unchecked,
			Time:     seconds(g.Duration),
		}
		for _, c := range g.Cases {
			jc := junitCase{
				Classname: Line(c.Classname()),
				Name:      Line(c.Name),
				File:      Line(c.File),
				Time:      seconds(c.Duration),
			}
			switch c.Status {
			case Failed:
				body := fmt.Sprintf("fixture: %s\nexpected: %s\nactual: %s\n", c.File, c.Expected, c.Actual)
				if c.Detail != "" {
					body += "\n" + c.Detail + "\n"
				}
				jc.Failure = &junitFailure{Message: Line(c.Message), Type: Line(c.Actual), Body: Block(body)}
			case Unchecked:
				jc.Skipped = &junitSkipped{Message: Line("unchecked: " + c.Message)}
			}
			s.Cases = append(s.Cases, jc)
		}
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Skipped += s.Skipped
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
