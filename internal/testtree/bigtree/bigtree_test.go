package bigtree_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/testtree/bigtree"
)

// The count Write returns is the number of fixtures discovery (what
// airlock run sees) finds in the tree it wrote, though the source holds an
// MCP output schema and a hidden file beside the bodies.
func TestWriteCountsWhatRunSees(t *testing.T) {
	src := filepath.Join(t.TempDir(), "fixtures")
	if err := os.CopyFS(src, os.DirFS(filepath.Join("..", "..", "..", "fixtures"))); err != nil {
		t.Fatal(err)
	}
	accepted := filepath.Join(src, "review_status", "v2", "accepted")
	for name, data := range map[string]string{
		"approved" + fixture.OutputSchemaSuffix: `{"type": "object"}`,
		".DS_Store":                             "finder",
	} {
		if err := os.WriteFile(filepath.Join(accepted, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before, err := fixture.Open(filepath.Join("..", "..", "..", "schemas"), src, fixture.Filter{}, gate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	out := t.TempDir()
	written, err := bigtree.Write(out, filepath.Join("..", "..", "..", "schemas"), src, n)
	if err != nil {
		t.Fatal(err)
	}
	set, err := fixture.Open(filepath.Join(out, "schemas"), filepath.Join(out, "fixtures"), fixture.Filter{}, gate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if written != len(set.Fixtures) {
		t.Fatalf("Write says %d fixtures; discovery finds %d", written, len(set.Fixtures))
	}
	if written < n {
		t.Fatalf("Write wrote %d fixtures, fewer than the %d asked for", written, n)
	}
	if copies := (n + len(before.Fixtures) - 1) / len(before.Fixtures); written != copies*len(before.Fixtures) {
		t.Fatalf("Write wrote %d fixtures; %d copies of the %d of the source are %d", written, copies, len(before.Fixtures), copies*len(before.Fixtures))
	}
	withSchema := 0
	for _, f := range set.Fixtures {
		if f.OutputSchema != "" {
			withSchema++
		}
	}
	if want := written / len(before.Fixtures); withSchema != want {
		t.Fatalf("%d fixtures have their output schema; want one per copy, %d", withSchema, want)
	}
}
