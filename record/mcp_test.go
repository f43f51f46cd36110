package record_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/airlockdev/airlock/drift"
	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/testtree"
	"github.com/airlockdev/airlock/lint"
	"github.com/airlockdev/airlock/record"
	"github.com/airlockdev/airlock/redact"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/runner"
	"github.com/airlockdev/airlock/semantic"
)

// everythingEntry finds the entry script of the npm package
// @modelcontextprotocol/server-everything (serverEntry).
func everythingEntry() string {
	return testtree.MCPServerEntry(GinkgoT(), "server-everything", "AIRLOCK_MCP_EVERYTHING")
}

// deriveContract writes schemas/<tool>/ for an MCP tool from its recorded
// outputSchema: protocol mcp, the outputSchema as the upstream schema (as2020), a
// closed agent schema with the same top-level properties, and a projection
// copying each of them.
func deriveContract(schemasDir, tool, version string, outputSchema []byte) {
	var os_ struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	Expect(json.Unmarshal(outputSchema, &os_)).To(Succeed())
	Expect(os_.Properties).NotTo(BeEmpty())
	names := make([]string, 0, len(os_.Properties))
	for n := range os_.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	var manifest strings.Builder
	fmt.Fprintf(&manifest, "tool: %s\nversion: \"1\"\nprotocol: mcp\nagent_schema: agent.schema.json\nupstream_versions:\n  %s:\n    schema: upstream.%s.schema.json\n    projection:\n", tool, version, version)
	props := map[string]any{}
	for _, n := range names {
		Expect(semantic.ValidName(n)).To(BeTrue(), "agent field %q", n)
		fmt.Fprintf(&manifest, "      %s: /%s\n", n, n)
		p := map[string]any{"type": os_.Properties[n].Type}
		if p["type"] == "string" {
			p["maxLength"] = 256
		}
		props[n] = p
	}
	agent, err := json.MarshalIndent(map[string]any{
		"type": "object", "additionalProperties": false, "required": os_.Required, "properties": props,
	}, "", "  ")
	Expect(err).NotTo(HaveOccurred())
	dir := filepath.Join(schemasDir, tool)
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(dir, "contract.yaml"), []byte(manifest.String()), 0o644)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(dir, "upstream."+version+".schema.json"), as2020(outputSchema), 0o644)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(dir, "agent.schema.json"), agent, 0o644)).To(Succeed())
}

