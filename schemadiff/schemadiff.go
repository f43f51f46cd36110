// Package schemadiff is airlock diff: two JSON Schemas compared from the
// consumer's side, each change classified by a rule of one registry.
//
// It holds the entry points (Files, Contracts, ComparePairs, Base,
// UpstreamVersions, Compare), the registry of rules (Rules, Lookup;
// rules.go), the walk that builds one merged view per instance location
// and calls the rules' handlers (view.go, walk.go; the report of each
// shared pair's changes once in walk_report.go, and the watched pointers
// of the gate-impact view in watch.go), and the handlers, a file per
// family of rules (refs.go, alternatives.go, types.go, values.go,
// bounds.go, strings.go, arrays.go, properties.go, other.go), and the
// manifest families that compare two revisions of a contract's
// contract.yaml (manifest.go, manifest_compare.go, manifest_text.go), with
// the gate-impact view (manifest_contracts.go), its fixture evidence
// (manifest_evidence.go) and contracts read from a git revision
// (manifest_git.go). Both schemas are compiled first, the way the
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

// Bounds on the work one comparison may do.
//
//   - maxDiffDepth: the walk compares instance locations of at most 64
//     reference tokens (the gate's default parse depth cap,
//     gate.DefaultMaxDepth), oneOf/anyOf adding none, and at most 64
//     oneOf/anyOf distributions nested at one location; a location past
//     either is a *gate.ConfigError naming it, never a silent skip.
//   - maxAlternatives: the oneOf/anyOf groups that apply at one instance
//     location distribute into the product of their branch counts; more
//     than 64 alternatives on a side is an error naming each group's file
//     and JSON Pointer (each alternative is tried against each of the
//     other side's, so the work grows with the square of the product).
//   - maxPairsPerNode, minPairs: the walk compares each pair of member
//     lists once (see walk.go), at most maxPairsPerNode per JSON object or
//     array in the two schemas' documents, plus minPairs; beyond that the
//     schemas are an error rather than a diff that might miss a change.
//     Memory and time are proportional to the pairs compared, so to the
//     size of the schemas.
const (
	maxDiffDepth    = 64
	maxAlternatives = 64
	maxPairsPerNode = 16
	minPairs        = 10000
	// maxFingerprintsPerNode bounds the fingerprints of one side's
	// subschemas (other.go) the same way: per JSON object or array of its
	// documents, plus minPairs.
	maxFingerprintsPerNode = 16
	// maxStepsPerPair bounds the child steps (a property, an element, an
	// alternative, each reached pair counted wherever it is reached) at
	// this many per pair the bound allows.
	maxStepsPerPair = 8
)

// Schema is one compiled schema file and the documents its $refs reach.
type Schema struct {
	path string // as given
	name string // base name
	dir  *schema.Dir
	docs map[string]any
	root *jsonschema.Schema
	// nodeCount caches nodes.
	nodeCount int
	// anchors caches dynamicAnchors; fps memoises fingerprint.
	anchors map[string]int
	fps     *fingerprints
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
// of its own folder; nothing else is read. The two are compiled at the
// same time (the compile of a large schema takes longer than the
// comparison); an error of the old file is returned before one of the new.
func Files(oldPath, newPath string) (*reports.Diff, error) {
	var n *Schema
	var nErr error
	compiled := make(chan struct{})
	go func() {
		defer close(compiled)
		n, nErr = CompileFile(newPath)
	}()
	o, err := CompileFile(oldPath)
	<-compiled
	if err != nil {
		return nil, err
	}
	if nErr != nil {
		return nil, nErr
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
	cmp, _, err := diffVersions(c, c, oldVersion, newVersion, nil)
	if err != nil {
		return nil, err
	}
	return &reports.Diff{Comparisons: []reports.Comparison{cmp}}, nil
}

// diffVersions compares upstream version oldVersion of oc with newVersion
// of nc, judging each change against watch as compareWatching does.
func diffVersions(oc, nc *gate.Contract, oldVersion, newVersion string, watch map[string][]jsonpointer.Pointer) (reports.Comparison, [][]string, error) {
	ov, ok := introspect.Manifest(oc).UpstreamVersions[oldVersion]
	if !ok {
		return reports.Comparison{}, nil, fmt.Errorf("%w: tool %s has no upstream version %q (have %v)", gate.ErrUsage, oc.Tool(), oldVersion, oc.UpstreamVersions())
	}
	nv, ok := introspect.Manifest(nc).UpstreamVersions[newVersion]
	if !ok {
		return reports.Comparison{}, nil, fmt.Errorf("%w: tool %s has no upstream version %q (have %v)", gate.ErrUsage, nc.Tool(), newVersion, nc.UpstreamVersions())
	}
	name := fmt.Sprintf("%s upstream %s → %s", nc.Tool(), oldVersion, newVersion)
	if oldVersion == newVersion {
		name = fmt.Sprintf("%s upstream %s", nc.Tool(), newVersion)
	}
	oroot, _ := introspect.Schema(oc, oldVersion)
	nroot, _ := introspect.Schema(nc, newVersion)
	return compareWatching(name, contractSchema(oc, ov.Schema, oroot), contractSchema(nc, nv.Schema, nroot), watch)
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

// Compare compares two compiled schemas. Each pair of subschemas (each
// pair of the lists of schemas that apply at an instance location) is
// compared once; a change found behind a pair that applies at several
// instance locations (a shared $ref target) is reported once, at the first
// location in walk order, and its message names the others. Schemas whose
// comparison needs more pairs than the bound (maxPairsPerNode per JSON
// object or array of the two schemas, plus minPairs), or whose
// oneOf/anyOf groups distribute into more than maxAlternatives at one
// location, are a *gate.ConfigError naming the cause rather than a diff
// that might miss a change.
func Compare(name string, o, n *Schema) (reports.Comparison, error) {
	cmp, _, err := compareWatching(name, o, n, nil)
	return cmp, err
}

// compareWatching is Compare that also says, for each change in order,
// which labels of watch (label → instance locations, RFC 6901 with "*"
// for any element) it touches: a watched location at, above or below
// the change's instance location, at any of the locations the change
// applies at (a change behind a shared $ref is reported once but applies
// wherever the same schemas do). Labels are sorted; nil watch gives nil.
func compareWatching(name string, o, n *Schema, watch map[string][]jsonpointer.Pointer) (reports.Comparison, [][]string, error) {
	w := newWalker(o, n, handlers())
	root := w.compare([]member{{s: o.root}}, []member{{s: n.root}}, "", 0)
	if w.err != nil {
		return reports.Comparison{}, nil, w.err
	}
	if watch != nil {
		w.watched = newWatchFlow(root, watch)
	}
	changes := append([]reports.Change{}, w.report(root)...)
	n.place(changes)
	return reports.Comparison{Name: name, Old: o.path, New: n.path, Changes: changes}, w.touched, nil
}

// nodes is the number of JSON objects and arrays in the documents the
// schema's folder read (its own file and those its $refs reach), counted
// once per Schema.
func (f *Schema) nodes() int {
	if f.nodeCount == 0 {
		for _, d := range f.docs {
			f.nodeCount += countNodes(d)
		}
	}
	return f.nodeCount
}

func countNodes(v any) int {
	n := 0
	stack := []any{v}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch x := x.(type) {
		case map[string]any:
			n++
			for _, c := range x {
				stack = append(stack, c)
			}
		case []any:
			n++
			stack = append(stack, x...)
		}
	}
	return n
}
