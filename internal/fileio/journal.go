package fileio

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Writes into a tree survive a kill -9 at any moment: each file is written
// to a temporary file and renamed or hard-linked into place (a reader sees
// the whole file or none), and every step that spans several files — a
// body and its sidecar, a promote's moves — is written in a journal first.
//
// A Writer holds the tree's lock (an exclusive flock on the tree's folder,
// released by the kernel when the process dies) and appends to its journal,
// <Dir>/.airlock-journal-<random>, one JSON object per line:
//
//	{"temp":"a/b/.airlock-<hex>.tmp"}                  before a temporary file is made
//	{"op":1,"create":[{"path":P,"from":F}],"remove":[{"path":R,"twin":T}]}
//	{"commit":1}                                        every create is in place
//	{"done":1}                                          every remove is done, or the op was undone
//
// Paths are slash-separated and relative to Dir. Each create is a hard link
// of F (a temporary file, or the source of a move) at P, which must not
// exist. Close removes the journal. The next command that locks the tree
// (Lock, or Recover, which every command reading a fixture tree calls)
// finishes what a dead writer left: an op without "commit" is rolled back
// (each P that is still the same file as its F is removed), an op with
// "commit" and no "done" is rolled forward (each R is removed when it is
// the same file as its twin T: a move's destination, or a hard link under a
// temporary name made for a file that must go, such as a promote's old
// sidecar), every listed temporary file is removed, then the journal.
//
// A journal can arrive in a pull request like any file. Recovery removes
// only what loses nothing: a name whose content stays under its hard-link
// twin (git records no hard links, so a checked-out tree has none), and a
// temporary file by its name pattern. Durability against power loss is not
// promised: nothing is fsync'ed.

// JournalPrefix starts the name of a writer's journal in the tree's folder;
// fixture discovery skips names starting with ".".
const JournalPrefix = ".airlock-journal-"

// maxJournal is the largest journal Recover reads, in bytes (about 100,000
// files written by one command).
const maxJournal = 64 << 20

// NewFile is one file to create: its OS path and whole content.
type NewFile struct {
	Path string
	Data []byte
}

// Writer writes into a tree it holds locked; see Tree.Lock. Its methods
// are safe for concurrent use.
type Writer struct {
	t    Tree
	lock *os.File

	mu      sync.Mutex
	journal *os.File // nil until the first write
	ops     int
}

type journalLine struct {
	Temp   string       `json:"temp,omitempty"`
	Op     int          `json:"op,omitempty"`
	Create []createStep `json:"create,omitempty"`
	Remove []removeStep `json:"remove,omitempty"`
	Commit int          `json:"commit,omitempty"`
	Done   int          `json:"done,omitempty"`
}

type createStep struct {
	Path string `json:"path"`
	From string `json:"from"`
}

type removeStep struct {
	Path string `json:"path"`
	Twin string `json:"twin"`
}

// Lock waits until no other airlock process writes the tree (polling every
// 50 ms until ctx is done), takes its lock, finishes what a killed writer
// left (see Recover) and returns a Writer; Close releases it. Dir must
// exist.
func (t Tree) Lock(ctx context.Context) (*Writer, error) {
	f, err := os.Open(t.Dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnwritable, err)
	}
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%w: cannot lock %s: %v", ErrUnwritable, t.Dir, err)
		}
		if ok {
			break
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err := t.recoverLocked(); err != nil {
		unlock(f)
		f.Close()
		return nil, err
	}
	return &Writer{t: t, lock: f}, nil
}

// Recover finishes what killed writers left in the tree (see the journal
// format above), unless a live writer holds the tree, which then is left
// alone. A tree whose folder does not exist has nothing to recover. Errors
// are the tree's (a link where a journal names a folder, say).
func (t Tree) Recover() error {
	f, err := os.Open(t.Dir)
	if err != nil {
		return nil // reported by whoever reads the tree
	}
	defer f.Close()
	ok, err := tryLock(f)
	if err != nil || !ok {
		return nil
	}
	defer unlock(f)
	return t.recoverLocked()
}

// Close removes the journal (every op in it is done) and releases the lock.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var err error
	if w.journal != nil {
		name := w.journal.Name()
		w.journal.Close()
		w.journal = nil
		err = os.Remove(name)
	}
	if w.lock != nil {
		unlock(w.lock)
		w.lock.Close()
		w.lock = nil
	}
	return err
}

// log appends one line to the journal, creating it first.
func (w *Writer) log(l journalLine) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lock == nil {
		return fmt.Errorf("%w: the tree writer is closed", ErrUnwritable)
	}
	if w.journal == nil {
		name := filepath.Join(w.t.Dir, JournalPrefix+randomHex())
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("%w: journal: %v", ErrUnwritable, err)
		}
		w.journal = f
	}
	b, _ := json.Marshal(l)
	if _, err := w.journal.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("%w: journal: %v", ErrUnwritable, err)
	}
	return nil
}

func (w *Writer) nextOp() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ops++
	return w.ops
}

