package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/mcpclient"
	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/redact"
)

// ErrServer is wrapped by MCP's error when the server cannot be started
// or reached, or does not answer initialize, tools/list or tools/call.
var ErrServer = errors.New("the MCP server failed")

// ErrInput is wrapped by MCP's error for what the caller must change: an
// unknown tool, a missing --arguments, a result that cannot make a
// contract.
var ErrInput = errors.New("cannot import")

// MCPOptions say which server and tool MCP imports.
type MCPOptions struct {
	// Tool is the agent tool name (the contract folder).
	Tool string
	// MCPTool is the server's tool name, as tools/list spells it.
	MCPTool string
	// Command starts a stdio server (argv), run in Dir with Env (nil: the
	// current environment); URL reaches a streamable HTTP server instead,
	// with Header on every request to its origin.
	Command []string
	Dir     string
	Env     []string
	URL     string
	Header  http.Header
	// Arguments, when set, are the arguments of one tools/call whose
	// result becomes an example; a tool without an outputSchema needs it.
	Arguments json.RawMessage
	// UpstreamVersion names the version (default "v1").
	UpstreamVersion string
	// Project is the projection; empty means DefaultProjection.
	Project []Field
	// Timeout bounds the whole exchange with the server (default 30s).
	Timeout time.Duration
	// Redactor takes secrets out of the recorded call, the command line
	// and the URL before they reach a file (nil: the default policy).
	Redactor *redact.Redactor
}

// MCP reads an MCP server's tools/list and drafts the contract of one of
// its tools: from its outputSchema (result structured), or, for a tool
// without one, from one recorded call whose single text block holds JSON
// (result text, a permissive skeleton of that one value). With Arguments
// the call's result, secrets redacted, is the draft's example.
func MCP(ctx context.Context, o MCPOptions) (*Draft, error) {
	if o.UpstreamVersion == "" {
		o.UpstreamVersion = "v1"
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Redactor == nil {
		o.Redactor = &redact.Redactor{}
	}
	if (len(o.Command) == 0) == (o.URL == "") {
		return nil, fmt.Errorf("%w: give either a server command (after --) or --url", ErrInput)
	}
	if len(o.Arguments) > 0 {
		var args map[string]any
		if err := json.Unmarshal(o.Arguments, &args); err != nil || args == nil {
			return nil, fmt.Errorf("%w: --arguments must be a JSON object", ErrInput)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()

	s, err := connect(ctx, o)
	if s != nil && s.session != nil {
		defer s.session.Close()
	}
	if err != nil {
		return nil, s.serverErr(ctx, o.Timeout, "connecting", err)
	}
	tools, raw, err := s.session.OutputSchemas(ctx)
	if err != nil {
		return nil, s.serverErr(ctx, o.Timeout, "tools/list", err)
	}
	var tool *mcp.Tool
	for _, t := range tools {
		if t.Name == o.MCPTool {
			tool = t
		}
	}
	if tool == nil {
		names := make([]string, len(tools))
		for i, t := range tools {
			names[i] = t.Name
		}
		return nil, fmt.Errorf("%w: %s does not offer tool %q; tools/list, closest first: %s", ErrInput, s.source, o.MCPTool, strings.Join(schema.ByDistance(o.MCPTool, names), ", "))
	}

	d := &Draft{Tool: o.Tool, Protocol: "mcp", Version: Version{Name: o.UpstreamVersion}, ExampleSource: "the recorded call"}
	d.Description = tool.Description
	init := s.session.InitializeResult()
	server := "an MCP server"
	if init != nil && init.ServerInfo != nil {
		server = fmt.Sprintf("%s %s", init.ServerInfo.Name, init.ServerInfo.Version)
	}
	origin := []string{
		fmt.Sprintf("imported by airlock import mcp from tool %q of %s", o.MCPTool, server),
		"server: " + s.source,
	}
	d.Header = origin
	d.Version.Comment = origin
	d.Notes = append(d.Notes, s.redactedNotes...)

	var body []byte
	if len(o.Arguments) > 0 {
		// With a result on the wire, the SDK's failure to decode it is no
		// failure here: the bytes are the result.
		body, err = s.session.Call(ctx, o.MCPTool, o.Arguments)
		if body == nil {
			return nil, s.serverErr(ctx, o.Timeout, "tools/call "+o.MCPTool, err)
		}
		red, found, _ := o.Redactor.Body(body)
		if len(found) > 0 {
			body = red
			d.Notes = append(d.Notes, "redacted before writing the recorded call: "+describeRedactions(found))
		}
		var res struct {
			IsError bool `json:"isError"`
		}
		if json.Unmarshal(body, &res) == nil && res.IsError {
			d.Notes = append(d.Notes, "the recorded call returned isError true (the tool refused it: check --arguments); the gate refuses such a result as transport.mcp_tool_error, so it is written as a near-miss")
		}
		d.Examples = append(d.Examples, Example{Name: o.MCPTool, Body: body,
			From: fmt.Sprintf("tools/call %s %s of %s, recorded by airlock import mcp", o.MCPTool, compact(o.Arguments, o.Redactor), server)})
	}

	file := "schemas/" + o.Tool + "/upstream." + o.UpstreamVersion + ".schema.json"
	var upstream map[string]any
	if out := raw[o.MCPTool]; len(out) > 0 && string(out) != "null" {
		d.Result = "structured"
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.UseNumber()
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			return nil, fmt.Errorf("%w: the outputSchema of %q is not a JSON object: %v", ErrInput, o.MCPTool, err)
		}
		var notes []string
		upstream, notes = To2020(doc)
		d.Notes = append(d.Notes, notes...)
	} else {
		if body == nil {
			return nil, fmt.Errorf("%w: tool %q declares no outputSchema: give --arguments JSON so that one call shows what it returns (its result: text contract is drafted from that call)", ErrInput, o.MCPTool)
		}
		v, err := textValue(body)
		if err != nil {
			return nil, fmt.Errorf("%w: tool %q declares no outputSchema and %v; a contract's result: text needs JSON text", ErrInput, o.MCPTool, err)
		}
		d.Result = "text"
		upstream = Skeleton(v)
		d.Notes = append(d.Notes, fmt.Sprintf("tool %q declares no outputSchema: the upstream schema is a permissive skeleton of the one recorded value (types only, no required members, open objects); one sample is thin evidence — record more calls and run airlock infer, then tighten it", o.MCPTool))
	}
	upstream["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	if err := finishProjection(d, file, upstream, o.Project); err != nil {
		return nil, err
	}
	var secret []string
	for _, f := range d.Version.Projection {
		if o.Redactor.Secret(f.Name) {
			secret = append(secret, f.Name)
		}
	}
	if len(secret) > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("projected field(s) named like a secret: %s; an agent should rarely see one — drop them from the projection", strings.Join(secret, ", ")))
	}
	return d, nil
}

