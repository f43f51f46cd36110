package drift

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/schemawalk"
	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/reports"
)

// schemaFindings validates value and turns every leaf cause into a
// finding; inside a failed oneOf/anyOf only the branch with the fewest
// failures is followed (the shape the value came closest to).
func schemaFindings(root *jsonschema.Schema, value any) (out []rawFinding) {
	defer func() {
		if p := recover(); p != nil {
			out = []rawFinding{{kind: reports.FindingViolation, keyword: "internal.validator_panic"}}
		}
	}()
	err := root.Validate(value)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil
	}
	var leaves []*jsonschema.ValidationError
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
			return
		}
		switch e.ErrorKind.(type) {
		case *kind.OneOf, *kind.AnyOf:
			best, n := e.Causes[0], schema.LeafCount(e.Causes[0])
			for _, c := range e.Causes[1:] {
				if m := schema.LeafCount(c); m < n {
					best, n = c, m
				}
			}
			walk(best)
		default:
			for _, c := range e.Causes {
				walk(c)
			}
		}
	}
	walk(ve)
	for _, e := range leaves {
		out = append(out, classifyLeaf(e, value)...)
	}
	return out
}

// starred turns an instance location into the report's form: array
// indices become "*".
func starred(value any, toks []string) string {
	var b strings.Builder
	cur := value
	for _, t := range toks {
		switch x := cur.(type) {
		case []any:
			b.WriteString("/*")
			if i, err := strconv.Atoi(t); err == nil && i >= 0 && i < len(x) {
				cur = x[i]
			} else {
				cur = nil
			}
		case map[string]any:
			b.WriteString("/" + jsonpointer.EscapeToken(t))
			cur = x[t]
		default:
			b.WriteString("/" + jsonpointer.EscapeToken(t))
			cur = nil
		}
	}
	return b.String()
}

func classifyLeaf(e *jsonschema.ValidationError, value any) []rawFinding {
	ptr := starred(value, e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		var out []rawFinding
		for _, p := range k.Properties {
			out = append(out, rawFinding{kind: reports.FindingForbidden, pointer: ptr + "/" + jsonpointer.EscapeToken(p), keyword: "additionalProperties"})
		}
		return out
	case *kind.FalseSchema:
		_, frag, _ := strings.Cut(e.SchemaURL, "#")
		toks := strings.Split(frag, "/")
		last, before := toks[len(toks)-1], ""
		if len(toks) > 1 {
			before = toks[len(toks)-2]
		}
		switch {
		case last == "additionalProperties" || last == "unevaluatedProperties":
			return []rawFinding{{kind: reports.FindingForbidden, pointer: ptr, keyword: last}}
		case before == "properties":
			return []rawFinding{{kind: reports.FindingForbidden, pointer: ptr, keyword: "false"}}
		case slices.Contains(subschemaKeywordsOf, last):
			return []rawFinding{{kind: reports.FindingViolation, pointer: ptr, keyword: last}}
		}
		return []rawFinding{{kind: reports.FindingViolation, pointer: ptr, keyword: "false"}}
	case *kind.Required:
		var out []rawFinding
		for _, m := range k.Missing {
			out = append(out, rawFinding{kind: reports.FindingMissing, pointer: ptr + "/" + jsonpointer.EscapeToken(m), keyword: "required"})
		}
		return out
	case *kind.Type:
		got := k.Got
		if x, ok := jsonpointer.Pointer(e.InstanceLocation).Lookup(value); ok {
			got = jsonType(x) // the validator says "number" for 17
		}
		return []rawFinding{{kind: reports.FindingRetyped, pointer: ptr, keyword: "type", seen: []string{got}, allowed: k.Want}}
	case *kind.Enum:
		return valueFinding(ptr, "enum", k.Got, k.Want)
	case *kind.Const:
		return valueFinding(ptr, "const", k.Got, []any{k.Want})
	}
	kw := "invalid"
	if p := e.ErrorKind.KeywordPath(); len(p) > 0 {
		kw = p[0]
	}
	return []rawFinding{{kind: reports.FindingViolation, pointer: ptr, keyword: kw}}
}

// subschemaKeywordsOf are keywords whose false schema refuses an array
// element or a value rather than a member.
var subschemaKeywordsOf = []string{"items", "prefixItems", "unevaluatedItems", "contains", "propertyNames", "not", "if", "then", "else"}

// valueFinding: a scalar outside the allowed values is a new enum value;
// an object or array where only scalars are allowed is a retyped member.
func valueFinding(ptr, kw string, got any, want []any) []rawFinding {
	var allowed []string
	var types schemawalk.Types
	for i, w := range want {
		if i < 16 {
			allowed = append(allowed, schemawalk.ValueText(w))
		} else if i == 16 {
			allowed = append(allowed, "…")
		}
		types |= schemawalk.TypeOfValue(w)
	}
	switch got.(type) {
	case map[string]any, []any:
		if types&schemawalk.TypeOfValue(got) == 0 {
			return []rawFinding{{kind: reports.FindingRetyped, pointer: ptr, keyword: kw, seen: []string{jsonType(got)}, allowed: strings.Split(types.String(), ", ")}}
		}
		return []rawFinding{{kind: reports.FindingViolation, pointer: ptr, keyword: kw}}
	}
	return []rawFinding{{kind: reports.FindingNewEnumValue, pointer: ptr, keyword: kw, value: schemawalk.ValueText(got), allowed: allowed}}
}
