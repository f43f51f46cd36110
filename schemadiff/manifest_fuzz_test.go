package schemadiff_test

import (
	"context"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/schemadiff"
)

// bundledTools are the contracts FuzzContractSelfDiff starts from.
var bundledTools = []string{"deploy_status", "job_run", "review_status", "user_profile"}

// FuzzContractSelfDiff checks the property that a contract diffed against
// itself is empty: no schema change and no manifest change, whatever the
// manifest says. It fuzzes the manifest YAML of a bundled contract (tool
// picks which; its schema files stay as bundled), seeded with the bundled
// manifests and the manifests of the rule table (manifestCases); a manifest
// that does not load is skipped. The contract is loaded twice, so the two sides share
// nothing but their bytes.
func FuzzContractSelfDiff(f *testing.F) {
	files := fstest.MapFS{}
	for i, tool := range bundledTools {
		dir := path.Join("..", "schemas", tool)
		err := fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path.Join(dir, p))
			if err != nil {
				return err
			}
			files[path.Join("schemas", tool, p)] = &fstest.MapFile{Data: b}
			if p == gate.ManifestFile {
				f.Add(uint8(i), b)
			}
			return nil
		})
		if err != nil {
			f.Fatal(err)
		}
	}
	// The manifests of the rule table seed it too: every optional section
	// (formats, text, statuses, errors, content types) near a loadable form.
	for _, c := range manifestCases {
		i := slices.Index(bundledTools, c.tool)
		m := string(files[path.Join("schemas", c.tool, gate.ManifestFile)].Data)
		for _, e := range append(slices.Clone(c.old), c.new...) {
			m = strings.Replace(m, e.from, e.to, 1)
		}
		f.Add(uint8(i), []byte(m))
	}
	f.Fuzz(func(t *testing.T, pick uint8, manifest []byte) {
		tool := bundledTools[int(pick)%len(bundledTools)]
		fsys := fstest.MapFS{}
		for k, v := range files {
			fsys[k] = v
		}
		fsys[path.Join("schemas", tool, gate.ManifestFile)] = &fstest.MapFile{Data: manifest}
		dir := path.Join("schemas", tool)
		a, err := gate.Load(fsys, dir, gate.Options{})
		if err != nil {
			// Not a contract: nothing to diff. Refusing a manifest is the
			// loader's concern (the hostile-config battery, strictyaml's
			// FuzzPrescan); this property is about contracts that load.
			t.Skipf("the fuzzed manifest does not load, so there is no contract to diff: %v", err)
		}
		b, err := gate.Load(fsys, dir, gate.Options{})
		if err != nil {
			t.Fatalf("loads once, not twice: %v", err)
		}
		d, err := schemadiff.ComparePairs(context.Background(), []schemadiff.ContractPair{{Old: a, New: b}}, schemadiff.ContractOptions{})
		if err != nil {
			t.Fatalf("a contract that loads cannot be diffed against itself: %v", err)
		}
		for _, cmp := range d.Comparisons {
			for _, c := range cmp.Changes {
				t.Errorf("%s: %s %s at %s: %s", cmp.Name, c.Level, c.Rule, c.NewPointer, c.Message)
			}
		}
	})
}
