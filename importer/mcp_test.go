package importer_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/importer"
	"github.com/airlockdev/airlock/internal/testtree"
	"github.com/airlockdev/airlock/runner"
	"github.com/airlockdev/airlock/semantic"
)

func everything(t *testing.T) []string {
	return []string{"node", testtree.MCPServerEntry(t, "server-everything", "AIRLOCK_MCP_EVERYTHING"), "stdio"}
}

// importAndWrite drafts with o and writes under dir.
func importAndWrite(t *testing.T, dir string, o importer.MCPOptions) (*importer.Draft, *importer.Written) {
	t.Helper()
	if o.Timeout == 0 {
		o.Timeout = time.Minute
	}
	d, err := importer.MCP(context.Background(), o)
	if err != nil {
		t.Fatalf("MCP: %v", err)
	}
	w, err := importer.Write(context.Background(), d, writeOpts(dir))
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	return d, w
}

func writeOpts(dir string) importer.WriteOptions {
	return importer.WriteOptions{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures")}
}

func mkdirs(t *testing.T) string {
	dir := t.TempDir()
	for _, d := range []string{"schemas", "fixtures"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runTree runs every fixture under dir and fails on any failed case.
func runTree(t *testing.T, dir string) int {
	t.Helper()
	res, err := runner.Run(context.Background(), runner.Options{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures")})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	passed, failed, _ := res.Run.Counts()
	if failed > 0 || res.Run.Errored() > 0 || len(res.Broken) > 0 {
		t.Fatalf("run over the imported tree: %d passed, %d failed, broken %v", passed, failed, res.Broken)
	}
	return res.Fixtures
}

// get-structured-content declares a draft-07 outputSchema: the contract is
// structured, the recorded call an accepted fixture whose golden the
// runner agrees with, and a near-miss of the same body (temperature as a
// string) is refused with schema.type.
func TestImportMCPStructured(t *testing.T) {
	server := everything(t)
	dir := mkdirs(t)
	d, w := importAndWrite(t, dir, importer.MCPOptions{Tool: "weather", MCPTool: "get-structured-content", Command: server,
		Arguments: []byte(`{"location":"Chicago"}`)})
	if d.Result != "structured" || d.Protocol != "mcp" || len(d.Version.Projection) != 3 {
		t.Fatalf("draft: result %q protocol %q projection %v", d.Result, d.Protocol, d.Version.Projection)
	}
	if _, ok := d.Version.Schema["definitions"]; ok || d.Version.Schema["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("upstream schema not 2020-12: %v", d.Version.Schema)
	}
	if !strings.Contains(strings.Join(w.Notes, "\n"), "projection chose 3 top-level scalar fields") {
		t.Errorf("notes: %q", w.Notes)
	}
	if len(w.Fixtures) != 1 || w.Fixtures[0].Kind != fixture.KindAccepted {
		t.Fatalf("fixtures: %+v", w.Fixtures)
	}
	body, err := os.ReadFile(w.Fixtures[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(strings.TrimSuffix(w.Fixtures[0].Path, ".json") + fixture.GoldenSuffix); err != nil {
		t.Errorf("no golden: %v", err)
	}
	if n := runTree(t, dir); n != 1 {
		t.Errorf("run checked %d fixtures, want 1", n)
	}

	// The same body with structuredContent's temperature a string.
	near := bytes.Replace(body, []byte(`"structuredContent":{"temperature":`), []byte(`"structuredContent":{"temperature":"`), 1)
	i := bytes.Index(near, []byte(`"structuredContent":{"temperature":"`)) + len(`"structuredContent":{"temperature":"`)
	j := i + bytes.IndexByte(near[i:], ',')
	near = append(near[:j:j], append([]byte(`"`), near[j:]...)...)
	c, err := gate.Load(os.DirFS(dir), "schemas/weather", gate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.Check(context.Background(), gate.Response{Status: 200, ContentType: "application/json", Body: bytes.NewReader(near)},
		gate.Call{UpstreamVersion: "v1", Request: semantic.Request{ID: "req.near"}, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if v.Admitted || v.Reason != "schema.type" {
		t.Errorf("near-miss %s: admitted %v, reason %q, want schema.type", near, v.Admitted, v.Reason)
	}

	// Again with the same version: refused, nothing changed.
	before := snapshot(t, dir)
	d2, err := importer.MCP(context.Background(), importer.MCPOptions{Tool: "weather", MCPTool: "get-structured-content", Command: server, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := importer.Write(context.Background(), d2, writeOpts(dir)); !errors.Is(err, importer.ErrExists) {
		t.Errorf("re-import of v1: %v, want ErrExists", err)
	}
	if after := snapshot(t, dir); after != before {
		t.Errorf("a refused re-import changed the tree")
	}
	// With a new version: added beside v1.
	_, w3 := importAndWrite(t, dir, importer.MCPOptions{Tool: "weather", MCPTool: "get-structured-content", Command: server,
		UpstreamVersion: "v2", Arguments: []byte(`{"location":"New York"}`)})
	if !w3.Added || w3.Previous != "v1" || len(w3.Fixtures) != 1 || w3.Fixtures[0].Kind != fixture.KindAccepted {
		t.Errorf("v2: %+v", w3)
	}
	if n := runTree(t, dir); n != 2 {
		t.Errorf("run checked %d fixtures, want 2", n)
	}
}

func snapshot(t *testing.T, dir string) string {
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			data, _ := os.ReadFile(p)
			b.WriteString(p + "\n" + string(data) + "\n")
		}
		return nil
	})
	return b.String()
}

// get-env declares no outputSchema and answers with one JSON text block:
// a result: text contract from a skeleton of the call, whose recorded
// call (with the secret-named variable redacted) is admitted.
func TestImportMCPText(t *testing.T) {
	server := everything(t)
	dir := mkdirs(t)
	secret := "sk-0123456789abcdefABCDEF"
	d, w := importAndWrite(t, dir, importer.MCPOptions{Tool: "env_vars", MCPTool: "get-env", Command: server,
		Env: []string{"PATH=" + os.Getenv("PATH"), "GREETING=hello", "API_TOKEN=" + secret}, Arguments: []byte(`{}`)})
	if d.Result != "text" {
		t.Fatalf("result %q", d.Result)
	}
	notes := strings.Join(w.Notes, "\n")
	for _, want := range []string{"airlock infer", "redacted before writing", "named like a secret: api_token"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if len(w.Fixtures) != 1 || w.Fixtures[0].Kind != fixture.KindAccepted {
		t.Fatalf("fixtures: %+v", w.Fixtures)
	}
	if s := snapshot(t, dir); strings.Contains(s, secret) {
		t.Errorf("the secret reached disk")
	}
	runTree(t, dir)
}

// Errors: a text that is not JSON, a tool without outputSchema and no
// call, an unknown tool (the list closest first), a server that does not
// start.
func TestImportMCPRefusals(t *testing.T) {
	server := everything(t)
	ctx := context.Background()
	_, err := importer.MCP(ctx, importer.MCPOptions{Tool: "echo_t", MCPTool: "echo", Command: server, Arguments: []byte(`{"message":"hi"}`), Timeout: time.Minute})
	if !errors.Is(err, importer.ErrInput) || !strings.Contains(err.Error(), "not JSON") || !strings.Contains(err.Error(), "result: text needs JSON text") {
		t.Errorf("echo: %v", err)
	}
	_, err = importer.MCP(ctx, importer.MCPOptions{Tool: "env_vars", MCPTool: "get-env", Command: server, Timeout: time.Minute})
	if !errors.Is(err, importer.ErrInput) || !strings.Contains(err.Error(), "--arguments") {
		t.Errorf("get-env without a call: %v", err)
	}
	_, err = importer.MCP(ctx, importer.MCPOptions{Tool: "x", MCPTool: "get-structured-contnt", Command: server, Timeout: time.Minute})
	if !errors.Is(err, importer.ErrInput) || !strings.Contains(err.Error(), "closest first: get-structured-content, ") {
		t.Errorf("unknown tool: %v", err)
	}
	_, err = importer.MCP(ctx, importer.MCPOptions{Tool: "x", MCPTool: "echo", Command: []string{filepath.Join(t.TempDir(), "none")}, Timeout: time.Minute})
	if !errors.Is(err, importer.ErrServer) {
		t.Errorf("no server: %v", err)
	}
}

// loopServer is an MCP server over stdio (node) whose tools/list always
// answers with the same nextCursor.
const loopServer = `const rl = require('readline').createInterface({input: process.stdin});
rl.on('line', (l) => {
  const m = JSON.parse(l);
  if (m.id === undefined) return;
  let r = {};
  if (m.method === 'initialize') r = {protocolVersion: m.params.protocolVersion, capabilities: {tools: {}}, serverInfo: {name: 'loop', version: '1'}};
  if (m.method === 'tools/list') r = {tools: [{name: 't' + m.id, inputSchema: {type: 'object'}}], nextCursor: 'same'};
  process.stdout.write(JSON.stringify({jsonrpc: '2.0', id: m.id, result: r}) + '\n');
});`

func TestImportMCPCursorLoop(t *testing.T) {
	testtree.MCPServerEntry(t, "server-everything", "AIRLOCK_MCP_EVERYTHING") // node and the servers come together: skipped (or failed under CI=true) alike
	_, err := importer.MCP(context.Background(), importer.MCPOptions{Tool: "x", MCPTool: "t1", Command: []string{"node", "-e", loopServer}, Timeout: 30 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "a tools/list cursor it had sent before") {
		t.Fatalf("a server repeating its cursor: %v", err)
	}
}
