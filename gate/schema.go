package gate

import (
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/internal/validator"
)

// ErrOutsideContract is wrapped by the *ConfigError of any $ref (or
// $schema) in a contract's schema files that names a document outside the
// contract's own folder: a file:// path, an https:// URL that is not the
// $id of one of the folder's files, anything. The gate never reads a file
// the contract did not name and never performs network I/O.
var ErrOutsideContract = schema.ErrOutsideContract

// ErrNotStrict is wrapped by the *ConfigError of a schema file that load
// refuses although the validator would have compiled it into something
// other than what it says: a keyword JSON Schema 2020-12 does not define
// (OpenAPI's nullable and discriminator included; x-* and example are
// allowed annotations), a format the gate cannot assert, an
// integer-valued keyword the validator cannot represent, a pattern past
// its bounds, a reference to a value that is not a schema, or references
// that loop without descending into the value. The error names the file,
// line, column and JSON Pointer of the keyword. See docs/contracts.md,
// "What load refuses".
var ErrNotStrict = schema.ErrNotStrict

// compiledSchema is a schema as jsonschema/v6 compiled it (the reference,
// and what the harness introspects) with the validator compiled from it,
// which the gate runs (see internal/validator).
type compiledSchema struct {
	ref  *jsonschema.Schema
	fast *validator.Validator
}

// schemaStage validates v, read from a body of size bytes, against sch
// (JSON Schema 2020-12, formats judged by the contract's format policy)
// with the compiled validator (jsonschema/v6 under recover where it falls
// back; see internal/validator). The reason names the keyword of the
// first failing cause in the validator's order: schema.<keyword>; past
// the validator's work bound it is internal.validator_work_limit, and a
// v6 panic is internal.validator_panic. A format refusal's message ends
// with the policy that judged the value ("format policy email: assert").
// The refusal lists up to c.locations failing instance locations, the
// chosen cause's first.
func (c *Contract) schemaStage(sch *compiledSchema, v any, size int) *refusal {
	var f *schema.Failure
	var err error
	values := -1
	if t, ok := v.(*strictjson.Tape); ok {
		f, err = sch.fast.ValidateTape(t, size, c.locations)
		values = len(t.Nodes)
	} else {
		f, err = sch.fast.ValidateSized(v, size, c.locations)
	}
	switch {
	case errors.Is(err, validator.ErrWorkLimit):
		return &refusal{reason: ReasonWorkLimit, offset: -1,
			message: fmt.Sprintf("%v: more than %d × (%d JSON values + 1) × (%d subschemas + 1) subschema applications", err, validator.WorkFactor, values, sch.fast.Nodes())}
	case err != nil:
		return &refusal{reason: ReasonPanic, message: err.Error(), offset: -1}
	}
	if f == nil {
		return nil
	}
	msg := f.Message
	if f.Format != "" {
		msg += "; format policy " + f.Format + ": " + c.formats.Of(f.Format)
	}
	return &refusal{
		reason:            "schema." + f.Keyword,
		message:           msg,
		keywordLocation:   f.KeywordLocation,
		instanceLocation:  f.InstanceLocation,
		instanceLocations: f.InstanceLocations,
		offset:            -1,
	}
}

// annotations finds, in a value u's schema admitted, the values that fail a
// format the contract only annotates: a second validation, against the
// schema with those formats asserted, run only for contracts that annotate
// a format their schema files name — by the compiled validator on the
// tape, and only when that fails by jsonschema/v6 over the built value,
// which lists the failures. One format.annotated warning per
// instance location and format, at most MaxWarnings, in instance location
// order.
func (c *Contract) annotations(u *upstream, v *Verdict, size int) []Warning {
	if u.asserting == nil || v.tape != nil && u.assertingFast.ValidTape(v.tape, size) {
		// Nothing to warn about: the common case, answered on the tape
		// without building the value.
		return nil
	}
	value, _ := v.valueOf()
	failures, panicErr := schema.FormatFailures(u.asserting, value, c.annotated, MaxWarnings)
	if panicErr != nil {
		// The value was admitted; the check for warnings cannot refuse it.
		return []Warning{{Code: WarningFormatAnnotated, Message: "the annotated formats could not be checked: " + panicErr.Error()}}
	}
	out := make([]Warning, 0, len(failures))
	for _, f := range failures {
		w := Warning{Code: WarningFormatAnnotated, InstanceLocation: f.InstanceLocation}
		if f.Format != "" {
			w.Message = fmt.Sprintf("%s; format policy %s: annotate, so admitted (%s)", c.relative(f.Message), f.Format, c.relative(f.KeywordLocation))
		} else {
			w.Message = fmt.Sprintf("admitted only because the formats %v are annotated: with them asserted, %s (%s)", c.annotated, c.relative(f.Message), c.relative(f.KeywordLocation))
		}
		out = append(out, w)
	}
	return out
}
