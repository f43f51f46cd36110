package ci_test

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

const gitlabTemplate = "ci/gitlab/airlock.gitlab-ci.yml"

// gitlabReserved are the top-level keys of a .gitlab-ci.yml that are not jobs.
var gitlabReserved = []string{"default", "include", "stages", "variables", "workflow", "image", "services", "before_script", "after_script", "cache", "spec"}

// loadGitLab parses the template and returns its jobs with extends:
// resolved the way GitLab does (hashes merged deeply, the job's own keys
// over its parent's; arrays and scalars replaced).
func loadGitLab(t *testing.T) map[string]map[string]any {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repoRoot, gitlabTemplate))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(src, &doc); err != nil {
		t.Fatalf("%s: %v", gitlabTemplate, err)
	}
	var resolve func(name string, depth int) map[string]any
	resolve = func(name string, depth int) map[string]any {
		job, ok := doc[name].(map[string]any)
		if !ok {
			t.Fatalf("%s: %s is not a job (a mapping)", gitlabTemplate, name)
		}
		if depth > 10 {
			t.Fatalf("%s: extends of %s nests past 10", gitlabTemplate, name)
		}
		parent, ok := job["extends"].(string)
		if !ok {
			return job
		}
		return deepMerge(resolve(parent, depth+1), job)
	}
	jobs := map[string]map[string]any{}
	for name := range doc {
		if strings.HasPrefix(name, ".") || slices.Contains(gitlabReserved, name) {
			continue
		}
		jobs[name] = resolve(name, 0)
	}
	return jobs
}

func deepMerge(base, over map[string]any) map[string]any {
	out := maps.Clone(base)
	for k, v := range over {
		if bm, ok := out[k].(map[string]any); ok {
			if om, ok := v.(map[string]any); ok {
				out[k] = deepMerge(bm, om)
				continue
			}
		}
		out[k] = v
	}
	delete(out, "extends")
	return out
}

func stringList(t *testing.T, job map[string]any, key string) []string {
	t.Helper()
	raw, _ := job[key].([]any)
	var out []string
	for _, v := range raw {
		s, ok := v.(string)
		if !ok {
			t.Fatalf("%s: an entry of %s is %T, want a string", gitlabTemplate, key, v)
		}
		out = append(out, s)
	}
	return out
}

// runGitLabJob runs a job's before_script and script as one bash script, as
// GitLab Runner's shell executor does (set -eo pipefail), in ws, with the
// job's variables, CI_PROJECT_DIR and extra (CI_NODE_INDEX…), and a
// built airlock on PATH. It returns the exit status and the output.
func runGitLabJob(t *testing.T, ws string, job map[string]any, extra ...string) (int, string) {
	t.Helper()
	script := "set -eo pipefail\n" + strings.Join(append(stringList(t, job, "before_script"), stringList(t, job, "script")...), "\n") + "\n"
	file := filepath.Join(t.TempDir(), "job.sh")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", file)
	cmd.Dir = ws
	env := baseEnv()
	for i, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			env[i] = "PATH=" + filepath.Dir(airlockBin(t)) + string(os.PathListSeparator) + p
		}
	}
	vars, _ := job["variables"].(map[string]any)
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		env = append(env, fmt.Sprintf("%s=%v", k, vars[k]))
	}
	cmd.Env = append(append(env, "CI=true", "GITLAB_CI=true", "CI_PROJECT_DIR="+ws), extra...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), buf.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, buf.String()
}

// artifactPaths returns a job's artifacts:paths and artifacts:reports:*.
func artifactPaths(job map[string]any) (paths []string, reports map[string]string) {
	a, _ := job["artifacts"].(map[string]any)
	for _, p := range a["paths"].([]any) {
		paths = append(paths, p.(string))
	}
	reports = map[string]string{}
	if r, ok := a["reports"].(map[string]any); ok {
		for k, v := range r {
			reports[k] = fmt.Sprint(v)
		}
	}
	return paths, reports
}

// checkArtifacts fails unless every artifacts path and report of job
// matches at least one file in ws.
func checkArtifacts(t *testing.T, ws, name string, job map[string]any) {
	t.Helper()
	paths, reports := artifactPaths(job)
	for _, p := range append(paths, slices.Collect(maps.Values(reports))...) {
		m, err := filepath.Glob(filepath.Join(ws, p))
		if err != nil || len(m) == 0 {
			t.Errorf("%s: artifact %s matches no file after the job", name, p)
		}
	}
}

