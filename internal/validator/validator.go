// Package validator is airlock's compiled JSON Schema validator: the gate's
// hot path. A Validator is built once, at contract load, from a schema
// that jsonschema/v6 compiled (v6 reads the files, resolves $ref, $id and
// $anchor and builds the keywords; it stays the reference): each subschema
// becomes a node specialised to its keywords, bounds become exact
// decimals, and validation walks the value once, stopping at the first
// failure.
//
// Cost. Validation does not allocate on success except where a keyword
// needs it (uniqueItems on more than 16 items, unevaluated*, a fractional
// multipleOf, a number that is not a json.Number); work is at most
// proportional to the instance's size times the schema's size: each value
// is validated against a subschema at most once per path through the
// schema's in-place applicators ($ref, allOf, anyOf, oneOf, not, if), and
// a failing oneOf/anyOf is walked again along the one branch it reports.
// There is no error tree: the first failure is the cause.
//
// The cause's order. Within a subschema: type, const, enum, format, the
// keywords of the instance's type (for an object minProperties,
// maxProperties, required, dependentRequired, additionalProperties: false,
// propertyNames; for an array minItems, maxItems, uniqueItems, contains;
// for a string minLength, maxLength, pattern; for a number minimum,
// maximum, exclusiveMinimum, exclusiveMaximum, multipleOf), then $ref,
// allOf, anyOf, oneOf, not, if/then/else, dependentSchemas, then members
// in code point order of their names or items in index order, then
// unevaluatedProperties/unevaluatedItems. A oneOf or anyOf that no branch
// passes reports the branch the value meant (see choose): the first whose
// type admits it and whose discriminating const/enum members it matches.
//
// What it does not compile (drafts before 2020-12, $dynamicRef to a
// $dynamicAnchor, $recursiveRef, asserted content keywords, vocabulary
// extensions, the regex format, reference cycles that do not descend into
// the instance) makes the whole schema fall back to jsonschema/v6; Fallback
// says why, and airlock lint reports it.
package validator

import (
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/airlockdev/airlock/internal/schema"
)

// Validator validates values (map[string]any, []any, string, json.Number,
// bool, nil: what strictjson.Parse returns; Go's other numeric types are
// accepted too) against one compiled schema. It is immutable and safe for
// concurrent use.
type Validator struct {
	ref      *jsonschema.Schema
	root     *node
	fallback string
}

// Compile builds the validator of s, a schema compiled by jsonschema/v6
// with internal/schema's compiler configuration. It never fails: what it
// cannot compile runs on v6 (see Fallback).
func Compile(s *jsonschema.Schema) *Validator {
	c := &compiler{nodes: map[*jsonschema.Schema]*node{}}
	root := c.compile(s)
	if c.fallback == "" && cyclic(root) {
		c.fallback = "a reference cycle that does not descend into the instance at " + s.Location
	}
	vd := &Validator{ref: s, fallback: c.fallback}
	if c.fallback == "" {
		for _, n := range c.nodes {
			for _, b := range n.anyOf {
				b.discr = discriminators(b)
			}
			for _, b := range n.oneOf {
				b.discr = discriminators(b)
			}
		}
		vd.root = root
	}
	return vd
}

// Fallback says why the validator runs jsonschema/v6 instead of its own
// nodes, naming the keyword and its location; "" when it does not.
func (vd *Validator) Fallback() string { return vd.fallback }

// Valid reports whether v is valid, recording nothing.
func (vd *Validator) Valid(v any) bool {
	if vd.root == nil {
		f, err := schema.Validate(vd.ref, v)
		return f == nil && err == nil
	}
	r := run{}
	return r.validate(vd.root, v)
}

// Validate returns nil, nil when v is valid, and the cause of the first
// failure (see the package comment for the order) when not; a non-nil
// error only when the v6 fallback panicked (see schema.Validate).
func (vd *Validator) Validate(v any) (*schema.Failure, error) {
	return vd.ValidateLocations(v, 1)
}

// ValidateLocations is Validate that also lists up to limit distinct
// failing instance locations in Failure.InstanceLocations, the cause's
// first: past the first failure the walk goes on (skipping the rest of a
// subschema's own keywords) until limit locations are found. A limit
// below 1 means 1.
func (vd *Validator) ValidateLocations(v any, limit int) (*schema.Failure, error) {
	limit = max(limit, 1)
	if vd.root == nil {
		return schema.ValidateLocations(vd.ref, v, limit)
	}
	r := run{}
	if r.validate(vd.root, v) {
		return nil, nil
	}
	r = run{rec: true, limit: limit}
	if r.validate(vd.root, v) || r.first == nil {
		// Unreachable: the two walks differ only in recording.
		return nil, fmt.Errorf("validator: inconsistent verdict for %s", vd.ref.Location)
	}
	c := r.first
	return &schema.Failure{
		Keyword:           c.keyword,
		KeywordLocation:   c.keywordLocation,
		InstanceLocation:  c.instanceLocation,
		Message:           c.kind.LocalizedString(printer),
		Member:            c.member,
		Format:            c.format,
		Missing:           c.missing,
		InstanceLocations: r.locs,
	}, nil
}

var printer = message.NewPrinter(language.English)
