package ci_test

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// releaseStep runs one run: step of release.yml with bash as the runner
// does, in dir (joined with the step's working-directory), its env:
// expressions taken from vars. It returns the output and the error.
func releaseStep(t *testing.T, dir string, s actionStep, vars map[string]string) (string, error) {
	t.Helper()
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", s.Run)
	cmd.Dir = dir
	if s.WorkingDirectory != "" {
		cmd.Dir = filepath.Join(dir, s.WorkingDirectory)
	}
	cmd.Env = baseEnv()
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		v := exprRE.ReplaceAllStringFunc(s.Env[k], func(e string) string {
			x := exprRE.FindStringSubmatch(e)[1]
			val, ok := vars[x]
			if !ok {
				t.Fatalf("release.yml step %s: the test cannot evaluate %s", s.Name, e)
			}
			return val
		})
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestReleaseJobs checks the release workflow's shape: triggers, matrix,
// the jobs' order (tag, build, provenance, release, verify), permissions
// (contents: read, write for release only; id-token and attestations for
// provenance only), no Go cache in the build, build provenance attested,
// and SHA256SUMS not "checked" by the job that writes it.
func TestReleaseJobs(t *testing.T) {
	w := loadWorkflow(t, "release.yml")
	var on struct {
		Push struct {
			Tags []string `yaml:"tags"`
		} `yaml:"push"`
	}
	if err := w.On.Decode(&on); err != nil || !slices.Equal(on.Push.Tags, []string{"v*"}) {
		t.Errorf("release.yml: on.push.tags %v (%v), want [v*]", on.Push.Tags, err)
	}
	matrix := w.Jobs["build"].Strategy.Matrix
	if !slices.Equal(matrix["goos"], []string{"linux", "darwin", "windows"}) || !slices.Equal(matrix["goarch"], []string{"amd64", "arm64"}) {
		t.Errorf("release.yml: matrix %v, want goos linux, darwin, windows × goarch amd64, arm64", matrix)
	}
	if !maps.Equal(w.Permissions, map[string]string{"contents": "read"}) {
		t.Errorf("release.yml: top-level permissions %v, want contents: read alone", w.Permissions)
	}
	wantPerms := map[string]map[string]string{
		"release":    {"contents": "write"},
		"major-tag":  {"contents": "write"},
		"provenance": {"contents": "read", "id-token": "write", "attestations": "write"},
	}
	wantNeeds := map[string][]string{"tag": nil, "build": {"tag"}, "provenance": {"build"}, "release": {"build", "provenance"}, "verify": {"release"}, "major-tag": {"verify"}}
	if got := slices.Sorted(maps.Keys(w.Jobs)); !slices.Equal(got, slices.Sorted(maps.Keys(wantNeeds))) {
		t.Fatalf("release.yml: jobs %v, want %v", got, slices.Sorted(maps.Keys(wantNeeds)))
	}
	for name, job := range w.Jobs {
		if !maps.Equal(job.Permissions, wantPerms[name]) {
			t.Errorf("release.yml: job %s has permissions %v, want %v", name, job.Permissions, wantPerms[name])
		}
		var needs []string
		switch n := job.Needs.(type) {
		case string:
			needs = []string{n}
		case []any:
			for _, v := range n {
				needs = append(needs, fmt.Sprint(v))
			}
		}
		if !slices.Equal(needs, wantNeeds[name]) {
			t.Errorf("release.yml: job %s needs %v, want %v", name, needs, wantNeeds[name])
		}
		for _, s := range job.Steps {
			if strings.HasPrefix(s.Uses, "actions/setup-go@") && s.With["cache"] != "false" {
				t.Errorf("release.yml: job %s sets up Go with cache %q, want false (no cache restored into a release build)", name, s.With["cache"])
			}
			if name != "verify" && strings.Contains(s.Run, "sha256sum -c") {
				t.Errorf("release.yml: job %s step %s checks checksums it has just written, which proves nothing", name, s.Name)
			}
		}
	}
	attested := false
	for _, s := range w.Jobs["provenance"].Steps {
		attested = attested || strings.HasPrefix(s.Uses, "actions/attest-build-provenance@") && s.With["subject-path"] == "dist/airlock_*"
	}
	if !attested {
		t.Error("release.yml: the provenance job does not attest dist/airlock_* with actions/attest-build-provenance")
	}
	if got := w.Jobs["major-tag"].If; got != "${{ !contains(github.ref_name, '-') }}" {
		t.Errorf("release.yml: the major-tag job's if is %q, want it to skip pre-release tags", got)
	}
}

// TestReleaseMajorTag runs the major-tag job's step against a repository
// standing for GitHub's: a release moves (or creates) vMAJOR to its commit
// only when it is the newest release of that major version and no
// pre-release.
func TestReleaseMajorTag(t *testing.T) {
	w := loadWorkflow(t, "release.yml")
	var move actionStep
	for _, s := range w.Jobs["major-tag"].Steps {
		if s.Name == "Move the major tag" {
			move = s
		}
	}
	if move.Run == "" {
		t.Fatal("release.yml: the major-tag job has no step Move the major tag")
	}
	up := t.TempDir()
	git(t, up, "init", "-q")
	commit := func(tag string) string {
		git(t, up, "commit", "-q", "--allow-empty", "-m", tag)
		git(t, up, "tag", tag)
		return git(t, up, "rev-parse", "HEAD")
	}
	v100 := commit("v1.0.0")
	v110 := commit("v1.1.0")
	v120rc := commit("v1.2.0-rc.1")
	git(t, up, "tag", "v1", v100)
	git(t, up, "checkout", "-q", "-b", "old", v100)
	v101 := commit("v1.0.1") // a patch of the older line, released after v1.1.0
	git(t, up, "checkout", "-q", "main")
	v200 := commit("v2.0.0")
	major := func(name string) string {
		return git(t, up, "rev-parse", "refs/tags/"+name+"^{commit}")
	}
	for _, tc := range []struct {
		tag, sha, major, want string
	}{
		{"v1.1.0", v110, "v1", v110},
		{"v1.0.1", v101, "v1", v110},        // not the newest v1: v1 stays at v1.1.0
		{"v1.2.0-rc.1", v120rc, "v1", v110}, // a pre-release: v1 stays
		{"v2.0.0", v200, "v2", v200},        // v2 created
	} {
		ws := t.TempDir()
		git(t, ws, "clone", "-q", "file://"+up, ".")
		out, err := releaseStep(t, ws, move, map[string]string{"github.ref_name": tc.tag, "github.sha": tc.sha})
		if err != nil {
			t.Fatalf("release %s: %v\n%s", tc.tag, err, out)
		}
		if got := major(tc.major); got != tc.want {
			t.Errorf("after release %s, %s is at %s, want %s\n%s", tc.tag, tc.major, got, tc.want, out)
		}
	}
}

// TestRelease runs the release workflow's steps that need no GitHub: the tag
// check on a repository with a default branch and a side branch, the build
// step for this machine's platform (into a copy of the module), the
// checksum, release-notes and the verify job's checksum check on the
// result (and on a tampered, an incomplete and a padded release).
func TestRelease(t *testing.T) {
	w := loadWorkflow(t, "release.yml")
	step := func(job, name string) actionStep {
		for _, s := range w.Jobs[job].Steps {
			if s.Name == name {
				return s
			}
		}
		t.Fatalf("release.yml: job %s has no step %q", job, name)
		return actionStep{}
	}
	version := strings.TrimSuffix(goVersionVar(t), "-dev")
	tag := "v" + version
	vars := map[string]string{"github.ref_name": tag, "matrix.goos": runtime.GOOS, "matrix.goarch": runtime.GOARCH}
	mustStep := func(dir string, s actionStep) string {
		t.Helper()
		out, err := releaseStep(t, dir, s, vars)
		if err != nil {
			t.Fatalf("release.yml step %s: %v\n%s", s.Name, err, out)
		}
		return out
	}

	t.Run("tag on the default branch", func(t *testing.T) {
		up := t.TempDir()
		git(t, up, "init", "-q")
		git(t, up, "commit", "-q", "--allow-empty", "-m", "one")
		onMain := git(t, up, "rev-parse", "HEAD")
		git(t, up, "checkout", "-q", "-b", "side")
		git(t, up, "commit", "-q", "--allow-empty", "-m", "unreviewed")
		onSide := git(t, up, "rev-parse", "HEAD")
		git(t, up, "checkout", "-q", "main")
		git(t, up, "commit", "-q", "--allow-empty", "-m", "two")
		ws := t.TempDir()
		git(t, ws, "clone", "-q", "file://"+up, ".")
		check := step("tag", "Tag on the default branch")
		for _, tc := range []struct {
			sha, branch, tag string
			ok               bool
		}{
			{onMain, "main", tag, true},
			{onSide, "main", tag, false},
			{onSide, "side", tag, true},
			{onMain, "nosuch", tag, false},
			{onMain, "-main", tag, false},
			{onMain, "main", "v1.2", false},
		} {
			v := map[string]string{"github.ref_name": tc.tag, "github.sha": tc.sha, "github.event.repository.default_branch": tc.branch}
			out, err := releaseStep(t, ws, check, v)
			if (err == nil) != tc.ok {
				t.Errorf("tag %s at %s, default branch %s: err %v, want ok %v\n%s", tc.tag, tc.sha, tc.branch, err, tc.ok, out)
			}
		}
	})

	mod := t.TempDir()
	copyModule(t, mod)
	mustStep(mod, step("build", "Build"))
	bin := filepath.Join(mod, "dist", fmt.Sprintf("airlock_%s_%s_%s", version, runtime.GOOS, runtime.GOARCH))
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "airlock "+version+"\n") {
		t.Errorf("%s version: %v\n%s\nwant it to start with airlock %s (gate.Version through -ldflags)", bin, err, out, version)
	}
	// The other platforms' binaries, as the build matrix would leave them.
	for _, p := range []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64", "windows_amd64.exe", "windows_arm64.exe"} {
		f := filepath.Join(mod, "dist", "airlock_"+version+"_"+p)
		if _, err := os.Stat(f); os.IsNotExist(err) {
			if err := os.WriteFile(f, []byte("stand-in for "+p+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	sums := mustStep(mod, step("release", "Checksums"))
	if !strings.Contains(sums, "  "+filepath.Base(bin)+"\n") {
		t.Errorf("SHA256SUMS does not list %s:\n%s", filepath.Base(bin), sums)
	}
	notes := mustStep(mod, step("release", "Release notes"))
	if !strings.Contains(notes, "### Added") {
		t.Errorf("the release notes of %s (CHANGELOG.md) lack an Added section:\n%s", tag, notes)
	}

	// The verify job's check, on the release as downloaded (a copy of dist).
	check := step("verify", "Check checksums")
	release := func(t *testing.T, edit func(dir string)) (string, error) {
		dir := t.TempDir()
		copyTree(t, filepath.Join(mod, "dist"), filepath.Join(dir, "release"))
		if edit != nil {
			edit(filepath.Join(dir, "release"))
		}
		return releaseStep(t, dir, check, vars)
	}
	if out, err := release(t, nil); err != nil || !strings.Contains(out, filepath.Base(bin)+": OK") {
		t.Errorf("the verify job's check on the release: %v\n%s", err, out)
	}
	for what, edit := range map[string]func(dir string){
		"a tampered binary": func(dir string) {
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(bin)), []byte("tampered"), 0o755); err != nil {
				t.Fatal(err)
			}
		},
		"a missing binary": func(dir string) { os.Remove(filepath.Join(dir, "airlock_"+version+"_darwin_arm64")) },
		"an extra binary": func(dir string) {
			if err := os.WriteFile(filepath.Join(dir, "airlock_"+version+"_plan9_amd64"), nil, 0o755); err != nil {
				t.Fatal(err)
			}
		},
		"an extra line in SHA256SUMS": func(dir string) {
			f, err := os.OpenFile(filepath.Join(dir, "SHA256SUMS"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(f, "%064d  airlock_%s_plan9_amd64\n", 0, version)
			f.Close()
		},
	} {
		if out, err := release(t, edit); err == nil {
			t.Errorf("the verify job's check passed a release with %s:\n%s", what, out)
		}
	}

	vars["github.ref_name"] = "v0.0.0-nope; touch pwned"
	if out, err := releaseStep(t, mod, step("build", "Build"), vars); err == nil {
		t.Errorf("the build step took the tag %q:\n%s", vars["github.ref_name"], out)
	}
	if _, err := os.Stat(filepath.Join(mod, "pwned")); err == nil {
		t.Error("a tag ran as shell code")
	}
}

// goVersionVar returns gate.Version's value from gate/audit.go: the
// variable release.yml sets with -ldflags -X must exist there.
func goVersionVar(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repoRoot, "gate/audit.go"))
	if err != nil {
		t.Fatal(err)
	}
	sm := regexp.MustCompile(`(?m)^var Version = "([^"]+)"$`).FindSubmatch(src)
	if sm == nil {
		t.Fatal(`gate/audit.go has no var Version = "…" for release.yml's -ldflags -X`)
	}
	return string(sm[1])
}

// copyModule copies the module's files (not .git, .ci, bin, out, dist)
// into dir, so a step that writes dist/ writes it there.
func copyModule(t *testing.T, dir string) {
	t.Helper()
	copyTree(t, repoRoot, dir, ".git", ".ci", "bin", "out", "dist")
}
