// Package bigtree writes large fixture trees for measuring the harness: the
// bundled contracts copied as they are, and the bundled fixtures (bodies,
// sidecars, goldens, defaults) replicated under new names until the tree
// holds the number of fixtures asked for. BenchmarkRun (runner) builds its
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
	"strings"

	"github.com/airlockdev/airlock/fixture"
)

// Write copies the contracts under schemas into dir/schemas and writes
// dir/fixtures: each tool's defaults file once, and copies of every other
// file under fixtures, copy i of a file named NAME named cIIIII-NAME in the
// same folder, as many copies as it takes to reach at least n fixtures
// (bodies). It returns the number of fixtures written. dir/schemas and
// dir/fixtures must not exist yet.
func Write(dir, schemas, fixtures string, n int) (int, error) {
	if n < 1 {
		return 0, fmt.Errorf("bigtree: n must be at least 1, not %d", n)
	}
	for _, sub := range []string{"schemas", "fixtures"} {
		if _, err := os.Lstat(filepath.Join(dir, sub)); !errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("bigtree: %s already exists", filepath.Join(dir, sub))
		}
	}
	if err := os.CopyFS(filepath.Join(dir, "schemas"), os.DirFS(schemas)); err != nil {
		return 0, err
	}
	type file struct {
		rel  string
		data []byte
	}
	// Bodies are the fixtures; sidecars and goldens go with them;
	// defaults apply to a whole folder and are written once.
	var bodies, companions, defaults []file
	err := filepath.WalkDir(fixtures, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(fixtures, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		name := d.Name()
		switch {
		case name == fixture.DefaultsFile:
			defaults = append(defaults, file{rel, data})
		case strings.HasSuffix(name, fixture.MetaSuffix), strings.HasSuffix(name, fixture.GoldenSuffix):
			companions = append(companions, file{rel, data})
		default:
			bodies = append(bodies, file{rel, data})
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if len(bodies) == 0 {
		return 0, fmt.Errorf("bigtree: no fixtures under %s to replicate", fixtures)
	}
	write := func(rel string, data []byte) error {
		p := filepath.Join(dir, "fixtures", rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, data, 0o644)
	}
	for _, f := range defaults {
		if err := write(f.rel, f.data); err != nil {
			return 0, err
		}
	}
	copies := (n + len(bodies) - 1) / len(bodies)
	for i := range copies {
		for _, group := range [][]file{bodies, companions} {
			for _, f := range group {
				d, b := filepath.Split(f.rel)
				if err := write(filepath.Join(d, fmt.Sprintf("c%05d-%s", i, b)), f.data); err != nil {
					return 0, err
				}
			}
		}
	}
	return copies * len(bodies), nil
}
