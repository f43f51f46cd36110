package schemawalk_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/schemawalk"
)

func compile(t *testing.T, doc string) *jsonschema.Schema {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("s.json", v); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("s.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Merge visits pre-order, $ref before allOf, with keyword locations through
// the $ref, and cuts a recursive $ref on the path.
func TestMergeOrderPointersAndCut(t *testing.T) {
	s := compile(t, `{"$ref":"#/$defs/a","allOf":[{"type":"string"},{"$ref":"#"}],"$defs":{"a":{"minLength":1}}}`)
	var got, left []string
	schemawalk.Merge(s, "", 8, func(st schemawalk.Step) {
		got = append(got, st.Via+" "+st.Ptr+map[bool]string{true: " cut"}[st.Cut])
	}, func(st schemawalk.Step) { left = append(left, st.Ptr) })
	want := []string{" ", "$ref /$ref", "allOf /allOf/0", "allOf /allOf/1", "$ref /allOf/1/$ref cut"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("visits\n got %q\nwant %q", got, want)
	}
	if wantLeft := []string{"/$ref", "/allOf/0", "/allOf/1", ""}; strings.Join(left, "|") != strings.Join(wantLeft, "|") {
		t.Errorf("leaves\n got %q\nwant %q", left, wantLeft)
	}
}

// ElementSchemas gives prefixItems by position and items for the rest, and
// Element chooses among them by index.
func TestElementSchemas(t *testing.T) {
	s := compile(t, `{"prefixItems":[{"type":"string"}],"items":{"type":"integer"}}`)
	prefix, rest := schemawalk.ElementSchemas(s, "/x")
	if len(prefix) != 1 || prefix[0].Ptr != "/x/prefixItems/0" || rest == nil || rest.Ptr != "/x/items" {
		t.Fatalf("prefix %v rest %v", prefix, rest)
	}
	if e := schemawalk.Element([]*jsonschema.Schema{s}, 0); len(e) != 1 || e[0] != prefix[0].Schema {
		t.Errorf("element 0: %v", e)
	}
	if e := schemawalk.Element([]*jsonschema.Schema{s}, 3); len(e) != 1 || e[0] != rest.Schema {
		t.Errorf("element 3: %v", e)
	}
}

// Merge enters a schema that two allOf members share once: a diamond of
// allOf 20 deep is 2^20 paths but 41 visits (before: every path).
func TestMergeEntersASharedSchemaOnce(t *testing.T) {
	defs := []string{}
	for i := range 20 {
		defs = append(defs, fmt.Sprintf(`"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i+1, i+1))
	}
	defs = append(defs, `"d20":{"type":"string"}`)
	s := compile(t, `{"$ref":"#/$defs/d0","$defs":{`+strings.Join(defs, ",")+`}}`)
	entered, cut := 0, 0
	schemawalk.Merge(s, "", 64, func(st schemawalk.Step) {
		if st.Cut {
			cut++
		} else {
			entered++
		}
	}, nil)
	// The root, then per level d_i and its two allOf members (the second
	// member's $ref to d_{i+1} is cut), and d20.
	if entered != 1+3*20+1 || cut != 20 {
		t.Errorf("entered %d, cut %d; want 62, 20", entered, cut)
	}
}
