package gate

import (
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/schema"
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

// schemaStage validates v against sch (JSON Schema 2020-12, format
// assertion on) under recover. The reason names the keyword of the most
// specific failing cause: schema.<keyword>; a validator panic is
// internal.validator_panic.
func schemaStage(sch *jsonschema.Schema, v any) *refusal {
	f, panicErr := schema.Validate(sch, v)
	if panicErr != nil {
		return &refusal{reason: ReasonPanic, message: panicErr.Error(), offset: -1}
	}
	if f == nil {
		return nil
	}
	return &refusal{
		reason:           "schema." + f.Keyword,
		message:          f.Message,
		keywordLocation:  f.KeywordLocation,
		instanceLocation: f.InstanceLocation,
		offset:           -1,
	}
}
