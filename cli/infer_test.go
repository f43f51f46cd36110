package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/testtree"
	"github.com/airlockdev/airlock/record"
	"github.com/airlockdev/airlock/semantic"
)

// inferNearMiss is one bundled tool's upstream version whose accepted
// fixtures infer a schema, and the near-misses (expecting a schema.*
// reason) that the inferred schema admits, each with why.
type inferNearMiss struct {
	tool, version string
	// admitted are the schema.* near-misses the inferred schema admits:
	// each is a value no sample excludes, so a schema never narrower than
	// the samples must admit it (or a rule only a person can know).
	admitted map[string]string
}

// TestInferRefusesBundledNearMisses infers a schema from each bundled
// tool's accepted fixtures of one upstream version and checks it against
// that version's near-misses that expect a schema.* reason: each is
// refused at the schema stage, except the exact set named here.
func TestInferRefusesBundledNearMisses(t *testing.T) {
	g := NewWithT(t)
	cases := []inferNearMiss{
		{tool: "job_run", version: "v2", admitted: map[string]string{}},
		{tool: "deploy_status", version: "v1", admitted: map[string]string{
			// 40 lower-case hex digits: the samples' revisions are 7 and 12
			// long, and the widened maxLength (×2, at least 64) and their
			// alphabet ^[a-z0-9]*$ admit a full SHA; only the contract's
			// author knows revisions are abbreviated.
			"revision-full-sha": "schema.pattern",
			// "prod": two environments in four samples are too few for an
			// enum (3 strings per value), and the alphabet ^[a-z]*$ admits it.
			"unknown-environment": "schema.enum",
		}},
		{tool: "review_status", version: "v2", admitted: map[string]string{}},
		{tool: "user_profile", version: "2025-06-01", admitted: map[string]string{}},
	}
	total, refused := 0, 0
	for _, c := range cases {
		dir := t.TempDir()
		schemas, fixtures := filepath.Join(dir, "schemas"), filepath.Join(dir, "fixtures")
		tool := c.tool + "_inferred"
		code, out, errs := runAirlock("infer", "--tool", tool, "--upstream-version", c.version,
			"--schemas", schemas, "--fixtures", fixtures,
			filepath.Join("..", "fixtures", c.tool, c.version, "accepted"))
		g.Expect(code).To(Equal(0), "%s %s: %s%s", c.tool, c.version, out, errs)
		g.Expect(out).To(MatchRegexp(`samples: (\d+) read, \d+ admitted by upstream version`))
		inferred, err := gate.LoadDir(filepath.Join(schemas, tool), gate.Options{})
		g.Expect(err).NotTo(HaveOccurred())

		set, err := fixture.Open(filepath.Join("..", "schemas"), filepath.Join("..", "fixtures"),
			fixture.Filter{Tools: []string{c.tool}, UpstreamVersions: []string{c.version}, Kinds: []string{fixture.KindNearMiss}}, gate.Options{})
		g.Expect(err).NotTo(HaveOccurred())
		admitted := map[string]string{}
		n, r := 0, 0
		for _, f := range set.Fixtures {
			p, err := set.Prepare(f)
			g.Expect(err).NotTo(HaveOccurred())
			if !strings.HasPrefix(p.Expect.Reason, "schema.") {
				continue
			}
			n++
			v, err := inferred.Check(context.Background(), gate.Response{Status: p.Expect.Status, ContentType: p.Expect.ContentType,
				ContentEncoding: p.Expect.ContentEncoding, Header: p.Expect.Header, Body: bytes.NewReader(p.Body)},
				gate.Call{UpstreamVersion: c.version, Request: p.Expect.Request, Now: p.Expect.Now})
			g.Expect(err).NotTo(HaveOccurred())
			if !v.Admitted && v.Stage == gate.StageSchema {
				r++
				continue
			}
			admitted[f.Stem] = p.Expect.Reason
		}
		if !reflect.DeepEqual(admitted, c.admitted) {
			t.Errorf("%s %s: the schema.* near-misses the inferred schema admits are %v, want %v", c.tool, c.version, admitted, c.admitted)
		}
		t.Logf("%s %s: %d of %d schema.* near-misses refused by the inferred schema", c.tool, c.version, r, n)
		total += n
		refused += r
	}
	t.Logf("all: %d of %d schema.* near-misses refused", refused, total)
	g.Expect(total).To(BeNumerically(">", 0))
}

