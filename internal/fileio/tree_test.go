package fileio_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockdev/airlock/internal/fileio"
)

// hostileTree makes a tree whose every level holds a link to a secret
// outside it, next to real files.
func hostileTree(t *testing.T) (root, secret string) {
	t.Helper()
	base := t.TempDir()
	secret = filepath.Join(base, "secret.json")
	root = filepath.Join(base, "tree")
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		t.Helper()
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	write(secret, `{"token":"outside"}`)
	write(filepath.Join(root, "a", "b", "real.json"), `{}`)
	link(secret, filepath.Join(root, "a", "b", "creds.json"))       // a linked file
	link("real.json", filepath.Join(root, "a", "b", "inside.json")) // a link that stays inside
	link(filepath.Dir(secret), filepath.Join(root, "a", "out"))     // a linked folder
	link("b", filepath.Join(root, "a", "alias"))                    // a folder link inside
	if err := os.MkdirAll(filepath.Join(base, "elsewhere"), 0o755); err != nil {
		t.Fatal(err)
	}
	link(filepath.Join(base, "elsewhere"), filepath.Join(root, "a", "recorded"))
	return root, secret
}

// No read beneath a tree goes through a link, whether it leaves the tree
// or not, and every refusal names the link.
func TestTreeReadsFollowNoLink(t *testing.T) {
	root, _ := hostileTree(t)
	tr := fileio.NewTree(root)
	if b, err := tr.ReadFile(filepath.Join(root, "a", "b", "real.json"), 10); err != nil || string(b) != "{}" {
		t.Fatalf("a real file: %q, %v", b, err)
	}
	for _, p := range []string{
		filepath.Join(root, "a", "b", "creds.json"),
		filepath.Join(root, "a", "b", "inside.json"),
		filepath.Join(root, "a", "out", "secret.json"),
		filepath.Join(root, "a", "alias", "real.json"),
	} {
		_, err := tr.ReadFile(p, 1<<20)
		if !errors.Is(err, fileio.ErrSymlink) {
			t.Errorf("ReadFile(%s): %v, want ErrSymlink", p, err)
		}
		if _, err := tr.ReadPrefix(p, 10); !errors.Is(err, fileio.ErrSymlink) {
			t.Errorf("ReadPrefix(%s): %v, want ErrSymlink", p, err)
		}
		if err != nil && !strings.Contains(err.Error(), "a"+string(filepath.Separator)) {
			t.Errorf("the error does not name the path: %v", err)
		}
	}
	if _, err := tr.ReadDir(filepath.Join(root, "a", "out")); !errors.Is(err, fileio.ErrSymlink) {
		t.Errorf("ReadDir through a linked folder: %v", err)
	}
	if _, err := tr.ReadFile(filepath.Join(root, "..", "secret.json"), 100); !errors.Is(err, fileio.ErrOutside) {
		t.Errorf("a path outside the tree: %v", err)
	}
	if _, err := tr.ReadFile(filepath.Join(root, "a"), 100); !errors.Is(err, fileio.ErrNotRegular) {
		t.Errorf("a folder: %v", err)
	}

	fsys := tr.FS()
	if _, err := fs.ReadFile(fsys, "a/b/real.json"); err != nil {
		t.Errorf("FS: a real file: %v", err)
	}
	for _, name := range []string{"a/b/creds.json", "a/out/secret.json", "a/alias/real.json"} {
		if _, err := fs.ReadFile(fsys, name); !errors.Is(err, fileio.ErrSymlink) {
			t.Errorf("FS.Open(%s): %v, want ErrSymlink", name, err)
		}
		if _, err := fs.Stat(fsys, name); !errors.Is(err, fileio.ErrSymlink) {
			t.Errorf("FS.Stat(%s): %v, want ErrSymlink", name, err)
		}
	}
	if entries, err := fs.ReadDir(fsys, "a/b"); err != nil || len(entries) != 3 {
		t.Errorf("FS.ReadDir: %v, %v", entries, err)
	}
}

