package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/airlockdev/airlock/internal/fileio"
)

// reportFile is one report a command writes: its path and the function
// that renders it.
type reportFile struct {
	path  string
	write func(io.Writer) error
}

// writeReports writes every report of files all or nothing: each is
// rendered in memory first, then the regular-file targets go through
// fileio.WriteFilesAtomic (a temporary file beside each target, all
// renamed only once all are written), creating missing folders. A path
// that exists and is not a regular file (/dev/stdout, a pipe) is opened
// before anything is written and written to as it is, never replaced,
// after every regular file's temporary is written and before any is
// renamed into place (a failed device write leaves no regular target
// created or changed; bytes already written to a device stay written); a symbolic link (allowed by
// --follow-symlinks only, see checkReportPaths) is followed. On any
// failure no temporary file remains, no target is created or changed
// (folders created for them are removed again), and the error names the
// path.
func writeReports(ctx context.Context, files []reportFile) (err error) {
	var paths []string
	var data [][]byte
	type device struct {
		f    *os.File
		data []byte
	}
	var devices []device
	var created []string // folders made here, deepest first
	defer func() {
		for _, d := range devices {
			d.f.Close()
		}
		if err != nil {
			for _, dir := range created {
				os.Remove(dir) // only when still empty
			}
		}
	}()
	for _, rf := range files {
		var buf bytes.Buffer
		if err := rf.write(&buf); err != nil {
			return err
		}
		path := rf.path
		if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			devices = append(devices, device{f, buf.Bytes()})
			continue
		}
		if target, err := filepath.EvalSymlinks(path); err == nil {
			path = target
		}
		var missing []string
		for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
			if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) || dir == filepath.Dir(dir) {
				break
			}
			missing = append(missing, dir)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		created = append(missing, created...)
		paths = append(paths, path)
		data = append(data, buf.Bytes())
	}
	// The devices are written once every temporary file is, before any
	// is renamed into place: a device that fails (/dev/full) leaves no
	// regular-file target created or changed.
	return fileio.WriteFilesAtomicBefore(ctx, paths, data, func() error {
		for _, d := range devices {
			if _, err := d.f.Write(d.data); err != nil {
				return &os.PathError{Op: "write", Path: d.f.Name(), Err: err}
			}
		}
		return nil
	})
}
