package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing/fstest"
	"time"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/fileio"
	"github.com/airlockdev/airlock/internal/manifest"
	"github.com/airlockdev/airlock/redact"
	"github.com/airlockdev/airlock/semantic"
)

// ComponentsDir is the folder of the schemas folder that holds the shared
// components of imported descriptions: _components/<api>/<upstream-version>/.
const ComponentsDir = "_components"

// Draft is a contract an importer proposes for one tool and one upstream
// version. Write turns it into files.
type Draft struct {
	// Tool is the tool name (^[a-z][a-z0-9_]{0,63}$).
	Tool string
	// Description is the manifest's description (at most 2000 characters).
	Description string
	// Header holds the comment lines written at the top of a new manifest
	// (without "# ").
	Header []string
	// Protocol is "" (json) or "mcp"; Result the MCP result ("" or
	// "structured", "text").
	Protocol, Result string
	// Formats is the format policy written into a new manifest, in order.
	Formats []Format
	// FormatsWhy is the comment written above the formats: key.
	FormatsWhy []string
	// Version is the upstream version the draft adds.
	Version Version
	// Agent is the closed agent-facing schema, written as
	// agent.schema.json of a new contract. When a version is added to an
	// existing contract, the contract's own agent schema stays.
	Agent map[string]any
	// Components are shared schema files, by path relative to the schemas
	// folder (slash-separated, under ComponentsDir). One that exists with
	// the same bytes is left alone; one that differs is an error.
	Components []File
	// Examples become fixtures of Version: accepted when the gate admits
	// them, near-miss (expecting the gate's reason) when it refuses them.
	Examples []Example
	// Notes are what the owner must still decide; Write returns them.
	Notes []string
	// ExampleSource names the examples in warnings ("" means "the
	// vendor's example").
	ExampleSource string
}

// Format is one entry of a format policy (docs/contracts.md, "Format
// policy").
type Format struct{ Name, Policy string }

// Version is the upstream version of a Draft.
type Version struct {
	// Name is the upstream version's name (^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$).
	Name        string
	Description string
	// Comment lines are written above the version's entry (without "# ").
	Comment []string
	// Schema is the upstream schema, JSON Schema 2020-12, written as
	// upstream.<Name>.schema.json.
	Schema map[string]any
	// Projection maps agent fields to RFC 6901 pointers, in order.
	Projection []Field
}

// Field is one projected agent field.
type Field struct{ Name, Pointer string }

// File is one file to write: its slash-separated path and content.
type File struct {
	Path string
	Data []byte
}

// Example is a response body the description or the upstream gave.
type Example struct {
	// Name is the fixture name (fixture.ValidName); Write makes names
	// unique.
	Name string
	// Body is the raw response.
	Body []byte
	// From says where it came from, for the sidecar's notes.
	From string
}

// WriteOptions say where Write puts the files.
type WriteOptions struct {
	// SchemasDir and FixturesDir are the schemas and fixtures folders (OS
	// paths; defaults "schemas" and "fixtures").
	SchemasDir, FixturesDir string
	// Gate are the options contracts are loaded with (custom rules, …).
	Gate gate.Options
	// Redactor is the secret policy applied to everything written (nil:
	// the default policy, as airlock record applies it): example bodies
	// (redact.Redactor.Body), the manifest's comments and descriptions, and
	// the annotations of every schema written (description, title,
	// $comment, default, examples; Redactor.Text). Constraints (enum,
	// const, pattern) are written as the source says.
	Redactor *redact.Redactor
}

// Written is what Write did.
type Written struct {
	// Contract is the contract folder; Added is true when the draft's
	// version was added to a contract that was already there, beside
	// Previous (the version that was current).
	Contract string
	Added    bool
	Previous string
	// Files are the files written (OS paths), in order; files that were
	// already there with the same bytes are not listed.
	Files []string
	// Fixtures are the examples as fixtures, in the draft's order.
	Fixtures []WrittenFixture
	// Notes are the draft's notes.
	Notes []string
	// ExampleSource names the examples in warnings: the draft's, or "the
	// vendor's example".
	ExampleSource string
}

