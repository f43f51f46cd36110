package validator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/conformance"
	"github.com/airlockdev/airlock/internal/introspect"
	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/strictjson"
)

// fuzzSchemaTexts are schemas written for the fuzzer, each leaning on the
// keywords where a validator of its own most easily departs from v6: the
// applicators that combine verdicts, annotations across them
// (unevaluated*), number equality and division with integers written as
// reals, big and tiny exponents, and references.
var fuzzSchemaTexts = map[string]string{
	"oneOf-numbers": `{"oneOf":[{"type":"integer","multipleOf":3},{"type":"number","multipleOf":0.5},{"const":1.0}]}`,
	"anyOf-enum": `{"anyOf":[{"enum":[1,2.50,"1",null,[1.0],{"a":1e0},false]},
		{"type":"string","minLength":2,"maxLength":4}]}`,
	"if-then-else": `{"if":{"properties":{"kind":{"const":"a"}},"required":["kind"]},
		"then":{"required":["x"],"properties":{"x":{"type":"integer","minimum":-1e2,"exclusiveMaximum":1e300}}},
		"else":{"properties":{"x":{"type":"string","pattern":"^[a-z]+$"}}}}`,
	"unevaluatedProperties": `{"properties":{"a":true},"patternProperties":{"^x-":{"type":"string"},"[0-9]$":{"type":"number"}},
		"allOf":[{"properties":{"b":{"type":"boolean"}}}],
		"if":{"required":["c"]},"then":{"properties":{"c":{"type":"array"}}},
		"unevaluatedProperties":false}`,
	"unevaluatedItems": `{"prefixItems":[{"type":"number"},{"type":"string"}],"contains":{"const":true},"minContains":1,"maxContains":2,
		"anyOf":[{"prefixItems":[true,true,{"type":"object"}]},{"items":{"type":"boolean"}}],
		"unevaluatedItems":{"type":"null"}}`,
	"uniqueItems":     `{"type":"array","uniqueItems":true,"items":{"type":["number","object","array","string","boolean","null"]},"maxItems":8}`,
	"multipleOf-tiny": `{"type":"number","multipleOf":0.0001,"maximum":1e308,"exclusiveMinimum":-1e-300}`,
	"multipleOf-big":  `{"type":["integer","array"],"multipleOf":1e20,"items":{"multipleOf":7,"minimum":12345678901234567890123}}`,
	"ref-recursive": `{"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},"next":{"$ref":"#/$defs/node"}},
		"required":["v"],"additionalProperties":false}},
		"anyOf":[{"$ref":"#/$defs/node"},{"type":"array","items":{"$ref":"#/$defs/node"}}]}`,
	"dependentSchemas": `{"type":"object","dependentSchemas":{"a":{"required":["b"]},"c":{"properties":{"a":{"type":"integer"}}}},
		"dependentRequired":{"d":["a","c"]},"minProperties":1,"maxProperties":4,"propertyNames":{"maxLength":3}}`,
	"const-numbers":  `{"const":{"n":1,"f":[1.5,2e0,-0,100E-2]}}`,
	"enum-exponents": `{"enum":[1e308,1e-300,12345678901234567890123,0.1,-0.0,1E+2]}`,
	"not-formats": `{"not":{"type":"string","format":"date-time"},
		"properties":{"e":{"format":"email"},"u":{"format":"uuid"},"t":{"format":"date-time"},"i":{"format":"ipv4"}}}`,
	"false-and-types": `{"properties":{"never":false,"big":{"type":"integer","maximum":9007199254740993}},
		"additionalProperties":{"type":["integer","boolean"]},"maxProperties":3}`,
}

// fuzzSchemas are the fuzz target's schemas.
type fuzzSchemas []*compiledSchema

// loadFuzzSchemas compiles the fuzz target's schemas: every bundled
// contract's upstream and agent schemas, and fuzzSchemaTexts. It also
// returns, as seeds, the values the bundled fixtures took to the schema
// stage, serialised.
var loadFuzzSchemas = sync.OnceValues(func() (fuzzSchemas, [][]byte) {
	var out fuzzSchemas
	var seeds [][]byte
	root, err := conformance.ModuleRoot()
	if err != nil {
		panic(err)
	}
	set, err := fixture.Open(filepath.Join(root, "schemas"), filepath.Join(root, "fixtures"), fixture.Filter{}, gate.Options{})
	if err != nil {
		panic(err)
	}
	for _, c := range set.List {
		for _, ver := range c.UpstreamVersions() {
			s, _ := introspect.Schema(c, ver)
			out = append(out, fuzzCompiled(c.Tool()+"@"+ver, s))
		}
		out = append(out, fuzzCompiled(c.Tool()+" agent", introspect.AgentSchema(c)))
	}
	for _, f := range set.Fixtures {
		p, err := set.Prepare(f)
		if err != nil {
			panic(err)
		}
		v, err := set.CheckPrepared(context.Background(), f, p)
		if err != nil {
			panic(err)
		}
		if value, ok := introspect.Value(v); ok {
			b, err := json.Marshal(value)
			if err != nil {
				panic(err)
			}
			seeds = append(seeds, b)
		}
	}
	for name, text := range fuzzSchemaTexts {
		doc, err := strictjson.Parse([]byte(text), suiteLimits)
		if err != nil {
			panic(fmt.Sprintf("%s: %v", name, err))
		}
		c := schema.NewCompiler(nil)
		url := "http://airlock.invalid/fuzz/" + name + ".json"
		if err := c.AddResource(url, doc); err != nil {
			panic(fmt.Sprintf("%s: %v", name, err))
		}
		s, err := c.Compile(url)
		if err != nil {
			panic(fmt.Sprintf("%s: %v", name, err))
		}
		out = append(out, fuzzCompiled(name, s))
	}
	return out, seeds
})

func fuzzCompiled(name string, sch *jsonschema.Schema) *compiledSchema {
	vd, err := compileOurs(sch)
	if err != nil {
		panic(fmt.Sprintf("%s: %v", name, err))
	}
	return &compiledSchema{name: name, s: sch, vd: vd, docs: resources(sch)}
}

// FuzzDifferential parses the fuzzer's bytes as the gate does (strictjson,
// default limits) and validates the document against every schema of
// loadFuzzSchemas with v6 and with the compiled validator: the verdicts
// must agree, the compiled validator must not panic, and a refusal of both
// must describe itself truthfully. The seeds are testdata/fuzz/
// FuzzDifferential and the bundled fixtures' values.
func FuzzDifferential(f *testing.F) {
	schemas, seeds := loadFuzzSchemas()
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := strictjson.Parse(data, strictjson.Limits{})
		if err != nil {
			return
		}
		for _, cs := range schemas {
			ref, got := runOracle(cs.s, v), runOurs(cs.vd, v)
			switch {
			case got.out == crashed || got.out == inconsistent:
				t.Fatalf("%s: the compiled validator: %s on %s", cs.name, got, data)
			case got.out != ref.out:
				t.Fatalf("%s: the compiled validator says %s, v6 %s, on %s", cs.name, got, ref, data)
			case got.out == invalid:
				// The check is calibrated on v6's refusals: hold ours to
				// it where v6's passes.
				if checkFailure(ref.failure, v, cs.docs, 1) != "" {
					continue
				}
				if msg := checkFailure(got.failure, v, cs.docs, 1); msg != "" {
					t.Fatalf("%s: ours: %s, on %s", cs.name, msg, data)
				}
			}
		}
	})
}
