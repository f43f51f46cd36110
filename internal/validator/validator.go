// Package validator is airlock's compiled JSON Schema validator: the gate's
// hot path. A Validator is built once, at contract load, from a schema
// that jsonschema/v6 compiled (v6 reads the files, resolves $ref, $id and
// $anchor and builds the keywords; it stays the reference): each subschema
// becomes a node specialised to its keywords, bounds become exact
// decimals, and validation walks the value once, stopping at the first
// failure.
//
// Cost. The gate's instance is a tape (strictjson.ParseTape): one node
// per value in document order, no map per object. Validation does not
// allocate on success except where a keyword needs it (uniqueItems on
// more than 16 items, unevaluated*, a fractional multipleOf, a kept
// verdict). A value is walked once to a verdict; a refused one is walked
// again, recording, up to its first failure (or the first few, see
// ValidateLocations), and a failing oneOf/anyOf is walked again along the
// one branch it reports. A subschema two in-place paths share, and a
// branch unevaluated* asks about again, keeps its verdict per value (see
// markMemo), so the work is at most proportional to the number of values
// times the schema's size, unless one subschema is applied to a value
// along several member paths, which ValidateSized bounds (WorkFactor).
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
// extensions, reference cycles that do not descend into the instance) makes the whole schema fall back to jsonschema/v6; Fallback
// says why, and airlock lint reports it.
package validator

import (
	"errors"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/strictjson"
)

// WorkFactor bounds a validation's work: at most WorkFactor × (values +
// 1) × (nodes + 1) subschema applications, where values is the number of
// JSON values in the instance (its tape's nodes) and nodes the compiled
// subschemas (Nodes). A subschema two in-place paths share keeps its
// verdict per value, so only a schema that applies one subschema to a
// value along several member paths (allOf: [{properties: {n: {$ref: d}}},
// {properties: {n: {$ref: d}}}] nested through n applies the deepest one
// 2^k times), or one too large to be searched for shared subschemas
// (maxMemoScan), can ask for more; such a validation stops with
// ErrWorkLimit instead of running on.
const WorkFactor = 4

// ErrWorkLimit is returned when a validation reached its work bound (see
// WorkFactor): the verdict is unknown, and the gate refuses the value.
var ErrWorkLimit = errors.New("the schema's evaluation of this value exceeded its work bound")

// Validator validates values (map[string]any, []any, string, json.Number,
// bool, nil: what strictjson.Parse returns; Go's other numeric types are
// accepted too) against one compiled schema. It is immutable and safe for
// concurrent use.
type Validator struct {
	ref      *jsonschema.Schema
	root     *node
	nodes    int
	fallback string
	// fallbackAt and fallbackKeyword locate what made it fall back.
	fallbackAt, fallbackKeyword string
}

