package validator_test

// What every differential test shares: running one value through the
// oracle (jsonschema/v6 through schema.ValidateLocations, as the gate's
// schema stage does today) and through the compiled validator, classifying
// what each said, and checking that a refusal describes itself truthfully.

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/internal/validator"
	"github.com/airlockdev/airlock/jsonpointer"
)

// outcome is what one validation said about one value.
type outcome string

const (
	valid   outcome = "valid"
	invalid outcome = "invalid"
	// errored: the validator returned an error instead of a verdict (a
	// recovered panic: the gate refuses with internal.validator_panic).
	errored outcome = "error"
	// crashed: the call itself panicked; the gate would go down with it.
	crashed outcome = "crash"
	// inconsistent: both a Failure and an error, or neither where the
	// caller asked for a failure list.
	inconsistent outcome = "inconsistent"
)

// result is one validation's outcome and what came with it.
type result struct {
	out     outcome
	failure *schema.Failure
	err     error
}

func (r result) String() string {
	switch r.out {
	case invalid:
		return fmt.Sprintf("invalid (%s at %q: %s)", r.failure.Keyword, r.failure.InstanceLocation, r.failure.Message)
	case errored, crashed, inconsistent:
		return fmt.Sprintf("%s (%v)", r.out, r.err)
	}
	return string(r.out)
}

func classify(f *schema.Failure, err error) result {
	switch {
	case f != nil && err != nil:
		return result{out: inconsistent, failure: f, err: fmt.Errorf("a Failure (%s) and an error (%v) at once", f.Keyword, err)}
	case err != nil:
		return result{out: errored, err: err}
	case f != nil:
		return result{out: invalid, failure: f}
	}
	return result{out: valid}
}

// runOracle validates v with jsonschema/v6 the gate's way.
func runOracle(s *jsonschema.Schema, v any) result {
	return classify(schema.ValidateLocations(s, v, 1))
}

// runOurs validates v with the compiled validator; a panic that escapes it
// is a crashed result, not a crash of the test.
func runOurs(vd *validator.Validator, v any) (r result) {
	defer func() {
		if p := recover(); p != nil {
			r = result{out: crashed, err: fmt.Errorf("Validate panicked: %v", p)}
		}
	}()
	return classify(vd.Validate(v))
}

// runOursLocations is runOurs through ValidateLocations with limit.
func runOursLocations(vd *validator.Validator, v any, limit int) (r result) {
	defer func() {
		if p := recover(); p != nil {
			r = result{out: crashed, err: fmt.Errorf("ValidateLocations panicked: %v", p)}
		}
	}()
	return classify(vd.ValidateLocations(v, limit))
}

// compileOurs runs validator.Compile under recover.
func compileOurs(s *jsonschema.Schema) (vd *validator.Validator, err error) {
	defer func() {
		if p := recover(); p != nil {
			vd, err = nil, fmt.Errorf("validator.Compile panicked: %v", p)
		}
	}()
	vd = validator.Compile(s)
	if vd == nil {
		return nil, fmt.Errorf("validator.Compile returned nil")
	}
	return vd, nil
}

// resources lists the documents (the part of each Location before "#") of
// every compiled schema reachable from root: where a keyword location may
// point. The compiled graph is walked through every keyword that holds a
// schema, and through a $dynamicRef's static target.
func resources(root *jsonschema.Schema) map[string]bool {
	docs := map[string]bool{}
	seen := map[*jsonschema.Schema]bool{}
	var walk func(s *jsonschema.Schema)
	walk = func(s *jsonschema.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		doc, _, _ := strings.Cut(s.Location, "#")
		docs[doc] = true
		for _, t := range []*jsonschema.Schema{s.Ref, s.RecursiveRef, s.Not, s.If, s.Then, s.Else,
			s.PropertyNames, s.UnevaluatedProperties, s.Contains, s.Items2020, s.UnevaluatedItems, s.ContentSchema} {
			walk(t)
		}
		if s.DynamicRef != nil {
			walk(s.DynamicRef.Ref)
		}
		for _, l := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf, s.PrefixItems} {
			for _, t := range l {
				walk(t)
			}
		}
		for _, m := range []map[string]*jsonschema.Schema{s.Properties, s.DependentSchemas} {
			for _, k := range slices.Sorted(maps.Keys(m)) {
				walk(m[k])
			}
		}
		for _, t := range s.PatternProperties {
			walk(t)
		}
		for _, d := range s.Dependencies {
			if t, ok := d.(*jsonschema.Schema); ok {
				walk(t)
			}
		}
		for _, x := range []any{s.AdditionalProperties, s.AdditionalItems, s.Items} {
			switch t := x.(type) {
			case *jsonschema.Schema:
				walk(t)
			case []*jsonschema.Schema:
				for _, u := range t {
					walk(u)
				}
			}
		}
	}
	walk(root)
	return docs
}

