package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/mcpclient"
	"github.com/airlockdev/airlock/internal/sanitize"
	"github.com/airlockdev/airlock/redact"
)

// Limits of ListTools. A listing never takes longer than its timeout and
// never holds more than MaxTools tools of at most MaxSchemaBytes per
// schema.
const (
	// DefaultToolsTimeout bounds a whole listing: starting or reaching
	// the server, initialising the session and every tools/list page.
	DefaultToolsTimeout = 30 * time.Second
	// MaxTools is the most tools a listing holds; a server that offers
	// more is listed up to it (ToolList.Truncated).
	MaxTools = mcpclient.MaxTools
	// MaxToolPages is the most tools/list requests of one listing, so a
	// server that answers with empty pages and a new cursor forever ends
	// too (ToolList.Truncated).
	MaxToolPages = mcpclient.MaxPages
	// MaxSchemaBytes is the largest inputSchema or outputSchema, in bytes
	// of compact JSON, that a listing keeps; a larger one is left out and
	// only its size kept (ListedTool.InputSchemaBytes, OutputSchemaBytes).
	MaxSchemaBytes = 256 << 10
	// maxStderrTail is how much of a stdio server's standard error an
	// error message quotes (its end).
	maxStderrTail = 512
)

// ToolsOptions configure ListTools.
type ToolsOptions struct {
	// Server names the MCP server: Command (stdio, with Dir and Env) or
	// URL (streamable HTTP, with Header), exactly one. Tool and Arguments
	// are ignored.
	Server MCPCall
	// Timeout bounds the whole listing; 0 means DefaultToolsTimeout.
	Timeout time.Duration
	// Redactor says what is secret in the server's URL and command line
	// as shown in ToolList.Source and in errors.
	Redactor redact.Redactor
}

// ToolList is an MCP server's tools/list, every page up to the limits.
type ToolList struct {
	// Source is the server as airlock shows it, secrets redacted:
	// "mcp stdio: <argv>" or "mcp <url>".
	Source string
	// Tools are in the order the server listed them.
	Tools []ListedTool
	// Truncated is true when the server offered more than MaxTools tools
	// or MaxToolPages pages; Tools holds the first ones.
	Truncated bool
}

// ListedTool is one tool of a listing, its texts as the server sent them
// (not sanitised: a printer must, see internal/sanitize).
type ListedTool struct {
	Name string
	// Title is the tool's title, or its annotations' title; "" for none.
	Title       string
	Description string
	// InputSchema and OutputSchema are compact JSON, members and numbers
	// as sent; nil when the tool declares none (OutputSchema) or when it
	// is longer than MaxSchemaBytes.
	InputSchema, OutputSchema json.RawMessage
	// InputSchemaBytes and OutputSchemaBytes are the schemas' sizes in
	// bytes of compact JSON (0: none declared).
	InputSchemaBytes, OutputSchemaBytes int
}