// WrittenFixture is one example written as a fixture.
type WrittenFixture struct {
	// Path is the body's OS path.
	Path string
	// Kind is fixture.KindAccepted or fixture.KindNearMiss.
	Kind string
	// Reason, InstanceLocation and Message are the gate's, for a refused
	// example.
	Reason, InstanceLocation, Message string
}

// ErrExists is wrapped by Write's error when the contract already has the
// draft's upstream version, or a file it would write differs from one that
// is there.
var ErrExists = errors.New("already exists")

// requestID is the request id imported fixtures are judged with.
const requestID = "req.import"

// Write proves the draft and writes it: the shared components, each
// example as a fixture with its sidecar (and golden agent output when
// admitted), then the contract (a new folder with the upstream schema, the
// agent schema and, last, contract.yaml; or, when the folder has a
// contract without the draft's version, the version's schema and then an
// amended contract.yaml). Nothing is written when the contract would not load, when the
// version exists, or when a file to write differs from one already there
// (ErrExists). Each folder's files are created together or not at all
// (fileio.Writer.CreateAll); a rerun after a kill finds identical files
// and writes what is missing.
func Write(ctx context.Context, d *Draft, o WriteOptions) (*Written, error) {
	for attempt := 0; ; attempt++ {
		w, err := write(ctx, d, o, attempt < 3)
		if !errors.Is(err, errManifestAppeared) {
			return w, err
		}
	}
}

// errManifestAppeared is write's answer when the contract's manifest was
// made by another import between planning and locking: plan again.
var errManifestAppeared = errors.New("the manifest appeared while the import was planned")

