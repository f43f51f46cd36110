// Package schemadiff is airlock diff: two JSON Schemas compared from the
// consumer's side, each change classified by a rule of one registry.
//
// It holds the entry points (Files, Contracts, ComparePairs, Base,
// UpstreamVersions, Compare), the registry of rules (Rules, Lookup;
// rules.go), the walk that builds one
// merged view per instance location and calls the rules' handlers (view.go,
// walk.go), and the handlers, a file per family of rules (refs.go,
// alternatives.go, types.go, values.go, bounds.go, strings.go, arrays.go,
// properties.go, other.go), and the manifest families that compare two
// revisions of a contract's contract.yaml (manifest.go, manifest_text.go),
// with the gate-impact view (manifest_contracts.go) and contracts read from
// a git revision (manifest_git.go). Both schemas are compiled first, the way the
// gate compiles contracts (strict JSON, draft 2020-12 by default, $refs
// confined to the *.json files of the schema's own folder), so every $ref is
// resolved before comparing. docs/diff.md lists the rules; RulesTable
// generates that list.
package schemadiff

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/fileio"
	"github.com/airlockdev/airlock/internal/introspect"
	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/reports"
)

// Bounds on the work one comparison may do: recursion depth, the number of
// schema pairs compared (recursive schemas, wide oneOfs), and the number of
// alternatives one location may distribute into.
const (
	maxDiffDepth    = 64
	maxDiffCompares = 20000
	maxAlternatives = 64
)

// Schema is one compiled schema file and the documents its $refs reach.
type Schema struct {
	path string // as given
	name string // base name
	dir  *schema.Dir
	docs map[string]any
	root *jsonschema.Schema
}

// CompileFile compiles path; its $refs may reach the *.json files of
// its own folder and the shared components of the "_components" folder
// beside it (see gate.ComponentsDir), and nothing else (no network, no
// other folder). Problems are *gate.ConfigError values naming the file.
func CompileFile(path string) (*Schema, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, &gate.ConfigError{File: path, Msg: "cannot read schema file", Err: err}
	}
	dir := schema.NewDir(fileio.NewTree(filepath.Dir(path)).FS(), ".", filepath.Dir(path))
	var err error
	if dir.Components, dir.ComponentsShown, err = gate.ComponentsDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	f := &Schema{path: path, name: filepath.Base(path), dir: dir, docs: dir.Docs}
	if f.root, err = dir.Compile(f.name); err != nil {
		return nil, err
	}
	return f, nil
}

// Root returns the compiled root schema.
func (f *Schema) Root() *jsonschema.Schema { return f.root }

// relative names a compiled schema's location for people: "#/$defs/x" in
// the root file, "other.json#/$defs/x" in a sibling,
// "../_components/github/v1/user.schema.json#/properties/id" in a shared
// component.
func (f *Schema) relative(loc string) string {
	rel := f.dir.Relative(loc)
	if rest, ok := strings.CutPrefix(rel, f.name+"#"); ok {
		return "#" + rest
	}
	return rel
}

// keyword returns the raw value of keyword kw of the schema at loc (the
// compiled form drops formats it does not know).
func (f *Schema) keyword(loc, kw string) (any, bool) {
	url, frag, _ := strings.Cut(loc, "#")
	p, err := jsonpointer.Parse(frag)
	if err != nil {
		return nil, false
	}
	v, ok := p.Lookup(f.docs[url])
	if !ok {
		return nil, false
	}
	m, _ := v.(map[string]any)
	x, ok := m[kw]
	return x, ok
}

// Files compares two schema files. Each may $ref the *.json files
// of its own folder; nothing else is read.
func Files(oldPath, newPath string) (*reports.Diff, error) {
	o, err := CompileFile(oldPath)
	if err != nil {
		return nil, err
	}
	n, err := CompileFile(newPath)
	if err != nil {
		return nil, err
	}
	cmp, err := Compare(filepath.Base(oldPath)+" → "+filepath.Base(newPath), o, n)
	if err != nil {
		return nil, err
	}
	return &reports.Diff{Comparisons: []reports.Comparison{cmp}}, nil
}

