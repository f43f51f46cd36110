package schema_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/airlockdev/airlock/internal/schema"
)

// chainOfComponents is a contract schema that reaches 12 shared component
// files, each through the next (c0 → c1 → … → c11), with broken (when not
// "") replacing the text of c7.
func chainOfComponents(broken string) *schema.Dir {
	comps := map[string]string{}
	for i := range 12 {
		comps[fmt.Sprintf("api/v1/c%d.schema.json", i)] = fmt.Sprintf(`{"type": "object", "properties": {"n": {"const": %d}, "next": {"$ref": "c%d.schema.json"}}}`, i, i+1)
	}
	comps["api/v1/c12.schema.json"] = `{"type": "null"}`
	if broken != "" {
		comps["api/v1/c7.schema.json"] = broken
	}
	return componentsDir(`{"type": "object", "properties": {"first": {"$ref": "../_components/api/v1/c0.schema.json"}}}`, comps)
}

// The files compiled one by one first (precompile) give the same schema,
// and the same error for a broken file, as one compile of the root.
func TestPrecompileChangesNoResult(t *testing.T) {
	valid := map[string]any{"first": map[string]any{"n": json.Number("0"), "next": map[string]any{"n": json.Number("1"), "next": map[string]any{"n": json.Number("2")}}}}
	invalid := map[string]any{"first": map[string]any{"n": json.Number("0"), "next": map[string]any{"n": json.Number("5")}}}
	for _, broken := range []string{"", `{"type": "strin"}`, `{"$ref": "missing.schema.json"}`, `{"$ref": "../../../pulls/upstream.schema.json"}`, `{"type": "object",}`} {
		results := map[bool]string{}
		for _, on := range []bool{true, false} {
			restore := schema.SetMinPrecompileFiles(map[bool]int{true: 8, false: 1 << 30}[on])
			s, err := chainOfComponents(broken).Compile("upstream.schema.json")
			restore()
			if err != nil {
				results[on] = "error: " + err.Error()
				continue
			}
			results[on] = fmt.Sprintf("valid: %v, invalid: %v", s.Validate(valid) == nil, s.Validate(invalid) == nil)
		}
		if results[true] != results[false] {
			t.Errorf("c7 = %q: with precompile %s; without %s", broken, results[true], results[false])
		}
		if broken == "" && results[true] != "valid: true, invalid: false" {
			t.Errorf("the chain: %s", results[true])
		}
		if broken != "" && !strings.HasPrefix(results[true], "error:") {
			t.Errorf("c7 = %q: no error: %s", broken, results[true])
		}
	}
}
