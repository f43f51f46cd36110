// Package schema compiles and runs JSON Schema (draft 2020-12) the gate's
// way, for the gate and for every harness tool that must agree with it:
// the compiler configuration (default dialect 2020-12, format assertion on,
// the strict RFC 3339 date-time checker), a loader confined to one
// contract folder of an fs.FS (no file:// escapes, no network), validation
// under recover, and the choice of the most specific failing cause.
package schema

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/semantic"
)

// ErrOutsideContract is wrapped by the error of any $ref (or $schema) that
// names a document the schema loader was not given: a file:// path, an
// https:// URL, anything. The gate never reads a file the contract did not
// name and never performs network I/O.
var ErrOutsideContract = errors.New("reference outside the contract's own schema files")

// ConfinedLoader is a jsonschema.URLLoader that serves only the documents it
// holds, keyed by absolute URL; every other URL fails with an error wrapping
// ErrOutsideContract and naming the URL.
type ConfinedLoader map[string]any

// Load implements jsonschema.URLLoader.
func (l ConfinedLoader) Load(url string) (any, error) {
	if doc, ok := l[url]; ok {
		return doc, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrOutsideContract, url)
}

// NewCompiler returns a compiler configured as the gate's schema stage
// compiles contracts: JSON Schema draft 2020-12 when a schema has no
// $schema, format assertion on (JSON Schema Validation 2020-12 §7.2.2), the
// "date-time" format checked by semantic.ParseTimestamp (RFC 3339 §5.6) so
// that the schema and semantic stages agree, and loader as the only source
// of documents (nil means none: every $ref outside the compiled document
// fails with ErrOutsideContract). Regular expressions — pattern,
// patternProperties keys, format "regex" values — are compiled by
// CompilePattern, within its bounds.
func NewCompiler(loader jsonschema.URLLoader) *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.UseRegexpEngine(boundedRegexp)
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.RegisterFormat(dateTimeFormat)
	if loader == nil {
		loader = ConfinedLoader{}
	}
	c.UseLoader(loader)
	return c
}

// Failure is the most specific cause of a validation error.
type Failure struct {
	// Keyword is the failing keyword, e.g. "additionalProperties"; "false"
	// for a false schema not reached through a keyword, "invalid" when the
	// validator gave no keyword.
	Keyword string
	// KeywordLocation is the absolute keyword location (schema URL, "#",
	// RFC 6901 pointer to the keyword).
	KeywordLocation string
	// InstanceLocation is the RFC 6901 location of the failing value.
	InstanceLocation string
	// Message is the validator's English message.
	Message string
	// Member is, for additionalProperties, the first member (in code point
	// order) that is not allowed; "" otherwise.
	Member string
	// Format is, for format, the format's name ("email"); "" otherwise.
	Format string
	// Missing is, for required, the names of the missing members.
	Missing []string
	// InstanceLocations are the distinct RFC 6901 locations at which the
	// value failed, InstanceLocation first, at most the number asked of
	// ValidateLocations (see Locations).
	InstanceLocations []string
}

var printer = message.NewPrinter(language.English)

// Validate runs sch.Validate(v) under recover: jsonschema v6.0.3 panics on
// some huge numbers, and a panic must be a refusal, never a crash. It
// returns nil, nil when v is valid; the most specific cause (see
// MostSpecific) when not, with InstanceLocations holding its location
// only; and a non-nil panicked error when the validator panicked.
func Validate(sch *jsonschema.Schema, v any) (f *Failure, panicked error) {
	return ValidateLocations(sch, v, 1)
}

// ValidateLocations is Validate that also lists up to limit failing
// instance locations in Failure.InstanceLocations (see Locations); a limit
// below 1 means 1, the most specific cause's only.
func ValidateLocations(sch *jsonschema.Schema, v any, limit int) (f *Failure, panicked error) {
	defer func() {
		if p := recover(); p != nil {
			f, panicked = nil, fmt.Errorf("validator panic: %v", p)
		}
	}()
	err := sch.Validate(v)
	if err == nil {
		return nil, nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &Failure{Keyword: "invalid", Message: err.Error()}, nil
	}
	path := mostSpecificPath(ve)
	f = failureOf(path[len(path)-1])
	f.InstanceLocations = locations(path, limit)
	return f, nil
}

// failureOf describes one leaf cause.
func failureOf(leaf *jsonschema.ValidationError) *Failure {
	f := &Failure{
		Keyword:          keywordOf(leaf),
		KeywordLocation:  keywordLocation(leaf),
		InstanceLocation: jsonpointer.Pointer(leaf.InstanceLocation).String(),
		Message:          leaf.ErrorKind.LocalizedString(printer),
	}
	switch k := leaf.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		if len(k.Properties) > 0 {
			f.Member = slices.Min(k.Properties)
		}
	case *kind.Format:
		f.Format = k.Want
	case *kind.Required:
		f.Missing = slices.Clone(k.Missing)
	}
	return f
}