func TestGitLabTemplate(t *testing.T) {
	jobs := loadGitLab(t)
	if got := slices.Sorted(maps.Keys(jobs)); !slices.Equal(got, []string{"airlock-lint", "airlock-merge", "airlock-run"}) {
		t.Fatalf("jobs %v, want airlock-lint, airlock-merge, airlock-run", got)
	}
	for name, job := range jobs {
		if job["stage"] != "test" || job["image"] == nil || len(stringList(t, job, "script")) == 0 {
			t.Errorf("%s: want stage test, an image and a script; got %v", name, job)
		}
	}
	run := jobs["airlock-run"]
	n, ok := run["parallel"].(int)
	if !ok || n < 2 {
		t.Fatalf("airlock-run: parallel %v, want a number of shards >= 2", run["parallel"])
	}
	if _, reports := artifactPaths(run); reports["junit"] == "" {
		t.Error("airlock-run: no artifacts:reports:junit")
	}
	if _, reports := artifactPaths(jobs["airlock-lint"]); reports["codequality"] == "" {
		t.Error("airlock-lint: no artifacts:reports:codequality")
	}
	if needs := stringList(t, jobs["airlock-merge"], "needs"); !slices.Equal(needs, []string{"airlock-run"}) {
		t.Errorf("airlock-merge: needs %v, want [airlock-run]", needs)
	}
}

// TestGitLabJobs runs the template's jobs on the bundled tree: lint, the
// run job once per CI_NODE_INDEX of its parallel count, then merge, and
// checks every artifact path exists and the merged report holds every
// testcase of an unsharded run once.
func TestGitLabJobs(t *testing.T) {
	jobs := loadGitLab(t)
	ws := bundledWorkspace(t)

	code, out := runGitLabJob(t, ws, jobs["airlock-lint"])
	if code != 0 {
		t.Fatalf("airlock-lint: exit %d\n%s", code, out)
	}
	checkArtifacts(t, ws, "airlock-lint", jobs["airlock-lint"])
	var quality []map[string]any
	readJSON(t, filepath.Join(ws, "airlock-reports/gl-code-quality-report.json"), &quality)
	if len(quality) != 0 {
		t.Errorf("the bundled tree is lint-clean, the Code Quality report has %d entries", len(quality))
	}

	run := jobs["airlock-run"]
	n := run["parallel"].(int)
	total := 0
	for k := 1; k <= n; k++ {
		code, out := runGitLabJob(t, ws, run, fmt.Sprintf("CI_NODE_INDEX=%d", k), fmt.Sprintf("CI_NODE_TOTAL=%d", n))
		if code != 0 {
			t.Fatalf("airlock-run %d/%d: exit %d\n%s", k, n, code, out)
		}
		var part resultsJSON
		readJSON(t, filepath.Join(ws, fmt.Sprintf("airlock-reports/run-%d-of-%d.json", k, n)), &part)
		if part.Shard == nil || part.Shard.Index != k || part.Shard.Count != n {
			t.Errorf("airlock-run %d/%d: the results record shard %+v", k, n, part.Shard)
		}
		total += len(part.Cases)
	}
	checkArtifacts(t, ws, "airlock-run", run)

	code, out = runGitLabJob(t, ws, jobs["airlock-merge"])
	if code != 0 {
		t.Fatalf("airlock-merge: exit %d\n%s", code, out)
	}
	checkArtifacts(t, ws, "airlock-merge", jobs["airlock-merge"])
	var merged resultsJSON
	readJSON(t, filepath.Join(ws, "airlock-reports/merged.json"), &merged)
	_, cases, _ := readJUnit(t, filepath.Join(ws, "airlock-reports/merged.junit.xml"))
	whole := filepath.Join(t.TempDir(), "whole.json")
	cmd := exec.Command(airlockBin(t), "run", "--json", whole)
	cmd.Dir = ws
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("airlock run: %v\n%s", err, b)
	}
	var all resultsJSON
	readJSON(t, whole, &all)
	if len(all.Cases) == 0 || total != len(all.Cases) || len(merged.Cases) != len(all.Cases) || cases != len(all.Cases) {
		t.Errorf("unsharded run: %d cases; shards: %d; merged JSON: %d; merged JUnit: %d", len(all.Cases), total, len(merged.Cases), cases)
	}
	if merged.Shard != nil {
		t.Errorf("the merged results still record a shard: %+v", merged.Shard)
	}
}

// TestGitLabFailPolicy runs the run job on a tree with a broken fixture:
// it fails the job, unless AIRLOCK_FAIL_ON_FINDINGS is false.
func TestGitLabFailPolicy(t *testing.T) {
	run := loadGitLab(t)["airlock-run"]
	ws := bundledWorkspace(t)
	breakFixture(t, ws)
	for policy, want := range map[string]int{"true": 1, "false": 0} {
		code, out := runGitLabJob(t, ws, run, "CI_NODE_INDEX=1", "CI_NODE_TOTAL=1", "AIRLOCK_FAIL_ON_FINDINGS="+policy)
		if code != want {
			t.Errorf("AIRLOCK_FAIL_ON_FINDINGS=%s: exit %d, want %d\n%s", policy, code, want, out)
		}
		_, _, failed := readJUnit(t, filepath.Join(ws, "airlock-reports/run-1-of-1.junit.xml"))
		if failed == 0 {
			t.Errorf("AIRLOCK_FAIL_ON_FINDINGS=%s: the JUnit report has no failure", policy)
		}
	}
}
