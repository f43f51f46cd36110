package ci_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// repoRoot is the module root, the folder above this package.
var repoRoot = func() string {
	abs, err := filepath.Abs("..")
	if err != nil {
		panic(err)
	}
	return abs
}()

// shared is a folder kept for the whole test binary: the runner's temporary
// folder of the action runs (so the action's go build finds its binary up to
// date after the first run), and the GitLab airlock-build job's module
// proxy, module cache and workspace (its binary the other GitLab jobs run).
var shared string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "airlock-ci-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	shared = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// goTool is the go command of the toolchain running the tests.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// baseEnv is the test process's environment without what a CI system or
// the Makefile set for this very run (GITHUB_*, RUNNER_*, CI_*, AIRLOCK_*),
// with the toolchain's bin folder on PATH.
func baseEnv() []string {
	var env []string
	path := filepath.Join(runtime.GOROOT(), "bin")
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "GITHUB_"), strings.HasPrefix(k, "RUNNER_"), strings.HasPrefix(k, "CI_"),
			strings.HasPrefix(k, "AIRLOCK_"), k == "CI", k == "GITLAB_CI", k == "NO_COLOR":
		case k == "PATH":
			path = path + string(os.PathListSeparator) + v
		default:
			env = append(env, kv)
		}
	}
	return append(env, "PATH="+path)
}

// bundledWorkspace copies the bundled contracts and fixtures (schemas/ and
// fixtures/ of the repository) into a new folder and returns it: the
// caller's repository as a workflow checks it out.
func bundledWorkspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	for _, dir := range []string{"schemas", "fixtures"} {
		copyTree(t, filepath.Join(repoRoot, dir), filepath.Join(ws, dir))
	}
	return ws
}

// copyTree copies the folders and regular files beneath from into to,
// leaving out the top-level entries named in skip (a folder, or a
// worktree's .git file).
func copyTree(t *testing.T, from, to string, skip ...string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if slices.Contains(skip, rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		dst := filepath.Join(to, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o755)
		case d.Type().IsRegular():
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(dst, b, 0o644)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// breakFixture makes the bundled accepted fixture approved.json of
// review_status v2 a truncated body, so run fails it.
const brokenFixture = "fixtures/review_status/v2/accepted/approved.json"

func breakFixture(t *testing.T, ws string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(ws, brokenFixture), []byte(`{"tool": "review_status", "request_id":`), 0o644); err != nil {
		t.Fatal(err)
	}
}

// git runs git in dir with a fixed identity.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=airlock test", "-c", "user.email=test@airlock.invalid",
		"-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = baseEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// junitSuites is the part of a JUnit XML report the tests read.
type junitSuites struct {
	XMLName xml.Name `xml:"testsuites"`
	Tests   int      `xml:"tests,attr"`
	Suites  []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Cases    []struct {
			Name    string    `xml:"name,attr"`
			Class   string    `xml:"classname,attr"`
			Failure *struct{} `xml:"failure"`
			Error   *struct{} `xml:"error"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// readJUnit parses the JUnit report at path and returns it with the number
// of testcases and of failed or errored ones.
func readJUnit(t *testing.T, path string) (j junitSuites, cases, failed int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(b, &j); err != nil {
		t.Fatalf("%s is not a JUnit report: %v", path, err)
	}
	for _, s := range j.Suites {
		for _, c := range s.Cases {
			cases++
			if c.Failure != nil || c.Error != nil {
				failed++
			}
		}
	}
	return j, cases, failed
}

// resultsJSON is the part of airlock's JSON results (schemas/results.schema.json)
// the tests read.
type resultsJSON struct {
	Shard *struct {
		Index int `json:"index"`
		Count int `json:"count"`
	} `json:"shard"`
	Failed int `json:"failed"`
	Cases  []struct {
		Tool   string `json:"tool"`
		Name   string `json:"name"`
		File   string `json:"file"`
		Suite  string `json:"suite"`
		Status string `json:"status"`
	} `json:"cases"`
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// sarifLog is the part of a SARIF 2.1.0 log the tests read.
type sarifLog struct {
	Version string `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Name string `json:"name"`
			} `json:"driver"`
		} `json:"tool"`
		Results []struct {
			RuleID    string `json:"ruleId"`
			Level     string `json:"level"`
			Locations []struct {
				Physical struct {
					Artifact struct {
						URI string `json:"uri"`
					} `json:"artifactLocation"`
				} `json:"physicalLocation"`
			} `json:"locations"`
		} `json:"results"`
	} `json:"runs"`
}

func readSARIF(t *testing.T, path string) sarifLog {
	t.Helper()
	var l sarifLog
	readJSON(t, path, &l)
	if l.Version != "2.1.0" || len(l.Runs) != 1 || l.Runs[0].Tool.Driver.Name != "airlock" {
		t.Fatalf("%s: want a SARIF 2.1.0 log with one run of airlock, got version %q, %d runs", path, l.Version, len(l.Runs))
	}
	return l
}
