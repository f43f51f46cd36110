package fileio

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// Every file airlock writes goes through a temporary file in the target's
// folder (its name starts with ".airlock-", which fixture discovery skips),
// so an interrupted write never leaves a partial file. Inside a fixture
// tree, a Writer (journal.go) does every write: Writer.WriteFileAtomic
// replaces (goldens), Writer.CreateAll never overwrites (recordings,
// mutants), Writer.Move moves (promote). Outside one, WriteFileAtomic
// writes a report.
//
// Cancellation is the caller's context: a writer checks it before it starts
// and before each file it puts in place, and every temporary or half-created
// file is removed before the writer returns, whatever happened. There is no
// process-wide state: after one cancelled command the next one in the same
// process writes normally.

// Errors of the writers; each error they return wraps one of these or the
// context's error.
var (
	// ErrExists: the target name is taken; nothing was overwritten.
	ErrExists = errors.New("fixture exists; not overwritten")
	// ErrUnwritable: a folder cannot be created or a file not written.
	ErrUnwritable = errors.New("cannot write fixture")
)

// The temporary files the writers make are named tempPrefix, random hex,
// tempSuffix; tempPattern is that in os.CreateTemp syntax. They live only
// while a writer runs (or until recovery, for a tree's Writer).
const (
	tempPrefix  = ".airlock-"
	tempSuffix  = ".tmp"
	tempPattern = tempPrefix + "*" + tempSuffix
)

// newTempName returns a fresh temporary file name.
func newTempName() string { return tempPrefix + randomHex() + tempSuffix }

// isTempName reports whether base is named like a temporary file.
func isTempName(base string) bool {
	return strings.HasPrefix(base, tempPrefix) && strings.HasSuffix(base, tempSuffix)
}

// writeTemp writes data to a new temporary file in dir with mode 0644 and
// returns its name; on error the name is "" or a file the caller removes.
func writeTemp(dir string, data []byte) (string, error) {
	tmp, err := os.CreateTemp(dir, tempPattern)
	if err != nil {
		return "", err
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o644)
	}
	return tmp.Name(), werr
}

// WriteFileAtomic writes data to path with mode 0644, replacing any file
// there, through a temporary file and a rename: readers see the old content
// or the new, never a part. A cancelled ctx before the rename leaves path
// untouched and returns ctx.Err().
func WriteFileAtomic(ctx context.Context, path string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	tmp, err := writeTemp(filepath.Dir(path), data)
	if tmp != "" {
		defer os.Remove(tmp)
	}
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
