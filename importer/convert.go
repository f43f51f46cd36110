package importer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// The conversion of an OpenAPI schema object to JSON Schema 2020-12. The
// rules, each tested in convert_test.go:
//
//   - nullable: true (OpenAPI 3.0) adds "null" to type, and null to an
//     enum; beside allOf, anyOf, oneOf or a $ref without a type (what
//     vendors write to mean "this object or null", though 3.0.3 leaves it
//     open) it becomes anyOf [{type: null}, the schema].
//   - exclusiveMinimum/exclusiveMaximum: true (3.0) with minimum/maximum
//     become exclusiveMinimum/exclusiveMaximum: the bound (2020-12).
//   - format int32, int64: integer bounds of that width; float, double:
//     the finite range of that IEEE 754 type; a format airlock's
//     validator does not check (binary, byte, password, a vendor's own)
//     is dropped and listed, since the contract loader refuses unknown
//     formats rather than ignore them.
//   - discriminator beside oneOf/anyOf with a mapping: each branch that
//     is a $ref the mapping names gets properties {<propertyName>:
//     {const: <value>}} (enum for several) and requires the property.
//     Without a mapping nothing is added: the implicit values are the
//     components' names, which real APIs often do not send.
//   - writeOnly members are taken out of required: a response does not
//     send them (OpenAPI 3.0.3, "Fixed Fields" of the Schema Object).
//   - a pattern that Go's RE2 cannot compile (lookaround, backreferences)
//     is dropped and listed.
//   - example, externalDocs, xml, discriminator and x-* extensions are
//     dropped; unknown keywords are dropped and listed; description,
//     title, default, deprecated, readOnly, writeOnly stay as annotations.
//   - $ref to a component (components/schemas, or any named schema)
//     becomes a relative $ref to <name>.schema.json in the components
//     folder; each component is converted once, so a cycle stays a $ref.
type converter struct {
	v30     bool
	compDir string
	files   map[string]any
	byRef   map[string]string
	byPtr   map[*openapi3.Schema]string
	used    map[string]bool
	queue   []pending

	extensions, writeOnly, discriminators int
	dropped, formats, patterns            map[string]int
	notConverted                          []string
}

type pending struct {
	s    *openapi3.Schema
	file string
}

func newConverter(v30 bool, compDir string) *converter {
	return &converter{v30: v30, compDir: compDir, files: map[string]any{}, byRef: map[string]string{},
		byPtr: map[*openapi3.Schema]string{}, used: map[string]bool{},
		dropped: map[string]int{}, formats: map[string]int{}, patterns: map[string]int{}}
}

// ref converts a schema reference written in document from.
func (c *converter) ref(sr *openapi3.SchemaRef, from string) any {
	if sr == nil || sr.Value == nil {
		return map[string]any{}
	}
	if sr.Ref != "" {
		file := c.component(sr.Ref, sr.Value)
		return map[string]any{"$ref": relPath(path.Dir(from), file)}
	}
	return c.schema(sr.Value, from)
}

