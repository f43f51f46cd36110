package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/reports"
	"github.com/airlockdev/airlock/schemadiff"
	"github.com/airlockdev/airlock/semantic"
)

func newDiffCmd(e *env) *cobra.Command {
	var tool, schemasDir, format, base, failOn, fixturesDir, summaryFile, sarifFile string
	cmd := &cobra.Command{
		Use:   "diff OLD NEW | diff --tool NAME OLD_VERSION NEW_VERSION | diff --base REF",
		Short: "Classify every change between two schemas or contracts as breaking, contract-change or compatible",
		Long: `diff compares two JSON Schemas from the consumer's side: the agent or adapter reads what
the upstream sends, so whatever lets it send something the old schema refused is breaking.
Between two contracts it compares the manifests too, from the gate's side: whatever makes
the gate admit what it refused (a semantic rule removed or loosened, a limit raised, content
types widened, the format or text policy loosened) is breaking.

  airlock diff OLD.json NEW.json             two schema files; each may $ref the *.json
                                             files of its own folder, nothing else
  airlock diff OLD_DIR NEW_DIR               two contract folders: the agent-facing and
                                             agent error schemas, each upstream version
                                             present in both with its error contracts in
                                             both, then the manifests
  airlock diff --base REF [--tool NAME]      every contract of --schemas in the working tree
                                             against the same folders at git revision REF
                                             (read with git, never checked out; only the
                                             folders compared); contracts added or removed
                                             are reported too, and an old contract that
                                             does not load as the new one added
  airlock diff --tool NAME OLD_VER NEW_VER   two upstream versions of SCHEMAS/NAME's contract

Each change has a stable rule id (docs/diff.md), a level, the JSON Pointer of the change in
each schema (or manifest, with the manifest's file and line) and a sentence. Between two
contracts each change also has its gate impact: the projected fields and semantic rules its
instance location touches and, for a narrowing, how many accepted, historical and recorded
fixtures of --fixtures (default fixtures; an absent folder gives no fixture evidence, as the
output says) the old contract admits and the new one refuses, a fixture refused first by
another stage being judged against the later schema narrowings on their own (or counted as
not judged, naming what refused it). Text and Markdown write a contract without changes as
one line; JSON lists every comparison.
--format text (default), json (schemas/diff.schema.json), markdown, or github (text plus a
GitHub Actions annotation per breaking change and per other change with gate impact).
--summary FILE writes a Markdown job summary of the breaking and gate-impact changes.
--sarif FILE also writes every change as SARIF 2.1.0 (breaking: error, contract-change: warning, compatible:
note), placed at its file and line in the new schema or manifest.

--fail-on breaking (default): exit 1 on a breaking change. --fail-on gate-impact: exit 1
on a change that touches a projected field or a rule's pointer, a narrowing that refuses
fixtures, a breaking manifest change, or a manifest change that alters what reaches the
agent (current changed, an upstream version added, a projection field added, removed or
re-pointed). Each change counted shows why on its gate impact line (Markdown: column; JSON:
impact).

Exit codes: 0 nothing to fail on, 1 findings (per --fail-on), 2 usage or configuration
error (not a git work tree, an unknown revision), 3 internal error.`,
		Args: cobra.RangeArgs(0, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			write, ok := map[string]func(io.Writer, *reports.Diff) error{
				"text": reports.WriteDiffText, "json": reports.WriteDiffJSON, "markdown": reports.WriteDiffMarkdown,
				formatGitHub: func(w io.Writer, d *reports.Diff) error {
					if err := reports.WriteDiffText(w, d); err != nil {
						return err
					}
					return writeAnnotations(w, reports.DiffAnnotations(d))
				},
			}[format]
			if !ok {
				return usageErr("--format %q: want text, json, markdown or github", format)
			}
			if err := e.checkReportPaths(map[string]string{"--summary": summaryFile, "--sarif": sarifFile}); err != nil {
				return err
			}
			if failOn != "breaking" && failOn != "gate-impact" {
				return usageErr("--fail-on %q: want breaking or gate-impact", failOn)
			}
			if tool != "" && !semantic.ValidName(tool) {
				return usageErr("--tool %q is not a tool name (^[a-z][a-z0-9_]{0,63}$)", tool)
			}
			copts := schemadiff.ContractOptions{Gate: e.gate, Fixtures: fixturesDir}
			var d *reports.Diff
			var err error
			switch {
			case base != "":
				if len(args) != 0 {
					return usageErr("--base compares the working tree's contracts with a git revision: give no OLD and NEW (got %d argument(s))", len(args))
				}
				var tools []string
				if tool != "" {
					tools = []string{tool}
				}
				d, err = schemadiff.Base(cmd.Context(), schemasDir, base, tools, copts)
			case len(args) != 2:
				return usageErr("diff takes OLD and NEW (two schema files, two contract folders or, with --tool, two upstream versions), or --base REF")
			case failOn == "gate-impact" && (tool != "" || !diffArgIsDir(args[0])):
				return usageErr("--fail-on gate-impact needs two contracts (two contract folders or --base): schema files and upstream versions have no gate-impact view")
			case tool != "":
				if _, serr := os.Stat(filepath.Join(schemasDir, tool, gate.ManifestFile)); serr != nil {
					return usageErr("no contract for tool %q: %s does not exist", tool, filepath.Join(schemasDir, tool, gate.ManifestFile))
				}
				d, err = schemadiff.UpstreamVersions(schemasDir, tool, args[0], args[1], e.gate)
			default:
				oldDir, newDir := diffArgIsDir(args[0]), diffArgIsDir(args[1])
				switch {
				case oldDir && newDir:
					d, err = schemadiff.Contracts(cmd.Context(), args[0], args[1], copts)
				case oldDir != newDir:
					return usageErr("compare two schema files or two contract folders, not one of each (%s, %s)", args[0], args[1])
				default:
					for _, a := range args {
						if _, serr := os.Stat(a); serr != nil {
							return usageErr("%v", serr)
						}
					}
					d, err = schemadiff.Files(args[0], args[1])
				}
			}
			if err != nil {
				return err
			}
			if err := write(cmd.OutOrStdout(), d); err != nil {
				return internalErr(err)
			}
			if err := writeSummary(cmd.Context(), summaryFile, func(w io.Writer) error { return reports.WriteDiffSummary(w, d) }); err != nil {
				return err
			}
			if sarifFile != "" {
				if err := writeReport(cmd.Context(), sarifFile, func(w io.Writer) error {
					return reports.WriteDiffSARIF(w, d, schemadiff.ReportRules(), gate.Version)
				}); err != nil {
					return internalErr(err)
				}
			}
			if n := d.Count(reports.Breaking); n > 0 && failOn == "breaking" {
				return &exitError{code: ExitFindings, err: fmt.Errorf("%d breaking change(s)", n)}
			}
			if n := d.GateImpact(); n > 0 && failOn == "gate-impact" {
				return &exitError{code: ExitFindings, err: fmt.Errorf("%d change(s) with gate impact", n)}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&tool, "tool", "", "compare two upstream versions of this tool's contract; with --base, compare only this tool's contract")
	f.StringVar(&schemasDir, "schemas", "schemas", "directory holding one folder per tool contract (with --tool or --base)")
	f.StringVar(&base, "base", "", "compare the contracts of --schemas with the same folders at this git revision (a branch, tag or commit)")
	f.StringVar(&failOn, "fail-on", "breaking", "exit 1 on: breaking (a breaking change) or gate-impact (a change with gate impact)")
	f.StringVar(&fixturesDir, "fixtures", "fixtures", "fixture tree whose accepted, historical and recorded fixtures give narrowings their evidence (contract diffs)")
	f.StringVar(&format, "format", "text", "output format: text, json, markdown or github (text plus annotations)")
	f.StringVar(&summaryFile, "summary", "", summaryUsage)
	f.StringVar(&sarifFile, "sarif", "", "also write every change as SARIF 2.1.0 to FILE, at its line in the new schema (code scanning)")
	return cmd
}

func diffArgIsDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
