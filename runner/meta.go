package runner

import (
	_ "embed"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/semantic"
)

// File names inside a fixture tree.
const (
	DefaultsFile  = "defaults.meta.yaml"
	MetaSuffix    = ".meta.yaml"
	GoldenSuffix  = ".agent.json"
	defaultStatus = 200
)

// OutputSchemaSuffix names an MCP tool's outputSchema that airlock record
// saves beside a body (<stem>.output-schema.json); discovery treats it like
// a sidecar, never as a body.
const OutputSchemaSuffix = ".output-schema.json"

//go:embed meta.schema.json
var metaSchemaJSON []byte

// MetaSchema returns the published JSON Schema of sidecars and directory
// defaults, the same bytes as schemas/fixture-meta.schema.json.
func MetaSchema() []byte { return slices.Clone(metaSchemaJSON) }

var metaSchema = func() *jsonschema.Schema {
	doc, err := gate.Parse(metaSchemaJSON, gate.Limits{})
	if err != nil {
		panic("runner: embedded meta.schema.json: " + err.Error())
	}
	c := gate.NewSchemaCompiler(nil)
	const url = "airlock:fixture-meta.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		panic(err)
	}
	return c.MustCompile(url)
}()

// Meta is a sidecar or a defaults file as written; nil fields are unset and
// inherit from the enclosing directories.
type Meta struct {
	Status          *int         `yaml:"status"`
	ContentType     *string      `yaml:"content_type"`
	ContentEncoding *string      `yaml:"content_encoding"`
	Request         *MetaRequest `yaml:"request"`
	Clock           *string      `yaml:"clock"`
	Expect          *Expect      `yaml:"expect"`
	Notes           string       `yaml:"notes"`
	// Recorded is the provenance airlock record writes; it never changes
	// how a fixture is judged.
	Recorded *Provenance `yaml:"recorded"`
}

// MetaRequest is the request part of a Meta.
type MetaRequest struct {
	ID      *string           `yaml:"id"`
	Context map[string]string `yaml:"context"`
}

// Expect is what the gate must do with a fixture.
type Expect struct {
	// Outcome is "admitted" or "refused"; empty means the kind's default.
	Outcome string `yaml:"outcome"`
	// Reason is the expected reason code of a refusal.
	Reason string `yaml:"reason"`
}

// readMeta decodes a sidecar or defaults file strictly (published schema,
// unknown and duplicate keys are errors with file and line).
func readMeta(path string) (*Meta, error) {
	data, err := gate.ReadRegularFile(path, gate.MaxConfigFile)
	if err != nil {
		return nil, &gate.ConfigError{File: path, Msg: "cannot read", Err: err}
	}
	var m Meta
	if err := gate.DecodeYAML(path, data, metaSchema, &m); err != nil {
		return nil, err
	}
	if m.Expect != nil && m.Expect.Reason != "" {
		if _, ok := gate.LookupReason(m.Expect.Reason); !ok {
			line, col := gate.YAMLPosition(data, "/expect/reason")
			return nil, &gate.ConfigError{File: path, Line: line, Column: col, Key: "/expect/reason", Msg: fmt.Sprintf("unknown reason %q (see docs/reasons.md)", m.Expect.Reason)}
		}
		if m.Expect.Outcome == "admitted" {
			line, col := gate.YAMLPosition(data, "/expect")
			return nil, &gate.ConfigError{File: path, Line: line, Column: col, Key: "/expect", Msg: "an admitted expectation cannot name a reason"}
		}
	}
	return &m, nil
}

// merge returns base overlaid with top: top's set fields win, request
// context merges key by key.
func merge(base, top *Meta) *Meta {
	if base == nil {
		return top
	}
	if top == nil {
		return base
	}
	out := *base
	if top.Status != nil {
		out.Status = top.Status
	}
	if top.ContentType != nil {
		out.ContentType = top.ContentType
	}
	if top.ContentEncoding != nil {
		out.ContentEncoding = top.ContentEncoding
	}
	if top.Clock != nil {
		out.Clock = top.Clock
	}
	if top.Expect != nil {
		out.Expect = top.Expect
	}
	if top.Notes != "" {
		out.Notes = top.Notes
	}
	if top.Recorded != nil {
		out.Recorded = top.Recorded
	}
	if top.Request != nil {
		r := MetaRequest{}
		if base.Request != nil {
			r.ID = base.Request.ID
			r.Context = maps.Clone(base.Request.Context)
		}
		if top.Request.ID != nil {
			r.ID = top.Request.ID
		}
		if r.Context == nil && len(top.Request.Context) > 0 {
			r.Context = map[string]string{}
		}
		maps.Copy(r.Context, top.Request.Context)
		out.Request = &r
	}
	return &out
}

// resolved is a fixture's effective metadata.
type resolved struct {
	status          int
	contentType     string
	contentEncoding string
	request         semantic.Request
	now             time.Time
	// outcome is "admitted" or "refused"; reason may be empty (unchecked).
	outcome string
	reason  string
}

// resolve fills defaults and checks the metadata is usable; file names the
// sidecar (or body) for errors.
func resolve(m *Meta, kind, file string, runStart time.Time) (resolved, error) {
	r := resolved{status: defaultStatus, contentType: "application/json", now: runStart}
	if m == nil {
		m = &Meta{}
	}
	if m.Status != nil {
		r.status = *m.Status
	}
	if m.ContentType != nil {
		r.contentType = *m.ContentType
	}
	if m.ContentEncoding != nil {
		r.contentEncoding = *m.ContentEncoding
	}
	if m.Request == nil || m.Request.ID == nil || *m.Request.ID == "" {
		return r, &gate.ConfigError{File: file, Key: "/request/id", Msg: "no request id: set request.id in the sidecar or a " + DefaultsFile}
	}
	r.request = semantic.Request{ID: *m.Request.ID, Context: maps.Clone(m.Request.Context)}
	if m.Clock != nil {
		t, err := semantic.ParseTimestamp(*m.Clock)
		if err != nil {
			return r, &gate.ConfigError{File: file, Key: "/clock", Msg: err.Error()}
		}
		r.now = t
	}
	switch kind {
	case KindAccepted, KindHistorical:
		r.outcome = "admitted"
	case KindNearMiss:
		r.outcome = "refused"
	}
	if m.Expect != nil {
		if m.Expect.Outcome != "" {
			r.outcome = m.Expect.Outcome
		}
		if m.Expect.Reason != "" {
			r.outcome, r.reason = "refused", m.Expect.Reason
		}
	}
	if kind == KindAccepted && r.outcome != "admitted" {
		return r, &gate.ConfigError{File: file, Key: "/expect", Msg: "an accepted fixture must be admitted; move it to near-miss/"}
	}
	if kind == KindNearMiss && r.outcome != "refused" {
		return r, &gate.ConfigError{File: file, Key: "/expect", Msg: "a near-miss fixture must be refused; move it to accepted/"}
	}
	return r, nil
}
