// Package introspect is the harness's view into the gate: what airlock's
// own tools (the suites, mutants, drift and diff) need from a contract or a
// verdict and a production connector does not. Package gate sets every
// function in its init; the arguments are a *gate.Contract or a
// *gate.Verdict passed as any (this package cannot name gate's types), and
// the functions panic on anything else.
//
// Nothing here is part of gate's public API: the representation of decoded
// values (map[string]any, []any, string, json.Number, bool, nil) and of
// compiled schemas may change with the gate.
package introspect

import (
	"io/fs"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/manifest"
	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/jsonpointer"
)

// Field is one projection entry: the agent field and the JSON Pointer it
// copies from.
type Field struct {
	Field   string
	Pointer jsonpointer.Pointer
}

var (
	// Value returns the value a verdict's schema stage saw: the parsed
	// body, or for an MCP contract its structuredContent or the parsed JSON
	// text of its text block (see Extracted). ok is false when
	// the response was refused before that (transport, parse or the MCP
	// result's shape). The value is shared with the verdict: do not modify
	// it.
	Value func(verdict any) (v any, ok bool)
	// ErrorValue returns the error value a matched upstream error shape
	// saw (gate.Verdict.UpstreamError), and false when it read none.
	ErrorValue func(verdict any) (v any, ok bool)

	// Manifest returns a deep copy of a contract's decoded contract.yaml.
	Manifest func(contract any) manifest.Manifest

	// Schema returns the compiled schema of one upstream version of a
	// contract (shared and immutable); false for a version it lacks.
	Schema func(contract any, version string) (*jsonschema.Schema, bool)

	// AgentSchema returns a contract's compiled agent-facing schema.
	AgentSchema func(contract any) *jsonschema.Schema

	// SchemaDocument returns a contract's schema file, by file name, as
	// parsed (shared: do not modify); nil when the contract's schemas did
	// not need it.
	SchemaDocument func(contract any, name string) any

	// RawProjection returns an upstream version's projection as pointers
	// into the raw parsed body, sorted by field; nil for an unknown
	// version. For an MCP contract they start where verdict's value came
	// from (Extracted): /structuredContent, or /content/<i>/text for a text
	// result, whose pointers go on into the JSON text as if it were parsed
	// in place of its string. A nil verdict, or one refused before the
	// value was extracted, means /structuredContent.
	RawProjection func(contract any, version string, verdict any) []Field

	// Extracted returns where in the raw body an MCP contract's verdict
	// found its value: /structuredContent, or /content/<i>/text with text
	// true (the value is the JSON text inside that string). at is nil for a
	// protocol: json contract (the body itself) and for a verdict refused
	// before extraction.
	Extracted func(verdict any) (at jsonpointer.Pointer, text bool)

	// Source returns where a contract was loaded from: the fs.FS, the
	// folder in it, and how errors name that folder (the OS path given to
	// gate.LoadDir, or the folder). For a contract from gate.LoadDir, fsys
	// is os.DirFS of that path.
	Source func(contract any) (fsys fs.FS, dir, shown string)

	// SchemaDir returns the contract's schema folder as the gate loaded
	// it: BaseURL, and Docs holding every document its schemas reached. It
	// is read-only after load; callers must not Compile or Load through it.
	SchemaDir func(contract any) *schema.Dir

	// SuccessEnvelope builds the agent output of an admitted response for
	// tool and requestID around data, exactly as Check does (members in
	// order, data serialised by strictjson.AppendCanonical).
	SuccessEnvelope func(tool, requestID string, data map[string]any) []byte
)