func write(ctx context.Context, d *Draft, o WriteOptions, mayRetry bool) (*Written, error) {
	if o.SchemasDir == "" {
		o.SchemasDir = "schemas"
	}
	if o.FixturesDir == "" {
		o.FixturesDir = "fixtures"
	}
	if !semantic.ValidName(d.Tool) {
		return nil, fmt.Errorf("tool name %q: want ^[a-z][a-z0-9_]{0,63}$", d.Tool)
	}
	if o.Redactor == nil {
		o.Redactor = &redact.Redactor{}
	}
	d, err := redactDraft(d, o.Redactor)
	if err != nil {
		return nil, err
	}
	w := &Written{Contract: filepath.Join(o.SchemasDir, d.Tool), Notes: slices.Clone(d.Notes), ExampleSource: d.ExampleSource}
	if w.ExampleSource == "" {
		w.ExampleSource = "the vendor's example"
	}
	schemaName := "upstream." + d.Version.Name + ".schema.json"
	upstream, err := SchemaFile(d.Version.Schema)
	if err != nil {
		return nil, err
	}
	contractFiles := []File{{Path: schemaName, Data: upstream}}
	tree := fileio.NewTree(o.SchemasDir)
	// The schemas tree stays locked from reading the manifest to writing
	// it, so imports adding versions at once do not lose one another's. A
	// tree that does not exist yet is made and locked only once the draft
	// is proven (a refused draft leaves nothing); if a manifest appeared
	// meanwhile, the import is planned again.
	var lock *fileio.Writer
	if st, err := os.Stat(o.SchemasDir); err == nil && st.IsDir() {
		if lock, err = tree.Lock(ctx); err != nil {
			return nil, err
		}
		defer lock.Close()
	}
	manifestPath := filepath.Join(w.Contract, gate.ManifestFile)
	var old []byte
	if tree.Exists(manifestPath) {
		old, err = tree.ReadFile(manifestPath, gate.MaxConfigFile)
		if err != nil {
			return nil, err
		}
	}
	var newManifest []byte
	if old == nil {
		agent, err := SchemaFile(d.Agent)
		if err != nil {
			return nil, err
		}
		contractFiles = append(contractFiles, File{Path: "agent.schema.json", Data: agent})
		newManifest = renderManifest(d, schemaName)
	} else {
		m, err := manifest.Decode(manifestPath, old)
		if err != nil {
			return nil, err
		}
		if _, ok := m.UpstreamVersions[d.Version.Name]; ok {
			return nil, fmt.Errorf("%s: upstream version %q %w; import a newer description with --upstream-version <new name>", manifestPath, d.Version.Name, ErrExists)
		}
		w.Added, w.Previous = true, m.Current
		if w.Previous == "" {
			for k := range m.UpstreamVersions {
				w.Previous = k
			}
		}
		if newManifest, err = addVersion(old, d, schemaName); err != nil {
			return nil, fmt.Errorf("%s: %w", manifestPath, err)
		}
	}
	c, err := prove(d, o, old, newManifest, contractFiles)
	if err != nil {
		return nil, err
	}
	fixtures, err := judge(ctx, c, d, w, o.FixturesDir)
	if err != nil {
		return nil, err
	}
	admitted := 0
	for _, f := range w.Fixtures {
		if f.Kind == fixture.KindAccepted {
			admitted++
		}
	}
	if admitted == 0 && len(d.Examples) > 0 {
		w.Notes = append(w.Notes, fmt.Sprintf("no accepted fixture for %s %s: record a real response (airlock record), promote it (airlock promote FIXTURE --to accepted) and write its golden (airlock run --update)", d.Tool, d.Version.Name))
	}

	// Everything is known. First refuse, before writing a byte, a file
	// that exists with other content; then write the components, the
	// fixtures and the contract's schemas, and the manifest last: until it
	// is written the contract folder has no contract (LoadAllDir and runs
	// skip it), so a kill at any moment leaves no contract without its
	// fixtures, and the same import run again writes only what is missing.
	if lock == nil {
		if err := os.MkdirAll(o.SchemasDir, 0o755); err != nil {
			return nil, fmt.Errorf("%w: %w", fileio.ErrUnwritable, err)
		}
		if lock, err = tree.Lock(ctx); err != nil {
			return nil, err
		}
		defer lock.Close()
		if tree.Exists(manifestPath) && mayRetry {
			return nil, errManifestAppeared
		}
	}
	comps := componentsByFolder(o.SchemasDir, d.Components)
	contract := map[string][]File{w.Contract: contractFiles}
	for _, step := range []struct {
		root    string
		folders map[string][]File
	}{{o.SchemasDir, comps}, {o.FixturesDir, fixtures}, {o.SchemasDir, contract}} {
		if err := checkFolders(step.root, step.folders); err != nil {
			return nil, err
		}
	}
	fixturesLock := (*fileio.Writer)(nil)
	if sameFolder(o.SchemasDir, o.FixturesDir) {
		fixturesLock = lock
	}
	for _, step := range []struct {
		root    string
		folders map[string][]File
		lock    *fileio.Writer
	}{{o.SchemasDir, comps, lock}, {o.FixturesDir, fixtures, fixturesLock}, {o.SchemasDir, contract, lock}} {
		if err := writeFolders(ctx, step.root, step.folders, w, step.lock); err != nil {
			return nil, err
		}
	}
	if old == nil {
		if err := writeFolders(ctx, o.SchemasDir, map[string][]File{w.Contract: {{Path: gate.ManifestFile, Data: newManifest}}}, w, lock); err != nil {
			return nil, err
		}
	} else {
		if err := lock.WriteFileAtomic(ctx, manifestPath, newManifest); err != nil {
			return nil, err
		}
		w.Files = append(w.Files, manifestPath)
	}
	return w, nil
}

