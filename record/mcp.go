package record

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/mcpclient"
	"github.com/airlockdev/airlock/internal/sanitize"
	"github.com/airlockdev/airlock/redact"
)

// mcpSession is one connection to an MCP server, shared by every call of a
// run that names the same server.
type mcpSession struct {
	session *mcpclient.Session // nil until connected
	wire    *mcpclient.Wire
	stderr  *countWriter
	// source describes the server, credentials redacted.
	source    string
	redacted  []redact.Redaction
	reqHeader map[string]string
	// scrub takes the server's URL, credentials and all, out of an error.
	scrub func(error) error
	// schemas maps tool name → its outputSchema as sent (nil: none); listed
	// is false until tools/list has been read.
	schemas map[string][]byte
	listed  bool
}

func (s *mcpSession) close() {
	if s.session != nil {
		s.session.Close()
	}
}

func (rec *recorder) mcpSession(ctx context.Context, c *MCPCall) (*mcpSession, error) {
	key := c.URL
	if key == "" {
		key = "\x00" + strings.Join(c.Command, "\x00")
	}
	if s := rec.mcp[key]; s != nil {
		return s, nil
	}
	s, err := rec.connectMCP(ctx, c)
	if err != nil {
		return nil, upstreamErr(ctx, rec.opts.Timeout, s.source+": connecting", err)
	}
	rec.mcp[key] = s
	return s, nil
}

// connectMCP starts (stdio) or reaches (streamable HTTP) the server c
// names and initialises a session. On error the session is not connected
// but its source (redacted) is set, and the error is scrubbed of the URL.
func (rec *recorder) connectMCP(ctx context.Context, c *MCPCall) (*mcpSession, error) {
	s := &mcpSession{
		wire:    mcpclient.NewWire(rec.readFailed),
		schemas: map[string][]byte{},
		scrub:   func(err error) error { return err },
	}
	srv := mcpclient.Server{Command: c.Command, Dir: c.Dir, Env: c.Env, URL: c.URL, Header: c.Header}
	var stderr io.Writer
	if c.URL != "" {
		u, redacted := rec.redactURL(c.URL)
		s.source, s.redacted = mcpclient.Source(u, nil), redacted
		s.scrub = func(err error) error { return scrubbed(err, c.URL, u) }
		var found []redact.Redaction
		s.reqHeader, found = rec.redactHeader(c.Header, redact.RedactedHeader)
		s.redacted = append(s.redacted, found...)
	} else {
		argv, redacted := rec.redactArgv(c.Command)
		s.source, s.redacted = mcpclient.Source("", argv), redacted
		s.stderr = &countWriter{tail: rec.stderrTail}
		stderr = s.stderr
	}
	session, err := mcpclient.Connect(ctx, srv, "airlock", gate.Version, s.wire, stderr)
	if err != nil {
		return s, s.scrub(err)
	}
	s.session = session
	return s, nil
}

// outputSchema returns the tool's outputSchema from tools/list, indented
// but otherwise as sent (member order, number spelling); nil when the tool
// declares none. found is false when tools/list does not offer the tool.
func (s *mcpSession) outputSchema(ctx context.Context, tool string) (schema []byte, found bool, err error) {
	if !s.listed {
		_, raw, err := s.session.OutputSchemas(ctx)
		if err != nil {
			return nil, false, s.scrub(err)
		}
		for name, b := range raw {
			s.schemas[name] = indentJSON(b)
		}
		s.listed = true
	}
	schema, found = s.schemas[tool]
	return schema, found, nil
}

func indentJSON(raw json.RawMessage) []byte {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") != nil {
		return append(bytes.Clone(raw), '\n')
	}
	buf.WriteByte('\n')
	return buf.Bytes()
}

// fetchMCP makes one tools/call. The body is the JSON-RPC result exactly
// as the server sent it; a JSON-RPC error (unknown tool, bad arguments) is
// no CallToolResult and records nothing (ErrUpstream).
func (rec *recorder) fetchMCP(ctx context.Context, c *MCPCall) (*capture, error) {
	start := time.Now()
	s, err := rec.mcpSession(ctx, c)
	if err != nil {
		return nil, err
	}
	args := c.Arguments
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	shownArgs, argRedacted := args, []redact.Redaction(nil)
	if !rec.opts.NoRedact {
		var found []redact.Redaction
		shownArgs, found, _ = rec.opts.Redactor.Body(args)
		for _, f := range found {
			f.Where = redact.RedactedArguments
			argRedacted = append(argRedacted, f)
		}
	}
	what := fmt.Sprintf("%s: tools/call %s %s", s.source, c.Tool, compactJSON(shownArgs))

	schema, listed, err := s.outputSchema(ctx, c.Tool)
	if err != nil {
		return nil, upstreamErr(ctx, rec.opts.Timeout, s.source+": tools/list", err)
	}
	if !listed {
		// A mistyped tool name is the caller's error: refuse it before the
		// call rather than record the server's "tool not found".
		names := slices.Sorted(maps.Keys(s.schemas))
		return nil, &gate.ConfigError{File: "--mcp-tool", Msg: fmt.Sprintf("the MCP server does not offer tool %q (tools/list: %s)", c.Tool, sanitize.Text(strings.Join(names, ", "), 512, sanitize.Escape))}
	}
	start = time.Now()
	body, callErr := s.session.Call(ctx, c.Tool, args)
	received := time.Now()
	if body == nil {
		return nil, upstreamErr(ctx, rec.opts.Timeout, what, s.scrub(callErr))
	}
	got := &capture{
		status:       0,
		contentType:  "application/json",
		body:         body,
		source:       what,
		reqHeader:    s.reqHeader,
		redacted:     append(append([]redact.Redaction(nil), s.redacted...), argRedacted...),
		mcpTool:      c.Tool,
		outputSchema: schema,
		received:     received,
		duration:     received.Sub(start),
	}
	if s.stderr != nil {
		n := s.stderr.n.Load()
		got.stderrBytes = &n
	}
	if callErr != nil {
		got.warnings = append(got.warnings, "the MCP SDK could not decode the result ("+sanitize.Text((&redact.Redactor{}).Text(s.scrub(callErr).Error()), 200, sanitize.Escape)+"); the bytes are recorded as sent")
	}
	return got, nil
}

func compactJSON(b []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return sanitize.Text(string(b), 1024, sanitize.Escape)
	}
	return sanitize.Text(buf.String(), 1024, sanitize.Escape)
}
