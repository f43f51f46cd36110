package fileio_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/airlockdev/airlock/internal/fileio"
)

func TestReadRegularFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := fileio.ReadRegularFile(file, 5); err != nil || string(b) != "12345" {
		t.Fatalf("got %q, %v", b, err)
	}
	if _, err := fileio.ReadRegularFile(file, 4); !errors.Is(err, fileio.ErrTooLarge) {
		t.Fatalf("a file over the cap: %v", err)
	}
	if _, err := fileio.ReadRegularFile(os.DevNull, 4); !errors.Is(err, fileio.ErrNotRegular) {
		t.Fatalf("a device: %v", err)
	}
	if _, err := fileio.ReadRegularFile(dir, 4); !errors.Is(err, fileio.ErrNotRegular) {
		t.Fatalf("a folder: %v", err)
	}
}

func TestReadFS(t *testing.T) {
	fsys := fstest.MapFS{
		"a/f":    {Data: []byte("12345")},
		"a/pipe": {Mode: fs.ModeNamedPipe},
	}
	if b, err := fileio.ReadFS(fsys, "a/f", 5); err != nil || string(b) != "12345" {
		t.Fatalf("got %q, %v", b, err)
	}
	if _, err := fileio.ReadFS(fsys, "a/f", 4); !errors.Is(err, fileio.ErrTooLarge) {
		t.Fatalf("a file over the cap: %v", err)
	}
	if _, err := fileio.ReadFS(fsys, "a/pipe", 4); !errors.Is(err, fileio.ErrNotRegular) {
		t.Fatalf("a pipe: %v", err)
	}
	if _, err := fileio.ReadFS(fsys, "../a/f", 4); !errors.Is(err, fs.ErrInvalid) {
		t.Fatalf("an escaping name: %v", err)
	}
	if _, err := fileio.ReadFS(fsys, "a/missing", 4); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing file: %v", err)
	}
}
