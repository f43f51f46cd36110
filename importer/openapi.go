package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v3"

	"github.com/airlockdev/airlock/internal/fileio"
	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/redact"
)

// MaxDescription is the largest OpenAPI description read, in bytes (64 MiB).
// A JSON description is pruned to the operation before kin-openapi reads it
// (about 8 bytes of memory per byte); see docs/import.md.
const MaxDescription = 64 << 20

// MaxYAMLDescription is the largest YAML description read, in bytes (24
// MiB): YAML is read into a node tree first, about 40 bytes of memory per
// byte (an 8 MB description: 1.6 s and 320 MB). Convert a larger one to
// JSON.
const MaxYAMLDescription = 24 << 20

// isJSON reports whether a description is JSON (its first byte that is not
// white space is "{"); anything else is read as YAML.
func isJSON(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

// checkYAMLSize refuses a YAML description past MaxYAMLDescription.
func checkYAMLSize(spec string, data []byte) error {
	if !isJSON(data) && len(data) > MaxYAMLDescription {
		return fmt.Errorf("%w %s: a YAML description of %d bytes is past %d bytes (reading YAML costs about 40 bytes of memory per byte); convert it to JSON", ErrDescription, spec, len(data), MaxYAMLDescription)
	}
	return nil
}

// Closing says which objects of an imported schema refuse members their
// schema does not name.
type Closing string

const (
	// ClosePath closes the objects on the way to each projected field, in
	// the contract's own schema, and leaves the shared components as the
	// vendor wrote them (the default): a vendor adding a member to an
	// object the agent never sees does not refuse production traffic,
	// while an unexpected member on the projected path is refused.
	ClosePath Closing = "path"
	// CloseAll closes every object schema of the components too (not one
	// that is a branch of an allOf, which would refuse the other branches'
	// members); the components then go to a folder of their own,
	// <version>.closed.
	CloseAll Closing = "closed"
	// CloseNone leaves every object as the vendor wrote it.
	CloseNone Closing = "open"
)

// OpenAPIOptions say what to import from a description.
type OpenAPIOptions struct {
	// Spec is the description's file (JSON or YAML; OpenAPI 3.0, 3.1 or
	// Swagger 2.0). External $refs are read only from files beneath its
	// folder.
	Spec string
	// Operation is an operationId or "METHOD /path" (as the description
	// spells the path).
	Operation string
	// Status is the response's status code ("200", "2XX", "default");
	// "" takes 200, else the first 2XX the operation declares.
	Status string
	// Tool is the tool name; UpstreamVersion the version name ("" takes
	// the description's info.version when it is a valid name, else "v1").
	Tool, UpstreamVersion string
	// API names the folder of shared components, _components/<API>/
	// ("" takes info.title, lower case, other characters "-").
	API string
	// Project is the projection (agent field → pointer); nil takes
	// Schemas.DefaultProjection.
	Project []Field
	// Closing is ClosePath ("" too), CloseAll or CloseNone.
	Closing Closing
}

// Operation names one operation of a description.
type Operation struct {
	ID, Method, Path string
}

func (o Operation) String() string {
	if o.ID != "" {
		return fmt.Sprintf("%s (%s %s)", o.ID, o.Method, o.Path)
	}
	return o.Method + " " + o.Path
}

// ErrUnknownOperation is wrapped by the error for an operation the
// description does not have; the message lists the closest ones.
var ErrUnknownOperation = errors.New("no such operation")

// ErrNoJSONSchema is wrapped by the error for a response that has no JSON
// media type with a schema.
var ErrNoJSONSchema = errors.New("the response has no JSON schema")

// ErrDescription is wrapped by the error for a description that cannot be
// read or is not OpenAPI.
var ErrDescription = errors.New("cannot read the description")

// LoadOpenAPI reads a description: OpenAPI 3.0 or 3.1 with kin-openapi's
// loader, Swagger 2.0 converted to 3.0 by kin-openapi's openapi2conv.
// External $refs are followed only to files beneath the description's own
// folder (no network, no symbolic link).
func LoadOpenAPI(ctx context.Context, spec string) (*openapi3.T, error) {
	data, err := readSpec(fileio.NewTree(filepath.Dir(spec)), spec)
	if err != nil {
		return nil, err
	}
	if err := checkYAMLSize(spec, data); err != nil {
		return nil, err
	}
	return loadData(ctx, spec, data)
}

// loadData reads the description data, found at spec (for its external
// $refs and its errors).
func loadData(ctx context.Context, spec string, data []byte) (*openapi3.T, error) {
	dir := filepath.Dir(spec)
	tree := fileio.NewTree(dir)
	var head struct {
		Swagger string `json:"swagger" yaml:"swagger"`
		OpenAPI string `json:"openapi" yaml:"openapi"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrDescription, spec, err)
	}
	loader := openapi3.NewLoader()
	loader.Context = ctx
	loader.IsExternalRefsAllowed = true
	loader.ReadFromURIFunc = func(_ *openapi3.Loader, u *url.URL) ([]byte, error) {
		if u.Scheme != "" && u.Scheme != "file" || u.Host != "" {
			return nil, fmt.Errorf("%s: only files beside the description are read, not %s", spec, u.Redacted())
		}
		p := filepath.FromSlash(u.Path)
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		return readSpec(tree, p)
	}
	switch {
	case strings.HasPrefix(head.Swagger, "2."):
		var d2 openapi2.T
		if err := openapi2.UnmarshalFromData(data, &d2); err != nil {
			return nil, fmt.Errorf("%w %s: Swagger %s: %v", ErrDescription, spec, head.Swagger, err)
		}
		d3, err := openapi2conv.ToV3(&d2)
		if err != nil {
			return nil, fmt.Errorf("%w %s: Swagger %s to OpenAPI 3: %v", ErrDescription, spec, head.Swagger, err)
		}
		if err := loader.ResolveRefsIn(d3, nil); err != nil {
			return nil, fmt.Errorf("%w %s: %v", ErrDescription, spec, err)
		}
		return d3, nil
	case strings.HasPrefix(head.OpenAPI, "3.0."), strings.HasPrefix(head.OpenAPI, "3.1."):
	default:
		return nil, fmt.Errorf("%w %s: not OpenAPI 3.0, 3.1 or Swagger 2.0 (openapi %q, swagger %q)", ErrDescription, spec, head.OpenAPI, head.Swagger)
	}
	abs, err := filepath.Abs(spec)
	if err != nil {
		return nil, err
	}
	doc, err := loader.LoadFromDataWithPath(data, &url.URL{Path: filepath.ToSlash(abs)})
	if err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrDescription, spec, err)
	}
	return doc, nil
}

// readSpec reads one file of a description: a regular file beneath the
// tree, at most MaxDescription bytes.
func readSpec(tree fileio.Tree, p string) ([]byte, error) {
	b, err := tree.ReadFile(p, MaxDescription)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrDescription, p, err)
	}
	return b, nil
}

// Operations lists every operation of a description, sorted by path and
// method.
func Operations(doc *openapi3.T) []Operation {
	var out []Operation
	if doc.Paths == nil {
		return nil
	}
	for p, item := range doc.Paths.Map() {
		for m, op := range item.Operations() {
			out = append(out, Operation{ID: op.OperationID, Method: strings.ToUpper(m), Path: p})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Method < out[j].Method
	})
	return out
}

// findOperation finds an operation by operationId or "METHOD /path".
func findOperation(doc *openapi3.T, name string) (Operation, *openapi3.Operation, error) {
	ops := Operations(doc)
	method, p, isPath := strings.Cut(strings.TrimSpace(name), " ")
	for _, o := range ops {
		if o.ID != "" && o.ID == name || isPath && strings.EqualFold(o.Method, method) && o.Path == strings.TrimSpace(p) {
			return o, doc.Paths.Find(o.Path).GetOperation(o.Method), nil
		}
	}
	return Operation{}, nil, unknownOperation(ops, name)
}

// unknownOperation is the error for an operation name none of ops has,
// listing the five closest by edit distance to the operationId or to
// "METHOD /path".
func unknownOperation(ops []Operation, name string) error {
	spelled := map[string]Operation{}
	var names []string
	for _, o := range ops {
		for _, n := range []string{o.ID, o.Method + " " + o.Path} {
			if _, ok := spelled[n]; !ok && n != "" {
				spelled[n] = o
				names = append(names, n)
			}
		}
	}
	var close []string
	seen := map[Operation]bool{}
	for _, n := range schema.ByDistance(name, names) {
		if o := spelled[n]; !seen[o] && len(close) < 5 {
			seen[o] = true
			close = append(close, o.String())
		}
	}
	msg := fmt.Sprintf("%q: %v", name, ErrUnknownOperation)
	if len(close) > 0 {
		msg += "; the closest: " + strings.Join(close, ", ")
	}
	return fmt.Errorf("%s (%d operations in the description)%w", msg, len(ops), wrapOnly{ErrUnknownOperation})
}

// wrapOnly wraps an error without adding to the message.
type wrapOnly struct{ err error }

func (w wrapOnly) Error() string { return "" }
func (w wrapOnly) Unwrap() error { return w.err }

// ImportOpenAPI builds the draft of one operation's response: the schema
// converted to 2020-12 (components bundled under
// _components/<api>/<version>/, only those reachable), the projection,
// the agent-facing schema, the format policy and the response's examples.
//
// A JSON description is first pruned to the operation and what it reaches
// (pruneJSON), which keeps a large description's cost to a fraction; if
// kin-openapi cannot read the pruned one, the whole one is read.
func ImportOpenAPI(ctx context.Context, o OpenAPIOptions) (*Draft, error) {
	data, err := readSpec(fileio.NewTree(filepath.Dir(o.Spec)), o.Spec)
	if err != nil {
		return nil, err
	}
	if err := checkYAMLSize(o.Spec, data); err != nil {
		return nil, err
	}
	asJSON := data
	if !isJSON(data) {
		// YAML: converted to JSON first, when it converts.
		if j, ok := yamlJSON(data, 4*len(data)+1024); ok {
			asJSON = j
		} else {
			asJSON = nil
		}
	}
	if asJSON != nil {
		pruned, ops, ok := pruneJSON(asJSON, o.Operation)
		if !ok && ops != nil {
			return nil, unknownOperation(ops, o.Operation)
		}
		if ok {
			if doc, err := loadData(ctx, o.Spec, pruned); err == nil {
				return DraftFromOpenAPI(doc, o)
			}
		}
	}
	doc, err := loadData(ctx, o.Spec, data)
	if err != nil {
		return nil, err
	}
	return DraftFromOpenAPI(doc, o)
}

// DraftFromOpenAPI is ImportOpenAPI for a description already read.
func DraftFromOpenAPI(doc *openapi3.T, o OpenAPIOptions) (*Draft, error) {
	op, operation, err := findOperation(doc, o.Operation)
	if err != nil {
		return nil, err
	}
	status, resp, err := pickResponse(operation, o.Status)
	if err != nil {
		return nil, fmt.Errorf("operation %s: %w", op, err)
	}
	mediaType, mt := pickJSON(resp.Content)
	if mt == nil || mt.Schema == nil {
		var types []string
		for k := range resp.Content {
			types = append(types, k)
		}
		sort.Strings(types)
		what := "no content"
		if len(types) > 0 {
			what = "content types " + strings.Join(types, ", ")
		}
		return nil, fmt.Errorf("operation %s, response %s: %w (%s)", op, status, ErrNoJSONSchema, what)
	}
	// Names taken from the description become folder names and $refs,
	// where no redaction reaches: one the redactor calls a secret is not
	// taken.
	secret := func(s string) bool { return (&redact.Redactor{}).Text(s) != s }
	var notes []string
	version := o.UpstreamVersion
	if version == "" {
		version = "v1"
		if doc.Info != nil && versionName().MatchString(doc.Info.Version) {
			if secret(doc.Info.Version) {
				notes = append(notes, "the description's info.version looks like a secret: the upstream version is named v1 (pass --upstream-version)")
			} else {
				version = doc.Info.Version
			}
		}
	}
	if !versionName().MatchString(version) {
		return nil, fmt.Errorf("upstream version %q: want ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", version)
	}
	api := o.API
	if api == "" && doc.Info != nil {
		if secret(doc.Info.Title) {
			notes = append(notes, "the description's title holds what looks like a secret: the components folder is named api (pass --api)")
		} else {
			api = slug(doc.Info.Title)
		}
	}
	if api == "" {
		api = "api"
	}
	if !folderName().MatchString(api) {
		return nil, fmt.Errorf("API name %q: want ^[a-z0-9][a-z0-9._-]{0,63}$", api)
	}
	closing := o.Closing
	if closing == "" {
		closing = ClosePath
	}
	compDir := path.Join("schemas", ComponentsDir, api, version)
	if closing == CloseAll {
		compDir += ".closed"
	}
	contractFile := path.Join("schemas", o.Tool, "upstream."+version+".schema.json")
	c := newConverter(strings.HasPrefix(doc.OpenAPI, "3.0") || doc.OpenAPI == "", compDir)
	root := c.ref(mt.Schema, contractFile)
	c.drain()
	rootMap, ok := root.(map[string]any)
	if !ok {
		rootMap = map[string]any{"allOf": []any{root}}
	}
	rootMap["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	c.files[contractFile] = rootMap

	s := Schemas(c.files)
	if !strings.HasPrefix(status, "2") && !strings.EqualFold(status, "default") {
		notes = append(notes, fmt.Sprintf("response %s is not a success, yet this contract admits it as one when the upstream sends it with status 200; to turn the upstream's %s into an error code for the agent, declare its shape under errors: (docs/contracts.md, \"Upstream errors\")", status, status))
	}
	p, err := s.Project(contractFile, o.Project, closing == ClosePath)
	if err != nil {
		return nil, fmt.Errorf("operation %s: %w", op, err)
	}
	notes = append(notes, p.Notes...)
	fields, agent := p.Fields, p.Agent
	switch closing {
	case CloseAll:
		n := closeAll(s)
		notes = append(notes, fmt.Sprintf("closed %d object schemas (--closed); objects that are allOf branches stay open. A member the vendor adds anywhere is now refused", n))
	case CloseNone:
		notes = append(notes, "no object closed (--open): an unexpected member anywhere is admitted; only the projection limits what the agent sees")
	}
	notes = append(notes, c.notes()...)
	d := &Draft{
		Tool: o.Tool,
		Header: []string{
			fmt.Sprintf("%s: imported by airlock import openapi from %s", o.Tool, filepath.Base(o.Spec)),
			fmt.Sprintf("(%s %s, OpenAPI %s), operation %s, response %s %s.", title(doc), infoVersion(doc), doc.OpenAPI, op, status, mediaType),
			"Review the projection, the format policy and the limits before you rely on it.",
		},
		Description: operationSummary(operation, op),
		Formats:     vendorFormats,
		FormatsWhy:  vendorFormatsWhy,
		Version: Version{
			Name:        version,
			Description: fmt.Sprintf("%s %s, response %s of %s", title(doc), infoVersion(doc), status, op),
			Comment:     []string{fmt.Sprintf("From %s (%s %s), components in %s/.", filepath.Base(o.Spec), title(doc), infoVersion(doc), strings.TrimPrefix(compDir, "schemas/"))},
			Schema:      rootMap,
			Projection:  fields,
		},
		Agent: agent,
		Notes: notes,
	}
	for _, f := range sortedKeys(c.files) {
		if f == contractFile {
			continue
		}
		data, err := SchemaFile(c.files[f].(map[string]any))
		if err != nil {
			return nil, err
		}
		d.Components = append(d.Components, File{Path: strings.TrimPrefix(f, "schemas/"), Data: data})
	}
	d.Examples, err = examples(doc, mt, op)
	if err != nil {
		return nil, err
	}
	if len(d.Examples) == 0 {
		d.Notes = append(d.Notes, "the description has no example of this response: record a real one (airlock record), promote it (airlock promote FIXTURE --to accepted) and write its golden (airlock run --update)")
	}
	return d, nil
}

// vendorFormats is the format policy a vendor schema's contract gets: the
// formats real traffic is known to break are annotated (admitted with a
// warning in the audit record), every other format is asserted.
var vendorFormats = []Format{{"default", "assert"}, {"email", "annotate"}, {"uri", "annotate"}}

var vendorFormatsWhy = []string{
	"Format policy for a vendor's schema: real traffic breaks some formats the",
	"description declares. email: bot commit addresses such as",
	"12345+ci[bot]@users.noreply.example.com are not RFC 5321 mailboxes; uri: \"\",",
	"\"www.example.com\" and relative paths arrive where the schema says uri. Both are",
	"annotated (admitted, with a format.annotated warning in the audit record);",
	"every other format is asserted. Once the audit log shows what arrives, prefer",
	"the named checkers (email: mailbox, uri: uri-reference); see docs/contracts.md.",
}

var (
	versionName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) })
	folderName  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`) })
)