// prove loads the contract the draft would leave on disk, from memory: the
// new files over what the schemas folder holds now (the contract's other
// versions, components written by earlier imports), read through
// fileio.Tree, which follows no link.
func prove(d *Draft, o WriteOptions, old, newManifest []byte, files []File) (*gate.Contract, error) {
	mem := fstest.MapFS{}
	dir := path.Join("schemas", d.Tool)
	for _, f := range d.Components {
		mem[path.Join("schemas", f.Path)] = &fstest.MapFile{Data: f.Data}
	}
	for _, f := range files {
		mem[path.Join(dir, f.Path)] = &fstest.MapFile{Data: f.Data}
	}
	mem[path.Join(dir, gate.ManifestFile)] = &fstest.MapFile{Data: newManifest}
	var disk fs.FS
	if _, err := os.Stat(o.SchemasDir); err == nil {
		disk = fileio.NewTree(o.SchemasDir).FS()
	}
	c, err := gate.Load(overlay{mem: mem, disk: disk}, dir, o.Gate)
	if err != nil {
		// Name the files where they would have been written.
		var ce *gate.ConfigError
		if errors.As(err, &ce) {
			if rest, ok := strings.CutPrefix(ce.File, "schemas/"); ok {
				ce.File = filepath.Join(o.SchemasDir, filepath.FromSlash(rest))
			}
		}
		return nil, fmt.Errorf("the contract drafted for %s does not load (nothing was written): %w", d.Tool, err)
	}
	return c, nil
}

// overlay serves the files of mem, and under "schemas/" the files of the
// schemas folder on disk that mem does not have.
type overlay struct {
	mem  fstest.MapFS
	disk fs.FS
}

func (o overlay) Open(name string) (fs.File, error) {
	if _, ok := o.mem[name]; ok {
		return o.mem.Open(name)
	}
	if rest, ok := strings.CutPrefix(name, "schemas/"); ok && o.disk != nil {
		if f, err := o.disk.Open(rest); err == nil {
			return f, nil
		}
	}
	return o.mem.Open(name)
}

// judge checks every example against the proven contract and returns the
// fixture files by folder.
func judge(ctx context.Context, c *gate.Contract, d *Draft, w *Written, fixturesDir string) (map[string][]File, error) {
	out := map[string][]File{}
	used := map[string]bool{}
	for _, ex := range d.Examples {
		name := uniqueName(ex.Name, used)
		v, err := c.Check(ctx, gate.Response{Status: 200, ContentType: "application/json", Body: bytes.NewReader(ex.Body)},
			gate.Call{UpstreamVersion: d.Version.Name, Request: semantic.Request{ID: requestID}, Now: time.Unix(0, 0).UTC()})
		if err != nil {
			return nil, err
		}
		kind := fixture.KindAccepted
		id, status, ct := requestID, 200, "application/json"
		m := &fixture.Meta{Status: &status, ContentType: &ct, Request: &fixture.MetaRequest{ID: &id}, Notes: ex.From}
		wf := WrittenFixture{Kind: kind}
		var files []File
		if v.Admitted {
			files = append(files, File{Path: name + fixture.GoldenSuffix, Data: append(slices.Clone(v.Output), '\n')})
		} else {
			kind = fixture.KindNearMiss
			wf.Kind = kind
			wf.Reason = v.Reason
			wf.InstanceLocation, wf.Message = v.Audit.InstanceLocation, v.Audit.Message
			m.Expect = &fixture.Expect{Reason: v.Reason}
			m.Notes = strings.TrimSpace(ex.From + "; the gate refuses it: " + v.Reason + " at " + orRoot(v.Audit.InstanceLocation))
		}
		comment := "imported example: " + ex.From
		files = append(files, File{Path: name + ".json", Data: ex.Body}, File{Path: name + fixture.MetaSuffix, Data: fixture.MarshalMeta(m, comment)})
		folder := filepath.Join(d.Tool, d.Version.Name, kind)
		out[folder] = append(out[folder], files...)
		wf.Path = filepath.Join(fixturesDir, folder, name+".json")
		w.Fixtures = append(w.Fixtures, wf)
	}
	return out, nil
}

