package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/airlockdev/airlock/importer"
	"github.com/airlockdev/airlock/internal/fileio"
	"github.com/airlockdev/airlock/reports"
)

// newImportCmd is airlock import: contracts from OpenAPI descriptions and
// MCP servers.
func newImportCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Write a contract from an OpenAPI description or an MCP server's tools/list",
		Long: `import writes a contract folder (and fixtures from the examples it finds) from what
already describes an upstream:

  airlock import openapi SPEC --operation <operationId | "METHOD /path"> --tool NAME
  airlock import mcp --tool NAME --mcp-tool TOOL -- <server command …>

The contract is proven before anything is written: it must load, and every example is
judged by the gate. See docs/import.md.`,
	}
	cmd.AddCommand(newImportOpenAPICmd(e), newImportMCPCmd(e))
	return cmd
}

// importErr maps an importer's error to its exit code: a folder that
// cannot be written is internal (3); everything else an import refuses —
// a contract or file that exists, a configuration error, a description or
// server answer it cannot use — is usage (2). A cancelled run is left to
// finish (130).
func importErr(err error) error {
	switch {
	case errors.Is(err, context.Canceled):
		return err
	case errors.Is(err, fileio.ErrUnwritable):
		return internalErr(err)
	}
	return &exitError{code: ExitUsage, err: err}
}

// printWritten tells the owner what an import wrote and what is still
// theirs to decide; refused examples are warnings on errw.
func printWritten(out, errw io.Writer, w *importer.Written) {
	if w.Added {
		fmt.Fprintf(out, "added upstream version beside %s in %s\n", reports.Line(w.Previous), reports.Line(w.Contract))
	} else {
		fmt.Fprintf(out, "wrote contract %s\n", reports.Line(w.Contract))
	}
	for _, f := range w.Files {
		fmt.Fprintf(out, "  %s\n", reports.Line(f))
	}
	accepted, near := 0, 0
	for _, f := range w.Fixtures {
		if f.Kind == "accepted" {
			accepted++
			continue
		}
		near++
		at := f.InstanceLocation
		if at == "" {
			at = `"" (the whole value)`
		}
		what := "fails its own schema"
		if w.ExampleSource != "the vendor's example" {
			what = "is refused by the contract"
		}
		fmt.Fprintf(errw, "warning: %s %s %s at %s: %s (%s); written as a near-miss\n",
			reports.Line(w.ExampleSource), reports.Line(f.Path), what, reports.Line(at), reports.Line(f.Reason), reports.Line(f.Message))
	}
	if len(w.Fixtures) > 0 {
		fmt.Fprintf(out, "examples: %d accepted, %d near-miss\n", accepted, near)
	}
	for _, n := range w.Notes {
		fmt.Fprintf(out, "review: %s\n", reports.Line(n))
	}
}

// printNextSteps lints the contract of tool just written (with the fixtures
// of fixturesDir, as airlock lint does) and prints each finding that
// counts — one in the contract's own files, which its lint.ignore does not
// accept: an upstream integer the description gives no bounds
// (number-unbounded), a stage no near-miss refuses
// (near-miss-stage-uncovered) — as a "next:" line: lint --strict and run
// --strict fail on it until it is fixed or accepted (docs/import.md, "What
// run --strict still asks"). The import succeeded either way: a lint that
// fails is reported in one line, never as the import's error.
func printNextSteps(ctx context.Context, out io.Writer, e *env, schemasDir, fixturesDir, tool string) {
	l, broken, err := lintContracts(ctx, e, schemasDir, fixturesDir, false, []string{tool})
	if err != nil || len(broken) > 0 {
		fmt.Fprintf(out, "next: airlock lint --tool %s could not run here; run it to see what run --strict asks\n", tool)
		return
	}
	n := l.Active()
	if n == 0 {
		return
	}
	fmt.Fprintf(out, "next: lint --strict and run --strict fail on %d finding(s) in the contract's own files until you fix them or accept them in lint.ignore with a reason (docs/import.md):\n", n)
	for _, f := range l.Findings {
		if f.Ignored != "" {
			continue
		}
		where := reports.Line(f.File)
		if f.Line > 0 {
			where += fmt.Sprintf(":%d:%d", f.Line, f.Column)
		}
		fmt.Fprintf(out, "  %s: %s: %s [%s]\n", where, f.Level, reports.Line(f.Message), f.Rule)
	}
}
