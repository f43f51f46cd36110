package schema

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/config"
	"github.com/airlockdev/airlock/internal/fileio"
	"github.com/airlockdev/airlock/internal/strictjson"
)

// FileLimits are the parse limits for schema files.
var FileLimits = strictjson.Limits{MaxDepth: 512, MaxNumberLength: 512, MaxStringLength: 1 << 20}

// MaxFileSize is the largest schema file read, in bytes (8 MiB).
const MaxFileSize = 8 << 20

// fileName is what a schema file inside a contract folder may be named: no
// folder, no leading dot, ending in ".json".
var fileName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*\.json$`)

// Dir serves the JSON Schema files of one folder of an fs.FS to the schema
// compiler, reading each only when it is compiled or referenced: a regular
// file (no device, no pipe) of at most MaxFileSize bytes, named like
// "upstream.v1.schema.json", parsed strictly (strictjson: duplicate member
// names are errors, numbers stay json.Number). A file is served under its
// URL (BaseURL + name) and, when its top-level $id is an absolute URL,
// under that $id; a relative $ref resolved against such an $id reaches its
// sibling file of that name. Nothing outside the folder is ever read: every
// other URL fails with an error wrapping ErrOutsideContract.
//
// A Dir is not safe for concurrent use while it loads; once the schemas
// that need it are compiled, Docs may be read concurrently.
type Dir struct {
	// FS and Folder locate the folder: Folder is a slash-separated
	// fs.ValidPath in FS ("." for its root).
	FS     fs.FS
	Folder string
	// Shown is how errors name the folder (an OS path, or Folder).
	Shown string
	// BaseURL is the folder's URL, ending in "/": "file:///" + Folder + "/".
	BaseURL string
	// Docs holds the documents read so far, by URL and by $id.
	Docs ConfinedLoader
	// idBases are the "folders" of absolute $ids seen, e.g.
	// "https://airlock.invalid/review_status/".
	idBases map[string]bool
}

// NewDir prepares folder of fsys; it reads nothing yet. shown names the
// folder in errors ("" means folder).
func NewDir(fsys fs.FS, folder, shown string) *Dir {
	folder = path.Clean(folder)
	if shown == "" {
		shown = folder
	}
	base := "file:///"
	if folder != "." {
		base += strings.TrimPrefix(folder, "/") + "/"
	}
	return &Dir{FS: fsys, Folder: folder, Shown: shown, BaseURL: base, Docs: ConfinedLoader{}, idBases: map[string]bool{}}
}

// Show returns how errors name the folder's file name.
func (d *Dir) Show(name string) string { return strings.TrimSuffix(d.Shown, "/") + "/" + name }

// Load implements jsonschema.URLLoader.
func (d *Dir) Load(url string) (any, error) {
	if doc, ok := d.Docs[url]; ok {
		return doc, nil
	}
	name, ok := d.fileFor(url)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrOutsideContract, url)
	}
	if doc, ok := d.Docs[d.BaseURL+name]; ok {
		d.Docs[url] = doc
		return doc, nil
	}
	doc, err := d.read(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s (no such file in the contract folder)", ErrOutsideContract, url)
	}
	if err != nil {
		return nil, err
	}
	d.Docs[d.BaseURL+name] = doc
	d.Docs[url] = doc
	if obj, ok := doc.(map[string]any); ok {
		if id, ok := obj["$id"].(string); ok && strings.Contains(id, "://") {
			id = strings.TrimSuffix(id, "#")
			d.Docs[id] = doc
			if i := strings.LastIndex(id, "/"); i > strings.Index(id, "://")+2 {
				d.idBases[id[:i+1]] = true
			}
		}
	}
	return doc, nil
}

// Doc returns the parsed document of file name, if it was read.
func (d *Dir) Doc(name string) any { return d.Docs[d.BaseURL+name] }

// Exists reports whether the folder holds a file name (of any kind; one
// its FS refuses to open, a symbolic link say, counts: Compile says why).
func (d *Dir) Exists(name string) bool {
	_, err := fs.Stat(d.FS, path.Join(d.Folder, name))
	return !errors.Is(err, fs.ErrNotExist)
}

// fileFor maps a URL to a file name in the folder, if it names one.
func (d *Dir) fileFor(url string) (string, bool) {
	bases := []string{d.BaseURL}
	for b := range d.idBases {
		bases = append(bases, b)
	}
	for _, b := range bases {
		if name, ok := strings.CutPrefix(url, b); ok && fileName.MatchString(name) {
			return name, true
		}
	}
	return "", false
}

// read reads and parses one schema file of the folder.
func (d *Dir) read(name string) (any, error) {
	shown := d.Show(name)
	b, err := fileio.ReadFS(d.FS, path.Join(d.Folder, name), MaxFileSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err != nil {
		return nil, &config.Error{File: shown, Msg: "cannot read schema file: " + err.Error(), Err: err}
	}
	doc, err := strictjson.Parse(b, FileLimits)
	if err != nil {
		var pe *strictjson.Error
		errors.As(err, &pe)
		line, col := config.LineCol(b, pe.Offset)
		return nil, &config.Error{File: shown, Line: line, Column: col, Msg: "not strict JSON: " + pe.Reason + ": " + pe.Message, Err: err}
	}
	return doc, nil
}

// Compile compiles the folder's file name with the gate's compiler
// configuration (NewCompiler), every format asserted. Errors are
// *config.Error values naming the file, with the folder's URLs shortened to
// file names, and wrap ErrOutsideContract for a $ref that leaves the folder.
func (d *Dir) Compile(name string) (*jsonschema.Schema, error) {
	return d.CompileWith(name, FormatPolicy{})
}

// CompileWith is Compile with the contract's format policy: an annotated
// format admits every value, a named checker replaces the compiler's own.
func (d *Dir) CompileWith(name string, formats FormatPolicy) (*jsonschema.Schema, error) {
	url := d.BaseURL + name
	shown := d.Show(name)
	if !fileName.MatchString(name) {
		return nil, &config.Error{File: shown, Msg: "a schema file name must match " + fileName.String()}
	}
	if _, err := d.Load(url); err != nil {
		return nil, err
	}
	c := NewCompiler(d)
	formats.register(c)
	s, err := c.Compile(url)
	if err != nil {
		var ce *config.Error
		if errors.As(err, &ce) {
			return nil, ce
		}
		return nil, &config.Error{File: shown, Msg: d.Relative(err.Error()), Err: compileErr(err)}
	}
	return s, nil
}

// Relative shortens the folder's URLs in s to file names.
func (d *Dir) Relative(s string) string { return strings.ReplaceAll(s, d.BaseURL, "") }

// compileErr keeps ErrOutsideContract reachable through errors.Is: the
// compiler's own error types do not all unwrap.
func compileErr(err error) error {
	if strings.Contains(err.Error(), ErrOutsideContract.Error()) && !errors.Is(err, ErrOutsideContract) {
		return fmt.Errorf("%w: %v", ErrOutsideContract, err)
	}
	return err
}
