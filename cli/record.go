package cli

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/fileio"
	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/record"
	"github.com/airlockdev/airlock/redact"
	"github.com/airlockdev/airlock/reports"
)

// recordFlags holds the flags of airlock record.
type recordFlags struct {
	opts                    record.Options
	name, requestsFile      string
	reqFlags                requestFlags
	url, method, data       string
	dataFile, stdinFile     string
	headers                 []string
	followRedirects, gz     bool
	isMCP                   bool
	mcpTool, arguments      string
	contentType             string
	redactNames, redactPtrs []string
	redactHeaders           []string
	noRedact                bool
}

func newRecordCmd(e *env) *cobra.Command {
	o := &recordFlags{}
	cmd := &cobra.Command{
		Use:   "record --tool NAME [flags] (--url URL | [--mcp --mcp-tool T] [--] COMMAND [ARG...])",
		Short: "Record live upstream responses as fixtures, with the gate's verdict",
		Long: `record calls a live upstream and writes each response to
FIXTURES/<tool>/<upstream-version>/recorded/<name>.<ext>, byte for byte, beside a sidecar
<name>.meta.yaml with status, content type, request, clock and a recorded: block (source,
time, duration, size, SHA-256, airlock version, the gate's verdict, what was redacted).
The verdict is printed too.

Sources:
  --url URL                      an HTTP request (--method, --header, --data, --gzip, --follow-redirects)
  COMMAND [ARG...]               a command; its standard output is the body (--stdin FILE)
  --mcp-tool T COMMAND [ARG...]  a tools/call on an MCP server over stdio
  --mcp-tool T --url URL         a tools/call on an MCP server over streamable HTTP
  --requests FILE                several calls, a YAML list (see docs/record.md); an entry with
                                 mcp_tool is a tools/call on its own server (mcp_server: [argv], or
                                 url) or the command line's (the command, or --url); no --mcp needed
  (airlock tools lists an MCP server's tools and their schemas)

Secrets never reach disk: secret headers (Authorization, Cookie, Set-Cookie, X-Api-Key,
*-Token, ...), URL credentials, secret query parameters and command arguments are
redacted in the sidecar, and body values under secret-looking names (--redact-names) or at
--redact-pointer locations are replaced by a placeholder of the same type. --no-redact
turns all of it off.

Nothing is overwritten and nothing is half-written: an existing fixture name is refused
before any call, files appear whole or not at all, and a call that fails or times out
records nothing.

Exit codes: 0 recorded and admitted (or no contract yet), 1 recorded but refused by the
gate, 2 usage or configuration error or a fixture name already taken, 3 upstream error
(unreachable, timed out, cut short, too large) or a folder that cannot be written.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.opts.Gate = e.gate
			return runRecord(cmd, e, o, args)
		},
	}
	cmd.Flags().SetInterspersed(false)
	o.register(cmd.Flags())
	return cmd
}

// register adds the record flags to f.
func (o *recordFlags) register(f *pflag.FlagSet) {
	f.StringVar(&o.opts.Tool, "tool", "", "airlock tool name: the fixture folder and the contract that judges the response (required)")
	f.StringVar(&o.opts.UpstreamVersion, "upstream-version", "", "upstream version folder (default: the contract's current; required without a contract)")
	f.StringVar(&o.opts.SchemasDir, "schemas", "schemas", "directory holding one folder per tool contract")
	f.StringVar(&o.opts.FixturesDir, "fixtures", "fixtures", "directory holding the fixture trees")
	f.StringVar(&o.name, "name", "", "fixture name (default: the UTC time, 20250601T120000Z)")
	f.StringVar(&o.requestsFile, "requests", "", "record several calls from a YAML list (docs/record.md)")
	o.reqFlags.register(f, "the adapter's request id the gate judges against (default: rec-<name>)")
	f.StringVar(&o.url, "url", "", "HTTP URL, or the MCP server's streamable HTTP endpoint with --mcp")
	f.StringVarP(&o.method, "method", "X", "GET", "HTTP method")
	f.StringArrayVarP(&o.headers, "header", "H", nil, `HTTP request header "Name: value", repeatable`)
	f.StringVar(&o.data, "data", "", "HTTP request body")
	f.StringVar(&o.dataFile, "data-file", "", "HTTP request body from FILE")
	f.BoolVar(&o.followRedirects, "follow-redirects", false, "follow 3xx redirects (default: record the redirect itself)")
	f.BoolVar(&o.gz, "gzip", false, "send Accept-Encoding: gzip; a gzip body is stored compressed with content_encoding: gzip")
	f.BoolVar(&o.isMCP, "mcp", false, "the upstream is an MCP server: the command after -- (stdio) or --url (streamable HTTP); implied by --mcp-tool and by a requests entry's mcp_tool")
	f.StringVar(&o.mcpTool, "mcp-tool", "", "MCP tool to call with tools/call (implies --mcp)")
	f.StringVar(&o.arguments, "arguments", "", "MCP tool arguments, a JSON object")
	f.StringVar(&o.stdinFile, "stdin", "", "feed FILE to the command's standard input")
	f.StringVar(&o.contentType, "content-type", "application/json", "content type recorded for a command's output")
	f.DurationVar(&o.opts.Timeout, "timeout", record.DefaultTimeout, "time limit per call; a call past it records nothing")
	f.Int64Var(&o.opts.MaxBytes, "max-bytes", record.DefaultMaxBytes, "largest body to record; a longer one records nothing")
	f.StringSliceVar(&o.redactNames, "redact-names", redact.DefaultSecretNames, "words that make a member, header, parameter or flag name secret (replaces the list)")
	f.StringArrayVar(&o.redactPtrs, "redact-pointer", nil, `JSON Pointer of a body value to redact whatever its name ("*" matches any token), repeatable`)
	f.StringArrayVar(&o.redactHeaders, "redact-header", nil, "another header name to redact, repeatable")
	f.BoolVar(&o.noRedact, "no-redact", false, "write secrets as received (loudly): no redaction of headers, URLs, arguments or bodies")
}

// runRecord is the body of airlock record: it builds the calls and the
// redaction options from the flags, records and reports the results.
func runRecord(cmd *cobra.Command, e *env, o *recordFlags, args []string) error {
	opts := &o.opts
	if opts.Tool == "" {
		return usageErr("--tool is required")
	}
	for _, f := range [][2]string{{"--request", o.reqFlags.file}, {"--requests", o.requestsFile}, {"--stdin", o.stdinFile}, {"--data-file", o.dataFile}} {
		if err := e.namedFile(f[0], f[1]); err != nil {
			return err
		}
	}
	calls, err := o.calls(args)
	if err != nil {
		return err
	}
	opts.Calls = calls
	if err := o.redaction(cmd.Flags().Changed("redact-names")); err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	if o.noRedact {
		fmt.Fprintln(stderr, "airlock: WARNING: redaction is off (--no-redact): headers, URLs, arguments and bodies are written to disk as received, secrets included")
	}
	prog := newProgress(stderr, "calls")
	opts.Progress = prog.update
	results, err := record.Record(cmd.Context(), *opts)
	prog.finish()
	if err != nil {
		return recordErr(err)
	}
	return reportRecorded(cmd.OutOrStdout(), stderr, results)
}

// calls returns the calls to record: those of the requests file, or the
// single call the flags and args describe.
func (o *recordFlags) calls(args []string) ([]record.Call, error) {
	base, err := o.baseCall(args)
	if err != nil {
		return nil, err
	}
	if o.stdinFile != "" {
		if base.Command == nil && (o.requestsFile == "" || base.HTTP != nil || base.MCP != nil) {
			return nil, usageErr("--stdin goes with a command")
		}
		b, err := fileio.ReadRegularFile(o.stdinFile, record.DefaultMaxBytes)
		if err != nil {
			return nil, usageErr("--stdin: %v", err)
		}
		if base.Command == nil {
			base.Command = &record.CommandCall{ContentType: o.contentType}
		}
		base.Command.Stdin = b
	}
	if o.requestsFile != "" {
		if o.name != "" {
			return nil, usageErr("--name names a single call; a requests file names each of its calls")
		}
		return record.LoadCalls(o.requestsFile, base)
	}
	if base.HTTP == nil && base.Command == nil && base.MCP == nil {
		return nil, usageErr("nothing to record: give --url URL, a command, or --requests FILE")
	}
	if base.MCP != nil && base.MCP.Tool == "" {
		return nil, usageErr("--mcp needs --mcp-tool NAME (or a requests file with mcp_tool)")
	}
	return []record.Call{base}, nil
}

// baseCall returns the call the source flags (--url, --mcp, a command)
// describe, before --stdin and the requests file.
func (o *recordFlags) baseCall(args []string) (record.Call, error) {
	req, err := o.reqFlags.request()
	if err != nil {
		return record.Call{}, err
	}
	base := record.Call{Name: o.name, Request: req}
	header := http.Header{}
	for _, h := range o.headers {
		k, v, err := record.ParseHeader(h)
		if err != nil {
			return record.Call{}, usageErr("--header: %v", err)
		}
		header.Add(k, v)
	}
	if o.mcpTool != "" {
		o.isMCP = true
	}
	switch {
	case o.isMCP:
		if (o.url == "") == (len(args) == 0) {
			return record.Call{}, usageErr("an MCP server is either --url URL (streamable HTTP) or a command after -- (stdio)")
		}
		base.MCP = &record.MCPCall{URL: o.url, Command: args, Header: header, Tool: o.mcpTool}
		if o.arguments != "" {
			base.MCP.Arguments = []byte(o.arguments)
		}
	case o.url != "" && len(args) > 0:
		return record.Call{}, usageErr("give either --url or a command, not both")
	case o.url != "":
		base.HTTP = &record.HTTPCall{Method: o.method, URL: o.url, Header: header, FollowRedirects: o.followRedirects, Gzip: o.gz}
		if o.data != "" && o.dataFile != "" {
			return record.Call{}, usageErr("give --data or --data-file, not both")
		}
		if o.data != "" {
			base.HTTP.Body = []byte(o.data)
		}
		if o.dataFile != "" {
			b, err := fileio.ReadRegularFile(o.dataFile, record.DefaultMaxBytes)
			if err != nil {
				return record.Call{}, usageErr("--data-file: %v", err)
			}
			base.HTTP.Body = b
		}
	case len(args) > 0:
		base.Command = &record.CommandCall{Argv: args, ContentType: o.contentType}
	}
	return base, nil
}

// redaction sets the redaction options from the flags; namesChanged tells
// whether --redact-names was given.
func (o *recordFlags) redaction(namesChanged bool) error {
	o.opts.NoRedact = o.noRedact
	if namesChanged {
		o.opts.Redactor.Names = o.redactNames
	}
	for _, p := range o.redactPtrs {
		ptr, err := jsonpointer.Parse(p)
		if err != nil {
			return usageErr("--redact-pointer: %v", err)
		}
		o.opts.Redactor.Pointers = append(o.opts.Redactor.Pointers, ptr)
	}
	o.opts.Redactor.Headers = o.redactHeaders
	return nil
}

// recordErr maps Record's errors to exit codes.
func recordErr(err error) error {
	var ce *gate.ConfigError
	switch {
	case errors.Is(err, fileio.ErrExists), errors.As(err, &ce):
		return &exitError{code: ExitUsage, err: err}
	default:
		return internalErr(err)
	}
}

// reportRecorded prints one line per call and returns the exit status:
// the worst of 3 (a call failed upstream or could not be written), 2 (a
// name was taken), 1 (a response was refused).
func reportRecorded(out, stderr io.Writer, results []record.Result) error {
	code, refused, failed := ExitOK, 0, 0
	for _, r := range results {
		if r.Err != nil {
			failed++
			fmt.Fprintf(stderr, "airlock: %s: %s\n", r.Name, reports.Line(r.Err.Error()))
			c := ExitInternal
			var ce *gate.ConfigError
			if errors.Is(r.Err, fileio.ErrExists) || errors.As(r.Err, &ce) {
				c = ExitUsage
			}
			code = max(code, c)
			continue
		}
		verdict := "unchecked (no contract yet)"
		if v := r.Verdict; v != nil {
			if v.Admitted {
				verdict = "admitted"
			} else {
				refused++
				verdict = "refused " + v.Reason
				if v.Audit.InstanceLocation != "" {
					verdict += " at " + v.Audit.InstanceLocation
				}
				code = max(code, ExitFindings)
			}
		}
		fmt.Fprintf(out, "recorded %s (%d bytes, %d ms): %s\n", reports.Line(r.Body), r.Provenance.Size, r.Provenance.DurationMS, reports.Line(verdict))
		if r.OutputSchema != "" {
			fmt.Fprintf(out, "  output schema: %s\n", reports.Line(r.OutputSchema))
		}
		if len(r.Provenance.Redacted) > 0 {
			parts := make([]string, len(r.Provenance.Redacted))
			for i, red := range r.Provenance.Redacted {
				parts[i] = red.String()
			}
			fmt.Fprintf(out, "  redacted: %s\n", reports.Line(strings.Join(parts, ", ")))
		}
		for _, w := range r.Warnings {
			fmt.Fprintf(out, "  note: %s\n", reports.Line(w))
		}
	}
	if code == ExitOK {
		return nil
	}
	return &exitError{code: code, err: fmt.Errorf("%d recorded, %d refused, %d failed", len(results)-failed, refused, failed)}
}
