package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/shard"
	"github.com/airlockdev/airlock/mutate"
	"github.com/airlockdev/airlock/reports"
	"github.com/airlockdev/airlock/runner"
)

// runOptions holds the flags of airlock run.
type runOptions struct {
	opts                runner.Options
	junitFile, jsonFile string
	sarifFile           string
	color               string
	summaryFile, format string
	withMutants         bool
	failUnchecked       bool
	strict              bool
	shard               string // --shard K/N
	// stale are the mutation baseline's stale entries (--mutate), printed
	// as warnings; with --strict they are failed cases too.
	stale []mutate.StaleEntry
}

func newRunCmd(e *env) *cobra.Command {
	o := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run [flags]",
		Short: "Check every fixture of the bundled or given contracts, suite by suite",
		Long: `run walks FIXTURES/<tool>/<upstream-version>/{accepted,near-miss,historical,recorded}/,
runs each fixture through the gate of SCHEMAS/<tool>/contract.yaml, and checks the parse,
schema, semantic and projection suites separately, plus the no-leak proof for every fixture.

It prints one line per tool and suite, then each failure; --junit and --json write reports,
--summary a Markdown job summary; --format github adds a GitHub Actions annotation per failed
testcase. On a terminal, a run that takes over 2 s shows a progress line on standard error.
--sarif writes a SARIF 2.1.0 log (failed fixtures and leaks, for code scanning).
--update writes or refreshes golden agent outputs (<name>.agent.json) of admitted fixtures
only, never bodies or sidecars, and prints what changed.

After the summary, one line counts what airlock lint finds in the same contracts and
fixtures ("lint: 0 errors, 3 warnings, 0 notes"). They do not fail the run, errors
included; --strict makes any of them fail it (exit 1, with a line saying so).

--mutate adds the mutation suite (airlock mutate, docs/mutate.md), reading each contract's
mutate.baseline.yaml; --strict also fails its unseen mutants (admitted, agent output
unchanged) and its stale baseline entries.

A contract that does not load (a dangling $ref, a bad manifest) fails its tool alone: it is
an ERROR line on the console and an error testcase (suite contract) in the reports, the
other tools run completely, and the run exits 2 after writing every report. With --tool,
only the named contracts are loaded.

Exit codes: 0 nothing failed (unchecked testcases are listed, and fail the run with
--fail-unchecked), 1 any failure (with --strict: also any lint finding), 2 usage or
configuration error (also: a selection that matches no fixture, and a broken contract,
which wins over 1), 3 internal error.

--shard K/N checks only shard K of N of the selected fixtures (a deterministic partition by
tool/upstream-version/kind/name, balanced by body size), so N CI runners split one run; the
reports record the shard and airlock merge joins them into the unsharded run's reports. An
empty shard exits 0. Broken contracts, the lint line (and --strict's lint failure) and stale
baseline entries are reported by shard 1 alone.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runRun(cmd, e, o)
		},
	}
	o.register(cmd.Flags())
	return cmd
}

// register adds the run flags to f.
func (o *runOptions) register(f *pflag.FlagSet) {
	f.StringVar(&o.opts.SchemasDir, "schemas", "schemas", "directory holding one folder per tool contract")
	f.StringVar(&o.opts.FixturesDir, "fixtures", "fixtures", "directory holding the fixture trees")
	f.StringSliceVar(&o.opts.Filter.Tools, "tool", nil, "only these tools (repeatable or comma-separated)")
	f.StringSliceVar(&o.opts.Filter.UpstreamVersions, "upstream-version", nil, "only these upstream versions")
	f.StringSliceVar(&o.opts.Filter.Kinds, "kind", nil, "only these kinds: accepted, near-miss, error, historical, recorded")
	f.StringSliceVar(&o.opts.Suites, "suite", nil, "only these suites: parse, schema, semantic, projection, no-leak, mutation (with --mutate)")
	f.BoolVar(&o.failUnchecked, "fail-unchecked", false, "exit 1 when any testcase is unchecked (a near-miss without a reason, a recorded fixture without an expectation, an upstream version --mutate could not score; not an equivalent mutant of --mutate, listed as unchecked but dropped by design)")
	f.BoolVar(&o.strict, "strict", false, "exit 1 when airlock lint finds anything in the selected contracts (warnings included); with --mutate, unseen mutants and stale baseline entries fail too")
	f.BoolVar(&o.withMutants, "mutate", false, "add the mutation suite: mutants of every admitted fixture (see airlock mutate)")
	f.BoolVar(&o.opts.Update, "update", false, "write or refresh golden agent outputs of admitted fixtures")
	f.IntVar(&o.opts.Workers, "workers", 0, "fixtures checked at once (default: one per CPU)")
	f.StringVar(&o.junitFile, "junit", "", "write a JUnit XML report to FILE")
	f.StringVar(&o.jsonFile, "json", "", "write machine-readable results to FILE (schemas/results.schema.json)")
	f.StringVar(&o.sarifFile, "sarif", "", "write failed fixtures and leaks as SARIF 2.1.0 to FILE (code scanning)")
	f.StringVar(&o.color, "color", "auto", "colour the console summary: auto (only on a terminal, and not when NO_COLOR is set), always, never")
	f.StringVar(&o.summaryFile, "summary", "", summaryUsage)
	f.StringVar(&o.format, "format", "text", "output format: text, or github (text plus a GitHub Actions annotation per failed testcase)")
	f.StringVar(&o.shard, "shard", "", "check only shard K of N (K/N, 1-based) of the selected fixtures, for N runners; airlock merge joins their reports")
}

// runRun is the body of airlock run: it runs the suites, writes the console
// summary and reports, and maps failures to the exit code.
func runRun(cmd *cobra.Command, e *env, o *runOptions) error {
	if err := checkFormat(o.format, "text", formatGitHub); err != nil {
		return err
	}
	if err := checkColor(o.color); err != nil {
		return err
	}
	if err := e.checkReportPaths(map[string]string{"--junit": o.junitFile, "--json": o.jsonFile, "--summary": o.summaryFile, "--sarif": o.sarifFile}); err != nil {
		return err
	}
	prog := newProgress(cmd.ErrOrStderr(), "fixtures")
	o.opts.Progress = prog.update
	sh, err := shard.Parse(o.shard)
	if err != nil {
		return usageErr("--shard: %v", err)
	}
	o.opts.Filter.Shard = sh
	res, err := o.results(cmd.Context(), e)
	prog.finish()
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	for _, u := range res.Updated {
		fmt.Fprintln(out, reports.Line(u))
	}
	// The lint line looks at every fixture of the selected tools, with the
	// contracts the run loaded (a mutation-only run loaded none here); a
	// contract-level entry, reported by shard 1 alone. It is worked out
	// before the annotations and the summary, which say when --strict
	// fails the run on it; an error of its own is returned after the
	// reports are written, as before.
	var lintRes *reports.Lint
	var lintErr error
	switch {
	case !sh.ReportsContract():
	case res.Set != nil:
		lintRes, lintErr = lintSet(cmd.Context(), res.Set, o.opts.FixturesDir, o.opts.Filter.Tools)
	default:
		lintRes, _, lintErr = lintContracts(cmd.Context(), e, o.opts.SchemasDir, o.opts.FixturesDir, true, o.opts.Filter.Tools)
	}
	lint := reports.RunLint{Lint: lintRes, Strict: o.strict, Command: o.lintCommand()}
	res.Run.Lint = lint.Record() // the JSON results carry it, for merge's summary
	useColor := colorOn(o.color, isTerminal(out), os.Getenv("NO_COLOR"))
	if err := reports.WriteConsole(out, &res.Run, reports.ConsoleOptions{Color: useColor}); err != nil {
		return internalErr(err)
	}
	if o.format == formatGitHub {
		var anns []reports.Annotation
		if lint.Fails() {
			anns = append(anns, reports.StrictLintAnnotation(lint))
		}
		if err := writeAnnotations(out, append(anns, reports.RunAnnotations(&res.Run)...)); err != nil {
			return err
		}
	}
	if err := writeSummary(cmd.Context(), o.summaryFile, func(w io.Writer) error { return reports.WriteRunSummaryLint(w, &res.Run, lint) }); err != nil {
		return err
	}
	for _, st := range o.stale {
		fmt.Fprintln(out, "warning: stale baseline entry", reports.Line(st.String()))
	}
	if o.junitFile != "" {
		if err := writeReport(cmd.Context(), o.junitFile, func(w io.Writer) error { return reports.WriteJUnit(w, &res.Run) }); err != nil {
			return internalErr(err)
		}
	}
	if o.jsonFile != "" {
		if err := writeReport(cmd.Context(), o.jsonFile, func(w io.Writer) error { return reports.WriteJSON(w, &res.Run) }); err != nil {
			return internalErr(err)
		}
	}
	if o.sarifFile != "" {
		if err := writeReport(cmd.Context(), o.sarifFile, func(w io.Writer) error { return reports.WriteRunSARIF(w, &res.Run, gate.Version) }); err != nil {
			return internalErr(err)
		}
	}
	if !sh.ReportsContract() {
		fmt.Fprintf(out, "lint: reported by shard 1/%d\n", sh.Count)
	}
	if lintErr != nil {
		return lintErr
	}
	if lintRes != nil {
		fmt.Fprintf(out, "lint: %s (airlock lint lists them)\n", lintRes.Summary())
	}
	if len(res.Broken) > 0 {
		return brokenContracts(res.Broken) // exit 2 wins over findings
	}
	_, failed, unchecked := res.Run.Counts()
	for _, c := range res.Run.Cases {
		if c.Suite == mutate.Suite && c.Status == reports.Unchecked && strings.HasPrefix(c.Message, mutate.EquivalentMessage) {
			unchecked-- // an equivalent mutant: dropped by design, listed, never a finding
		}
	}
	if failed > 0 {
		return &exitError{code: ExitFindings, err: fmt.Errorf("%d failed", failed)}
	}
	if o.failUnchecked && unchecked > 0 {
		return &exitError{code: ExitFindings, err: fmt.Errorf("%d unchecked", unchecked)}
	}
	if o.strict && lintRes != nil && lintRes.Active() > 0 {
		fmt.Fprintf(out, "failing: --strict and %d lint finding(s); airlock lint lists them\n", lintRes.Active())
		return &exitError{code: ExitFindings, err: fmt.Errorf("lint: %s (--strict)", lintRes.Summary())}
	}
	return nil
}

// lintCommand is the airlock lint command line that lists the findings of
// the run's lint line: the run's --schemas, --fixtures and --tool when
// they are not the defaults, each quoted for a POSIX shell when it needs
// to be.
func (o *runOptions) lintCommand() string {
	args := []string{"airlock", "lint"}
	if o.opts.SchemasDir != "schemas" {
		args = append(args, "--schemas", shellQuote(o.opts.SchemasDir))
	}
	if o.opts.FixturesDir != "fixtures" {
		args = append(args, "--fixtures", shellQuote(o.opts.FixturesDir))
	}
	for _, t := range o.opts.Filter.Tools {
		args = append(args, "--tool", shellQuote(t))
	}
	return strings.Join(args, " ")
}

// shellQuote is s as one POSIX shell word: as it is when it holds only
// characters no shell treats specially, else between single quotes.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// results runs the selected suites: the mutation suite through
// mutate.Mutate, the others through runner.Run.
//
// The run's Duration is the wall time of both, one after the other (the
// runner's alone covers only its own suites); each mutation testcase
// carries its mutant's time (mutate.MutantResult.Duration).
func (o *runOptions) results(ctx context.Context, e *env) (*runner.Result, error) {
	start := time.Now()
	opts := &o.opts
	wantMutation := o.withMutants && (len(opts.Suites) == 0 || slices.Contains(opts.Suites, mutate.Suite))
	if slices.Contains(opts.Suites, mutate.Suite) && !o.withMutants {
		return nil, usageErr("--suite mutation needs --mutate")
	}
	opts.Gate = e.gate
	runOpts := *opts
	runOpts.Suites = slices.DeleteFunc(slices.Clone(opts.Suites), func(s string) bool { return s == mutate.Suite })
	res := &runner.Result{}
	ranRunner := len(opts.Suites) == 0 || len(runOpts.Suites) > 0
	if ranRunner {
		var err error
		if res, err = runner.Run(ctx, runOpts); err != nil {
			return nil, err
		}
	}
	if wantMutation {
		rep, err := mutate.Mutate(ctx, mutate.Options{
			SchemasDir: opts.SchemasDir, FixturesDir: opts.FixturesDir, Filter: opts.Filter,
			Workers: opts.Workers, Gate: e.gate, Strict: o.strict, // mm: --strict counts unseen mutants
			Progress: opts.Progress,
		})
		if err != nil {
			return nil, err
		}
		o.stale = rep.Stale
		if ranRunner {
			// runner.Run reported the broken contracts already.
			res.Run.Cases = append(res.Run.Cases, slices.DeleteFunc(rep.Cases(), func(c reports.Case) bool { return c.Status == reports.Errored })...)
		} else {
			res.Broken = rep.Broken
			res.Run.Cases = append(res.Run.Cases, rep.Cases()...)
			res.Run.Shard = rep.Shard // the runner's, of the same selection, otherwise
		}
	}
	res.Run.Duration = time.Since(start)
	res.Run.Command = reports.CommandRun
	res.Run.Shard = res.Run.Shard.Variant(o.variant())
	return res, nil
}

// variant names what the run checks of each fixture, for the shard's set
// digest (shard.Shard.Variant): "" for every suite without --mutate;
// otherwise the selected suites, sorted, joined by ",", then "+mutate"
// with --mutate and "+strict" with --mutate --strict (which fails
// unseen mutants). Shards run with different checks record different
// sets, and airlock merge refuses them.
func (o *runOptions) variant() string {
	suites := slices.Clone(o.opts.Suites)
	slices.Sort(suites)
	v := strings.Join(slices.Compact(suites), ",")
	if o.withMutants {
		v += "+mutate"
		if o.strict {
			v += "+strict"
		}
	}
	return v
}

// checkReportPaths refuses, before any work, report paths that cannot
// take a report: a folder, a path under a file, one path given for two
// reports, or a symbolic link (without --follow-symlinks). These are usage errors (exit 2), not failed writes after a run.
func (e *env) checkReportPaths(flags map[string]string) error {
	seen := map[string]string{}
	for _, flag := range slices.Sorted(maps.Keys(flags)) {
		path := flags[flag]
		if path == "" {
			continue
		}
		if err := e.namedFile(flag, path); err != nil {
			return err
		}
		if other, dup := seen[filepath.Clean(path)]; dup {
			return usageErr("%s and %s both name %q; each report needs its own file", other, flag, path)
		}
		seen[filepath.Clean(path)] = flag
		if strings.HasSuffix(path, "/") || strings.HasSuffix(path, string(os.PathSeparator)) {
			return usageErr("%s %q names a folder; give a file path such as %s", flag, path, filepath.Join(path, "report"))
		}
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			return usageErr("%s %q is a folder; give a file path such as %s", flag, path, filepath.Join(path, "report"))
		}
		for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
			if st, err := os.Stat(dir); err == nil {
				if !st.IsDir() {
					return usageErr("%s %q: %s is not a folder", flag, path, dir)
				}
				break
			}
			if dir == filepath.Dir(dir) {
				break
			}
		}
	}
	return nil
}

// writeReport writes one report (writeReports): a failed write never
// leaves a partial report.
func writeReport(ctx context.Context, path string, write func(io.Writer) error) error {
	return writeReports(ctx, []reportFile{{path, write}})
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	if t, ok := w.(*trackedWriter); ok {
		w = t.w
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