func orRoot(p string) string {
	if p == "" {
		return `"" (the whole value)`
	}
	return p
}

// uniqueName makes name a valid fixture name not used yet.
func uniqueName(name string, used map[string]bool) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	s := strings.Trim(b.String(), "-_")
	if len(s) > 100 {
		s = s[:100]
	}
	if s == "" || !fixture.ValidName(s) {
		s = "example"
	}
	n := s
	for i := 2; used[n]; i++ {
		n = fmt.Sprintf("%s-%d", s, i)
	}
	used[n] = true
	return n
}

// componentsByFolder groups component files by their OS folder.
func componentsByFolder(schemasDir string, comps []File) map[string][]File {
	out := map[string][]File{}
	for _, f := range comps {
		dir := filepath.Join(schemasDir, filepath.FromSlash(path.Dir(f.Path)))
		out[dir] = append(out[dir], File{Path: path.Base(f.Path), Data: f.Data})
	}
	return out
}

// sameFolder reports whether a and b name one folder.
func sameFolder(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

// checkFolders fails, naming the file, when a file to write exists with
// other content (ErrExists).
func checkFolders(root string, folders map[string][]File) error {
	tree := fileio.NewTree(root)
	for dir, files := range folders {
		osDir := dir
		if rel, err := filepath.Rel(root, dir); err != nil || strings.HasPrefix(rel, "..") {
			osDir = filepath.Join(root, dir)
		}
		for _, f := range files {
			p := filepath.Join(osDir, f.Path)
			if !tree.Exists(p) {
				continue
			}
			have, err := tree.ReadFile(p, int64(len(f.Data))+1)
			if err != nil || !bytes.Equal(have, f.Data) {
				return fmt.Errorf("%s %w with other content; not overwritten (move it away, or import under another --tool or --upstream-version)", p, ErrExists)
			}
		}
	}
	return nil
}

// writeFolders creates each folder's files under root (folders relative to
// root unless already beneath it), all or none per folder, leaving files
// that exist with the same bytes alone, under lock (the root's Writer), or
// a lock of its own when lock is nil.
func writeFolders(ctx context.Context, root string, folders map[string][]File, w *Written, lock *fileio.Writer) error {
	if len(folders) == 0 {
		return nil
	}
	tree := fileio.NewTree(root)
	if lock == nil {
		// The root is the user's own folder (--schemas, --fixtures): made
		// if missing; beneath it, no link is followed.
		if err := os.MkdirAll(root, 0o755); err != nil {
			return fmt.Errorf("%w: %w", fileio.ErrUnwritable, err)
		}
		var err error
		if lock, err = tree.Lock(ctx); err != nil {
			return err
		}
		defer lock.Close()
	}
	dirs := make([]string, 0, len(folders))
	for d := range folders {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		osDir := dir
		if rel, err := filepath.Rel(root, dir); err != nil || strings.HasPrefix(rel, "..") {
			osDir = filepath.Join(root, dir)
		}
		var create []fileio.NewFile
		for _, f := range folders[dir] {
			p := filepath.Join(osDir, f.Path)
			if tree.Exists(p) {
				have, err := tree.ReadFile(p, int64(len(f.Data))+1)
				if err == nil && bytes.Equal(have, f.Data) {
					continue
				}
				return fmt.Errorf("%s %w with other content; not overwritten (move it away, or import under another --tool or --upstream-version)", p, ErrExists)
			}
			create = append(create, fileio.NewFile{Path: p, Data: f.Data})
		}
		if err := lock.CreateAll(ctx, osDir, create); err != nil {
			return err
		}
		for _, f := range create {
			w.Files = append(w.Files, f.Path)
		}
	}
	return nil
}

// SchemaFile renders a schema document as the import writes it: members
// sorted, two-space indentation, HTML characters not escaped, one newline
// at the end. Errors are encoding/json's (a value JSON cannot hold).
func SchemaFile(doc map[string]any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
