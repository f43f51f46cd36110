package validator

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/strictjson"
)

// Shapes a hostile review found slow or wrong, each checked against
// jsonschema/v6 and, where the danger was cost, within the work bound: a
// walk that went exponential again would end in ErrWorkLimit here, not
// in a slow test.

func compileDoc(t *testing.T, doc string) (*jsonschema.Schema, *Validator) {
	t.Helper()
	v, err := strictjson.Parse([]byte(doc), strictjson.Limits{MaxDepth: 512})
	if err != nil {
		t.Fatal(err)
	}
	c := schema.NewCompiler(nil)
	if err := c.AddResource("https://airlock.invalid/s.json", v); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("https://airlock.invalid/s.json")
	if err != nil {
		t.Fatal(err)
	}
	vd := Compile(s)
	if vd.Fallback() != "" {
		t.Fatalf("fallback: %s", vd.Fallback())
	}
	return s, vd
}

// judge validates body with both validators, within the work bound, and
// fails on a disagreement; it returns our failure.
func judge(t *testing.T, s *jsonschema.Schema, vd *Validator, body string) *schema.Failure {
	t.Helper()
	tape, err := strictjson.ParseTape([]byte(body), strictjson.Limits{MaxDepth: 512})
	if err != nil {
		t.Fatal(err)
	}
	f, err := vd.ValidateTape(tape, len(body), 16)
	if err != nil {
		t.Fatalf("%.60s: %v", body, err)
	}
	ref, _ := schema.Validate(s, tape.Value(0))
	if (f == nil) != (ref == nil) {
		t.Fatalf("%.60s: ours valid=%v, v6 valid=%v (%v)", body, f == nil, ref == nil, f)
	}
	return f
}

func nested(key string, depth int, leaf string) string {
	return strings.Repeat(`{"`+key+`":`, depth) + leaf + strings.Repeat("}", depth)
}

func TestUnevaluatedThroughRecursionIsLinear(t *testing.T) {
	for _, branch := range []string{
		`"anyOf":[{"properties":{"next":{"$ref":"#/$defs/n"}}}]`,
		`"oneOf":[{"properties":{"next":{"$ref":"#/$defs/n"}}}]`,
		`"if":{"properties":{"next":{"$ref":"#/$defs/n"}}},"then":true`,
	} {
		s, vd := compileDoc(t, `{"$defs":{"n":{"type":"object",`+branch+`,"unevaluatedProperties":false}},"$ref":"#/$defs/n"}`)
		judge(t, s, vd, nested("next", 60, "{}"))
		if f := judge(t, s, vd, nested("next", 60, `{"x":1}`)); f == nil || f.Keyword != "unevaluatedProperties" {
			t.Fatalf("%s: want unevaluatedProperties, got %+v", branch, f)
		}
	}
	s, vd := compileDoc(t, `{"$defs":{"n":{"type":"array","contains":{"$ref":"#/$defs/n"},"minContains":0,"unevaluatedItems":false}},"$ref":"#/$defs/n"}`)
	judge(t, s, vd, strings.Repeat("[", 60)+strings.Repeat("]", 60))
}

func TestEvaluatedThroughLongRefChains(t *testing.T) {
	var defs []string
	for i := range 100 {
		defs = append(defs, fmt.Sprintf(`"d%d":{"$ref":"#/$defs/d%d"}`, i, i+1))
	}
	defs = append(defs, `"d100":{"properties":{"a":true}}`)
	s, vd := compileDoc(t, `{"$ref":"#/$defs/d0","unevaluatedProperties":false,"$defs":{`+strings.Join(defs, ",")+`}}`)
	judge(t, s, vd, `{"a":1}`)
	if f := judge(t, s, vd, `{"a":1,"b":2}`); f == nil || f.InstanceLocation != "/b" {
		t.Fatalf("want /b refused, got %+v", f)
	}
}

func TestKeywordLocations(t *testing.T) {
	s, vd := compileDoc(t, `{"propertyNames":{"maxLength":4},"dependentRequired":{"a b":["c"]},"properties":{"then":false}}`)
	cases := []struct{ body, keyword, location string }{
		{`{"abcde":1}`, "propertyNames", "https://airlock.invalid/s.json#/propertyNames"},
		{`{"a b":1}`, "dependentRequired", "https://airlock.invalid/s.json#/dependentRequired/a%20b"},
		{`{"then":1}`, "false", "https://airlock.invalid/s.json#/properties/then"},
	}
	for _, c := range cases {
		f := judge(t, s, vd, c.body)
		if f == nil || f.Keyword != c.keyword || f.KeywordLocation != c.location {
			t.Errorf("%s: got %+v, want %s at %s", c.body, f, c.keyword, c.location)
		}
	}
}

// Strings that concatenate alike must not hash alike: uniqueItems on
// regroupings of one string stays linear.
func TestHashSeparatesRegroupings(t *testing.T) {
	var items []string
	for mask := range 2048 {
		var parts []string
		cur := "x"
		for k := range 11 {
			if mask&(1<<k) != 0 {
				parts = append(parts, cur)
				cur = "x"
			} else {
				cur += "sx"
			}
		}
		parts = append(parts, cur)
		b, _ := json.Marshal(parts)
		items = append(items, string(b))
	}
	body := "[" + strings.Join(items, ",") + "]"
	tape, err := strictjson.ParseTape([]byte(body), strictjson.Limits{MaxStringLength: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]bool{}
	for j := int32(1); j < tape.Nodes[0].End; j = tape.Nodes[j].End {
		var h maphash.Hash
		h.SetSeed(hashSeed)
		hashAt(&h, tape, j)
		seen[h.Sum64()] = true
	}
	if len(seen) != len(items) {
		t.Fatalf("%d regroupings hash to %d values", len(items), len(seen))
	}
	s, vd := compileDoc(t, `{"type":"array","uniqueItems":true}`)
	judge(t, s, vd, body)
}
