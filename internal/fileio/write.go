package fileio

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Every file airlock writes goes through a temporary file in the target's
// folder (its name starts with ".airlock-", which fixture discovery skips),
// so an interrupted write never leaves a partial file: WriteFileAtomic
// replaces (goldens, reports), CreateAll never overwrites (recordings,
// mutants, promoted sidecars).
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

// tempPattern is the pattern of the temporary files the writers make
// (os.CreateTemp syntax); they live only while a writer runs.
const tempPattern = ".airlock-*.tmp"

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

// NewFile is one file for CreateAll: a path and its whole content.
type NewFile struct {
	Path string
	Data []byte
}

// CreateAll creates every file (dir is made if missing) or none: each is
// written to a temporary file first, then hard-linked into place, which
// fails when the name exists (ErrExists), so nothing is overwritten. A
// failure or a cancelled ctx removes the files already linked, and the
// temporary files are removed on return.
func CreateAll(ctx context.Context, dir string, files []NewFile) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%w: %v", ErrUnwritable, err)
	}
	tempNames := make([]string, 0, len(files))
	defer func() {
		for _, t := range tempNames {
			os.Remove(t)
		}
	}()
	for _, f := range files {
		tmp, err := writeTemp(filepath.Dir(f.Path), f.Data)
		if tmp != "" {
			tempNames = append(tempNames, tmp)
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrUnwritable, err)
		}
	}
	var linked []string
	defer func() {
		if err != nil {
			for _, l := range linked {
				os.Remove(l)
			}
		}
	}()
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := LinkNew(tempNames[i], f.Path); err != nil {
			return err
		}
		linked = append(linked, f.Path)
	}
	return nil
}

// LinkNew puts src's content at dst without ever replacing dst: a hard
// link, or an exclusive create and copy where links are not supported.
// A taken dst is ErrExists; anything else ErrUnwritable.
func LinkNew(src, dst string) error {
	err := os.Link(src, dst)
	if err == nil {
		return nil
	}
	if os.IsExist(err) {
		return fmt.Errorf("%w: %s", ErrExists, dst)
	}
	data, rerr := os.ReadFile(src)
	if rerr != nil {
		return fmt.Errorf("%w: %v", ErrUnwritable, err)
	}
	f, ferr := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if ferr != nil {
		if os.IsExist(ferr) {
			return fmt.Errorf("%w: %s", ErrExists, dst)
		}
		return fmt.Errorf("%w: %v", ErrUnwritable, ferr)
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(dst)
		return fmt.Errorf("%w: %v", ErrUnwritable, werr)
	}
	return nil
}
