package reports

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Reading a JUnit report back (airlock merge): a token-level decode of
// exactly the structure WriteJUnit writes, which refuses anything else at
// the first token that departs from it, so a hostile input costs no more
// than the report it imitates.
//
// The structure: an optional XML declaration and comments, then
// <testsuites name tests failures errors time> holding <testsuite name
// tests failures errors skipped time> elements, each holding one or more
// <testcase classname name time> elements, each holding at most one each
// of <failure message type>, <error message type>, <skipped message> and
// <system-out>, which hold text only. Any other element, a nested
// <testsuite>, an unknown or namespaced attribute, text between elements,
// a DOCTYPE or a second root is refused with its line and column (where
// the token starts). Memory is bounded by the input: the decoder's element
// stack is at most 4 deep, every testsuite must hold a testcase, and a
// testcase must carry its classname, name and time attributes (at least 40
// bytes of input each), so the decoded report keeps at most about 1.5
// bytes per input byte (measured on a 63 MiB report of minimal testcases:
// 94 MiB retained). A report of ~1.3M nested <testsuite> elements is
// refused at the second, having allocated next to nothing.

// decodeJUnit decodes data (WriteJUnit's structure) token by token.
func decodeJUnit(data []byte) (junitSuites, error) {
	var doc junitSuites
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	var line, col int // where the current token starts
	fail := func(format string, args ...any) error {
		return fmt.Errorf("not a JUnit XML report as airlock writes it: line %d, column %d: %s", line, col, fmt.Sprintf(format, args...))
	}
	var (
		depth   int
		root    bool
		suite   *junitSuite
		tc      *junitCase
		text    *string // the text of the element at depth 4
		textBuf []byte
	)
	for {
		line, col = d.InputPos()
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return doc, fmt.Errorf("not a JUnit XML report: %v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if t.Name.Space != "" {
				return doc, fail("element <%s:%s>: no namespace is expected", Line(t.Name.Space), Line(t.Name.Local))
			}
			switch name := t.Name.Local; {
			case depth == 1 && name == "testsuites" && !root:
				root = true
				if err := junitAttrs(t, map[string]any{"name": &doc.Name, "tests": &doc.Tests, "failures": &doc.Failures, "errors": &doc.Errors, "time": &doc.Time}); err != nil {
					return doc, fail("<testsuites>: %v", err)
				}
				if err := checkJUnitName(doc.Name); err != nil {
					return doc, err
				}
			case depth == 1:
				return doc, errors.New("not a JUnit XML report: content after </testsuites>")
			case depth == 2 && name == "testsuite":
				doc.Suites = append(doc.Suites, junitSuite{})
				suite = &doc.Suites[len(doc.Suites)-1]
				if err := junitAttrs(t, map[string]any{"name": &suite.Name, "tests": &suite.Tests, "failures": &suite.Failures, "errors": &suite.Errors, "skipped": &suite.Skipped, "time": &suite.Time}); err != nil {
					return doc, fail("<testsuite>: %v", err)
				}
				if !strings.Contains(suite.Name, ".") {
					return doc, fmt.Errorf("<testsuite name=%q>: want tool.suite", Line(suite.Name))
				}
			case depth == 3 && name == "testcase":
				suite.Cases = append(suite.Cases, junitCase{})
				tc = &suite.Cases[len(suite.Cases)-1]
				if err := junitAttrs(t, map[string]any{"classname": &tc.Classname, "name": &tc.Name, "time": &tc.Time}); err != nil {
					return doc, fail("<testcase>: %v", err)
				}
				for _, a := range []string{"classname", "name", "time"} {
					if !hasAttr(t, a) {
						return doc, fail("<testcase> without its %s attribute", a)
					}
				}
			case depth == 4 && (name == "failure" || name == "error") && tc.Failure == nil && tc.Error == nil:
				f := &junitFailure{}
				if err := junitAttrs(t, map[string]any{"message": &f.Message, "type": &f.Type}); err != nil {
					return doc, fail("<%s>: %v", name, err)
				}
				if name == "failure" {
					tc.Failure = f
				} else {
					tc.Error = f
				}
				text = &f.Body
			case depth == 4 && name == "skipped" && tc.Skipped == nil:
				s := &junitSkipped{}
				if err := junitAttrs(t, map[string]any{"message": &s.Message}); err != nil {
					return doc, fail("<skipped>: %v", err)
				}
				tc.Skipped = s
				text = &s.Body
			case depth == 4 && name == "system-out" && tc.SystemOut == "":
				if err := junitAttrs(t, nil); err != nil {
					return doc, fail("<system-out>: %v", err)
				}
				text = &tc.SystemOut
			default:
				return doc, fail("unexpected <%s> (WriteJUnit writes testsuites > testsuite > testcase > failure, error, skipped or system-out, each once)", Line(name))
			}
		case xml.EndElement:
			switch depth {
			case 4:
				*text = string(textBuf)
				text, textBuf = nil, textBuf[:0]
			case 3:
				tc = nil
			case 2:
				if err := checkJUnitSuite(suite); err != nil {
					return doc, fail("%v", err)
				}
				suite = nil
			case 1:
				if err := checkJUnitTotals(&doc); err != nil {
					return doc, fail("%v", err)
				}
			}
			depth--
		case xml.CharData:
			if depth == 4 {
				textBuf = append(textBuf, t...)
			} else if len(bytes.TrimSpace(t)) > 0 {
				return doc, fail("text outside a failure, error, skipped or system-out element")
			}
		case xml.Comment:
			if depth > 0 {
				return doc, fail("a comment inside an element")
			}
		case xml.ProcInst:
			if depth > 0 || root || t.Target != "xml" {
				return doc, fail("a processing instruction <?%s?> other than the XML declaration", Line(t.Target))
			}
		default: // xml.Directive: <!DOCTYPE …>
			return doc, fail("a <!…> declaration; WriteJUnit writes none")
		}
	}
	if !root {
		return doc, errors.New("not a JUnit XML report: no <testsuites> element")
	}
	return doc, nil
}

