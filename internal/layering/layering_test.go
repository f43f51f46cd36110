package layering_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/airlockdev/airlock/"

// allowed maps every package of the module to the module packages it may
// import directly. Imports point down: cmd → cli → {runner, mutate, record,
// schemadiff, drift, reports} → fixture → gate → {semantic, jsonpointer,
// redact, internal}. A package missing here fails the test, so a new one
// must say where it stands.
var allowed = map[string][]string{
	// Leaves.
	"jsonpointer":         {},
	"internal/config":     {},
	"internal/fileio":     {},
	"internal/sanitize":   {},
	"internal/strictjson": {},
	"internal/schemawalk": {},
	"internal/layering":   {},
	"internal/shard":      {},
	// Rules and secrets.
	"semantic": {"jsonpointer"},
	"redact":   {"jsonpointer"},
	// The gate's internals.
	"internal/schema":     {"internal/config", "internal/fileio", "internal/strictjson", "jsonpointer", "semantic"},
	"internal/strictyaml": {"internal/config", "internal/schema", "jsonpointer"},
	"internal/manifest":   {"internal/config", "internal/schema", "internal/strictjson", "internal/strictyaml"},
	"internal/introspect": {"internal/manifest", "internal/schema", "jsonpointer"},
	"internal/validator":  {"internal/schema", "internal/strictjson", "jsonpointer"},
	// The MCP client plumbing record and importer share (the go-sdk's
	// client, raw results, headers to the server's origin only).
	"internal/mcpclient": {"redact", "internal/sanitize"},
	// The engine a connector embeds.
	"gate": {"semantic", "jsonpointer", "redact", "internal/config", "internal/fileio", "internal/introspect",
		"internal/manifest", "internal/sanitize", "internal/schema", "internal/strictjson", "internal/strictyaml", "internal/validator"},
	// The harness.
	"reports": {"internal/sanitize", "internal/shard"},
	"fixture": {"gate", "semantic", "redact", "internal/fileio", "internal/shard", "internal/schema", "internal/strictjson", "internal/strictyaml"},
	"runner":  {"fixture", "gate", "reports", "jsonpointer", "internal/fileio", "internal/introspect", "internal/strictjson"},
	"mutate":  {"fixture", "gate", "reports", "semantic", "jsonpointer", "internal/config", "internal/fileio", "internal/introspect", "internal/shard", "internal/schema", "internal/schemawalk", "internal/strictjson", "internal/strictyaml"},
	"record": {"fixture", "gate", "semantic", "redact", "internal/fileio", "internal/mcpclient", "internal/sanitize", "internal/strictjson",
		"internal/strictyaml"},
	"schemadiff": {"fixture", "gate", "reports", "jsonpointer", "internal/fileio", "internal/introspect", "internal/manifest", "internal/schema", "internal/schemawalk", "internal/strictjson", "internal/strictyaml", "internal/validator"},
	// drift reports the schema changes between versions with schemadiff.
	"drift": {"fixture", "gate", "reports", "schemadiff", "jsonpointer", "internal/introspect", "internal/shard", "internal/schema", "internal/schemawalk"},
	// importer writes contracts from OpenAPI descriptions, MCP servers and
	// recorded responses.
	"importer": {"fixture", "gate", "semantic", "redact", "jsonpointer", "internal/fileio", "internal/manifest", "internal/mcpclient", "internal/schema", "internal/strictjson"},
	// lint reads contracts and fixture trees and reports findings.
	"lint": {"fixture", "gate", "reports", "jsonpointer", "internal/fileio", "internal/introspect", "internal/manifest", "internal/schema", "internal/schemawalk", "internal/strictjson", "internal/strictyaml", "internal/validator"},
	// The MCP proxy that gates tool results in production, and its
	// operations (metrics, audit lines, contract reloads).
	"proxy": {"gate", "semantic", "record", "fixture", "redact", "jsonpointer", "internal/config", "internal/introspect", "internal/mcpclient", "internal/sanitize", "internal/strictyaml"},
	// The command line.
	"cli": {"proxy", "runner", "mutate", "record", "schemadiff", "drift", "lint", "importer", "reports", "fixture", "gate", "semantic", "jsonpointer", "internal/sanitize",
		"redact", "internal/fileio", "internal/manifest", "internal/strictyaml", "internal/shard"},
	"cmd/airlock": {"cli"},
	// Test support and tools: only tests and generators import them.
	"internal/testtree":         {"runner", "reports", "fixture"},
	"internal/testtree/bigtree": {"fixture", "gate"},
	"internal/planted":          {},
	"internal/testbody":         {},
	"internal/conformance":      {"internal/schema", "internal/strictjson"},
	"scripts/benchratio":        {},
	"scripts/gendiffrules":      {"schemadiff"},
	"scripts/genlintrules":      {"lint"},
	"scripts/genreasons":        {"gate"},
	"scripts/gentree":           {"internal/testtree/bigtree"},
	"scripts/importbench":       {"gate"},
	"scripts/inittrace":         {},
	"scripts/runcompare":        {},

	// The CI integration's tests (action.yml, the workflows, the GitLab
	// template): they run the airlock binary and import no package of it.
	"ci": {},
}

func TestLayering(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}:{{join .Imports " "}}`, module+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, imports, _ := strings.Cut(line, ":")
		pkg := strings.TrimPrefix(path, module)
		seen[pkg] = true
		ok, known := allowed[pkg]
		if !known {
			t.Errorf("package %s is not in the layering table: add it with the packages it may import", pkg)
			continue
		}
		for _, imp := range strings.Fields(imports) {
			dep, inModule := strings.CutPrefix(imp, module)
			if inModule && !slices.Contains(ok, dep) {
				t.Errorf("%s must not import %s", pkg, dep)
			}
		}
	}
	for pkg := range allowed {
		if !seen[pkg] {
			t.Errorf("the layering table lists %s, which go list did not find", pkg)
		}
	}
}