// Compile builds the validator of s, a schema compiled by jsonschema/v6
// with internal/schema's compiler configuration. It never fails: what it
// cannot compile runs on v6 (see Fallback).
func Compile(s *jsonschema.Schema) *Validator {
	c := &compiler{nodes: map[*jsonschema.Schema]*node{}}
	root := c.compile(s)
	if c.fallback == "" && cyclic(root) {
		c.fallback = "a reference cycle that does not descend into the instance at " + s.Location
		c.fallbackAt, c.fallbackKeyword = s.Location, "$ref"
	}
	vd := &Validator{ref: s, fallback: c.fallback, nodes: len(c.nodes), fallbackAt: c.fallbackAt, fallbackKeyword: c.fallbackKeyword}
	if c.fallback == "" {
		markMemo(c.nodes)
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

// FallbackAt is where the fallback's cause is: the absolute location of
// the subschema ("url#/ptr", as jsonschema.Schema.Location) and the
// keyword in it ("" for a vocabulary extension); "", "" when none.
func (vd *Validator) FallbackAt() (location, keyword string) {
	return vd.fallbackAt, vd.fallbackKeyword
}

// Nodes is the number of compiled subschemas (0 on fallback).
func (vd *Validator) Nodes() int {
	if vd.root == nil {
		return 0
	}
	return vd.nodes
}

// budget is the work bound for t (see WorkFactor); size < 0 means none.
func (vd *Validator) budget(t *strictjson.Tape, size int) int {
	if size < 0 {
		return 0
	}
	return WorkFactor * (len(t.Nodes) + 1) * (vd.nodes + 1)
}

// Valid reports whether v, read from size bytes (-1: unknown, no work
// bound), is valid, recording nothing; false when the work bound is
// reached or the walk panicked.
func (vd *Validator) Valid(v any, size int) bool {
	t := tapes.Get().(*strictjson.Tape)
	defer tapes.Put(t)
	if !t.Reset(v) {
		return false
	}
	return vd.ValidTape(t, size)
}

// tapes are the tapes the any API lays values out on, reused: a failure
// keeps no reference to one (its strings are the tape's text, which a
// later layout does not overwrite).
var tapes = sync.Pool{New: func() any { return new(strictjson.Tape) }}

// ValidTape is Valid for a value on a tape (strictjson.ParseTape).
func (vd *Validator) ValidTape(t *strictjson.Tape, size int) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	if vd.root == nil {
		f, err := schema.Validate(vd.ref, t.Value(0))
		return f == nil && err == nil
	}
	r := run{t: t, budget: vd.budget(t, size)}
	return r.validate(vd.root, 0) && !r.exhausted
}

// Validate returns nil, nil when v is valid, and the cause of the first
// failure (see the package comment for the order) when not; a non-nil
// error only when the v6 fallback panicked (see schema.Validate).
func (vd *Validator) Validate(v any) (*schema.Failure, error) {
	return vd.ValidateSized(v, -1, 1)
}

// ValidateLocations is Validate that also lists up to limit distinct
// failing instance locations in Failure.InstanceLocations, the cause's
// first: past the first failure the walk goes on (skipping the rest of a
// subschema's own keywords) until limit locations are found. A limit
// below 1 means 1.
func (vd *Validator) ValidateLocations(v any, limit int) (*schema.Failure, error) {
	return vd.ValidateSized(v, -1, limit)
}

// ValidateSized is ValidateLocations within the work bound (see
// WorkFactor): past it, before any failure is found, the error is
// ErrWorkLimit. size < 0 means no bound; otherwise its value is not used
// (the bound counts values, not bytes). On fallback, v6 runs without
// one. A panic (a bug) is recovered and returned as an error, as
// schema.Validate does for v6's. v is laid out on a tape first
// (strictjson.TapeOf); a value JSON has no form for is refused with the
// keyword "invalid".
func (vd *Validator) ValidateSized(v any, size, limit int) (*schema.Failure, error) {
	t := tapes.Get().(*strictjson.Tape)
	defer tapes.Put(t)
	if !t.Reset(v) {
		return &schema.Failure{Keyword: "invalid", KeywordLocation: vd.ref.Location,
			Message: fmt.Sprintf("invalid JSON value of Go type %T", v), InstanceLocations: []string{""}}, nil
	}
	return vd.ValidateTape(t, size, limit)
}

// ValidateTape is ValidateSized for a value on a tape: the gate's path,
// which lays the body out once (strictjson.ParseTape) and validates it
// without building a map per object.
func (vd *Validator) ValidateTape(t *strictjson.Tape, size, limit int) (f *schema.Failure, err error) {
	limit = max(limit, 1)
	defer func() {
		// A bug here must be a refusal (internal.validator_panic), never a
		// crash of the connector.
		if p := recover(); p != nil {
			f, err = nil, fmt.Errorf("validator panic: %v", p)
		}
	}()
	if vd.root == nil {
		return schema.ValidateLocations(vd.ref, t.Value(0), limit)
	}
	r := run{t: t, budget: vd.budget(t, size), path: make([]step, 0, 32)}
	if r.validate(vd.root, 0) && !r.exhausted {
		return nil, nil
	}
	tried := r.tried
	if r.exhausted {
		tried = nil // verdicts cut short by the bound are not verdicts
	}
	// Refused, or out of work: the recording walk, in the fixed order,
	// finds the cause. It reuses the verdicts of the tries (run.tried)
	// and gets a budget of its own. A failure it records before running
	// out is the cause; only a walk that runs out first is ErrWorkLimit.
	r = run{t: t, rec: true, limit: limit, budget: vd.budget(t, size), tried: tried, path: r.path[:0]}
	r.validate(vd.root, 0)
	if r.first == nil && r.exhausted {
		return nil, ErrWorkLimit
	}
	if r.first == nil {
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
