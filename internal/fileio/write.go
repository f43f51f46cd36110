package fileio

import (
	"context"
	"errors"
	"fmt"
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

// WriteFilesAtomic writes data[i] to paths[i] for every i, each with mode
// 0644 replacing any file there, all or nothing: every file is first
// written to a temporary file in its target's folder, and only when all
// are written are they renamed into place, in order. A failure or a
// cancelled ctx before the renames removes every temporary file and
// leaves every target as it was. A rename that fails after others
// succeeded (rare: the temporary file sits in the target's own folder)
// undoes them: a target that did not exist is removed, one that did is
// put back from a hard link taken before the renames (where the file
// system has none, that target keeps the new content). The error names
// the path that failed. Targets must be distinct, regular-file paths
// (the caller resolves symbolic links).
func WriteFilesAtomic(ctx context.Context, paths []string, data [][]byte) (err error) {
	return WriteFilesAtomicBefore(ctx, paths, data, nil)
}

// WriteFilesAtomicBefore is WriteFilesAtomic with a step run between the
// temporary files and the renames: once every temporary file is written,
// before any target is renamed into place, it calls before (when not
// nil); an error from it is returned as it is, with every temporary file
// removed and every target left as it was. Callers use it for outputs
// that cannot be renamed (a device such as /dev/stdout), so that a failed
// device write leaves no regular-file target created or changed.
func WriteFilesAtomicBefore(ctx context.Context, paths []string, data [][]byte, before func() error) (err error) {
	if len(paths) != len(data) {
		return errors.New("write files: not one content per path")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	temps := make([]string, len(paths))
	backups := make([]string, len(paths))
	defer func() {
		for _, t := range temps {
			if t != "" {
				os.Remove(t)
			}
		}
		for _, b := range backups {
			if b != "" {
				os.Remove(b)
			}
		}
	}()
	for i, p := range paths {
		tmp, err := writeTemp(filepath.Dir(p), data[i])
		temps[i] = tmp
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if before != nil {
		if err := before(); err != nil {
			return err
		}
	}
	existed := make([]bool, len(paths))
	for i, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			existed[i] = true
			b := filepath.Join(filepath.Dir(p), newTempName())
			if os.Link(p, b) == nil {
				backups[i] = b
			}
		}
	}
	for i, p := range paths {
		if err := os.Rename(temps[i], p); err != nil {
			for j := i - 1; j >= 0; j-- {
				switch {
				case backups[j] != "":
					if os.Rename(backups[j], paths[j]) == nil {
						backups[j] = ""
					}
				case !existed[j]:
					os.Remove(paths[j])
				}
			}
			return fmt.Errorf("%s: %w", p, err)
		}
		temps[i] = ""
	}
	return nil
}
