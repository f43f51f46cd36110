package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/fileio"
	"github.com/airlockdev/airlock/reports"
)

func newPromoteCmd(e *env) *cobra.Command {
	var opts fixture.PromoteOptions
	cmd := &cobra.Command{
		Use:   "promote FIXTURE --to accepted|near-miss|error|historical",
		Short: "Move a recorded fixture into accepted/, near-miss/, error/ or historical/",
		Long: `promote moves a fixture (usually one airlock record wrote) to another kind folder of the
same tool and upstream version: body, sidecar, output schema and golden together, all or
nothing, never overwriting. FIXTURE is the body file or its .meta.yaml.

The gate judges the fixture first. The new sidecar spells out every value the fixture
inherited and keeps its recorded: block; its expectation is
  accepted     admitted (a refused fixture is not moved)
  near-miss    refused for the reason the gate gives now (an admitted one is not moved)
  error        refused as the declared upstream error it matches now, upstream.<name>
               (anything else is not moved)
  historical   what the gate does now: admitted, or refused for its reason

An accepted fixture needs a golden: write it with airlock run --update.

Exit codes: 0 moved, 1 not moved because the verdict does not fit the destination,
2 usage or configuration error or the name is taken in the destination, 3 a folder that
cannot be written.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.To == "" {
				return usageErr("--to is required: accepted, near-miss, error or historical")
			}
			opts.Fixture = args[0]
			opts.Gate = e.gate
			p, err := fixture.Promote(cmd.Context(), opts)
			if err != nil {
				var ce *gate.ConfigError
				switch {
				case errors.Is(err, fixture.ErrWrongVerdict):
					fmt.Fprintln(cmd.ErrOrStderr(), "airlock:", reports.Line(err.Error()))
					return &exitError{code: ExitFindings, err: err}
				case errors.Is(err, fileio.ErrExists), errors.As(err, &ce):
					return &exitError{code: ExitUsage, err: err}
				default:
					return internalErr(err)
				}
			}
			out := cmd.OutOrStdout()
			for _, m := range p.Moved {
				fmt.Fprintf(out, "moved %s -> %s\n", reports.Line(m[0]), reports.Line(m[1]))
			}
			if p.Expect != nil {
				fmt.Fprintf(out, "expect: refused %s\n", reports.Line(p.Expect.Reason))
			} else {
				fmt.Fprintln(out, "expect: admitted")
				if opts.To == fixture.KindAccepted {
					fmt.Fprintln(out, "write its golden agent output with: airlock run --update")
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.To, "to", "", "destination kind: accepted, near-miss, error or historical (required)")
	f.StringVar(&opts.SchemasDir, "schemas", "schemas", "directory holding one folder per tool contract")
	return cmd
}
