package record

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/fileio"
	"github.com/airlockdev/airlock/internal/strictyaml"
	"github.com/airlockdev/airlock/semantic"
)

// requestEntry is one entry of a requests file (docs/record.md).
type requestEntry struct {
	Name      string            `yaml:"name"`
	RequestID string            `yaml:"request_id"`
	Context   map[string]any    `yaml:"context"`
	Method    string            `yaml:"method"`
	URL       string            `yaml:"url"`
	Headers   map[string]string `yaml:"headers"`
	Body      *string           `yaml:"body"`
	Args      []string          `yaml:"args"`
	Stdin     *string           `yaml:"stdin"`
	MCPTool   string            `yaml:"mcp_tool"`
	Arguments map[string]any    `yaml:"arguments"`
	MCPServer []string          `yaml:"mcp_server"`
}

// LoadCalls reads a requests file: a YAML list of calls, each with a
// name and what differs from base, the call the command line describes.
//
//   - name (required), request_id and context (merged into base's) go with
//     every source;
//   - for HTTP: method, url, headers (added to base's), body;
//   - for a command: args (appended to base's argv, or the whole argv when
//     the command line gave none) and stdin;
//   - for MCP: mcp_tool (required unless base names the tool), arguments,
//     and the server: mcp_server (a stdio server's argv), or url and
//     headers (streamable HTTP; base's headers are not sent to it), or
//     else base's server, command or URL (headers added to base's).
//
// An entry with mcp_tool, arguments or mcp_server is an MCP call, and so
// is every entry when base is one (--mcp, --mcp-tool); then a command
// (base.Command) or URL (base.HTTP) on the command line names the server.
// Otherwise an entry with url is an HTTP call and one with args a command.
// Keys of another source, unknown and duplicate keys are *gate.ConfigError
// values with file and line.
func LoadCalls(file string, base Call) ([]Call, error) {
	data, err := fileio.ReadRegularFile(file, gate.MaxConfigFile)
	if err != nil {
		return nil, &gate.ConfigError{File: file, Msg: "cannot read requests file", Err: err}
	}
	var entries []requestEntry
	if err := strictyaml.Decode(file, data, nil, &entries); err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, &gate.ConfigError{File: file, Msg: "the requests file lists no calls (want a YAML list of {name: ..., ...})"}
	}
	out := make([]Call, 0, len(entries))
	for i, e := range entries {
		bad := func(key, msg string) error {
			return &gate.ConfigError{File: file, Key: fmt.Sprintf("/%d%s", i, key), Msg: msg}
		}
		if err := fixture.ExactNumbers(file, data, fmt.Sprintf("/%d/context", i), e.Context); err != nil {
			return nil, err
		}
		c, err := e.call(base, bad)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// call returns the call entry e describes over base; bad makes the error
// for a key of the entry.
func (e *requestEntry) call(base Call, bad func(key, msg string) error) (Call, error) {
	if e.Name == "" {
		return Call{}, bad("/name", "every call needs a name (the fixture's file name)")
	}
	c := Call{Name: e.Name, Request: base.Request}
	c.Request.Context = maps.Clone(base.Request.Context)
	if e.RequestID != "" {
		c.Request.ID = e.RequestID
	}
	if err := semantic.NormalizeContext(e.Context); err != nil {
		return Call{}, bad("/context", err.Error())
	}
	if len(e.Context) > 0 && c.Request.Context == nil {
		c.Request.Context = map[string]any{}
	}
	maps.Copy(c.Request.Context, e.Context)

	httpKeys := e.Method != "" || e.URL != "" || len(e.Headers) > 0 || e.Body != nil
	cmdKeys := len(e.Args) > 0 || e.Stdin != nil
	mcpKeys := e.MCPTool != "" || e.Arguments != nil || len(e.MCPServer) > 0
	switch {
	case base.MCP != nil || mcpKeys:
		m, key, msg := e.mcpCall(base)
		if msg != "" {
			return Call{}, bad(key, msg)
		}
		c.MCP = m
	case base.HTTP != nil || (base.Command == nil && httpKeys):
		if cmdKeys {
			return Call{}, bad("", "an HTTP call takes method, url, headers and body, not args or stdin")
		}
		c.HTTP = e.httpCall(base.HTTP)
	case base.Command != nil || cmdKeys:
		if httpKeys {
			return Call{}, bad("", "a command call takes args and stdin, not method, url, headers or body")
		}
		c.Command = e.commandCall(base.Command)
	default:
		return Call{}, bad("", "no source: give url (HTTP) or args (a command) here, or a source on the command line")
	}
	return c, nil
}

// mcpCall returns the MCP call the entry describes over base: its server
// is the entry's (mcp_server, or url with headers), else base's MCP
// server, command or URL. On error it returns the entry's key at fault and
// what is wrong.
func (e *requestEntry) mcpCall(base Call) (m *MCPCall, key, msg string) {
	switch {
	case len(e.Args) > 0 || e.Stdin != nil:
		return nil, "", "an MCP call takes mcp_tool, arguments and a server (mcp_server, or url and headers), not args or stdin"
	case e.Method != "" || e.Body != nil:
		return nil, "", "an MCP call takes mcp_tool, arguments and a server (mcp_server, or url and headers), not method or body"
	case len(e.MCPServer) > 0 && (e.URL != "" || len(e.Headers) > 0):
		return nil, "/mcp_server", "an MCP server is either mcp_server (a command, over stdio) or url (streamable HTTP), not both"
	}
	m = &MCPCall{}
	switch {
	case base.MCP != nil:
		*m = *base.MCP
		m.Header = base.MCP.Header.Clone()
	case base.Command != nil:
		if base.Command.Stdin != nil {
			return nil, "", "--stdin goes with a command, not with an MCP server"
		}
		m.Command, m.Dir, m.Env = slices.Clone(base.Command.Argv), base.Command.Dir, base.Command.Env
	case base.HTTP != nil:
		h := base.HTTP
		if (h.Method != "" && h.Method != http.MethodGet) || h.Body != nil || h.Gzip || h.FollowRedirects {
			return nil, "", "--method, --data, --gzip and --follow-redirects go with an HTTP call, not with an MCP server"
		}
		m.URL, m.Header = h.URL, h.Header.Clone()
	}
	switch {
	case len(e.MCPServer) > 0:
		m.Command, m.URL, m.Header = slices.Clone(e.MCPServer), "", nil
	case e.URL != "":
		// The command line's headers (credentials) go to its server only.
		m.Command, m.Dir, m.Env, m.URL, m.Header = nil, "", nil, e.URL, nil
	}
	if len(e.Headers) > 0 {
		if m.URL == "" {
			return nil, "/headers", "headers go with an MCP server over streamable HTTP (url)"
		}
		if m.Header == nil {
			m.Header = http.Header{}
		}
		for _, k := range slices.Sorted(maps.Keys(e.Headers)) {
			m.Header.Set(k, e.Headers[k])
		}
	}
	if len(m.Command) == 0 && m.URL == "" {
		return nil, "", "an MCP call needs a server: mcp_server (a command) or url here, or a command or --url on the command line"
	}
	if e.MCPTool != "" {
		m.Tool = e.MCPTool
	}
	if m.Tool == "" {
		return nil, "/mcp_tool", "name the MCP tool to call (mcp_tool; airlock tools lists them)"
	}
	if e.Arguments != nil {
		b, err := json.Marshal(e.Arguments)
		if err != nil {
			return nil, "/arguments", err.Error()
		}
		m.Arguments = b
	}
	return m, "", ""
}

// httpCall returns base (or an empty call) with the entry's method, url,
// headers and body.
func (e *requestEntry) httpCall(base *HTTPCall) *HTTPCall {
	h := HTTPCall{}
	if base != nil {
		h = *base
		h.Header = base.Header.Clone()
	}
	if e.Method != "" {
		h.Method = e.Method
	}
	if e.URL != "" {
		h.URL = e.URL
	}
	if len(e.Headers) > 0 && h.Header == nil {
		h.Header = http.Header{}
	}
	for _, k := range slices.Sorted(maps.Keys(e.Headers)) {
		h.Header.Set(k, e.Headers[k])
	}
	if e.Body != nil {
		h.Body = []byte(*e.Body)
	}
	return &h
}

// commandCall returns base (or an empty command) with the entry's args
// appended and its stdin.
func (e *requestEntry) commandCall(base *CommandCall) *CommandCall {
	cmd := CommandCall{}
	if base != nil {
		cmd = *base
	}
	cmd.Argv = append(slices.Clone(cmd.Argv), e.Args...)
	if e.Stdin != nil {
		cmd.Stdin = []byte(*e.Stdin)
	}
	return &cmd
}

// ParseHeader parses a "Name: value" header argument.
func ParseHeader(s string) (string, string, error) {
	name, value, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t") {
		return "", "", fmt.Errorf("a header is \"Name: value\" (got %d bytes without a name and a colon)", len(s))
	}
	return name, strings.TrimSpace(value), nil
}
