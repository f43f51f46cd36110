package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/airlockdev/airlock/internal/shard"
)

// ConsoleOptions control the console summary.
type ConsoleOptions struct {
	// Color adds ANSI colours; set it only when writing to a terminal.
	Color bool
	// MaxFailures caps how many failures are listed; 0 means 50.
	MaxFailures int
}

// WriteConsole writes one line per tool and suite with its counts (for a
// tool whose contract did not load, one ERROR line with the configuration
// error instead), then each failure (fixture path, expected, actual, a
// short diff), then the totals, which count the contract errors.
// Texts from fixtures pass through Clean, so no upstream byte is printed raw;
// paths and suite names through Ident, so distinct fixtures print distinctly.
func WriteConsole(w io.Writer, run *Run, opts ConsoleOptions) error {
	paint := func(code, s string) string {
		if !opts.Color {
			return s
		}
		return "\x1b[" + code + "m" + s + "\x1b[0m"
	}
	max := opts.MaxFailures
	if max == 0 {
		max = 50
	}
	var b strings.Builder
	for _, g := range run.Groups() {
		if g.Errored > 0 {
			for _, c := range g.Cases {
				fmt.Fprintf(&b, "%s %s: contract configuration error: %s\n", paint("31", "ERROR"), Ident(g.Tool), Line(c.Message))
			}
			continue
		}
		mark := paint("32", "ok  ")
		if g.Failed > 0 {
			mark = paint("31", "FAIL")
		}
		fmt.Fprintf(&b, "%s %-28s %4d passed %4d failed %4d unchecked\n",
			mark, Ident(g.Tool+"."+g.Suite), g.Passed, g.Failed, g.Unchecked)
	}
	shown := 0
	for _, c := range run.Cases {
		if c.Status == Passed || c.Status == Errored {
			continue
		}
		if shown == max {
			fmt.Fprintf(&b, "… more not shown (see the JUnit or JSON report)\n")
			break
		}
		shown++
		label := paint("31", "FAIL")
		if c.Status == Unchecked {
			label = paint("33", "UNCHECKED")
		}
		fmt.Fprintf(&b, "\n%s %s [%s]\n", label, Ident(c.File), Ident(c.Suite))
		fmt.Fprintf(&b, "  expected: %s\n  actual:   %s\n", Line(c.Expected), Line(c.Actual))
		if c.Message != "" {
			fmt.Fprintf(&b, "  %s\n", Line(c.Message))
		}
		if c.Detail != "" {
			for _, l := range strings.Split(Clean(c.Detail, 2048, true), "\n") {
				fmt.Fprintf(&b, "    %s\n", l)
			}
		}
	}
	warned := map[string]bool{}
	for _, c := range run.Cases {
		if len(c.Warnings) == 0 || warned[c.File] {
			continue
		}
		if len(warned) == 0 {
			b.WriteString("\n")
		}
		warned[c.File] = true
		if len(warned) <= max {
			fmt.Fprintf(&b, "%s %s: %s\n", paint("33", "WARN"), Ident(c.File), Line(strings.Join(c.Warnings, "; ")))
		}
	}
	p, f, u := run.Counts()
	fmt.Fprintf(&b, "\n%d testcases: %d passed, %d failed, %d unchecked", len(run.Cases), p, f, u)
	if e := run.Errored(); e == 1 {
		b.WriteString(", 1 contract error")
	} else if e > 1 {
		fmt.Fprintf(&b, ", %d contract errors", e)
	}
	fmt.Fprintf(&b, " (%.2fs)", run.Duration.Seconds())
	if len(warned) > 0 {
		fmt.Fprintf(&b, "; %d fixtures with warnings", len(warned))
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// resultsVersion is the version of the JSON results format.
const resultsVersion = 1

// resultsDoc is the JSON results document (schemas/results.schema.json).
type resultsDoc struct {
	Version   int            `json:"version"`
	Command   string         `json:"command,omitempty"`
	Passed    int            `json:"passed"`
	Failed    int            `json:"failed"`
	Unchecked int            `json:"unchecked"`
	Errored   int            `json:"errored"`
	Duration  int64          `json:"duration_ns"`
	Shard     shard.Shard    `json:"shard,omitzero"`
	Lint      *RunLintRecord `json:"lint,omitempty"`
	Cases     []Case         `json:"cases"`
}

// WriteJSON writes the run as JSON per schemas/results.schema.json:
// Run.Command as "command" (absent when ""), and for a shard's run
// (Run.Shard not zero) "shard": {"index": K, "count": N, "set": digest};
// Run.Lint as "lint" (absent when nil).
func WriteJSON(w io.Writer, run *Run) error {
	p, f, u := run.Counts()
	cases := make([]Case, len(run.Cases))
	for i, c := range run.Cases {
		if run.written {
			c.Name, c.File = rewritten(c.Name), rewritten(c.File)
		} else {
			c.Name, c.File = Ident(c.Name), Ident(c.File)
		}
		c.Message = Line(c.Message)
		c.Expected, c.Actual, c.Detail = Line(c.Expected), Line(c.Actual), Block(c.Detail)
		cases[i] = c
	}
	var lint *RunLintRecord
	if run.Lint != nil {
		l := *run.Lint
		l.Command = Line(l.Command)
		lint = &l
	}
	doc := resultsDoc{resultsVersion, run.Command, p, f, u, run.Errored(), run.Duration.Nanoseconds(), run.Shard, lint, cases}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
