package schema

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strings"

	"github.com/airlockdev/airlock/jsonpointer"
)

// Dialect is the only JSON Schema dialect a contract's schema files may
// declare with $schema (a trailing "#" is accepted); a file without
// $schema is read in it too.
const Dialect = "https://json-schema.org/draft/2020-12/schema"

// otherDialects are the metaschemas jsonschema v6 bundles besides Dialect.
var otherDialects = []string{
	"http://json-schema.org/draft-04/schema", "http://json-schema.org/draft-06/schema",
	"http://json-schema.org/draft-07/schema", "https://json-schema.org/draft/2019-09/schema",
}

// finding is one thing load refuses in a schema file: the RFC 6901
// pointer of the offending keyword (or value) in the file, and what was
// found and what to write instead.
type finding struct {
	Pointer string
	Msg     string
	// Err, when set, is wrapped by the error reporting the problem too
	// (ErrOutsideContract for a $schema no one bundles).
	Err error
}

// keyword says how the strict walk treats a keyword's value.
type keyword int

const (
	kwData        keyword = iota // data or checked by the metaschema only
	kwSchema                     // one subschema
	kwSchemaArray                // an array of subschemas
	kwSchemaMap                  // an object of subschemas by name
	kwPatternMap                 // patternProperties: subschemas by regexp
	kwCount                      // a non-negative integer the validator reads as an int
	kwPattern                    // a regexp
	kwFormat                     // a format name
	kwDialect                    // $schema
	kwExclusive                  // exclusiveMinimum, exclusiveMaximum
	kwVocabulary                 // $vocabulary
)

// keywords are every keyword JSON Schema 2020-12 defines (Core §8 and §10,
// Validation §6 to §9), by how the walk treats its value.
var keywords = map[string]keyword{
	// core
	"$schema": kwDialect, "$id": kwData, "$ref": kwData, "$anchor": kwData,
	"$dynamicRef": kwData, "$dynamicAnchor": kwData, "$vocabulary": kwVocabulary,
	"$comment": kwData, "$defs": kwSchemaMap,
	// applicator
	"prefixItems": kwSchemaArray, "items": kwSchema, "contains": kwSchema,
	"additionalProperties": kwSchema, "properties": kwSchemaMap,
	"patternProperties": kwPatternMap, "dependentSchemas": kwSchemaMap,
	"propertyNames": kwSchema, "if": kwSchema, "then": kwSchema, "else": kwSchema,
	"allOf": kwSchemaArray, "anyOf": kwSchemaArray, "oneOf": kwSchemaArray, "not": kwSchema,
	// unevaluated
	"unevaluatedItems": kwSchema, "unevaluatedProperties": kwSchema,
	// validation
	"type": kwData, "const": kwData, "enum": kwData, "multipleOf": kwData,
	"maximum": kwData, "exclusiveMaximum": kwExclusive, "minimum": kwData,
	"exclusiveMinimum": kwExclusive, "maxLength": kwCount, "minLength": kwCount,
	"pattern": kwPattern, "maxItems": kwCount, "minItems": kwCount,
	"uniqueItems": kwData, "maxContains": kwCount, "minContains": kwCount,
	"maxProperties": kwCount, "minProperties": kwCount, "required": kwData,
	"dependentRequired": kwData,
	// meta-data (annotations)
	"title": kwData, "description": kwData, "default": kwData, "deprecated": kwData,
	"readOnly": kwData, "writeOnly": kwData, "examples": kwData,
	// format
	"format": kwFormat,
	// content (annotations: the gate does not assert content)
	"contentEncoding": kwData, "contentMediaType": kwData, "contentSchema": kwSchema,
}

// IsKeyword reports whether name is a keyword JSON Schema 2020-12 defines.
func IsKeyword(name string) bool {
	_, ok := keywords[name]
	return ok
}

// IsAnnotation reports whether name is one of the names beyond JSON Schema 2020-12 a schema may carry
// with no effect on any verdict (a documented list): "example" (OpenAPI's singular form) and
// every name starting with "x-" (OpenAPI's extensions). Their values are
// data and are not looked into. (The annotations 2020-12 itself defines —
// title, description, default, examples, deprecated, readOnly, writeOnly,
// $comment, contentEncoding, contentMediaType, contentSchema — are
// keywords like any other.)
func IsAnnotation(name string) bool {
	return name == "example" || strings.HasPrefix(name, "x-")
}