func randomHex() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// temp journals, then writes, a temporary file with data in folder dir
// (relDir relative to Dir) and returns its name in dir.
func (w *Writer) temp(dir *os.Root, relDir string, data []byte) (string, error) {
	name := newTempName()
	if err := w.log(journalLine{Temp: path.Join(relDir, name)}); err != nil {
		return "", err
	}
	f, err := dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", err
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		dir.Remove(name)
		return "", werr
	}
	return name, nil
}

// WriteFileAtomic writes data to p (mode 0644; missing folders are made),
// replacing any file there, through a temporary file and a rename. A
// cancelled ctx before the rename leaves p untouched and returns ctx.Err().
func (w *Writer) WriteFileAtomic(ctx context.Context, p string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dir, base, err := w.t.parent(p, true)
	if err != nil {
		return err
	}
	defer dir.Close()
	rel, _ := w.t.rel(filepath.Dir(p))
	tmp, err := w.temp(dir, rel, data)
	if err != nil {
		return &fs.PathError{Op: "write", Path: p, Err: unwrapPath(err)}
	}
	defer dir.Remove(tmp)
	if err := ctx.Err(); err != nil {
		return err
	}
	if st, err := dir.Lstat(base); err == nil && !st.Mode().IsRegular() {
		return &fs.PathError{Op: "write", Path: p, Err: fmt.Errorf("%w (%s); not replaced", ErrNotRegular, st.Mode().Type())}
	}
	if err := dir.Rename(tmp, base); err != nil {
		return &fs.PathError{Op: "write", Path: p, Err: unwrapPath(err)}
	}
	return nil
}

// CreateAll creates every file (all directly in folder dir, which is made
// if missing) or none, never overwriting: each is written to a temporary
// file, then hard-linked into place, which fails when the name is taken
// (ErrExists). A failure or a cancelled ctx removes the files already
// linked; a kill leaves a journal that the next command rolls back.
func (w *Writer) CreateAll(ctx context.Context, dir string, files []NewFile) error {
	return w.Move(ctx, nil, files, nil)
}

// Move links each moves[i][0] (an existing file) at moves[i][1] and
// creates files, all or none and never overwriting (ErrExists), then
// removes every source of moves and each path of remove (a file that must
// go once the moves are done; absent is fine). Every destination lies in
// one folder, made if missing. A kill before every destination is in place
// is rolled back by the next command; after, it is rolled forward.
func (w *Writer) Move(ctx context.Context, moves [][2]string, files []NewFile, remove []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(moves)+len(files) == 0 {
		return nil
	}
	root, err := w.t.openDir(".", false)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnwritable, err)
	}
	defer root.Close()
	var temps []string // relative to Dir, removed whatever happens
	defer func() {
		for _, t := range temps {
			root.Remove(t)
		}
	}()
	op, err := w.plan(moves, files, remove, &temps)
	if err != nil {
		return err
	}
	return w.apply(ctx, root, op)
}

// plan builds Move's op: the destinations (made if missing), each new
// file's content in a journaled temporary file, and a twin for each file
// to remove; every temporary file it makes is appended to temps.
func (w *Writer) plan(moves [][2]string, files []NewFile, remove []string, temps *[]string) (journalLine, error) {
	op := journalLine{Op: w.nextOp()}
	dest := ""
	if len(moves) > 0 {
		dest = filepath.Dir(moves[0][1])
	} else {
		dest = filepath.Dir(files[0].Path)
	}
	relDest, err := w.t.rel(dest)
	if err != nil {
		return op, err
	}
	dir, err := w.t.openDir(relDest, true)
	if err != nil {
		return op, fmt.Errorf("%w: %w", ErrUnwritable, err)
	}
	defer dir.Close()
	for _, m := range moves {
		from, err := w.checkedFile(m[0])
		if err != nil {
			return op, err
		}
		to, err := w.destination(dest, m[1])
		if err != nil {
			return op, err
		}
		op.Create = append(op.Create, createStep{Path: to, From: from})
		op.Remove = append(op.Remove, removeStep{Path: from, Twin: to})
	}
	for _, f := range files {
		to, err := w.destination(dest, f.Path)
		if err != nil {
			return op, err
		}
		tmp, err := w.temp(dir, relDest, f.Data)
		if tmp != "" {
			*temps = append(*temps, path.Join(relDest, tmp))
		}
		if err != nil {
			return op, fmt.Errorf("%w: %v", ErrUnwritable, err)
		}
		op.Create = append(op.Create, createStep{Path: to, From: path.Join(relDest, tmp)})
	}
	// A file that must go without a moved twin (a promote's old sidecar)
	// gets one: a hard link under a journaled temporary name beside it, so
	// that recovery only ever removes a name whose content stays under
	// another, and a planted journal cannot delete a fixture.
	for _, r := range remove {
		from, err := w.checkedFile(r)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return op, err
		}
		twin, err := w.twin(from)
		if twin != "" {
			*temps = append(*temps, twin)
		}
		if err != nil {
			return op, err
		}
		op.Remove = append(op.Remove, removeStep{Path: from, Twin: twin})
	}
	return op, nil
}

