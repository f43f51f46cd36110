package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/airlockdev/airlock/reports"
)

// The JUnit reports of airlock run, read the way their consumers read them:
// validated against the Jenkins xUnit plugin's junit-10.xsd with xmllint,
// and loaded with Python's junitparser (reports/testdata/junit_check.py),
// which checks the counts against the JSON results, that (classname, name)
// never repeats, and that no name or text holds "<!--", "]]>" or a control
// character. The reports come from the bundled tree, the bundled tree with
// the mutation suite, a hostile tree whose fixture names and bodies hold
// "<!--", "]]>", control characters, quotes and invalid UTF-8, and the
// bundled tree beside a broken contract (an <error> testcase).
//
// It needs xmllint (Debian libxml2-utils) and /usr/bin/python3 with
// junitparser (python3-junitparser), which .ci/run installs; without them
// it is skipped with a message, except under CI=true, where it fails.
func TestJUnitConsumers(t *testing.T) {
	xmllint, python := junitTools(t)
	xsd := filepath.Join("..", "reports", "testdata", "junit-10.xsd")
	check := filepath.Join("..", "reports", "testdata", "junit_check.py")
	dir := t.TempDir()
	hostile := hostileTree(t, filepath.Join(dir, "hostile"))
	broken := brokenSchemas(t, filepath.Join(dir, "broken-schemas"))

	for _, tc := range []struct {
		name     string
		args     []string
		exit     int
		mustName []string
	}{
		{"bundled", []string{"--schemas", "../schemas", "--fixtures", "../fixtures"}, ExitOK, []string{"approved.json"}},
		{"mutation", []string{"--schemas", "../schemas", "--fixtures", "../fixtures", "--mutate"}, ExitOK, []string{"approved.json", "approved.json#structure.null_for_object"}},
		{"hostile", []string{"--schemas", "../schemas", "--fixtures", hostile, "--tool", "review_status", "--mutate"}, ExitFindings, []string{
			reports.Ident(hostileNames[0] + ".json"), reports.Ident(hostileNames[1] + ".json"),
			`ctl\x01.json`, `ctl\x02.json`, `ctl\\x01.json`, `a<\x21--b.json`, `c]]\x3ed.json`,
			reports.Ident(hostileNames[0] + ".json#structure.null_for_object"),
		}},
		{"broken", []string{"--schemas", broken, "--fixtures", "../fixtures", "--mutate"}, ExitUsage, []string{"contract.yaml", "approved.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			junit := filepath.Join(dir, tc.name+".xml")
			results := filepath.Join(dir, tc.name+".json")
			args := append([]string{"run", "--junit", junit, "--json", results}, tc.args...)
			var out, errb bytes.Buffer
			if got := Main(context.Background(), args, Stdio{Out: &out, Err: &errb}, Options{}); got != tc.exit {
				t.Fatalf("airlock %v: exit %d, want %d\n%s%s", args, got, tc.exit, out.String(), errb.String())
			}
			tests, failed, unchecked, errored := resultCounts(t, results)
			if (errored > 0) != (tc.name == "broken") {
				t.Errorf("%s: %d errored testcases", results, errored)
			}
			if tests == 0 {
				t.Fatalf("%s: no testcases", results)
			}

			cmd := exec.Command(xmllint, "--noout", "--schema", xsd, junit)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("xmllint --schema junit-10.xsd %s: %v\n%s", junit, err, b)
			}

			pyArgs := []string{check, junit, strconv.Itoa(tests), strconv.Itoa(failed), strconv.Itoa(unchecked), "--errors", strconv.Itoa(errored)}
			for _, n := range tc.mustName {
				pyArgs = append(pyArgs, "--name", n)
			}
			if b, err := exec.Command(python, pyArgs...).CombinedOutput(); err != nil {
				t.Errorf("junit_check.py (junitparser) %s: %v\n%s", junit, err, b)
			} else {
				t.Logf("%s", b)
			}
		})
	}
}

