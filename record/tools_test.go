package record_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/record"
)

// fakeMCP is the misbehaving stdio server of testdata/fake-mcp.sh.
func fakeMCP(mode string) []string {
	p, err := filepath.Abs(filepath.Join("testdata", "fake-mcp.sh"))
	Expect(err).NotTo(HaveOccurred())
	return []string{p, mode}
}

// sdkServer serves tools over streamable HTTP with the Go SDK, pageSize
// tools per tools/list page; with auth set, a request without that
// Authorization header gets 401.
func sdkServer(pageSize int, auth string, tools ...*mcp.Tool) *httptest.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1.0.0"}, &mcp.ServerOptions{PageSize: pageSize})
	for _, t := range tools {
		server.AddTool(t, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	}
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if auth != "" && r.Header.Get("Authorization") != auth {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		handler.ServeHTTP(w, r)
	}))
}

// rawServer is a minimal streamable HTTP MCP server answering each request
// with the JSON result answer gives for its method ("" hangs until the
// client gives up); server/discover gets "method not found", so the
// client falls back to initialize.
func rawServer(answer func(method string) string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(r.Body)
		if json.Unmarshal(body, &msg) != nil || len(msg.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch msg.Method {
		case "server/discover":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, msg.ID)
		case "initialize":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}}`, msg.ID)
		default:
			result := answer(msg.Method)
			if result == "" {
				<-r.Context().Done()
				return
			}
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, result)
		}
	}))
}

func tool(name, description string) *mcp.Tool {
	return &mcp.Tool{Name: name, Description: description, InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)}
}

var _ = Describe("airlock tools: listing an MCP server's tools", func() {
	It("lists @modelcontextprotocol/server-everything's tools over stdio, schemas as sent", func() {
		server := []string{"node", everythingEntry(), "stdio"}
		list, err := record.ListTools(context.Background(), record.ToolsOptions{Server: record.MCPCall{Command: server}, Timeout: 60 * time.Second})
		Expect(err).NotTo(HaveOccurred())
		Expect(list.Source).To(HavePrefix("mcp stdio: node "))
		Expect(list.Truncated).To(BeFalse())
		byName := map[string]record.ListedTool{}
		var withOutput []string
		for _, t := range list.Tools {
			byName[t.Name] = t
			Expect(t.InputSchema).NotTo(BeEmpty(), t.Name)
			Expect(json.Valid(t.InputSchema)).To(BeTrue(), t.Name)
			if t.OutputSchema != nil {
				withOutput = append(withOutput, t.Name)
			}
		}
		Expect(byName).To(HaveKey("echo"))
		Expect(byName).To(HaveKey("get-env"))
		Expect(byName).To(HaveKey("get-sum"))
		Expect(withOutput).To(Equal([]string{"get-structured-content"}), "the one tool with an outputSchema")
		sc := byName["get-structured-content"]
		Expect(sc.Title).To(Equal("Get Structured Content Tool"))
		Expect(sc.Description).To(ContainSubstring("structured content"))
		// Compact, members in the server's order: the same bytes record saves.
		Expect(string(sc.OutputSchema)).To(ContainSubstring(`"properties":{"temperature":{"type":"number"`))
		Expect(sc.OutputSchemaBytes).To(Equal(len(sc.OutputSchema)))
		Expect(string(byName["echo"].InputSchema)).To(ContainSubstring(`"message"`))
	})

	It("lists over streamable HTTP page by page, with the header sent and kept out of the source", func() {
		tools := []*mcp.Tool{tool("alpha", "first"), tool("beta", "line one\nline two \x1b[31mred\x1b[0m"), tool("gamma", ""), tool("delta", ""), tool("epsilon", "")}
		tools[2].OutputSchema = json.RawMessage(`{"type":"object","properties":{"z":{"type":"integer"},"a":{"type":"string"}}}`)
		tools[3].Title = "Delta Tool"
		srv := sdkServer(2, secretAuth, tools...)
		defer srv.Close()
		h := http.Header{}
		h.Set("Authorization", secretAuth)
		list, err := record.ListTools(context.Background(), record.ToolsOptions{Server: record.MCPCall{URL: srv.URL + "/mcp?token=" + secretQuery, Header: h}, Timeout: 10 * time.Second})
		Expect(err).NotTo(HaveOccurred())
		var names []string
		for _, t := range list.Tools {
			names = append(names, t.Name)
		}
		// The Go SDK server lists tools by name, two a page: three pages.
		Expect(names).To(ConsistOf("alpha", "beta", "delta", "epsilon", "gamma"))
		Expect(list.Source).To(Equal("mcp " + srv.URL + "/mcp?token=REDACTED"))
		for _, t := range list.Tools {
			switch t.Name {
			case "beta":
				Expect(t.Description).To(Equal("line one\nline two \x1b[31mred\x1b[0m"), "as sent; printers sanitise")
			case "gamma":
				Expect(string(t.OutputSchema)).To(Equal(`{"type":"object","properties":{"z":{"type":"integer"},"a":{"type":"string"}}}`))
			case "delta":
				Expect(t.Title).To(Equal("Delta Tool"))
			}
		}
	})

	It("sends the header to the server's origin only and follows no redirect to another host", func() {
		var leaked http.Header
		other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			leaked = r.Header.Clone()
			http.Error(w, "nothing here", http.StatusNotFound)
		}))
		defer other.Close()
		redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/x", http.StatusTemporaryRedirect)
		}))
		defer redirect.Close()
		h := http.Header{}
		h.Set("Authorization", secretAuth)
		h.Set("X-Api-Key", "K9-secret")
		_, err := record.ListTools(context.Background(), record.ToolsOptions{Server: record.MCPCall{URL: redirect.URL + "/mcp", Header: h}, Timeout: 10 * time.Second})
		Expect(err).To(HaveOccurred())
		Expect(errors.Is(err, record.ErrUpstream)).To(BeTrue(), "%v", err)
		Expect(leaked).To(BeNil(), "the redirect target was reached with %v", leaked)
	})

	It("stops at MaxTools and says so", func() {
		tools := make([]*mcp.Tool, record.MaxTools+5)
		for i := range tools {
			tools[i] = tool(fmt.Sprintf("t%04d", i), "")
		}
		srv := sdkServer(400, "", tools...)
		defer srv.Close()
		list, err := record.ListTools(context.Background(), record.ToolsOptions{Server: record.MCPCall{URL: srv.URL}, Timeout: 30 * time.Second})
		Expect(err).NotTo(HaveOccurred())
		Expect(list.Tools).To(HaveLen(record.MaxTools))
		Expect(list.Truncated).To(BeTrue())
	})

	It("leaves out a schema longer than MaxSchemaBytes and keeps its size", func() {
		big := `{"type":"object","description":"` + strings.Repeat("x", record.MaxSchemaBytes) + `"}`
		srv := sdkServer(0, "", &mcp.Tool{Name: "big", InputSchema: json.RawMessage(big), OutputSchema: json.RawMessage(`{"type":"object"}`)})
		defer srv.Close()
		list, err := record.ListTools(context.Background(), record.ToolsOptions{Server: record.MCPCall{URL: srv.URL}, Timeout: 10 * time.Second})
		Expect(err).NotTo(HaveOccurred())
		Expect(list.Tools).To(HaveLen(1))
		Expect(list.Tools[0].InputSchema).To(BeNil())
		Expect(list.Tools[0].InputSchemaBytes).To(Equal(len(big)))
		Expect(string(list.Tools[0].OutputSchema)).To(Equal(`{"type":"object"}`))
	})

	Describe("a server that misbehaves is an upstream error, never a hang", func() {
		listErr := func(opts record.ToolsOptions) (error, time.Duration) {
			start := time.Now()
			list, err := record.ListTools(context.Background(), opts)
			Expect(list).To(BeNil())
			Expect(err).To(MatchError(record.ErrUpstream))
			return err, time.Since(start)
		}

		It("prints junk on stdout", func() {
			err, took := listErr(record.ToolsOptions{Server: record.MCPCall{Command: fakeMCP("junk")}, Timeout: 20 * time.Second})
			Expect(err.Error()).To(ContainSubstring("not JSON-RPC"))
			Expect(took).To(BeNumerically("<", 10*time.Second), "at once, not at the timeout (2 s to stop the server)")
		})

		It("exits before answering, its stderr quoted", func() {
			err, _ := listErr(record.ToolsOptions{Server: record.MCPCall{Command: fakeMCP("exit")}, Timeout: 20 * time.Second})
			Expect(err.Error()).To(ContainSubstring("connecting"))
			Expect(err.Error()).To(ContainSubstring("cannot open config /etc/fake.conf"))
		})

		It("hangs without answering", func() {
			err, took := listErr(record.ToolsOptions{Server: record.MCPCall{Command: fakeMCP("hang")}, Timeout: time.Second})
			Expect(err.Error()).To(ContainSubstring("no answer within 1s"))
			Expect(took).To(BeNumerically("<", 8*time.Second))
		})

		It("cannot be started", func() {
			err, _ := listErr(record.ToolsOptions{Server: record.MCPCall{Command: []string{filepath.Join(GinkgoT().TempDir(), "missing")}}, Timeout: 5 * time.Second})
			Expect(err.Error()).To(ContainSubstring("no such file"))
		})

		It("hangs on tools/list after initialising", func() {
			srv := rawServer(func(string) string { return "" })
			defer srv.Close()
			err, took := listErr(record.ToolsOptions{Server: record.MCPCall{URL: srv.URL}, Timeout: time.Second})
			Expect(err.Error()).To(ContainSubstring("tools/list (page 1): no answer within 1s"))
			Expect(took).To(BeNumerically("<", 8*time.Second))
		})

		It("sends the same cursor again", func() {
			srv := rawServer(func(string) string {
				return `{"tools":[{"name":"loop","inputSchema":{"type":"object"}}],"nextCursor":"again"}`
			})
			defer srv.Close()
			err, _ := listErr(record.ToolsOptions{Server: record.MCPCall{URL: srv.URL}, Timeout: 10 * time.Second})
			Expect(err.Error()).To(ContainSubstring("tools/list (page 2): the server sent a cursor it had sent before"))
		})

		It("answers tools/list with something that is not a listing", func() {
			srv := rawServer(func(string) string { return `{"tools":"none"}` })
			defer srv.Close()
			err, _ := listErr(record.ToolsOptions{Server: record.MCPCall{URL: srv.URL}, Timeout: 10 * time.Second})
			Expect(err.Error()).To(ContainSubstring("tools/list (page 1)"))
		})

		It("refuses the credentials, which stay out of the error", func() {
			srv := sdkServer(0, "Bearer right", tool("a", ""))
			defer srv.Close()
			h := http.Header{}
			h.Set("Authorization", secretAuth)
			h.Set("X-Custom", "plain-but-given-"+secretArg)
			err, _ := listErr(record.ToolsOptions{Server: record.MCPCall{URL: strings.Replace(srv.URL, "http://", "http://bot:"+secretAuth[7:]+"@", 1) + "/mcp?token=" + secretQuery, Header: h}, Timeout: 10 * time.Second})
			for _, s := range allSecrets {
				Expect(err.Error()).NotTo(ContainSubstring(s))
			}
		})
	})

	It("is interrupted by its context", func() {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(300*time.Millisecond, cancel)
		_, err := record.ListTools(ctx, record.ToolsOptions{Server: record.MCPCall{Command: fakeMCP("hang")}, Timeout: 30 * time.Second})
		Expect(errors.Is(err, context.Canceled)).To(BeTrue(), "%v", err)
	})
})
