package importer_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/airlockdev/airlock/importer"
)

func decodeT(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return m
}

// Each older-dialect spelling becomes its 2020-12 one; the notes say what
// was dropped.
func TestTo2020(t *testing.T) {
	cases := []struct {
		name, in, want string
		notes          []string // substrings, one per note expected among the notes
	}{
		{"draft-07 definitions and refs",
			`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"$ref":"#/definitions/A"}},"definitions":{"A":{"type":"string"}}}`,
			`{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}},"$defs":{"A":{"type":"string"}}}`,
			[]string{"draft-07"}},
		{"a member named definitions keeps its name in a ref",
			`{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"definitions":{"type":"object","properties":{"x":{"$ref":"#/properties/definitions"}}}}}`,
			`{"properties":{"definitions":{"type":"object","properties":{"x":{"$ref":"#/properties/definitions"}}}}}`,
			nil},
		{"array items and additionalItems",
			`{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{"type":"string"},{"type":"integer"}],"additionalItems":false}`,
			`{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false}`,
			nil},
		{"additionalItems alone is ignored by the dialect",
			`{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":{"type":"string"},"additionalItems":false}`,
			`{"type":"array","items":{"type":"string"}}`,
			[]string{"dropped additionalItems"}},
		{"dependencies split",
			`{"$schema":"http://json-schema.org/draft-07/schema#","dependencies":{"a":["b"],"c":{"required":["d"]}}}`,
			`{"dependentRequired":{"a":["b"]},"dependentSchemas":{"c":{"required":["d"]}}}`,
			nil},
		{"draft-04 boolean exclusive bounds",
			`{"$schema":"http://json-schema.org/draft-04/schema#","id":"http://x/y","type":"number","minimum":0,"exclusiveMinimum":true,"maximum":10,"exclusiveMaximum":false}`,
			`{"type":"number","exclusiveMinimum":0,"maximum":10}`,
			nil},
		{"x- and unknown keywords dropped and counted",
			`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","x-foo":1,"properties":{"a":{"type":"string","nullable":true,"x-bar":{}}}}`,
			`{"type":"object","properties":{"a":{"type":"string"}}}`,
			[]string{"dropped 3 keyword(s)"}},
		{"unknown format dropped, known kept",
			`{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"type":"string","format":"int64"},"b":{"type":"string","format":"date-time"}}}`,
			`{"properties":{"a":{"type":"string"},"b":{"type":"string","format":"date-time"}}}`,
			[]string{`dropped format "int64"`}},
		{"draft-07 $ref siblings dropped",
			`{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"$ref":"#/definitions/A","type":"string","description":"d"}},"definitions":{"A":{}}}`,
			`{"properties":{"a":{"$ref":"#/$defs/A","description":"d"}},"$defs":{"A":{}}}`,
			[]string{"dropped type beside $ref"}},
		{"2019-09 recursiveRef",
			`{"$schema":"https://json-schema.org/draft/2019-09/schema","items":{"$recursiveRef":"#"}}`,
			`{"items":{"$dynamicRef":"#"}}`,
			nil},
		{"nested subschemas are walked",
			`{"$schema":"http://json-schema.org/draft-07/schema#","anyOf":[{"not":{"definitions":{}}}],"if":{"x-a":1},"then":true,"patternProperties":{"^a":{"format":"nope"}}}`,
			`{"anyOf":[{"not":{"$defs":{}}}],"if":{},"then":true,"patternProperties":{"^a":{}}}`,
			[]string{"dropped 1 keyword(s)", `dropped format "nope"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, notes := importer.To2020(decodeT(t, c.in))
			if want := decodeT(t, c.want); !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				t.Errorf("got  %s\nwant %s", g, c.want)
			}
			all := strings.Join(notes, "\n")
			for _, n := range c.notes {
				if !strings.Contains(all, n) {
					t.Errorf("notes lack %q:\n%s", n, all)
				}
			}
		})
	}
}

// A clean 2020-12 document passes unchanged, $schema and $id included.
func TestTo2020Unchanged(t *testing.T) {
	in := `{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"urn:x","type":"object","prefixItems":[true],"$defs":{"A":{"type":"string","format":"uuid"}},"properties":{"a":{"$ref":"#/$defs/A","minLength":1}},"dependentRequired":{"a":["b"]}}`
	got, notes := importer.To2020(decodeT(t, in))
	if !reflect.DeepEqual(got, decodeT(t, in)) || len(notes) != 0 {
		g, _ := json.Marshal(got)
		t.Errorf("got %s, notes %q", g, notes)
	}
}

// The skeleton of one value: types, members, items of one type; open and
// with nothing required.
func TestSkeleton(t *testing.T) {
	var v any
	json.Unmarshal([]byte(`{"a":"x","b":1.5,"c":[{"n":1},{"m":true}],"d":null,"e":[1,"x"]}`), &v)
	got, _ := json.Marshal(importer.Skeleton(v))
	want := `{"properties":{"a":{"type":"string"},"b":{"type":"number"},"c":{"items":{"properties":{"m":{"type":"boolean"},"n":{"type":"integer"}},"type":"object"},"type":"array"},"d":{"type":"null"},"e":{"type":"array"}},"type":"object"}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
