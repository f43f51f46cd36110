package proxy_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockdev/airlock/internal/testtree"
)

// proxyCmd is the test binary as airlock proxy (runProxy) in front of
// server, with the weather contract serving MCP tool mcpTool.
func proxyCmd(t *testing.T, mode, mcpTool string, server ...string) *exec.Cmd {
	t.Helper()
	schemas, err := filepath.Abs(filepath.Join("testdata", "schemas"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], server...)
	cmd.Env = append(os.Environ(), roleEnv+"=proxy", "PROXY_SCHEMAS="+schemas, "PROXY_MODE="+mode, "PROXY_MAP="+mcpTool+"=weather")
	cmd.Stderr = os.Stderr
	return cmd
}

func agentSchema(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "schemas", "weather", "agent.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	delete(s, "$schema")
	return s
}

// TestEverythingGoClient: the go-sdk client starts the proxy (a separate
// process) in front of @modelcontextprotocol/server-everything.
func TestEverythingGoClient(t *testing.T) {
	entry := testtree.MCPServerEntry(t, "server-everything", "AIRLOCK_MCP_EVERYTHING")
	client := mcp.NewClient(&mcp.Implementation{Name: "proxy-e2e", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := client.Connect(ctx, &mcp.CommandTransport{Command: proxyCmd(t, "strict", "get-structured-content", "node", entry, "stdio"), TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tools, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, tl := range tools.Tools {
		if tl.Name == "get-structured-content" {
			found = true
			if d := cmp.Diff(agentSchema(t), tl.OutputSchema); d != "" {
				t.Errorf("outputSchema (-want +got):\n%s", d)
			}
		}
	}
	if !found {
		t.Fatal("get-structured-content is not listed")
	}
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "get-structured-content", Arguments: map[string]any{"location": "Chicago"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"temperature": 36.0, "conditions": "Light rain / drizzle"}
	if d := cmp.Diff(want, res.StructuredContent); d != "" || res.IsError {
		t.Errorf("structuredContent (-want +got):\n%s (isError %v)", d, res.IsError)
	}
	// A tool without a contract passes unchanged.
	res, err = s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "hello") {
		t.Errorf("echo through the proxy: %v %+v", err, res)
	}
}

type tsOutput struct {
	Tools []struct {
		Name         string         `json:"name"`
		OutputSchema map[string]any `json:"outputSchema"`
	} `json:"tools"`
	Results []struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent map[string]any `json:"structuredContent"`
		IsError           bool           `json:"isError"`
	} `json:"results"`
}

// tsClient runs testdata/ts-client.cjs (the TypeScript SDK's client) with
// p as the server it starts (p's environment is the client's, which passes
// it on).
func tsClient(t *testing.T, p *exec.Cmd, calls string) tsOutput {
	t.Helper()
	entry := testtree.MCPServerEntry(t, "server-everything", "AIRLOCK_MCP_EVERYTHING")
	modules := filepath.Join(filepath.Dir(entry), "..", "..", "..")
	if _, err := os.Stat(filepath.Join(modules, "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true: the TypeScript MCP SDK is not installed beside server-everything: ", err)
		}
		t.Skip("the TypeScript MCP SDK is not installed beside server-everything")
	}
	spec, _ := json.Marshal(map[string]any{"command": append([]string{p.Path}, p.Args[1:]...), "calls": json.RawMessage(calls)})
	cmd := exec.Command("node", filepath.Join("testdata", "ts-client.cjs"), string(spec))
	cmd.Env = append(p.Env, "NODE_PATH="+modules)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ts-client: %v", err)
	}
	var o tsOutput
	if err := json.Unmarshal(out, &o); err != nil {
		t.Fatalf("ts-client output: %v: %s", err, out)
	}
	return o
}

// TestTypeScriptClient: the TypeScript SDK's client, which validates
// structuredContent against the advertised outputSchema, through the proxy
// to server-everything and to the hostile server.
func TestTypeScriptClient(t *testing.T) {
	entry := testtree.MCPServerEntry(t, "server-everything", "AIRLOCK_MCP_EVERYTHING")
	p := proxyCmd(t, "strict", "get-structured-content", "node", entry, "stdio")
	o := tsClient(t, p, `[{"name":"get-structured-content","arguments":{"location":"Los Angeles"}}]`)
	if len(o.Results) != 1 || o.Results[0].IsError {
		t.Fatalf("results %+v", o.Results)
	}
	want := map[string]any{"temperature": 73.0, "conditions": "Sunny / Clear"}
	if d := cmp.Diff(want, o.Results[0].StructuredContent); d != "" {
		t.Errorf("structuredContent (-want +got):\n%s", d)
	}
	for _, tl := range o.Tools {
		if tl.Name == "get-structured-content" {
			if d := cmp.Diff(agentSchema(t), tl.OutputSchema); d != "" {
				t.Errorf("outputSchema (-want +got):\n%s", d)
			}
		}
	}

	// The hostile server: strict gives the failure envelope (text only),
	// warn the original result.
	self, _ := filepath.Abs(os.Args[0])
	hostile := []string{"sh", "-c", "exec env " + roleEnv + "=server " + shellQuote(self)}
	p = proxyCmd(t, "strict", "weather", hostile...)
	o = tsClient(t, p, `[{"name":"weather","arguments":{"location":"inject"}},{"name":"weather","arguments":{"location":"dup"}}]`)
	for i, r := range o.Results {
		if !r.IsError || r.StructuredContent != nil || len(r.Content) != 1 || !strings.Contains(r.Content[0].Text, `"code":"INVALID_RESPONSE"`) {
			t.Errorf("strict result %d: %+v", i, r)
		}
	}
	p = proxyCmd(t, "warn", "weather", hostile...)
	o = tsClient(t, p, `[{"name":"weather","arguments":{"location":"inject"}}]`)
	if r := o.Results[0]; r.IsError || r.StructuredContent["instructions"] == nil {
		t.Errorf("warn result: %+v", r)
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