// componentName is what a component file may be named.
var componentName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_.-]+`) })

// component returns the file of the component a $ref names, converting
// it (once) when it is first reached.
func (c *converter) component(ref string, s *openapi3.Schema) string {
	if f, ok := c.byRef[ref]; ok {
		return f
	}
	if f, ok := c.byPtr[s]; ok {
		c.byRef[ref] = f
		return f
	}
	name := ref
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	name = strings.NewReplacer("~1", "/", "~0", "~").Replace(name)
	if u, err := url.PathUnescape(name); err == nil {
		name = u
	}
	// A name the file system cannot take as it is gets the first 8 hex
	// digits of its SHA-256: the file's name is then the same whichever
	// operation reaches the component first, and two names that clean up
	// alike (été, t) stay apart.
	raw := name
	name = strings.Trim(componentName().ReplaceAllString(name, "-"), "-.")
	if len(name) > 100 {
		name = name[:100]
	}
	if name != raw {
		sum := sha256.Sum256([]byte(raw))
		name = strings.TrimLeft(name+"-"+hex.EncodeToString(sum[:4]), "-")
	}
	// Names are compared without case: Pet and pet are one file name on
	// the file systems of macOS and Windows.
	file := path.Join(c.compDir, name+".schema.json")
	for i := 2; c.used[strings.ToLower(file)]; i++ {
		file = path.Join(c.compDir, fmt.Sprintf("%s-%d.schema.json", name, i))
	}
	c.used[strings.ToLower(file)] = true
	c.byRef[ref], c.byPtr[s] = file, file
	c.queue = append(c.queue, pending{s, file})
	return file
}

// drain converts every component reached, and those they reach.
func (c *converter) drain() {
	for len(c.queue) > 0 {
		p := c.queue[0]
		c.queue = c.queue[1:]
		c.files[p.file] = c.schema(p.s, p.file)
	}
}

// knownFormats are the formats airlock's validator checks
// (internal/schema's asserted formats).
var knownFormats = []string{"date", "date-time", "duration", "email", "hostname", "ipv4", "ipv6",
	"iri", "iri-reference", "json-pointer", "regex", "relative-json-pointer", "time", "uri",
	"uri-reference", "uri-template", "uuid"}

// widths are the bounds of OpenAPI's numeric formats (OpenAPI 3.0.3,
// "Data Types").
var widths = map[string][2]string{
	"int32":  {"-2147483648", "2147483647"},
	"int64":  {"-9223372036854775808", "9223372036854775807"},
	"float":  {"-3.4028234663852886e38", "3.4028234663852886e38"},
	"double": {"-1.7976931348623157e308", "1.7976931348623157e308"},
}

// num spells a float64 from the description as a JSON number.
func num(f float64) json.Number {
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return json.Number(strconv.FormatFloat(f, 'f', -1, 64))
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
}

// schema converts one schema object written in document from.
func (c *converter) schema(s *openapi3.Schema, from string) map[string]any {
	out := map[string]any{}
	if s.Always != nil {
		if !*s.Always {
			out["not"] = map[string]any{}
		}
		return out
	}
	var types []string
	if s.Type != nil {
		types = slices.Clone([]string(*s.Type))
	}
	var enum []any
	if s.Enum != nil {
		enum = slices.Clone(s.Enum)
	}
	wrapNull := false
	if c.v30 && s.Nullable {
		if len(types) > 0 {
			if !slices.Contains(types, "null") {
				types = append(types, "null")
			}
			if enum != nil && !slices.Contains(enum, nil) {
				enum = append(enum, nil)
			}
		} else {
			wrapNull = true
		}
	}

	// Numbers.
	min, max := "", ""
	if s.Min != nil {
		min = string(num(*s.Min))
	}
	if s.Max != nil {
		max = string(num(*s.Max))
	}
	if w, ok := widths[s.Format]; ok {
		if len(types) == 0 {
			if strings.HasPrefix(s.Format, "int") {
				types = []string{"integer"}
			} else {
				types = []string{"number"}
			}
		}
		if min == "" || s.Min != nil && *s.Min < mustFloat(w[0]) {
			min = w[0]
		}
		if max == "" || s.Max != nil && *s.Max > mustFloat(w[1]) {
			max = w[1]
		}
	} else if s.Format != "" {
		switch {
		case slices.Contains(knownFormats, s.Format):
			out["format"] = s.Format
		case s.Format == "byte":
			out["contentEncoding"] = "base64"
			c.formats[s.Format]++
		default:
			c.formats[s.Format]++
		}
	}
	if min != "" {
		if s.ExclusiveMin.IsTrue() {
			out["exclusiveMinimum"] = json.Number(min)
		} else {
			out["minimum"] = json.Number(min)
		}
	}
	if max != "" {
		if s.ExclusiveMax.IsTrue() {
			out["exclusiveMaximum"] = json.Number(max)
		} else {
			out["maximum"] = json.Number(max)
		}
	}
	if s.ExclusiveMin.Value != nil {
		out["exclusiveMinimum"] = num(*s.ExclusiveMin.Value)
	}
	if s.ExclusiveMax.Value != nil {
		out["exclusiveMaximum"] = num(*s.ExclusiveMax.Value)
	}
	if s.MultipleOf != nil {
		out["multipleOf"] = num(*s.MultipleOf)
	}

	// Strings.
	if s.MinLength > 0 {
		out["minLength"] = s.MinLength
	}
	setUint(out, "maxLength", s.MaxLength)
	if s.Pattern != "" {
		if _, err := regexp.Compile(s.Pattern); err == nil {
			out["pattern"] = s.Pattern
		} else {
			c.patterns[s.Pattern]++
		}
	}

	// Arrays.
	if s.Items != nil {
		out["items"] = c.ref(s.Items, from)
	}
	if s.MinItems > 0 {
		out["minItems"] = s.MinItems
	}
	setUint(out, "maxItems", s.MaxItems)
	if s.UniqueItems {
		out["uniqueItems"] = true
	}
	if len(s.PrefixItems) > 0 {
		out["prefixItems"] = c.refs(s.PrefixItems, from)
	}
	if s.Contains != nil {
		out["contains"] = c.ref(s.Contains, from)
	}
	setUint(out, "minContains", s.MinContains)
	setUint(out, "maxContains", s.MaxContains)
	if b := c.boolSchema(s.UnevaluatedItems, from); b != nil {
		out["unevaluatedItems"] = b
	}

	// Objects.
	if len(s.Properties) > 0 {
		out["properties"] = c.refMap(s.Properties, from)
	}
	if len(s.Required) > 0 {
		var req []any
		for _, r := range s.Required {
			if p, ok := s.Properties[r]; ok && p != nil && p.Value != nil && p.Value.WriteOnly {
				c.writeOnly++
				continue
			}
			req = append(req, r)
		}
		if len(req) > 0 {
			out["required"] = req
		}
	}
	if s.MinProps > 0 {
		out["minProperties"] = s.MinProps
	}
	setUint(out, "maxProperties", s.MaxProps)
	if b := c.boolSchema(s.AdditionalProperties, from); b != nil {
		out["additionalProperties"] = b
	}
	if len(s.PatternProperties) > 0 {
		out["patternProperties"] = c.refMap(s.PatternProperties, from)
	}
	if s.PropertyNames != nil {
		out["propertyNames"] = c.ref(s.PropertyNames, from)
	}
	if len(s.DependentRequired) > 0 {
		dr := map[string]any{}
		for k, v := range s.DependentRequired {
			dr[k] = toAnyList(v)
		}
		out["dependentRequired"] = dr
	}
	if len(s.DependentSchemas) > 0 {
		out["dependentSchemas"] = c.refMap(s.DependentSchemas, from)
	}
	if b := c.boolSchema(s.UnevaluatedProperties, from); b != nil {
		out["unevaluatedProperties"] = b
	}

	// Applicators.
	if len(s.AllOf) > 0 {
		out["allOf"] = c.refs(s.AllOf, from)
	}
	if len(s.AnyOf) > 0 {
		out["anyOf"] = c.discriminated(s, s.AnyOf, from)
	}
	if len(s.OneOf) > 0 {
		out["oneOf"] = c.discriminated(s, s.OneOf, from)
	}
	if s.Discriminator != nil && len(s.AnyOf)+len(s.OneOf) == 0 {
		c.notConverted = append(c.notConverted, "a discriminator without oneOf/anyOf (inheritance through allOf) is not converted: "+s.Discriminator.PropertyName)
	}
	if s.Not != nil {
		out["not"] = c.ref(s.Not, from)
	}
	if s.If != nil {
		out["if"] = c.ref(s.If, from)
	}
	if s.Then != nil {
		out["then"] = c.ref(s.Then, from)
	}
	if s.Else != nil {
		out["else"] = c.ref(s.Else, from)
	}
	if len(s.Defs) > 0 {
		out["$defs"] = c.refMap(s.Defs, from)
	}

	// Values and annotations.
	if enum != nil {
		out["enum"] = enum
	}
	if s.Const != nil {
		out["const"] = s.Const
	}
	for k, v := range map[string]string{"title": s.Title, "description": s.Description, "$comment": s.Comment,
		"contentMediaType": s.ContentMediaType, "contentEncoding": s.ContentEncoding} {
		if v != "" {
			out[k] = v
		}
	}
	if s.Default != nil {
		out["default"] = s.Default
	}
	for k, v := range map[string]bool{"deprecated": s.Deprecated, "readOnly": s.ReadOnly, "writeOnly": s.WriteOnly} {
		if v {
			out[k] = true
		}
	}
	if s.ContentSchema != nil {
		out["contentSchema"] = c.ref(s.ContentSchema, from)
	}
	for k, v := range map[string]string{"$id": s.SchemaID, "$anchor": s.Anchor, "$dynamicRef": s.DynamicRef, "$dynamicAnchor": s.DynamicAnchor} {
		if v != "" {
			c.dropped[k]++
		}
	}
	for k := range s.Extensions {
		if strings.HasPrefix(k, "x-") {
			c.extensions++
		} else {
			c.dropped[k]++
		}
	}

	switch len(types) {
	case 0:
	case 1:
		out["type"] = types[0]
	default:
		out["type"] = toAnyList(types)
	}
	if wrapNull {
		return map[string]any{"anyOf": []any{map[string]any{"type": "null"}, out}}
	}
	return out
}

func mustFloat(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

func toAnyList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// refMap converts a map of schemas (properties, $defs, …).
func (c *converter) refMap(m openapi3.Schemas, from string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = c.ref(v, from)
	}
	return out
}

// setUint sets out[key] to *v when v is set.
func setUint(out map[string]any, key string, v *uint64) {
	if v != nil {
		out[key] = *v
	}
}

func (c *converter) refs(rs openapi3.SchemaRefs, from string) []any {
	out := make([]any, len(rs))
	for i, r := range rs {
		out[i] = c.ref(r, from)
	}
	return out
}

// boolSchema converts additionalProperties, unevaluatedProperties or
// unevaluatedItems: a boolean or a schema; nil when unset.
func (c *converter) boolSchema(b openapi3.BoolSchema, from string) any {
	if b.Has != nil {
		return *b.Has
	}
	if b.Schema != nil {
		return c.ref(b.Schema, from)
	}
	return nil
}

// discriminated converts the branches of a oneOf or anyOf; with a
// discriminator, each $ref branch also requires its discriminating value.
func (c *converter) discriminated(s *openapi3.Schema, branches openapi3.SchemaRefs, from string) []any {
	out := c.refs(branches, from)
	d := s.Discriminator
	if d == nil || d.PropertyName == "" {
		return out
	}
	values := map[string][]any{}
	var keys []string
	for k := range d.Mapping {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, v := range keys {
		ref := d.Mapping[v].Ref
		if !strings.Contains(ref, "/") && !strings.Contains(ref, "#") {
			ref = "#/components/schemas/" + ref
		}
		values[ref] = append(values[ref], v)
	}
	if len(d.Mapping) == 0 {
		// The implicit value is the component's name, which real APIs
		// often do not send (GitHub's user_view_type is "public", its
		// component public-user): requiring it would refuse real traffic.
		c.notConverted = append(c.notConverted, fmt.Sprintf("discriminator %q has no mapping: not converted (its implicit values, the components' names, are often not what the API sends); the branches stay as written", d.PropertyName))
		return out
	}
	for i, b := range branches {
		if b == nil || b.Ref == "" {
			c.notConverted = append(c.notConverted, "an inline branch of a discriminated oneOf/anyOf keeps no discriminator value: "+d.PropertyName)
			continue
		}
		vals := values[b.Ref]
		if len(vals) == 0 {
			c.notConverted = append(c.notConverted, fmt.Sprintf("discriminator %q: the mapping names no value for %s; that branch stays as written", d.PropertyName, b.Ref))
			continue
		}
		m := out[i].(map[string]any)
		var prop map[string]any
		if len(vals) == 1 {
			prop = map[string]any{"const": vals[0]}
		} else {
			prop = map[string]any{"enum": vals}
		}
		m["properties"] = map[string]any{d.PropertyName: prop}
		m["required"] = []any{d.PropertyName}
		c.discriminators++
	}
	return out
}

// notes says what the conversion dropped or changed, for the owner.
func (c *converter) notes() []string {
	var out []string
	if c.discriminators > 0 {
		out = append(out, fmt.Sprintf("discriminator: %d oneOf/anyOf branches now require their discriminating value (const)", c.discriminators))
	}
	if c.writeOnly > 0 {
		out = append(out, fmt.Sprintf("%d writeOnly members taken out of required (a response does not send them)", c.writeOnly))
	}
	if len(c.formats) > 0 {
		out = append(out, "formats airlock does not check, dropped (the values are still typed): "+counted(c.formats))
	}
	if len(c.patterns) > 0 {
		out = append(out, fmt.Sprintf("%d patterns Go's RE2 cannot compile, dropped: %s", len(c.patterns), counted(c.patterns)))
	}
	if len(c.dropped) > 0 {
		out = append(out, "keywords that are not JSON Schema 2020-12 validation, dropped: "+counted(c.dropped))
	}
	if c.extensions > 0 {
		out = append(out, fmt.Sprintf("%d x-* extension members dropped", c.extensions))
	}
	seen := map[string]bool{}
	for _, n := range c.notConverted {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

func counted(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s (%d)", strconv.Quote(truncate(k, 60)), m[k]))
		if len(parts) == 12 && len(keys) > 12 {
			parts = append(parts, fmt.Sprintf("and %d more", len(keys)-12))
			break
		}
	}
	return strings.Join(parts, ", ")
}

// closeAll closes every object schema of every document of s with
// unevaluatedProperties false, except a schema that is a branch of an
// allOf (directly or through $refs), which would refuse the members the
// other branches name, and one that already says how other members go.
// It returns how many it closed.
func closeAll(s Schemas) int {
	branch := map[string]bool{}
	for _, f := range sortedKeys(s) {
		walkSchemas(f, "", s[f], func(file, ptr string, m map[string]any) {
			all, _ := m["allOf"].([]any)
			for i, sub := range all {
				l := loc{file, fmt.Sprintf("%s/allOf/%d", ptr, i), sub}
				for hop := 0; hop < maxRefHops; hop++ {
					branch[l.file+"#"+l.ptr] = true
					ref, ok := refOf(l.node)
					if !ok {
						break
					}
					t, err := s.target(l.file, ref)
					if err != nil {
						break
					}
					l = t
				}
			}
		})
	}
	n := 0
	for _, f := range sortedKeys(s) {
		walkSchemas(f, "", s[f], func(file, ptr string, m map[string]any) {
			if branch[file+"#"+ptr] {
				return
			}
			_, props := m["properties"]
			if !props && !slices.Contains(typesOf(m), "object") {
				return
			}
			if m["additionalProperties"] != nil || m["unevaluatedProperties"] != nil || m["patternProperties"] != nil {
				return
			}
			m["unevaluatedProperties"] = false
			n++
		})
	}
	return n
}

// walkSchemas calls fn for every schema object in node (at ptr of file),
// subschemas included.
func walkSchemas(file, ptr string, node any, fn func(file, ptr string, m map[string]any)) {
	m, ok := node.(map[string]any)
	if !ok {
		return
	}
	fn(file, ptr, m)
	oneSub := append(valueOne[:len(valueOne):len(valueOne)], branchOne...)
	listSub := append(valueList[:len(valueList):len(valueList)], branchList...)
	mapSub := append(valueMap[:len(valueMap):len(valueMap)], append(branchMap[:len(branchMap):len(branchMap)], "$defs")...)
	for _, k := range oneSub {
		if v, ok := m[k]; ok {
			walkSchemas(file, ptr+"/"+k, v, fn)
		}
	}
	for _, k := range listSub {
		if l, ok := m[k].([]any); ok {
			for i, v := range l {
				walkSchemas(file, fmt.Sprintf("%s/%s/%d", ptr, k, i), v, fn)
			}
		}
	}
	for _, k := range mapSub {
		if mm, ok := m[k].(map[string]any); ok {
			for name, v := range mm {
				walkSchemas(file, ptr+"/"+k+"/"+strings.NewReplacer("~", "~0", "/", "~1").Replace(name), v, fn)
			}
		}
	}
}
