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
	var tool, schemasDir, format string
	cmd := &cobra.Command{
		Use:   "diff OLD NEW | diff --tool NAME OLD_VERSION NEW_VERSION",
		Short: "Classify every change between two schemas as breaking, contract-change or compatible",
		Long: `diff compares two JSON Schemas from the consumer's side: the agent or adapter reads what
the upstream sends, so whatever lets it send something the old schema refused is breaking.

  airlock diff OLD.json NEW.json             two schema files; each may $ref the *.json
                                             files of its own folder, nothing else
  airlock diff OLD_DIR NEW_DIR               two contract folders: the agent-facing schemas,
                                             then each upstream version present in both
  airlock diff --tool NAME OLD_VER NEW_VER   two upstream versions of SCHEMAS/NAME's contract

Each change has a stable rule id (docs/diff.md), a level, the JSON Pointer of the change in
each schema and a sentence. --format text (default), json (schemas/diff.schema.json) or markdown.

Exit codes: 0 no breaking change, 1 a breaking change, 2 usage or configuration error,
3 internal error.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			write, ok := map[string]func(io.Writer, *reports.Diff) error{
				"text": reports.WriteDiffText, "json": reports.WriteDiffJSON, "markdown": reports.WriteDiffMarkdown,
			}[format]
			if !ok {
				return usageErr("--format %q: want text, json or markdown", format)
			}
			var d *reports.Diff
			var err error
			if tool != "" {
				if !semantic.ValidName(tool) {
					return usageErr("--tool %q is not a tool name (^[a-z][a-z0-9_]{0,63}$)", tool)
				}
				if _, serr := os.Stat(filepath.Join(schemasDir, tool, gate.ManifestFile)); serr != nil {
					return usageErr("no contract for tool %q: %s does not exist", tool, filepath.Join(schemasDir, tool, gate.ManifestFile))
				}
				d, err = schemadiff.UpstreamVersions(schemasDir, tool, args[0], args[1], e.gate)
			} else {
				oldDir, newDir := diffArgIsDir(args[0]), diffArgIsDir(args[1])
				switch {
				case oldDir && newDir:
					d, err = schemadiff.Contracts(args[0], args[1], e.gate)
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
			if n := d.Count(reports.Breaking); n > 0 {
				return &exitError{code: ExitFindings, err: fmt.Errorf("%d breaking change(s)", n)}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&tool, "tool", "", "compare two upstream versions of this tool's contract")
	f.StringVar(&schemasDir, "schemas", "schemas", "directory holding one folder per tool contract (with --tool)")
	f.StringVar(&format, "format", "text", "output format: text, json or markdown")
	return cmd
}

func diffArgIsDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