// replaced are keywords of other dialects with their 2020-12 spelling.
var replaced = map[string]string{
	"definitions":      `"$defs" (draft-07's "definitions" is not a 2020-12 keyword)`,
	"dependencies":     `"dependentRequired" (for a list of names) or "dependentSchemas" (for a schema)`,
	"additionalItems":  `"items" next to "prefixItems" (2020-12 renamed them)`,
	"$recursiveRef":    `"$dynamicRef" (2019-09's "$recursiveRef" is not a 2020-12 keyword)`,
	"$recursiveAnchor": `"$dynamicAnchor" (2019-09's "$recursiveAnchor" is not a 2020-12 keyword)`,
	"id":               `"$id"`,
}

const importNote = " (airlock import openapi rewrites it when it imports a description; see docs/import.md)"

// checker walks the schema documents of one contract. Its pattern budget
// spans every document it checks.
type checker struct {
	// formats judges a format name; nil means CheckFormatName.
	formats func(name string) error
	// patternInsts is the program size of the patterns checked so far.
	patternInsts int
}

// checked is what the walk of one document found.
type checked struct {
	// schemas holds the pointer of every schema position walked: the
	// root and every subschema reached through a keyword.
	schemas map[string]bool
	// dynamic holds the pointers of the schema objects with a string
	// $dynamicAnchor.
	dynamic  []string
	problems []finding
}

// check walks doc, a parsed schema file whose root is a schema, over
// schema positions only (never into the data of const, enum, default,
// examples or an annotation), in a fixed order (members sorted by name).
func (c *checker) check(doc any) *checked {
	out := &checked{schemas: map[string]bool{}}
	c.walk(out, doc, "")
	return out
}

func (c *checker) walk(out *checked, v any, ptr string) {
	out.schemas[ptr] = true
	obj, ok := v.(map[string]any)
	if !ok {
		return // true, false, or a value the metaschema refuses
	}
	if _, ok := obj["$dynamicAnchor"].(string); ok {
		out.dynamic = append(out.dynamic, ptr)
	}
	problem := func(p, format string, args ...any) {
		out.problems = append(out.problems, finding{Pointer: p, Msg: fmt.Sprintf(format, args...)})
	}
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		val := obj[name]
		at := ptr + "/" + jsonpointer.EscapeToken(name)
		kind, known := keywords[name]
		if !known {
			if !IsAnnotation(name) {
				problem(at, "%s", unknownKeyword(name, obj))
			}
			continue
		}
		switch kind {
		case kwSchema:
			if name == "items" {
				if _, isArray := val.([]any); isArray {
					problem(at, `"items" holds one schema in JSON Schema 2020-12; an array of schemas (one per position) is "prefixItems"`)
					continue
				}
			}
			if _, hasIf := obj["if"]; (name == "then" || name == "else") && !hasIf {
				problem(at, `%q without "if" is ignored by the validator (JSON Schema Core 2020-12 §10.2.2.2); add the "if" or remove it`, name)
			}
			c.walk(out, val, at)
		case kwSchemaArray:
			if arr, ok := val.([]any); ok {
				for i, s := range arr {
					c.walk(out, s, fmt.Sprintf("%s/%d", at, i))
				}
			}
		case kwSchemaMap, kwPatternMap:
			m, ok := val.(map[string]any)
			if !ok {
				continue
			}
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				kat := at + "/" + jsonpointer.EscapeToken(k)
				if kind == kwPatternMap {
					c.pattern(out, kat, k)
				}
				c.walk(out, m[k], kat)
			}
		case kwCount:
			if msg := countProblem(name, val); msg != "" {
				problem(at, "%s", msg)
			}
			if _, has := obj["contains"]; (name == "minContains" || name == "maxContains") && !has {
				problem(at, `%q without "contains" is ignored by the validator (JSON Schema Validation 2020-12 §6.4.4); add the "contains" or remove it`, name)
			}
		case kwPattern:
			if s, ok := val.(string); ok {
				c.pattern(out, at, s)
			}
		case kwFormat:
			if s, ok := val.(string); ok {
				check := c.formats
				if check == nil {
					check = CheckFormatName
				}
				if err := check(s); err != nil {
					problem(at, "%v", err)
				}
			}
		case kwDialect:
			if s, ok := val.(string); !ok || strings.TrimSuffix(s, "#") != Dialect {
				problem(at, "$schema %s: contracts are JSON Schema 2020-12 only; write %q or leave $schema out", jsonText(val), Dialect)
				if !slices.Contains(otherDialects, strings.TrimSuffix(s, "#")) {
					// The compiler would have to fetch it.
					out.problems[len(out.problems)-1].Err = ErrOutsideContract
				}
			}
		case kwExclusive:
			if b, ok := val.(bool); ok {
				bound := strings.ToLower(strings.TrimPrefix(name, "exclusive")) // "minimum", "maximum"
				if !b {
					problem(at, "a boolean %q is OpenAPI 3.0 (draft 4), not JSON Schema 2020-12: remove %q: false and keep %q%s", name, name, bound, importNote)
				} else if n, ok := obj[bound]; ok {
					problem(at, "a boolean %q is OpenAPI 3.0 (draft 4), not JSON Schema 2020-12, where it is a number: replace %q: %s and %q: true with %q: %s%s", name, bound, jsonText(n), name, name, jsonText(n), importNote)
				} else {
					problem(at, "a boolean %q is OpenAPI 3.0 (draft 4), not JSON Schema 2020-12, where it is a number: write %q: <the bound>%s", name, name, importNote)
				}
			}
		case kwVocabulary:
			problem(at, `"$vocabulary" only has an effect in a metaschema, and contracts use the JSON Schema 2020-12 metaschema as it is; remove it`)
		}
	}
}

