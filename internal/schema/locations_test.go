package schema_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/schema"
)

func compile(t *testing.T, src string) *jsonschema.Schema {
	t.Helper()
	var doc any
	if err := json.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	c := schema.NewCompiler(nil)
	if err := c.AddResource("mem:s.json", doc); err != nil {
		t.Fatal(err)
	}
	return c.MustCompile("mem:s.json")
}

func failure(t *testing.T, s *jsonschema.Schema, v any, limit int) *schema.Failure {
	t.Helper()
	f, panicked := schema.ValidateLocations(s, v, limit)
	if panicked != nil || f == nil {
		t.Fatalf("want a failure, got %v %v", f, panicked)
	}
	if f.InstanceLocations[0] != f.InstanceLocation {
		t.Fatalf("the chosen location %q is not first in %q", f.InstanceLocation, f.InstanceLocations)
	}
	return f
}

// Thirty failing members, reported by the validator in map order, give the
// same list on every run: sorted, array indexes by number, at most 16.
func TestLocationsAreSortedAndCapped(t *testing.T) {
	s := compile(t, `{"additionalProperties": {"type": "string"}, "items": {"type": "string"}}`)
	obj := map[string]any{}
	for i := range 30 {
		obj[fmt.Sprintf("m%02d", i)] = json.Number("1")
	}
	want := []string{}
	for i := range 16 {
		want = append(want, fmt.Sprintf("/m%02d", i))
	}
	for range 50 {
		if got := failure(t, s, obj, 16).InstanceLocations; !slices.Equal(got, want) {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	arr := make([]any, 12)
	for i := range arr {
		arr[i] = json.Number("1")
	}
	got := failure(t, s, arr, 16).InstanceLocations
	if want := []string{"/0", "/1", "/2", "/3", "/4", "/5", "/6", "/7", "/8", "/9", "/10", "/11"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := failure(t, s, arr, 1).InstanceLocations; !slices.Equal(got, []string{"/0"}) {
		t.Fatalf("limit 1: got %q", got)
	}
	if got := failure(t, s, arr, 0).InstanceLocations; !slices.Equal(got, []string{"/0"}) {
		t.Fatalf("limit 0: got %q", got)
	}
}

// A cause with more causes than the walk's budget is listed itself, not
// looked into: the walk costs at most MaxLocationCauses steps however large
// the validator's tree.
func TestLocationsWalkIsBounded(t *testing.T) {
	s := compile(t, `{"items": {"type": "string"}}`)
	arr := make([]any, schema.MaxLocationCauses+10)
	for i := range arr {
		arr[i] = json.Number("1")
	}
	got := failure(t, s, arr, 16).InstanceLocations
	if !slices.Equal(got, []string{"/0", ""}) {
		t.Fatalf("got %q, want the chosen cause and the items keyword's own location", got)
	}
}

// Off the chosen cause's way, a oneOf that failed in every branch is one
// location; on it, only the closest branch (fewest failures) is followed.
func TestLocationsOneOf(t *testing.T) {
	s := compile(t, `{"properties": {
		"a": {"oneOf": [{"type": "string"}, {"type": "object"}]},
		"b": {"oneOf": [{"type": "string"}, {"type": "object", "properties": {"p": {"type": "string"}, "q": {"type": "string"}}}]}}}`)
	v := map[string]any{"a": json.Number("1"), "b": map[string]any{"p": json.Number("1"), "q": json.Number("2")}}
	f := failure(t, s, v, 16)
	if f.InstanceLocation != "/a" || !slices.Equal(f.InstanceLocations, []string{"/a", "/b"}) {
		t.Fatalf("got %q then %q, want /b listed as its oneOf, not its branches", f.InstanceLocation, f.InstanceLocations)
	}

	// Branch 0 fails at /p, /q and /r; branch 1, the closest, at /p and /q.
	s = compile(t, `{"oneOf": [
		{"properties": {"p": {"const": "a"}, "q": {"const": "b"}, "r": {"const": "c"}}},
		{"properties": {"p": {"type": "string"}, "q": {"type": "string"}}}]}`)
	f = failure(t, s, map[string]any{"p": json.Number("1"), "q": json.Number("2"), "r": json.Number("3")}, 16)
	if !slices.Equal(f.InstanceLocations, []string{"/p", "/q"}) {
		t.Fatalf("got %q, want the closest branch's locations only", f.InstanceLocations)
	}
}
