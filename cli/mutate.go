package cli

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/airlockdev/airlock/internal/shard"
	"github.com/airlockdev/airlock/mutate"
	"github.com/airlockdev/airlock/reports"
)

func newMutateCmd(e *env) *cobra.Command {
	var (
		opts        mutate.Options
		writeDir    string
		writeAll    bool
		maxShown    int
		baselineAdd bool
		reason      string
		mutants     []string
		summaryFile string
		format      string
		shardFlag   string
		junitFile   string
		jsonFile    string
	)
	cmd := &cobra.Command{
		Use:   "mutate [flags]",
		Short: "Derive near-miss mutants from accepted fixtures and prove each is refused",
		Long: `mutate derives near-misses from every accepted and historical fixture the gate admits
(families structure, values, bytes and semantic; docs/mutate.md lists every mutation) and
runs each through the gate. A mutant is killed when it is refused for the family it was
built to trip, or by the projection stage (the agent-facing schema or the text policy:
counted in the projection family), with exactly the failure envelope as agent output and
its canary token nowhere in it.

An admitted mutant is a survivor when it reaches the agent (the agent output differs from
the fixture's, or carries its canary, or the mutant swaps a value bound to the request:
the request id or a context value, whose whole response is another call's): a hole in the
contract. An admitted mutant whose agent output is the fixture's is unseen: reported apart,
and counted against the score and failing only with --strict. A mutant that is the fixture, or whose new value the
schema names at that place (enum, const, type null), is equivalent: not run, counted apart,
and listed after the survivors for review. Scores are rounded down: 100.00% means all killed.
An upstream version none of whose accepted or historical fixtures was admitted is printed
as "not scored", with why each was skipped.

Accepted survivors are listed with a reason in schemas/<tool>/mutate.baseline.yaml: they
are reported as baselined and do not fail. A baseline entry that silences nothing any more
is a warning (with --strict, a failure). --baseline-add --reason TEXT appends the current
survivors (with --strict, also the unseen ones) to their contract's baseline, never
changing an entry that exists; with --mutant ID (repeatable; FIXTURE#ID for one
fixture's, as JUnit names it) only those (one already baselined is not an error), and an
ID that is not a current survivor is a usage error, nothing written.

--summary FILE writes a Markdown job summary (the mutation score per tool and upstream
version, then the survivors); --format github adds a GitHub Actions annotation per survivor,
at the place its hint names (or its fixture). On a terminal, a run that takes over 2 s shows
a progress line (fixtures mutated) on standard error.

--max-per-fixture samples reproducibly (--seed), keeping first the mutants at, above or
below a projected pointer or a rule's pointer and those of the whole body, so a survivor
that reaches the agent is not sampled away for mutants of fields nobody sees.

It prints the score per contract and upstream version, then each survivor with its hint:
the keyword or rule that would refuse it, the file, line and JSON Pointer where it goes,
and the survivor's value, then a diff. --write DIR writes the survivors (--all: every
mutant run) as near-miss fixtures with sidecars, never overwriting a file.

--junit and --json write the mutation suite's testcases (one per mutant, fixture#mutant,
plus the not-scored versions, and with --strict the stale baseline entries) as airlock run
--mutate reports them. --shard K/N mutates only shard K of N of the selected fixtures (as
airlock run --shard); broken contracts, not-scored versions (judged over every shard's
fixtures) and stale entries of no selected fixture are reported by shard 1 alone, each
shard judges the baseline entries of its own fixtures, and airlock merge joins the shards'
--junit and --json reports. An empty shard exits 0.

A contract that does not load fails its tool alone: it is an ERROR line with the
configuration error, the other tools are mutated completely, and mutate exits 2 after
printing (and writing) everything. With --tool, only the named contracts are loaded.

Exit codes: 0 no survivors, 1 survivors that reach the agent, mis-refused or leaking
mutants (with --strict: also unseen mutants and stale baseline entries), 2 usage or
configuration error (a bad baseline file too; a broken contract wins over 1), 3 internal
error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Gate = e.gate
			if err := e.namedFile("--write", writeDir); err != nil {
				return err
			}
			if err := checkFormat(format, "text", formatGitHub); err != nil {
				return err
			}
			if err := e.checkReportPaths(map[string]string{"--junit": junitFile, "--json": jsonFile, "--summary": summaryFile}); err != nil {
				return err
			}
			sh, err := shard.Parse(shardFlag)
			if err != nil {
				return usageErr("--shard: %v", err)
			}
			if !sh.IsZero() && baselineAdd {
				return usageErr("--baseline-add with --shard: add survivors to the baseline from an unsharded run")
			}
			opts.Filter.Shard = sh
			if baselineAdd && mutate.BlankReason(reason) {
				return usageErr("--baseline-add needs --reason: say why these survivors are accepted")
			}
			if !baselineAdd && reason != "" {
				return usageErr("--reason goes with --baseline-add")
			}
			if !baselineAdd && len(mutants) > 0 {
				return usageErr("--mutant goes with --baseline-add")
			}
			prog := newProgress(cmd.ErrOrStderr(), "fixtures mutated")
			opts.Progress = prog.update
			rep, err := mutate.Mutate(cmd.Context(), opts)
			prog.finish()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if baselineAdd {
				chosen := rep.Results
				if len(mutants) > 0 {
					if chosen, err = mutate.SelectSurvivors(rep.Results, mutants, opts.Strict); err != nil {
						return usage(err) // nothing written
					}
				}
				added, present, err := mutate.AddToBaseline(cmd.Context(), opts, chosen, reason, opts.Strict)
				for _, a := range added {
					fmt.Fprintf(out, "baselined %s:%d: %s %s\n", reports.Line(a.File), a.Line, reports.Line(a.Fixture), reports.Line(a.Mutant))
				}
				for _, a := range present { // another run wrote it first: not an error
					fmt.Fprintf(out, "already in the baseline %s:%d: %s %s\n", reports.Line(a.File), a.Line, reports.Line(a.Fixture), reports.Line(a.Mutant))
				}
				if err != nil {
					return err
				}
				rep.Accept(append(added, present...))
			}
			writeMutationReport(out, rep, maxShown)
			run := &reports.Run{Cases: rep.Cases(), Duration: rep.Duration, Shard: rep.Shard, Command: reports.CommandMutate}
			if junitFile != "" {
				if err := writeReport(cmd.Context(), junitFile, func(w io.Writer) error { return reports.WriteJUnit(w, run) }); err != nil {
					return internalErr(err)
				}
			}
			if jsonFile != "" {
				if err := writeReport(cmd.Context(), jsonFile, func(w io.Writer) error { return reports.WriteJSON(w, run) }); err != nil {
					return internalErr(err)
				}
			}
			if format == formatGitHub {
				if err := writeAnnotations(out, survivorAnnotations(rep)); err != nil {
					return err
				}
			}
			if err := writeSummary(cmd.Context(), summaryFile, func(w io.Writer) error {
				return reports.WriteMutateSummary(w, run)
			}); err != nil {
				return err
			}
			if writeDir != "" {
				results := rep.Survivors()
				if writeAll {
					results = slices.DeleteFunc(slices.Clone(rep.Results), func(x mutate.MutantResult) bool { return x.Outcome == mutate.Equivalent })
				}
				written, skipped, err := mutate.WriteMutants(cmd.Context(), opts, writeDir, results)
				for _, w := range written {
					fmt.Fprintln(out, "wrote", reports.Line(w))
				}
				for _, s := range skipped {
					fmt.Fprintln(out, "skipped:", reports.Line(s))
				}
				if err != nil {
					return err // a link in the tree is exit 2 (exit table), any other failure 3
				}
			}
			if len(rep.Broken) > 0 {
				return brokenContracts(rep.Broken) // exit 2 wins over survivors
			}
			if n := len(rep.Survivors()); n > 0 {
				return &exitError{code: ExitFindings, err: fmt.Errorf("%s not killed", plural(n, "mutant", "mutants"))}
			}
			if opts.Strict && len(rep.Stale) > 0 {
				return &exitError{code: ExitFindings, err: fmt.Errorf("%s (--strict)", plural(len(rep.Stale), "stale baseline entry", "stale baseline entries"))}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.SchemasDir, "schemas", "schemas", "directory holding one folder per tool contract")
	f.StringVar(&opts.FixturesDir, "fixtures", "fixtures", "directory holding the fixture trees")
	f.StringSliceVar(&opts.Filter.Tools, "tool", nil, "only these tools")
	f.StringSliceVar(&opts.Filter.UpstreamVersions, "upstream-version", nil, "only these upstream versions")
	f.Uint64Var(&opts.Seed, "seed", 1, "seed for choosing mutants under the per-fixture cap")
	f.IntVar(&opts.MaxPerFixture, "max-per-fixture", mutate.DefaultMaxMutants, "cap of mutants per fixture (negative: no cap)")
	f.IntVar(&opts.Workers, "workers", 0, "fixtures mutated at once (default: one per CPU)")
	f.BoolVar(&opts.Strict, "strict", false, "count unseen mutants (admitted, agent output unchanged) against the score and fail on them and on stale baseline entries")
	f.BoolVar(&baselineAdd, "baseline-add", false, "append the current survivors to schemas/<tool>/"+mutate.BaselineFile+" (needs --reason)")
	f.StringVar(&reason, "reason", "", "with --baseline-add, why the survivors are accepted (written into every new entry)")
	f.StringArrayVar(&mutants, "mutant", nil, "with --baseline-add, only this survivor: a mutant id as printed (every fixture's), or FIXTURE#ID (FIXTURE the file name, its path or tool/version/kind/name); repeatable; one that is not a current survivor is a usage error")
	f.StringVar(&writeDir, "write", "", "write survivors as near-miss fixtures under DIR (DIR/<tool>/<version>/near-miss/)")
	f.BoolVar(&writeAll, "all", false, "with --write, write every mutant run, not only survivors")
	f.StringVar(&summaryFile, "summary", "", summaryUsage)
	f.StringVar(&format, "format", "text", "output format: text, or github (text plus a GitHub Actions annotation per survivor)")
	f.StringVar(&shardFlag, "shard", "", "mutate only shard K of N (K/N, 1-based) of the selected fixtures, for N runners; airlock merge joins their --junit and --json reports")
	f.StringVar(&junitFile, "junit", "", "write the mutation suite's testcases as a JUnit XML report to FILE")
	f.StringVar(&jsonFile, "json", "", "write the mutation suite's testcases as JSON results to FILE (schemas/results.schema.json)")
	f.IntVar(&maxShown, "max-shown", 20, "failing results listed in full (most severe first: survived, leaked, wrong_reason, unseen), and equivalent mutants listed")
	return cmd
}

// writeMutationReport prints an ERROR line per broken contract, scores,
// stale baseline entries, then survivors with hints, places and diffs,
// the equivalent mutants (fixture, id, why; at most maxShown, then a count
// of the rest), then the totals.
func writeMutationReport(w io.Writer, rep *mutate.Report, maxShown int) {
	for _, b := range rep.Broken {
		fmt.Fprintf(w, "ERROR %s: contract configuration error: %s\n", reports.Ident(b.Tool), reports.Line(b.Err.Error()))
	}
	var total mutate.Score
	for _, s := range rep.Scores {
		total.Generated += s.Generated
		total.Scored += s.Scored
		total.Killed += s.Killed
		total.Survived += s.Survived
		total.Unseen += s.Unseen
		total.Baselined += s.Baselined
		total.Equivalent += s.Equivalent
		total.Failed += s.Failed
		fams := make([]string, 0, len(s.ByFamily))
		for _, fam := range mutate.Families {
			if c, ok := s.ByFamily[fam]; ok {
				fams = append(fams, fmt.Sprintf("%s %d/%d", fam, c[1], c[0]))
			}
		}
		fmt.Fprintf(w, "%-16s %-12s score %6.2f%% (%d/%d)  %s; unseen %d, baselined %d, equivalent %d\n",
			reports.Line(s.Tool), reports.Line(s.UpstreamVersion), s.Percent(), s.Killed, s.Scored, strings.Join(fams, ", "), s.Unseen, s.Baselined, s.Equivalent)
	}
	for _, u := range rep.Unscored {
		fmt.Fprintf(w, "%-16s %-12s not scored: %s\n", reports.Line(u.Tool), reports.Line(u.UpstreamVersion), reports.Line(u.String()))
	}
	for _, s := range rep.Skipped {
		fmt.Fprintln(w, "skipped:", reports.Line(s))
	}
	for _, st := range rep.Stale {
		fmt.Fprintln(w, "warning: stale baseline entry", reports.Line(st.String()))
	}
	surv := rep.Survivors()
	mutate.BySeverity(surv) // survivors that reach the agent first, unseen ones last
	type hintCount struct {
		n, worst int
		by       map[mutate.Outcome]int
	}
	hints := map[string]*hintCount{}
	for i, x := range surv {
		h := hints[x.Mutant.Hint]
		if h == nil {
			h = &hintCount{worst: x.Outcome.Severity(), by: map[mutate.Outcome]int{}}
			hints[x.Mutant.Hint] = h
		}
		h.n++
		h.by[x.Outcome]++
		if i >= maxShown {
			continue
		}
		fmt.Fprintf(w, "\n%s %s\n  mutation: %s (%s)\n  actual:   %s\n  hint:     %s\n",
			strings.ToUpper(string(x.Outcome)), reports.Line(x.Fixture.Body), reports.Line(x.Mutant.ID), x.Mutant.Family, reports.Line(x.Actual), reports.Line(x.Mutant.Hint))
		if h := x.Location; h != nil {
			fmt.Fprintf(w, "  where:    %s (instance %s)\n", reports.Line(h.String()), reports.Line(mutate.ShowPointer(h.Instance)))
			if add := h.AddText(x.Mutant.Hint); add != "" {
				fmt.Fprintf(w, "  add:      %s\n", reports.Line(add))
			}
			if h.Value != "" {
				fmt.Fprintf(w, "  value:    %s\n", reports.Line(h.Value))
			}
		}
		if x.Problem != "" {
			fmt.Fprintf(w, "  problem:  %s\n", reports.Line(x.Problem))
		}
		for _, l := range strings.Split(reports.Clean(x.Diff(), 1200, true), "\n") {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
	if len(surv) > maxShown {
		fmt.Fprintf(w, "\n… %d more not shown\n", len(surv)-maxShown)
	}
	var equiv []mutate.MutantResult
	for _, x := range rep.Results {
		if x.Outcome == mutate.Equivalent {
			equiv = append(equiv, x)
		}
	}
	if len(equiv) > 0 {
		fmt.Fprintf(w, "\nequivalent (not run), for review:\n")
		for i, x := range equiv {
			if i >= maxShown {
				fmt.Fprintf(w, "  … %d more not shown\n", len(equiv)-maxShown)
				break
			}
			fmt.Fprintf(w, "  %s %s: %s\n", reports.Line(x.Fixture.Body), reports.Line(x.Mutant.ID), reports.Line(x.Problem))
		}
	}
	if len(hints) > 0 {
		keys := make([]string, 0, len(hints))
		for k := range hints {
			keys = append(keys, k)
		}
		// The most severe outcome a hint closes first (as the listing), then
		// the most mutants.
		sort.Slice(keys, func(i, j int) bool {
			a, b := hints[keys[i]], hints[keys[j]]
			if a.worst != b.worst {
				return a.worst < b.worst
			}
			return a.n > b.n || a.n == b.n && keys[i] < keys[j]
		})
		fmt.Fprintln(w, "\nwhat would close them:")
		for _, k := range keys {
			h := hints[k]
			var parts []string
			for _, o := range []mutate.Outcome{mutate.Survived, mutate.Leaked, mutate.WrongReason, mutate.Unseen} {
				if c := h.by[o]; c > 0 {
					parts = append(parts, fmt.Sprintf("%d %s", c, o))
				}
			}
			fmt.Fprintf(w, "  %4d  %s (%s)\n", h.n, reports.Line(k), strings.Join(parts, ", "))
		}
	}
	if total.Generated+total.Equivalent > 0 {
		notKilled := total.Scored - total.Killed
		ratio := total.Percent() // rounded down: 100.00% only when all were killed
		fmt.Fprintf(w, "\n%s run: %d killed, %d not killed, score %.2f%%; %d unseen, %d baselined, %d equivalent (not run)",
			plural(total.Generated, "mutant", "mutants"), total.Killed, notKilled, ratio, total.Unseen, total.Baselined, total.Equivalent)
		if rep.Strict {
			fmt.Fprint(w, " (--strict: unseen counted)")
		}
		if n := len(rep.Stale); n > 0 {
			fmt.Fprintf(w, "; %s", plural(n, "stale baseline entry", "stale baseline entries"))
		}
	} else {
		fmt.Fprint(w, "\n0 mutants: no score (nothing was mutated)") // not 100%: nothing was shown to be killed
	}
	if n := len(rep.Broken); n > 0 {
		fmt.Fprintf(w, "; %s", plural(n, "contract error", "contract errors"))
	}
	fmt.Fprintln(w)
}

// survivorAnnotations are mutate's GitHub annotations: an error per
// failing mutant (a survivor, a wrong reason, a leak; with --strict an
// unseen one) and per broken contract (at the file, line and column its
// configuration error names); a mutant's points at the file and line its
// hint names (the keyword or rule to add) or, without one, at its fixture.
func survivorAnnotations(rep *mutate.Report) []reports.Annotation {
	var out []reports.Annotation
	for _, b := range rep.Broken {
		out = append(out, reports.Annotation{Level: reports.AnnotationError, File: b.Err.File, Line: b.Err.Line, Col: b.Err.Column, Title: "airlock mutate " + b.Tool + ": contract does not load", Message: b.Err.Error()})
	}
	surv := rep.Survivors()
	mutate.BySeverity(surv)
	for _, x := range surv {
		a := reports.Annotation{Level: reports.AnnotationError, File: x.Fixture.Body,
			Title:   "airlock mutate: " + string(x.Outcome),
			Message: fmt.Sprintf("%s#%s (%s): %s", reports.Ident(x.Fixture.Name), x.Mutant.ID, x.Mutant.Family, x.Mutant.Hint)}
		if h := x.Location; h != nil && h.File != "" {
			a.File, a.Line = h.File, h.Line
			a.Message += fmt.Sprintf(" (instance %s, fixture %s)", mutate.ShowPointer(h.Instance), reports.Ident(x.Fixture.Body))
		}
		out = append(out, a)
	}
	return out
}

// plural is "1 entry" or "N entries": the count and the noun in its
// number (one, other).
func plural(n int, one, other string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, other)
}
