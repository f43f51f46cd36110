package schema

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// The policies a contract's "formats:" map may give a format besides the
// name of a Checker for it.
const (
	// PolicyAssert judges the format with the checker the compiler has
	// for it (NewCompiler): a value that fails is refused (schema.format).
	PolicyAssert = "assert"
	// PolicyAnnotate admits every value the format would refuse; the gate
	// reports each such value as a warning (format.annotated) instead.
	PolicyAnnotate = "annotate"
	// PolicyDefault is the "formats:" key that sets the policy of every
	// format the map does not name; it is PolicyAssert when absent.
	PolicyDefault = "default"
)

// formatNames are the format names a policy may name: every format the
// gate asserts (assertedFormats, formatnames.go) less "regex", which the
// validator does not let a compiler replace (it is always asserted, with the
// compiler's regexp engine).
var formatNames = slices.DeleteFunc(Formats(), func(n string) bool { return n == "regex" })

// PolicyFormats returns the format names a format policy may name (a new
// slice, sorted): every format the validator checks except "regex".
func PolicyFormats() []string { return slices.Clone(formatNames) }

// Checker is a named format checker a policy may choose instead of the
// compiler's own (e.g. formats: {email: mailbox}).
type Checker struct {
	// Name is what the policy writes, e.g. "mailbox".
	Name string
	// Format is the one format the checker may judge, e.g. "email".
	Format string
	// Accepts says exactly which strings pass, in English (the manifest
	// schema and docs/contracts.md repeat it).
	Accepts string
	// check returns nil for a string that passes.
	check func(s string) error
}

// Validate is the jsonschema.Format validation function of the checker:
// values that are not strings pass (JSON Schema Validation 2020-12 §7.1).
func (c Checker) Validate(v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	return c.check(s)
}

// checkers is the registry of named checkers, by format then name.
var checkers = []Checker{
	{Name: "mailbox", Format: "email", check: checkMailbox, Accepts: "a \"common mailbox\", what real APIs send: at most 254 bytes, " +
		"one \"@\"; before it 1–64 bytes of ASCII letters, digits and !#$%&'*+-/=?^_`{|}~.[] (dots anywhere, no quoting); " +
		"after it a DNS host name: dot-separated labels of 1–63 ASCII letters, digits and hyphens, no label starting or ending " +
		"with a hyphen, at most 253 bytes, no trailing dot (one label, such as localhost, passes). So 12345+ci[bot]@users.noreply.example.com and taro..y.@example.jp pass; " +
		"\"john doe\"@example.com, a@[192.0.2.1] and user@bücher.example do not."},
	{Name: "rfc5322", Format: "email", check: checkAddrSpec, Accepts: "exactly an addr-spec of RFC 5322 §3.4.1 without comments, " +
		"folding or obsolete syntax: a dot-atom or a quoted string (qtext, quoted-pairs, spaces and tabs inside the quotes), \"@\", " +
		"and a dot-atom or a domain literal ([ dtext ]); ASCII only, no length limit. So \"john doe\"@example.com and " +
		"a@[192.0.2.1] pass; 12345+ci[bot]@users.noreply.example.com and a..b@example.com do not."},
	{Name: "uri-reference", Format: "uri", check: checkURIReference, Accepts: "what the validator's own uri-reference format accepts " +
		"(RFC 3986 §4.1 URI-reference as Go's net/url parses it, no backslash): an absolute URI or a relative reference, " +
		"so \"\", www.example.com and /about pass; http://exa mple.com and a\\b do not."},
}

// Checkers returns the named checkers (a new slice), by format then name.
func Checkers() []Checker { return slices.Clone(checkers) }

// LookupChecker returns the checker a policy names for format.
func LookupChecker(format, name string) (Checker, bool) {
	for _, c := range checkers {
		if c.Format == format && c.Name == name {
			return c, true
		}
	}
	return Checker{}, false
}

// FormatPolicy says how a contract's schemas judge each format: assert it
// (the default), only annotate it, or assert it with a named Checker. The
// zero value asserts every format, as NewCompiler does.
type FormatPolicy struct {
	// Default is PolicyAssert ("" too) or PolicyAnnotate: the policy of
	// every format Formats does not name.
	Default string
	// Formats maps a format name (one of PolicyFormats) to PolicyAssert,
	// PolicyAnnotate or the Name of a Checker whose Format it is.
	Formats map[string]string
}

// ParseFormatPolicy builds a policy from a manifest's "formats:" map, format
// name (or "default") → policy. On error it returns the offending key: a
// format the validator does not check, a default other than assert or
// annotate, or a checker that does not exist for that format.
func ParseFormatPolicy(m map[string]string) (FormatPolicy, string, error) {
	p := FormatPolicy{Formats: map[string]string{}}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		if k == PolicyDefault {
			if v != PolicyAssert && v != PolicyAnnotate {
				return FormatPolicy{}, k, fmt.Errorf("formats: default must be %s or %s, not %q (a named checker judges one format: name it)", PolicyAssert, PolicyAnnotate, v)
			}
			p.Default = v
			continue
		}
		if !slices.Contains(formatNames, k) {
			return FormatPolicy{}, k, fmt.Errorf("formats: %q is not a format the validator checks (have: %s)", k, strings.Join(formatNames, ", "))
		}
		if v != PolicyAssert && v != PolicyAnnotate {
			if _, ok := LookupChecker(k, v); !ok {
				return FormatPolicy{}, k, fmt.Errorf("formats: %s: %q is not a policy for %s (have: %s)", k, v, k, strings.Join(policiesOf(k), ", "))
			}
		}
		p.Formats[k] = v
	}
	return p, "", nil
}

