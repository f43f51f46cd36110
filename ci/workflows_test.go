package ci_test

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// workflow is a GitHub Actions workflow file, as far as these tests read it.
type workflow struct {
	Name        string            `yaml:"name"`
	On          yaml.Node         `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Jobs        map[string]struct {
		If          string            `yaml:"if"`
		Needs       any               `yaml:"needs"`
		RunsOn      string            `yaml:"runs-on"`
		Permissions map[string]string `yaml:"permissions"`
		Strategy    struct {
			FailFast *bool               `yaml:"fail-fast"`
			Matrix   map[string][]string `yaml:"matrix"`
		} `yaml:"strategy"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"jobs"`
}

func parseWorkflow(t *testing.T, where string, src []byte) *workflow {
	t.Helper()
	var w workflow
	dec := yaml.NewDecoder(bytes.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(&w); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	return &w
}

// sarifOutputRE is an upload's sarif_file naming a step's sarif output.
var sarifOutputRE = regexp.MustCompile(`^\$\{\{ steps\.([A-Za-z0-9_-]+)\.outputs\.sarif \}\}$`)

// pinnedRE is a uses: reference with a version: owner/repo[/path]@ref.
var pinnedRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[A-Za-z0-9_.-]+$`)

// checkWorkflow returns what is wrong with w: a job without runs-on or
// steps, a step with both or neither of run and uses, an unpinned action,
// a ${{ }} expression inside a run: script, a step of airlock's Action
// (uses: ./ in this repository, isAirlock in a user's) that passes an input
// action.yml does not declare or an unknown command, a SARIF upload of an
// airlock step's log under another category than the log's own
// (automationDetails.id airlock/<command>/, which upload-sarif keeps), and
// a job whose airlock steps use different references of the Action (a shard
// and its merge would run different airlocks). It also returns the airlock
// steps' commands, job by job.
func checkWorkflow(w *workflow, m *actionMeta, isAirlock func(uses string) bool) (bad []string, commands map[string]string) {
	if w.On.Kind == 0 {
		bad = append(bad, "no on: trigger")
	}
	if len(w.Jobs) == 0 {
		bad = append(bad, "no jobs")
	}
	commands = map[string]string{}
	refs := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(w.Jobs)) {
		job := w.Jobs[name]
		stepCommand := map[string]string{} // airlock step id -> command
		if job.RunsOn == "" || len(job.Steps) == 0 {
			bad = append(bad, fmt.Sprintf("job %s: no runs-on or no steps", name))
		}
		for i, s := range job.Steps {
			where := fmt.Sprintf("job %s step %d (%s)", name, i+1, s.Name+s.Uses)
			switch {
			case (s.Run == "") == (s.Uses == ""):
				bad = append(bad, where+": want exactly one of run and uses")
			case s.Uses != "" && !isAirlock(s.Uses) && !strings.HasPrefix(s.Uses, "./") && !pinnedRE.MatchString(s.Uses):
				bad = append(bad, where+": an action without a version (owner/repo@ref)")
			case strings.Contains(s.Run, "${{"):
				bad = append(bad, where+": a ${{ }} expression inside a run script: pass it through env:")
			}
			if strings.HasPrefix(s.Uses, "github/codeql-action/upload-sarif@") {
				if s.With["category"] == "" {
					bad = append(bad, where+": upload-sarif without a category")
				}
				if job.Permissions["security-events"] != "write" && w.Permissions["security-events"] != "write" {
					bad = append(bad, where+": upload-sarif in a job without security-events: write")
				}
				if sm := sarifOutputRE.FindStringSubmatch(s.With["sarif_file"]); sm != nil {
					if cmd, ok := stepCommand[sm[1]]; ok && cmd != "merge" && s.With["category"] != "airlock/"+cmd {
						bad = append(bad, fmt.Sprintf("%s: category %q for airlock %s's SARIF, whose automationDetails.id sets airlock/%s", where, s.With["category"], cmd, cmd))
					}
				}
			}
			if !isAirlock(s.Uses) {
				continue
			}
			refs[s.Uses] = true
			for k := range s.With {
				if _, ok := m.Inputs[k]; !ok {
					bad = append(bad, fmt.Sprintf("%s: input %s, which action.yml does not declare", where, k))
				}
			}
			cmd := s.With["command"]
			if cmd == "" {
				cmd = *m.Inputs["command"].Default
			}
			if !slices.Contains(wantCommands, cmd) {
				bad = append(bad, fmt.Sprintf("%s: command %q is not one of %v", where, cmd, wantCommands))
			}
			commands[name] = cmd
			if s.ID != "" {
				stepCommand[s.ID] = cmd
			}
		}
	}
	if len(refs) > 1 {
		bad = append(bad, fmt.Sprintf("airlock's Action is used at several references %v: one workflow, one airlock", slices.Sorted(maps.Keys(refs))))
	}
	return bad, commands
}

