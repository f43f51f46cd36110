package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/airlockdev/airlock/drift"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/shard"
	"github.com/airlockdev/airlock/reports"
	"github.com/airlockdev/airlock/schemadiff"
)

func newDriftCmd(e *env) *cobra.Command {
	var (
		opts                   drift.Options
		jsonFile, markdownFile string
		summaryFile, format    string
		sarifFile              string
		failOnVersionChanges   bool
		shardFlag              string
	)
	cmd := &cobra.Command{
		Use:   "drift [flags]",
		Short: "Report what recorded and historical fixtures show against each contract",
		Long: `drift reads FIXTURES/<tool>/<upstream-version>/{recorded,historical}/, runs each fixture
through the gate, and reports per tool and upstream version: the observed shape (JSON Pointers,
"*" for array elements, types, enum-like values, string lengths), members the schema forbids,
required members missing, retyped members, new enum values, refusals by reason, and the
schema changes between consecutive upstream versions (rules of airlock diff).

The report is Markdown on standard output, or --markdown FILE and --json FILE
(schemas/drift.schema.json); see docs/drift.md. --sarif FILE writes its findings as SARIF
2.1.0 for code scanning (the Markdown still goes to standard output). --summary FILE writes a Markdown job summary
(the headline, broken contracts, breaking findings and unexpected refusals); --format github
adds a GitHub Actions annotation per breaking finding, unexpected refusal, broken contract
and breaking change between upstream versions.

--shard K/N observes only shard K of N of the fixtures (as airlock run --shard); the report
records the shard, and the broken contracts and the changes between upstream versions are in
shard 1's report alone. Drift reports are aggregates: airlock merge does not join them (a
shard's findings are merged through SARIF). An empty shard's report is empty and exits 0.

A contract that does not load is listed in the report (broken contracts) and on standard
error, its fixtures are not read, the other tools are reported completely, and drift exits 2
after writing every report. With --tool, only the named contracts are loaded.

Exit codes: 0 nothing breaks the contract; 1 a forbidden, missing, retyped member or new
enum value in a fixture not expected to be refused, an unexpected refusal, or (with
--fail-on-version-changes) a breaking change between consecutive upstream versions;
2 usage or configuration error (also: a broken contract, which wins over 1); 3 internal error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if jsonFile == "-" || markdownFile == "-" {
				return usageErr("--json and --markdown take a file name; the Markdown report goes to standard output by default")
			}
			opts.IgnoreVersionChanges = !failOnVersionChanges
			if err := checkFormat(format, "markdown", formatGitHub); err != nil {
				return err
			}
			if err := e.checkReportPaths(map[string]string{"--json": jsonFile, "--markdown": markdownFile, "--summary": summaryFile, "--sarif": sarifFile}); err != nil {
				return err
			}
			sh, err := shard.Parse(shardFlag)
			if err != nil {
				return usageErr("--shard: %v", err)
			}
			opts.Shard = sh
			opts.Gate = e.gate
			d, err := drift.Run(cmd.Context(), opts)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if jsonFile != "" {
				if err := writeReport(cmd.Context(), jsonFile, func(w io.Writer) error { return reports.WriteDriftJSON(w, d) }); err != nil {
					return internalErr(err)
				}
			}
			if markdownFile != "" {
				if err := writeReport(cmd.Context(), markdownFile, func(w io.Writer) error { return reports.WriteDriftMarkdown(w, d) }); err != nil {
					return internalErr(err)
				}
			}
			if sarifFile != "" {
				so := reports.DriftSARIFOptions{Version: gate.Version, FixturesDir: opts.FixturesDir, DiffRules: schemadiff.ReportRules()}
				if err := writeReport(cmd.Context(), sarifFile, func(w io.Writer) error { return reports.WriteDriftSARIF(w, d, so) }); err != nil {
					return internalErr(err)
				}
			}
			if jsonFile == "" && markdownFile == "" {
				if err := reports.WriteDriftMarkdown(out, d); err != nil {
					return internalErr(err)
				}
			} else {
				fmt.Fprintln(out, reports.DriftHeadline(d))
			}
			if format == formatGitHub {
				if err := writeAnnotations(out, reports.DriftAnnotations(d, opts.FixturesDir)); err != nil {
					return err
				}
			}
			if err := writeSummary(cmd.Context(), summaryFile, func(w io.Writer) error { return reports.WriteDriftSummary(w, d) }); err != nil {
				return err
			}
			if len(d.Broken) > 0 {
				msgs := make([]string, len(d.Broken))
				for i, b := range d.Broken {
					msgs[i] = b.Message
				}
				return brokenMessages(msgs) // exit 2 wins over drift
			}
			if d.Summary.Breaking {
				return &exitError{code: ExitFindings, err: fmt.Errorf("%s", reports.DriftHeadline(d))}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.SchemasDir, "schemas", "schemas", "directory holding one folder per tool contract")
	f.StringVar(&opts.FixturesDir, "fixtures", "fixtures", "directory holding the fixture trees")
	f.StringSliceVar(&opts.Tools, "tool", nil, "only these tools (repeatable or comma-separated)")
	f.StringSliceVar(&opts.UpstreamVersions, "upstream-version", nil, "only these upstream versions")
	f.StringVar(&jsonFile, "json", "", "write the report as JSON to FILE (schemas/drift.schema.json)")
	f.StringVar(&markdownFile, "markdown", "", "write the report as Markdown to FILE")
	f.StringVar(&summaryFile, "summary", "", summaryUsage)
	f.StringVar(&format, "format", "markdown", "output format: markdown (the report, or its headline when --json or --markdown is given), or github (that plus annotations)")
	f.StringVar(&sarifFile, "sarif", "", "write the findings, unexpected refusals and version changes as SARIF 2.1.0 to FILE (code scanning)")
	f.BoolVar(&failOnVersionChanges, "fail-on-version-changes", false, "also exit 1 on a breaking change between consecutive upstream versions (they are always reported)")
	f.StringVar(&shardFlag, "shard", "", "observe only shard K of N (K/N, 1-based) of the recorded and historical fixtures, for N runners; broken contracts and version changes are in shard 1's report")
	f.IntVar(&opts.Workers, "workers", 0, "fixtures checked at once (default: one per CPU)")
	return cmd
}
