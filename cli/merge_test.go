package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
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
