package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/airlockdev/airlock/mutate"
	"github.com/airlockdev/airlock/reports"
)

func newMutateCmd(e *env) *cobra.Command {
	var (
		opts     mutate.Options
		writeDir string
		writeAll bool
		maxShown int
	)
	cmd := &cobra.Command{
		Use:   "mutate [flags]",
		Short: "Derive near-miss mutants from accepted fixtures and prove each is refused",
		Long: `mutate derives near-misses from every accepted and historical fixture the gate admits:
structure (an unexpected property carrying an instruction, null or an array in place of an
object, a success that also carries an error, a swapped discriminator), values (emptied,
overlong, near-enum, scalar turned into an object, out-of-range numbers, invalid and stale
date-times), bytes (duplicate and case-folded member names, truncation, BOM, invalid UTF-8,
a lone surrogate, trailing data, nesting and size past the limits, an HTML page, an empty
body) and semantic (a bound value swapped). Each mutant must be refused for the family it
was built to trip, with exactly the failure envelope as agent output and its canary token
nowhere in it. An admitted mutant is a survivor: a hole in the contract.

It prints the mutation score per contract and upstream version, then each survivor with a
hint and a diff. --write DIR writes the survivors (--all: every mutant) as near-miss
fixtures with sidecars, never overwriting a file.

A contract that does not load fails its tool alone: it is an ERROR line with the
configuration error, the other tools are mutated completely, and mutate exits 2 after
printing (and writing) everything. With --tool, only the named contracts are loaded.

Exit codes: 0 no survivors, 1 survivors or mis-refused mutants, 2 usage or configuration
error (also: a broken contract, which wins over 1), 3 internal error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Gate = e.gate
			if err := e.namedFile("--write", writeDir); err != nil {
				return err
			}
			rep, err := mutate.Mutate(cmd.Context(), opts)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			writeMutationReport(out, rep, maxShown)
			if writeDir != "" {
				results := rep.Survivors()
				if writeAll {
					results = rep.Results
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
				return &exitError{code: ExitFindings, err: fmt.Errorf("%d mutants not killed", n)}
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
	f.StringVar(&writeDir, "write", "", "write survivors as near-miss fixtures under DIR (DIR/<tool>/<version>/near-miss/)")
	f.BoolVar(&writeAll, "all", false, "with --write, write every mutant, not only survivors")
	f.IntVar(&maxShown, "max-shown", 20, "survivors listed in full")
	return cmd
}

// writeMutationReport prints an ERROR line per broken contract, scores,
// then survivors with hints and diffs, then the totals.
func writeMutationReport(w io.Writer, rep *mutate.Report, maxShown int) {
	for _, b := range rep.Broken {
		fmt.Fprintf(w, "ERROR %s: contract configuration error: %s\n", reports.Ident(b.Tool), reports.Line(b.Err.Error()))
	}
	total, killed := 0, 0
	for _, s := range rep.Scores {
		total += s.Generated
		killed += s.Killed
		fams := make([]string, 0, len(s.ByFamily))
		for _, fam := range mutate.Families {
			if c, ok := s.ByFamily[fam]; ok {
				fams = append(fams, fmt.Sprintf("%s %d/%d", fam, c[1], c[0]))
			}
		}
		fmt.Fprintf(w, "%-16s %-12s score %6.2f%% (%d/%d)  %s\n",
			reports.Line(s.Tool), reports.Line(s.UpstreamVersion), 100*s.Ratio(), s.Killed, s.Generated, strings.Join(fams, ", "))
	}
	for _, s := range rep.Skipped {
		fmt.Fprintln(w, "skipped:", reports.Line(s))
	}
	surv := rep.Survivors()
	hints := map[string]int{}
	for i, x := range surv {
		hints[x.Mutant.Hint]++
		if i >= maxShown {
			continue
		}
		fmt.Fprintf(w, "\n%s %s\n  mutation: %s (%s)\n  actual:   %s\n  hint:     %s\n",
			strings.ToUpper(string(x.Outcome)), reports.Line(x.Fixture.Body), reports.Line(x.Mutant.ID), x.Mutant.Family, reports.Line(x.Actual), reports.Line(x.Mutant.Hint))
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
	if len(hints) > 0 {
		keys := make([]string, 0, len(hints))
		for k := range hints {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			return hints[keys[i]] > hints[keys[j]] || hints[keys[i]] == hints[keys[j]] && keys[i] < keys[j]
		})
		fmt.Fprintln(w, "\nwhat would close them:")
		for _, k := range keys {
			fmt.Fprintf(w, "  %4d  %s\n", hints[k], reports.Line(k))
		}
	}
	if total > 0 {
		fmt.Fprintf(w, "\n%d mutants: %d killed, %d not killed, score %.2f%%", total, killed, total-killed, 100*float64(killed)/float64(total))
	} else {
		fmt.Fprint(w, "\n0 mutants: no score (nothing was mutated)") // not 100%: nothing was shown to be killed
	}
	if n := len(rep.Broken); n == 1 {
		fmt.Fprint(w, "; 1 contract error")
	} else if n > 1 {
		fmt.Fprintf(w, "; %d contract errors", n)
	}
	fmt.Fprintln(w)
}
