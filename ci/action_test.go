package ci_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// actionRun is one run of action.yml's run: steps.
type actionRun struct {
	ws      string            // GITHUB_WORKSPACE and the working directory
	inputs  map[string]string // given inputs; the others take their defaults
	prBase  string            // github.event.pull_request.base.sha; "" outside a pull request
	ref     string            // github.action_ref: the ref of uses: owner/repo@ref; "" for uses: ./
	preset  map[string]map[string]string
	skipIDs []string // steps not run (their outputs come from preset)
}

// actionResult is what a workflow sees of the action.
type actionResult struct {
	code    int                          // the action's exit status (the failing step's)
	stdout  string                       // the steps' output, stdout and stderr
	outputs map[string]string            // the action's outputs
	summary string                       // what the steps appended to GITHUB_STEP_SUMMARY
	steps   map[string]map[string]string // each step's outputs, by id
}

// run runs the action's steps as GitHub's runner would for shell: bash
// (bash --noprofile --norc -eo pipefail FILE), each with the expressions
// of its env: evaluated, a fresh GITHUB_OUTPUT file, and the shared
// GITHUB_STEP_SUMMARY. A uses: step is skipped, with the reason logged. It
// stops at the first failing step.
func (r actionRun) run(t *testing.T, m *actionMeta) actionResult {
	t.Helper()
	temp := filepath.Join(shared, "runner-temp")
	if err := os.MkdirAll(temp, 0o755); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	summary := filepath.Join(work, "step-summary.md")
	if err := os.WriteFile(summary, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	steps := map[string]map[string]string{}
	for id, o := range r.preset {
		steps[id] = o
	}
	eval := func(s string) string {
		return exprRE.ReplaceAllStringFunc(s, func(e string) string {
			expr := exprRE.FindStringSubmatch(e)[1]
			switch {
			case expr == "github.action_path":
				return repoRoot
			case expr == "github.workspace":
				return r.ws
			case expr == "runner.temp":
				return temp
			case expr == "github.event.pull_request.base.sha":
				return r.prBase
			case expr == "github.action_ref":
				return r.ref
			case strings.HasPrefix(expr, "inputs."):
				name := strings.TrimPrefix(expr, "inputs.")
				if v, ok := r.inputs[name]; ok {
					return v
				}
				in, ok := m.Inputs[name]
				if !ok {
					t.Fatalf("action.yml reads inputs.%s, which it does not declare", name)
				}
				if in.Required {
					t.Fatalf("input %s is required and the test gives none", name)
				}
				if in.Default != nil {
					return *in.Default
				}
				return ""
			}
			if sm := stepOutputRE.FindStringSubmatch(expr); sm != nil {
				return steps[sm[1]][sm[2]]
			}
			t.Fatalf("the test cannot evaluate the expression %s: teach it", e)
			return ""
		})
	}
	for name := range r.inputs {
		if _, ok := m.Inputs[name]; !ok {
			t.Fatalf("the test gives input %s, which action.yml does not declare", name)
		}
	}
	var log strings.Builder
	res := actionResult{outputs: map[string]string{}}
	for i, s := range m.Runs.Steps {
		if s.Uses != "" {
			t.Logf("step %d (%s): skipped: uses %s is an action GitHub runs; the test provides what it sets up (Go on PATH)", i+1, s.Name, s.Uses)
			continue
		}
		if slices.Contains(r.skipIDs, s.ID) {
			t.Logf("step %d (%s): skipped: the test presets its outputs %v", i+1, s.Name, r.preset[s.ID])
			continue
		}
		if s.Shell != "bash" {
			t.Fatalf("step %d (%s): shell %q; the test runs bash only", i+1, s.Name, s.Shell)
		}
		script := filepath.Join(work, fmt.Sprintf("step%d.sh", i+1))
		if err := os.WriteFile(script, []byte(s.Run), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(work, fmt.Sprintf("step%d.output", i+1))
		if err := os.WriteFile(out, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
		cmd.Dir = r.ws
		if s.WorkingDirectory != "" {
			cmd.Dir = filepath.Join(r.ws, eval(s.WorkingDirectory))
		}
		cmd.Env = append(baseEnv(),
			"GITHUB_ACTIONS=true", "CI=true",
			"GITHUB_ACTION_PATH="+repoRoot, "GITHUB_WORKSPACE="+r.ws, "RUNNER_TEMP="+temp,
			"GITHUB_OUTPUT="+out, "GITHUB_STEP_SUMMARY="+summary)
		for _, k := range slices.Sorted(mapKeys(s.Env)) {
			cmd.Env = append(cmd.Env, k+"="+eval(s.Env[k]))
		}
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		err := cmd.Run()
		log.WriteString(buf.String())
		if s.ID != "" {
			steps[s.ID] = parseOutputFile(t, out)
		}
		if err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatalf("step %d (%s): %v", i+1, s.Name, err)
			}
			if !s.ContinueOnError {
				res.code = ee.ExitCode()
				break
			}
		}
	}
	for name, o := range m.Outputs {
		res.outputs[name] = eval(o.Value)
	}
	res.stdout = log.String()
	res.steps = steps
	b, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	res.summary = string(b)
	return res
}

// parseOutputFile reads a GITHUB_OUTPUT file: name=value lines and
// name<<DELIMITER blocks.
func parseOutputFile(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	outs := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if name, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(name, "=") {
			var val []string
			for sc.Scan() && sc.Text() != delim {
				val = append(val, sc.Text())
			}
			outs[name] = strings.Join(val, "\n")
			continue
		}
		name, val, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("GITHUB_OUTPUT line %q is neither name=value nor name<<DELIMITER", line)
		}
		outs[name] = val
	}
	return outs
}

