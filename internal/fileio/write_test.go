package fileio_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockdev/airlock/internal/fileio"
)

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), fileio.JournalPrefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// CreateAll creates every file or none, never overwrites, and leaves no
// temporary file, also when its context is cancelled.
func TestCreateAll(t *testing.T) {
	dir := t.TempDir()
	w, err := fileio.NewTree(dir).Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "a.meta.yaml")
	if err := os.WriteFile(b, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = w.CreateAll(context.Background(), dir, []fileio.NewFile{{Path: a, Data: []byte("{}")}, {Path: b, Data: []byte("new")}})
	if !errors.Is(err, fileio.ErrExists) {
		t.Fatalf("CreateAll over an existing file: %v, want ErrExists", err)
	}
	if got := names(t, dir); len(got) != 1 || got[0] != "a.meta.yaml" {
		t.Errorf("after a refused CreateAll the folder holds %v, want only the old a.meta.yaml", got)
	}
	if old, _ := os.ReadFile(b); string(old) != "old" {
		t.Errorf("the existing file was changed to %q", old)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := filepath.Join(dir, "c.json")
	if err := w.CreateAll(ctx, dir, []fileio.NewFile{{Path: c, Data: []byte("{}")}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("CreateAll with a cancelled context: %v", err)
	}
	if err := fileio.WriteFileAtomic(ctx, c, []byte("{}")); !errors.Is(err, context.Canceled) {
		t.Fatalf("WriteFileAtomic with a cancelled context: %v", err)
	}
	if got := names(t, dir); len(got) != 1 {
		t.Errorf("after cancelled writes the folder holds %v", got)
	}

	if err = w.CreateAll(context.Background(), dir, []fileio.NewFile{{Path: a, Data: []byte("{}")}, {Path: c, Data: []byte("1")}}); err != nil {
		t.Fatal(err)
	}
	if err := fileio.WriteFileAtomic(context.Background(), b, []byte("replaced")); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFileAtomic(context.Background(), a, []byte("replaced")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("the folder holds %v, want a.json, a.meta.yaml, c.json and no temporary file or journal", entries)
	}
}
