package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/lint"
	"github.com/airlockdev/airlock/reports"
)

// lintOptions holds the flags of airlock lint.
type lintOptions struct {
	schemasDir, fixturesDir string
	tools                   []string
	format                  string
	summaryFile             string
	sarifFile               string
	strict                  bool
}

func newLintCmd(e *env) *cobra.Command {
	o := &lintOptions{}
	cmd := &cobra.Command{
		Use:   "lint [flags]",
		Short: "Say what is weak in each contract before production does",
		Long: `lint loads every contract of SCHEMAS (or those --tool names) and reports, with file, line
and JSON Pointer, what makes a contract weaker than it looks: open objects, unbounded
strings, arrays and numbers, unanchored or unbounded patterns, formats other validators do
not know, additionalProperties: false beside an allOf, oneOf branches that overlap, projected
fields the schema does not require, rules on values it does not constrain; and, from the
fixture tree FIXTURES, upstream versions without fixtures and stages no near-miss exercises.
Every rule is listed with its level in docs/lint.md.

--format text (default), json (schemas/lint.schema.json), sarif (SARIF 2.1.0, for code
scanning), github (text plus a GitHub Actions annotation per finding) or codequality (GitLab
Code Quality JSON, paths relative to $CI_PROJECT_DIR when set; a valid document, "[]" when a
configuration error stops lint before any finding). --summary FILE writes a
Markdown job summary. Without a fixtures folder the fixture rules are skipped, and the
output says so.
--sarif FILE writes the SARIF log to FILE besides the chosen output. Without a fixtures folder the fixture rules are skipped, and the output says so.

Exit codes: 0 no error-level finding (with --strict: no finding at all), 1 findings,
2 usage or configuration error (a contract that does not load), 3 internal error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			write, ok := map[string]func(io.Writer, *reports.Lint) error{
				"text": reports.WriteLintText, "json": reports.WriteLintJSON,
				"sarif": func(w io.Writer, l *reports.Lint) error { return reports.WriteLintSARIF(w, l, gate.Version) },
				formatGitHub: func(w io.Writer, l *reports.Lint) error {
					if err := reports.WriteLintText(w, l); err != nil {
						return err
					}
					return writeAnnotations(w, reports.LintAnnotations(l))
				},
				"codequality": func(w io.Writer, l *reports.Lint) error {
					dir, _ := os.Getwd()
					return reports.WriteLintCodeQuality(w, l, os.Getenv("CI_PROJECT_DIR"), dir)
				},
			}[o.format]
			if !ok {
				return usageErr("--format %q: want text, json, sarif, github or codequality", o.format)
			}
			// A Code Quality artifact must be a JSON document whatever the
			// exit: a configuration error before any finding is "[]".
			noFindings := func(err error) error {
				if o.format == "codequality" {
					fmt.Fprintln(cmd.OutOrStdout(), "[]")
				}
				return err
			}
			if err := e.checkReportPaths(map[string]string{"--summary": o.summaryFile, "--sarif": o.sarifFile}); err != nil {
				return noFindings(err)
			}
			fixturesGiven := cmd.Flags().Changed("fixtures")
			l, broken, err := lintContracts(cmd.Context(), e, o.schemasDir, o.fixturesDir, fixturesGiven, o.tools)
			if err != nil {
				return noFindings(err)
			}
			if err := write(cmd.OutOrStdout(), l); err != nil {
				return internalErr(err)
			}
			if err := writeSummary(cmd.Context(), o.summaryFile, func(w io.Writer) error { return reports.WriteLintSummary(w, l) }); err != nil {
				return err
			}
			if o.sarifFile != "" {
				if err := writeReport(cmd.Context(), o.sarifFile, func(w io.Writer) error { return reports.WriteLintSARIF(w, l, gate.Version) }); err != nil {
					return internalErr(err)
				}
			}
			if len(broken) > 0 {
				return brokenContracts(broken) // exit 2 wins over findings
			}
			return lintVerdict(l, o.strict)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.schemasDir, "schemas", "schemas", "directory holding one folder per tool contract")
	f.StringVar(&o.fixturesDir, "fixtures", "fixtures", "directory holding the fixture trees (the fixture rules are skipped when the default is absent)")
	f.StringSliceVar(&o.tools, "tool", nil, "only these tools (repeatable or comma-separated)")
	f.StringVar(&o.format, "format", "text", "output format: text, json, sarif, github (text plus annotations) or codequality (GitLab Code Quality)")
	f.StringVar(&o.summaryFile, "summary", "", summaryUsage)
	f.StringVar(&o.sarifFile, "sarif", "", "also write the findings as SARIF 2.1.0 to FILE (code scanning)")
	f.BoolVar(&o.strict, "strict", false, "exit 1 on warnings too")
	return cmd
}

// lintContracts lints the contracts of schemasDir that tools selects (all
// when empty), with the fixtures of fixturesDir when that folder exists;
// a fixtures folder named explicitly (given) must exist. A contract that
// does not load is a contract-load finding and is returned in broken.
func lintContracts(ctx context.Context, e *env, schemasDir, fixturesDir string, given bool, tools []string) (l *reports.Lint, broken []fixture.Broken, err error) {
	fixturesDir, err = lintFixtures(fixturesDir, given)
	if err != nil {
		return nil, nil, err
	}
	set, err := fixture.Open(schemasDir, "", fixture.Filter{Tools: tools}, e.gate)
	if err != nil {
		return nil, nil, err
	}
	l, err = lintSet(ctx, set, fixturesDir, tools)
	return l, set.Broken, err
}

// lintFixtures is the fixtures folder lint reads: fixturesDir, or "" when
// it does not exist and was not named on the command line (then the
// fixture rules are skipped); one named that does not exist is a usage
// error.
func lintFixtures(fixturesDir string, given bool) (string, error) {
	if _, err := os.Stat(fixturesDir); errors.Is(err, fs.ErrNotExist) {
		if given {
			return "", usageErr("--fixtures %q: no such folder", fixturesDir)
		}
		return "", nil
	}
	return fixturesDir, nil
}

// lintSet lints the contracts of set (already loaded: airlock run passes
// the ones it ran) with every fixture of fixturesDir for tools, "" for no
// fixture rules.
func lintSet(ctx context.Context, set *fixture.Set, fixturesDir string, tools []string) (*reports.Lint, error) {
	all, err := set.Select(fixturesDir, fixture.Filter{Tools: tools})
	if err != nil {
		return nil, err
	}
	in := lint.Input{Contracts: all.List, Broken: all.Broken, FixturesDir: fixturesDir}
	if fixturesDir != "" {
		in.Set = all
	}
	return lint.Lint(ctx, in)
}

// lintVerdict is the exit of a lint: findings (1) for an error, or with
// strict for any finding.
func lintVerdict(l *reports.Lint, strict bool) error {
	if n := l.Count(reports.SeverityError); n > 0 {
		return findings("lint: %s", l.Summary())
	}
	if strict && l.Active() > 0 {
		return findings("lint: %s (--strict)", l.Summary())
	}
	return nil
}