// slug makes a title a folder name: lower case, runs of other characters
// one "-".
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.TrimRight(b.String(), "-")
	if len(out) > 64 {
		out = strings.TrimRight(out[:64], "-")
	}
	return out
}

func title(doc *openapi3.T) string {
	if doc.Info == nil || doc.Info.Title == "" {
		return "untitled description"
	}
	return oneLine(doc.Info.Title, 120)
}

func infoVersion(doc *openapi3.T) string {
	if doc.Info == nil {
		return ""
	}
	return oneLine(doc.Info.Version, 64)
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	return truncate(s, n)
}

func operationSummary(op *openapi3.Operation, o Operation) string {
	s := op.Summary
	if s == "" {
		s = op.Description
	}
	if s == "" {
		return o.String()
	}
	return oneLine(s, 300)
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// pickResponse finds the response for status: as given, or 200, else the
// first 2XX the operation declares (by code), else 2XX.
func pickResponse(op *openapi3.Operation, status string) (string, *openapi3.Response, error) {
	if op.Responses == nil {
		return "", nil, errors.New("no responses declared")
	}
	m := op.Responses.Map()
	get := func(k string) (string, *openapi3.Response, bool) {
		for key, r := range m {
			if strings.EqualFold(key, k) && r != nil && r.Value != nil {
				return key, r.Value, true
			}
		}
		return "", nil, false
	}
	if status != "" {
		if k, r, ok := get(status); ok {
			return k, r, nil
		}
		return "", nil, fmt.Errorf("no response %s (declared: %s)", status, strings.Join(sortedResponseKeys(m), ", "))
	}
	if k, r, ok := get("200"); ok {
		return k, r, nil
	}
	for _, k := range sortedResponseKeys(m) {
		if len(k) == 3 && k[0] == '2' && k[1] >= '0' && k[1] <= '9' {
			_, r, _ := get(k)
			return k, r, nil
		}
	}
	if k, r, ok := get("2XX"); ok {
		return k, r, nil
	}
	return "", nil, fmt.Errorf("no success response (declared: %s); pass --status", strings.Join(sortedResponseKeys(m), ", "))
}

func sortedResponseKeys(m map[string]*openapi3.ResponseRef) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// pickJSON picks the JSON media type of a response: application/json,
// else the first (by name) of application/*+json, else any *json*.
func pickJSON(c openapi3.Content) (string, *openapi3.MediaType) {
	if mt, ok := c["application/json"]; ok {
		return "application/json", mt
	}
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		base, _, _ := strings.Cut(strings.ToLower(k), ";")
		if strings.HasPrefix(base, "application/json") || strings.HasSuffix(base, "+json") {
			return k, c[k]
		}
	}
	return "", nil
}

