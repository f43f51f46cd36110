package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// airlock run --mutate reports honest durations: every mutation testcase
// carries its mutant's time, each JUnit testsuite's time is the sum of its
// testcases', and with one worker the run's total (its wall time) is at
// least the sum of every testcase's, the mutation suite's included. None of
// this compares a time with a threshold.
func TestRunMutateDurations(t *testing.T) {
	dir := t.TempDir()
	junit, results := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "results.json")
	args := []string{"run", "--schemas", "../schemas", "--fixtures", "../fixtures", "--tool", "review_status", "--mutate", "--workers", "1", "--junit", junit, "--json", results}
	var out, errb bytes.Buffer
	if got := Main(context.Background(), args, Stdio{Out: &out, Err: &errb}, Options{}); got != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", got, out.String(), errb.String())
	}

	raw, err := os.ReadFile(results)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Duration int64 `json:"duration_ns"`
		Cases    []struct {
			Suite    string `json:"suite"`
			Name     string `json:"name"`
			Duration int64  `json:"duration_ns"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var sum, mutation int64
	n := 0
	for _, c := range doc.Cases {
		sum += c.Duration
		if c.Suite != "mutation" {
			continue
		}
		n++
		mutation += c.Duration
		if c.Duration <= 0 {
			t.Errorf("mutation case %s: duration %d ns", c.Name, c.Duration)
		}
	}
	if n == 0 {
		t.Fatal("no mutation testcase")
	}
	if doc.Duration < sum {
		t.Errorf("the run's duration %d ns is less than its testcases' sum %d ns (mutation: %d ns) with one worker", doc.Duration, sum, mutation)
	}

	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		Suites []struct {
			Name  string `xml:"name,attr"`
			Time  string `xml:"time,attr"`
			Cases []struct {
				Time string `xml:"time,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(x, &suites); err != nil {
		t.Fatal(err)
	}
	ms := func(s string) int {
		v, err := strconv.Atoi(strings.Replace(s, ".", "", 1))
		if err != nil {
			t.Fatalf("time %q: %v", s, err)
		}
		return v
	}
	for _, s := range suites.Suites {
		total := 0
		for _, c := range s.Cases {
			total += ms(c.Time)
		}
		if total != ms(s.Time) {
			t.Errorf("testsuite %s: time %s s, its testcases add up to %d ms", s.Name, s.Time, total)
		}
		if strings.HasSuffix(s.Name, ".mutation") && ms(s.Time) == 0 {
			t.Errorf("testsuite %s: time 0", s.Name)
		}
	}
}