// ListTools connects to the MCP server opts.Server names, reads its
// tools/list page by page (following nextCursor) up to MaxTools tools and
// MaxToolPages pages, and closes the session (a stdio server gets its
// standard input closed, then SIGTERM after 2 s, then SIGKILL).
//
// A server that cannot be started or reached, exits, sends something that
// is not JSON-RPC, answers tools/list with an error, repeats a cursor or
// runs past the timeout is an error wrapping ErrUpstream, its URL and
// headers' values redacted; a cancelled ctx wraps context.Canceled too. A
// Server that is neither a command nor a URL (or both) is a
// *gate.ConfigError.
func ListTools(ctx context.Context, opts ToolsOptions) (*ToolList, error) {
	c := opts.Server
	switch {
	case (len(c.Command) == 0) == (c.URL == ""):
		return nil, &gate.ConfigError{File: "MCP server", Msg: "an MCP server is either a command (stdio) or a URL (streamable HTTP)"}
	case c.URL != "":
		if err := checkURL(c.URL); err != nil {
			return nil, &gate.ConfigError{File: "--url", Msg: err.Error()}
		}
	case c.Command[0] == "":
		return nil, &gate.ConfigError{File: "MCP server", Msg: "the command is empty"}
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultToolsTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	ctx, junk := context.WithCancelCause(ctx)
	defer junk(nil)
	rec := &recorder{opts: Options{Redactor: opts.Redactor, Timeout: opts.Timeout}, stderrTail: &mcpclient.Tail{Max: maxStderrTail},
		readFailed: func(err error) { junk(&junkError{err}) }}
	s, err := rec.connectMCP(ctx, &c)
	if s.session != nil {
		defer s.close()
	}
	fail := func(what string, err error) error {
		return toolsErr(ctx, opts.Timeout, s, c.Header, what, err)
	}
	if err != nil {
		return nil, fail("connecting", err)
	}
	list := &ToolList{Source: s.source}
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page == MaxToolPages {
			list.Truncated = true
			break
		}
		s.wire.Take("tools/list")
		res, err := s.session.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, fail(fmt.Sprintf("tools/list (page %d)", page+1), s.scrub(err))
		}
		tools := rawTools(s.wire.Take("tools/list"))
		if tools == nil {
			// Answered from the SDK's cache, or a page the raw decoding
			// cannot read: the SDK's decoded tools.
			tools = decodedTools(res.Tools)
		}
		for _, t := range tools {
			if len(list.Tools) == MaxTools {
				list.Truncated = true
				return list, nil
			}
			list.Tools = append(list.Tools, t)
		}
		if res.NextCursor == "" {
			break
		}
		if seen[res.NextCursor] {
			return nil, fail(fmt.Sprintf("tools/list (page %d)", page+1), errors.New("the server sent a cursor it had sent before (a loop)"))
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
	return list, nil
}

// rawTools reads the tools of the last raw tools/list result; nil when
// there is none or it does not decode.
func rawTools(pages []json.RawMessage) []ListedTool {
	if len(pages) == 0 {
		return nil
	}
	var page struct {
		Tools []struct {
			Name         string          `json:"name"`
			Title        string          `json:"title"`
			Description  string          `json:"description"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
			Annotations  *struct {
				Title string `json:"title"`
			} `json:"annotations"`
		} `json:"tools"`
	}
	if json.Unmarshal(pages[len(pages)-1], &page) != nil || page.Tools == nil {
		return nil
	}
	out := make([]ListedTool, 0, len(page.Tools))
	for _, t := range page.Tools {
		lt := ListedTool{Name: t.Name, Title: t.Title, Description: t.Description}
		if lt.Title == "" && t.Annotations != nil {
			lt.Title = t.Annotations.Title
		}
		lt.InputSchema, lt.InputSchemaBytes = boundedSchema(t.InputSchema)
		lt.OutputSchema, lt.OutputSchemaBytes = boundedSchema(t.OutputSchema)
		out = append(out, lt)
	}
	return out
}

func decodedTools(tools []*mcp.Tool) []ListedTool {
	out := make([]ListedTool, 0, len(tools))
	for _, t := range tools {
		lt := ListedTool{Name: t.Name, Title: t.Title, Description: t.Description}
		if lt.Title == "" && t.Annotations != nil {
			lt.Title = t.Annotations.Title
		}
		for _, s := range []struct {
			v     any
			raw   *json.RawMessage
			bytes *int
		}{{t.InputSchema, &lt.InputSchema, &lt.InputSchemaBytes}, {t.OutputSchema, &lt.OutputSchema, &lt.OutputSchemaBytes}} {
			if s.v == nil {
				continue
			}
			b, err := json.Marshal(s.v)
			if err == nil {
				*s.raw, *s.bytes = boundedSchema(b)
			}
		}
		out = append(out, lt)
	}
	return out
}

// boundedSchema returns raw compacted and its size; the schema is nil when
// raw is absent, null or longer than MaxSchemaBytes.
func boundedSchema(raw json.RawMessage) (json.RawMessage, int) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, 0
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return nil, 0
	}
	if buf.Len() > MaxSchemaBytes {
		return nil, buf.Len()
	}
	return buf.Bytes(), buf.Len()
}

// toolsErr is a listing's failure: what failed, why (timed out,
// interrupted, or err's text), the header values taken out, and the end of
// a stdio server's standard error.
func toolsErr(ctx context.Context, timeout time.Duration, s *mcpSession, header map[string][]string, what string, err error) error {
	where := s.source + ": " + what
	var je *junkError
	msg := err.Error()
	switch cause := context.Cause(ctx); {
	case errors.As(cause, &je):
		msg = "the server sent something that is not JSON-RPC (" + je.err.Error() + ")"
	case errors.Is(cause, context.Canceled):
		return fmt.Errorf("%w: %s: interrupted: %w", ErrUpstream, where, context.Canceled)
	case errors.Is(cause, context.DeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		msg = fmt.Sprintf("no answer within %s (--timeout)", timeout)
	}
	for _, vs := range header {
		for _, v := range vs {
			if v = strings.TrimSpace(v); v != "" {
				msg = strings.ReplaceAll(msg, v, "REDACTED")
			}
		}
	}
	msg = (&redact.Redactor{}).Text(msg)
	if s.stderr != nil && s.stderr.tail != nil {
		if tail := strings.TrimSpace(s.stderr.tail.String()); tail != "" {
			msg += "; the server's stderr ends: " + sanitize.Text((&redact.Redactor{}).Text(tail), maxStderrTail+16, sanitize.Escape)
		}
	}
	return fmt.Errorf("%w: %s: %s", ErrUpstream, where, msg)
}

// junkError is what ends a listing when the server's output does not
// decode as JSON-RPC.
type junkError struct{ err error }

func (e *junkError) Error() string { return "not JSON-RPC: " + e.err.Error() }