func loadWorkflow(t *testing.T, name string) *workflow {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repoRoot, ".github/workflows", name))
	if err != nil {
		t.Fatal(err)
	}
	return parseWorkflow(t, name, src)
}

func TestWorkflows(t *testing.T) {
	m := loadAction(t)
	files, err := filepath.Glob(filepath.Join(repoRoot, ".github/workflows/*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no workflow files: %v", err)
	}
	for _, f := range files {
		w := loadWorkflow(t, filepath.Base(f))
		bad, _ := checkWorkflow(w, m, func(uses string) bool { return uses == "./" })
		if len(bad) > 0 {
			t.Errorf("%s:\n  %s", filepath.Base(f), strings.Join(bad, "\n  "))
		}
	}

	// The project's own CI runs what users run, through its own Action.
	w := loadWorkflow(t, "ci.yml")
	_, commands := checkWorkflow(w, m, func(uses string) bool { return uses == "./" })
	for job, want := range map[string]string{"run": "run", "shard": "run", "merge": "merge", "lint": "lint", "mutate": "mutate", "diff": "diff", "drift": "drift"} {
		if commands[job] != want {
			t.Errorf("ci.yml: job %s should run the Action with command %s, got %q", job, want, commands[job])
		}
	}
	if _, ok := w.Jobs["test"]; !ok {
		t.Error("ci.yml: the test job (make test through .ci/run) is gone")
	}
	if !strings.Contains(w.Jobs["diff"].If, "pull_request") {
		t.Errorf("ci.yml: diff should run on pull requests only, if: %q", w.Jobs["diff"].If)
	}
	vuln := regexp.MustCompile(`golang\.org/x/vuln/cmd/govulncheck@v\d+\.\d+\.\d+ `)
	found := false
	for _, s := range w.Jobs["govulncheck"].Steps {
		found = found || vuln.MatchString(s.Run)
	}
	if !found {
		t.Error("ci.yml: no govulncheck job running a pinned golang.org/x/vuln/cmd/govulncheck@vX.Y.Z")
	}
}

// docsBlock is one fenced code block of docs/ci.md with its line.
type docsBlock struct {
	line int
	lang string
	text string
}

func docsBlocks(t *testing.T, file string) []docsBlock {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repoRoot, file))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []docsBlock
	var cur *docsBlock
	for i, line := range strings.Split(string(src), "\n") {
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &docsBlock{line: i + 1, lang: strings.TrimPrefix(line, "```")}
		case cur != nil && line == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		}
	}
	if cur != nil {
		t.Fatalf("%s:%d: an unclosed code block", file, cur.line)
	}
	return blocks
}

