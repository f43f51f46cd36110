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

// WriteFilesAtomic writes every file or none: a target it cannot write
// (its folder is missing) leaves the others as they were and no temporary
// file behind; a rename that fails after another succeeded puts the first
// back.
func TestWriteFilesAtomic(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	old, fresh := filepath.Join(dir, "old.json"), filepath.Join(dir, "new.xml")
	if err := os.WriteFile(old, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		if b, err := os.ReadFile(old); err != nil || string(b) != "old" {
			t.Errorf("%s: old.json = %q, %v; want \"old\" untouched", when, b, err)
		}
		if _, err := os.Stat(fresh); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: new.xml exists (%v); want no new output", when, err)
		}
		for _, n := range names(t, dir) {
			if strings.HasPrefix(n, ".airlock-") {
				t.Errorf("%s: temporary file %s left behind", when, n)
			}
		}
	}
	missing := filepath.Join(dir, "no-such-folder", "x.sarif")
	err := fileio.WriteFilesAtomic(ctx, []string{old, fresh, missing}, [][]byte{[]byte("A"), []byte("B"), []byte("C")})
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("missing folder: err = %v, want one naming %s", err, missing)
	}
	check("missing folder")

	// A folder where the last file goes: its rename fails after the others.
	taken := filepath.Join(dir, "taken")
	if err := os.MkdirAll(filepath.Join(taken, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	err = fileio.WriteFilesAtomic(ctx, []string{old, fresh, taken}, [][]byte{[]byte("A"), []byte("B"), []byte("C")})
	if err == nil || !strings.Contains(err.Error(), taken) {
		t.Fatalf("rename failure: err = %v, want one naming %s", err, taken)
	}
	check("rename failure")

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := fileio.WriteFilesAtomic(cancelled, []string{old, fresh}, [][]byte{[]byte("A"), []byte("B")}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: err = %v", err)
	}
	check("cancelled")

	if err := fileio.WriteFilesAtomic(ctx, []string{old, fresh}, [][]byte{[]byte("A"), []byte("B")}); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{old: "A", fresh: "B"} {
		if b, err := os.ReadFile(p); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", p, b, err, want)
		}
	}
	if n := names(t, dir); len(n) != 3 {
		t.Errorf("folder holds %v; want old.json, new.xml, taken", n)
	}
}
