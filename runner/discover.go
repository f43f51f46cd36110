package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/airlockdev/airlock/gate"
)

// Fixture kinds: the folders under fixtures/<tool>/<upstream-version>/.
const (
	KindAccepted   = "accepted"
	KindNearMiss   = "near-miss"
	KindHistorical = "historical"
	KindRecorded   = "recorded"
)

// Kinds lists the fixture kinds in report order.
var Kinds = []string{KindAccepted, KindNearMiss, KindHistorical, KindRecorded}

// Fixture is one raw response on disk.
type Fixture struct {
	Tool            string
	UpstreamVersion string
	Kind            string
	// Name is the body's file name; Stem the name without its extension.
	Name string
	Stem string
	// Body, Meta, Golden and OutputSchema are paths; Meta, Golden and
	// OutputSchema may not exist.
	Body   string
	Meta   string
	Golden string
	// OutputSchema is the MCP tool's outputSchema saved by airlock record
	// beside the body (<stem>.output-schema.json).
	OutputSchema string
	// defaults is the merged directory defaults above the fixture.
	defaults *Meta
}

// Filter selects fixtures; an empty list selects all.
type Filter struct {
	Tools            []string
	UpstreamVersions []string
	Kinds            []string
}

func (f Filter) pick(list []string, v string) bool { return len(list) == 0 || slices.Contains(list, v) }

// Discover walks root (fixtures/) for the given contracts and returns the
// fixtures sorted by tool, upstream version, kind (in Kinds order) and name.
// A tool folder without a contract, an upstream version the contract does
// not list, an unknown kind folder, a sidecar or golden without a body, two
// bodies with one stem, or a broken defaults file is a *gate.ConfigError.
func Discover(root string, contracts map[string]*gate.Contract, filter Filter) ([]Fixture, error) {
	tools, err := subdirs(root)
	if ce := (*gate.ConfigError)(nil); errors.As(err, &ce) {
		return nil, ce
	}
	if err != nil {
		return nil, &gate.ConfigError{File: root, Msg: fmt.Sprintf("cannot read the fixtures directory (%v); run from the project root or pass --fixtures", errors.Unwrap(err)), Err: err}
	}
	if err := filter.check(contracts); err != nil {
		return nil, err
	}
	if entries, err := os.ReadDir(root); err == nil {
		for _, e := range entries {
			n := e.Name()
			if e.Type().IsRegular() && !strings.HasPrefix(n, ".") && !strings.HasSuffix(n, ".md") {
				return nil, &gate.ConfigError{File: filepath.Join(root, n), Msg: "a file at the top of the fixtures folder belongs to no tool; move it to <tool>/<upstream-version>/<kind>/"}
			}
		}
	}
	var out []Fixture
	for _, tool := range tools {
		if !filter.pick(filter.Tools, tool) {
			continue
		}
		c := contracts[tool]
		tdir := filepath.Join(root, tool)
		if c == nil {
			return nil, &gate.ConfigError{File: tdir, Msg: fmt.Sprintf("no contract for tool %q (expected schemas/%s/%s); write one, or select other tools with --tool", tool, tool, gate.ManifestFile)}
		}
		if err := onlyFolders(tdir); err != nil {
			return nil, err
		}
		toolDefaults, err := readDefaults(tdir, nil)
		if err != nil {
			return nil, err
		}
		versions, err := subdirs(tdir)
		if err != nil {
			return nil, asConfigError(tdir, err)
		}
		for _, ver := range versions {
			vdir := filepath.Join(tdir, ver)
			if !slices.Contains(c.UpstreamVersions(), ver) {
				return nil, &gate.ConfigError{File: vdir, Msg: fmt.Sprintf("upstream version %q is not in %s's contract (have %v)", ver, tool, c.UpstreamVersions())}
			}
			if !filter.pick(filter.UpstreamVersions, ver) {
				continue
			}
			if err := onlyFolders(vdir); err != nil {
				return nil, err
			}
			verDefaults, err := readDefaults(vdir, toolDefaults)
			if err != nil {
				return nil, err
			}
			kinds, err := subdirs(vdir)
			if err != nil {
				return nil, asConfigError(vdir, err)
			}
			sort.Slice(kinds, func(i, j int) bool { return slices.Index(Kinds, kinds[i]) < slices.Index(Kinds, kinds[j]) })
			for _, kind := range kinds {
				kdir := filepath.Join(vdir, kind)
				if !slices.Contains(Kinds, kind) {
					return nil, &gate.ConfigError{File: kdir, Msg: fmt.Sprintf("unknown fixture kind %q (want one of %v)", kind, Kinds)}
				}
				if !filter.pick(filter.Kinds, kind) {
					continue
				}
				kindDefaults, err := readDefaults(kdir, verDefaults)
				if err != nil {
					return nil, err
				}
				fx, err := fixturesIn(kdir, tool, ver, kind, kindDefaults)
				if err != nil {
					return nil, err
				}
				out = append(out, fx...)
			}
		}
	}
	return out, nil
}

