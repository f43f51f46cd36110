package schema_test

import (
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/schema"
)

// Two patternProperties match one member and fail different keywords: the
// validator reports them in map order, and MostSpecific must pick the same
// cause every time (the first keyword location).
func TestMostSpecificIsDeterministic(t *testing.T) {
	var doc any
	if err := json.Unmarshal([]byte(`{"patternProperties": {"^a": {"maxLength": 1}, "^ab": {"enum": ["x"]}, "^abc": {"pattern": "^z"}}}`), &doc); err != nil {
		t.Fatal(err)
	}
	c := schema.NewCompiler(nil)
	if err := c.AddResource("mem:s.json", doc); err != nil {
		t.Fatal(err)
	}
	s := c.MustCompile("mem:s.json")
	want := ""
	for i := range 200 {
		err := s.Validate(map[string]any{"abcd": "yyy"})
		ve, ok := err.(*jsonschema.ValidationError)
		if !ok {
			t.Fatalf("want a validation error, got %v", err)
		}
		got := schema.MostSpecific(ve).SchemaURL
		if i == 0 {
			want = got
		} else if got != want {
			t.Fatalf("run %d picked %s, run 0 picked %s", i, got, want)
		}
	}
	if want != "mem:s.json#/patternProperties/%5Ea" {
		t.Errorf("picked %s, want the first schema location (^a)", want)
	}
}
