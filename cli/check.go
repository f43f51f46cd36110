package cli

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/manifest"
	"github.com/airlockdev/airlock/mutate"
	"github.com/airlockdev/airlock/record"
	"github.com/airlockdev/airlock/reports"
	"github.com/airlockdev/airlock/semantic"
)

// checkOptions holds the flags of airlock check.
type checkOptions struct {
	tool, version, schemasDir     string
	reqFlags                      requestFlags
	contentType, encoding, source string
	status                        int
	clock, auditFile              string
	respHeaders                   []string
}

func newCheckCmd(e *env) *cobra.Command {
	o := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check --tool NAME --request-id ID [flags] [BODY_FILE | -]",
		Short: "Admit or refuse one upstream response",
		Long: `check runs one raw response through the gate.

The body is read from BODY_FILE, or from standard input when it is "-" or absent.
The agent output (success or failure envelope) goes to standard output; the audit
record goes to standard error, or is appended to --audit FILE (created 0600).

Exit codes: 0 admitted, 1 refused, 2 usage or configuration error, 3 internal error.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheck(cmd, e, o, args)
		},
	}
	o.register(cmd.Flags())
	return cmd
}

// register adds the check flags to f.
func (o *checkOptions) register(f *pflag.FlagSet) {
	f.StringVar(&o.tool, "tool", "", "tool name; its contract is SCHEMAS/TOOL/contract.yaml (required)")
	f.StringVar(&o.version, "upstream-version", "", "upstream version to check against (default: the contract's current)")
	f.StringVar(&o.schemasDir, "schemas", "schemas", "directory holding one folder per tool contract")
	o.reqFlags.register(f, "the adapter's request id (overrides the request file's)")
	f.StringVar(&o.contentType, "content-type", "application/json", "the response's Content-Type")
	f.StringVar(&o.encoding, "content-encoding", "", "the response's Content-Encoding (\"\" or gzip)")
	f.IntVar(&o.status, "status", 200, "the response's HTTP status (0: none)")
	f.StringArrayVar(&o.respHeaders, "response-header", nil, `response header "Name: value" the upstream sent, repeatable (a name given twice is two field lines); the gate reads Retry-After and the rate-limit headers (a Content-Type or Content-Encoding given here is used as --content-type or --content-encoding)`)
	f.StringVar(&o.source, "source", "", "where the response came from, for the audit record (default: BODY_FILE)")
	f.StringVar(&o.clock, "clock", "", "RFC 3339 date-time to use as now (default: the system clock)")
	f.StringVar(&o.auditFile, "audit", "", "append the audit record to FILE (created 0600) instead of standard error")
}

// runCheck is the body of airlock check: it validates the flags, runs the
// body through the tool's gate and writes the audit record and agent output.
func runCheck(cmd *cobra.Command, e *env, o *checkOptions, args []string) error {
	for _, f := range [][2]string{{"--audit", o.auditFile}, {"--request", o.reqFlags.file}} {
		if err := e.namedFile(f[0], f[1]); err != nil {
			return err
		}
	}
	call, err := o.call()
	if err != nil {
		return err
	}
	header, err := responseHeader(o.respHeaders)
	if err != nil {
		return err
	}
	// A Content-Type or Content-Encoding among the response headers (a
	// recorded sidecar's, say) is the one the gate judges, unless the flag
	// of its own says otherwise.
	for _, f := range []struct {
		name, flag string
		value      *string
	}{{"Content-Type", "content-type", &o.contentType}, {"Content-Encoding", "content-encoding", &o.encoding}} {
		v, has := header[f.name]
		if !has {
			continue
		}
		if len(v) != 1 {
			return usageErr("--response-header: %s given %d times; give it once", f.name, len(v))
		}
		if cmd.Flags().Changed(f.flag) && v[0] != *f.value {
			return usageErr("--response-header %q and --%s %q disagree; give one", f.name+": "+v[0], f.flag, *f.value)
		}
		*f.value = v[0]
	}
	c, err := gate.LoadDir(filepath.Join(o.schemasDir, o.tool), e.gate)
	if err != nil {
		var ce *gate.ConfigError
		if errors.As(err, &ce) && errors.Is(err, os.ErrNotExist) && ce.File == filepath.Join(o.schemasDir, o.tool, gate.ManifestFile) {
			return usageErr("no contract for tool %q: %s does not exist", o.tool, ce.File)
		}
		return err
	}

	if os.Getenv("GOMEMLIMIT") == "" {
		// The soft limit the contract's byte limit implies (gate.Limits.MemoryBound).
		debug.SetMemoryLimit(c.Limits().MemoryBound())
	}

	var body io.Reader = cmd.InOrStdin()
	if len(args) == 1 && args[0] != "-" {
		f, err := os.Open(args[0])
		if err != nil {
			return usageErr("body: %v", err)
		}
		defer f.Close()
		body = f
		if o.source == "" {
			o.source = args[0]
		}
	}

	v, err := c.Check(cmd.Context(), gate.Response{
		Status:          o.status,
		ContentType:     o.contentType,
		ContentEncoding: o.encoding,
		Header:          header,
		Body:            body,
		Source:          o.source,
	}, call)
	if err != nil {
		return usageErr("%v", err)
	}

	// The audit record is written first: when it cannot be, the
	// agent gets nothing (exit 3) rather than an unaudited answer.
	if err := writeAudit(cmd.ErrOrStderr(), o.auditFile, v.Audit.JSON()); err != nil {
		return internalErr(fmt.Errorf("audit record not written, agent output withheld: %w", err))
	}
	if _, err := cmd.OutOrStdout().Write(append(v.Output, '\n')); err != nil {
		return internalErr(err)
	}
	if !v.Admitted {
		return &exitError{code: ExitFindings, err: fmt.Errorf("refused: %s", v.Reason)}
	}
	return nil
}

// responseHeader parses the --response-header values ("Name: value",
// spaces around the value trimmed) into canonical names; nil when none.
func responseHeader(values []string) (http.Header, error) {
	if len(values) == 0 {
		return nil, nil
	}
	h := http.Header{}
	for _, s := range values {
		name, value, err := record.ParseHeader(s)
		if err != nil {
			return nil, usageErr("--response-header: %v", err)
		}
		if strings.ContainsAny(value, "\r\n\x00") {
			return nil, usageErr("--response-header %q: a field value holds no CR, LF or NUL (RFC 9110 §5.5)", s)
		}
		h.Add(name, value)
	}
	return h, nil
}

// call validates the tool, request and clock flags and returns the gate call.
func (o *checkOptions) call() (gate.Call, error) {
	if o.tool == "" {
		return gate.Call{}, usageErr("--tool is required")
	}
	if !semantic.ValidName(o.tool) {
		return gate.Call{}, usageErr("--tool %q is not a tool name (^[a-z][a-z0-9_]{0,63}$)", o.tool)
	}
	req, err := o.reqFlags.request()
	if err != nil {
		return gate.Call{}, err
	}
	if req.ID == "" {
		return gate.Call{}, usageErr("a request id is required (--request-id or id: in --request FILE)")
	}
	now := time.Now()
	if o.clock != "" {
		t, err := semantic.ParseTimestamp(o.clock)
		if err != nil {
			return gate.Call{}, usageErr("--clock: %v", err)
		}
		now = t
	}
	return gate.Call{UpstreamVersion: o.version, Request: req, Now: now}, nil
}

// writeAudit appends one audit line to file (0600, created if missing), or
// writes it to stderr when file is empty.
func writeAudit(stderr io.Writer, file string, record []byte) error {
	line := append(record, '\n')
	if file == "" {
		_, err := stderr.Write(line)
		return err
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(line); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func newSchemaCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "schema contract|fixture-meta|results|diff|drift|lint|mutate-baseline",
		Short: "Print a published JSON Schema of airlock's own formats",
		Long: `schema prints one of airlock's published JSON Schemas (also in schemas/):
  contract       schemas/<tool>/contract.yaml
  fixture-meta   fixture sidecars <name>.meta.yaml and defaults.meta.yaml
  results        airlock run --json output
  diff           airlock diff --format json output
  drift          airlock drift --json output
  lint           airlock lint --format json output
  mutate-baseline  schemas/<tool>/mutate.baseline.yaml (docs/mutate.md)`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var doc []byte
			switch args[0] {
			case "contract":
				doc = manifest.SchemaJSON()
			case "fixture-meta":
				doc = fixture.MetaSchema()
			case "results":
				doc = reports.ResultsSchema()
			case "diff":
				doc = reports.DiffSchema()
			case "drift":
				doc = reports.DriftSchema()
			case "lint":
				doc = reports.LintSchema()
			case "mutate-baseline":
				doc = mutate.BaselineSchema()
			default:
				return usageErr("unknown schema %q (have: contract, fixture-meta, results, diff, drift, lint, mutate-baseline)", args[0])
			}
			_, err := cmd.OutOrStdout().Write(doc)
			return err
		},
	}
}

func newReasonsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "reasons",
		Short: "List every reason code with its stage, error code and retry policy",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			for _, r := range gate.Reasons() {
				fmt.Fprintf(w, "%-26s %-10s %-20s retryable=%-5t %s\n", r.Code, r.Stage, r.ErrorCode, r.Retryable, r.Description)
			}
			return nil
		},
	}
}
