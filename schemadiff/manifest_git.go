package schemadiff

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing/fstest"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/fileio"
	"github.com/airlockdev/airlock/reports"
)

// Bounds on what Base reads from git: the old tree comes from the same
// repository as the pull request that changes it, so it is as hostile as
// the working tree.
const (
	// MaxGitEntries is the most files Base reads below the schemas folder
	// at the revision (the contract folders compared and _components).
	MaxGitEntries = 10000
	// MaxGitFile is the largest one file, in bytes (8 MiB, a component
	// schema's bound).
	MaxGitFile = 8 << 20
	// MaxGitTotal is the most bytes of all those files together (256 MiB);
	// files left unread (outside the folders compared) do not count.
	MaxGitTotal = 256 << 20
)

// Base compares every contract of schemasDir in the working tree (only
// the folders of tools, when it names any) with the same folders at git
// revision ref of the repository schemasDir lies in, as Contracts does; a
// contract on one side only is reported as added or removed. The old
// contracts are read with git (git ls-tree, git cat-file --batch), never
// checked out, and load from memory: schema and manifest files are named
// "REF:path" in reports and errors. Only the folders compared (those
// holding a contract.yaml on either side, or named by tools) and
// "_components" are read; every other entry below schemasDir at ref (a
// file beside the contract folders, an unrelated folder) is left unread.
//
// An old contract that does not load (a pull request that fixes a broken
// contract), or whose folder at ref holds an entry Base refuses to read (a
// symbolic link, mode 120000; a submodule, mode 160000; a file over
// MaxGitFile bytes), fails only its own tool: the pair is reported as the
// new contract added, its manifest entry saying why the old one did not
// load (ContractPair.OldError), and the other tools are compared as usual.
//
// Errors: schemasDir not inside a git work tree, or ref not naming a
// commit, wrap gate.ErrUsage; such an entry in "_components" (shared by
// every contract), more than MaxGitEntries files or more than MaxGitTotal
// bytes read, a tool on neither side, and a contract of the working tree
// that does not load are *gate.ConfigError values; a git that cannot run
// is returned as it is.
func Base(ctx context.Context, schemasDir, ref string, tools []string, opts ContractOptions) (*reports.Diff, error) {
	if ref == "" || strings.HasPrefix(ref, "-") || strings.ContainsAny(ref, "\x00\n") {
		return nil, fmt.Errorf("%w: --base %q is not a git revision", gate.ErrUsage, ref)
	}
	if st, err := os.Stat(schemasDir); err != nil || !st.IsDir() {
		return nil, &gate.ConfigError{File: schemasDir, Msg: "not a folder of contracts; run from the project root or pass --schemas"}
	}
	out, err := git(ctx, schemasDir, nil, maxGitListing, "rev-parse", "--show-toplevel", "--show-prefix")
	if err != nil {
		return nil, fmt.Errorf("%w: --base needs a git work tree: %s is not inside one (%v)", gate.ErrUsage, schemasDir, err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) < 1 || lines[0] == "" {
		return nil, fmt.Errorf("%w: --base needs a git work tree: %s is not inside one", gate.ErrUsage, schemasDir)
	}
	top, prefix := lines[0], ""
	if len(lines) > 1 {
		prefix = strings.TrimSuffix(lines[1], "/")
	}
	commit, err := git(ctx, top, nil, maxGitListing, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("%w: --base %q: no such commit in the repository at %s", gate.ErrUsage, ref, top)
	}
	now, err := workingTree(schemasDir, tools, opts.Gate)
	if err != nil {
		return nil, err
	}
	want := tools
	if len(want) == 0 {
		want = slices.Collect(maps.Keys(now))
	}
	old, err := readTree(ctx, top, strings.TrimSpace(string(commit)), prefix, ref, want, len(tools) == 0)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for n := range old.tools {
		names[n] = true
	}
	for n := range old.broken {
		names[n] = true
	}
	for n := range now {
		names[n] = true
	}
	for _, t := range tools {
		if !names[t] {
			return nil, &gate.ConfigError{File: "--tool", Msg: fmt.Sprintf("no contract for tool %q in %s, nor in it at %s", t, schemasDir, ref)}
		}
	}
	var pairs []ContractPair
	for _, n := range slices.Sorted(maps.Keys(names)) {
		p := ContractPair{New: now[n], Tool: n}
		dir := path.Join(prefix, n)
		manifestFile := ref + ":" + path.Join(dir, gate.ManifestFile)
		switch {
		case old.broken[n] != nil:
			p.OldError, p.OldManifest = old.broken[n], manifestFile
		case old.tools[n]:
			c, err := gate.Load(old.fs, dir, opts.Gate)
			if err != nil {
				var ce *gate.ConfigError
				if errors.As(err, &ce) {
					ce.File = ref + ":" + ce.File
				} else {
					err = fmt.Errorf("%s:%s: %w", ref, dir, err)
				}
				p.OldError, p.OldManifest = err, manifestFile
				break
			}
			p.Old, p.OldManifest = c, manifestFile
		}
		pairs = append(pairs, p)
	}
	d, err := ComparePairs(ctx, pairs, opts)
	if err != nil {
		return nil, err
	}
	for i := range d.Comparisons {
		if o := d.Comparisons[i].Old; o != "" && !strings.HasPrefix(o, ref+":") {
			d.Comparisons[i].Old = ref + ":" + o
		}
	}
	return d, nil
}

// workingTree loads the contracts of schemasDir: every <tool>/contract.yaml
// (only tools', when it names any), following no symbolic link.
func workingTree(schemasDir string, tools []string, opts gate.Options) (map[string]*gate.Contract, error) {
	t := fileio.NewTree(schemasDir)
	entries, err := t.ReadDir(schemasDir)
	if err != nil {
		return nil, &gate.ConfigError{File: schemasDir, Msg: "cannot read the schemas directory: " + err.Error(), Err: err}
	}
	out := map[string]*gate.Contract{}
	for _, e := range entries {
		dir := filepath.Join(schemasDir, e.Name())
		if !e.IsDir() || e.Name() == "_components" || len(tools) > 0 && !slices.Contains(tools, e.Name()) {
			continue
		}
		if !t.Exists(filepath.Join(dir, gate.ManifestFile)) {
			continue
		}
		c, err := gate.LoadDir(dir, opts)
		if err != nil {
			return nil, err
		}
		out[e.Name()] = c
	}
	return out, nil
}

// oldTree is the schemas folder at a revision, in memory.
type oldTree struct {
	fs    fstest.MapFS
	tools map[string]bool // folders read that hold a contract.yaml
	// broken holds, per tool folder, the entry that made Base refuse to
	// read it (a *gate.ConfigError naming it); the folder was not read.
	broken map[string]error
}

// readTree reads the files below prefix at commit that belong to the
// folders of tools, to "_components", and, when alsoContracts, to every
// other folder holding a contract.yaml at commit, into memory; nothing
// else below prefix is read. An entry of a tool folder that cannot be read
// (a symbolic link, a submodule, a file over MaxGitFile) marks that folder
// broken; in "_components" it is the error.
func readTree(ctx context.Context, top, commit, prefix, ref string, tools []string, alsoContracts bool) (*oldTree, error) {
	args := []string{"ls-tree", "-r", "-l", "-z", "--full-tree", commit}
	if prefix != "" {
		args = append(args, "--", prefix+"/")
	}
	out, err := git(ctx, top, nil, maxGitListing, args...)
	if err != nil {
		return nil, fmt.Errorf("git ls-tree %s: %w", ref, err)
	}
	type entry struct {
		mode, kind, oid, path, rel string
		size                       string
	}
	var listed []entry
	selected := map[string]bool{"_components": true}
	for _, t := range tools {
		selected[t] = true
	}
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, p, ok := strings.Cut(string(rec), "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 4 {
			return nil, fmt.Errorf("git ls-tree %s: unexpected line %q", ref, rec)
		}
		rel := p
		if prefix != "" {
			var in bool
			if rel, in = strings.CutPrefix(p, prefix+"/"); !in {
				continue
			}
		}
		if dir, file, ok := strings.Cut(rel, "/"); ok && file == gate.ManifestFile && alsoContracts {
			selected[dir] = true
		}
		listed = append(listed, entry{mode: f[0], kind: f[1], oid: f[2], size: f[3], path: p, rel: rel})
	}
	t := &oldTree{fs: fstest.MapFS{}, tools: map[string]bool{}, broken: map[string]error{}}
	type blob struct {
		oid, path, rel string
		size           int64
	}
	var entries []blob
	var total int64
	for _, e := range listed {
		first, _, inFolder := strings.Cut(e.rel, "/")
		if !inFolder || !selected[first] || t.broken[first] != nil {
			continue // a file beside the folders, or a folder not compared
		}
		shown := ref + ":" + e.path
		var bad *gate.ConfigError
		size, err := strconv.ParseInt(e.size, 10, 64)
		switch {
		case e.mode == "120000":
			bad = &gate.ConfigError{File: shown, Msg: "a symbolic link in the contracts at " + ref + "; a contract tree must hold real files (airlock follows no link inside one)", Err: fileio.ErrSymlink}
		case e.mode == "160000":
			bad = &gate.ConfigError{File: shown, Msg: "a submodule in the contracts at " + ref + "; a contract tree must hold its own files"}
		case e.kind != "blob":
			bad = &gate.ConfigError{File: shown, Msg: fmt.Sprintf("a git %s in the contracts at %s; only files are read", e.kind, ref)}
		case err != nil || size < 0:
			return nil, fmt.Errorf("git ls-tree %s: unexpected size %q of %s", ref, e.size, e.path)
		case size > MaxGitFile:
			bad = &gate.ConfigError{File: shown, Msg: fmt.Sprintf("%d bytes; a file of a contract tree may hold at most %d", size, MaxGitFile)}
		}
		if bad != nil {
			if first == "_components" {
				return nil, bad
			}
			t.broken[first] = bad
			continue
		}
		entries = append(entries, blob{oid: e.oid, path: e.path, rel: e.rel, size: size})
	}
	// A broken folder is read not at all: drop what was kept of it.
	entries = slices.DeleteFunc(entries, func(b blob) bool {
		first, _, _ := strings.Cut(b.rel, "/")
		return t.broken[first] != nil
	})
	for _, e := range entries {
		if total += e.size; total > MaxGitTotal {
			return nil, &gate.ConfigError{File: ref + ":" + prefix, Msg: fmt.Sprintf("the contracts compared at %s hold more than %d bytes", ref, MaxGitTotal)}
		}
	}
	if len(entries) > MaxGitEntries {
		return nil, &gate.ConfigError{File: ref + ":" + prefix, Msg: fmt.Sprintf("the contracts compared at %s hold more than %d files", ref, MaxGitEntries)}
	}
	if len(entries) == 0 {
		return t, nil
	}
	var in bytes.Buffer
	for _, e := range entries {
		in.WriteString(e.oid + "\n")
	}
	blobs, err := git(ctx, top, &in, total+int64(len(entries))*128, "cat-file", "--batch")
	if err != nil {
		return nil, fmt.Errorf("git cat-file %s: %w", ref, err)
	}
	r := bufio.NewReader(bytes.NewReader(blobs))
	for _, e := range entries {
		header, err := r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("git cat-file %s: %w", ref, err)
		}
		h := strings.Fields(header)
		if len(h) != 3 || h[0] != e.oid || h[1] != "blob" || h[2] != strconv.FormatInt(e.size, 10) {
			return nil, fmt.Errorf("git cat-file %s: unexpected header %q for %s", ref, strings.TrimSpace(header), e.path)
		}
		data := make([]byte, e.size+1)
		if _, err := io.ReadFull(r, data); err != nil || data[e.size] != '\n' {
			return nil, fmt.Errorf("git cat-file %s: %s cut short", ref, e.path)
		}
		t.fs[e.path] = &fstest.MapFile{Data: data[:e.size], Mode: 0o444}
		if dir, file, ok := strings.Cut(e.rel, "/"); ok && file == gate.ManifestFile && dir != "_components" {
			t.tools[dir] = true
		}
	}
	return t, nil
}

// maxGitListing bounds the output of git rev-parse and git ls-tree that
// Base keeps (64 MiB: some 400,000 entries of ordinary path lengths,
// far more than MaxGitEntries selected ones).
const maxGitListing = 64 << 20

// git runs git in dir with stdin and returns its standard output, at most
// max bytes (more is an error: the output is not kept past it); its
// standard error, trimmed and cut to 512 bytes, is the error's text.
func git(ctx context.Context, dir string, stdin io.Reader, max int64, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Stdin = stdin
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_LITERAL_PATHSPECS=1", "LC_ALL=C")
	stdout := &capped{max: max}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	if err := cmd.Run(); err != nil {
		if stdout.over {
			return nil, fmt.Errorf("git %s: more than %d bytes of output", args[0], max)
		}
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			if len(msg) > 512 {
				msg = msg[:512] + "…"
			}
			return nil, errors.New(msg)
		}
		return nil, err
	}
	return stdout.buf.Bytes(), nil
}

// capped is a buffer that refuses to grow past max bytes.
type capped struct {
	buf  bytes.Buffer
	max  int64
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if int64(c.buf.Len()+len(p)) > c.max {
		c.over = true
		return 0, errors.New("output too large")
	}
	return c.buf.Write(p)
}