// TestDocsWorkflows parses the YAML of docs/ci.md: each GitHub workflow
// passes the checks of the project's own (airlock's Action as
// airlockdev/airlock@v1), the GitLab examples parse, and together they show
// a pull-request job uploading run's, lint's and diff's SARIF each under its
// own category, a shard matrix with a merge job running the shards' Action
// with command: merge, and a JUnit reporter.
func TestDocsWorkflows(t *testing.T) {
	m := loadAction(t)
	isAirlock := func(uses string) bool {
		return regexp.MustCompile(`^airlockdev/airlock@v\d+(\.\d+\.\d+)?$`).MatchString(uses)
	}
	var all strings.Builder
	workflows := 0
	for _, b := range docsBlocks(t, "docs/ci.md") {
		if b.lang != "yaml" {
			continue
		}
		where := fmt.Sprintf("docs/ci.md:%d", b.line)
		all.WriteString(b.text)
		if !strings.Contains(b.text, "\njobs:") {
			var v any
			if err := yaml.Unmarshal([]byte(b.text), &v); err != nil {
				t.Errorf("%s: %v", where, err)
			}
			continue
		}
		workflows++
		w := parseWorkflow(t, where, []byte(b.text))
		if bad, _ := checkWorkflow(w, m, isAirlock); len(bad) > 0 {
			t.Errorf("%s:\n  %s", where, strings.Join(bad, "\n  "))
		}
		if w.Permissions == nil {
			t.Errorf("%s: no top-level permissions block", where)
		}
	}
	if workflows == 0 {
		t.Fatal("docs/ci.md has no workflow")
	}
	// A merge job installing airlock runs the version the shards ran.
	for _, m := range regexp.MustCompile(`go install github\.com/airlockdev/airlock/cmd/airlock@(\S+)`).FindAllStringSubmatch(all.String(), -1) {
		if !strings.Contains(all.String(), "shard: ${{ matrix.shard }}") || !strings.Contains(all.String(), "uses: airlockdev/airlock@"+m[1]+"\n") {
			t.Errorf("docs/ci.md installs airlock@%s, but no example's Action step is airlockdev/airlock@%s: the shards and the merge would run different airlocks", m[1], m[1])
		}
	}
	for _, want := range []string{"uses: airlockdev/airlock@v1", "pull_request", "shard: ${{ matrix.shard }}", "command: merge",
		"github/codeql-action/upload-sarif@", "category: airlock/run", "category: airlock/lint", "category: airlock/diff", "mikepenz/action-junit-report@", "artifacts:", "junit:", "codequality:", "parallel:"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("docs/ci.md's examples lack %q", want)
		}
	}
}

// TestWorkflowCheckCatches feeds checkWorkflow a workflow with a SARIF
// upload under another category than its log's and two references of the
// Action, so those checks can be seen to fail.
func TestWorkflowCheckCatches(t *testing.T) {
	src := `on: pull_request
permissions:
  contents: read
  security-events: write
jobs:
  a:
    runs-on: ubuntu-latest
    steps:
      - id: diff
        uses: airlockdev/airlock@v1
        with:
          command: diff
      - uses: github/codeql-action/upload-sarif@v3
        with:
          sarif_file: ${{ steps.diff.outputs.sarif }}
          category: airlock-diff
  b:
    runs-on: ubuntu-latest
    steps:
      - uses: airlockdev/airlock@v0.1.0
`
	isAirlock := func(uses string) bool { return strings.HasPrefix(uses, "airlockdev/airlock@") }
	bad, _ := checkWorkflow(parseWorkflow(t, "test", []byte(src)), loadAction(t), isAirlock)
	all := strings.Join(bad, "\n")
	for _, want := range []string{`category "airlock-diff" for airlock diff's SARIF`, "several references"} {
		if !strings.Contains(all, want) {
			t.Errorf("checkWorkflow missed %q; it found:\n%s", want, all)
		}
	}
}

// TestDependabot checks .github/dependabot.yml keeps the actions and the Go
// modules current (weekly), and that every file pinning actions by tag says
// why and names Dependabot.
func TestDependabot(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(repoRoot, ".github/dependabot.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Version int `yaml:"version"`
		Updates []struct {
			Ecosystem string `yaml:"package-ecosystem"`
			Directory string `yaml:"directory"`
			Schedule  struct {
				Interval string `yaml:"interval"`
			} `yaml:"schedule"`
		} `yaml:"updates"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		t.Fatalf(".github/dependabot.yml: %v", err)
	}
	got := map[string]string{}
	for _, u := range cfg.Updates {
		got[u.Ecosystem] = u.Directory + " " + u.Schedule.Interval
	}
	if want := map[string]string{"github-actions": "/ weekly", "gomod": "/ weekly"}; cfg.Version != 2 || !maps.Equal(got, want) {
		t.Errorf(".github/dependabot.yml: version %d, updates %v; want version 2, %v", cfg.Version, got, want)
	}

	files, _ := filepath.Glob(filepath.Join(repoRoot, ".github/workflows/*.yml"))
	tagRE := regexp.MustCompile(`(?m)^\s*(?:- )?uses: [A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@v\d+\s*$`)
	for _, f := range append(files, filepath.Join(repoRoot, "action.yml")) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if tagRE.Match(b) && (!bytes.Contains(b, []byte("dependabot.yml")) || !bytes.Contains(b, []byte("not by commit SHA"))) {
			t.Errorf("%s pins actions by tag without a comment saying why (not by commit SHA) and that .github/dependabot.yml keeps them current", filepath.Base(f))
		}
	}
}