// UpstreamVersions compares the schemas of two upstream versions of the
// contract in schemasDir/tool. An unknown version is an error wrapping
// gate.ErrUsage.
func UpstreamVersions(schemasDir, tool, oldVersion, newVersion string, opts gate.Options) (*reports.Diff, error) {
	c, err := gate.LoadDir(filepath.Join(schemasDir, tool), opts)
	if err != nil {
		return nil, err
	}
	cmp, err := diffVersions(c, c, oldVersion, newVersion)
	if err != nil {
		return nil, err
	}
	return &reports.Diff{Comparisons: []reports.Comparison{cmp}}, nil
}

func diffVersions(oc, nc *gate.Contract, oldVersion, newVersion string) (reports.Comparison, error) {
	ov, ok := introspect.Manifest(oc).UpstreamVersions[oldVersion]
	if !ok {
		return reports.Comparison{}, fmt.Errorf("%w: tool %s has no upstream version %q (have %v)", gate.ErrUsage, oc.Tool(), oldVersion, oc.UpstreamVersions())
	}
	nv, ok := introspect.Manifest(nc).UpstreamVersions[newVersion]
	if !ok {
		return reports.Comparison{}, fmt.Errorf("%w: tool %s has no upstream version %q (have %v)", gate.ErrUsage, nc.Tool(), newVersion, nc.UpstreamVersions())
	}
	name := fmt.Sprintf("%s upstream %s → %s", nc.Tool(), oldVersion, newVersion)
	if oldVersion == newVersion {
		name = fmt.Sprintf("%s upstream %s", nc.Tool(), newVersion)
	}
	oroot, _ := introspect.Schema(oc, oldVersion)
	nroot, _ := introspect.Schema(nc, newVersion)
	return Compare(name, contractSchema(oc, ov.Schema, oroot), contractSchema(nc, nv.Schema, nroot))
}

// contractSchema is a schema the contract compiled when it loaded (file is
// its file name, root the compiled schema): no second compile.
func contractSchema(c *gate.Contract, file string, root *jsonschema.Schema) *Schema {
	dir := introspect.SchemaDir(c)
	return &Schema{path: path.Join(dir.Shown, file), name: file, dir: dir, docs: dir.Docs, root: root}
}

// UpstreamSchema returns the schema of upstream version v of c as the
// contract compiled it when it loaded (no second compile), for Compare;
// false for a version c does not have.
func UpstreamSchema(c *gate.Contract, v string) (*Schema, bool) {
	uv, ok := introspect.Manifest(c).UpstreamVersions[v]
	if !ok {
		return nil, false
	}
	root, _ := introspect.Schema(c, v)
	return contractSchema(c, uv.Schema, root), true
}

// SortVersions sorts upstream version names naturally: runs of digits
// compare as numbers, so v9 comes before v10 and dates stay in order.
func SortVersions(vs []string) []string {
	out := slices.Clone(vs)
	slices.SortStableFunc(out, compareVersions)
	return out
}

func compareVersions(a, b string) int {
	for a != "" && b != "" {
		da, db := isASCIIDigit(a[0]), isASCIIDigit(b[0])
		if da && db {
			na, ra := digitRun(a)
			nb, rb := digitRun(b)
			ta, tb := strings.TrimLeft(na, "0"), strings.TrimLeft(nb, "0")
			if c := len(ta) - len(tb); c != 0 {
				return c
			}
			if c := strings.Compare(ta, tb); c != 0 {
				return c
			}
			a, b = ra, rb
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func isASCIIDigit(c byte) bool { return c >= '0' && c <= '9' }

func digitRun(s string) (string, string) {
	i := 0
	for i < len(s) && isASCIIDigit(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

// Compare compares two compiled schemas. Schemas too large to compare
// within maxDiffCompares schema pairs are a configuration error rather
// than a diff that might miss a change.
func Compare(name string, o, n *Schema) (reports.Comparison, error) {
	w := newWalker(o, n, handlers(), maxDiffCompares)
	w.compare([]member{{s: o.root}}, []member{{s: n.root}}, "", 0)
	if w.budget <= 0 {
		return reports.Comparison{}, &gate.ConfigError{File: n.path, Msg: fmt.Sprintf("too large to compare with %s: more than %d schema pairs (wide oneOf/anyOf or deep recursion)", o.path, maxDiffCompares)}
	}
	return reports.Comparison{Name: name, Old: o.path, New: n.path, Changes: append([]reports.Change{}, w.changes...)}, nil
}
