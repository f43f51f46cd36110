package schemadiff

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/airlockdev/airlock/reports"
)

// TestPlaceNearestEnclosing: a NewPointer the file does not hold (a
// keyword the new schema lacks, a $ref the walk cannot follow) is placed
// at its nearest enclosing value; a manifest change (File set) is left
// alone.
func TestPlaceNearestEnclosing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "new.json")
	text := "{\"type\": \"object\",\n \"properties\": {\n  \"a\": {\"type\": \"string\"}\n }}\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := CompileFile(path)
	if err != nil {
		t.Fatal(err)
	}
	changes := []reports.Change{
		{NewPointer: "/properties/a/maxLength"},
		{NewPointer: "/properties/a/$ref/type"},
		{NewPointer: "/properties/a/type"},
		{NewPointer: "/limits/max_bytes", File: "contract.yaml", Line: 7},
	}
	n.place(changes)
	for i, want := range [][2]int{{3, 3}, {3, 3}, {3, 9}, {0, 0}} {
		c := changes[i]
		if got := [2]int{c.NewLine, c.NewColumn}; got != want {
			t.Errorf("%s: placed at %v, want %v", c.NewPointer, got, want)
		}
		if (c.NewFile == path) != (want[0] > 0) {
			t.Errorf("%s: NewFile %q", c.NewPointer, c.NewFile)
		}
	}
}