// TestInferOverRecordedMCPServer records server-everything's
// get-structured-content for several cities with airlock's recorder, then
// infers a contract from recorded/: every recorded sample is admitted.
func TestInferOverRecordedMCPServer(t *testing.T) {
	g := NewWithT(t)
	server := []string{"node", testtree.MCPServerEntry(t, "server-everything", "AIRLOCK_MCP_EVERYTHING"), "stdio"}
	dir := t.TempDir()
	schemas, fixtures := filepath.Join(dir, "schemas"), filepath.Join(dir, "fixtures")
	g.Expect(os.MkdirAll(schemas, 0o755)).To(Succeed())
	g.Expect(os.MkdirAll(fixtures, 0o755)).To(Succeed())
	// The server knows three cities; London and Paris are error results
	// (isError true), which infer skips. Each known city is asked twice.
	var calls []record.Call
	known := 0
	for _, city := range []string{"Chicago", "New York", "Los Angeles", "London", "Paris", "Chicago", "New York", "Los Angeles"} {
		name := strings.ToLower(strings.ReplaceAll(city, " ", "-")) + "-" + strconv.Itoa(len(calls)+1)
		if city != "London" && city != "Paris" {
			known++
		}
		calls = append(calls, record.Call{Name: name, Request: semantic.Request{ID: "req-" + name},
			MCP: &record.MCPCall{Command: server, Tool: "get-structured-content", Arguments: []byte(`{"location":"` + city + `"}`)}})
	}
	results, err := record.Record(context.Background(), record.Options{SchemasDir: schemas, FixturesDir: fixtures,
		Tool: "weather", UpstreamVersion: "v1", Timeout: 60 * time.Second, Calls: calls})
	g.Expect(err).NotTo(HaveOccurred())
	recordedN := 0
	for _, r := range results {
		g.Expect(r.Err).NotTo(HaveOccurred(), r.Name)
		recordedN++
	}

	code, out, errs := runAirlock("infer", "--tool", "weather", "--schemas", schemas, "--fixtures", fixtures,
		filepath.Join(fixtures, "weather", "v1", "recorded"))
	g.Expect(code).To(Equal(0), out+errs)
	t.Logf("airlock infer:\n%s%s", out, errs)
	g.Expect(out).To(ContainSubstring("samples: %d read, %d admitted by upstream version v1", recordedN, known))
	g.Expect(out).To(ContainSubstring("london-4.json: an MCP error result (isError true)"))
	manifest, err := os.ReadFile(filepath.Join(schemas, "weather", "contract.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(manifest)).To(ContainSubstring("protocol: mcp\nresult: structured\n"))

	// The contract as written admits each recorded body, as airlock run
	// would judge it.
	c, err := gate.LoadDir(filepath.Join(schemas, "weather"), gate.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	for _, r := range results {
		if strings.HasPrefix(r.Name, "london") || strings.HasPrefix(r.Name, "paris") {
			continue
		}
		body, err := os.ReadFile(r.Body)
		g.Expect(err).NotTo(HaveOccurred())
		v, err := c.Check(context.Background(), gate.Response{Status: 200, ContentType: "application/json", Body: bytes.NewReader(body)},
			gate.Call{UpstreamVersion: "v1", Request: semantic.Request{ID: "req-" + r.Name}})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(v.Admitted).To(BeTrue(), "%s: %s at %s: %s", r.Name, v.Reason, v.Audit.InstanceLocation, v.Audit.Message)
	}

	// A second run adds the next free inferred-N version beside v1.
	code, out, errs = runAirlock("infer", "--tool", "weather", "--schemas", schemas, "--fixtures", fixtures,
		filepath.Join(fixtures, "weather", "v1", "recorded"))
	g.Expect(code).To(Equal(0), out+errs)
	g.Expect(out).To(ContainSubstring("added upstream version beside v1"))
	g.Expect(out).To(ContainSubstring("admitted by upstream version inferred-1"))
}

// TestInferUsage: no tool, no bodies, a body that is not strict JSON.
func TestInferUsage(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	code, _, errs := runAirlock("infer", dir)
	g.Expect(code).To(Equal(ExitUsage), errs)
	code, _, errs = runAirlock("infer", "--tool", "x", "--schemas", filepath.Join(dir, "s"), "--fixtures", filepath.Join(dir, "f"), dir)
	g.Expect(code).To(Equal(ExitUsage))
	g.Expect(errs).To(ContainSubstring("no fixture bodies"))
	g.Expect(os.WriteFile(filepath.Join(dir, "a.json"), []byte(`{"a":1,"a":2}`), 0o644)).To(Succeed())
	code, _, errs = runAirlock("infer", "--tool", "x", "--schemas", filepath.Join(dir, "s"), "--fixtures", filepath.Join(dir, "f"), dir)
	g.Expect(code).To(Equal(ExitUsage))
	g.Expect(errs).To(ContainSubstring(filepath.Join(dir, "a.json") + ": not strict JSON: parse.duplicate_member"))
}

// TestInferOverRecordedMemoryGraph records server-memory's read_graph after
// each of a series of create_entities and create_relations calls (arrays
// of objects, an array that is empty in the first samples), then infers a
// contract projecting the entity names: every recorded sample is admitted.
func TestInferOverRecordedMemoryGraph(t *testing.T) {
	g := NewWithT(t)
	server := []string{"node", testtree.MCPServerEntry(t, "server-memory", "AIRLOCK_MCP_MEMORY")}
	dir := t.TempDir()
	schemas, fixtures := filepath.Join(dir, "schemas"), filepath.Join(dir, "fixtures")
	g.Expect(os.MkdirAll(schemas, 0o755)).To(Succeed())
	g.Expect(os.MkdirAll(fixtures, 0o755)).To(Succeed())
	env := append(os.Environ(), "MEMORY_FILE_PATH="+filepath.Join(dir, "memory.jsonl"))
	call := func(name, tool, args string) record.Call {
		return record.Call{Name: name, Request: semantic.Request{ID: "req-" + name},
			MCP: &record.MCPCall{Command: server, Env: env, Tool: tool, Arguments: []byte(args)}}
	}
	steps := []struct{ tool, args string }{
		{"create_entities", `{"entities":[{"name":"Alice","entityType":"person","observations":["likes tea"]}]}`},
		{"create_entities", `{"entities":[{"name":"Bob","entityType":"person","observations":[]},{"name":"Acme","entityType":"company","observations":["founded 1999","ships on Fridays"]}]}`},
		{"create_relations", `{"relations":[{"from":"Alice","to":"Acme","relationType":"works_at"}]}`},
		{"create_entities", `{"entities":[{"name":"Carol","entityType":"robot","observations":["2025-06-01T12:00:00Z"]}]}`},
		{"create_relations", `{"relations":[{"from":"Bob","to":"Acme","relationType":"works_at"},{"from":"Carol","to":"Alice","relationType":"helps"}]}`},
	}
	for i, st := range steps {
		n := strconv.Itoa(i + 1)
		for _, c := range []struct {
			tool string
			c    record.Call
		}{{"memory_setup", call("step-"+n, st.tool, st.args)}, {"graph", call("graph-"+n, "read_graph", `{}`)}} {
			results, err := record.Record(context.Background(), record.Options{SchemasDir: schemas, FixturesDir: fixtures,
				Tool: c.tool, UpstreamVersion: "v1", Timeout: 60 * time.Second, Calls: []record.Call{c.c}})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(results[0].Err).NotTo(HaveOccurred())
		}
	}
	code, out, errs := runAirlock("infer", "--tool", "graph", "--schemas", schemas, "--fixtures", fixtures,
		"--project", "entity_names=/entities/*/name", "--project", "relation_types=/relations/*/relationType",
		filepath.Join(fixtures, "graph", "v1", "recorded"))
	t.Logf("airlock infer:\n%s%s", out, errs)
	g.Expect(code).To(Equal(0), out+errs)
	g.Expect(out).To(ContainSubstring("samples: 5 read, 5 admitted by upstream version v1"))
	sch, err := os.ReadFile(filepath.Join(schemas, "graph", "upstream.v1.schema.json"))
	g.Expect(err).NotTo(HaveOccurred())
	t.Logf("inferred schema:\n%s", sch)
}
