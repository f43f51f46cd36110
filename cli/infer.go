package cli

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/importer"
	"github.com/airlockdev/airlock/reports"
	"github.com/airlockdev/airlock/semantic"
)

// inferTopMembers is how many members the version's comment lists by name;
// the rest are counted.
const inferTopMembers = 24

// inferNotesPerKind bounds the notes of one kind (enums, ranges, …) that
// infer prints; the rest are counted.
const inferNotesPerKind = 8

func newInferCmd(e *env) *cobra.Command {
	var (
		tool, version, schemasDir, fixturesDir string
		project                                []string
	)
	cmd := &cobra.Command{
		Use:   "infer --tool NAME FOLDER|FILE…",
		Short: "Write a closed schema inferred from recorded (or accepted) responses as a new upstream version",
		Long: `infer reads fixture bodies (a folder such as fixtures/NAME/V/recorded/, or files; sidecars,
goldens and MCP output schemas are skipped) and writes the closed JSON Schema they imply as
a new upstream version of the tool's contract (a new contract when there is none):

  airlock infer --tool weather fixtures/weather/v1/recorded/

Types per location, members present in every sample required, objects closed, string enums
for few values seen often, lengths and numeric ranges widened by a fixed margin, formats only
when every value matches. The schema is never narrower than a sample: after writing, every
sample is checked against the new version, and a sample it refuses is an internal error
(exit 3). The samples stay where they are (they are fixtures already). See docs/infer.md.

Exit codes: 0 written, 2 usage or configuration error (a sample that is not strict JSON, a
version that exists), 3 a folder that cannot be written, or a sample the inferred version
refuses (a bug).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if tool == "" {
				return usageErr("--tool is required")
			}
			if !semantic.ValidName(tool) {
				return usageErr("--tool %q: want ^[a-z][a-z0-9_]{0,63}$", tool)
			}
			if len(args) == 0 {
				return usageErr("give the fixture bodies to infer from: a folder (fixtures/%s/<version>/recorded/) or files", tool)
			}
			return runInfer(cmd, e, inferArgs{tool, version, schemasDir, fixturesDir, project, args})
		},
	}
	f := cmd.Flags()
	f.StringVar(&tool, "tool", "", "tool name of the contract to write or amend (required)")
	f.StringVar(&version, "upstream-version", "", `upstream version to add (default: v1 for a new contract, else the next free "inferred-N")`)
	f.StringArrayVar(&project, "project", nil, "FIELD=/pointer: an agent field and what it copies (repeatable; default: the contract's current projection, or every top-level scalar member)")
	f.StringVar(&schemasDir, "schemas", "schemas", "directory holding one folder per tool contract")
	f.StringVar(&fixturesDir, "fixtures", "fixtures", "fixtures directory")
	return cmd
}

type inferArgs struct {
	tool, version, schemasDir, fixturesDir string
	project, paths                         []string
}

// inferSample is one body read.
type inferSample struct {
	path string
	body []byte
	mcp  bool
}

func runInfer(cmd *cobra.Command, e *env, a inferArgs) error {
	out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
	samples, skipped, err := readInferSamples(a.paths)
	if err != nil {
		return err
	}
	if len(samples) == 0 {
		if len(skipped) > 0 {
			return usageErr("no success response in %s (skipped %s)", strings.Join(a.paths, ", "), strings.Join(skipped, "; "))
		}
		return usageErr("no fixture bodies in %s", strings.Join(a.paths, ", "))
	}
	bodies := make([][]byte, len(samples))
	names := make([]string, len(samples))
	anyMCP := false
	for i, s := range samples {
		bodies[i], names[i] = s.body, s.path
		anyMCP = anyMCP || s.mcp
	}
	schema, ev, err := importer.Infer(bodies, importer.InferOptions{Names: names, MCP: anyMCP})
	if err != nil {
		return &exitError{code: ExitUsage, err: err}
	}

	// importer.Write takes the lock of both folders, even with no fixture
	// to write: they must exist.
	for _, d := range []string{a.schemasDir, a.fixturesDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return internalErr(err)
		}
	}
	// The contract there, if any.
	cdir := filepath.Join(a.schemasDir, a.tool)
	var existing *gate.Contract
	if _, err := os.Stat(filepath.Join(cdir, gate.ManifestFile)); err == nil {
		if existing, err = gate.LoadDir(cdir, e.gate); err != nil {
			return importErr(err)
		}
		wantProto := gate.ProtocolJSON
		if ev.Protocol == "mcp" {
			wantProto = gate.ProtocolMCP
		}
		if p := existing.Protocol(); p != wantProto && !(p == "" && wantProto == gate.ProtocolJSON) {
			return usageErr("%s declares protocol %s, but the samples are %s results", cdir, p, wantProto)
		}
	}
	version := a.version
	if version == "" {
		version = "v1"
		if existing != nil {
			for i := 1; ; i++ {
				version = fmt.Sprintf("inferred-%d", i)
				if !contains(existing.UpstreamVersions(), version) {
					break
				}
			}
		}
	}
	file := "schemas/" + a.tool + "/upstream." + version + ".schema.json"
	set := importer.Schemas{file: schema}

	var fields []importer.Field
	var notes []string
	switch {
	case len(a.project) > 0:
		if fields, err = projectFlags(a.project); err != nil {
			return err
		}
	case existing != nil:
		pf, _ := existing.Projection(existing.Current())
		for _, f := range pf {
			fields = append(fields, importer.Field{Name: f.Field, Pointer: f.Pointer.String()})
		}
		notes = append(notes, fmt.Sprintf("projection: the current version %s's, kept so the contract's agent schema still fits; check each pointer against the inferred schema", existing.Current()))
	}
	var agent map[string]any
	if existing == nil {
		// The inferred schema is closed already: nothing to close along.
		p, err := set.Project(file, fields, false)
		if err != nil {
			return usageErr("%v", err)
		}
		fields, agent = p.Fields, p.Agent
		notes = append(notes, p.Notes...)
	}
	notes = append(notes, inferNotes(ev)...)
	notes = append(notes, "the samples stay where they are: promote those the contract must admit (airlock promote FIXTURE --to accepted) and write their goldens (airlock run --update)")
	for _, s := range skipped {
		notes = append(notes, "skipped "+s)
	}
	for _, s := range ev.Skipped {
		notes = append(notes, "skipped "+s)
	}
	d := &importer.Draft{
		Tool:        a.tool,
		Description: fmt.Sprintf("Inferred by airlock infer from %d recorded responses.", ev.Samples),
		Header:      []string{"Written by airlock infer from recorded responses; see docs/infer.md.", "Review the notes it printed: enums, ranges, required members and the projection are guesses from the samples."},
		Version: importer.Version{
			Name:       version,
			Comment:    inferComment(ev, a.paths),
			Schema:     schema,
			Projection: fields,
		},
		Agent: agent,
		Notes: notes,
	}
	if ev.Protocol == "mcp" {
		d.Protocol, d.Result = "mcp", ev.Result
	}
	w, err := importer.Write(cmd.Context(), d, importer.WriteOptions{SchemasDir: a.schemasDir, FixturesDir: a.fixturesDir, Gate: e.gate})
	if err != nil {
		return importErr(err)
	}
	printWritten(out, errw, w)

	// Never narrower than a sample: prove it with the contract as written.
	c, err := gate.LoadDir(cdir, e.gate)
	if err != nil {
		return internalErr(fmt.Errorf("the contract infer wrote does not load: %w", err))
	}
	admitted, elsewhere := 0, 0
	var bugs []string
	for _, s := range samples {
		v, err := c.Check(cmd.Context(), gate.Response{Status: 200, ContentType: "application/json", Body: bytes.NewReader(s.body)},
			gate.Call{UpstreamVersion: version, Request: semantic.Request{ID: "req.infer"}, Now: time.Now()})
		if err != nil {
			return internalErr(err)
		}
		switch {
		case v.Admitted:
			admitted++
		case ev.Protocol == "mcp" && v.Reason == "transport.mcp_tool_error":
			// An error result, skipped by the inference.
		case v.Stage == gate.StageSemantic || v.Stage == gate.StageProjection:
			// The schema admitted it; the contract's rules or the
			// projection refuse it: the owner's to decide.
			elsewhere++
			fmt.Fprintf(errw, "warning: %s passes the inferred schema but the contract refuses it: %s at %s\n",
				reports.Line(s.path), reports.Line(v.Reason), reports.Line(v.Audit.InstanceLocation))
		default:
			bugs = append(bugs, fmt.Sprintf("%s: %s at %q (%s)", s.path, v.Reason, v.Audit.InstanceLocation, v.Audit.Message))
		}
	}
	fmt.Fprintf(out, "samples: %d read, %d admitted by upstream version %s", len(samples), admitted, reports.Line(version))
	if elsewhere > 0 {
		fmt.Fprintf(out, ", %d refused after the schema (rules, projection)", elsewhere)
	}
	fmt.Fprintln(out)
	if len(bugs) > 0 {
		return internalErr(fmt.Errorf("the inferred schema refuses %d of its own samples (an airlock infer bug; please report it): %s", len(bugs), strings.Join(bugs, "; ")))
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// readInferSamples reads the fixture bodies named or found in the folders
// named (recursively, sorted): sidecars, goldens, MCP output schemas,
// defaults files, dot files and Markdown are not bodies. A body whose
// sidecar gives a status other than 2xx is skipped (said in skipped); one
// whose sidecar says an MCP tool answered it is an MCP result.
func readInferSamples(paths []string) (samples []inferSample, skipped []string, err error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, nil, usageErr("%v", err)
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if d.IsDir() {
				if path != p && strings.HasPrefix(name, ".") {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".md") || isFixtureSidefile(name) {
				return nil
			}
			found = append(found, path)
			return nil
		})
		if err != nil {
			return nil, nil, usageErr("%v", err)
		}
		sort.Strings(found)
		files = append(files, found...)
	}
	for _, f := range files {
		if isFixtureSidefile(filepath.Base(f)) {
			continue
		}
		dir := filepath.Dir(f)
		var metas []*fixture.Meta // nearest first
		if m, err := readInferMeta(filepath.Join(dir, fixture.StemOf(filepath.Base(f))+fixture.MetaSuffix)); err != nil {
			return nil, nil, err
		} else if m != nil {
			metas = append(metas, m)
		}
		// Directory defaults: the kind, version and tool folders.
		for d, i := dir, 0; i < 3; d, i = filepath.Dir(d), i+1 {
			m, err := readInferMeta(filepath.Join(d, fixture.DefaultsFile))
			if err != nil {
				return nil, nil, err
			}
			if m != nil {
				metas = append(metas, m)
			}
		}
		var status *int
		enc, mcp := "", false
		for i := len(metas) - 1; i >= 0; i-- {
			m := metas[i]
			if m.Status != nil {
				status = m.Status
			}
			if m.ContentEncoding != nil {
				enc = *m.ContentEncoding
			}
			if m.Recorded != nil && m.Recorded.MCPTool != "" {
				mcp = true
			}
		}
		if status != nil && *status != 0 && (*status < 200 || *status > 299) {
			skipped = append(skipped, fmt.Sprintf("%s: status %d", f, *status))
			continue
		}
		body, err := fixture.ReadBody(dir, f, inferMaxBody, enc)
		if err != nil {
			return nil, nil, usageErr("%v", err)
		}
		if e := strings.ToLower(strings.TrimSpace(enc)); e == "gzip" || e == "x-gzip" {
			if body, err = gunzip(body, inferMaxBody); err != nil {
				return nil, nil, usageErr("%s: %v", f, err)
			}
		} else if len(body) > inferMaxBody {
			return nil, nil, usageErr("%s: larger than %d bytes", f, inferMaxBody)
		}
		s := inferSample{path: f, body: body}
		s.mcp = mcp
		samples = append(samples, s)
	}
	return samples, skipped, nil
}

// inferMaxBody bounds one body (after inflation).
const inferMaxBody = 16 << 20

// readInferMeta reads a sidecar or defaults file; nil when there is none.
func readInferMeta(path string) (*fixture.Meta, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, nil
	}
	m, err := fixture.ReadMeta(path)
	if err != nil {
		return nil, importErr(err)
	}
	return m, nil
}

// gunzip inflates a gzip body, at most limit bytes.
func gunzip(b []byte, limit int64) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(out)) > limit {
		return nil, fmt.Errorf("inflates past %d bytes", limit)
	}
	return out, nil
}

func isFixtureSidefile(name string) bool {
	return name == fixture.DefaultsFile || strings.HasSuffix(name, fixture.MetaSuffix) ||
		strings.HasSuffix(name, fixture.GoldenSuffix) || strings.HasSuffix(name, fixture.OutputSchemaSuffix)
}

// inferComment is the version's comment: the evidence, readable.
func inferComment(ev *importer.Evidence, paths []string) []string {
	lines := []string{fmt.Sprintf("Inferred by airlock infer from %d samples (%s).", ev.Samples, strings.Join(paths, ", "))}
	if ev.Protocol == "mcp" {
		lines = append(lines, "MCP results: inferred over "+map[string]string{"structured": "structuredContent", "text": "the JSON text block"}[ev.Result]+".")
	}
	var top []string
	deeper := 0
	for _, l := range ev.Locations {
		if l.Pointer == "" {
			continue
		}
		if strings.Count(l.Pointer, "/") == 1 && l.Pointer != "/*" && len(top) < inferTopMembers {
			top = append(top, fmt.Sprintf("%s %d/%d", strings.TrimPrefix(l.Pointer, "/"), l.Values, l.Of))
		} else {
			deeper++
		}
	}
	if len(top) > 0 {
		lines = append(lines, "Top-level members (in how many of the samples): "+strings.Join(top, ", ")+".")
	}
	if deeper > 0 {
		lines = append(lines, fmt.Sprintf("%d more locations; each member's count is in its $comment in the schema.", deeper))
	}
	return lines
}

// inferNotes are what the owner must still decide, by kind, each kind
// bounded.
func inferNotes(ev *importer.Evidence) []string {
	var enums, ranges, lengths, formats, patterns, optional []string
	for _, l := range ev.Locations {
		at := l.Pointer
		if at == "" {
			at = `"" (the whole value)`
		}
		for _, d := range strings.Split(l.Decision, "; ") {
			switch {
			case strings.HasPrefix(d, "enum"):
				enums = append(enums, at+": "+d)
			case strings.HasPrefix(d, "minimum") || strings.HasPrefix(d, "no minimum"):
				ranges = append(ranges, at+": "+d)
			case strings.HasPrefix(d, "maxLength") || strings.HasPrefix(d, "minLength") || strings.HasPrefix(d, "maxItems") || strings.HasPrefix(d, "always empty"):
				lengths = append(lengths, at+": "+d)
			case strings.HasPrefix(d, "format"):
				formats = append(formats, at+": "+d)
			case strings.HasPrefix(d, "pattern"):
				patterns = append(patterns, at+": "+d)
			}
		}
		if l.Of > 0 && l.Values < l.Of {
			optional = append(optional, fmt.Sprintf("%s (in %d of %d)", at, l.Values, l.Of))
		}
	}
	var out []string
	add := func(what string, list []string) {
		if len(list) == 0 {
			return
		}
		more := ""
		if len(list) > inferNotesPerKind {
			more = fmt.Sprintf(" and %d more", len(list)-inferNotesPerKind)
			list = list[:inferNotesPerKind]
		}
		out = append(out, what+": "+strings.Join(list, "; ")+more)
	}
	add(fmt.Sprintf("enums (at most %d values, at least %d strings per value): a value not seen is refused; widen what the upstream may add", importer.EnumMaxValues, importer.EnumMinSamplesPerValue), enums)
	add("ranges widened from what was seen (minimum 0 when nothing was negative): set what the upstream promises", ranges)
	add(fmt.Sprintf("lengths widened (×%d, at least %d): tighten to what the field holds", importer.StringLengthFactor, importer.StringLengthFloor), lengths)
	add("formats asserted (every sample matched)", formats)
	add("patterns (the alphabet every sample kept to, or no control or bidi character): widen one if the upstream may send more", patterns)
	add("optional members (absent from some samples; the rest are required)", optional)
	return out
}
