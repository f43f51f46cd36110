package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolsServer serves two tools over streamable HTTP, one with a hostile
// description and an outputSchema, behind a bearer token.
func toolsServer(t *testing.T) string {
	server := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1"}, nil)
	noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	server.AddTool(&mcp.Tool{Name: "lookup", Title: "Look up", Description: "Find an account.\n\x1b[31mRED\x1b[0m \u202eevil",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"plan":{"type":"string"}}}`)}, noop)
	server.AddTool(&mcp.Tool{Name: "ping", InputSchema: json.RawMessage(`{"type":"object"}`)}, noop)
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok-123456" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

func runAirlock(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, Stdio{Out: &out, Err: &errb}, Options{})
	return code, out.String(), errb.String()
}

func TestToolsListsOverStreamableHTTP(t *testing.T) {
	url := toolsServer(t)
	auth := []string{"tools", "--url", url, "--header", "Authorization: Bearer tok-123456"}

	code, out, errs := runAirlock(auth...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := "mcp " + url + ": 2 tools, 1 with an outputSchema\n" +
		"TOOL    OUTPUT SCHEMA  DESCRIPTION\n" +
		`lookup  yes            Look up: Find an account. \x1b[31mRED\x1b[0m \u{202e}evil` + "\n" +
		"ping    no             \n"
	if out != want {
		t.Errorf("listing:\n%s\nwant:\n%s", out, want)
	}
	if strings.Contains(out+errs, "tok-123456") {
		t.Error("the header's value was printed")
	}

	code, out, errs = runAirlock(append(auth, "--tool", "lookup")...)
	if code != 0 || !strings.Contains(out, "tool: lookup\ninputSchema:\n{\n  \"type\": \"object\",") || !strings.Contains(out, "outputSchema:\n{") {
		t.Errorf("--tool lookup: exit %d\n%s%s", code, out, errs)
	}
	code, out, _ = runAirlock(append(auth, "--tool", "ping")...)
	if code != 0 || !strings.HasSuffix(out, "outputSchema: none\n") {
		t.Errorf("--tool ping: exit %d\n%s", code, out)
	}

	code, out, _ = runAirlock(append(auth, "--format", "json", "--tool", "lookup")...)
	var doc struct {
		Version int
		Server  string
		Tools   []struct {
			Name         string          `json:"name"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		}
	}
	err := json.Unmarshal([]byte(out), &doc)
	var compact bytes.Buffer
	if err == nil && len(doc.Tools) == 1 {
		err = json.Compact(&compact, doc.Tools[0].OutputSchema)
	}
	if code != 0 || err != nil || len(doc.Tools) != 1 || doc.Tools[0].Name != "lookup" || compact.String() != `{"type":"object","properties":{"plan":{"type":"string"}}}` {
		t.Errorf("--format json --tool lookup: exit %d, %v\n%s", code, err, out)
	}
	if !strings.Contains(out, `RED\u001b[0m \u202eevil"`) {
		t.Errorf("--format json: a bidi control is not escaped:\n%s", out)
	}

	code, out, errs = runAirlock(append(auth, "--tool", "lookpu")...)
	if code != 2 || out != "" || !strings.Contains(errs, `does not offer tool "lookpu" (tools/list: lookup, ping)`) {
		t.Errorf("--tool lookpu: exit %d\n%s%s", code, out, errs)
	}

	// Without the header: the server refuses, exit 3.
	code, _, errs = runAirlock("tools", "--url", url)
	if code != 3 || !strings.Contains(errs, "airlock: upstream error: mcp "+url+": connecting: ") {
		t.Errorf("no header: exit %d: %s", code, errs)
	}
}
