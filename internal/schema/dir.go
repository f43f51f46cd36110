package schema

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/config"
	"github.com/airlockdev/airlock/internal/fileio"
	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/jsonpointer"
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
// names are errors, numbers stay json.Number) and checked strictly before
// the compiler sees it (see Compile for what that refuses). A file is served under its
// URL (BaseURL + name) and, when its top-level $id is an absolute URL,
// under that $id; a relative $ref resolved against such an $id reaches its
// sibling file of that name.
//
// When Components is set, the shared components are served too: a URL that
// resolves to "../_components/<rel>" from the folder (or from an absolute
// $id of one of its files) is the file rel of Components, where rel is at
// most MaxComponentDepth segments, each a plain name (no "..", no leading
// dot). A component is read and checked exactly as a contract file, and is
// named "../_components/<rel>" (Position.Name, Bytes, Relative) and shown as
// ComponentsShown + "/" + rel in errors. A component may $ref only the
// components beside it (a file name, with or without a #fragment) or a
// fragment of itself, and may not carry $id: it is self-contained within
// its own folder. Nothing else is ever read: every other URL fails with an
// error wrapping ErrOutsideContract.
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
	// Components, when not nil, holds the shared components at its root
	// (the "_components" folder beside the contract folder), and
	// ComponentsShown is how errors name that folder. Set them before the
	// first Compile; nil serves none (a $ref to one is outside the
	// contract).
	Components      fs.FS
	ComponentsShown string
	// BaseURL is the folder's URL, ending in "/": "file:///" + Folder + "/".
	BaseURL string
	// Docs holds the documents read so far, by URL and by $id.
	Docs ConfinedLoader
	// Formats judges each format name the files use: nil error when the
	// contract can assert (or deliberately annotate) it. nil means
	// CheckFormatName. Set it before the first Compile.
	Formats func(name string) error
	// idBases are the "folders" of absolute $ids seen, e.g.
	// "https://airlock.invalid/review_status/".
	idBases map[string]bool
	// names maps every URL a document was served under to its file name.
	names map[string]string
	// raw holds each file's bytes, for the line and column of a problem.
	raw map[string][]byte
	// walked holds each file's strict walk: its schema positions.
	walked map[string]*checked
	// strict is the strict walk; its pattern budget spans the folder.
	strict checker
	// failed is the configuration error of the last file Load could not
	// serve: the compiler wraps a loader's error in a type that does not
	// unwrap, so Compile returns this one instead.
	failed *config.Error
	// served holds the files Load served since Compile began.
	served map[string]bool
	// refused is the last URL Load refused as outside the folder, for
	// the line of the $ref that named it (refSite).
	refused string
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
	return &Dir{FS: fsys, Folder: folder, Shown: shown, BaseURL: base, Docs: ConfinedLoader{}, idBases: map[string]bool{},
		names: map[string]string{}, raw: map[string][]byte{}, walked: map[string]*checked{}, served: map[string]bool{}}
}

// Show returns how errors name the folder's file name (or a component,
// named ComponentPrefix + its path).
func (d *Dir) Show(name string) string {
	if rel, ok := strings.CutPrefix(name, ComponentPrefix); ok {
		shown := d.ComponentsShown
		if shown == "" {
			shown = ComponentsFolder
		}
		return strings.TrimSuffix(shown, "/") + "/" + rel
	}
	return strings.TrimSuffix(d.Shown, "/") + "/" + name
}

// url is the URL a file of the folder, or a component, is served under.
func (d *Dir) url(name string) string {
	if rel, ok := strings.CutPrefix(name, ComponentPrefix); ok {
		return componentBase(d.BaseURL) + rel
	}
	return d.BaseURL + name
}

