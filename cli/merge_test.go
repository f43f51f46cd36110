package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"

	"github.com/airlockdev/airlock/reports"
)

// TestShardMergeHostile runs the hostile fixture tree (names with control
// characters, backslashes, markup) unsharded and as three shards, checks
// each shard's JUnit report against junit-10.xsd, and checks that airlock
// merge gives the unsharded reports, times aside: the names' escapes
// (\\, \xNN) must not change the order or the text of a testcase.
func TestShardMergeHostile(t *testing.T) {
	xmllint, _ := junitTools(t)
	xsd := filepath.Join("..", "reports", "testdata", "junit-10.xsd")
	dir := t.TempDir()
	hostile := hostileTree(t, filepath.Join(dir, "hostile"))
	airlock := func(want int, args ...string) {
		t.Helper()
		var out, errb bytes.Buffer
		if got := Main(context.Background(), args, Stdio{Out: &out, Err: &errb}, Options{}); got != want {
			t.Fatalf("airlock %v: exit %d, want %d\n%s%s", args, got, want, out.String(), errb.String())
		}
	}
	base := []string{"--schemas", "../schemas", "--fixtures", hostile, "--tool", "review_status"}
	p := func(name string) string { return filepath.Join(dir, name) }
	airlock(ExitFindings, append([]string{"run", "--junit", p("full.xml"), "--json", p("full.json")}, base...)...)
	merge := []string{"merge", "--junit", p("merged.xml"), "--json", p("merged.json")}
	for k := 1; k <= 3; k++ {
		x, j := p(fmt.Sprintf("s%d.xml", k)), p(fmt.Sprintf("s%d.json", k))
		// A shard without a failing fixture exits 0; the exit code is not
		// what this test is about.
		args := append([]string{"run", "--shard", fmt.Sprintf("%d/3", k), "--junit", x, "--json", j}, base...)
		var out, errb bytes.Buffer
		if got := Main(context.Background(), args, Stdio{Out: &out, Err: &errb}, Options{}); got != ExitOK && got != ExitFindings {
			t.Fatalf("airlock %v: exit %d\n%s%s", args, got, out.String(), errb.String())
		}
		if b, err := exec.Command(xmllint, "--noout", "--schema", xsd, x).CombinedOutput(); err != nil {
			t.Errorf("xmllint --schema junit-10.xsd %s: %v\n%s", x, err, b)
		}
		merge = append(merge, j, x)
	}
	airlock(ExitOK, merge...)
	if b, err := exec.Command(xmllint, "--noout", "--schema", xsd, p("merged.xml")).CombinedOutput(); err != nil {
		t.Errorf("xmllint --schema junit-10.xsd merged.xml: %v\n%s", err, b)
	}
	times := regexp.MustCompile(`"duration_ns": \d+|time="[0-9.]+"`)
	for _, pair := range [][2]string{{"full.xml", "merged.xml"}, {"full.json", "merged.json"}} {
		want, err1 := os.ReadFile(p(pair[0]))
		got, err2 := os.ReadFile(p(pair[1]))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if w, g := times.ReplaceAll(want, nil), times.ReplaceAll(got, nil); !bytes.Equal(w, g) {
			t.Errorf("%s differs from the unsharded %s:\n%s\n----\n%s", pair[1], pair[0], g, w)
		}
	}
}