// MostSpecific walks down to one leaf cause. Where a oneOf or anyOf failed
// in every branch, it follows the branch with the fewest failures (the
// branch the value came closest to matching, first on a tie); elsewhere it
// follows the first cause, in the validator's keyword order, at the smallest
// instance location (the validator visits members in map order), so that the
// same value always gets the same reason.
func MostSpecific(e *jsonschema.ValidationError) *jsonschema.ValidationError {
	path := mostSpecificPath(e)
	return path[len(path)-1]
}

// mostSpecificPath is the way MostSpecific goes down, from e to the leaf.
func mostSpecificPath(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	path := []*jsonschema.ValidationError{e}
	for len(e.Causes) > 0 {
		next := e.Causes[0]
		switch e.ErrorKind.(type) {
		case *kind.OneOf, *kind.AnyOf:
			best := LeafCount(next)
			for _, c := range e.Causes[1:] {
				if n := LeafCount(c); n < best {
					next, best = c, n
				}
			}
		default:
			// Causes come in the validator's map order: take the first
			// instance location, and at one location (two matching
			// patternProperties, say) the first keyword location, so the
			// reason never depends on that order.
			for _, c := range e.Causes[1:] {
				d := slices.Compare(c.InstanceLocation, next.InstanceLocation)
				if d < 0 || d == 0 && c.SchemaURL < next.SchemaURL {
					next = c
				}
			}
		}
		e = next
		path = append(path, e)
	}
	return path
}

// LeafCount is the number of leaf causes (failures without causes of their
// own) in a validation error: how far a value is from matching the
// subschema that failed. The gate follows the oneOf/anyOf branch with the
// fewest; drift reports read it the same way.
func LeafCount(e *jsonschema.ValidationError) int {
	if len(e.Causes) == 0 {
		return 1
	}
	n := 0
	for _, c := range e.Causes {
		n += LeafCount(c)
	}
	return n
}

// subschemaKeywords are keywords whose value is a schema: a false schema
// reached through one of them is reported under that keyword.
var subschemaKeywords = []string{
	"additionalProperties", "unevaluatedProperties", "unevaluatedItems",
	"items", "contains", "propertyNames", "not", "if", "then", "else",
}

// nameKeywords are the keywords whose value maps names to schemas: a false
// schema under one is named, not reached through a keyword.
var nameKeywords = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}

func keywordOf(e *jsonschema.ValidationError) string {
	if p := e.ErrorKind.KeywordPath(); len(p) > 0 {
		return p[0]
	}
	if _, ok := e.ErrorKind.(*kind.FalseSchema); ok {
		_, frag, _ := strings.Cut(e.SchemaURL, "#")
		toks := strings.Split(frag, "/")
		if len(toks) >= 2 && slices.Contains(nameKeywords, toks[len(toks)-2]) {
			return "false" // a property (or definition) named like a keyword
		}
		if last := toks[len(toks)-1]; slices.Contains(subschemaKeywords, last) {
			return last
		}
		return "false"
	}
	return "invalid"
}

func keywordLocation(e *jsonschema.ValidationError) string {
	loc := e.SchemaURL
	if !strings.Contains(loc, "#") {
		loc += "#"
	}
	for _, k := range e.ErrorKind.KeywordPath() {
		loc += "/" + jsonpointer.EscapeToken(k)
	}
	return loc
}

// dateTimeFormat is the "date-time" format every compiler registers:
// semantic.ParseTimestamp (RFC 3339 §5.6), strings only.
var dateTimeFormat = &jsonschema.Format{Name: "date-time", Validate: func(v any) error {
	s, ok := v.(string)
	if !ok {
		return nil // format applies to strings only
	}
	return checkDateTime(s)
}}

func checkDateTime(s string) error {
	_, err := semantic.ParseTimestamp(s)
	return err
}

// StringCheck returns, for a format a compiler of this package
// registered, the check of a string value: f.Validate(s) is check(s), and
// a nil check admits every string (an annotated format). ok is false for
// the formats jsonschema/v6 checks itself (asserted formats other than
// date-time), which only f.Validate judges. It lets a caller judge a
// string without boxing it into an interface.
func StringCheck(f *jsonschema.Format) (check func(string) error, ok bool) {
	if f == dateTimeFormat {
		return checkDateTime, true
	}
	if c, found := registered.Load(f); found {
		return c.(func(string) error), true
	}
	return nil, false
}

// registered maps the formats register makes (one per format and policy,
// made once) to their string checks.
var registered sync.Map