// Load implements jsonschema.URLLoader.
func (d *Dir) Load(url string) (any, error) {
	if doc, ok := d.Docs[url]; ok {
		if name, ok := d.names[url]; ok {
			d.served[name] = true
		}
		return doc, nil
	}
	name, ok := d.fileFor(url)
	if !ok {
		d.refused = url
		return nil, fmt.Errorf("%w: %s", ErrOutsideContract, url)
	}
	if doc, ok := d.Docs[d.url(name)]; ok {
		d.Docs[url] = doc
		d.names[url] = name
		d.served[name] = true
		return doc, nil
	}
	doc, err := d.read(name)
	if errors.Is(err, fs.ErrNotExist) {
		d.refused = url
		if IsComponent(name) {
			return nil, fmt.Errorf("%w: %s (no such shared component)", ErrOutsideContract, url)
		}
		return nil, fmt.Errorf("%w: %s (no such file in the contract folder)", ErrOutsideContract, url)
	}
	if err != nil {
		errors.As(err, &d.failed)
		return nil, err
	}
	d.Docs[d.url(name)] = doc
	d.Docs[url] = doc
	d.names[d.url(name)] = name
	d.names[url] = name
	d.served[name] = true
	if obj, ok := doc.(map[string]any); ok {
		if id, ok := obj["$id"].(string); ok && strings.Contains(id, "://") {
			id = strings.TrimSuffix(id, "#")
			d.Docs[id] = doc
			d.names[id] = name
			if i := strings.LastIndex(id, "/"); i > strings.Index(id, "://")+2 {
				d.idBases[id[:i+1]] = true
			}
		}
	}
	return doc, nil
}

// Doc returns the parsed document of file name, if it was read.
func (d *Dir) Doc(name string) any { return d.Docs[d.url(name)] }

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
	if d.Components == nil {
		return "", false
	}
	for _, b := range bases {
		if cb := componentBase(b); cb != "" {
			if rel, ok := strings.CutPrefix(url, cb); ok && componentPath(rel) {
				return ComponentPrefix + rel, true
			}
		}
	}
	return "", false
}

// read reads and parses one schema file of the folder.
func (d *Dir) read(name string) (any, error) {
	shown := d.Show(name)
	fsys, file := d.FS, path.Join(d.Folder, name)
	if rel, ok := strings.CutPrefix(name, ComponentPrefix); ok {
		fsys, file = d.Components, rel
	}
	b, err := fileio.ReadFS(fsys, file, MaxFileSize)
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
	d.raw[name] = b
	d.strict.formats = d.Formats
	w := d.strict.check(doc)
	w.problems = append(w.problems, refProblems(doc, w, IsComponent(name))...)
	if len(w.problems) > 0 {
		p := w.problems[0]
		msg := p.Msg
		switch n := len(w.problems) - 1; {
		case n == 1:
			msg += " (and 1 more problem in this file)"
		case n > 1:
			msg += fmt.Sprintf(" (and %d more problems in this file)", n)
		}
		err := ErrNotStrict
		if p.Err != nil {
			err = errors.Join(ErrNotStrict, p.Err)
		}
		return nil, d.errAt(name, p.Pointer, msg, err)
	}
	d.walked[name] = w
	return doc, nil
}

// ErrNotStrict is wrapped by the *config.Error of a schema file that the
// strict checks refuse: a keyword JSON Schema 2020-12 does not define, a
// format the gate cannot assert, an integer-valued keyword the validator
// cannot represent, a pattern past its bounds, a reference to a
// non-schema or a reference loop (see Dir.Compile).
var ErrNotStrict = errors.New("schema file refused by the strict checks")

// errAt is a configuration error at pointer ptr of file name, with its
// line and column when the pointer is found in the file's bytes. A token
// of ptr longer than maxKeyToken bytes (a huge patternProperties key, say)
// is cut and ends in "…" in the error's Key.
func (d *Dir) errAt(name, ptr, msg string, err error) *config.Error {
	key := ptr
	if len(key) > maxKeyToken {
		toks := strings.Split(key, "/")
		for i, t := range toks {
			if len(t) > maxKeyToken {
				toks[i] = strings.ToValidUTF8(t[:maxKeyToken], "") + "…"
			}
		}
		key = strings.Join(toks, "/")
	}
	e := &config.Error{File: d.Show(name), Key: key, Msg: msg, Err: err}
	if b, ok := d.raw[name]; ok {
		if off, ok := strictjson.PointerOffset(b, ptr); ok {
			e.Line, e.Column = config.LineCol(b, off)
		}
	}
	return e
}