// No write goes through a linked folder, and nothing lands outside.
func TestTreeWritesFollowNoLink(t *testing.T) {
	root, _ := hostileTree(t)
	ctx := context.Background()
	w, err := fileio.NewTree(root).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, dir := range []string{filepath.Join(root, "a", "recorded"), filepath.Join(root, "a", "recorded", "deeper"), filepath.Join(root, "a", "alias")} {
		err := w.CreateAll(ctx, dir, []fileio.NewFile{{Path: filepath.Join(dir, "x.json"), Data: []byte("{}")}})
		if !errors.Is(err, fileio.ErrSymlink) {
			t.Errorf("CreateAll into %s: %v, want ErrSymlink", dir, err)
		}
		if err := w.WriteFileAtomic(ctx, filepath.Join(dir, "x.json"), []byte("{}")); !errors.Is(err, fileio.ErrSymlink) {
			t.Errorf("WriteFileAtomic into %s: %v, want ErrSymlink", dir, err)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(filepath.Dir(root), "elsewhere")); len(entries) != 0 {
		t.Errorf("a write landed outside the tree: %v", entries)
	}
	if err := w.CreateAll(ctx, filepath.Join(root, "..", "x"), []fileio.NewFile{{Path: filepath.Join(root, "..", "x", "y"), Data: nil}}); !errors.Is(err, fileio.ErrOutside) {
		t.Errorf("a write outside the tree: %v", err)
	}
}

// journalFile writes a journal as a killed writer would have left it.
func journalFile(t *testing.T, root, name string, lines ...string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, fileio.JournalPrefix+name), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustLink(t *testing.T, a, b string) {
	t.Helper()
	if err := os.Link(a, b); err != nil {
		t.Fatal(err)
	}
}

func present(p string) bool { _, err := os.Lstat(p); return err == nil }

// Recover rolls back an uncommitted op, rolls forward a committed one,
// removes listed temporary files and the journal, and removes nothing a
// planted journal names that has no twin.
func TestRecover(t *testing.T) {
	root := t.TempDir()
	k := filepath.Join(root, "t", "v1", "recorded")
	acc := filepath.Join(root, "t", "v1", "accepted")
	// A record killed after linking the body, before the sidecar.
	mustWrite(t, filepath.Join(k, ".airlock-1.tmp"), "{}")
	mustWrite(t, filepath.Join(k, ".airlock-2.tmp"), "meta")
	mustLink(t, filepath.Join(k, ".airlock-1.tmp"), filepath.Join(k, "r.json"))
	// A promote killed after its commit, between its removals.
	mustWrite(t, filepath.Join(k, "p.json"), "{}")
	mustWrite(t, filepath.Join(k, "p.meta.yaml"), "old")
	mustLink(t, filepath.Join(k, "p.meta.yaml"), filepath.Join(k, ".airlock-4.tmp"))
	mustWrite(t, filepath.Join(acc, ".airlock-3.tmp"), "new")
	mustLink(t, filepath.Join(k, "p.json"), filepath.Join(acc, "p.json"))
	mustLink(t, filepath.Join(acc, ".airlock-3.tmp"), filepath.Join(acc, "p.meta.yaml"))
	// Real fixtures a planted journal tries to remove.
	mustWrite(t, filepath.Join(acc, "keep.json"), "{}")
	mustWrite(t, filepath.Join(acc, "keep2.json"), "{}")
	journalFile(t, root, "killed",
		`{"temp":"t/v1/recorded/.airlock-1.tmp"}`,
		`{"temp":"t/v1/recorded/.airlock-2.tmp"}`,
		`{"op":1,"create":[{"path":"t/v1/recorded/r.json","from":"t/v1/recorded/.airlock-1.tmp"},{"path":"t/v1/recorded/r.meta.yaml","from":"t/v1/recorded/.airlock-2.tmp"}]}`,
		`{"temp":"t/v1/accepted/.airlock-3.tmp"}`,
		`{"temp":"t/v1/recorded/.airlock-4.tmp"}`,
		`{"op":2,"create":[{"path":"t/v1/accepted/p.json","from":"t/v1/recorded/p.json"},{"path":"t/v1/accepted/p.meta.yaml","from":"t/v1/accepted/.airlock-3.tmp"}],"remove":[{"path":"t/v1/recorded/p.json","twin":"t/v1/accepted/p.json"},{"path":"t/v1/recorded/p.meta.yaml","twin":"t/v1/recorded/.airlock-4.tmp"}]}`,
		`{"commit":2}`,
	)
	journalFile(t, root, "planted",
		`{"op":1,"create":[{"path":"t/v1/accepted/keep.json","from":"t/v1/accepted/keep2.json"}]}`,
		`{"op":2,"create":[],"remove":[{"path":"t/v1/accepted/keep.json","twin":"t/v1/accepted/keep2.json"},{"path":"t/v1/accepted/keep2.json","unless":"t/v1/recorded/none"},{"path":"t/v1/accepted/keep2.json","twin":""},{"path":"t/v1/accepted/keep2.json"}]}`,
		`{"commit":2}`,
		`{"temp":"t/v1/accepted/keep.json"}`,
		`{"temp":"../../outside.tmp"}`,
	)
	if err := fileio.NewTree(root).Recover(); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"t/v1/recorded/r.json", "t/v1/recorded/.airlock-1.tmp", "t/v1/recorded/.airlock-2.tmp", "t/v1/accepted/.airlock-3.tmp", "t/v1/recorded/.airlock-4.tmp", "t/v1/recorded/p.json", "t/v1/recorded/p.meta.yaml", fileio.JournalPrefix + "killed", fileio.JournalPrefix + "planted"} {
		if present(filepath.Join(root, gone)) {
			t.Errorf("%s remains after recovery", gone)
		}
	}
	for _, kept := range []string{"t/v1/accepted/p.json", "t/v1/accepted/p.meta.yaml", "t/v1/accepted/keep.json", "t/v1/accepted/keep2.json"} {
		if !present(filepath.Join(root, kept)) {
			t.Errorf("%s was removed by recovery", kept)
		}
	}
	// A planted journal removes nothing without a hard-linked twin: not
	// with an "unless" guard, an empty twin or none.
	if present(filepath.Join(filepath.Dir(root), "outside.tmp")) {
		t.Error("recovery reached outside the tree")
	}
}

// A live writer's journal is left alone by a concurrent Recover.
func TestRecoverLeavesLiveWriter(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	w, err := fileio.NewTree(root).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.CreateAll(ctx, filepath.Join(root, "d"), []fileio.NewFile{{Path: filepath.Join(root, "d", "x.json"), Data: []byte("{}")}}); err != nil {
		t.Fatal(err)
	}
	if err := fileio.NewTree(root).Recover(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(root)
	found := false
	for _, e := range entries {
		found = found || strings.HasPrefix(e.Name(), fileio.JournalPrefix)
	}
	if !found {
		t.Error("Recover removed a live writer's journal")
	}
	ctx2, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := fileio.NewTree(root).Lock(ctx2); !errors.Is(err, context.Canceled) {
		t.Errorf("a second Lock while the tree is held: %v, want to wait until cancelled", err)
	}
	w.Close()
	if !present(filepath.Join(root, "d", "x.json")) {
		t.Error("the written file is gone")
	}
}