// twin hard-links file rel (relative to Dir) under a journaled temporary
// name in its folder and returns that name, relative to Dir.
func (w *Writer) twin(rel string) (string, error) {
	rdir, err := w.t.openDir(path.Dir(rel), false)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrUnwritable, err)
	}
	defer rdir.Close()
	twin := path.Join(path.Dir(rel), newTempName())
	if err := w.log(journalLine{Temp: twin}); err != nil {
		return "", err
	}
	if err := rdir.Link(path.Base(rel), path.Base(twin)); err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnwritable, err)
	}
	return twin, nil
}

// apply journals op, links every create (undoing them on failure), then
// commits and removes; see Move.
func (w *Writer) apply(ctx context.Context, root *os.Root, op journalLine) (err error) {
	if err := w.log(op); err != nil {
		return err
	}
	var linked []string
	defer func() {
		if err != nil {
			for _, l := range linked {
				root.Remove(l)
			}
			w.log(journalLine{Done: op.Op})
		}
	}()
	for _, c := range op.Create {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := root.Link(c.From, c.Path); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("%w: %s", ErrExists, filepath.Join(w.t.Dir, filepath.FromSlash(c.Path)))
			}
			return fmt.Errorf("%w: %v", ErrUnwritable, err)
		}
		linked = append(linked, c.Path)
	}
	if len(op.Remove) > 0 {
		if err := w.log(journalLine{Commit: op.Op}); err != nil {
			return err
		}
		linked = nil // committed: from here on, forward only
		for _, r := range op.Remove {
			if err := root.Remove(r.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("%w: moved, but %s remains: %v", ErrUnwritable, r.Path, err)
			}
		}
	}
	return w.log(journalLine{Done: op.Op})
}

// checkedFile returns p relative to Dir after checking that it is a regular
// file reached without a link.
func (w *Writer) checkedFile(p string) (string, error) {
	st, err := w.t.Lstat(p)
	if err != nil {
		return "", err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return "", &fs.PathError{Op: "open", Path: p, Err: ErrSymlink}
	}
	if !st.Mode().IsRegular() {
		return "", &fs.PathError{Op: "open", Path: p, Err: ErrNotRegular}
	}
	return w.t.rel(p)
}

// destination returns p relative to Dir, refusing a p outside folder dest.
func (w *Writer) destination(dest, p string) (string, error) {
	if filepath.Dir(p) != dest {
		return "", fmt.Errorf("%w: %s is not in %s", ErrUnwritable, p, dest)
	}
	return w.t.rel(p)
}

// recoverLocked replays every journal in Dir; the caller holds the lock.
func (t Tree) recoverLocked() error {
	entries, err := t.ReadDir(t.Dir)
	if err != nil {
		return nil // reported by whoever reads the tree
	}
	root, err := t.openDir(".", false)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), JournalPrefix) || strings.Contains(e.Name(), "/") {
			continue
		}
		name := filepath.Join(t.Dir, e.Name())
		data, err := t.ReadFile(name, maxJournal)
		if err != nil {
			return fmt.Errorf("%w: cannot replay %s: %v", ErrUnwritable, name, err)
		}
		replay(root, data)
		if err := root.Remove(e.Name()); err != nil {
			return fmt.Errorf("%w: cannot remove %s: %v", ErrUnwritable, name, err)
		}
	}
	return nil
}

// replay applies one journal (see the format above); a line it cannot read
// ends it (a kill cannot tear a line, but a planted journal can be junk).
func replay(root *os.Root, data []byte) {
	var ops []journalLine
	committed, done := map[int]bool{}, map[int]bool{}
	var temps []string
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var l journalLine
		if json.Unmarshal(line, &l) != nil {
			break
		}
		switch {
		case l.Temp != "":
			temps = append(temps, l.Temp)
		case l.Op != 0:
			ops = append(ops, l)
		case l.Commit != 0:
			committed[l.Commit] = true
		case l.Done != 0:
			done[l.Done] = true
		}
	}
	for _, op := range ops {
		switch {
		case done[op.Op]:
		case committed[op.Op]:
			for _, r := range op.Remove {
				if sameFile(root, r.Path, r.Twin) {
					root.Remove(r.Path)
				}
			}
		default:
			for _, c := range op.Create {
				if sameFile(root, c.Path, c.From) {
					root.Remove(c.Path)
				}
			}
		}
	}
	for _, t := range temps {
		if isTempName(path.Base(t)) && !isLinkOrDir(root, t) {
			root.Remove(t)
		}
	}
}

// sameFile reports whether names a and b (relative to root, no link
// followed at their last component) are one file with two names.
func sameFile(root *os.Root, a, b string) bool {
	if !fs.ValidPath(a) || !fs.ValidPath(b) || a == b {
		return false
	}
	sa, err1 := root.Lstat(a)
	sb, err2 := root.Lstat(b)
	return err1 == nil && err2 == nil && sa.Mode().IsRegular() && os.SameFile(sa, sb)
}

func isLinkOrDir(root *os.Root, name string) bool {
	if !fs.ValidPath(name) {
		return true
	}
	st, err := root.Lstat(name)
	return err != nil || !st.Mode().IsRegular()
}
