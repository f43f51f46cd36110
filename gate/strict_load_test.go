package gate_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/strictjson"
)

// Load is strict and total (issue 10, part 1): each schema below compiles
// with jsonschema v6.0.3 into something other than what it says — a keyword
// ignored, a number wrapped, a loop — and load refuses it with the file,
// line, column and JSON Pointer of the keyword.

const strictAgentSchema = `{"type": "object", "additionalProperties": false, "properties": {"id": {"type": "string"}}}`

// at returns the 1-based line and byte column of the first occurrence of
// marker in text.
func at(text, marker string) (line, col int) {
	GinkgoHelper()
	i := strings.Index(text, marker)
	Expect(i).To(BeNumerically(">=", 0), "marker %q not in the schema", marker)
	line = 1 + strings.Count(text[:i], "\n")
	return line, i - strings.LastIndex(text[:i], "\n")
}

// libraryCompile compiles doc the way a plain jsonschema v6.0.3 compiler
// with format assertion would, without airlock's strict load: what the
// contract used to mean.
func libraryCompile(doc string) *jsonschema.Schema {
	GinkgoHelper()
	v, err := strictjson.Parse([]byte(doc), strictjson.Limits{MaxDepth: 512, MaxNumberLength: 512})
	Expect(err).NotTo(HaveOccurred())
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	Expect(c.AddResource("mem:///s.json", v)).To(Succeed())
	s, err := c.Compile("mem:///s.json")
	Expect(err).NotTo(HaveOccurred(), "the library compiles it: the problem is silent")
	return s
}

func parseJSON(text string) any {
	GinkgoHelper()
	v, err := strictjson.Parse([]byte(text), strictjson.Limits{})
	Expect(err).NotTo(HaveOccurred())
	return v
}

