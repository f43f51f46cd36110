package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/airlockdev/airlock/internal/sanitize"
	"github.com/airlockdev/airlock/record"
	"github.com/airlockdev/airlock/reports"
)

// Text widths of airlock tools' listing.
const (
	// toolsNameWidth is the widest name column; longer names push their
	// line's description right.
	toolsNameWidth = 40
	// toolsTextBytes bounds a tool's name and its title and description
	// on a listing line.
	toolsNameBytes = 256
	toolsTextBytes = 240
)

type toolsFlags struct {
	url, format, tool string
	headers           []string
	opts              record.ToolsOptions
}

func newToolsCmd(e *env) *cobra.Command {
	o := &toolsFlags{}
	cmd := &cobra.Command{
		Use:   "tools [flags] (--url URL | [--] SERVER [ARG...])",
		Short: "List an MCP server's tools and their input and output schemas",
		Long: `tools connects to an MCP server, over stdio (the command after --) or streamable HTTP
(--url, with --header "Name: value" for its credentials), reads tools/list page by page and
prints each tool: its name, whether it declares an outputSchema, and its title and
description on one line (control characters and terminal escapes escaped).

  --format json   the name, title, description, inputSchema and outputSchema of every
                  tool (schemas/tools.schema.json; airlock schema tools)
  --tool NAME     that tool's inputSchema and outputSchema only

Bounded: --timeout (default 30s) for the whole listing, at most 1000 tools (and 100
pages), and schemas of at most 256 KiB each (a longer one is left out, its size given).
Secrets in the URL, command line and headers are redacted in all output and errors.

Exit codes: 0 listed, 2 usage error or a --tool the server does not offer, 3 a server
that cannot be started or reached, exits, sends junk, answers with an error or times out.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTools(cmd, o, args)
		},
	}
	cmd.Flags().SetInterspersed(false)
	f := cmd.Flags()
	f.StringVar(&o.url, "url", "", "the MCP server's streamable HTTP endpoint (instead of a command)")
	f.StringArrayVarP(&o.headers, "header", "H", nil, `HTTP request header "Name: value" for --url, repeatable (never printed)`)
	f.StringVar(&o.format, "format", "text", "output format: text or json")
	f.StringVar(&o.tool, "tool", "", "print only this tool's inputSchema and outputSchema")
	f.DurationVar(&o.opts.Timeout, "timeout", record.DefaultToolsTimeout, "time limit for the whole listing (start, initialise, every page)")
	return cmd
}

func runTools(cmd *cobra.Command, o *toolsFlags, args []string) error {
	if o.format != "text" && o.format != "json" {
		return usageErr("--format %q: want text or json", o.format)
	}
	if (o.url == "") == (len(args) == 0) {
		return usageErr("name the MCP server: --url URL (streamable HTTP) or a command after -- (stdio), not both")
	}
	if len(o.headers) > 0 && o.url == "" {
		return usageErr("--header goes with --url")
	}
	if o.opts.Timeout <= 0 {
		return usageErr("--timeout must be positive")
	}
	header := http.Header{}
	for _, h := range o.headers {
		k, v, err := record.ParseHeader(h)
		if err != nil {
			return usageErr("--header: %v", err)
		}
		header.Add(k, v)
	}
	o.opts.Server = record.MCPCall{URL: o.url, Command: args, Header: header}
	list, err := record.ListTools(cmd.Context(), o.opts)
	if err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	if list.Truncated {
		fmt.Fprintf(stderr, "airlock: note: the server offers more than %d tools (or %d pages); the first %d are listed\n", record.MaxTools, record.MaxToolPages, len(list.Tools))
	}
	tools := list.Tools
	if o.tool != "" {
		var names []string
		tools = nil
		for _, t := range list.Tools {
			if t.Name == o.tool {
				tools = append(tools, t)
				break
			}
			names = append(names, t.Name)
		}
		if tools == nil {
			return usageErr("--tool: the MCP server does not offer tool %q (tools/list: %s)", o.tool, sanitize.Text(strings.Join(names, ", "), 512, sanitize.Escape))
		}
	}
	out := cmd.OutOrStdout()
	switch {
	case o.format == "json":
		doc := &reports.Tools{Server: list.Source, Truncated: list.Truncated}
		for _, t := range tools {
			doc.Tools = append(doc.Tools, reportTool(t))
		}
		return reports.WriteToolsJSON(out, doc)
	case o.tool != "":
		return printToolSchemas(out, tools[0])
	default:
		return printTools(out, list.Source, tools)
	}
}

func reportTool(t record.ListedTool) reports.Tool {
	rt := reports.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema}
	if t.InputSchema == nil && t.InputSchemaBytes > 0 {
		rt.Omitted = map[string]int{"inputSchema": t.InputSchemaBytes}
	}
	if t.OutputSchema == nil && t.OutputSchemaBytes > 0 {
		if rt.Omitted == nil {
			rt.Omitted = map[string]int{}
		}
		rt.Omitted["outputSchema"] = t.OutputSchemaBytes
	}
	return rt
}

// oneLine makes an upstream text one safe line: runs of white space
// (line breaks included) become one space, then sanitize.Escape escapes
// what is left (control characters, ANSI escapes, bidi controls) and cuts
// it to max bytes.
func oneLine(s string, max int) string {
	return sanitize.Text(strings.Join(strings.Fields(s), " "), max, sanitize.Escape)
}

// printTools prints the listing: a headline, then one line per tool with
// its name, whether it declares an outputSchema, and its title and
// description.
func printTools(w io.Writer, source string, tools []record.ListedTool) error {
	withOutput := 0
	width := len("TOOL")
	names := make([]string, len(tools))
	for i, t := range tools {
		if t.OutputSchemaBytes > 0 {
			withOutput++
		}
		names[i] = oneLine(t.Name, toolsNameBytes)
		if n := utf8.RuneCountInString(names[i]); n > width && n <= toolsNameWidth {
			width = n
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s: %d tools, %d with an outputSchema\n", oneLine(source, 4096), len(tools), withOutput)
	if len(tools) > 0 {
		fmt.Fprintf(&b, "%-*s  %-13s  %s\n", width, "TOOL", "OUTPUT SCHEMA", "DESCRIPTION")
	}
	for i, t := range tools {
		out := "no"
		if t.OutputSchemaBytes > 0 {
			out = "yes"
		}
		text := t.Description
		if t.Title != "" && t.Title != t.Name {
			text = t.Title + ": " + text
		}
		pad := max(width-utf8.RuneCountInString(names[i]), 0)
		fmt.Fprintf(&b, "%s%s  %-13s  %s\n", names[i], strings.Repeat(" ", pad), out, oneLine(text, toolsTextBytes))
	}
	_, err := w.Write(b.Bytes())
	return err
}

// printToolSchemas prints one tool's inputSchema and outputSchema,
// indented, each line escaped like a listing line.
func printToolSchemas(w io.Writer, t record.ListedTool) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "tool: %s\n", oneLine(t.Name, toolsNameBytes))
	for _, s := range []struct {
		name   string
		schema json.RawMessage
		size   int
	}{{"inputSchema", t.InputSchema, t.InputSchemaBytes}, {"outputSchema", t.OutputSchema, t.OutputSchemaBytes}} {
		switch {
		case s.size == 0:
			fmt.Fprintf(&b, "%s: none\n", s.name)
		case s.schema == nil:
			fmt.Fprintf(&b, "%s: left out, %d bytes (over the %d-byte limit)\n", s.name, s.size, record.MaxSchemaBytes)
		default:
			fmt.Fprintf(&b, "%s:\n", s.name)
			var ind bytes.Buffer
			if json.Indent(&ind, s.schema, "", "  ") != nil {
				ind.Reset()
				ind.Write(s.schema)
			}
			for _, line := range strings.Split(ind.String(), "\n") {
				b.WriteString(sanitize.Text(line, record.MaxSchemaBytes, sanitize.Escape))
				b.WriteByte('\n')
			}
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// withToolsSchema adds "tools" (airlock tools --format json) to the schema
// command's published schemas, leaving the others to it.
func withToolsSchema(schema *cobra.Command) *cobra.Command {
	inner := schema.RunE
	schema.Use += "|tools"
	schema.Long += "\n  tools          airlock tools --format json output"
	schema.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 1 && args[0] == "tools" {
			_, err := cmd.OutOrStdout().Write(reports.ToolsSchema())
			return err
		}
		err := inner(cmd, args)
		if exitCode(err) == ExitUsage && strings.Contains(err.Error(), "unknown schema") {
			return usageErr("%v; or tools", err)
		}
		return err
	}
	return schema
}