// checkFailure says what is wrong with a refusal's description of value v
// under the schema whose documents are docs: a keyword; a keyword
// location that is a document of the schema, "#" and an RFC 6901 pointer
// naming that keyword; an instance location that is an RFC 6901 pointer
// resolving in v; and, when locations were asked for, a list of distinct
// resolving pointers, the chosen one first, at most limit long. "" when
// nothing is.
func checkFailure(f *schema.Failure, v any, docs map[string]bool, limit int) string {
	var problems []string
	if f.Keyword == "" {
		problems = append(problems, "empty Keyword")
	}
	doc, frag, ok := strings.Cut(f.KeywordLocation, "#")
	switch {
	case !ok:
		problems = append(problems, fmt.Sprintf("KeywordLocation %q has no fragment", f.KeywordLocation))
	case !docs[doc]:
		problems = append(problems, fmt.Sprintf("KeywordLocation %q is in no document the schema reaches (%s)", f.KeywordLocation, strings.Join(slices.Sorted(maps.Keys(docs)), ", ")))
	default:
		p, err := jsonpointer.Parse(frag)
		if err != nil {
			problems = append(problems, fmt.Sprintf("KeywordLocation %q: the fragment is not an RFC 6901 pointer: %v", f.KeywordLocation, err))
		} else if f.Keyword != "false" && f.Keyword != "invalid" && f.Keyword != "" && !slices.Contains(p, f.Keyword) {
			problems = append(problems, fmt.Sprintf("KeywordLocation %q does not name the keyword %q", f.KeywordLocation, f.Keyword))
		}
	}
	if msg := resolves("InstanceLocation", f.InstanceLocation, v); msg != "" {
		problems = append(problems, msg)
	}
	if limit > 0 {
		locs := f.InstanceLocations
		switch {
		case len(locs) == 0:
			problems = append(problems, "no InstanceLocations")
		case locs[0] != f.InstanceLocation:
			problems = append(problems, fmt.Sprintf("InstanceLocations starts with %q, not the InstanceLocation %q", locs[0], f.InstanceLocation))
		case len(locs) > limit:
			problems = append(problems, fmt.Sprintf("%d InstanceLocations, more than the %d asked for", len(locs), limit))
		}
		seen := map[string]bool{}
		for _, l := range locs {
			if seen[l] {
				problems = append(problems, fmt.Sprintf("InstanceLocations lists %q twice", l))
			}
			seen[l] = true
			if msg := resolves("InstanceLocations entry", l, v); msg != "" {
				problems = append(problems, msg)
			}
		}
	}
	return strings.Join(problems, "; ")
}

// resolves says why ptr is not an RFC 6901 pointer to a value inside v ("" when it is).
func resolves(what, ptr string, v any) string {
	p, err := jsonpointer.Parse(ptr)
	if err != nil {
		return fmt.Sprintf("%s %q is not an RFC 6901 pointer: %v", what, ptr, err)
	}
	if _, ok := p.Lookup(v); !ok {
		return fmt.Sprintf("%s %q does not resolve in the instance", what, ptr)
	}
	return ""
}

// TestCheckFailure makes sure checkFailure refuses the descriptions it is
// there to catch, starting from one v6 gives.
func TestCheckFailure(t *testing.T) {
	c := schema.NewCompiler(nil)
	const url = "http://airlock.invalid/check.json"
	doc, err := strictjson.Parse([]byte(`{"properties":{"a":{"type":"integer"}},"required":["a"]}`), strictjson.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s := c.MustCompile(url)
	v, err := strictjson.Parse([]byte(`{"a":"x","b":[1]}`), strictjson.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	ref := runOracle(s, v)
	if ref.out != invalid {
		t.Fatalf("v6: %s, want invalid", ref)
	}
	docs := resources(s)
	if msg := checkFailure(ref.failure, v, docs, 1); msg != "" {
		t.Fatalf("v6's own failure is refused: %s", msg)
	}
	for name, change := range map[string]func(f *schema.Failure){
		"no keyword":                func(f *schema.Failure) { f.Keyword = "" },
		"another document":          func(f *schema.Failure) { f.KeywordLocation = "http://airlock.invalid/other.json#/properties/a/type" },
		"no fragment":               func(f *schema.Failure) { f.KeywordLocation = url },
		"fragment not a pointer":    func(f *schema.Failure) { f.KeywordLocation = url + "#properties/a/type" },
		"keyword not in location":   func(f *schema.Failure) { f.KeywordLocation = url + "#/properties/a" },
		"instance location missing": func(f *schema.Failure) { f.InstanceLocation, f.InstanceLocations = "/c", []string{"/c"} },
		"instance location too far": func(f *schema.Failure) { f.InstanceLocation, f.InstanceLocations = "/b/1", []string{"/b/1"} },
		"instance location no /":    func(f *schema.Failure) { f.InstanceLocation, f.InstanceLocations = "a", []string{"a"} },
		"bad index":                 func(f *schema.Failure) { f.InstanceLocation, f.InstanceLocations = "/b/00", []string{"/b/00"} },
		"locations not first":       func(f *schema.Failure) { f.InstanceLocations = []string{"/b", "/a"} },
		"locations twice":           func(f *schema.Failure) { f.InstanceLocations = []string{"/a", "/a"} },
		"no locations":              func(f *schema.Failure) { f.InstanceLocations = nil },
	} {
		f := *ref.failure
		change(&f)
		if msg := checkFailure(&f, v, docs, 1); msg == "" {
			t.Errorf("%s: %+v passes the check", name, f)
		}
	}
}