// pattern checks one regular expression against the bounds and the
// contract's budget.
func (c *checker) pattern(out *checked, at, expr string) {
	_, n, err := CompilePattern(expr)
	if err != nil {
		msg := err.Error()
		if len(msg) > 300 { // RE2 quotes the rest of the pattern
			msg = strings.ToValidUTF8(msg[:300], "") + "…"
		}
		out.problems = append(out.problems, finding{Pointer: at, Msg: "pattern not accepted: " + msg})
		return
	}
	c.patternInsts += n
	if c.patternInsts > MaxContractPatternInsts {
		out.problems = append(out.problems, finding{Pointer: at, Msg: fmt.Sprintf(
			"the contract's patterns compile to more than %d instructions together (this one adds %d): a member name matched against each of them would cost more than %d steps per byte", MaxContractPatternInsts, n, 2*MaxContractPatternInsts)})
	}
}

// unknownKeyword says what is wrong with a name JSON Schema 2020-12 does
// not define, in the schema object obj.
func unknownKeyword(name string, obj map[string]any) string {
	switch name {
	case "nullable":
		if b, ok := obj[name].(bool); ok && !b {
			return `"nullable" is OpenAPI, not JSON Schema 2020-12, and the validator ignores it: remove "nullable": false (it is the default)` + importNote
		}
		return `"nullable" is OpenAPI, not JSON Schema 2020-12, and the validator ignores it (so null would be refused): ` + nullableFix(obj) + importNote
	case "discriminator":
		prop := "<propertyName>"
		if d, ok := obj[name].(map[string]any); ok {
			if p, ok := d["propertyName"].(string); ok {
				prop = p
			}
		}
		return fmt.Sprintf(`"discriminator" is OpenAPI, not JSON Schema 2020-12, and the validator ignores it: use "oneOf" whose branches each pin the property with "const" ({"properties": {%q: {"const": "<value>"}}, "required": [%q]})%s`, prop, prop, importNote)
	}
	if fix, ok := replaced[name]; ok {
		return fmt.Sprintf("%q is not a JSON Schema 2020-12 keyword and the validator ignores it: write %s", name, fix)
	}
	msg := fmt.Sprintf("unknown keyword %q: JSON Schema 2020-12 does not define it, so the validator would ignore it", name)
	if near := nearestKeyword(name); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	} else {
		msg += fmt.Sprintf(`; an annotation must be spelled "x-%s" (see docs/contracts.md, "What load refuses")`, name)
	}
	return msg
}