// junitTools returns the paths of xmllint and of the Python that has
// junitparser, or skips the test (fails it under CI=true) when one is missing.
func junitTools(t *testing.T) (xmllint, python string) {
	t.Helper()
	missing := func(msg string) {
		t.Helper()
		msg += "; install with: apt-get install -y libxml2-utils python3-junitparser (as .ci/run does)"
		if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
			t.Fatal("CI=true but " + msg)
		}
		t.Skip("JUnit consumer test skipped: " + msg)
	}
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		missing("xmllint is not on PATH")
	}
	python = "/usr/bin/python3"
	if b, err := exec.Command(python, "-c", "import junitparser").CombinedOutput(); err != nil {
		missing(python + " cannot import junitparser (" + err.Error() + ": " + string(bytes.TrimSpace(b)) + ")")
	}
	return xmllint, python
}

// resultCounts reads the testcase, failed, unchecked and errored counts of
// a JSON results file.
func resultCounts(t *testing.T, path string) (tests, failed, unchecked, errored int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Failed, Unchecked, Errored int
		Cases                      []json.RawMessage
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return len(doc.Cases), doc.Failed, doc.Unchecked, doc.Errored
}

// brokenSchemas writes, at root, a copy of the bundled contracts beside a
// contract "dangling" whose upstream schema $refs a file that does not
// exist, and returns root.
func brokenSchemas(t *testing.T, root string) string {
	t.Helper()
	if err := os.CopyFS(root, os.DirFS(filepath.Join("..", "schemas"))); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"contract.yaml":        "tool: dangling\nversion: \"1\"\nagent_schema: agent.schema.json\nupstream_versions:\n  v1:\n    schema: upstream.schema.json\n    projection: {id: /id}\n",
		"agent.schema.json":    `{"type": "object", "additionalProperties": false, "properties": {"id": {"type": "string"}}}`,
		"upstream.schema.json": `{"type": "object", "properties": {"id": {"$ref": "missing.schema.json"}}}`,
	}
	if err := os.MkdirAll(filepath.Join(root, "dangling"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(root, "dangling", name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// hostileNames are the stems of the hostile tree's admitted fixtures.
var hostileNames = []string{
	"q\"uote'&<b>", "esc\x1b[31mred\x1b[0m", "a<!--b", "c]]>d", "ctl\x01", "ctl\x02", `ctl\x01`,
	"tab\tnl\ncr\r", "bidi\u202ex", "c1\u0085x", "bad\xffutf8", "<![CDATA[x]]>",
}

// hostileTree writes, under root, a fixtures tree for the bundled
// review_status contract: its defaults, one admitted fixture under each of
// hostileNames, an admitted one whose golden differs (a failure whose diff
// holds "<!--" and "]]>"), a near-miss refused for another reason than it
// names (a failure) and one that names no reason (unchecked), both with
// hostile names and bodies. It returns root.
func hostileTree(t *testing.T, root string) string {
	t.Helper()
	src := filepath.Join("..", "fixtures", "review_status")
	tool := filepath.Join(root, "review_status")
	accepted := filepath.Join(tool, "v2", "accepted")
	near := filepath.Join(tool, "v2", "near-miss")
	for _, d := range []string{accepted, near} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	read := func(p string) []byte {
		b, err := os.ReadFile(filepath.Join(src, p))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	body, golden := read("v2/accepted/approved.json"), read("v2/accepted/approved.agent.json")
	files := map[string][]byte{
		filepath.Join(tool, "defaults.meta.yaml"): read("defaults.meta.yaml"),
		// A golden that differs: the projection suite fails with a diff.
		filepath.Join(accepted, "gold<!--x]]>.json"):       body,
		filepath.Join(accepted, "gold<!--x]]>.agent.json"): []byte(`{"note":"<!-- ]]> \u0001 \"q\""}` + "\n"),
		// Refused as not JSON, expecting another reason: a failure.
		filepath.Join(near, "n<!--\x01fail.html"):      []byte("<!DOCTYPE html><!-- ]]> \x01\x1b[2J \"q\" --><p>502</p>"),
		filepath.Join(near, "n<!--\x01fail.meta.yaml"): []byte("expect: {outcome: refused, reason: schema.additionalProperties}\n"),
		// No reason named: unchecked.
		filepath.Join(near, "u]]>\x02unchecked.html"): []byte("<![CDATA[ ]]> <!-- \x7f"),
	}
	for _, n := range hostileNames {
		files[filepath.Join(accepted, n+".json")] = body
		files[filepath.Join(accepted, n+".agent.json")] = golden
	}
	for p, b := range files {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}