// TestMergeRefusesTwoCheckouts is the repro of two runners whose
// checkouts spell file names differently: one tree with six copies of an
// accepted fixture named café1..6.json in NFC (Linux), the same tree with
// the names in NFD (macOS). The shards split both alike (keys are
// NFC-normalised before hashing: between them they check every fixture
// once), yet their reports name different fixtures, and merge refuses
// them, naming the files, rather than join reports of two fixture sets.
func TestMergeRefusesTwoCheckouts(t *testing.T) {
	dir := t.TempDir()
	body, err := os.ReadFile("../fixtures/review_status/v2/accepted/approved.json")
	if err != nil {
		t.Fatal(err)
	}
	trees := map[string]string{}
	for form, f := range map[string]norm.Form{"a": norm.NFC, "b": norm.NFD} {
		root := filepath.Join(dir, form)
		if err := os.CopyFS(filepath.Join(root, "review_status"), os.DirFS("../fixtures/review_status")); err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= 6; i++ {
			name := f.String(fmt.Sprintf("caf\u00e9%d.json", i))
			if err := os.WriteFile(filepath.Join(root, "review_status", "v2", "accepted", name), body, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		trees[form] = root
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	airlock := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := Main(context.Background(), args, Stdio{Out: &out, Err: &errb}, Options{})
		return code, out.String() + errb.String()
	}
	for _, r := range []struct{ tree, shard, out string }{{"a", "1/2", "a1"}, {"b", "2/2", "b2"}} {
		args := []string{"run", "--schemas", "../schemas", "--fixtures", trees[r.tree], "--tool", "review_status", "--shard", r.shard,
			"--junit", p(r.out + ".xml"), "--json", p(r.out + ".json"), "--sarif", p(r.out + ".sarif")}
		if code, out := airlock(args...); code != ExitOK && code != ExitFindings {
			t.Fatalf("airlock %v: exit %d\n%s", args, code, out)
		}
	}

	// Between them, the shards checked each fixture once.
	seen := map[string]int{}
	for _, name := range []string{"a1.json", "b2.json"} {
		var doc struct {
			Cases []struct{ Kind, Suite, Name string }
		}
		b, err := os.ReadFile(p(name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		for _, c := range doc.Cases {
			if c.Kind == "accepted" && c.Suite == "parse" {
				seen[norm.NFC.String(c.Name)]++
			}
		}
	}
	for _, name := range []string{"approved.json", "other-change.json", "caf\u00e91.json", "caf\u00e96.json"} {
		if seen[name] != 1 {
			t.Errorf("%s checked by %d shards; want 1 (seen %v)", name, seen[name], seen)
		}
	}

	want := regexp.MustCompile(`^airlock: shards of different fixture sets: \S*a1\.(json|xml|sarif) \(shard 1/2, set [0-9a-f]{32}\) and \S*b2\.(json|xml|sarif) \(shard 2/2, set [0-9a-f]{32}\); run every shard on the same checkout with the same filters\n$`)
	for _, kind := range []struct{ flag, ext string }{{"--json", "json"}, {"--junit", "xml"}, {"--sarif", "sarif"}} {
		code, out := airlock("merge", kind.flag, p("merged."+kind.ext), p("a1."+kind.ext), p("b2."+kind.ext))
		if code != ExitUsage || !want.MatchString(out) {
			t.Errorf("merge %s: exit %d, output %q; want exit %d and %s", kind.flag, code, out, ExitUsage, want)
		}
		if _, err := os.Stat(p("merged." + kind.ext)); !os.IsNotExist(err) {
			t.Errorf("merge %s wrote merged.%s (%v)", kind.flag, kind.ext, err)
		}
	}
}

// TestMergeJUnitTotalCap checks that JUnit inputs adding up to more than
// reports.MaxMergeJUnitTotal bytes are refused (exit 2) before they are
// decoded, though each is under MaxMergeInput and all under
// MaxMergeTotal, and that no output is written.
func TestMergeJUnitTotalCap(t *testing.T) {
	dir := t.TempDir()
	var args []string
	for k := 1; k <= 2; k++ {
		head := fmt.Sprintf(`<testsuites name="airlock run shard %d/2 set 0123456789abcdef0123456789abcdef">`, k)
		b := append([]byte(head), bytes.Repeat([]byte(" "), reports.MaxMergeJUnitTotal/2)...)
		name := filepath.Join(dir, fmt.Sprintf("s%d.xml", k))
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, name)
	}
	out := filepath.Join(dir, "m.xml")
	var stdout, stderr bytes.Buffer
	got := Main(context.Background(), append([]string{"merge", "--junit", out}, args...), Stdio{Out: &stdout, Err: &stderr}, Options{})
	if got != ExitUsage {
		t.Fatalf("exit %d, want %d\n%s", got, ExitUsage, stderr.String())
	}
	want := fmt.Sprintf("the JUnit inputs add up to more than %d bytes", reports.MaxMergeJUnitTotal)
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s written", out)
	}
}