// check refuses a selection that names a tool, upstream version or kind
// that does not exist: a typo must not give a green run that checked nothing.
func (f Filter) check(contracts map[string]*gate.Contract) error {
	for _, k := range f.Kinds {
		if !slices.Contains(Kinds, k) {
			return &gate.ConfigError{File: "--kind", Msg: fmt.Sprintf("unknown fixture kind %q (want one of %v)", k, Kinds)}
		}
	}
	for _, t := range f.Tools {
		if contracts[t] == nil {
			return &gate.ConfigError{File: "--tool", Msg: fmt.Sprintf("no contract for tool %q", t)}
		}
	}
	for _, v := range f.UpstreamVersions {
		found := false
		for name, c := range contracts {
			found = found || f.pick(f.Tools, name) && slices.Contains(c.UpstreamVersions(), v)
		}
		if !found {
			return &gate.ConfigError{File: "--upstream-version", Msg: fmt.Sprintf("no selected contract has upstream version %q", v)}
		}
	}
	return nil
}

// onlyFolders refuses files in a tool or upstream-version folder other than
// defaults.meta.yaml: a body there would belong to no kind and be ignored.
func onlyFolders(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return &gate.ConfigError{File: dir, Err: err}
	}
	for _, e := range entries {
		if st, err := os.Stat(filepath.Join(dir, e.Name())); err == nil && st.IsDir() {
			continue // a folder, or a link to one (refused by subdirs)
		}
		if !e.IsDir() && e.Name() != DefaultsFile && !strings.HasPrefix(e.Name(), ".") {
			return &gate.ConfigError{File: filepath.Join(dir, e.Name()), Msg: fmt.Sprintf("a file outside a kind folder; move it into one of %v", Kinds)}
		}
	}
	return nil
}

func subdirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 {
			if st, err := os.Stat(filepath.Join(dir, e.Name())); err == nil && st.IsDir() {
				// Following it could leave the tree or loop; skipping it would
				// hide fixtures. Either way the run would not say what it checked.
				return nil, &gate.ConfigError{File: filepath.Join(dir, e.Name()), Msg: "a symbolic link to a folder; fixture trees must hold real folders"}
			}
		}
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

func readDefaults(dir string, parent *Meta) (*Meta, error) {
	path := filepath.Join(dir, DefaultsFile)
	if _, err := os.Stat(path); err != nil {
		return parent, nil
	}
	m, err := readMeta(path)
	if err != nil {
		return nil, err
	}
	return merge(parent, m), nil
}

// fixturesIn lists the bodies of one kind folder with their sidecars.
func fixturesIn(dir, tool, ver, kind string, defaults *Meta) ([]Fixture, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, &gate.ConfigError{File: dir, Err: err}
	}
	names := map[string]bool{}
	bodies := map[string]bool{} // stems of body files
	for _, e := range entries {
		names[e.Name()] = true
		if n := e.Name(); !isSidecar(n) {
			bodies[bodyStem(n)] = true
		}
	}
	stems := map[string]string{}
	var out []Fixture
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(dir, name)
		if e.IsDir() {
			return nil, &gate.ConfigError{File: path, Msg: "unexpected folder inside a fixture kind folder"}
		}
		if name == DefaultsFile || strings.HasPrefix(name, ".") {
			continue
		}
		if stem, ok := strings.CutSuffix(name, MetaSuffix); ok {
			if !bodies[stem] {
				return nil, &gate.ConfigError{File: path, Msg: "sidecar without a body file " + stem + ".<ext>"}
			}
			continue
		}
		if stem, ok := strings.CutSuffix(name, GoldenSuffix); ok {
			if !bodies[stem] {
				return nil, &gate.ConfigError{File: path, Msg: "golden agent output without a body file " + stem + ".<ext>"}
			}
			continue
		}
		if stem, ok := strings.CutSuffix(name, OutputSchemaSuffix); ok {
			if !bodies[stem] {
				return nil, &gate.ConfigError{File: path, Msg: "MCP output schema without a body file " + stem + ".<ext>"}
			}
			continue
		}
		stem := bodyStem(name)
		if other, dup := stems[stem]; dup {
			return nil, &gate.ConfigError{File: path, Msg: fmt.Sprintf("two bodies share the name %q (%s); sidecars could not tell them apart", stem, other)}
		}
		stems[stem] = name
		f := Fixture{
			Tool: tool, UpstreamVersion: ver, Kind: kind, Name: name, Stem: stem,
			Body:     path,
			Golden:   filepath.Join(dir, stem+GoldenSuffix),
			defaults: defaults,
		}
		if names[stem+MetaSuffix] {
			f.Meta = filepath.Join(dir, stem+MetaSuffix)
		}
		if names[stem+OutputSchemaSuffix] {
			f.OutputSchema = filepath.Join(dir, stem+OutputSchemaSuffix)
		}
		out = append(out, f)
	}
	return out, nil
}

// bodyStem drops the last extension: "dup.json" → "dup", "page" → "page".
func bodyStem(name string) string {
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		return name[:i]
	}
	return name
}

func isSidecar(name string) bool {
	return name == DefaultsFile || strings.HasSuffix(name, MetaSuffix) || strings.HasSuffix(name, GoldenSuffix) || strings.HasSuffix(name, OutputSchemaSuffix)
}

// asConfigError returns err as a *gate.ConfigError about file.
func asConfigError(file string, err error) error {
	if ce := (*gate.ConfigError)(nil); errors.As(err, &ce) {
		return ce
	}
	return &gate.ConfigError{File: file, Err: err}
}
