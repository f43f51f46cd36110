package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/airlockdev/airlock/internal/fileio"
	"github.com/airlockdev/airlock/reports"
)

// mergeOptions holds the flags of airlock merge.
type mergeOptions struct {
	junitFile, jsonFile, sarifFile, summaryFile string
}

func newMergeCmd(e *env) *cobra.Command {
	o := &mergeOptions{}
	cmd := &cobra.Command{
		Use:   "merge [flags] INPUT...",
		Short: "Join the reports of N shards (--shard K/N) into the unsharded run's reports",
		Long: `merge reads the reports the N shards of one run wrote (run --shard K/N on N runners) and
writes the report the unsharded run would have written, times aside: --junit from their JUnit
XML files, --json from their JSON results, --sarif from their SARIF logs (run, lint, diff
or drift --sarif; reports.MergeSARIF: one run, results in the unsharded order) and
--summary (a Markdown job summary, as run --summary or mutate --summary writes it) from their
JSON results. Each INPUT's kind is told by its content, not its name, and each report says
which command wrote it, which shard it is and the digest of the fixture set the shards
partition; every kind given must be shards 1..N of one N of one command, each exactly once,
all of one fixture set (shards run on different checkouts or with different filters may
split the fixtures differently, and are refused). The kinds given together must agree too:
JUnit, JSON and SARIF inputs of one call must record one command, one N and one fixture set
(run's set digest also records --suite and --mutate, so shards run with different checks are
refused). Testcases are in the unsharded run's order, counts add up, and the run's
time is the largest of the shards' wall times (they ran side by side). Without an output
flag, merge checks the set and prints the merged counts.

A drift JSON report is refused: drift reports are aggregates, and sharded drift findings are
merged through SARIF. Inputs are capped at 64 MiB each and 512 MiB in all; JUnit inputs at 64 MiB in all
(reports.MaxMergeJUnitTotal: a JUnit merge takes about 12 times its inputs in memory).

The outputs are written all or none: each goes to a temporary file beside it, and all are
renamed into place only once all are written; a failed write leaves no new output.

The merged JSON results' line counts every testcase: passed, failed, unchecked and errored
(a broken contract, reported by shard 1).

Exit codes: 0 merged, also when the merged reports hold failed or errored testcases (merge
judges the set of reports, not the results in them: the shards' own exit codes, or the
merged reports, fail the pipeline), 2 usage error (no input, an unreadable, hostile or
unknown input, a missing, duplicated or unsharded shard, shards of different N, of
different fixture sets or of different commands, inputs of two kinds that disagree on
the command, N or fixture set, an output for a kind no input holds, an
output that is one of the inputs), 3 internal error (a write failed; nothing written).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMerge(cmd, e, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.junitFile, "junit", "", "write the merged JUnit XML report to FILE")
	f.StringVar(&o.jsonFile, "json", "", "write the merged JSON results to FILE (schemas/results.schema.json)")
	f.StringVar(&o.sarifFile, "sarif", "", "write the merged SARIF 2.1.0 log to FILE")
	f.StringVar(&o.summaryFile, "summary", "", "write a Markdown job summary of the merged JSON results to FILE")
	return cmd
}

// runMerge is the body of airlock merge.
func runMerge(cmd *cobra.Command, e *env, o *mergeOptions, args []string) error {
	if err := e.checkReportPaths(map[string]string{"--junit": o.junitFile, "--json": o.jsonFile, "--sarif": o.sarifFile, "--summary": o.summaryFile}); err != nil {
		return err
	}
	if err := outputsNotInputs(map[string]string{"--junit": o.junitFile, "--json": o.jsonFile, "--sarif": o.sarifFile, "--summary": o.summaryFile}, args); err != nil {
		return err
	}
	byKind := map[string][]string{}
	data := map[string][]byte{}
	var total, junitTotal int64
	for _, name := range args {
		if err := e.namedFile("INPUT", name); err != nil {
			return err
		}
		if _, dup := data[name]; dup {
			return usageErr("%s is given twice", reports.Ident(name))
		}
		b, err := fileio.ReadRegularFile(name, reports.MaxMergeInput)
		if errors.Is(err, fileio.ErrTooLarge) {
			return usageErr("%s: larger than %d bytes, more than any airlock report merge reads", reports.Ident(name), reports.MaxMergeInput)
		}
		if err != nil {
			return usageErr("%s: %v", reports.Ident(name), err)
		}
		if total += int64(len(b)); total > reports.MaxMergeTotal {
			return usageErr("the inputs add up to more than %d bytes", reports.MaxMergeTotal)
		}
		kind, err := reports.DetectKind(b)
		if err != nil {
			return usageErr("%s: %v", reports.Ident(name), err)
		}
		if kind == reports.KindJUnit {
			if junitTotal += int64(len(b)); junitTotal > reports.MaxMergeJUnitTotal {
				return usageErr("the JUnit inputs add up to more than %d bytes (%d MiB), more than merge reads of JUnit reports", reports.MaxMergeJUnitTotal, reports.MaxMergeJUnitTotal>>20)
			}
		}
		switch {
		case kind == reports.KindDrift:
			return usageErr("%s: a drift report; drift reports are aggregates and are not merged (run drift --shard K/N --sarif FILE and merge the SARIF logs)", reports.Ident(name))
		}
		byKind[kind] = append(byKind[kind], name)
		data[name] = b
	}
	outputs := map[string]string{"--junit": o.junitFile, "--json": o.jsonFile, "--sarif": o.sarifFile, "--summary": o.summaryFile}
	for flag, kind := range map[string]string{"--junit": reports.KindJUnit, "--json": reports.KindResults, "--sarif": reports.KindSARIF, "--summary": reports.KindResults} {
		if path := outputs[flag]; path != "" && len(byKind[kind]) == 0 {
			return usageErr("%s: no input is a %s report", flag, kind)
		}
	}
	// Every kind is merged in memory first: a refused input writes no
	// output at all.
	type output struct {
		flag, path string
		write      func(io.Writer) error
	}
	var outs []output
	var lines []string
	var kinds []reports.MergeInput // one input of each kind, for CheckKinds
	if names := byKind[reports.KindJUnit]; len(names) > 0 {
		reps := make([]*reports.JUnitReport, len(names))
		for i, n := range names {
			r, err := reports.ReadJUnit(data[n])
			if err != nil {
				return usageErr("%s: %v", reports.Ident(n), err)
			}
			reps[i] = r
			delete(data, n) // decoded: its bytes are no longer needed
		}
		var buf bytes.Buffer
		if err := reports.MergeJUnit(&buf, names, reps); err != nil {
			return mergeErr(err)
		}
		kinds = append(kinds, reports.MergeInput{Name: names[0], Shard: reps[0].Shard, Command: reps[0].Command})
		outs = append(outs, output{"--junit", o.junitFile, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err }})
		lines = append(lines, fmt.Sprintf("merged %d JUnit reports", len(names)))
	}
	if names := byKind[reports.KindResults]; len(names) > 0 {
		runs := make([]*reports.Run, len(names))
		for i, n := range names {
			r, err := reports.ReadResults(data[n])
			if err != nil {
				return usageErr("%s: %v", reports.Ident(n), err)
			}
			runs[i] = r
		}
		merged, err := reports.MergeRuns(names, runs)
		if err != nil {
			return mergeErr(err)
		}
		kinds = append(kinds, reports.MergeInput{Name: names[0], Shard: runs[0].Shard, Command: runs[0].Command})
		summary := reports.WriteRunSummary
		if merged.Command == reports.CommandMutate {
			summary = reports.WriteMutateSummary
		}
		outs = append(outs, output{"--json", o.jsonFile, func(w io.Writer) error { return reports.WriteJSON(w, merged) }},
			output{"--summary", o.summaryFile, func(w io.Writer) error { return summary(w, merged) }})
		p, f, u := merged.Counts()
		lines = append(lines, fmt.Sprintf("merged %d JSON results: %d testcases: %d passed, %d failed, %d unchecked, %d errored", len(names), len(merged.Cases), p, f, u, merged.Errored()))
	}
	if names := byKind[reports.KindSARIF]; len(names) > 0 {
		logs := make([][]byte, len(names))
		for i, n := range names {
			logs[i] = data[n]
		}
		merged, set, err := reports.MergeSARIFSet(names, logs)
		if err != nil {
			return usage(err)
		}
		kinds = append(kinds, set[0])
		outs = append(outs, output{"--sarif", o.sarifFile, func(w io.Writer) error { _, err := w.Write(merged); return err }})
		lines = append(lines, fmt.Sprintf("merged %d SARIF logs", len(names)))
	}
	// The kinds together must be the shards of one run: one command, one
	// N, one fixture set (and the checks salted into it).
	if err := reports.CheckKinds(kinds); err != nil {
		return usage(err)
	}
	// All outputs or none: a failed write leaves no new file.
	var files []reportFile
	for _, x := range outs {
		if x.path != "" {
			files = append(files, reportFile{x.path, x.write})
		}
	}
	if err := writeReports(cmd.Context(), files); err != nil {
		return internalErr(fmt.Errorf("nothing written: %w", err))
	}
	out := cmd.OutOrStdout()
	for _, l := range lines {
		fmt.Fprintln(out, l)
	}
	return nil
}

// mergeErr maps a set that is not one run's shards to a usage error.
func mergeErr(err error) error {
	if se := (*reports.SetError)(nil); errors.As(err, &se) {
		return usage(err)
	}
	return internalErr(err)
}

// outputsNotInputs refuses (a usage error) an output path that names one of
// the inputs: the same cleaned absolute path, or, when both exist, the same
// file (os.SameFile: a symbolic or hard link to it). Writing the merged
// report there would replace a shard's report before the set is whole.
func outputsNotInputs(outputs map[string]string, inputs []string) error {
	type file struct {
		abs string
		st  os.FileInfo
	}
	in := make([]file, len(inputs))
	for i, name := range inputs {
		in[i].abs, _ = filepath.Abs(name)
		in[i].st, _ = os.Stat(name)
	}
	for _, flag := range slices.Sorted(maps.Keys(outputs)) {
		path := outputs[flag]
		if path == "" {
			continue
		}
		abs, _ := filepath.Abs(path)
		st, _ := os.Stat(path)
		for i, f := range in {
			if (abs != "" && abs == f.abs) || (st != nil && f.st != nil && os.SameFile(st, f.st)) {
				return usageErr("%s %s is the input %s; write the merged report to another file", flag, reports.Ident(path), reports.Ident(inputs[i]))
			}
		}
	}
	return nil
}
