package fileio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// A fixture tree or a contract folder arrives in a pull request, so no file
// beneath it is reached through a symbolic link: a link could print a file
// from outside the tree into a report (a "fixture" pointing at a secret), or
// make a write land outside it. Tree is the one way airlock reads and
// writes beneath such a folder.
//
// Every path given to a Tree method is an OS path beneath Tree.Dir (as the
// callers build them with filepath.Join). Each folder on the way down from
// Dir is checked with lstat and opened as an os.Root of its own, so the
// check and the open see the same folder; the last component is lstat'ed,
// opened, and the opened file must be the one checked. A symbolic link
// anywhere below Dir is an error wrapping ErrSymlink that names it; a path
// not beneath Dir is an error wrapping ErrOutside. Dir itself may be a
// link: the user named it.

// Errors of the Tree methods, wrapped in an *fs.PathError naming the OS
// path of the offending component.
var (
	// ErrSymlink: a component of the path beneath the tree is a symbolic link.
	ErrSymlink = errors.New("a symbolic link, which airlock does not follow")
	// ErrOutside: the path is not beneath the tree's folder.
	ErrOutside = errors.New("outside the tree")
)

// Tree is a folder read and written without following symbolic links
// beneath it. The zero value is unusable; a Tree is a value and safe for
// concurrent use.
type Tree struct {
	// Dir is the folder, an OS path.
	Dir string
}

// NewTree returns the tree of folder dir.
func NewTree(dir string) Tree { return Tree{Dir: filepath.Clean(dir)} }

// rel returns p relative to t.Dir, slash-separated ("." for Dir itself).
func (t Tree) rel(p string) (string, error) {
	r, err := filepath.Rel(t.Dir, filepath.Clean(p))
	if err != nil {
		if ad, e1 := filepath.Abs(t.Dir); e1 == nil {
			if ap, e2 := filepath.Abs(p); e2 == nil {
				r, err = filepath.Rel(ad, ap)
			}
		}
	}
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", &fs.PathError{Op: "open", Path: p, Err: fmt.Errorf("%w %s", ErrOutside, t.Dir)}
	}
	return filepath.ToSlash(r), nil
}

// openDir opens folder rel ("." or slash-separated, relative to Dir) with
// every component checked; create makes missing folders (mode 0755).
func (t Tree) openDir(rel string, create bool) (*os.Root, error) {
	cur, err := os.OpenRoot(t.Dir)
	if err != nil {
		return nil, err
	}
	if rel == "." {
		return cur, nil
	}
	walked := t.Dir
	for c := range strings.SplitSeq(rel, "/") {
		walked = filepath.Join(walked, c)
		st, err := cur.Lstat(c)
		if create && errors.Is(err, fs.ErrNotExist) {
			if err = cur.Mkdir(c, 0o755); err == nil || errors.Is(err, fs.ErrExist) {
				st, err = cur.Lstat(c)
			}
		}
		if err == nil {
			err = isFolder(st)
		}
		var next *os.Root
		if err == nil {
			next, err = cur.OpenRoot(c)
		}
		cur.Close()
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: walked, Err: unwrapPath(err)}
		}
		cur = next
	}
	return cur, nil
}

// parent opens the folder holding p and returns it with p's last component.
func (t Tree) parent(p string, create bool) (*os.Root, string, error) {
	rel, err := t.rel(p)
	if err != nil {
		return nil, "", err
	}
	if rel == "." {
		return nil, "", &fs.PathError{Op: "open", Path: p, Err: fs.ErrInvalid}
	}
	dir, err := t.openDir(path.Dir(rel), create)
	if err != nil {
		return nil, "", err
	}
	return dir, path.Base(rel), nil
}

func isFolder(st fs.FileInfo) error {
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		return ErrSymlink
	case !st.IsDir():
		return syscall.ENOTDIR
	}
	return nil
}