// junitAttrs reads t's attributes into into (a *string or an *int per
// attribute name); an attribute not in into, a namespaced one, or a count
// that is not a non-negative decimal integer is an error.
func junitAttrs(t xml.StartElement, into map[string]any) error {
	for _, a := range t.Attr {
		if a.Name.Space != "" {
			return fmt.Errorf("attribute %s:%s: no namespace is expected", Line(a.Name.Space), Line(a.Name.Local))
		}
		switch p := into[a.Name.Local].(type) {
		case *string:
			*p = a.Value
		case *int:
			n, err := strconv.Atoi(a.Value)
			if err != nil || n < 0 || a.Value[0] == '+' {
				return fmt.Errorf("attribute %s=%q: want a count", a.Name.Local, Line(a.Value))
			}
			*p = n
		default:
			return fmt.Errorf("unknown attribute %s", Line(a.Name.Local))
		}
	}
	return nil
}

func hasAttr(t xml.StartElement, name string) bool {
	for _, a := range t.Attr {
		if a.Name.Local == name {
			return true
		}
	}
	return false
}

// checkJUnitSuite refuses a testsuite with no testcase, or whose tests,
// failures, errors and skipped attributes are not the number of its
// testcases, failures, errors and skipped elements (as WriteJUnit writes
// them).
func checkJUnitSuite(s *junitSuite) error {
	if len(s.Cases) == 0 {
		return fmt.Errorf("<testsuite name=%q> holds no testcase; WriteJUnit writes none such", Line(s.Name))
	}
	var f, e, sk int
	for _, c := range s.Cases {
		if c.Failure != nil {
			f++
		}
		if c.Error != nil {
			e++
		}
		if c.Skipped != nil {
			sk++
		}
	}
	if s.Tests != len(s.Cases) || s.Failures != f || s.Errors != e || s.Skipped != sk {
		return fmt.Errorf("<testsuite name=%q> declares tests=%d failures=%d errors=%d skipped=%d but holds %d testcases, %d failures, %d errors, %d skipped",
			Line(s.Name), s.Tests, s.Failures, s.Errors, s.Skipped, len(s.Cases), f, e, sk)
	}
	return nil
}

// checkJUnitTotals refuses a <testsuites> whose tests, failures and errors
// are not the sums of its testsuites'.
func checkJUnitTotals(doc *junitSuites) error {
	var t, f, e int
	for _, s := range doc.Suites {
		t, f, e = t+s.Tests, f+s.Failures, e+s.Errors
	}
	if doc.Tests != t || doc.Failures != f || doc.Errors != e {
		return fmt.Errorf("<testsuites> declares tests=%d failures=%d errors=%d but its testsuites add up to %d, %d, %d", doc.Tests, doc.Failures, doc.Errors, t, f, e)
	}
	return nil
}
