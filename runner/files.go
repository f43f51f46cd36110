package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/airlockdev/airlock/gate"
)

// maxGolden is the largest golden agent output read, in bytes.
const maxGolden = 16 << 20

// maxCompressedBody is the largest gzip fixture body read, in bytes.
const maxCompressedBody = 256 << 20

// readBody reads a fixture body: a regular file (no device, no pipe), of
// which a plain body is read up to limit+1 bytes (enough for the gate to
// refuse it as too large) and a gzip body whole up to maxCompressedBody.
func readBody(path string, limit int64, encoding string) ([]byte, error) {
	if enc := strings.ToLower(strings.TrimSpace(encoding)); enc == "gzip" || enc == "x-gzip" {
		return gate.ReadRegularFile(path, maxCompressedBody)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w (%s)", gate.ErrNotRegular, st.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit+1))
}

// Every file airlock writes goes through a temporary file in the target's
// folder (its name starts with a dot, which fixture discovery skips), so an
// interrupted write never leaves a partial file: WriteFileAtomic replaces
// (goldens, reports), createAll never overwrites (recordings, mutants).

// temps holds the temporary (and half-created) files being written, so that
// RemoveTemps can clean them up when the process is interrupted. After
// RemoveTemps no new temporary file is created.
var temps = struct {
	sync.Mutex
	names       map[string]bool
	interrupted bool
}{names: map[string]bool{}}

// errInterrupted is returned by writers after RemoveTemps.
var errInterrupted = errors.New("interrupted")

// RemoveTemps removes every temporary file airlock is writing at the moment
// and stops new ones. A command calls it when interrupted (SIGINT, SIGTERM)
// before exiting, so no .airlock-*.tmp file is left behind.
func RemoveTemps() {
	temps.Lock()
	defer temps.Unlock()
	temps.interrupted = true
	for name := range temps.names {
		os.Remove(name)
	}
	clear(temps.names)
}

// linkTracked links src to the new name dst and, under the same lock,
// records dst: until the caller forgets it, an interruption (RemoveTemps)
// removes it, and it is new, so nothing is lost. Holding the lock across
// both steps leaves no moment where dst exists but would survive.
func linkTracked(src, dst string) error {
	temps.Lock()
	defer temps.Unlock()
	if temps.interrupted {
		return errInterrupted
	}
	if err := linkNew(src, dst); err != nil {
		return err
	}
	temps.names[dst] = true
	return nil
}

func forget(name string) {
	temps.Lock()
	defer temps.Unlock()
	delete(temps.names, name)
}

func removeTemp(name string) {
	temps.Lock()
	defer temps.Unlock()
	os.Remove(name)
	delete(temps.names, name)
}

// writeTemp writes data to a new temporary file in dir with mode 0644 and
// returns its name; on error the name is "" or a file the caller removes
// with removeTemp.
func writeTemp(dir string, data []byte) (string, error) {
	temps.Lock()
	if temps.interrupted {
		temps.Unlock()
		return "", errInterrupted
	}
	tmp, err := os.CreateTemp(dir, ".airlock-*.tmp")
	if err != nil {
		temps.Unlock()
		return "", err
	}
	temps.names[tmp.Name()] = true
	temps.Unlock()
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o644)
	}
	return tmp.Name(), werr
}

// WriteFileAtomic writes data to path, replacing any file there, through a
// temporary file and a rename: readers see the old content or the new, never
// a part.
func WriteFileAtomic(path string, data []byte) error {
	tmp, err := writeTemp(filepath.Dir(path), data)
	if tmp != "" {
		defer removeTemp(tmp)
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// newFile is one file of a fixture to create.
type newFile struct {
	path string
	data []byte
}

// createAll creates every file in dir (made if missing) or none: each is
// written to a temporary file first, then hard-linked into place, which
// fails when the name exists (ErrFixtureExists), so nothing is overwritten;
// a failure removes the files already linked. Temporary files start with a
// dot, which discovery skips, and are removed on return.
func createAll(dir string, files []newFile) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%w: %v", ErrUnwritable, err)
	}
	tempNames := make([]string, len(files))
	defer func() {
		for _, t := range tempNames {
			if t != "" {
				removeTemp(t)
			}
		}
	}()
	for i, f := range files {
		tmp, err := writeTemp(filepath.Dir(f.path), f.data)
		tempNames[i] = tmp
		if err != nil {
			return fmt.Errorf("%w: %v", ErrUnwritable, err)
		}
	}
	var linked []string
	for i, f := range files {
		if err := linkTracked(tempNames[i], f.path); err != nil {
			for _, l := range linked {
				removeTemp(l)
			}
			return err
		}
		linked = append(linked, f.path)
	}
	for _, l := range linked {
		forget(l)
	}
	return nil
}

// linkNew puts src's content at dst without ever replacing dst: a hard
// link, or an exclusive create and copy where links are not supported.
func linkNew(src, dst string) error {
	err := os.Link(src, dst)
	if err == nil {
		return nil
	}
	if os.IsExist(err) {
		return fmt.Errorf("%w: %s", ErrFixtureExists, dst)
	}
	data, rerr := os.ReadFile(src)
	if rerr != nil {
		return fmt.Errorf("%w: %v", ErrUnwritable, err)
	}
	f, ferr := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if ferr != nil {
		if os.IsExist(ferr) {
			return fmt.Errorf("%w: %s", ErrFixtureExists, dst)
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