var _ = Describe("strict schema load", func() {
	var root string
	BeforeEach(func() { root = GinkgoT().TempDir() })

	// loadUpstream loads the minimal contract with upstream as its upstream
	// schema (and extra files beside it).
	loadUpstream := func(upstream string, extra map[string]string) (string, error) {
		files := map[string]string{
			"contract.yaml":        minimalManifest,
			"agent.schema.json":    strictAgentSchema,
			"upstream.schema.json": upstream,
		}
		for k, v := range extra {
			files[k] = v
		}
		dir := writeContract(root, "probe", files)
		_, err := gate.LoadDir(dir, gate.Options{})
		return dir, err
	}

	// expectRefusedAt checks the configuration error: file, line and column
	// of marker in text, the keyword's pointer, and a message fragment.
	expectRefusedAt := func(err error, file, text, marker, pointer, msg string) {
		GinkgoHelper()
		var ce *gate.ConfigError
		Expect(errors.As(err, &ce)).To(BeTrue(), "want a *gate.ConfigError, got %T: %v", err, err)
		Expect(errors.Is(err, gate.ErrNotStrict)).To(BeTrue(), "%v", err)
		line, col := at(text, marker)
		Expect(ce.File).To(Equal(file))
		Expect([]int{ce.Line, ce.Column}).To(Equal([]int{line, col}), "%v", err)
		Expect(ce.Key).To(Equal(pointer))
		Expect(ce.Msg).To(ContainSubstring(msg))
		Expect(err.Error()).To(HavePrefix(fmt.Sprintf("%s:%d:%d: %s: ", file, line, col, pointer)))
	}

	Describe("a silent no-op becomes a configuration error", func() {
		DescribeTable("with file, line, column and pointer",
			func(schema, marker, pointer, msg, instance string, libraryAdmits bool) {
				// What the schema meant to the validator before: the keyword
				// was ignored (or wrapped), so this instance was judged
				// against the schema without it.
				if instance != "" {
					err := libraryCompile(schema).Validate(parseJSON(instance))
					if libraryAdmits {
						Expect(err).NotTo(HaveOccurred(), "the library admits %s", instance)
					} else {
						Expect(err).To(HaveOccurred(), "the library refuses %s", instance)
					}
				}
				dir, err := loadUpstream(schema, nil)
				expectRefusedAt(err, filepath.Join(dir, "upstream.schema.json"), schema, marker, pointer, msg)
			},
			Entry("a misspelled format admitted any string", `{
  "type": "object",
  "properties": {
    "when": {"type": "string", "format": "date-tme"}
  }
}`, `"format"`, "/properties/when/format", `unknown format "date-tme"`, `{"when": "next tuesday"}`, true),
			Entry("OpenAPI nullable was ignored, so null was refused", `{
  "type": "object",
  "properties": {
    "note": {"type": "string",
             "nullable": true}
  }
}`, `"nullable"`, "/properties/note/nullable", `write "type": ["string", "null"]`, `{"note": null}`, false),
			Entry("format int64 did not bound an id", `{
  "type": "object",
  "properties": {"id": {"type": "integer", "format": "int64"}}
}`, `"format"`, "/properties/id/format", `"minimum": -9223372036854775808, "maximum": 9223372036854775807`, `{"id": 1e300}`, true),
			Entry("format int32 names its bounds", `{"properties": {"n": {"type": "integer", "format": "int32"}}}`,
				`"format"`, "/properties/n/format", `"minimum": -2147483648, "maximum": 2147483647`, `{"n": 2147483648}`, true),
			Entry("format double names its bounds", `{"properties": {"n": {"format": "double"}}}`,
				`"format"`, "/properties/n/format", `"type": "number", "minimum": -1.7976931348623157e308`, "", false),
			Entry("OpenAPI discriminator was ignored", `{
  "oneOf": [{"$ref": "#/$defs/cat"}, {"$ref": "#/$defs/dog"}],
  "discriminator": {"propertyName": "kind"},
  "$defs": {"cat": {"type": "object"}, "dog": {"type": "object"}}
}`, `"discriminator"`, "/discriminator", `"oneOf" whose branches each pin the property with "const" ({"properties": {"kind": {"const"`, `{"kind": "cat"}`, false),
			Entry("a misspelled keyword bounded nothing", `{
  "type": "string",
  "maxLenght": 3
}`, `"maxLenght"`, "/maxLenght", `unknown keyword "maxLenght"`, `"far too long"`, true),
			Entry("an unknown keyword deep in $defs, items and allOf", `{
  "$defs": {
    "a": {"type": "array", "items": {"allOf": [{"type": "string", "patern": "^x"}]}}
  },
  "$ref": "#/$defs/a"
}`, `"patern"`, "/$defs/a/items/allOf/0/patern", `did you mean "pattern"?`, `["y"]`, true),
			Entry("draft-07 definitions", `{"definitions": {"a": {"type": "string"}}}`,
				`"definitions"`, "/definitions", `write "$defs"`, "", false),
			Entry("then without if", `{"type": "object", "then": {"required": ["id"]}}`,
				`"then"`, "/then", `"then" without "if" is ignored`, `{}`, true),
			Entry("maxContains without contains", `{"type": "array", "maxContains": 1}`,
				`"maxContains"`, "/maxContains", `"maxContains" without "contains" is ignored`, `[1, 2, 3]`, true),
			Entry("idn-hostname has no checker", `{"type": "string", "format": "idn-hostname"}`,
				`"format"`, "/format", `no checker`, `"-not a host-"`, true),
			Entry("a $ref into the value of const", `{
  "$defs": {"a": {"const": {"type": "string", "nulable": true}}},
  "properties": {"id": {"$ref": "#/$defs/a/const"}}
}`, `"$ref"`, "/properties/id/$ref", `$ref reaches upstream.schema.json#/$defs/a/const, which is not a schema`, "", false),
		)

		It("refuses OpenAPI 3.0's boolean exclusiveMinimum with its numeric form (and says where; the metaschema said nowhere)", func() {
			schema := `{
  "type": "number",
  "minimum": 0,
  "exclusiveMinimum": true
}`
			dir, err := loadUpstream(schema, nil)
			expectRefusedAt(err, filepath.Join(dir, "upstream.schema.json"), schema, `"exclusiveMinimum"`, "/exclusiveMinimum",
				`replace "minimum": 0 and "exclusiveMinimum": true with "exclusiveMinimum": 0`)
			Expect(err.Error()).To(ContainSubstring("airlock import openapi"))
		})

		It("lists the formats the gate asserts", func() {
			dir, err := loadUpstream(`{"format": "colour"}`, nil)
			expectRefusedAt(err, filepath.Join(dir, "upstream.schema.json"), `{"format": "colour"}`, `"format"`, "/format",
				"known formats: date, date-time, duration, email, hostname, ipv4, ipv6, iri, iri-reference, json-pointer, period, regex, relative-json-pointer, semver, time, uri, uri-reference, uri-template, uuid")
		})

		It("counts the other problems of the file", func() {
			_, err := loadUpstream(`{"nullable": true, "x-ok": 1, "zzz": 1, "yyy": 2}`, nil)
			Expect(err).To(MatchError(ContainSubstring("(and 2 more problems in this file)")))
		})

		It("checks the agent schema and every file a $ref reaches", func() {
			agent := `{"type": "object", "properties": {"id": {"type": "string", "nullable": true}}}`
			files := map[string]string{"contract.yaml": minimalManifest, "agent.schema.json": agent, "upstream.schema.json": `{"type": "object"}`}
			dir := writeContract(root, "probe", files)
			_, err := gate.LoadDir(dir, gate.Options{})
			expectRefusedAt(err, filepath.Join(dir, "agent.schema.json"), agent, `"nullable"`, "/properties/id/nullable", "OpenAPI")

			defs := `{"$defs": {"id": {"type": "string", "formt": "uuid"}}}`
			dir, err = loadUpstream(`{"properties": {"id": {"$ref": "defs.schema.json#/$defs/id"}}}`, map[string]string{"defs.schema.json": defs})
			expectRefusedAt(err, filepath.Join(dir, "defs.schema.json"), defs, `"formt"`, "/$defs/id/formt", `did you mean "format"?`)
		})

		It("places what the 2020-12 metaschema refuses at its line and column too", func() {
			schema := `{
  "type": "object",
  "properties": {
    "n": {"type": "integer", "minimum": "0"}
  }
}`
			dir, err := loadUpstream(schema, nil)
			var ce *gate.ConfigError
			Expect(errors.As(err, &ce)).To(BeTrue(), "%v", err)
			line, col := at(schema, `"minimum"`)
			Expect(ce.File).To(Equal(filepath.Join(dir, "upstream.schema.json")))
			Expect([]int{ce.Line, ce.Column}).To(Equal([]int{line, col}))
			Expect(ce.Key).To(Equal("/properties/n/minimum"))
			Expect(ce.Msg).To(Equal("not a valid JSON Schema 2020-12: got string, want number"))
		})

		It("refuses a $schema other than 2020-12", func() {
			schema := `{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}`
			dir, err := loadUpstream(schema, nil)
			expectRefusedAt(err, filepath.Join(dir, "upstream.schema.json"), schema, `"$schema"`, "/$schema", "JSON Schema 2020-12 only")
			Expect(errors.Is(err, gate.ErrOutsideContract)).To(BeFalse(), "draft-07 is bundled with the validator")
		})
	})

	Describe("allowed annotations and data", func() {
		It("loads x-*, example and the 2020-12 annotations, and never looks into data", func() {
			_, err := loadUpstream(`{
  "$comment": "vendor schema",
  "title": "t", "description": "d", "deprecated": false, "readOnly": true, "writeOnly": false,
  "x-vendor": {"nullable": true, "whatever": [1]},
  "example": {"nullable": true},
  "examples": [{"nullable": true}],
  "default": {"discriminator": 1},
  "contentMediaType": "application/json", "contentEncoding": "base64",
  "contentSchema": {"type": "object"},
  "type": "object",
  "properties": {
    "id": {"const": {"format": "date-tme"}},
    "kind": {"enum": [{"maxLenght": 1}, "x"]}
  }
}`, nil)
			Expect(err).NotTo(HaveOccurred())
		})

		It("walks contentSchema as a schema", func() {
			schema := `{"contentSchema": {"nullable": true}}`
			dir, err := loadUpstream(schema, nil)
			expectRefusedAt(err, filepath.Join(dir, "upstream.schema.json"), schema, `"nullable"`, "/contentSchema/nullable", "OpenAPI")
		})
	})

	Describe("integer-valued keywords the validator cannot represent", func() {
		// jsonschema v6.0.3 reads them as int(big.Int.Int64()): the low 64
		// bits, so a huge minimum wraps to a negative or zero one (fail-open)
		// and 2^64+1 becomes 1 (fail-closed).
		DescribeTable("are configuration errors, never wrapped",
			func(keyword, value, instance string, libraryAdmits bool, msg string) {
				schema := fmt.Sprintf("{\n  \"type\": [\"string\", \"array\", \"object\"],\n  %q: %s\n}", keyword, value)
				if instance != "" {
					err := libraryCompile(schema).Validate(parseJSON(instance))
					if libraryAdmits {
						Expect(err).NotTo(HaveOccurred(), "the library admits %s under %s: %s", instance, keyword, value)
					} else {
						Expect(err).To(HaveOccurred(), "the library refuses %s under %s: %s", instance, keyword, value)
					}
				}
				dir, err := loadUpstream(schema, nil)
				expectRefusedAt(err, filepath.Join(dir, "upstream.schema.json"), schema, `"`+keyword+`"`, "/"+keyword, msg)
			},
			Entry(`minLength 2^63 admitted ""`, "minLength", "9223372036854775808", `""`, true, "would read it as -9223372036854775808"),
			Entry("minProperties 2^64 admitted {}", "minProperties", "18446744073709551616", `{}`, true, "would read it as 0"),
			Entry("minItems 1e300 admitted []", "minItems", "1e300", `[]`, true, "would read it as 0"),
			Entry("maxItems 2^64+1 became 1", "maxItems", "18446744073709551617", `[1, 2]`, false, "would read it as 1"),
			Entry("maxLength 2^64+1 became 1", "maxLength", "18446744073709551617", `"ab"`, false, "would read it as 1"),
			Entry("maxProperties 1e300", "maxProperties", "1e300", `{"a": 1}`, false, "at most 9223372036854775807"),
			Entry("minContains 2^63", "minContains", "9223372036854775808", "", false, "at most 9223372036854775807"),
			Entry("maxContains 2^64", "maxContains", "18446744073709551616", "", false, "at most 9223372036854775807"),
			Entry("a negative minLength", "minLength", "-1", "", false, "must not be negative"),
			Entry("a fractional minItems", "minItems", "1.5", "", false, "must be an integer, found 1.5"),
			Entry("a string maxLength", "maxLength", `"5"`, "", false, `must be a non-negative integer, found "5"`),
		)

		It("loads the largest value the validator represents, and integers written as 1.0 or 1e2", func() {
			_, err := loadUpstream(`{"maxLength": 9223372036854775807, "minLength": 1.0, "maxItems": 1e2, "minItems": 0}`, nil)
			Expect(err).NotTo(HaveOccurred())
		})
	})

	Describe("references that cannot terminate", func() {
		DescribeTable("are configuration errors at the keyword that closes the loop",
			func(schema, marker, pointer, msg string) {
				// Before: the validator met the same schema at the same
				// instance location again and refused everything.
				Expect(libraryCompile(schema).Validate(parseJSON(`{}`))).To(MatchError(ContainSubstring("cycle")))
				dir, err := loadUpstream(schema, nil)
				expectRefusedAt(err, filepath.Join(dir, "upstream.schema.json"), schema, marker, pointer, msg)
			},
			Entry(`{"$ref": "#"}`, `{"$ref": "#"}`, `"$ref"`, "/$ref", "references loop without descending into the value"),
			Entry("a → b → a through allOf", `{
  "$defs": {
    "a": {"$ref": "#/$defs/b"},
    "b": {"type": "object", "allOf": [{"$ref": "#/$defs/a"}]}
  },
  "$ref": "#/$defs/a"
}`, `"$ref": "#/$defs/a"`, "/$defs/b/allOf/0/$ref",
				"(upstream.schema.json#/$defs/a/$ref → upstream.schema.json#/$defs/b/allOf/0 → upstream.schema.json#/$defs/b/allOf/0/$ref → back to upstream.schema.json#/$defs/a)"),
			Entry("$dynamicRef to itself", `{"$dynamicAnchor": "node", "$dynamicRef": "#node"}`, `"$dynamicRef"`, "/$dynamicRef", "references loop"),
			Entry("through if/then", `{"$defs": {"a": {"if": true, "then": {"$ref": "#/$defs/a"}}}, "$ref": "#/$defs/a"}`,
				`"$ref": "#/$defs/a"}}`, "/$defs/a/then/$ref", "references loop"),
		)

		It("follows a loop across files", func() {
			other := `{"$ref": "upstream.schema.json"}`
			schema := `{"type": "object", "$ref": "other.schema.json"}`
			dir, err := loadUpstream(schema, map[string]string{"other.schema.json": other})
			expectRefusedAt(err, filepath.Join(dir, "other.schema.json"), other, `"$ref"`, "/$ref", "references loop")
		})

		It("loads recursion that descends into the value: a tree, statically and through $dynamicRef", func() {
			for _, schema := range []string{
				`{"type": "object", "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#"}}}}`,
				`{"$dynamicAnchor": "node", "type": "object", "properties": {"children": {"type": "array", "items": {"$dynamicRef": "#node"}}}}`,
				`{"$defs": {"node": {"anyOf": [{"type": "string"}, {"type": "object", "additionalProperties": {"$ref": "#/$defs/node"}}]}}, "$ref": "#/$defs/node"}`,
			} {
				dir, err := loadUpstream(schema, nil)
				Expect(err).NotTo(HaveOccurred(), schema)
				c, err := gate.LoadDir(dir, gate.Options{})
				Expect(err).NotTo(HaveOccurred())
				Expect(c).NotTo(BeNil())
			}
		})
	})

	Describe("patterns", func() {
		DescribeTable("past their bounds are configuration errors with file and line",
			func(schema, marker, pointer, msg string) {
				dir, err := loadUpstream(schema, nil)
				expectRefusedAt(err, filepath.Join(dir, "upstream.schema.json"), schema, marker, pointer, msg)
			},
			Entry("nested counted repetition past RE2's 1000", "{\n  \"type\": \"string\",\n  \"pattern\": \"(?:[a-y]{10}){1000}z\"\n}",
				`"pattern"`, "/pattern", "invalid repeat count"),
			Entry("a program past 5,000 instructions", "{\n  \"pattern\": \""+strings.Repeat(`(?:[a-y]{10}){100}`, 6)+"z\"\n}",
				`"pattern"`, "/pattern", "compiles to 6003 instructions, more than the limit of 5000"),
			Entry("a patternProperties key", "{\n  \"patternProperties\": {\"^a\": true, \""+strings.Repeat(`[a-y]{1000}`, 6)+"\": true}\n}",
				`"[a-y]`, "/patternProperties/"+strings.Repeat(`[a-y]{1000}`, 6), "instructions, more than the limit of 5000"),
			Entry("an 840 KB alternation", "{\n  \"type\": \"string\",\n  \"pattern\": \""+alternation(840_000)+"\"\n}",
				`"pattern"`, "/pattern", "longer than the limit of 16384"),
		)

		It("names an 840 KB patternProperties key by its first 256 bytes", func() {
			key := alternation(840_000)
			schema := "{\n  \"patternProperties\": {\n    \"" + key + "\": {\"type\": \"string\"}}\n}"
			_, err := loadUpstream(schema, nil)
			var ce *gate.ConfigError
			Expect(errors.As(err, &ce)).To(BeTrue(), "%v", err)
			Expect([]int{ce.Line, ce.Column}).To(Equal([]int{3, 5}))
			Expect(ce.Key).To(Equal("/patternProperties/" + key[:256] + "…"))
			Expect(ce.Msg).To(ContainSubstring("longer than the limit of 16384"))
			Expect(len(err.Error())).To(BeNumerically("<", 1024))
		})

		It("bounds all the patterns of a contract together", func() {
			var props []string
			for i := range 13 {
				props = append(props, fmt.Sprintf(`"p%02d": {"pattern": "^%s$"}`, i, strings.Repeat(`[a-y]{1000}`, 4)))
			}
			schema := "{\"properties\": {\n" + strings.Join(props, ",\n") + "\n}}"
			dir, err := loadUpstream(schema, nil)
			expectRefusedAt(err, filepath.Join(dir, "upstream.schema.json"), schema, `"pattern": "^[a-y]{1000}[a-y]{1000}[a-y]{1000}[a-y]{1000}$"}`+"\n}}", "/properties/p12/pattern",
				"more than 50000 instructions together")
		})

		It("loads ordinary patterns", func() {
			_, err := loadUpstream(`{"type": "object", "properties": {
  "slug": {"type": "string", "pattern": "^[a-z0-9-]{1,64}$"},
  "day": {"type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}$"}
}, "patternProperties": {"^x-[a-z]+$": {"type": "string"}}}`, nil)
			Expect(err).NotTo(HaveOccurred())
		})
	})
})

// alternation returns a|b|c… of n bytes.
func alternation(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteByte('|')
		}
		fmt.Fprintf(&b, "w%07d", i)
	}
	return b.String()[:n]
}