// finishProjection sets the draft's projection (o.Project or the default),
// closes the objects along it and derives the agent schema.
func finishProjection(d *Draft, file string, upstream map[string]any, project []Field) error {
	p, err := Schemas{file: upstream}.Project(file, project, true)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInput, err)
	}
	d.Notes = append(d.Notes, p.Notes...)
	d.Version.Schema = upstream
	d.Version.Projection = p.Fields
	d.Agent = p.Agent
	return nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func quoteAll(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = fmt.Sprintf("%q", p)
		if p == "" {
			out[i] = `"" (the root)`
		}
	}
	return out
}

// textValue parses the JSON text of the result's one text block.
func textValue(body []byte) (any, error) {
	var r struct {
		Content []struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("its result is not a CallToolResult (%v)", err)
	}
	var texts []string
	for _, c := range r.Content {
		if c.Type == "text" && c.Text != nil {
			texts = append(texts, *c.Text)
		}
	}
	if r.IsError {
		msg := ""
		if len(texts) > 0 {
			msg = ": " + clip(texts[0], 200)
		}
		return nil, fmt.Errorf("the call returned isError true%s (check --arguments)", msg)
	}
	if len(texts) != 1 {
		return nil, fmt.Errorf("its result has %d text blocks, not one", len(texts))
	}
	v, err := strictjson.Parse([]byte(texts[0]), strictjson.Limits{FoldCollisions: true})
	if err != nil {
		return nil, fmt.Errorf("its text block is not JSON (%v; it starts %q)", err, clip(texts[0], 60))
	}
	return v, nil
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// Skeleton is a permissive JSON Schema of one value: its type, and for an
// object each member's schema (no required, open to other members), for
// an array the schema of its items when they all have the same type.
func Skeleton(v any) map[string]any {
	switch x := v.(type) {
	case map[string]any:
		props := map[string]any{}
		for k, m := range x {
			props[k] = Skeleton(m)
		}
		return map[string]any{"type": "object", "properties": props}
	case []any:
		out := map[string]any{"type": "array"}
		if len(x) == 0 {
			return out
		}
		first := Skeleton(x[0])
		same := true
		for _, e := range x[1:] {
			if jsonType(e) != jsonType(x[0]) {
				same = false
			}
		}
		if same {
			if jsonType(x[0]) == "object" {
				// Members of every element.
				props := map[string]any{}
				for _, e := range x {
					for k, m := range e.(map[string]any) {
						if _, ok := props[k]; !ok {
							props[k] = Skeleton(m)
						}
					}
				}
				first["properties"] = props
			}
			out["items"] = first
		}
		return out
	}
	return map[string]any{"type": jsonType(v)}
}

func jsonType(v any) string {
	switch x := v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case nil:
		return "null"
	case json.Number:
		if !strings.ContainsAny(string(x), ".eE") {
			return "integer"
		}
		return "number"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	}
	return "number"
}

