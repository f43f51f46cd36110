package gate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaFileLimits are the parse limits for schema files.
var schemaFileLimits = Limits{MaxBytes: 8 << 20, MaxDepth: 512, MaxNumberLength: 512, MaxStringLength: 1 << 20}

// SchemaDir is the *.json files of one folder, parsed strictly (Parse, with
// generous limits, so numbers stay json.Number and duplicate member names
// are errors) and served to the schema compiler by a ConfinedLoader: each
// file under its file URL, and a file whose top-level $id is an absolute URL
// also under that $id, so that a relative $ref resolved against the $id
// still finds its sibling. Nothing outside the folder is ever served.
type SchemaDir struct {
	// Dir is the folder as given; BaseURL its file URL, ending in "/".
	Dir     string
	BaseURL string
	// Docs holds the parsed documents by file URL and $id.
	Docs ConfinedLoader
	// Broken holds, by file URL, the error of each file that could not be
	// read or is not strict JSON: a *ConfigError naming file and line.
	Broken map[string]error
}

// LoadSchemaDir reads every *.json file of dir. A broken file does not stop
// the others; it is listed in Broken and fails whenever it is referenced.
func LoadSchemaDir(dir string) (*SchemaDir, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, &ConfigError{File: dir, Err: err}
	}
	files, err := filepath.Glob(filepath.Join(abs, "*.json"))
	if err != nil {
		return nil, &ConfigError{File: dir, Err: err}
	}
	d := &SchemaDir{Dir: dir, BaseURL: "file://" + filepath.ToSlash(abs) + "/", Docs: ConfinedLoader{}, Broken: map[string]error{}}
	for _, f := range files {
		url := d.BaseURL + filepath.Base(f)
		shown := filepath.Join(dir, filepath.Base(f))
		b, err := os.ReadFile(f)
		if err != nil {
			d.Broken[url] = &ConfigError{File: shown, Msg: "cannot read schema file", Err: err}
			continue
		}
		doc, err := Parse(b, schemaFileLimits)
		if err != nil {
			var pe *ParseError
			errors.As(err, &pe)
			line, col := lineCol(b, pe.Offset)
			d.Broken[url] = &ConfigError{File: shown, Line: line, Column: col, Msg: "not strict JSON: " + pe.Reason + ": " + pe.Message, Err: err}
			continue
		}
		d.Docs[url] = doc
		if obj, ok := doc.(map[string]any); ok {
			if id, ok := obj["$id"].(string); ok && strings.Contains(id, "://") {
				d.Docs[strings.TrimSuffix(id, "#")] = doc
			}
		}
	}
	return d, nil
}

// Load implements jsonschema.URLLoader: a broken file's error, a parsed
// document, or an error wrapping ErrOutsideContract.
func (d *SchemaDir) Load(url string) (any, error) {
	if err, ok := d.Broken[url]; ok {
		return nil, err
	}
	return d.Docs.Load(url)
}

// Compile compiles the folder's file name with the gate's compiler
// configuration (NewSchemaCompiler). Errors are *ConfigError values naming
// the file, with the folder's file URLs shortened to file names, and wrap
// ErrOutsideContract for a $ref that leaves the folder.
func (d *SchemaDir) Compile(name string) (*jsonschema.Schema, error) {
	url := d.BaseURL + name
	shown := filepath.Join(d.Dir, name)
	if err, ok := d.Broken[url]; ok {
		return nil, err
	}
	if _, ok := d.Docs[url]; !ok {
		return nil, &ConfigError{File: shown, Msg: "schema file not found", Err: os.ErrNotExist}
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
