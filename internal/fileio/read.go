// Package fileio is airlock's confined file access: reading regular files
// of bounded size from the operating system or from an fs.FS, so that no
// path a user or a contract names can make airlock block on a device or a
// pipe, or exhaust memory; and writing through temporary files, so that no
// file is ever half-written or overwritten by accident (write.go).
package fileio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular and ErrTooLarge are wrapped by the read functions' errors.
var (
	// ErrNotRegular: a device, a pipe, a socket or a folder.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge: more bytes than the caller's cap.
	ErrTooLarge = errors.New("file too large")
)

// ReadRegularFile reads path, which must be a regular file (after following
// links) of at most max bytes: a device, a pipe or a larger file is an error
// wrapping ErrNotRegular or ErrTooLarge, found before reading more than
// max+1 bytes. A missing file is an error wrapping fs.ErrNotExist. airlock
// reads its manifests, schemas, sidecars and fixtures this way.
func ReadRegularFile(path string, max int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := check(st, max); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAtMost(f, max)
}

// ReadFS is ReadRegularFile for the file name in fsys (an fs.ValidPath,
// slash-separated, no ".." element): the same checks, through fs.Stat and
// fsys.Open, so that an embed.FS, an os.DirFS or an os.Root's FS is read
// the same way. A name that is not a valid path is an error wrapping
// fs.ErrInvalid.
func ReadFS(fsys fs.FS, name string, max int64) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if err := check(st, max); err != nil {
		return nil, err
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAtMost(f, max)
}

func check(st fs.FileInfo, max int64) error {
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%w (%s)", ErrNotRegular, st.Mode().Type())
	}
	if st.Size() > max {
		return fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, st.Size(), max)
	}
	return nil
}

// readAtMost reads r to its end, refusing more than max bytes (the file may
// have grown since it was checked).
func readAtMost(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, max)
	}
	return b, nil
}
