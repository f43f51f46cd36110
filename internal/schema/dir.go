package gate

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaFileLimits are the parse limits for schema files; MaxBytes is also
// the largest schema file read.
var schemaFileLimits = Limits{MaxBytes: 8 << 20, MaxDepth: 512, MaxNumberLength: 512, MaxStringLength: 1 << 20}

// schemaFileName is what a schema file inside a contract folder may be named.
var schemaFileName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*\.json$`)

// SchemaDir serves the JSON Schema files of one folder to the schema
// compiler, reading each only when it is compiled or referenced: a regular
// file (no device, no pipe) of at most 8 MiB, named like
// "upstream.v1.schema.json", parsed strictly (Parse: duplicate member names
// are errors, numbers stay json.Number). A file is served under its file URL
// and, when its top-level $id is an absolute URL, under that $id; a relative
// $ref resolved against such an $id reaches its sibling file of that name.
// Nothing outside the folder is ever read: every other URL fails with an
// error wrapping ErrOutsideContract.
//
// A SchemaDir is not safe for concurrent use while it loads; once the
// schemas that need it are compiled, Docs may be read concurrently.
type SchemaDir struct {
	// Dir is the folder as given; BaseURL its file URL, ending in "/".
	Dir     string
	BaseURL string
	// Docs holds the documents read so far, by file URL and by $id.
	Docs ConfinedLoader
	// idBases are the "folders" of absolute $ids seen, e.g.
	// "https://airlock.invalid/review_status/".
	idBases map[string]bool
}

// LoadSchemaDir prepares a folder; it reads nothing yet.
func LoadSchemaDir(dir string) (*SchemaDir, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, &ConfigError{File: dir, Err: err}
	}
	return &SchemaDir{Dir: dir, BaseURL: "file://" + filepath.ToSlash(abs) + "/", Docs: ConfinedLoader{}, idBases: map[string]bool{}}, nil
}

// Load implements jsonschema.URLLoader.
func (d *SchemaDir) Load(url string) (any, error) {
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
	if errors.Is(err, os.ErrNotExist) {
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

// fileFor maps a URL to a file name in the folder, if it names one.
func (d *SchemaDir) fileFor(url string) (string, bool) {
	bases := []string{d.BaseURL}
	for b := range d.idBases {
		bases = append(bases, b)
	}
	for _, b := range bases {
		if name, ok := strings.CutPrefix(url, b); ok && schemaFileName.MatchString(name) {
			return name, true
		}
	}
	return "", false
}

// read reads and parses one schema file of the folder.
func (d *SchemaDir) read(name string) (any, error) {
	shown := filepath.Join(d.Dir, name)
	b, err := ReadRegularFile(shown, schemaFileLimits.MaxBytes)
	if err != nil {
		return nil, &ConfigError{File: shown, Msg: "cannot read schema file: " + err.Error(), Err: err}
	}
	doc, err := Parse(b, schemaFileLimits)
	if err != nil {
		var pe *ParseError
		errors.As(err, &pe)
		line, col := lineCol(b, pe.Offset)
		return nil, &ConfigError{File: shown, Line: line, Column: col, Msg: "not strict JSON: " + pe.Reason + ": " + pe.Message, Err: err}
	}
	return doc, nil
}

// Compile compiles the folder's file name with the gate's compiler
// configuration (NewSchemaCompiler). Errors are *ConfigError values naming
// the file, with the folder's file URLs shortened to file names, and wrap
// ErrOutsideContract for a $ref that leaves the folder.
func (d *SchemaDir) Compile(name string) (*jsonschema.Schema, error) {
	url := d.BaseURL + name
	shown := filepath.Join(d.Dir, name)
	if !schemaFileName.MatchString(name) {
		return nil, &ConfigError{File: shown, Msg: "a schema file name must match " + schemaFileName.String()}
	}
	if _, err := d.Load(url); err != nil {
		return nil, err
	}
	c := NewSchemaCompiler(nil)
	c.UseLoader(d)
	s, err := c.Compile(url)
	if err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) {
			return nil, ce
		}
		return nil, &ConfigError{File: shown, Msg: d.Relative(err.Error()), Err: compileErr(err)}
	}
	return s, nil
}

// Relative shortens the folder's file URLs in s to file names.
func (d *SchemaDir) Relative(s string) string { return strings.ReplaceAll(s, d.BaseURL, "") }

// compileErr keeps ErrOutsideContract reachable through errors.Is: the
// compiler's own error types do not all unwrap.
func compileErr(err error) error {
	if strings.Contains(err.Error(), ErrOutsideContract.Error()) && !errors.Is(err, ErrOutsideContract) {
		return fmt.Errorf("%w: %v", ErrOutsideContract, err)
	}
	return err
}

// ErrNotRegular and ErrTooLarge are wrapped by ReadRegularFile's errors.
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrFileSize   = errors.New("file too large")
)

// ReadRegularFile reads path, which must be a regular file (after following
// links) of at most max bytes: a device, a pipe or a larger file is an error
// wrapping ErrNotRegular or ErrFileSize, found before reading more than
// max+1 bytes. airlock reads its manifests, schemas, sidecars and fixtures
// this way, so no path can make it block or exhaust memory.
func ReadRegularFile(path string, max int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w (%s)", ErrNotRegular, st.Mode().Type())
	}
	if st.Size() > max {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrFileSize, st.Size(), max)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrFileSize, max)
	}
	return b, nil
}
