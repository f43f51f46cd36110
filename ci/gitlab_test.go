package ci_test

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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
	return resolveGitLab(t, gitlabTemplate, loadGitLabDoc(t))
}

// loadGitLabDoc parses the template as it is, extends: unresolved.
func loadGitLabDoc(t *testing.T) map[string]any {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repoRoot, gitlabTemplate))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(src, &doc); err != nil {
		t.Fatalf("%s: %v", gitlabTemplate, err)
	}
	return doc
}

// resolveGitLab returns the jobs of the configuration doc (read from
// where) with extends: resolved.
func resolveGitLab(t *testing.T, where string, doc map[string]any) map[string]map[string]any {
	t.Helper()
	var resolve func(name string, depth int) map[string]any
	resolve = func(name string, depth int) map[string]any {
		job, ok := doc[name].(map[string]any)
		if !ok {
			t.Fatalf("%s: %s is not a job (a mapping)", where, name)
		}
		if depth > 10 {
			t.Fatalf("%s: extends of %s nests past 10", where, name)
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
// job's variables, CI_PROJECT_DIR and extra (CI_NODE_INDEX…). No airlock
// is on PATH: the jobs run the airlock-build job's artifact (see
// withBuildArtifact). It returns the exit status and the output.
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

// gitlabModule is the module path airlock-build installs.
const gitlabModule = "github.com/airlockdev/airlock"

var (
	gitlabBuildOnce sync.Once
	gitlabBuilt     string
	gitlabBuildErr  error
)

// gitlabAirlock runs the template's airlock-build job once, as GitLab would,
// in a workspace of its own: its go install of airlock at AIRLOCK_VERSION is
// served by a module proxy holding this checkout as that version (a
// file:// GOPROXY, then the module cache's download folder for the
// dependencies; no network, a module cache of its own). It checks the job's
// artifacts exist and returns the binary the job left.
func gitlabAirlock(t *testing.T) string {
	t.Helper()
	gitlabBuildOnce.Do(func() {
		gitlabBuilt, gitlabBuildErr = gitlabBuild(t)
	})
	if gitlabBuildErr != nil {
		t.Fatal(gitlabBuildErr)
	}
	return gitlabBuilt
}

func gitlabBuild(t *testing.T) (string, error) {
	job := loadGitLab(t)["airlock-build"]
	vars, _ := job["variables"].(map[string]any)
	version, _ := vars["AIRLOCK_VERSION"].(string)
	if want := "v" + strings.TrimSuffix(goVersionVar(t), "-dev"); version != want {
		return "", fmt.Errorf("%s: AIRLOCK_VERSION %q, want %q: the template installs its own release (gate.Version without -dev)", gitlabTemplate, version, want)
	}
	proxy := filepath.Join(shared, "goproxy")
	if err := writeModuleProxy(proxy, version); err != nil {
		return "", err
	}
	out, err := exec.Command(goTool(), "env", "GOMODCACHE").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMODCACHE: %v", err)
	}
	downloads := filepath.Join(strings.TrimSpace(string(out)), "cache", "download")
	ws := filepath.Join(shared, "gitlab-build")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return "", err
	}
	code, log := runGitLabJob(t, ws, job,
		"GOPROXY=file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(downloads),
		"GOMODCACHE="+filepath.Join(shared, "gitlab-modcache"), "GOFLAGS=-modcacherw",
		"GOSUMDB=off", "GOPRIVATE=", "GONOPROXY=", "GONOSUMDB=", "GOTOOLCHAIN=local")
	if code != 0 {
		return "", fmt.Errorf("airlock-build: exit %d\n%s", code, log)
	}
	// go install ...@vX.Y.Z sets no gate.Version: airlock version shows
	// the module version the toolchain recorded (cli/version.go).
	if !strings.Contains(log, "airlock "+strings.TrimPrefix(version, "v")+"\n") {
		return "", fmt.Errorf("airlock-build: airlock version does not print airlock %s (the installed module's version):\n%s", strings.TrimPrefix(version, "v"), log)
	}
	checkArtifacts(t, ws, "airlock-build", job)
	return filepath.Join(ws, "airlock-bin", "airlock"), nil
}

// writeModuleProxy writes a GOPROXY folder (the module proxy protocol over
// files) serving this checkout as gitlabModule at version: list, .info,
// .mod and .zip, the zip holding the module's regular files under
// module@version/ (as copyModule takes them; nested modules left out).
func writeModuleProxy(dir, version string) error {
	at := filepath.Join(dir, gitlabModule, "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	mod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(at, version+".zip"))
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
	err = filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, path)
		if d.IsDir() {
			if slices.Contains([]string{".git", ".ci", "bin", "out", "dist"}, rel) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || rel == ".git" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		w, err := zw.Create(gitlabModule + "@" + version + "/" + filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
	if err == nil {
		err = zw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("the module proxy's zip: %v", err)
	}
	for name, b := range map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": []byte(`{"Version":"` + version + `","Time":"2026-01-01T00:00:00Z"}`),
		version + ".mod":  mod,
	} {
		if err := os.WriteFile(filepath.Join(at, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// withBuildArtifact puts the airlock-build job's artifact into ws, as
// GitLab does for a job that needs airlock-build.
func withBuildArtifact(t *testing.T, ws string) {
	t.Helper()
	b, err := os.ReadFile(gitlabAirlock(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, "airlock-bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "airlock-bin", "airlock"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestGitLabTemplate(t *testing.T) {
	jobs := loadGitLab(t)
	if got := slices.Sorted(maps.Keys(jobs)); !slices.Equal(got, []string{"airlock-build", "airlock-lint", "airlock-merge", "airlock-run"}) {
		t.Fatalf("jobs %v, want airlock-build, airlock-lint, airlock-merge, airlock-run", got)
	}
	// One airlock for the whole pipeline: airlock-build installs it, every
	// other job needs airlock-build (for its artifact) and installs none.
	build := jobs["airlock-build"]
	if needs, ok := build["needs"].([]any); !ok || len(needs) != 0 {
		t.Errorf("airlock-build: needs %v, want [] (it starts the pipeline)", build["needs"])
	}
	if script := strings.Join(stringList(t, build, "script"), "\n"); !strings.Contains(script, `go install -trimpath "github.com/airlockdev/airlock/cmd/airlock@${AIRLOCK_VERSION}"`) {
		t.Errorf("airlock-build does not go install airlock at AIRLOCK_VERSION:\n%s", script)
	}
	if paths, _ := artifactPaths(build); !slices.Equal(paths, []string{"airlock-bin/airlock"}) {
		t.Errorf("airlock-build: artifacts %v, want [airlock-bin/airlock]", paths)
	}
	for name, job := range jobs {
		if name == "airlock-build" {
			continue
		}
		if needs := stringList(t, job, "needs"); !slices.Contains(needs, "airlock-build") {
			t.Errorf("%s: needs %v, want airlock-build among them (its artifact is the airlock the job runs)", name, needs)
		}
		all := strings.Join(append(stringList(t, job, "before_script"), stringList(t, job, "script")...), "\n")
		if strings.Contains(all, "go install") || strings.Contains(all, "go build") {
			t.Errorf("%s builds or installs an airlock of its own", name)
		}
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
	if needs := stringList(t, jobs["airlock-merge"], "needs"); !slices.Equal(needs, []string{"airlock-build", "airlock-run"}) {
		t.Errorf("airlock-merge: needs %v, want [airlock-build airlock-run]", needs)
	}
}

// TestGitLabJobs runs the template's jobs on the bundled tree: lint, the
// run job once per CI_NODE_INDEX of its parallel count, then merge, and
// checks every artifact path exists and the merged report holds every
// testcase of an unsharded run once.
func TestGitLabJobs(t *testing.T) {
	jobs := loadGitLab(t)
	ws := bundledWorkspace(t)

	// Without airlock-build's artifact a job stops (exit 2), whatever airlock
	// is on PATH.
	code, out := runGitLabJob(t, ws, jobs["airlock-lint"])
	if code != 2 || !strings.Contains(out, "airlock-bin/airlock is missing") {
		t.Errorf("airlock-lint without the build artifact: exit %d, want 2 and a message naming it\n%s", code, out)
	}
	withBuildArtifact(t, ws)

	code, out = runGitLabJob(t, ws, jobs["airlock-lint"])
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
	cmd := exec.Command(filepath.Join(ws, "airlock-bin", "airlock"), "run", "--json", whole)
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
	withBuildArtifact(t, ws)
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

// includeMerge returns the configuration of a file that includes base and
// adds over: GitLab merges the including file's keys deeply over the
// included file's (hashes merged, arrays and scalars replaced), before
// extends: is resolved.
func includeMerge(base, over map[string]any) map[string]any {
	out := maps.Clone(base)
	for k, v := range over {
		if bm, ok := out[k].(map[string]any); ok {
			if om, ok := v.(map[string]any); ok {
				out[k] = includeMerge(bm, om)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// gitlabVarProblems returns what is wrong with the variables an including
// file (example, its include: left out) sets for the template: GitLab gives
// a job its own variables (the template's come through extends: .airlock)
// over the file's top-level ones, so a variable the example sets must reach
// every template job whose scripts read it, with the value the example
// gives.
func gitlabVarProblems(t *testing.T, where string, example map[string]any) []string {
	t.Helper()
	merged := includeMerge(loadGitLabDoc(t), example)
	delete(merged, "include")
	jobs := resolveGitLab(t, where, merged)
	global, _ := merged["variables"].(map[string]any)
	// set: each variable the example sets, with the places and values.
	set := map[string]map[string]string{}
	note := func(place string, vars any) {
		m, _ := vars.(map[string]any)
		for k, v := range m {
			if set[k] == nil {
				set[k] = map[string]string{}
			}
			set[k][place] = fmt.Sprint(v)
		}
	}
	note("top-level variables", example["variables"])
	for name, v := range example {
		if job, ok := v.(map[string]any); ok && name != "variables" {
			note(name, job["variables"])
		}
	}
	var bad []string
	for _, v := range slices.Sorted(maps.Keys(set)) {
		values := slices.Sorted(maps.Values(set[v]))
		if values = slices.Compact(values); len(values) != 1 {
			bad = append(bad, fmt.Sprintf("%s is set to different values: %v", v, set[v]))
			continue
		}
		want := values[0]
		for _, name := range slices.Sorted(maps.Keys(jobs)) {
			job := jobs[name]
			code := strings.Join(append(stringList(t, job, "before_script"), stringList(t, job, "script")...), "\n")
			if !strings.Contains(code, "$"+v) && !strings.Contains(code, "${"+v+"}") {
				continue
			}
			got, ok := global[v]
			if jv, _ := job["variables"].(map[string]any); jv != nil {
				if x, has := jv[v]; has {
					got, ok = x, true
				}
			}
			if !ok || fmt.Sprint(got) != want {
				bad = append(bad, fmt.Sprintf("job %s reads %s as %v, not the example's %q (set in %v)", name, v, got, want, slices.Sorted(maps.Keys(set[v]))))
			}
		}
	}
	return bad
}

// TestDocsGitLabOverride checks docs/ci.md's GitLab examples that include
// the template: every AIRLOCK_* variable they set reaches every job that
// reads it. And it checks the check: a variable set on airlock-run alone,
// and one set at the top level (under the template's job variables), are
// caught.
func TestDocsGitLabOverride(t *testing.T) {
	found := 0
	for _, b := range docsBlocks(t, "docs/ci.md") {
		if b.lang != "yaml" || !strings.Contains(b.text, "/ci/gitlab/airlock.gitlab-ci.yml") {
			continue
		}
		found++
		where := fmt.Sprintf("docs/ci.md:%d", b.line)
		var example map[string]any
		if err := yaml.Unmarshal([]byte(b.text), &example); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		if bad := gitlabVarProblems(t, where, example); len(bad) > 0 {
			t.Errorf("%s:\n  %s", where, strings.Join(bad, "\n  "))
		}
		if jobs := resolveGitLab(t, where, includeMerge(loadGitLabDoc(t), example)); len(jobs) < 4 {
			t.Errorf("%s: the example with the template has jobs %v", where, slices.Sorted(maps.Keys(jobs)))
		}
	}
	if found == 0 {
		t.Fatal("docs/ci.md has no GitLab example including the template")
	}
	for name, src := range map[string]string{
		"one job":   "airlock-run:\n  variables:\n    AIRLOCK_SCHEMAS: contracts\n",
		"top-level": "variables:\n  AIRLOCK_SCHEMAS: contracts\n",
	} {
		var example map[string]any
		if err := yaml.Unmarshal([]byte(src), &example); err != nil {
			t.Fatal(err)
		}
		if bad := gitlabVarProblems(t, name, example); !strings.Contains(strings.Join(bad, "\n"), "job airlock-lint reads AIRLOCK_SCHEMAS as schemas") {
			t.Errorf("%s: the check misses AIRLOCK_SCHEMAS not reaching airlock-lint: %v", name, bad)
		}
	}
}
