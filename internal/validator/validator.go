// Package validator is airlock's compiled JSON Schema validator: the gate's
// hot path. A Validator is built once, at contract load, from a schema
// that jsonschema/v6 compiled (v6 resolves $ref, $id, $anchor and the
// vocabularies, and stays the reference): each subschema becomes a node
// specialised to its keywords, and validation walks the value once,
// stopping at the first failure.
package validator

import (
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/schema"
)

// Validator validates values (map[string]any, []any, string, json.Number,
// bool, nil: what strictjson.Parse returns) against one compiled schema.
// It is immutable and safe for concurrent use.
type Validator struct {
	ref *jsonschema.Schema
}

// Compile builds the validator of s.
func Compile(s *jsonschema.Schema) *Validator {
	return &Validator{ref: s}
}

// Validate returns nil, nil when v is valid, and the cause of the first
// failure (see the package comment for the order) when not.
func (vd *Validator) Validate(v any) (*schema.Failure, error) {
	return vd.ValidateLocations(v, 1)
}

// ValidateLocations is Validate that also lists up to limit failing
// instance locations in Failure.InstanceLocations, the first failure's
// first.
func (vd *Validator) ValidateLocations(v any, limit int) (*schema.Failure, error) {
	return schema.ValidateLocations(vd.ref, v, limit)
}

// Fallback says why the validator runs jsonschema/v6 instead of its own
// nodes: "" when it does not.
func (vd *Validator) Fallback() string { return "v6 (stub)" }