// wantCacheKey is the Go version and the SHA-256 of the action's go.sum.
func wantCacheKey(t *testing.T) string {
	t.Helper()
	sum, err := os.ReadFile(filepath.Join(repoRoot, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(goTool(), "env", "GOVERSION").Output()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s-%x", strings.TrimSpace(string(out)), sha256.Sum256(sum))
}

// stub writes a fake airlock into dir: it records its arguments, one a
// line, in dir/argv, writes "report" into every --junit, --json, --sarif and
// --summary file it is given, and exits with the code in dir/rc.
func stub(t *testing.T, rc int) (bin, argv string) {
	t.Helper()
	dir := t.TempDir()
	bin = filepath.Join(dir, "airlock")
	argv = filepath.Join(dir, "argv")
	script := `#!/usr/bin/env bash
printf '%s\n' "$@" > "` + argv + `"
for a in "$@"; do
	case $a in --junit=* | --json=* | --sarif=* | --summary=*) printf 'report of %s\n' "${a%%=*}" > "${a#*=}" ;; esac
done
exit ` + fmt.Sprint(rc) + "\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, argv
}

// TestActionScript runs the action's run step against a fake airlock: the
// command line each input makes, the exit policy, the outputs and the
// summary, and inputs that try to inject shell code or workflow commands.
func TestActionScript(t *testing.T) {
	m := loadAction(t)
	type want struct {
		code     int
		argv     []string // nil: airlock must not have been called
		outputs  map[string]string
		inLog    []string
		inSumary []string
	}
	for _, tc := range []struct {
		name   string
		rc     int
		inputs map[string]string
		prBase string
		want   want
	}{
		{"run", 0, map[string]string{}, "", want{0,
			[]string{"run", "--schemas=schemas", "--fixtures=fixtures", "--junit=airlock-reports/run.junit.xml", "--json=airlock-reports/run.json",
				"--sarif=airlock-reports/run.sarif", "--summary=airlock-reports/run.summary.md", "--format=github"},
			map[string]string{"junit": "airlock-reports/run.junit.xml", "json": "airlock-reports/run.json", "sarif": "airlock-reports/run.sarif",
				"summary": "airlock-reports/run.summary.md", "exit-code": "0"},
			nil, []string{"report of --summary"}}},
		{"run sharded with tools and args", 1, map[string]string{"shard": "2/3", "tools": "a,b", "args": " --strict\n --workers  2 ", "reports": "out/r", "schemas": "-s", "fixtures": "f x"}, "", want{1,
			[]string{"run", "--schemas=-s", "--fixtures=f x", "--junit=out/r/run-shard-2-of-3.junit.xml", "--json=out/r/run-shard-2-of-3.json",
				"--sarif=out/r/run-shard-2-of-3.sarif", "--summary=out/r/run-shard-2-of-3.summary.md", "--format=github", "--tool=a,b", "--shard=2/3",
				"--strict", "--workers", "2"},
			map[string]string{"junit": "out/r/run-shard-2-of-3.junit.xml", "exit-code": "1"}, []string{"airlock run exited 1 (findings)"}, nil}},
		{"findings pass with fail-on-findings false", 1, map[string]string{"fail-on-findings": "false"}, "", want{0, nil,
			map[string]string{"exit-code": "1"}, []string{"do not fail the step"}, nil}},
		{"configuration error fails whatever the policy", 2, map[string]string{"fail-on-findings": "false", "command": "lint"}, "", want{2,
			[]string{"lint", "--schemas=schemas", "--fixtures=fixtures", "--sarif=airlock-reports/lint.sarif", "--summary=airlock-reports/lint.summary.md", "--format=github"},
			map[string]string{"exit-code": "2", "junit": "", "json": "", "sarif": "airlock-reports/lint.sarif"}, nil, nil}},
		{"internal error fails", 3, map[string]string{"fail-on-findings": "false", "command": "mutate"}, "", want{3,
			[]string{"mutate", "--schemas=schemas", "--fixtures=fixtures", "--junit=airlock-reports/mutate.junit.xml", "--json=airlock-reports/mutate.json",
				"--summary=airlock-reports/mutate.summary.md", "--format=github"},
			map[string]string{"exit-code": "3", "sarif": ""}, nil, nil}},
		{"drift", 0, map[string]string{"command": "drift", "shard": "1/1"}, "", want{0,
			[]string{"drift", "--schemas=schemas", "--fixtures=fixtures", "--json=airlock-reports/drift-shard-1-of-1.json",
				"--sarif=airlock-reports/drift-shard-1-of-1.sarif", "--summary=airlock-reports/drift-shard-1-of-1.summary.md", "--format=github", "--shard=1/1"},
			map[string]string{"junit": "", "json": "airlock-reports/drift-shard-1-of-1.json"}, nil, nil}},
		{"diff takes the pull request's base", 1, map[string]string{"command": "diff", "tools": "review_status"}, "HEAD", want{1,
			[]string{"diff", "--schemas=schemas", "--fixtures=fixtures", "--base=HEAD", "--sarif=airlock-reports/diff.sarif",
				"--summary=airlock-reports/diff.summary.md", "--format=github", "--tool=review_status"},
			map[string]string{"sarif": "airlock-reports/diff.sarif", "exit-code": "1"}, nil, nil}},
		{"diff's base input wins", 0, map[string]string{"command": "diff", "base": "HEAD~0"}, "HEAD", want{0,
			[]string{"diff", "--schemas=schemas", "--fixtures=fixtures", "--base=HEAD~0", "--sarif=airlock-reports/diff.sarif",
				"--summary=airlock-reports/diff.summary.md", "--format=github"}, nil, nil, nil}},
		{"diff without a base", 0, map[string]string{"command": "diff", "fail-on-findings": "false"}, "", want{2, nil,
			map[string]string{"exit-code": "2"}, []string{"::error title=airlock action::diff needs a base revision"}, []string{"exit code 2 (usage or configuration error)"}}},
		{"diff with an option for a base", 0, map[string]string{"command": "diff", "base": "--upload-pack=touch pwned"}, "", want{2, nil,
			map[string]string{"exit-code": "2"}, []string{"want a git revision"}, nil}},
		{"diff with several tools", 0, map[string]string{"command": "diff", "tools": "a,b"}, "HEAD", want{2, nil, nil, []string{"diff compares one tool"}, nil}},
		{"unknown command", 0, map[string]string{"command": "check"}, "", want{2, nil, map[string]string{"exit-code": "2"}, []string{`command is "check"`}, nil}},
		{"malformed shard", 0, map[string]string{"shard": "../../1/2"}, "", want{2, nil, nil, []string{"want K/N"}, nil}},
		{"shard on lint", 0, map[string]string{"command": "lint", "shard": "1/2"}, "", want{2, nil, nil, []string{"shard is for run, mutate and drift"}, nil}},
		{"bad fail policy", 0, map[string]string{"fail-on-findings": "no"}, "", want{2, nil, nil, []string{"want true or false"}, nil}},
		{"injection stays data", 0, map[string]string{"tools": `$(touch pwned)"; touch pwned; "`, "args": "`touch pwned` $(touch pwned) *",
			"schemas": "x\n::error::forged"}, "", want{0,
			[]string{"run", "--schemas=x", "::error::forged", "--fixtures=fixtures", "--junit=airlock-reports/run.junit.xml", "--json=airlock-reports/run.json",
				"--sarif=airlock-reports/run.sarif", "--summary=airlock-reports/run.summary.md", "--format=github", `--tool=$(touch pwned)"; touch pwned; "`,
				"`touch", "pwned`", "$(touch", "pwned)", "*"}, nil, nil, nil}},
		{"forged workflow command in a refused input", 0, map[string]string{"command": "x\n::error::forged"}, "", want{2, nil, nil,
			[]string{"::error title=airlock action::command is \"x%250A%253A%253Aerror%253A%253Aforged\""}, nil}},
		// A lone CR ends a line for the runner as LF does; an input is shown
		// with every byte outside printable ASCII, % and : as %XX (and that
		// text escaped once more as the annotation's data).
		{"base with CRs", 0, map[string]string{"command": "diff", "base": "nosuchrev\r::add-mask::x\r::error file=README.md::forged"}, "", want{2, nil,
			map[string]string{"exit-code": "2"}, []string{`base is "nosuchrev%250D%253A%253Aadd-mask%253A%253Ax%250D%253A%253Aerror file=README.md%253A%253Aforged"; want a git revision`}, nil}},
		{"base as a refspec", 0, map[string]string{"command": "diff", "base": "+refs/heads/main:refs/heads/pwned"}, "", want{2, nil, nil, []string{"want a git revision"}, nil}},
		{"base as a range", 0, map[string]string{"command": "diff", "base": "HEAD~1..HEAD"}, "", want{2, nil, nil, []string{`base is "HEAD~1..HEAD"; want a git revision`}, nil}},
		{"base as a negative refspec", 0, map[string]string{"command": "diff", "base": "^main"}, "", want{2, nil, nil, []string{"want a git revision"}, nil}},
		{"base with a reflog selector", 0, map[string]string{"command": "diff", "base": "main@{1}"}, "", want{2, nil, nil, []string{"want a git revision"}, nil}},
		{"base with non-ASCII and a line separator", 0, map[string]string{"command": "diff", "base": "ma\u00efn\u2028::error::forged"}, "", want{2, nil, nil,
			[]string{`base is "ma%25C3%25AFn%25E2%2580%25A8%253A%253Aerror%253A%253Aforged"`}, nil}},
		{"base too long", 0, map[string]string{"command": "diff", "base": strings.Repeat("a", 256)}, "", want{2, nil, nil,
			[]string{`base is "` + strings.Repeat("a", 256) + `"`}, nil}},
		{"base of revision shape", 0, map[string]string{"command": "diff", "base": "HEAD^1~0"}, "", want{0,
			[]string{"diff", "--schemas=schemas", "--fixtures=fixtures", "--base=HEAD^1~0", "--sarif=airlock-reports/diff.sarif",
				"--summary=airlock-reports/diff.summary.md", "--format=github"}, nil, nil, nil}},
		{"tools with a CR, refused", 0, map[string]string{"command": "diff", "tools": "a,\r::error::forged"}, "HEAD", want{2, nil, nil,
			[]string{`tools is "a,%250D%253A%253Aerror%253A%253Aforged"`}, nil}},
		{"shard with a CR", 0, map[string]string{"shard": "1/2\r::error::forged"}, "", want{2, nil, nil, []string{`shard is "1/2%250D%253A%253Aerror%253A%253Aforged"`}, nil}},
		{"fail policy with a CR", 0, map[string]string{"fail-on-findings": "true\r::error::forged"}, "", want{2, nil, nil, []string{`fail-on-findings is "true%250D%253A%253Aerror`}, nil}},
		{"reports with a CR", 0, map[string]string{"reports": "r\r::error::forged"}, "", want{2, nil, nil, []string{"reports is a folder name with a line break"}, nil}},
		{"a long input is cut in the log", 0, map[string]string{"command": strings.Repeat("x", 300)}, "", want{2, nil, nil,
			[]string{`command is "` + strings.Repeat("x", 256) + `...(44 more bytes)"`}, nil}},
		{"args, schemas and tools with CRs reach airlock, shown escaped", 0, map[string]string{"args": "--strict\r::error::forged",
			"schemas": "s\r::warning::forged", "tools": "t\x85::error::forged"}, "", want{0,
			[]string{"run", "--schemas=s\r::warning::forged", "--fixtures=fixtures", "--junit=airlock-reports/run.junit.xml", "--json=airlock-reports/run.json",
				"--sarif=airlock-reports/run.sarif", "--summary=airlock-reports/run.summary.md", "--format=github", "--tool=t\x85::error::forged",
				"--strict\r::error::forged"}, nil,
			[]string{`--schemas=s%0D%3A%3Awarning%3A%3Aforged`, `--tool=t%85%3A%3Aerror%3A%3Aforged`, `--strict%0D%3A%3Aerror%3A%3Aforged`}, nil}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			if tc.prBase != "" || tc.inputs["base"] != "" {
				git(t, ws, "init", "-q")
				git(t, ws, "commit", "-q", "--allow-empty", "-m", "base")
			}
			bin, argvFile := stub(t, tc.rc)
			r := actionRun{ws: ws, inputs: tc.inputs, prBase: tc.prBase,
				preset: map[string]map[string]string{"build": {"bin": bin}}, skipIDs: []string{"build"}}
			res := r.run(t, m)
			if res.code != tc.want.code {
				t.Errorf("exit status %d, want %d\n%s", res.code, tc.want.code, res.stdout)
			}
			argv, err := os.ReadFile(argvFile)
			switch {
			case tc.rc == 0 && tc.want.code == 2 && err == nil:
				t.Errorf("airlock was called (%q), want the input refused before", argv)
			case tc.want.argv != nil:
				got := strings.Split(strings.TrimSuffix(string(argv), "\n"), "\n")
				if !slices.Equal(got, tc.want.argv) {
					t.Errorf("airlock called with\n  %q\nwant\n  %q", got, tc.want.argv)
				}
			}
			for k, v := range tc.want.outputs {
				if res.outputs[k] != v {
					t.Errorf("output %s = %q, want %q (all: %v)", k, res.outputs[k], v, res.outputs)
				}
				if v != "" && k != "exit-code" {
					if _, err := os.Stat(filepath.Join(ws, v)); err != nil {
						t.Errorf("output %s names %s: %v", k, v, err)
					}
				}
			}
			for _, s := range tc.want.inLog {
				if !strings.Contains(res.stdout, s) {
					t.Errorf("the log lacks %q:\n%s", s, res.stdout)
				}
			}
			for _, s := range tc.want.inSumary {
				if !strings.Contains(res.summary, s) {
					t.Errorf("the step summary lacks %q:\n%s", s, res.summary)
				}
			}
			if key := res.steps["go"]["key"]; key != wantCacheKey(t) {
				t.Errorf("the Go cache key is %q, want %q (the Go version and the action's go.sum)", key, wantCacheKey(t))
			}
			for _, out := range []string{"modcache", "buildcache"} {
				if st, err := os.Stat(res.steps["go"][out]); err != nil || !st.IsDir() {
					t.Errorf("the go step's %s output %q is not a folder: %v", out, res.steps["go"][out], err)
				}
			}
			if _, err := os.Stat(filepath.Join(ws, "pwned")); err == nil {
				t.Error("an input ran as shell code: pwned exists")
			}
			checkLog(t, res.stdout)
		})
	}
}

// checkLog fails unless log is printable ASCII, tabs and LFs only (no CR,
// no other line end, nothing an input could forge a workflow command
// with), and every line starting with :: is the action's own usage
// annotation.
func checkLog(t *testing.T, log string) {
	t.Helper()
	for i := 0; i < len(log); i++ {
		if c := log[i]; c != '\n' && c != '\t' && (c < 0x20 || c > 0x7e) {
			t.Errorf("the log holds byte %#02x at offset %d (an input printed raw?):\n%q", c, i, log)
			break
		}
	}
	for _, line := range strings.Split(log, "\n") {
		if strings.HasPrefix(line, "::") && !strings.HasPrefix(line, "::error title=airlock action::") {
			t.Errorf("an input forged a workflow command: %q", line)
		}
	}
}

// TestActionBaseFetch runs the diff step in a shallow clone: a base commit
// the clone lacks is fetched (FETCH_HEAD only), and a refspec for a base
// never reaches git fetch (it would force-write a local branch).
func TestActionBaseFetch(t *testing.T) {
	m := loadAction(t)
	up := t.TempDir()
	git(t, up, "init", "-q")
	git(t, up, "commit", "-q", "--allow-empty", "-m", "one")
	first := git(t, up, "rev-parse", "HEAD")
	git(t, up, "commit", "-q", "--allow-empty", "-m", "two")
	git(t, up, "config", "uploadpack.allowAnySHA1InWant", "true")

	clone := func(t *testing.T) string {
		ws := t.TempDir()
		git(t, ws, "clone", "-q", "--depth=1", "file://"+up, ".")
		if err := exec.Command("git", "-C", ws, "cat-file", "-e", first+"^{commit}").Run(); err == nil {
			t.Fatal("the shallow clone holds the first commit: the test proves nothing")
		}
		return ws
	}

	t.Run("a missing base commit is fetched", func(t *testing.T) {
		ws := clone(t)
		bin, argvFile := stub(t, 0)
		res := actionRun{ws: ws, inputs: map[string]string{"command": "diff"}, prBase: first,
			preset: map[string]map[string]string{"build": {"bin": bin}}, skipIDs: []string{"build"}}.run(t, m)
		if res.code != 0 {
			t.Fatalf("exit %d\n%s", res.code, res.stdout)
		}
		if !strings.Contains(res.stdout, "fetching the base revision "+first) {
			t.Errorf("the log does not say the base was fetched:\n%s", res.stdout)
		}
		git(t, ws, "cat-file", "-e", first+"^{commit}")
		if argv, err := os.ReadFile(argvFile); err != nil || !strings.Contains(string(argv), "--base="+first+"\n") {
			t.Errorf("airlock called with %q (%v), want --base=%s", argv, err, first)
		}
		checkLog(t, res.stdout)
	})

	for _, base := range []string{"+refs/heads/main:refs/heads/pwned", "refs/heads/main:refs/heads/pwned", "refs/heads/*:refs/heads/pwned/*"} {
		t.Run("refspec "+base, func(t *testing.T) {
			ws := clone(t)
			bin, argvFile := stub(t, 0)
			res := actionRun{ws: ws, inputs: map[string]string{"command": "diff", "base": base},
				preset: map[string]map[string]string{"build": {"bin": bin}}, skipIDs: []string{"build"}}.run(t, m)
			if res.code != 2 {
				t.Errorf("exit %d, want 2\n%s", res.code, res.stdout)
			}
			if _, err := os.Stat(argvFile); err == nil {
				t.Error("airlock was called")
			}
			if refs := git(t, ws, "for-each-ref", "--format=%(refname)", "refs/heads/"); refs != "refs/heads/main" {
				t.Errorf("the clone's branches are %q, want refs/heads/main alone", refs)
			}
			checkLog(t, res.stdout)
		})
	}
}

// TestActionEndToEnd runs action.yml's steps for real: the build step
// builds airlock from this checkout, the run step runs each command on the
// bundled tree (all green), on a tree with a broken fixture and, for diff,
// on a git repository whose pull request makes a breaking change. It
// checks the exit codes, outputs, report files and step summary.
func TestActionEndToEnd(t *testing.T) {
	m := loadAction(t)

	t.Run("run on the bundled tree", func(t *testing.T) {
		ws := bundledWorkspace(t)
		res := actionRun{ws: ws, inputs: map[string]string{"args": "--strict"}}.run(t, m)
		if res.code != 0 || res.outputs["exit-code"] != "0" {
			t.Fatalf("exit %d, exit-code %q, want 0\n%s", res.code, res.outputs["exit-code"], res.stdout)
		}
		_, cases, failed := readJUnit(t, filepath.Join(ws, res.outputs["junit"]))
		var results resultsJSON
		readJSON(t, filepath.Join(ws, res.outputs["json"]), &results)
		if cases == 0 || failed != 0 || len(results.Cases) != cases {
			t.Errorf("JUnit: %d testcases, %d failed; JSON: %d cases; want the same non-zero count and none failed", cases, failed, len(results.Cases))
		}
		if l := readSARIF(t, filepath.Join(ws, res.outputs["sarif"])); len(l.Runs[0].Results) != 0 {
			t.Errorf("SARIF of a green run has %d results", len(l.Runs[0].Results))
		}
		summary, err := os.ReadFile(filepath.Join(ws, res.outputs["summary"]))
		if err != nil {
			t.Fatal(err)
		}
		if len(summary) == 0 || !strings.Contains(res.summary, string(summary)) || !strings.Contains(res.summary, "review_status") {
			t.Errorf("the step summary should hold the run's summary, naming review_status; got:\n%s", res.summary)
		}
		if strings.Contains(res.stdout, "::error") {
			t.Errorf("a green run printed an error annotation:\n%s", res.stdout)
		}
	})

	// Used at a release tag, the Action's airlock is that release; at a
	// moving major tag it is not told a version it cannot know.
	t.Run("the version line", func(t *testing.T) {
		ws := bundledWorkspace(t)
		for ref, want := range map[string]string{"v7.8.9-rc.1": "airlock 7.8.9-rc.1\n", "v7": "airlock "} {
			res := actionRun{ws: ws, ref: ref, inputs: map[string]string{"command": "lint"}}.run(t, m)
			if res.code != 0 || !strings.Contains(res.stdout, want) {
				t.Errorf("action ref %s: exit %d, want 0 and %q in the log:\n%s", ref, res.code, want, res.stdout)
			}
			if ref == "v7" && strings.Contains(res.stdout, "airlock 7") {
				t.Errorf("action ref v7: the version line claims a release:\n%s", res.stdout)
			}
		}
	})

	t.Run("run on a failing tree", func(t *testing.T) {
		ws := bundledWorkspace(t)
		breakFixture(t, ws)
		for _, policy := range []string{"true", "false"} {
			res := actionRun{ws: ws, inputs: map[string]string{"fail-on-findings": policy}}.run(t, m)
			wantCode := map[string]int{"true": 1, "false": 0}[policy]
			if res.code != wantCode || res.outputs["exit-code"] != "1" {
				t.Fatalf("fail-on-findings %s: exit %d, exit-code %q, want %d and 1\n%s", policy, res.code, res.outputs["exit-code"], wantCode, res.stdout)
			}
			if !strings.Contains(res.stdout, "::error file="+brokenFixture) {
				t.Errorf("no annotation on %s (relative to GITHUB_WORKSPACE):\n%s", brokenFixture, res.stdout)
			}
			_, _, failed := readJUnit(t, filepath.Join(ws, res.outputs["junit"]))
			if failed == 0 {
				t.Error("the JUnit report has no failed testcase")
			}
			l := readSARIF(t, filepath.Join(ws, res.outputs["sarif"]))
			found := false
			for _, r := range l.Runs[0].Results {
				for _, loc := range r.Locations {
					found = found || loc.Physical.Artifact.URI == brokenFixture
				}
			}
			if !found {
				t.Errorf("no SARIF result at %s", brokenFixture)
			}
			if !strings.Contains(res.summary, "approved.json") {
				t.Errorf("the step summary does not name the failing fixture:\n%s", res.summary)
			}
		}
	})

	t.Run("lint", func(t *testing.T) {
		ws := bundledWorkspace(t)
		res := actionRun{ws: ws, inputs: map[string]string{"command": "lint", "args": "--strict"}}.run(t, m)
		if res.code != 0 || res.outputs["junit"] != "" || res.outputs["json"] != "" {
			t.Fatalf("exit %d, outputs %v, want 0 and no JUnit or JSON\n%s", res.code, res.outputs, res.stdout)
		}
		readSARIF(t, filepath.Join(ws, res.outputs["sarif"]))
		if res.summary == "" {
			t.Error("lint appended no step summary")
		}
	})

	t.Run("diff against the pull request's base", func(t *testing.T) {
		ws := bundledWorkspace(t)
		git(t, ws, "init", "-q")
		git(t, ws, "add", "-A")
		git(t, ws, "commit", "-q", "-m", "base")
		base := git(t, ws, "rev-parse", "HEAD")
		schema := filepath.Join(ws, "schemas/review_status/upstream.v2.schema.json")
		b, err := os.ReadFile(schema)
		if err != nil {
			t.Fatal(err)
		}
		nb := bytes.Replace(b, []byte(`"required": ["change_id", "decision", "reviewed_by"]`), []byte(`"required": ["change_id", "decision"]`), 1)
		if bytes.Equal(b, nb) {
			t.Fatal("the bundled review_status v2 schema changed: update the test's edit")
		}
		if err := os.WriteFile(schema, nb, 0o644); err != nil {
			t.Fatal(err)
		}
		git(t, ws, "commit", "-q", "-am", "reviewed_by optional")
		res := actionRun{ws: ws, inputs: map[string]string{"command": "diff"}, prBase: base}.run(t, m)
		if res.code != 1 || res.outputs["exit-code"] != "1" {
			t.Fatalf("exit %d, exit-code %q, want 1 (a breaking change)\n%s", res.code, res.outputs["exit-code"], res.stdout)
		}
		if !strings.Contains(res.summary, "response-property-became-optional") {
			t.Errorf("the step summary does not name the breaking change:\n%s", res.summary)
		}
		if !strings.Contains(res.stdout, "::error file=schemas/review_status/upstream.v2.schema.json") {
			t.Errorf("no annotation on the changed schema:\n%s", res.stdout)
		}
		l := readSARIF(t, filepath.Join(ws, res.outputs["sarif"]))
		if len(l.Runs[0].Results) == 0 || l.Runs[0].Results[0].RuleID != "response-property-became-optional" {
			t.Errorf("SARIF results %+v, want the breaking change", l.Runs[0].Results)
		}
	})

	t.Run("mutate", func(t *testing.T) {
		ws := bundledWorkspace(t)
		res := actionRun{ws: ws, inputs: map[string]string{"command": "mutate", "tools": "review_status"}}.run(t, m)
		if res.code != 0 || res.outputs["sarif"] != "" {
			t.Fatalf("exit %d, outputs %v, want 0 and no SARIF\n%s", res.code, res.outputs, res.stdout)
		}
		_, cases, failed := readJUnit(t, filepath.Join(ws, res.outputs["junit"]))
		var results resultsJSON
		readJSON(t, filepath.Join(ws, res.outputs["json"]), &results)
		if cases == 0 || failed != 0 || len(results.Cases) != cases {
			t.Errorf("JUnit: %d testcases, %d failed; JSON: %d cases", cases, failed, len(results.Cases))
		}
		if !strings.Contains(res.summary, "review_status") {
			t.Errorf("the step summary does not name the tool:\n%s", res.summary)
		}
	})

	t.Run("drift", func(t *testing.T) {
		ws := bundledWorkspace(t)
		res := actionRun{ws: ws, inputs: map[string]string{"command": "drift"}}.run(t, m)
		if res.code != 0 {
			t.Fatalf("exit %d, want 0\n%s", res.code, res.stdout)
		}
		var report map[string]any
		readJSON(t, filepath.Join(ws, res.outputs["json"]), &report)
		readSARIF(t, filepath.Join(ws, res.outputs["sarif"]))
		if res.summary == "" {
			t.Error("drift appended no step summary")
		}
	})

	t.Run("run in shards", func(t *testing.T) {
		ws := bundledWorkspace(t)
		whole := actionRun{ws: ws, inputs: map[string]string{"reports": "whole"}}.run(t, m)
		if whole.code != 0 {
			t.Fatalf("unsharded: exit %d\n%s", whole.code, whole.stdout)
		}
		var all resultsJSON
		readJSON(t, filepath.Join(ws, whole.outputs["json"]), &all)
		total := 0
		for k := 1; k <= 2; k++ {
			shard := fmt.Sprintf("%d/2", k)
			res := actionRun{ws: ws, inputs: map[string]string{"shard": shard}}.run(t, m)
			if res.code != 0 {
				t.Fatalf("shard %s: exit %d\n%s", shard, res.code, res.stdout)
			}
			if want := fmt.Sprintf("airlock-reports/run-shard-%d-of-2.json", k); res.outputs["json"] != want {
				t.Errorf("shard %s: json output %q, want %q", shard, res.outputs["json"], want)
			}
			var part resultsJSON
			readJSON(t, filepath.Join(ws, res.outputs["json"]), &part)
			if part.Shard == nil || part.Shard.Index != k || part.Shard.Count != 2 {
				t.Errorf("shard %s: the JSON results record shard %+v", shard, part.Shard)
			}
			total += len(part.Cases)
		}
		if total != len(all.Cases) {
			t.Errorf("the shards hold %d cases, the unsharded run %d", total, len(all.Cases))
		}
		res := actionRun{ws: ws, inputs: map[string]string{"shard": "3/2", "fail-on-findings": "false"}}.run(t, m)
		if res.code != 2 || res.outputs["exit-code"] != "2" {
			t.Errorf("shard 3/2: exit %d, exit-code %q, want 2 (airlock's usage error)\n%s", res.code, res.outputs["exit-code"], res.stdout)
		}

		// The merge job: command merge over the shards' reports gives the
		// unsharded run's testcases, in its order.
		merged := actionRun{ws: ws, inputs: map[string]string{"command": "merge", "reports": "merged",
			"inputs": "airlock-reports/run-shard-*.junit.xml\nairlock-reports/run-shard-*.json airlock-reports/run-shard-*.sarif"}}.run(t, m)
		if merged.code != 0 || merged.outputs["exit-code"] != "0" {
			t.Fatalf("merge: exit %d, exit-code %q, want 0\n%s", merged.code, merged.outputs["exit-code"], merged.stdout)
		}
		want := map[string]string{"junit": "merged/merge.junit.xml", "json": "merged/merge.json", "sarif": "merged/merge.sarif", "summary": "merged/merge.summary.md"}
		for k, v := range want {
			if merged.outputs[k] != v {
				t.Errorf("merge: output %s = %q, want %q", k, merged.outputs[k], v)
			}
		}
		var joined resultsJSON
		readJSON(t, filepath.Join(ws, merged.outputs["json"]), &joined)
		if joined.Shard != nil || !slices.Equal(joined.Cases, all.Cases) {
			t.Errorf("merge: shard %+v and %d cases, want the unsharded run's %d cases in its order", joined.Shard, len(joined.Cases), len(all.Cases))
		}
		_, cases, _ := readJUnit(t, filepath.Join(ws, merged.outputs["junit"]))
		if cases != len(all.Cases) {
			t.Errorf("merge: the JUnit report has %d testcases, want %d", cases, len(all.Cases))
		}
		readSARIF(t, filepath.Join(ws, merged.outputs["sarif"]))
		if !strings.Contains(merged.summary, "review_status") {
			t.Errorf("merge: the step summary does not name review_status:\n%s", merged.summary)
		}

		// One shard's reports only: merge refuses the set (exit 2) and
		// the outputs name nothing.
		res = actionRun{ws: ws, inputs: map[string]string{"command": "merge", "reports": "merged", "inputs": "airlock-reports/run-shard-1-of-2.json"}}.run(t, m)
		if res.code != 2 || res.outputs["json"] != "" || res.outputs["summary"] != "" {
			t.Errorf("merge of shard 1 of 2 alone: exit %d, outputs %v, want 2 and no report\n%s", res.code, res.outputs, res.stdout)
		}
	})
}

// TestActionStaleReports runs two steps into one reports folder, as two
// steps of one job do: a step whose input is refused, or whose airlock
// writes nothing, names no report and appends no summary of the earlier
// step's.
func TestActionStaleReports(t *testing.T) {
	m := loadAction(t)
	ws := t.TempDir()
	git(t, ws, "init", "-q")
	git(t, ws, "commit", "-q", "--allow-empty", "-m", "base")
	bin, _ := stub(t, 1)
	first := actionRun{ws: ws, inputs: map[string]string{"command": "diff"}, prBase: "HEAD",
		preset: map[string]map[string]string{"build": {"bin": bin}}, skipIDs: []string{"build"}}.run(t, m)
	if first.code != 1 || first.outputs["sarif"] != "airlock-reports/diff.sarif" || !strings.Contains(first.summary, "report of --summary") {
		t.Fatalf("the first diff: exit %d, outputs %v, summary %q", first.code, first.outputs, first.summary)
	}

	// diff again, without a base: refused before airlock runs.
	res := actionRun{ws: ws, inputs: map[string]string{"command": "diff"},
		preset: map[string]map[string]string{"build": {"bin": bin}}, skipIDs: []string{"build"}}.run(t, m)
	if res.code != 2 || res.outputs["exit-code"] != "2" {
		t.Errorf("diff without a base: exit %d, exit-code %q, want 2\n%s", res.code, res.outputs["exit-code"], res.stdout)
	}
	for _, k := range []string{"junit", "json", "sarif", "summary"} {
		if res.outputs[k] != "" {
			t.Errorf("diff without a base: output %s = %q, the earlier step's file", k, res.outputs[k])
		}
	}
	if strings.Contains(res.summary, "report of") || !strings.Contains(res.summary, "exit code 2") {
		t.Errorf("diff without a base: the step summary should say exit code 2 and hold no earlier report:\n%s", res.summary)
	}

	// airlock runs, fails inside (exit 3) and writes nothing: the earlier
	// step's files are gone, not passed off as this step's.
	silent := filepath.Join(t.TempDir(), "airlock")
	if err := os.WriteFile(silent, []byte("#!/usr/bin/env bash\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	res = actionRun{ws: ws, inputs: map[string]string{"command": "diff"}, prBase: "HEAD",
		preset: map[string]map[string]string{"build": {"bin": silent}}, skipIDs: []string{"build"}}.run(t, m)
	if res.code != 3 || res.outputs["sarif"] != "" || res.outputs["summary"] != "" || strings.Contains(res.summary, "report of") {
		t.Errorf("a diff that wrote nothing: exit %d, outputs %v, summary %q; want 3, no report named", res.code, res.outputs, res.summary)
	}
	if _, err := os.Stat(filepath.Join(ws, "airlock-reports/diff.sarif")); err == nil {
		t.Error("the earlier step's diff.sarif is still there after a diff that wrote none")
	}
}

// TestActionMergeScript runs command merge against a fake airlock: the
// inputs' globs expanded to files (never evaluated), the outputs for the
// kinds of report given, and the inputs refused.
func TestActionMergeScript(t *testing.T) {
	m := loadAction(t)
	ws := t.TempDir()
	for _, f := range []string{"run-shard-1-of-2.junit.xml", "run-shard-2-of-2.junit.xml", "run-shard-1-of-2.json", "run-shard-2-of-2.json",
		"run-shard-1-of-2.sarif", "run-shard-2-of-2.sarif", "run-shard-1-of-2.summary.md", "a b.json"} {
		if err := os.MkdirAll(filepath.Join(ws, "shards"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, "shards", f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"a.json", "b.json", "airlock-reports/merge.sarif"} {
		if err := os.MkdirAll(filepath.Join(ws, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		inputs  map[string]string
		code    int
		argv    []string // nil: airlock not called
		outputs map[string]string
		inLog   string
	}{
		{"every kind", map[string]string{"inputs": "shards/*.junit.xml\n shards/run-*.json\tshards/*.sarif "}, 0,
			[]string{"merge", "--junit=airlock-reports/merge.junit.xml", "--json=airlock-reports/merge.json", "--sarif=airlock-reports/merge.sarif",
				"--summary=airlock-reports/merge.summary.md", "--",
				"shards/run-shard-1-of-2.junit.xml", "shards/run-shard-2-of-2.junit.xml", "shards/run-shard-1-of-2.json", "shards/run-shard-2-of-2.json",
				"shards/run-shard-1-of-2.sarif", "shards/run-shard-2-of-2.sarif"},
			map[string]string{"junit": "airlock-reports/merge.junit.xml", "json": "airlock-reports/merge.json", "sarif": "airlock-reports/merge.sarif",
				"summary": "airlock-reports/merge.summary.md", "exit-code": "0"}, ""},
		{"SARIF only (drift)", map[string]string{"inputs": "shards/*.sarif", "args": "--strict"}, 0,
			[]string{"merge", "--sarif=airlock-reports/merge.sarif", "--strict", "--", "shards/run-shard-1-of-2.sarif", "shards/run-shard-2-of-2.sarif"},
			map[string]string{"junit": "", "json": "", "summary": "", "sarif": "airlock-reports/merge.sarif"}, ""},
		{"a file name with a space, through a glob", map[string]string{"inputs": "shards/a?b.json"}, 0,
			[]string{"merge", "--json=airlock-reports/merge.json", "--summary=airlock-reports/merge.summary.md", "--", "shards/a b.json"}, nil, ""},
		{"an earlier merge's reports are no input", map[string]string{"inputs": "shards/*.sarif airlock-reports/*.sarif"}, 0,
			[]string{"merge", "--sarif=airlock-reports/merge.sarif", "--", "shards/run-shard-1-of-2.sarif", "shards/run-shard-2-of-2.sarif"}, nil, ""},
		{"no inputs", map[string]string{}, 2, nil, map[string]string{"exit-code": "2", "junit": ""}, "merge needs the shards' report files"},
		{"a glob matching nothing", map[string]string{"inputs": "shards/*.json nosuch/*.xml"}, 2, nil, map[string]string{"json": ""}, `inputs: "nosuch/*.xml" matches no file`},
		{"brace and command expansion are not done", map[string]string{"inputs": "{a,b}.json"}, 2, nil, nil, `"{a,b}.json" matches no file`},
		{"a command substitution stays text", map[string]string{"inputs": "$(touch pwned) `touch pwned`"}, 2, nil, nil, "matches no file"},
		{"shard on merge", map[string]string{"inputs": "shards/*.json", "shard": "1/2"}, 2, nil, nil, "shard is for run, mutate and drift"},
		{"tools on merge", map[string]string{"inputs": "shards/*.json", "tools": "a"}, 2, nil, nil, "tools is for run, lint, diff, mutate and drift"},
		{"inputs on run", map[string]string{"command": "run", "inputs": "shards/*.json"}, 2, nil, nil, "inputs is for merge, not run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin, argvFile := stub(t, 0)
			inputs := map[string]string{"command": "merge"}
			for k, v := range tc.inputs {
				inputs[k] = v
			}
			res := actionRun{ws: ws, inputs: inputs,
				preset: map[string]map[string]string{"build": {"bin": bin}}, skipIDs: []string{"build"}}.run(t, m)
			if res.code != tc.code {
				t.Errorf("exit %d, want %d\n%s", res.code, tc.code, res.stdout)
			}
			argv, err := os.ReadFile(argvFile)
			switch {
			case tc.argv == nil && err == nil:
				t.Errorf("airlock was called (%q), want the input refused before", argv)
			case tc.argv != nil:
				if got := strings.Split(strings.TrimSuffix(string(argv), "\n"), "\n"); !slices.Equal(got, tc.argv) {
					t.Errorf("airlock called with\n  %q\nwant\n  %q", got, tc.argv)
				}
			}
			for k, v := range tc.outputs {
				if res.outputs[k] != v {
					t.Errorf("output %s = %q, want %q", k, res.outputs[k], v)
				}
			}
			if !strings.Contains(res.stdout, tc.inLog) {
				t.Errorf("the log lacks %q:\n%s", tc.inLog, res.stdout)
			}
			if _, err := os.Stat(filepath.Join(ws, "pwned")); err == nil {
				t.Error("an input ran as shell code: pwned exists")
			}
			checkLog(t, res.stdout)
		})
	}
}