// Compile compiles the folder's file name with the gate's compiler
// configuration (NewCompiler), every format asserted (CompileWith applies
// a contract's format policy). Errors are *config.Error values naming the
// file, with the folder's URLs shortened to file names, and wrap
// ErrOutsideContract for a $ref that leaves the folder.
//
// Load is strict and total: before the compiler sees a file, a walk over
// its schema positions (the root, and every subschema reached through
// $defs, properties, patternProperties, dependentSchemas, items,
// prefixItems, allOf, anyOf, oneOf, not, if, then, else, contains,
// propertyNames, additionalProperties, unevaluated*, contentSchema; never
// the data of const, enum, default or examples) refuses, with an error
// wrapping ErrNotStrict at the file, line, column and JSON Pointer of the
// keyword:
//
//   - a keyword JSON Schema 2020-12 does not define, unless it is an
//     annotation (see IsAnnotation); OpenAPI's nullable, discriminator and
//     boolean exclusiveMinimum/exclusiveMaximum, and the draft-07 and
//     2019-09 spellings, get a message naming the 2020-12 form;
//   - "then"/"else" without "if", "minContains"/"maxContains" without
//     "contains", $vocabulary, and a $schema other than Dialect;
//   - a format that Formats rejects (by default CheckFormatName: unknown
//     names, OpenAPI's int32/int64/float/double, formats without a checker);
//   - minLength, maxLength, minItems, maxItems, minProperties,
//     maxProperties, minContains or maxContains that is not an integer
//     from 0 to 2^63-1 (the validator keeps them as Go ints and would wrap
//     a larger value silently);
//   - a pattern or patternProperties key past the bounds of CompilePattern,
//     or past MaxContractPatternInsts for the folder.
//
// After compiling, it refuses a reference that lands on a value that is
// not a schema position, and a loop of references and in-place
// applicators that never descends into the instance (checkGraph).
// Problems the JSON Schema 2020-12 metaschema finds are reported at their
// line and column too.
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
	clear(d.served)
	d.refused = ""
	if _, err := d.Load(url); err != nil {
		return nil, err
	}
	c := NewCompiler(d)
	formats.register(c)
	d.precompile(c, url)
	d.failed = nil
	s, err := c.Compile(url)
	if err != nil {
		var ce *config.Error
		if errors.As(err, &ce) {
			return nil, ce
		}
		if d.failed != nil {
			return nil, d.failed
		}
		var me *jsonschema.SchemaValidationError
		if errors.As(err, &me) {
			if e := d.metaschemaErr(me); e != nil {
				return nil, e
			}
		}
		if name, ptr, ok := d.refSite(d.refused, false); ok {
			return nil, d.errAt(name, ptr, d.refusedMessage(name, ptr), compileErr(err))
		}
		if target, what := danglingTarget(err); target != "" {
			if name, ptr, ok := d.refSite(target, true); ok {
				return nil, d.errAt(name, ptr, fmt.Sprintf("%s %q: %s", ptr[strings.LastIndex(ptr, "/")+1:], d.refText(name, ptr), what), err)
			}
		}
		return nil, &config.Error{File: shown, Msg: d.Relative(err.Error()), Err: compileErr(err)}
	}
	if err := d.checkCompiled(c, s); err != nil {
		return nil, err
	}
	return s, nil
}

// checkCompiled runs checkGraph over s and the compiled schemas of every
// $dynamicAnchor of the files this compile read.
func (d *Dir) checkCompiled(c *jsonschema.Compiler, s *jsonschema.Schema) error {
	dynamic := map[string][]*jsonschema.Schema{}
	for _, name := range slices.Sorted(maps.Keys(d.served)) {
		w := d.walked[name]
		if w == nil {
			continue
		}
		for _, ptr := range w.dynamic {
			ds, err := c.Compile(d.url(name) + "#" + fragment(ptr))
			if err != nil {
				return &config.Error{File: d.Show(name), Key: ptr, Msg: d.Relative(err.Error()), Err: compileErr(err)}
			}
			dynamic[ds.DynamicAnchor] = append(dynamic[ds.DynamicAnchor], ds)
		}
	}
	isSchema := func(loc string) bool {
		doc, ptr := splitLocation(loc)
		name, ok := d.names[doc]
		if !ok || d.walked[name] == nil {
			return true // not one of the folder's files
		}
		return d.walked[name].schemas[ptr]
	}
	p := checkGraph([]*jsonschema.Schema{s}, dynamic, isSchema)
	if p == nil {
		return nil
	}
	doc, ptr := splitLocation(p.loc)
	name, ok := d.names[doc]
	if !ok {
		return &config.Error{File: d.Show(path.Base(doc)), Msg: d.Relative(p.msg), Err: ErrNotStrict}
	}
	return d.errAt(name, ptr+"/"+p.kw, d.Relative(p.msg), ErrNotStrict)
}