func describeRedactions(found []redact.Redaction) string {
	var parts []string
	for _, f := range found {
		where := f.Where
		if f.Pointer != "" {
			where += " " + f.Pointer
		}
		if f.Inner != "" {
			where += " (inside its JSON text at " + f.Inner + ")"
		}
		if f.Name != "" && f.Pointer == "" {
			where += " " + f.Name
		}
		parts = append(parts, where)
	}
	return fmt.Sprintf("%d value(s): %s", len(found), strings.Join(parts, ", "))
}

func compact(b []byte, r *redact.Redactor) string {
	red, _, _ := r.Body(b)
	var buf bytes.Buffer
	if json.Compact(&buf, red) != nil {
		return clip(string(red), 200)
	}
	return clip(buf.String(), 200)
}

// mcpSession is one connection to the server being imported.
type mcpSession struct {
	session       *mcpclient.Session // nil until connected
	stderr        *mcpclient.Tail
	source        string
	redactedNotes []string
	scrub         func(string) string
}

// serverErr wraps a failure talking to the server in ErrServer, with the
// end of its stderr, secrets out.
func (s *mcpSession) serverErr(ctx context.Context, timeout time.Duration, what string, err error) error {
	msg := s.scrub(err.Error())
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		msg = fmt.Sprintf("timed out after %s", timeout)
	}
	if s.stderr != nil {
		if t := strings.TrimSpace(s.stderr.String()); t != "" {
			msg += "; its stderr ends: " + clip(t, 400)
		}
	}
	return fmt.Errorf("%w: %s: %s: %s", ErrServer, s.source, what, (&redact.Redactor{}).Text(msg))
}

func connect(ctx context.Context, o MCPOptions) (*mcpSession, error) {
	// Only a stdio server writes to stderr.
	s := &mcpSession{stderr: &mcpclient.Tail{Max: 4096}, scrub: func(m string) string { return m }}
	if o.URL != "" {
		u, found := o.Redactor.URL(o.URL)
		s.source = mcpclient.Source(u, nil)
		if len(found) > 0 {
			s.redactedNotes = append(s.redactedNotes, "the server URL in the comments has its secrets redacted")
		}
		s.scrub = func(m string) string { return strings.ReplaceAll(m, o.URL, u) }
	} else {
		argv, found := o.Redactor.Argv(o.Command)
		s.source = mcpclient.Source("", argv)
		if len(found) > 0 {
			s.redactedNotes = append(s.redactedNotes, "the server command in the comments has its secrets redacted")
		}
	}
	srv := mcpclient.Server{Command: o.Command, Dir: o.Dir, Env: o.Env, URL: o.URL, Header: o.Header}
	session, err := mcpclient.Connect(ctx, srv, "airlock", gate.Version, mcpclient.NewWire(nil), s.stderr)
	if err != nil {
		return s, err
	}
	s.session = session
	return s, nil
}
