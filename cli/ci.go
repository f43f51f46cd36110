package cli

import (
	"context"
	"io"
	"os"

	"github.com/airlockdev/airlock/reports"
)

// Output formats shared by run, mutate and drift: their normal output
// ("text", drift's "markdown"), or that plus GitHub workflow-command
// annotations ("github").
const formatGitHub = "github"

// checkFormat refuses a --format value that is not one of want (exit 2).
func checkFormat(format string, want ...string) error {
	for _, w := range want {
		if format == w {
			return nil
		}
	}
	list := ""
	for i, w := range want {
		switch {
		case i == 0:
		case i == len(want)-1:
			list += " or "
		default:
			list += ", "
		}
		list += w
	}
	return usageErr("--format %q: want %s", format, list)
}

// writeAnnotations writes anns as GitHub workflow commands on w, paths
// relative to $GITHUB_WORKSPACE when it is set (reports.WriteAnnotations).
func writeAnnotations(w io.Writer, anns []reports.Annotation) error {
	dir, _ := os.Getwd()
	if err := reports.WriteAnnotations(w, anns, reports.GitHubOptions{Workspace: os.Getenv("GITHUB_WORKSPACE"), Dir: dir}); err != nil {
		return internalErr(err)
	}
	return nil
}

// writeSummary writes a job summary to path (--summary) through
// writeReport; "" writes nothing.
func writeSummary(ctx context.Context, path string, write func(io.Writer) error) error {
	if path == "" {
		return nil
	}
	if err := writeReport(ctx, path, write); err != nil {
		return internalErr(err)
	}
	return nil
}

// summaryUsage is the --summary flag's help, the same on every command.
const summaryUsage = "write a GitHub-flavoured Markdown job summary to FILE (e.g. $GITHUB_STEP_SUMMARY), at most 512 KiB"

// checkColor refuses a --color mode other than auto, always and never (a
// usage error naming them).
func checkColor(mode string) error {
	switch mode {
	case "auto", "always", "never":
		return nil
	}
	return usageErr("--color %q: want auto, always or never", mode)
}

// colorOn reports whether run colours its console: --color always, or auto
// on a terminal when NO_COLOR is unset or empty (no-color.org: a flag the
// user gives wins over the variable); never otherwise.
func colorOn(mode string, terminal bool, noColor string) bool {
	return mode == "always" || mode == "auto" && terminal && noColor == ""
}
