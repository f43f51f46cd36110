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

// schemaStage validates v against sch (JSON Schema 2020-12, format
// assertion on) under recover. The reason names the keyword of the most
// specific failing cause: schema.<keyword>; a validator panic is
// internal.validator_panic. The refusal lists up to maxLocations failing
// instance locations, the chosen cause's first (schema.Locations: a walk of
// at most schema.MaxLocationCauses causes).
func schemaStage(sch *jsonschema.Schema, v any, maxLocations int) *refusal {
	f, panicErr := schema.ValidateLocations(sch, v, maxLocations)
	if panicErr != nil {
		return &refusal{reason: ReasonPanic, message: panicErr.Error(), offset: -1}
	}
	if f == nil {
		return nil
	}
	return &refusal{
		reason:            "schema." + f.Keyword,
		message:           f.Message,
		keywordLocation:   f.KeywordLocation,
		instanceLocation:  f.InstanceLocation,
		instanceLocations: f.InstanceLocations,
		offset:            -1,
	}
}