// policiesOf returns what a policy may say for format: assert, annotate
// and the names of its checkers.
func policiesOf(format string) []string {
	out := []string{PolicyAssert, PolicyAnnotate}
	for _, c := range checkers {
		if c.Format == format {
			out = append(out, c.Name)
		}
	}
	return out
}

// Of returns the policy that judges format: its entry in Formats, else
// Default, else PolicyAssert.
func (p FormatPolicy) Of(format string) string {
	if v, ok := p.Formats[format]; ok {
		return v
	}
	if p.Default != "" {
		return p.Default
	}
	return PolicyAssert
}

// Annotated returns the formats the policy only annotates, sorted.
func (p FormatPolicy) Annotated() []string {
	var out []string
	for _, f := range formatNames {
		if p.Of(f) == PolicyAnnotate {
			out = append(out, f)
		}
	}
	return out
}

// Asserting returns p with every annotated format asserted instead (by the
// compiler's own checker): the schema that finds what p only annotates.
func (p FormatPolicy) Asserting() FormatPolicy {
	q := FormatPolicy{Formats: map[string]string{}}
	for f, v := range p.Formats {
		if v != PolicyAnnotate {
			q.Formats[f] = v
		}
	}
	return q
}

// annotation is the format validation function of an annotated format: it
// admits everything (JSON Schema Validation 2020-12 §7.2.1, format as an
// annotation).
func annotation(any) error { return nil }

// register replaces, in c, the checker of every format p does not assert
// with the compiler's own: an annotated format admits everything, a named
// checker judges its format.
func (p FormatPolicy) register(c *jsonschema.Compiler) {
	for _, f := range formatNames {
		switch v := p.Of(f); v {
		case PolicyAssert:
		case PolicyAnnotate:
			c.RegisterFormat(policyFormat(f, v, nil, annotation))
		default:
			if ck, ok := LookupChecker(f, v); ok {
				c.RegisterFormat(policyFormat(f, v, ck.check, ck.Validate))
			}
		}
	}
}

// policyFormat returns the one *jsonschema.Format of format f under
// policy v, made at the first call and registered with its string check
// (see StringCheck): a finite set, whatever the number of compilers.
func policyFormat(f, v string, check func(string) error, validate func(any) error) *jsonschema.Format {
	key := f + "\x00" + v
	if x, ok := policyFormats.Load(key); ok {
		return x.(*jsonschema.Format)
	}
	fm := &jsonschema.Format{Name: f, Validate: validate}
	x, loaded := policyFormats.LoadOrStore(key, fm)
	if !loaded {
		registered.Store(fm, check)
	}
	return x.(*jsonschema.Format)
}

// policyFormats holds the formats policyFormat made, by format and policy.
var policyFormats sync.Map

// MentionsFormat reports whether any schema document the folder has read so
// far has a "format" member whose value is one of names (anywhere, so also
// a property that happens to be called "format": it may say true when no
// schema applies such a format, never false when one does).
func (d *Dir) MentionsFormat(names []string) bool {
	var walk func(v any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			if f, ok := v["format"].(string); ok && slices.Contains(names, f) {
				return true
			}
			for _, x := range v {
				if walk(x) {
					return true
				}
			}
		case []any:
			for _, x := range v {
				if walk(x) {
					return true
				}
			}
		}
		return false
	}
	for _, doc := range d.Docs {
		if walk(doc) {
			return true
		}
	}
	return false
}

// FormatFailures validates v against sch, a schema compiled with the
// Asserting form of a policy that annotates formats, under recover (see
// Validate), and returns where v fails those formats: every leaf cause that
// is one of formats failing, in instance location order (array indexes in
// numeric order; at one location, by keyword location), one per location
// and format, at most max. It returns nil when v passes sch. When v fails
// sch without such a leaf (an annotated format under not, if or oneOf chose
// which subschema applies), it returns the most specific cause alone, with
// Format "".
//
// The work is one validation of v plus a walk of the error tree, whose size
// is bounded by the number of failing keywords (at most a few per value in v).
func FormatFailures(sch *jsonschema.Schema, v any, formats []string, max int) (out []Failure, panicked error) {
	defer func() {
		if p := recover(); p != nil {
			out, panicked = nil, fmt.Errorf("validator panic: %v", p)
		}
	}()
	err := sch.Validate(v)
	if err == nil {
		return nil, nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Failure{{Keyword: "invalid", Message: err.Error()}}, nil
	}
	// Collect the matching leaves first and describe only the first max:
	// a large array of failing values has as many leaves, and a message
	// costs more than a sort.
	type leaf struct {
		e      *jsonschema.ValidationError
		format string
	}
	var leaves []leaf
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if k, ok := e.ErrorKind.(*kind.Format); ok && len(e.Causes) == 0 && slices.Contains(formats, k.Want) {
			leaves = append(leaves, leaf{e, k.Want})
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	if len(leaves) == 0 {
		return []Failure{*failureOf(MostSpecific(ve))}, nil
	}
	slices.SortStableFunc(leaves, func(a, b leaf) int {
		if d := compareLocations(a.e.InstanceLocation, b.e.InstanceLocation); d != 0 {
			return d
		}
		return strings.Compare(a.e.SchemaURL, b.e.SchemaURL)
	})
	for i, l := range leaves {
		if i > 0 && slices.Equal(leaves[i-1].e.InstanceLocation, l.e.InstanceLocation) && leaves[i-1].format == l.format {
			continue
		}
		if len(out) == max {
			break
		}
		out = append(out, *failureOf(l.e))
	}
	return out, nil
}
