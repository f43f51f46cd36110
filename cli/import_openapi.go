package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/airlockdev/airlock/importer"
	"github.com/airlockdev/airlock/reports"
	"github.com/airlockdev/airlock/schemadiff"
	"github.com/airlockdev/airlock/semantic"
)

func newImportOpenAPICmd(e *env) *cobra.Command {
	var (
		o                       importer.OpenAPIOptions
		project                 []string
		closed, open            bool
		schemasDir, fixturesDir string
	)
	cmd := &cobra.Command{
		Use:   `openapi SPEC --operation <operationId | "METHOD /path"> --tool NAME`,
		Short: "Write a contract for one operation's response from an OpenAPI description",
		Long: `openapi writes a contract for one operation's response from an OpenAPI description
(3.0, 3.1, or Swagger 2.0; JSON or YAML): the response schema converted to JSON Schema
2020-12, its components written once under <schemas>/_components/<api>/<version>/ and
referenced from the contract, a projection (--project, or every top-level scalar member),
the closed agent-facing schema derived from the projected fields, a format policy for
vendor schemas, and every example of the response as a fixture: accepted when the gate
admits it, near-miss (with the gate's reason, and a warning) when the vendor's example
fails its own schema.

Objects: by default those on the way to each projected field are closed (a member the
contract does not name is refused there) and the rest stay as the vendor wrote them, so a
member the vendor adds to an object the agent never sees is admitted; --closed closes
every object, --open none.

Run it again with a newer description (and another --upstream-version, by default the
description's info.version) to add that version beside the first; the schema changes
between the two are printed as airlock diff prints them.

Nothing is overwritten: an existing contract is an error unless a new upstream version
is being added; a file already there with the same bytes is left alone.

Exit codes: 0 written (examples that became near-misses are warnings), 2 usage, an
unreadable description, an unknown operation (the closest are listed), a response
without a JSON schema, or a contract or file that exists, 3 a folder that cannot be
written. See docs/import.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Operation == "" {
				return usageErr("--operation is required: an operationId or \"METHOD /path\"")
			}
			if o.Tool == "" {
				return usageErr("--tool is required: the contract's tool name")
			}
			if closed && open {
				return usageErr("--closed and --open exclude each other")
			}
			switch {
			case closed:
				o.Closing = importer.CloseAll
			case open:
				o.Closing = importer.CloseNone
			}
			fields, err := projectFlags(project)
			if err != nil {
				return err
			}
			o.Project = fields
			o.Spec = args[0]
			d, err := importer.ImportOpenAPI(cmd.Context(), o)
			if err != nil {
				return importErr(err)
			}
			w, err := importer.Write(cmd.Context(), d, importer.WriteOptions{SchemasDir: schemasDir, FixturesDir: fixturesDir, Gate: e.gate})
			if err != nil {
				return importErr(err)
			}
			printWritten(cmd.OutOrStdout(), cmd.ErrOrStderr(), w)
			printNextSteps(cmd.Context(), cmd.OutOrStdout(), e, schemasDir, fixturesDir, o.Tool)
			if w.Added {
				printVersionDiff(cmd, e, schemasDir, o.Tool, w.Previous, d.Version.Name)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Operation, "operation", "", `operationId, or "METHOD /path" as the description spells the path (required)`)
	f.StringVar(&o.Status, "status", "", "the response's status code (200, 2XX, default); default 200, else the first 2XX")
	f.StringVar(&o.Tool, "tool", "", "tool name of the contract (required)")
	f.StringVar(&o.UpstreamVersion, "upstream-version", "", "upstream version name (default: the description's info.version, else v1)")
	f.StringVar(&o.API, "api", "", "folder of the shared components, _components/<api>/ (default: info.title, lower case)")
	f.StringArrayVar(&project, "project", nil, "agent field and the JSON Pointer it copies, FIELD=/pointer (repeatable; default: every top-level scalar member)")
	f.BoolVar(&closed, "closed", false, "close every object schema, the shared components too (written to <version>.closed/)")
	f.BoolVar(&open, "open", false, "close no object, not even on the projected path")
	f.StringVar(&schemasDir, "schemas", "schemas", "directory holding one folder per tool contract")
	f.StringVar(&fixturesDir, "fixtures", "fixtures", "fixture tree root")
	return cmd
}

// projectFlags reads --project FIELD=/pointer entries (import openapi,
// import mcp, infer); nil when none.
func projectFlags(entries []string) ([]importer.Field, error) {
	var out []importer.Field
	seen := map[string]bool{}
	for _, p := range entries {
		name, ptr, ok := strings.Cut(p, "=")
		if !ok || !semantic.ValidName(name) {
			return nil, usageErr("--project %q: want FIELD=/pointer, FIELD matching ^[a-z][a-z0-9_]{0,63}$", p)
		}
		if seen[name] {
			return nil, usageErr("--project: field %q given twice", name)
		}
		seen[name] = true
		if ptr != "" && !strings.HasPrefix(ptr, "/") {
			return nil, usageErr("--project %q: the pointer must be empty or start with \"/\" (RFC 6901)", p)
		}
		out = append(out, importer.Field{Name: name, Pointer: ptr})
	}
	return out, nil
}

// printVersionDiff prints the schema changes from the version that was
// current to the one just added, as airlock diff --tool prints them. The
// import succeeded either way: breaking changes are the owner's to read.
func printVersionDiff(cmd *cobra.Command, e *env, schemasDir, tool, old, neu string) {
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "\nairlock diff --tool %s %s %s\n", tool, reports.Line(old), reports.Line(neu))
	d, err := schemadiff.UpstreamVersions(schemasDir, tool, old, neu, e.gate)
	if err == nil {
		err = reports.WriteDiffText(out, d)
	}
	if err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "airlock: the diff could not be computed: %s\n", reports.Line(err.Error()))
	}
}