func unwrapPath(err error) error {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ReadFile reads p, which must be a regular file of at most max bytes
// reached without a link: a link is ErrSymlink, a device, pipe or folder
// ErrNotRegular, a larger file ErrTooLarge (found before reading more than
// max+1 bytes), a missing one fs.ErrNotExist.
func (t Tree) ReadFile(p string, max int64) ([]byte, error) {
	dir, base, err := t.parent(p, false)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	f, err := openChecked(dir, base, max)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: unwrapPath(err)}
	}
	defer f.Close()
	return readAtMost(f, max)
}

// ReadPrefix reads at most n bytes of p, a regular file of any size
// reached without a link (else the errors of ReadFile).
func (t Tree) ReadPrefix(p string, n int64) ([]byte, error) {
	dir, base, err := t.parent(p, false)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	f, err := openChecked(dir, base, math.MaxInt64)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: unwrapPath(err)}
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}

// openChecked opens regular file name of dir after lstat says it is one,
// and makes sure the file opened is the file checked.
func openChecked(dir *os.Root, name string, max int64) (*os.File, error) {
	st, err := dir.Lstat(name)
	if err != nil {
		return nil, err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return nil, ErrSymlink
	}
	if err := check(st, max); err != nil {
		return nil, err
	}
	f, err := dir.Open(name)
	if err != nil {
		return nil, err
	}
	if ost, err := f.Stat(); err != nil || !os.SameFile(st, ost) {
		f.Close()
		return nil, ErrSymlink // replaced between the check and the open
	}
	return f, nil
}

// Lstat returns the file information of p without following a link at its
// last component (the folders above it are checked as ReadFile does).
func (t Tree) Lstat(p string) (fs.FileInfo, error) {
	dir, base, err := t.parent(p, false)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	st, err := dir.Lstat(base)
	if err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: p, Err: unwrapPath(err)}
	}
	return st, nil
}

// Exists reports whether p names anything (a link included).
func (t Tree) Exists(p string) bool {
	_, err := t.Lstat(p)
	return err == nil
}

// ReadDir lists folder p (which is Dir or beneath it), sorted by name. The
// entries' types are their own (a link is a link).
func (t Tree) ReadDir(p string) ([]fs.DirEntry, error) {
	rel, err := t.rel(p)
	if err != nil {
		return nil, err
	}
	dir, err := t.openDir(rel, false)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	f, err := dir.Open(".")
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: unwrapPath(err)}
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: p, Err: unwrapPath(err)}
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

// FS returns the tree as an fs.FS (also fs.StatFS and fs.ReadDirFS) whose
// names are relative to Dir: Open and Stat refuse a link anywhere (an
// error wrapping ErrSymlink) and anything but a regular file or a folder
// (ErrNotRegular). gate.LoadDir reads a contract folder through it.
func (t Tree) FS() fs.FS { return treeFS{t} }

type treeFS struct{ t Tree }

func (f treeFS) osPath(op, name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	return filepath.Join(f.t.Dir, filepath.FromSlash(name)), nil
}

func (f treeFS) Open(name string) (fs.File, error) {
	p, err := f.osPath("open", name)
	if err != nil {
		return nil, err
	}
	if name == "." {
		dir, err := f.t.openDir(".", false)
		if err != nil {
			return nil, err
		}
		defer dir.Close()
		return dir.Open(".")
	}
	dir, base, err := f.t.parent(p, false)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	st, err := dir.Lstat(base)
	if err == nil && st.IsDir() {
		return dir.Open(base) // checked: not a link
	}
	file, err := openChecked(dir, base, math.MaxInt64)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: unwrapPath(err)}
	}
	return file, nil
}

func (f treeFS) Stat(name string) (fs.FileInfo, error) {
	p, err := f.osPath("stat", name)
	if err != nil {
		return nil, err
	}
	if name == "." {
		return os.Stat(f.t.Dir)
	}
	st, err := f.t.Lstat(p)
	if err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "stat", Path: p, Err: ErrSymlink}
	}
	return st, err
}

func (f treeFS) ReadDir(name string) ([]fs.DirEntry, error) {
	p, err := f.osPath("readdir", name)
	if err != nil {
		return nil, err
	}
	return f.t.ReadDir(p)
}
