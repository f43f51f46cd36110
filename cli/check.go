package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/manifest"
	"github.com/airlockdev/airlock/reports"
	"github.com/airlockdev/airlock/semantic"
)

func newCheckCmd(e *env) *cobra.Command {
	var (
		tool, version, schemasDir     string
		reqFlags                      requestFlags
		contentType, encoding, source string
		status                        int
		clock, auditFile              string
	)
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
			if tool == "" {
				return usageErr("--tool is required")
			}
			if !semantic.ValidName(tool) {
				return usageErr("--tool %q is not a tool name (^[a-z][a-z0-9_]{0,63}$)", tool)
			}
			req, err := reqFlags.request()
			if err != nil {
				return err
			}
			if req.ID == "" {
				return usageErr("a request id is required (--request-id or id: in --request FILE)")
			}
			now := time.Now()
			if clock != "" {
				t, err := semantic.ParseTimestamp(clock)
				if err != nil {
					return usageErr("--clock: %v", err)
				}
				now = t
			}

			c, err := gate.LoadDir(filepath.Join(schemasDir, tool), e.gate)
			if err != nil {
				var ce *gate.ConfigError
				if errors.As(err, &ce) && errors.Is(err, os.ErrNotExist) && ce.File == filepath.Join(schemasDir, tool, gate.ManifestFile) {
					return usageErr("no contract for tool %q: %s does not exist", tool, ce.File)
				}
				return err
			}

			var body io.Reader = cmd.InOrStdin()
			if len(args) == 1 && args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return usageErr("body: %v", err)
				}
				defer f.Close()
				body = f
				if source == "" {
					source = args[0]
				}
			}

			v, err := c.Check(cmd.Context(), gate.Response{
				Status:          status,
				ContentType:     contentType,
				ContentEncoding: encoding,
				Body:            body,
				Source:          source,
			}, gate.Call{UpstreamVersion: version, Request: req, Now: now})
			if err != nil {
				return usageErr("%v", err)
			}

			// The audit record is written first: when it cannot be, the
			// agent gets nothing (exit 3) rather than an unaudited answer.
			if err := writeAudit(cmd.ErrOrStderr(), auditFile, v.Audit.JSON()); err != nil {
				return internalErr(fmt.Errorf("audit record not written, agent output withheld: %w", err))
			}
			if _, err := cmd.OutOrStdout().Write(append(v.Output, '\n')); err != nil {
				return internalErr(err)
			}
			if !v.Admitted {
				return &exitError{code: ExitFindings, err: fmt.Errorf("refused: %s", v.Reason)}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&tool, "tool", "", "tool name; its contract is SCHEMAS/TOOL/contract.yaml (required)")
	f.StringVar(&version, "upstream-version", "", "upstream version to check against (default: the contract's current)")
	f.StringVar(&schemasDir, "schemas", "schemas", "directory holding one folder per tool contract")
	reqFlags.register(f, "the adapter's request id (overrides the request file's)")
	f.StringVar(&contentType, "content-type", "application/json", "the response's Content-Type")
	f.StringVar(&encoding, "content-encoding", "", "the response's Content-Encoding (\"\" or gzip)")
	f.IntVar(&status, "status", 200, "the response's HTTP status (0: none)")
	f.StringVar(&source, "source", "", "where the response came from, for the audit record (default: BODY_FILE)")
	f.StringVar(&clock, "clock", "", "RFC 3339 date-time to use as now (default: the system clock)")
	f.StringVar(&auditFile, "audit", "", "append the audit record to FILE (created 0600) instead of standard error")
	return cmd
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
		Use:   "schema contract|fixture-meta|results|diff|drift",
		Short: "Print a published JSON Schema of airlock's own formats",
		Long: `schema prints one of airlock's published JSON Schemas (also in schemas/):
  contract       schemas/<tool>/contract.yaml
  fixture-meta   fixture sidecars <name>.meta.yaml and defaults.meta.yaml
  results        airlock run --json output
  diff           airlock diff --format json output
  drift          airlock drift --json output`,
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
			default:
				return usageErr("unknown schema %q (have: contract, fixture-meta, results, diff, drift)", args[0])
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
