package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/internal/testbody"
	"github.com/airlockdev/airlock/reports"
)

// update rewrites the golden files inside the scripts (the second argument
// of a failing cmp) with the actual output: go test ./cli -update.
var update = flag.Bool("update", false, "update the goldens in testdata/script/*.txtar")

// TestMain makes the test binary double as the airlock command: testscript
// copies it into a directory on $PATH as "airlock", so a script runs it as
// a separate process with "exec airlock ...".
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"airlock": func() {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			code := Main(ctx, os.Args[1:], Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, Options{})
			stop()
			os.Exit(code)
		},
	})
}

// TestScript runs the CLI scripts in testdata/script at the repository root.
//
// Each script starts in $WORK holding copies of the repository's schemas/
// and fixtures/ directories ($WORK/schemas, $WORK/bundled_fixtures; a script's
// own fixtures/ stays its own), so scripts pass
// --schemas $WORK/schemas and may add broken contracts beside the bundled
// ones without touching the repository. $LINT_TESTDATA is lint/testdata
// (the weak and sound contracts of the lint tests), read in place.
//
// Besides testscript's own commands, scripts have:
//
//	exitcode N airlock ARGS...   run airlock (like exec, empty stdin) and
//	                             require exit status N exactly; stdout and
//	                             stderr are kept for the stdout, stderr and
//	                             cmp commands that follow. testscript's
//	                             "! exec" only says "non-zero", which cannot
//	                             tell a refusal (1) from a usage or
//	                             configuration error (2).
//	filemode PERM FILE           FILE's permission bits are PERM (octal, e.g. 0600).
//	validjson FILE               FILE (or stdout, stderr) holds one JSON value.
//	gzip SRC DST                 write SRC gzip-compressed to DST (for
//	                             --content-encoding gzip; txtar holds text).
//	validsarif FILE              FILE is a SARIF 2.1.0 log valid against the
//	                             official schema and within GitHub's upload
//	                             limits (reports.CheckGitHubSARIF); scripts
//	                             guard it with [!sarif-schema] skip (the
//	                             condition fails under CI=true when the
//	                             schema is missing: make sarif-schema).
func TestScript(t *testing.T) {
	schemas, err := filepath.Abs(filepath.Join("..", "schemas"))
	if err != nil {
		t.Fatal(err)
	}
	fixtures, err := filepath.Abs(filepath.Join("..", "fixtures"))
	if err != nil {
		t.Fatal(err)
	}
	lintTestdata, err := filepath.Abs(filepath.Join("..", "lint", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("..", "testdata", "script"),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update,
		Setup: func(env *testscript.Env) error {
			env.Setenv("LINT_TESTDATA", lintTestdata)
			if err := os.CopyFS(filepath.Join(env.WorkDir, "schemas"), os.DirFS(schemas)); err != nil {
				return err
			}
			return os.CopyFS(filepath.Join(env.WorkDir, "bundled_fixtures"), os.DirFS(fixtures))
		},
		Condition: scriptCondition,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":   cmdExitCode,
			"filemode":   cmdFileMode,
			"validjson":  cmdValidJSON,
			"gzip":       cmdGzip,
			"cp-tree":    cmdCopyTree,
			"validsarif": cmdValidSARIF,
		},
	})
}

// cmdExitCode implements "exitcode N PROGRAM ARGS...".
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exitcode")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N program [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %q is not a number", args[0])
	}
	path, err := exec.LookPath(args[1])
	ts.Check(err)
	cmd := exec.Command(path, args[2:]...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = os.Environ()
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "WORK"} {
		cmd.Env = append(cmd.Env, k+"="+ts.Getenv(k))
	}
	cmd.Stdout, cmd.Stderr = ts.Stdout(), ts.Stderr()
	got := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

// cmdCopyTree implements "cp-tree SRC DST": a copy of folder SRC at DST.
func cmdCopyTree(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: cp-tree src dst")
	}
	ts.Check(os.CopyFS(ts.MkAbs(args[1]), os.DirFS(ts.MkAbs(args[0]))))
}

// cmdFileMode implements "filemode PERM FILE".
func cmdFileMode(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: filemode PERM file")
	}
	want, err := strconv.ParseUint(args[0], 8, 32)
	if err != nil {
		ts.Fatalf("filemode: %q is not an octal permission", args[0])
	}
	info, err := os.Stat(ts.MkAbs(args[1]))
	ts.Check(err)
	got := info.Mode().Perm()
	if (got == fs.FileMode(want)) == neg {
		ts.Fatalf("%s has mode %#o; want %s%#o", args[1], got, map[bool]string{true: "not ", false: ""}[neg], want)
	}
}

// cmdValidJSON implements "validjson FILE"; FILE may be stdout or stderr.
func cmdValidJSON(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: validjson file")
	}
	if ok := json.Valid([]byte(ts.ReadFile(args[0]))); ok == neg {
		ts.Fatalf("%s: json.Valid = %t", args[0], ok)
	}
}

// cmdGzip implements "gzip SRC DST".
func cmdGzip(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: gzip src dst")
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write([]byte(ts.ReadFile(args[0])))
	ts.Check(err)
	ts.Check(zw.Close())
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), buf.Bytes(), 0o666))
}

// scriptCondition answers the scripts' own conditions: [sarif-schema] is
// true when the SARIF 2.1.0 JSON Schema is installed; its absence is an
// error under CI=true, so a script that skips without it cannot pass
// there unchecked.
func scriptCondition(cond string) (bool, error) {
	if cond != "sarif-schema" {
		return false, fmt.Errorf("unknown condition %q", cond)
	}
	if _, err := os.Stat(testbody.SARIFSchemaPath()); err != nil {
		if os.Getenv("CI") == "true" {
			return false, fmt.Errorf("CI=true but the SARIF 2.1.0 JSON Schema is not installed (make sarif-schema): %v", err)
		}
		return false, nil
	}
	return true, nil
}

// cmdValidSARIF implements "validsarif FILE".
func cmdValidSARIF(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: validsarif file")
	}
	log := []byte(ts.ReadFile(args[0]))
	ts.Check(reports.CheckGitHubSARIF(log))
	raw, err := os.ReadFile(testbody.SARIFSchemaPath())
	ts.Check(err)
	lim := strictjson.Limits{MaxStringLength: 1 << 20}
	sch, err := strictjson.Parse(raw, lim)
	ts.Check(err)
	c := schema.NewCompiler(nil)
	ts.Check(c.AddResource("airlock:sarif-2.1.0.json", sch))
	compiled, err := c.Compile("airlock:sarif-2.1.0.json")
	ts.Check(err)
	doc, err := strictjson.Parse(log, lim)
	ts.Check(err)
	if err := compiled.Validate(doc); err != nil {
		ts.Fatalf("%s is not valid SARIF 2.1.0: %v", args[0], err)
	}
}
