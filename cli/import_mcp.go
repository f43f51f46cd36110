package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/airlockdev/airlock/importer"
	"github.com/airlockdev/airlock/record"
	"github.com/airlockdev/airlock/semantic"
)

type importMCPFlags struct {
	tool, mcpTool, url, arguments, version string
	schemas, fixtures                      string
	headers, project                       []string
	timeout                                time.Duration
}

// newImportMCPCmd is airlock import mcp.
func newImportMCPCmd(e *env) *cobra.Command {
	o := &importMCPFlags{}
	cmd := &cobra.Command{
		Use:   "mcp --tool NAME --mcp-tool TOOL [flags] (--url URL | -- SERVER [ARG...])",
		Short: "Write a contract for one tool of an MCP server from its tools/list",
		Long: `import mcp connects to an MCP server, over stdio (the command after --) or streamable HTTP
(--url, with --header "Name: value" for its credentials), reads tools/list and writes the
contract schemas/NAME/ for the server's tool TOOL:

  a tool with an outputSchema   result: structured; the outputSchema converted to JSON
                                Schema 2020-12 (draft-07 from zod servers: definitions,
                                array items, dependencies, … rewritten; keywords and
                                formats the gate does not know dropped, each noted)
  a tool without one            result: text, from one call (--arguments is then
                                required) whose single text block holds JSON: a
                                permissive skeleton of that one value

With --arguments JSON the tool is called once and its result, as the server sent it with
secrets redacted, becomes a fixture: accepted (with its golden agent output) when the
gate admits it, near-miss with the gate's reason when it does not.

The projection is --project FIELD=/pointer (repeatable) or, by default, every top-level
scalar member; the objects on the projected paths are closed. The contract is proven
before anything is written: it must load and every example is judged. Each "review:"
line printed is a decision left to you. See docs/import.md.

Exit codes: 0 written (near-miss examples included), 2 usage error, bad input, a tool the
server does not offer, a result that cannot make a contract, or a contract or upstream
version that already exists (nothing written), 3 a server that cannot be started or
reached, or does not answer, or a folder that cannot be written.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runImportMCP(cmd, e, o, args)
		},
	}
	cmd.Flags().SetInterspersed(false)
	f := cmd.Flags()
	f.StringVar(&o.tool, "tool", "", "agent tool name: the contract folder schemas/NAME (required)")
	f.StringVar(&o.mcpTool, "mcp-tool", "", "the server's tool name, as tools/list spells it (required)")
	f.StringVar(&o.url, "url", "", "the MCP server's streamable HTTP endpoint (instead of a command)")
	f.StringArrayVarP(&o.headers, "header", "H", nil, `HTTP request header "Name: value" for --url, repeatable (never written)`)
	f.StringVar(&o.arguments, "arguments", "", "call the tool once with these JSON arguments and keep the result as a fixture")
	f.StringArrayVar(&o.project, "project", nil, "agent field FIELD=/json/pointer, repeatable (default: the top-level scalar members)")
	f.StringVar(&o.version, "upstream-version", "v1", "name of the upstream version to write or add")
	f.StringVar(&o.schemas, "schemas", "schemas", "directory holding one folder per tool contract")
	f.StringVar(&o.fixtures, "fixtures", "fixtures", "directory of fixture trees")
	f.DurationVar(&o.timeout, "timeout", 30*time.Second, "time limit for the exchange with the server (start, tools/list, the call)")
	return cmd
}

func runImportMCP(cmd *cobra.Command, e *env, o *importMCPFlags, args []string) error {
	if o.tool == "" || o.mcpTool == "" {
		return usageErr("--tool (the agent tool name) and --mcp-tool (the server's tool) are required")
	}
	if !semantic.ValidName(o.tool) {
		return usageErr("--tool %q: want ^[a-z][a-z0-9_]{0,63}$", o.tool)
	}
	if (o.url == "") == (len(args) == 0) {
		return usageErr("name the MCP server: --url URL (streamable HTTP) or a command after -- (stdio), not both")
	}
	if len(o.headers) > 0 && o.url == "" {
		return usageErr("--header goes with --url")
	}
	if o.timeout <= 0 {
		return usageErr("--timeout must be positive")
	}
	opts := importer.MCPOptions{Tool: o.tool, MCPTool: o.mcpTool, URL: o.url, Command: args, UpstreamVersion: o.version, Timeout: o.timeout}
	if o.arguments != "" {
		var m map[string]any
		if err := json.Unmarshal([]byte(o.arguments), &m); err != nil || m == nil {
			return usageErr("--arguments: want a JSON object")
		}
		opts.Arguments = json.RawMessage(o.arguments)
	}
	if len(o.headers) > 0 {
		opts.Header = http.Header{}
		for _, h := range o.headers {
			k, v, err := record.ParseHeader(h)
			if err != nil {
				return usageErr("--header: %v", err)
			}
			opts.Header.Add(k, v)
		}
	}
	fields, err := projectFlags(o.project)
	if err != nil {
		return err
	}
	opts.Project = fields
	d, err := importer.MCP(cmd.Context(), opts)
	if err != nil {
		if errors.Is(err, importer.ErrServer) {
			return internalErr(err)
		}
		return usage(err)
	}
	// Write works inside existing folders; a first import makes them (and
	// takes them away again, still empty, when nothing was written).
	made, err := makeRoots(o.schemas, o.fixtures)
	if err != nil {
		return internalErr(err)
	}
	w, err := importer.Write(cmd.Context(), d, importer.WriteOptions{SchemasDir: o.schemas, FixturesDir: o.fixtures, Gate: e.gate})
	if err != nil {
		for i := len(made) - 1; i >= 0; i-- {
			os.Remove(made[i]) // only when still empty
		}
		return importErr(err)
	}
	printWritten(cmd.OutOrStdout(), cmd.ErrOrStderr(), w)
	if w.Added {
		fmt.Fprintf(cmd.OutOrStdout(), "review: current is still %s; set current: %s in contract.yaml when the upstream moves to it\n", w.Previous, o.version)
	}
	if len(w.Fixtures) == 0 {
		fmt.Fprintf(cmd.OutOrStdout(), "review: no call was recorded; give --arguments to keep one as a fixture, or record calls with airlock record\n")
	}
	printNextSteps(cmd.Context(), cmd.OutOrStdout(), e, o.schemas, o.fixtures, o.tool)
	return nil
}

// makeRoots creates the folders that do not exist yet and returns them.
func makeRoots(dirs ...string) ([]string, error) {
	var made []string
	for _, d := range dirs {
		if _, err := os.Stat(d); err == nil {
			continue
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return made, err
		}
		made = append(made, d)
	}
	return made, nil
}