// examples collects the response's examples: the media type's example,
// each entry of its examples (from components/examples too, named by its
// key), and the schema's own example, as JSON bodies.
func examples(doc *openapi3.T, mt *openapi3.MediaType, op Operation) ([]Example, error) {
	var out []Example
	add := func(name, from string, v any) error {
		v, via := exampleValue(doc, v)
		if via != "" {
			from += " (its value a $ref to " + via + ")"
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			return fmt.Errorf("example %s: %w", name, err)
		}
		out = append(out, Example{Name: name, Body: b.Bytes(), From: from})
		return nil
	}
	if mt.Example != nil {
		if err := add("example", "the response's example of "+op.String(), mt.Example); err != nil {
			return nil, err
		}
	}
	for _, k := range sortedExampleKeys(mt.Examples) {
		e := mt.Examples[k]
		if e == nil || e.Value == nil || e.Value.Value == nil {
			continue // externalValue: not read
		}
		from := "example " + strconv.Quote(k) + " of " + op.String()
		if e.Ref != "" {
			from += " (" + e.Ref + ")"
		}
		if err := add(k, from, e.Value.Value); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 && mt.Schema != nil && mt.Schema.Value != nil && mt.Schema.Value.Example != nil {
		if err := add("schema-example", "the response schema's example of "+op.String(), mt.Schema.Value.Example); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// exampleValue follows an example value that is only {"$ref":
// "#/components/examples/<name>"} to that example's value, as GitHub's
// description writes them (OpenAPI says an example's value is literal, so
// the library leaves it alone); at most 8 hops. via names the last
// example reached.
func exampleValue(doc *openapi3.T, v any) (any, string) {
	via := ""
	for hop := 0; hop < 8; hop++ {
		m, ok := v.(map[string]any)
		if !ok || len(m) != 1 {
			break
		}
		ref, ok := m["$ref"].(string)
		name, found := strings.CutPrefix(ref, "#/components/examples/")
		if !ok || !found || doc.Components == nil {
			break
		}
		e := doc.Components.Examples[strings.NewReplacer("~1", "/", "~0", "~").Replace(name)]
		if e == nil || e.Value == nil || e.Value.Value == nil {
			break
		}
		v, via = e.Value.Value, ref
	}
	return v, via
}

func sortedExampleKeys(m openapi3.Examples) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