// nullableFix spells the 2020-12 form of "nullable": true for obj.
func nullableFix(obj map[string]any) string {
	switch t := obj["type"].(type) {
	case string:
		return fmt.Sprintf(`write "type": [%q, "null"]`, t)
	case []any:
		return fmt.Sprintf(`add "null" to "type": %s`, jsonText(append(slices.Clone(t), "null")))
	}
	if _, ok := obj["$ref"]; ok {
		return `write "anyOf": [{"$ref": …}, {"type": "null"}] in place of the "$ref"`
	}
	return `write "type": [<the type>, "null"], or add {"type": "null"} as an "anyOf" branch`
}

// nearestKeyword returns the 2020-12 keyword name spells with a different
// case or within two edits, if one is that close.
func nearestKeyword(name string) string {
	return Nearest(name, slices.Collect(maps.Keys(keywords)))
}

// Nearest returns the candidate that name spells with a different case or
// within two edits (Levenshtein, in bytes; the smallest distance, then the
// first in code point order), or "" when none is that close or name is
// shorter than 4 bytes. For "did you mean" hints.
func Nearest(name string, candidates []string) string {
	best, bestD := "", 3
	for _, k := range candidates {
		d := editDistance(strings.ToLower(name), strings.ToLower(k))
		if d == 0 {
			d = 1 // same letters, other case
		}
		if k != name && (d < bestD || d == bestD && k < best) {
			best, bestD = k, d
		}
	}
	if bestD > 2 || len(name) < 4 {
		return ""
	}
	return best
}

// ByDistance returns candidates ordered by their edit distance to name,
// ignoring case (Levenshtein, in bytes), then in code point order: the
// closest first, for the lists of "did you mean" errors.
func ByDistance(name string, candidates []string) []string {
	out := slices.Clone(candidates)
	d := make(map[string]int, len(out))
	for _, c := range out {
		d[c] = editDistance(strings.ToLower(name), strings.ToLower(c))
	}
	slices.SortStableFunc(out, func(a, b string) int {
		if d[a] != d[b] {
			return d[a] - d[b]
		}
		return strings.Compare(a, b)
	})
	return out
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// maxCount is the largest value of an integer-valued keyword the validator
// represents: it stores them as Go ints (jsonschema v6.0.3
// objCompiler.intVal keeps the low bits of a larger value, so
// 9223372036854775808 becomes -9223372036854775808 and 2^64+1 becomes 1).
const maxCount = math.MaxInt

// countProblem checks the value of an integer-valued keyword (minLength,
// maxLength, minItems, maxItems, minProperties, maxProperties,
// minContains, maxContains): a JSON number with an integer value from 0
// to maxCount (1.0 and 1e2 count as integers, JSON Schema Core 2020-12
// §6.3). It returns "" when the value is fine.
func countProblem(name string, v any) string {
	text := ""
	switch n := v.(type) {
	case json.Number:
		text = string(n)
	case float64:
		text = fmt.Sprint(n)
	default:
		return fmt.Sprintf("%q must be a non-negative integer, found %s", name, jsonText(v))
	}
	if e := strings.IndexAny(text, "eE"); e >= 0 && len(strings.TrimLeft(text[e+1:], "+-0")) > 4 {
		return fmt.Sprintf("%q is %s, beyond what the validator represents (at most %d)", name, text, maxCount)
	}
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		return fmt.Sprintf("%q must be a non-negative integer, found %s", name, text)
	}
	switch {
	case !r.IsInt():
		return fmt.Sprintf("%q must be an integer, found %s", name, text)
	case r.Sign() < 0:
		return fmt.Sprintf("%q must not be negative, found %s", name, text)
	case !r.Num().IsInt64() || r.Num().Int64() > maxCount:
		return fmt.Sprintf("%q is %s, more than the validator represents (at most %d): it would read it as %d, silently", name, text, maxCount, int(r.Num().Int64()))
	}
	return ""
}

// jsonText renders a parsed JSON value for a message.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
