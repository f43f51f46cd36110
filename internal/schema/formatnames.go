package schema

import (
	"fmt"
	"slices"
	"strings"
)

// assertedFormats are the format names the gate's compiler asserts: the
// checkers santhosh-tekuri/jsonschema v6.0.3 ships (its formats table)
// plus "regex", which it checks with the compiler's regexp engine, and
// "date-time", which NewCompiler replaces with semantic.ParseTimestamp.
// "period" (an ISO 8601 time interval) and "semver" (Semantic Versioning
// 2.0.0) are the library's own, beyond JSON Schema Validation 2020-12 §7.3.
// A test checks that each one refuses a value.
var assertedFormats = []string{
	"date", "date-time", "duration", "email", "hostname", "ipv4", "ipv6",
	"iri", "iri-reference", "json-pointer", "period", "regex",
	"relative-json-pointer", "semver", "time", "uri", "uri-reference",
	"uri-template", "uuid",
}

// uncheckedFormats are defined by JSON Schema Validation 2020-12 §7.3 but
// have no checker in jsonschema v6.0.3: asserting them would admit every
// string.
var uncheckedFormats = []string{"idn-email", "idn-hostname"}

// openAPIFormats are OpenAPI's numeric formats, which JSON Schema spells
// as bounds.
var openAPIFormats = map[string]string{
	"int32":  `"type": "integer", "minimum": -2147483648, "maximum": 2147483647`,
	"int64":  `"type": "integer", "minimum": -9223372036854775808, "maximum": 9223372036854775807`,
	"float":  `"type": "number", "minimum": -3.4028234663852886e38, "maximum": 3.4028234663852886e38`,
	"double": `"type": "number", "minimum": -1.7976931348623157e308, "maximum": 1.7976931348623157e308`,
}

// Formats returns the format names the gate asserts, sorted (a new slice).
func Formats() []string { return slices.Clone(assertedFormats) }

// CheckFormatName returns nil when name is a format the gate asserts (see
// Formats), and otherwise an error saying why the name cannot be asserted
// and what to write instead: an OpenAPI numeric format (int32, int64,
// float, double) names the JSON Schema bounds, idn-email and idn-hostname
// have no checker, and any other name is unknown (the error lists the
// known ones). A format the validator does not know is silently ignored by
// it, so a misspelling ("date-tme") would admit anything.
//
// A format policy that names its own checker for a format should consult
// it before calling this.
func CheckFormatName(name string) error {
	if slices.Contains(assertedFormats, name) {
		return nil
	}
	if bounds, ok := openAPIFormats[name]; ok {
		return fmt.Errorf("format %q is OpenAPI, not JSON Schema 2020-12, and the validator ignores it: write %s instead (airlock import openapi does when it imports a description; see docs/import.md)", name, bounds)
	}
	if slices.Contains(uncheckedFormats, name) {
		return fmt.Errorf("format %q is JSON Schema 2020-12 but the validator has no checker for it, so it would admit any string; bound the value with pattern and maxLength instead", name)
	}
	return fmt.Errorf("unknown format %q: the validator would ignore it and admit any string; known formats: %s", name, strings.Join(assertedFormats, ", "))
}