// maxKeyToken is the longest token of a pointer an error's Key shows, in
// bytes.
const maxKeyToken = 256

// fragment percent-encodes each token of a JSON Pointer for a URL
// fragment, as the compiler spells locations.
func fragment(ptr string) string {
	toks := strings.Split(ptr, "/")
	for i, t := range toks {
		toks[i] = url.PathEscape(t)
	}
	return strings.Join(toks, "/")
}

// metaschemaErr places a metaschema validation failure at the line and
// column of the value that failed; nil when the document is not one of
// the folder's files.
func (d *Dir) metaschemaErr(me *jsonschema.SchemaValidationError) *config.Error {
	doc, ptr := splitLocation(me.URL)
	name, ok := d.names[doc]
	if !ok {
		return nil
	}
	msg := "not a valid JSON Schema 2020-12"
	var ve *jsonschema.ValidationError
	if errors.As(me.Err, &ve) {
		leaf := MostSpecific(ve)
		for _, tok := range leaf.InstanceLocation {
			ptr += "/" + jsonpointer.EscapeToken(tok)
		}
		msg += ": " + leaf.ErrorKind.LocalizedString(printer)
	}
	return d.errAt(name, ptr, d.Relative(msg), me)
}

// Relative shortens the folder's URLs in s to file names, and the URLs of
// shared components to their names relative to the folder
// ("../_components/github/v1/user.schema.json#/properties/id/type").
func (d *Dir) Relative(s string) string {
	if d.Components != nil {
		if cb := componentBase(d.BaseURL); cb != "" {
			s = strings.ReplaceAll(s, cb, ComponentPrefix)
		}
	}
	return strings.ReplaceAll(s, d.BaseURL, "")
}

// compileErr keeps ErrOutsideContract reachable through errors.Is: the
// compiler's own error types do not all unwrap.
func compileErr(err error) error {
	if strings.Contains(err.Error(), ErrOutsideContract.Error()) && !errors.Is(err, ErrOutsideContract) {
		return fmt.Errorf("%w: %v", ErrOutsideContract, err)
	}
	return err
}

// Position is where a compiled schema (or one of its keywords) lies in the
// folder: the file as errors name it (File) and as the folder names it
// (Name), and the RFC 6901 JSON Pointer inside the file.
type Position struct {
	File, Name string
	Pointer    string
}

// Locate returns the Position of loc, a compiled schema's Location (an
// absolute URL whose fragment is a JSON Pointer, as jsonschema.Schema
// spells it) with keyword, when not "", appended as one more reference
// token. ok is false when loc names no file of the folder this Dir read.
// Bytes gives the file's text, for the line and column of the pointer
// (strictjson.PointerOffsets finds many in one pass).
func (d *Dir) Locate(loc, keyword string) (p Position, ok bool) {
	doc, ptr := splitLocation(loc)
	name, ok := d.names[doc]
	if !ok {
		return Position{}, false
	}
	if keyword != "" {
		ptr += "/" + jsonpointer.EscapeToken(keyword)
	}
	return Position{File: d.Show(name), Name: name, Pointer: ptr}, true
}

// Value returns the JSON value a compiled schema's Location names, as the
// file holds it (shared: do not modify); false for a location outside the
// folder's files.
func (d *Dir) Value(loc string) (any, bool) {
	doc, ptr := splitLocation(loc)
	v, ok := d.Docs[doc]
	if !ok {
		return nil, false
	}
	p, err := jsonpointer.Parse(ptr)
	if err != nil {
		return nil, false
	}
	return p.Lookup(v)
}

// Bytes returns the text of the folder's file name as it was read (shared:
// do not modify); nil when it was not read.
func (d *Dir) Bytes(name string) []byte { return d.raw[name] }
