// Package bigtree writes large fixture trees for measuring the harness: the
// bundled contracts copied as they are, and the bundled fixtures (bodies,
// sidecars, goldens, MCP output schemas, defaults) replicated under new
// names until the tree holds the number of fixtures asked for, counted as
// airlock run discovers them. BenchmarkRun (runner) builds its
// trees with it, and scripts/gentree writes one to disk for make bench.
//
// It is test support like internal/testtree, but a package of its own so
// that a command using it does not link ginkgo (whose flags join the
// command line's at start-up).
package bigtree

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
)

// Write copies the contracts under schemas into dir/schemas and writes
// dir/fixtures: each tool's and version's defaults file once, and copies
// of every fixture that discovery finds under fixtures for those contracts
// (fixture.Open, what airlock run sees: bodies, not sidecars, goldens, MCP
// output schemas or hidden files) with its sidecar, golden and output
// schema, copy i of a file named NAME named cIIIII-NAME in the same
// folder, as many copies as it takes to reach at least n fixtures. Files
// discovery does not take for a fixture are not copied. It returns the
// number of fixtures written, which is the number airlock run discovers in
// the tree. dir/schemas and dir/fixtures must not exist yet; a contract
// under schemas that does not load is an error.
func Write(dir, schemas, fixtures string, n int) (int, error) {
	if n < 1 {
		return 0, fmt.Errorf("bigtree: n must be at least 1, not %d", n)
	}
	for _, sub := range []string{"schemas", "fixtures"} {
		if _, err := os.Lstat(filepath.Join(dir, sub)); !errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("bigtree: %s already exists", filepath.Join(dir, sub))
		}
	}
	set, err := fixture.Open(schemas, fixtures, fixture.Filter{}, gate.Options{})
	if err != nil {
		return 0, err
	}
	if len(set.Broken) > 0 {
		return 0, fmt.Errorf("bigtree: %v", set.Broken[0].Err)
	}
	if len(set.Fixtures) == 0 {
		return 0, fmt.Errorf("bigtree: no fixtures under %s to replicate", fixtures)
	}
	if err := os.CopyFS(filepath.Join(dir, "schemas"), os.DirFS(schemas)); err != nil {
		return 0, err
	}
	type file struct {
		rel  string
		data []byte
	}
	read := func(p string) (file, error) {
		rel, err := filepath.Rel(fixtures, p)
		if err != nil {
			return file{}, err
		}
		data, err := os.ReadFile(p)
		return file{rel, data}, err
	}
	// A fixture's body, then the files that go with it.
	var copied []file
	for _, f := range set.Fixtures {
		for i, p := range []string{f.Body, f.Meta, f.Golden, f.OutputSchema} {
			if p == "" {
				continue
			}
			if _, err := os.Stat(p); i > 0 && errors.Is(err, fs.ErrNotExist) {
				continue // a golden is optional
			}
			c, err := read(p)
			if err != nil {
				return 0, err
			}
			copied = append(copied, c)
		}
	}
	write := func(rel string, data []byte) error {
		p := filepath.Join(dir, "fixtures", rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, data, 0o644)
	}
	// Defaults apply to a whole folder and are written once.
	err = filepath.WalkDir(fixtures, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != fixture.DefaultsFile {
			return err
		}
		f, err := read(p)
		if err != nil {
			return err
		}
		return write(f.rel, f.data)
	})
	if err != nil {
		return 0, err
	}
	copies := (n + len(set.Fixtures) - 1) / len(set.Fixtures)
	for i := range copies {
		for _, f := range copied {
			d, b := filepath.Split(f.rel)
			if err := write(filepath.Join(d, fmt.Sprintf("c%05d-%s", i, b)), f.data); err != nil {
				return 0, err
			}
		}
	}
	return copies * len(set.Fixtures), nil
}
