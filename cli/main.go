// Package cli is the airlock command line: one cobra command per
// subcommand, each parsing flags, calling a library package (gate, runner,
// mutate, record, fixture, schemadiff, drift), printing, and returning an
// error that exit.go maps to the exit code in one table.
//
// Exit codes, for every subcommand: 0 all good, 1 findings (a refused
// response, failed fixtures), 2 usage or configuration error, 3 internal
// or upstream error (also: an error nobody classified, and a failed write to
// standard output), 130 interrupted (the context was cancelled).
package cli

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/semantic"
)

// Stdio is the command's standard streams. A nil In reads nothing; a nil Out
// or Err discards.
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
}

// Options configure Main beyond its arguments: what a connector that builds
// its own airlock binary adds.
type Options struct {
	// Rules are custom semantic rules a contract may name with
	// "custom: <name>" (gate.Options.CustomRules); every subcommand that
	// loads contracts passes them on.
	Rules map[string]semantic.Rule
}

// Main runs airlock with args (without the program name) and returns the
// exit code. It never calls os.Exit and keeps no state between calls, so
// tests run it in-process and a program can call it more than once.
// Cancelling ctx (cmd/airlock cancels it on SIGINT and SIGTERM) stops the
// work between files; every writer removes its temporary files, and Main
// returns 130.
func Main(ctx context.Context, args []string, stdio Stdio, opts Options) int {
	if stdio.In == nil {
		stdio.In = eofReader{}
	}
	out := &trackedWriter{w: orDiscard(stdio.Out)}
	errw := orDiscard(stdio.Err)
	env := &env{gate: gate.Options{CustomRules: opts.Rules}}
	root := &cobra.Command{
		Use:           "airlock",
		Short:         "Keep bad tool output out of an AI agent's context",
		Long:          "airlock admits an upstream's raw response only as a small, closed object built from contracted fields,\nor refuses it with a fixed failure envelope, and proves its contracts against fixture trees.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       binaryVersion(),
	}
	root.PersistentFlags().BoolVar(&env.followSymlinks, "follow-symlinks", false, "let a report path, --audit, --request, --requests, --stdin or --data-file be a symbolic link (never a file inside a fixture or contract tree)")
	root.SetArgs(args)
	root.SetIn(stdio.In)
	root.SetOut(out)
	root.SetErr(errw)
	root.AddCommand(newCheckCmd(env), newRunCmd(env), newMutateCmd(env), withToolsSchema(newSchemaCmd()), newReasonsCmd())
	root.AddCommand(newRecordCmd(env), newPromoteCmd(env), newToolsCmd(env))
	root.AddCommand(newDiffCmd(env), newDriftCmd(env), newLintCmd(env), newVersionCmd(), newMergeCmd(env))
	root.AddCommand(newImportCmd(env), newInferCmd(env), newProxyCmd(env))
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usage(err) })
	markRuns(root, env)

	err := root.ExecuteContext(ctx)
	return finish(ctx, env, out, errw, err)
}

// env is what one Main call shares with its commands.
type env struct {
	gate gate.Options
	// started is set when a command's RunE begins: an error before that
	// came from cobra's own parsing, a usage error.
	started bool
	// followSymlinks lets files named on the command line be links.
	followSymlinks bool
}

// namedFile refuses a file named by flag that is reached through a symbolic
// link inside the working directory (the file itself or any folder on the
// way to it), unless --follow-symlinks: the working directory is usually a
// checkout, and a link planted in it where a report, an audit log or a
// request file is expected would read or write a file elsewhere. A path
// outside the working directory (/dev/stdout, /tmp/report.xml) is the
// user's own and taken as written; a missing file or folder is fine here.
func (e *env) namedFile(flag, path string) error {
	if path == "" || e.followSymlinks {
		return nil
	}
	abs, err1 := filepath.Abs(path)
	wd, err2 := os.Getwd()
	if err1 != nil || err2 != nil {
		return nil
	}
	rel, err := filepath.Rel(wd, abs)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil
	}
	cur := wd
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, c)
		st, err := os.Lstat(cur)
		if err != nil {
			return nil
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			shown, _ := filepath.Rel(wd, cur)
			return usageErr("%s %q: %q is a symbolic link; airlock does not read or write through one unless --follow-symlinks is given", flag, path, shown)
		}
	}
	return nil
}

// markRuns wraps every command's RunE so env.started tells cobra's parse
// errors from the command's own.
func markRuns(c *cobra.Command, e *env) {
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			e.started = true
			return run(cmd, args)
		}
	}
	for _, sub := range c.Commands() {
		markRuns(sub, e)
	}
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// trackedWriter remembers the first write error, so output that could not
// be written (a full disk, a closed pipe) fails the command with exit 3.
type trackedWriter struct {
	w   io.Writer
	err error
}

func (t *trackedWriter) Write(p []byte) (int, error) {
	if t.err != nil {
		return 0, t.err
	}
	n, err := t.w.Write(p)
	if err != nil {
		t.err = err
	}
	return n, err
}
