package proxy_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/proxy"
)

// schemasCopy copies the bundled contracts named into a new schemas
// folder and returns it.
func schemasCopy(t *testing.T, tools ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, tool := range tools {
		if err := os.CopyFS(filepath.Join(root, tool), os.DirFS(filepath.Join("..", "schemas", tool))); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestLoadContracts(t *testing.T) {
	dir := schemasCopy(t, "review_status", "job_run")
	s, err := proxy.LoadContracts(dir, gate.Options{Mode: gate.ModeWarn})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Tools(); !slices.Equal(got, []string{"job_run", "review_status"}) {
		t.Errorf("Tools %v", got)
	}
	c, ok := s.Get("review_status")
	if !ok || c.Tool() != "review_status" || c.Mode() != gate.ModeWarn {
		t.Errorf("Get(review_status): %v %v", c, ok)
	}
	if _, ok := s.Get("deploy_status"); ok {
		t.Error("Get of a tool without a contract found one")
	}
	var none *proxy.ContractSet
	if _, ok := none.Get("x"); ok || none.Tools() != nil {
		t.Error("a nil set has contracts")
	}
	if _, err := proxy.LoadContracts(t.TempDir(), gate.Options{}); err == nil || !strings.Contains(err.Error(), "no contract") {
		t.Errorf("empty folder: %v", err)
	}
}

// breakManifest writes an unknown key into tool's manifest at line 1.
func breakManifest(t *testing.T, dir, tool string) {
	t.Helper()
	file := filepath.Join(dir, tool, gate.ManifestFile)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, append([]byte("surprise: 1\n"), b...), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestContractsReload(t *testing.T) {
	dir := schemasCopy(t, "review_status")
	var zero proxy.Contracts
	if zero.Load() != nil {
		t.Fatal("the zero holder has a set")
	}
	cs, err := proxy.OpenContracts(dir, gate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	first := cs.Load()

	// A good change: a new contract appears, whole.
	if err := os.CopyFS(filepath.Join(dir, "job_run"), os.DirFS(filepath.Join("..", "schemas", "job_run"))); err != nil {
		t.Fatal(err)
	}
	if err := cs.Reload(dir, gate.Options{}); err != nil {
		t.Fatal(err)
	}
	second := cs.Load()
	if second == first || !slices.Equal(second.Tools(), []string{"job_run", "review_status"}) {
		t.Fatalf("after a good reload: %v", second.Tools())
	}
	if !slices.Equal(first.Tools(), []string{"review_status"}) {
		t.Errorf("the old set changed: %v", first.Tools())
	}

	// A broken contract: the old set stays, the error names file and line.
	breakManifest(t, dir, "job_run")
	err = cs.Reload(dir, gate.Options{})
	var ce *gate.ConfigError
	if !errors.As(err, &ce) || !strings.HasSuffix(ce.File, filepath.Join("job_run", gate.ManifestFile)) || ce.Line != 1 {
		t.Fatalf("broken reload: %v (%+v)", err, ce)
	}
	if !strings.Contains(err.Error(), "previous ones stay") || !strings.Contains(err.Error(), "contract.yaml:1") {
		t.Errorf("error %q does not say the old set stays at file:line", err)
	}
	t.Logf("broken reload: %v", err)
	if cs.Load() != second {
		t.Error("a broken reload replaced the set")
	}

	// A first load that fails says so without "previous".
	if _, err := proxy.OpenContracts(dir, gate.Options{}); err == nil || strings.Contains(err.Error(), "previous") {
		t.Errorf("OpenContracts of a broken folder: %v", err)
	}
}

// TestContractsReloadConcurrent: Get during Reload sees one whole set
// (run with -race).
func TestContractsReloadConcurrent(t *testing.T) {
	dir := schemasCopy(t, "review_status", "job_run")
	cs, err := proxy.OpenContracts(dir, gate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				s := cs.Load()
				c, ok := s.Get("review_status")
				if !ok || c.Tool() != "review_status" || len(s.Tools()) != 2 {
					t.Error("a reader saw a partial set")
					return
				}
			}
		})
	}
	for i := range 6 {
		mode := gate.ModeStrict
		if i%2 == 1 {
			mode = gate.ModeWarn
		}
		if err := cs.Reload(dir, gate.Options{Mode: mode}); err != nil {
			t.Error(err)
		}
	}
	close(stop)
	wg.Wait()
	if c, _ := cs.Load().Get("job_run"); c.Mode() != gate.ModeWarn {
		t.Errorf("the last reload's mode is %s, want warn", c.Mode())
	}
}