// as2020 returns an outputSchema as a contract holds it: a contract's
// schemas are JSON Schema 2020-12 only, and a zod-based server (this one)
// declares draft-07 in $schema. Its keywords (type, properties, required,
// additionalProperties, description) mean the same in 2020-12, so the
// declaration is dropped; any other $schema fails the test.
func as2020(outputSchema []byte) []byte {
	var doc map[string]any
	d := json.NewDecoder(bytes.NewReader(outputSchema))
	d.UseNumber()
	Expect(d.Decode(&doc)).To(Succeed())
	if s, ok := doc["$schema"]; ok {
		Expect(s).To(BeElementOf("http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2020-12/schema"))
		delete(doc, "$schema")
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	Expect(err).NotTo(HaveOccurred())
	return out
}

func mcpCall(name string, server []string, tool, args string) record.Call {
	c := record.Call{Name: name, Request: semantic.Request{ID: "req-" + name}, MCP: &record.MCPCall{Command: server, Tool: tool}}
	if args != "" {
		c.MCP.Arguments = json.RawMessage(args)
	}
	return c
}

var _ = Describe("airlock record from MCP", func() {
	Describe("@modelcontextprotocol/server-everything over stdio", func() {
		var server []string
		BeforeEach(func() { server = []string{"node", everythingEntry(), "stdio"} })

		It("records the structured-content tool, derives a contract from its outputSchema, and runs the result", func() {
			dir := testtree.Tree(map[string]string{"schemas/.keep": "", "fixtures/.keep": ""})
			opts := record.Options{
				SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures"),
				Tool: "weather", UpstreamVersion: "v1", Timeout: 60 * time.Second,
				Calls: []record.Call{
					mcpCall("chicago", server, "get-structured-content", `{"location":"Chicago"}`),
					mcpCall("los-angeles", server, "get-structured-content", `{"location":"Los Angeles"}`),
					mcpCall("paris", server, "get-structured-content", `{"location":"Paris"}`),
				},
			}
			results, err := record.Record(context.Background(), opts)
			Expect(err).NotTo(HaveOccurred())
			for _, r := range results {
				Expect(r.Err).NotTo(HaveOccurred(), r.Name)
				Expect(r.Verdict).To(BeNil(), "no contract yet")
				Expect(r.OutputSchema).To(Equal(filepath.Join(dir, "fixtures", "weather", "v1", "recorded", r.Name+".output-schema.json")))
				m := testtree.ReadMeta(r.Meta)
				Expect(m.Recorded.Verdict.Outcome).To(Equal("unchecked"))
				Expect(m.Recorded.MCPTool).To(Equal("get-structured-content"))
				Expect(m.Recorded.OutputSchema).To(Equal(r.Name + ".output-schema.json"))
				Expect(*m.Recorded.StderrBytes).To(BeNumerically(">", 0), "the server logs its start to stderr")
				Expect(m.Recorded.Source).To(HavePrefix("mcp stdio: node "))
				Expect(*m.Status).To(Equal(0))
			}
			body, err := os.ReadFile(results[0].Body)
			Expect(err).NotTo(HaveOccurred())
			var result struct {
				Content           []map[string]any `json:"content"`
				StructuredContent map[string]any   `json:"structuredContent"`
			}
			Expect(json.Unmarshal(body, &result)).To(Succeed(), "the body is the CallToolResult")
			Expect(result.StructuredContent).To(HaveKeyWithValue("conditions", "Light rain / drizzle"))
			Expect(result.Content).NotTo(BeEmpty())
			paris, _ := os.ReadFile(results[2].Body)
			Expect(string(paris)).To(ContainSubstring(`"isError":true`))

			schema, err := os.ReadFile(results[0].OutputSchema)
			Expect(err).NotTo(HaveOccurred())
			deriveContract(opts.SchemasDir, "weather", "v1", schema)

			// The recorded tree runs: nothing fails, the recorded fixtures
			// state no expectation yet.
			res, err := testtree.Run(dir)
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Fixtures).To(Equal(3))
			_, failed, _ := res.Run.Counts()
			Expect(failed).To(BeZero(), "%+v", res.Run.Cases)

			// Drift over the recorded answers: the observed shape of the
			// structured content, and the tool error counted by reason.
			drift, err := drift.Run(context.Background(), drift.Options{SchemasDir: opts.SchemasDir, FixturesDir: opts.FixturesDir})
			Expect(err).NotTo(HaveOccurred())
			Expect(drift.Summary.Fixtures).To(Equal(3))
			Expect(drift.Tools).To(HaveLen(1))
			v1 := drift.Tools[0].Versions[0]
			Expect(v1.Recorded).To(Equal(3))
			Expect(v1.Admitted).To(Equal(2))
			Expect(v1.Refusals).To(ConsistOf(HaveField("Reason", "transport.mcp_tool_error")))
			var observed []string
			for _, o := range v1.Observed {
				observed = append(observed, o.Pointer)
			}
			// Paths are in the validated value: structuredContent for protocol: mcp.
			Expect(observed).To(ContainElements("/temperature", "/conditions", "/humidity"))
			Expect(v1.Findings).To(BeEmpty(), "the answers match the schema derived from outputSchema")

			// Lint of the contract derived from the server's outputSchema:
			// zod closes the object (no open-object), but bounds no string
			// or number, and only recorded fixtures exist so far.
			set, err := fixture.Open(opts.SchemasDir, opts.FixturesDir, fixture.Filter{}, gate.Options{})
			Expect(err).NotTo(HaveOccurred())
			l, err := lint.Lint(context.Background(), lint.Input{Contracts: set.List, Set: set})
			Expect(err).NotTo(HaveOccurred())
			var lints []string
			for _, f := range l.Findings {
				Expect(f.Line).To(BeNumerically(">", 0), "%+v", f)
				lints = append(lints, fmt.Sprintf("%s %s %s", f.Rule, filepath.Base(f.File), f.Instance))
			}
			Expect(lints).To(ConsistOf(
				"string-unbounded upstream.v1.schema.json /conditions",
				"number-unbounded upstream.v1.schema.json /humidity",
				"number-unbounded upstream.v1.schema.json /temperature",
				"number-unbounded agent.schema.json /humidity",
				"number-unbounded agent.schema.json /temperature",
				"near-miss-stage-uncovered contract.yaml ",
				"near-miss-stage-uncovered contract.yaml ",
			))

			// Recording again under the contract gives the gate's verdict at once.
			opts.Calls = []record.Call{
				mcpCall("new-york", server, "get-structured-content", `{"location":"New York"}`),
				mcpCall("paris-again", server, "get-structured-content", `{"location":"Paris"}`),
			}
			again, err := record.Record(context.Background(), opts)
			Expect(err).NotTo(HaveOccurred())
			Expect(again[0].Err).NotTo(HaveOccurred())
			Expect(again[0].Verdict.Admitted).To(BeTrue(), "%s", again[0].Verdict.Audit.JSON())
			Expect(string(again[0].Verdict.Output)).To(Equal(`{"tool":"weather","request_id":"req-new-york","outcome":"success","data":{"conditions":"Cloudy","humidity":82,"temperature":33}}`))
			Expect(again[1].Verdict.Reason).To(Equal("transport.mcp_tool_error"))
			Expect(testtree.ReadMeta(again[1].Meta).Recorded.Verdict.Reason).To(Equal("transport.mcp_tool_error"))

			// Promote: the good answers to accepted, the tool error to near-miss.
			p, err := fixture.Promote(context.Background(), fixture.PromoteOptions{SchemasDir: opts.SchemasDir, Fixture: results[0].Body, To: fixture.KindAccepted})
			Expect(err).NotTo(HaveOccurred())
			Expect(p.Verdict.Admitted).To(BeTrue())
			accepted := filepath.Join(dir, "fixtures", "weather", "v1", "accepted")
			Expect(testtree.Files(accepted)).To(ConsistOf("chicago.json", "chicago.meta.yaml", "chicago.output-schema.json"))
			_, err = fixture.Promote(context.Background(), fixture.PromoteOptions{SchemasDir: opts.SchemasDir, Fixture: again[0].Meta, To: fixture.KindAccepted})
			Expect(err).NotTo(HaveOccurred())
			p, err = fixture.Promote(context.Background(), fixture.PromoteOptions{SchemasDir: opts.SchemasDir, Fixture: results[2].Body, To: fixture.KindNearMiss})
			Expect(err).NotTo(HaveOccurred())
			Expect(p.Expect).To(Equal(&fixture.Expect{Outcome: "refused", Reason: "transport.mcp_tool_error"}))

			res, err = testtree.Run(dir, func(o *runner.Options) { o.Update = true })
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Updated).To(ConsistOf(
				"created "+filepath.Join(accepted, "chicago.agent.json"),
				"created "+filepath.Join(accepted, "new-york.agent.json"),
			))
			res, err = testtree.Run(dir)
			Expect(err).NotTo(HaveOccurred())
			passed, failed, _ := res.Run.Counts()
			Expect(failed).To(BeZero(), "%+v", res.Run.Cases)
			Expect(testtree.ByName(res, "chicago.json", runner.SuiteProjection).Status).To(BeEquivalentTo("passed"))
			Expect(testtree.ByName(res, "paris.json", runner.SuiteParse).Status).To(BeEquivalentTo("passed"))
			Expect(passed).To(BeNumerically(">=", 10))
			golden, _ := os.ReadFile(filepath.Join(accepted, "chicago.agent.json"))
			Expect(string(golden)).To(Equal(`{"tool":"weather","request_id":"req-chicago","outcome":"success","data":{"conditions":"Light rain / drizzle","humidity":82,"temperature":36}}` + "\n"))
		})

		It("maps the tool's isError result to NOT_FOUND through a declared error shape, and keeps transport.mcp_tool_error without one", func() {
			dir := testtree.Tree(map[string]string{"schemas/.keep": "", "fixtures/.keep": ""})
			opts := record.Options{
				SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures"),
				Tool: "weather", UpstreamVersion: "v1", Timeout: 60 * time.Second,
				Calls: []record.Call{mcpCall("chicago", server, "get-structured-content", `{"location":"Chicago"}`)},
			}
			first, err := record.Record(context.Background(), opts)
			Expect(err).NotTo(HaveOccurred())
			Expect(first[0].Err).NotTo(HaveOccurred())
			schema, err := os.ReadFile(first[0].OutputSchema)
			Expect(err).NotTo(HaveOccurred())
			deriveContract(opts.SchemasDir, "weather", "v1", schema)

			// Paris is not a location the tool knows: it answers isError: true
			// with a text block that is not JSON, so the error shape matches
			// on is_error alone (no schema, no detail).
			opts.Calls = []record.Call{mcpCall("paris", server, "get-structured-content", `{"location":"Paris"}`)}
			plain, err := record.Record(context.Background(), opts)
			Expect(err).NotTo(HaveOccurred())
			Expect(plain[0].Verdict.Reason).To(Equal("transport.mcp_tool_error"))

			manifest := filepath.Join(opts.SchemasDir, "weather", "contract.yaml")
			m, err := os.ReadFile(manifest)
			Expect(err).NotTo(HaveOccurred())
			m = append(m, "    errors:\n      - name: unknown_location\n        when: {is_error: true}\n        code: NOT_FOUND\n"...)
			Expect(os.WriteFile(manifest, m, 0o644)).To(Succeed())
			opts.Calls = []record.Call{mcpCall("paris-mapped", server, "get-structured-content", `{"location":"Paris"}`)}
			mapped, err := record.Record(context.Background(), opts)
			Expect(err).NotTo(HaveOccurred())
			v := mapped[0].Verdict
			Expect(v.Reason).To(Equal("upstream.unknown_location"), "%s", v.Audit.JSON())
			Expect(v.Stage).To(Equal(gate.StageUpstream))
			Expect(v.Audit.UpstreamError).To(Equal("unknown_location"))
			Expect(string(v.Output)).To(Equal(`{"tool":"weather","request_id":"req-paris-mapped","outcome":"failure","error":{"code":"NOT_FOUND","retryable":false}}`))
			body, err := os.ReadFile(mapped[0].Body)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(body)).To(ContainSubstring(`"isError":true`))
		})

		It("records MCP calls from a requests file without --mcp, the server from the command line or the entry", func() {
			dir := testtree.Tree(map[string]string{"fixtures/.keep": "", "calls.yaml": `- name: chicago
  mcp_tool: get-structured-content
  arguments: {location: Chicago}
- name: sum
  mcp_server: [node, ` + server[1] + `, stdio]
  mcp_tool: get-sum
  arguments: {a: 2, b: 3}
`})
			// What airlock record --requests calls.yaml -- node index.js stdio builds.
			calls, err := record.LoadCalls(filepath.Join(dir, "calls.yaml"), record.Call{Command: &record.CommandCall{Argv: server, ContentType: "application/json"}})
			Expect(err).NotTo(HaveOccurred())
			results, err := record.Record(context.Background(), record.Options{
				SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures"),
				Tool: "everything", UpstreamVersion: "v1", Timeout: 60 * time.Second, Calls: calls,
			})
			Expect(err).NotTo(HaveOccurred())
			for _, r := range results {
				Expect(r.Err).NotTo(HaveOccurred(), r.Name)
			}
			Expect(testtree.ReadMeta(results[0].Meta).Recorded.MCPTool).To(Equal("get-structured-content"))
			Expect(results[0].OutputSchema).NotTo(BeEmpty())
			sum, _ := os.ReadFile(results[1].Body)
			Expect(string(sum)).To(ContainSubstring("5"))
			Expect(testtree.ReadMeta(results[1].Meta).Recorded.Source).To(HaveSuffix(`: tools/call get-sum {"a":2,"b":3}`))
		})

		It("records the environment-listing tool with its secrets redacted", func() {
			const secret = "sk-test-AIRLOCK-0123456789abcdef"
			dir := testtree.Tree(map[string]string{"fixtures/.keep": ""})
			call := mcpCall("env", server, "get-env", "")
			call.MCP.Env = append(os.Environ(), "API_TOKEN="+secret, "PLAIN_SETTING=visible-value")
			opts := record.Options{
				SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "redacted"),
				Tool: "environment", UpstreamVersion: "v1", Timeout: 60 * time.Second,
				Calls: []record.Call{call},
			}
			results, err := record.Record(context.Background(), opts)
			Expect(err).NotTo(HaveOccurred())
			r := results[0]
			Expect(r.Err).NotTo(HaveOccurred())
			body, _ := os.ReadFile(r.Body)
			Expect(string(body)).NotTo(ContainSubstring(secret))
			Expect(string(body)).To(ContainSubstring(`\"API_TOKEN\": \"REDACTED\"`))
			Expect(string(body)).To(ContainSubstring(`\"PLAIN_SETTING\": \"visible-value\"`))
			Expect(r.OutputSchema).To(BeEmpty(), "get-env declares no outputSchema")
			m := testtree.ReadMeta(r.Meta)
			Expect(m.Recorded.Redacted).To(ContainElement(redact.Redaction{Where: redact.RedactedBody, Pointer: "/content/0/text", Inner: "/API_TOKEN"}))
			for _, f := range testtree.Files(opts.FixturesDir) {
				b, _ := os.ReadFile(filepath.Join(opts.FixturesDir, f))
				Expect(string(b)).NotTo(ContainSubstring(secret), f)
			}

			// The same call without redaction shows the test would catch a leak.
			opts.FixturesDir, opts.NoRedact = filepath.Join(dir, "raw"), true
			results, err = record.Record(context.Background(), opts)
			Expect(err).NotTo(HaveOccurred())
			raw, _ := os.ReadFile(results[0].Body)
			Expect(string(raw)).To(ContainSubstring(secret))
		})
	})

	It("keeps the server URL's credentials out of a connection error, and records nothing", func() {
		gone := httptest.NewServer(http.NotFoundHandler())
		url := strings.Replace(gone.URL, "http://", "http://bot:"+secretAuth[7:]+"@", 1) + "/mcp?token=" + secretQuery
		gone.Close()
		dir := testtree.Tree(map[string]string{"fixtures/.keep": ""})
		results, err := record.Record(context.Background(), record.Options{
			SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures"),
			Tool: "account", UpstreamVersion: "v1", Timeout: 5 * time.Second,
			Calls: []record.Call{{Name: "u1", MCP: &record.MCPCall{URL: url, Tool: "lookup"}}},
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(results[0].Err).To(MatchError(ContainSubstring("connecting")))
		for _, s := range allSecrets {
			Expect(results[0].Err.Error()).NotTo(ContainSubstring(s))
		}
		Expect(testtree.Files(dir)).To(Equal([]string{"fixtures/.keep"}))
	})

	It("records over streamable HTTP, raw result and outputSchema, credentials and secret arguments redacted", func() {
		type lookupIn struct {
			ID     string `json:"id"`
			APIKey string `json:"api_key"`
		}
		type lookupOut struct {
			ID   string `json:"id"`
			Plan string `json:"plan"`
		}
		server := mcp.NewServer(&mcp.Implementation{Name: "accounts", Version: "1.0.0"}, nil)
		var gotKey string
		mcp.AddTool(server, &mcp.Tool{Name: "lookup", Description: "Find an account"},
			func(_ context.Context, _ *mcp.CallToolRequest, in lookupIn) (*mcp.CallToolResult, lookupOut, error) {
				gotKey = in.APIKey
				return nil, lookupOut{ID: in.ID, Plan: "team"}, nil
			})
		handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != secretAuth {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			handler.ServeHTTP(w, r)
		}))
		defer srv.Close()

		dir := testtree.Tree(map[string]string{"fixtures/.keep": ""})
		h := http.Header{}
		h.Set("Authorization", secretAuth)
		results, err := record.Record(context.Background(), record.Options{
			SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures"),
			Tool: "account", UpstreamVersion: "v1", Timeout: 10 * time.Second,
			Calls: []record.Call{{Name: "u1", Request: semantic.Request{ID: "req-1"}, MCP: &record.MCPCall{
				URL: srv.URL + "/mcp?token=" + secretQuery, Header: h, Tool: "lookup",
				Arguments: json.RawMessage(`{"id":"u-1","api_key":"` + secretArg + `"}`),
			}}},
		})
		Expect(err).NotTo(HaveOccurred())
		r := results[0]
		Expect(r.Err).NotTo(HaveOccurred())
		Expect(gotKey).To(Equal(secretArg), "the server gets the real arguments")
		body, _ := os.ReadFile(r.Body)
		Expect(string(body)).To(ContainSubstring(`"structuredContent":{"id":"u-1","plan":"team"}`))
		schema, err := os.ReadFile(r.OutputSchema)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(schema)).To(ContainSubstring(`"plan"`))
		m := testtree.ReadMeta(r.Meta)
		Expect(m.Recorded.Source).To(Equal("mcp " + srv.URL + `/mcp?token=REDACTED: tools/call lookup {"id":"u-1","api_key":"REDACTED"}`))
		Expect(m.Recorded.RequestHeaders).To(Equal(map[string]string{"Authorization": "Bearer REDACTED"}))
		Expect(m.Recorded.Redacted).To(ContainElements(
			redact.Redaction{Where: redact.RedactedQuery, Name: "token"},
			redact.Redaction{Where: redact.RedactedHeader, Name: "Authorization"},
			redact.Redaction{Where: redact.RedactedArguments, Pointer: "/api_key"},
		))
		Expect(m.Recorded.StderrBytes).To(BeNil())
		noSecretsUnder(dir)
	})

	It("refuses a tool the server does not offer, before the call, and writes nothing", func() {
		server := mcp.NewServer(&mcp.Implementation{Name: "accounts", Version: "1.0.0"}, nil)
		mcp.AddTool(server, &mcp.Tool{Name: "lookup", Description: "Find an account"},
			func(_ context.Context, _ *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, struct{}, error) {
				return nil, struct{}{}, nil
			})
		handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
		srv := httptest.NewServer(handler)
		defer srv.Close()
		dir := testtree.Tree(map[string]string{"fixtures/.keep": ""})
		results, err := record.Record(context.Background(), record.Options{
			SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures"),
			Tool: "account", UpstreamVersion: "v1", Timeout: 10 * time.Second,
			Calls: []record.Call{{Name: "typo", Request: semantic.Request{ID: "req-1"}, MCP: &record.MCPCall{URL: srv.URL, Tool: "lookpu"}}},
		})
		Expect(err).NotTo(HaveOccurred())
		var ce *gate.ConfigError
		Expect(errors.As(results[0].Err, &ce)).To(BeTrue(), "%v", results[0].Err)
		Expect(results[0].Err.Error()).To(ContainSubstring(`does not offer tool "lookpu" (tools/list: lookup)`))
		Expect(filepath.Join(dir, "fixtures", "account")).NotTo(BeADirectory())
	})
})
