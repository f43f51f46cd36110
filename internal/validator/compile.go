package validator

import (
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/schema"
)

// regexFormat checks format "regex" as the compiler's regexp engine
// compiles patterns (schema.CompilePattern, within its bounds).
var regexFormat = &jsonschema.Format{Name: "regex", Validate: func(v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	_, _, err := schema.CompilePattern(s)
	return err
}}

// JSON types as a bit set (JSON Schema Validation 2020-12 §6.1.1).
const (
	tNull uint8 = 1 << iota
	tBool
	tInteger
	tNumber // any number, integer or not
	tString
	tArray
	tObject
)

var typeBits = map[string]uint8{
	"null": tNull, "boolean": tBool, "integer": tInteger, "number": tNumber,
	"string": tString, "array": tArray, "object": tObject,
}

// node is one compiled subschema: the keywords it has, resolved to
// nodes, bounds in exact decimal, and the v6 schema it came from (for
// locations and messages).
type node struct {
	s        *jsonschema.Schema
	loc      string // absolute keyword location of the subschema, "url#/ptr"
	boolean  int8   // 1: the true schema, -1: the false schema, 0: an object
	falseKey string // for the false schema: the keyword reported

	types     uint8 // 0: any
	typeNames []string
	constV    *any
	enum      []any
	format    *jsonschema.Format
	// strCheck is format's check of a string, when one is known
	// (schema.StringCheck; nil with strKnown: an annotated format, which
	// admits every string): no interface to box the string into.
	strCheck func(string) error
	strKnown bool

	ref          *node
	allOf, anyOf []*node
	oneOf        []*node
	not          *node
	ifN, thenN   *node
	elseN        *node
	depSchemas   []namedNode // sorted by name

	// object
	minProps, maxProps int // -1: absent
	required           []string
	depRequired        []namedList // sorted by name
	props              map[string]prop
	// propKeys and propList are props as two lists in code point order
	// of the names, which a small object's members are looked up in
	// (lookup) without hashing.
	propKeys []string
	propList []prop
	// reqInProps: every required name is a key of props, so a walk that
	// does not record can count the required members it meets instead of
	// looking each one up.
	reqInProps bool
	// reqIndex holds the required names, for a one-pass check of a large
	// object; nil when none are.
	reqIndex    map[string]struct{}
	patProps    []patNode // sorted by pattern
	additional  *node     // nil: absent
	propNames   *node
	unevalProps *node
	hasObject   bool

	// array
	minItems, maxItems int
	unique             bool
	prefix             []*node
	items              *node
	contains           *node
	minContains        int // -1: absent (1 applies)
	maxContains        int
	unevalItems        *node
	hasArray           bool

	// string
	minLen, maxLen int
	pattern        jsonschema.Regexp
	hasString      bool

	// number
	minimum, maximum *bound
	exMin, exMax     *bound
	multipleOf       *multiple
	hasNumber        bool

	// discriminators: members whose const or enum tells oneOf/anyOf
	// branches apart (see choose).
	discr []namedNode
	// memo: a validation keeps this node's verdict per value (see
	// markMemo).
	memo bool
}

// prop is a properties entry: its subschema, and whether required names
// it.
type prop struct {
	n        *node
	required bool
}

type namedNode struct {
	name string
	n    *node
}

type namedList struct {
	name string
	list []string
}

type patNode struct {
	re jsonschema.Regexp
	n  *node
}

// compiler turns v6 schemas into nodes, once each (cycles through $ref
// share nodes).
type compiler struct {
	nodes    map[*jsonschema.Schema]*node
	fallback string
	// fallbackAt is the location of the subschema and the keyword the
	// fallback is for.
	fallbackAt, fallbackKeyword string
}

// unsupported records the first reason the validator cannot run its own
// nodes.
func (c *compiler) unsupported(s *jsonschema.Schema, keyword, what string) {
	if c.fallback == "" {
		c.fallback = fmt.Sprintf("%s at %s", what, s.Location)
		c.fallbackAt, c.fallbackKeyword = s.Location, keyword
	}
}

func (c *compiler) compile(s *jsonschema.Schema) *node {
	if s == nil {
		return nil
	}
	if n, ok := c.nodes[s]; ok {
		return n
	}
	n := &node{s: s, loc: s.Location, minProps: -1, maxProps: -1, minItems: -1, maxItems: -1,
		minLen: -1, maxLen: -1, minContains: -1, maxContains: -1}
	if !strings.Contains(n.loc, "#") {
		n.loc += "#"
	}
	c.nodes[s] = n
	if s.Bool != nil {
		if *s.Bool {
			n.boolean = 1
		} else {
			n.boolean = -1
			n.falseKey = falseKeyword(n.loc)
		}
		return n
	}
	if s.DraftVersion < 2020 {
		c.unsupported(s, "$schema", fmt.Sprintf("draft %d", s.DraftVersion))
	}
	switch {
	case s.RecursiveRef != nil:
		c.unsupported(s, "$recursiveRef", "$recursiveRef")
	case s.DynamicRef != nil && s.DynamicRef.Anchor != "":
		c.unsupported(s, "$dynamicRef", "$dynamicRef to a $dynamicAnchor")
	case s.ContentEncoding != nil || s.ContentMediaType != nil || s.ContentSchema != nil:
		c.unsupported(s, "contentMediaType", "contentEncoding/contentMediaType asserted")
	case len(s.Extensions) > 0:
		c.unsupported(s, "", "a vocabulary extension")
	case s.Dependencies != nil:
		c.unsupported(s, "dependencies", "dependencies")
	case s.AdditionalItems != nil:
		c.unsupported(s, "additionalItems", "additionalItems")
	}
	if _, ok := s.Items.([]*jsonschema.Schema); ok {
		c.unsupported(s, "items", "items as an array")
	}

	if s.Types != nil && !s.Types.IsEmpty() {
		n.typeNames = s.Types.ToStrings()
		for _, t := range n.typeNames {
			n.types |= typeBits[t]
		}
		if n.types&tNumber != 0 {
			n.types |= tInteger
		}
	}
	n.constV = s.Const
	if s.Enum != nil {
		n.enum = s.Enum.Values
	}
	n.format = s.Format
	if s.Format != nil {
		n.strCheck, n.strKnown = schema.StringCheck(s.Format)
	}
	if s.Format != nil && s.Format.Name == "regex" {
		// v6 checks "regex" with the compiler's regexp engine whatever the
		// format policy says; so does this.
		n.format = regexFormat
	}

	n.ref = c.compile(s.Ref)
	if s.DynamicRef != nil {
		// Without a $dynamicAnchor at its target, $dynamicRef is $ref
		// (JSON Schema Core 2020-12 §8.2.3.2).
		d := c.compile(s.DynamicRef.Ref)
		if n.ref == nil {
			n.ref = d
		} else {
			n.allOf = append(n.allOf, d)
		}
	}
	n.allOf = append(n.allOf, c.list(s.AllOf)...)
	n.anyOf = c.list(s.AnyOf)
	n.oneOf = c.list(s.OneOf)
	n.not = c.compile(s.Not)
	n.ifN, n.thenN, n.elseN = c.compile(s.If), c.compile(s.Then), c.compile(s.Else)
	for _, k := range sortedKeys(s.DependentSchemas) {
		n.depSchemas = append(n.depSchemas, namedNode{k, c.compile(s.DependentSchemas[k])})
	}

	// object
	if s.MinProperties != nil {
		n.minProps = *s.MinProperties
	}
	if s.MaxProperties != nil {
		n.maxProps = *s.MaxProperties
	}
	n.required = s.Required
	if len(n.required) > 0 {
		n.reqIndex = make(map[string]struct{}, len(n.required))
		for _, k := range n.required {
			n.reqIndex[k] = struct{}{}
		}
	}
	for _, k := range sortedKeys(s.DependentRequired) {
		n.depRequired = append(n.depRequired, namedList{k, s.DependentRequired[k]})
	}
	if len(s.Properties) > 0 {
		n.props = make(map[string]prop, len(s.Properties))
		for k, p := range s.Properties {
			n.props[k] = prop{n: c.compile(p), required: slices.Contains(s.Required, k)}
		}
	}
	for _, k := range sortedKeys(n.props) {
		n.propKeys = append(n.propKeys, k)
		n.propList = append(n.propList, n.props[k])
	}
	n.reqInProps = len(n.required) > 0 && n.props != nil && !slices.ContainsFunc(n.required, func(k string) bool {
		_, ok := n.props[k]
		return !ok
	})
	if n.reqInProps && len(slices.Compact(slices.Sorted(slices.Values(n.required)))) != len(n.required) {
		n.reqInProps = false // a name required twice: count by lookup
	}
	for re, p := range s.PatternProperties {
		n.patProps = append(n.patProps, patNode{fastPattern(re), c.compile(p)})
	}
	slices.SortFunc(n.patProps, func(a, b patNode) int { return strings.Compare(a.re.String(), b.re.String()) })
	switch a := s.AdditionalProperties.(type) {
	case bool:
		n.additional = &node{boolean: 1}
		if !a {
			n.additional = &node{boolean: -1, loc: n.loc + "/additionalProperties", falseKey: "additionalProperties"}
		}
	case *jsonschema.Schema:
		n.additional = c.compile(a)
	}
	n.propNames = c.compile(s.PropertyNames)
	n.unevalProps = c.compile(s.UnevaluatedProperties)
	n.hasObject = n.minProps >= 0 || n.maxProps >= 0 || len(n.required) > 0 || len(n.depRequired) > 0 ||
		n.props != nil || n.patProps != nil || n.additional != nil || n.propNames != nil

	// array
	if s.MinItems != nil {
		n.minItems = *s.MinItems
	}
	if s.MaxItems != nil {
		n.maxItems = *s.MaxItems
	}
	n.unique = s.UniqueItems
	n.prefix = c.list(s.PrefixItems)
	n.items = c.compile(s.Items2020)
	if it, ok := s.Items.(*jsonschema.Schema); ok && n.items == nil {
		n.items = c.compile(it)
	}
	n.contains = c.compile(s.Contains)
	if s.MinContains != nil {
		n.minContains = *s.MinContains
	}
	if s.MaxContains != nil {
		n.maxContains = *s.MaxContains
	}
	n.unevalItems = c.compile(s.UnevaluatedItems)
	n.hasArray = n.minItems >= 0 || n.maxItems >= 0 || n.unique || n.prefix != nil || n.items != nil || n.contains != nil

	// string
	if s.MinLength != nil {
		n.minLen = *s.MinLength
	}
	if s.MaxLength != nil {
		n.maxLen = *s.MaxLength
	}
	n.pattern = fastPattern(s.Pattern)
	n.hasString = n.minLen >= 0 || n.maxLen >= 0 || n.pattern != nil

	// number
	var ok [4]bool
	n.minimum, ok[0] = newBound(s.Minimum)
	n.maximum, ok[1] = newBound(s.Maximum)
	n.exMin, ok[2] = newBound(s.ExclusiveMinimum)
	n.exMax, ok[3] = newBound(s.ExclusiveMaximum)
	if slices.Contains(ok[:], false) {
		c.unsupported(s, "minimum", "a numeric bound with no exact decimal form")
	}
	n.multipleOf = newMultiple(s.MultipleOf)
	n.hasNumber = n.minimum != nil || n.maximum != nil || n.exMin != nil || n.exMax != nil || n.multipleOf != nil
	return n
}

func (c *compiler) list(ss []*jsonschema.Schema) []*node {
	if len(ss) == 0 {
		return nil
	}
	out := make([]*node, len(ss))
	for i, s := range ss {
		out[i] = c.compile(s)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// subschemaKeywords are the keywords whose value is one schema: a false
// schema reached through one of them is reported under that keyword, as
// internal/schema reports v6's causes.
var subschemaKeywords = []string{
	"additionalProperties", "unevaluatedProperties", "unevaluatedItems",
	"items", "contains", "propertyNames", "not", "if", "then", "else",
}

func falseKeyword(loc string) string {
	toks := strings.Split(loc, "/")
	last := toks[len(toks)-1]
	if len(toks) >= 2 && slices.Contains(nameKeywords, toks[len(toks)-2]) {
		return "false" // a property (or definition) named like a keyword
	}
	if slices.Contains(subschemaKeywords, last) {
		return last
	}
	return "false"
}

// nameKeywords are the keywords whose value maps names to schemas.
var nameKeywords = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}

// inPlace lists the nodes a node applies to the same instance: the edges
// a reference cycle without descent would go round.
func (n *node) inPlace() []*node {
	out := []*node{n.ref, n.not, n.ifN, n.thenN, n.elseN}
	out = append(out, n.allOf...)
	out = append(out, n.anyOf...)
	out = append(out, n.oneOf...)
	for _, d := range n.depSchemas {
		out = append(out, d.n)
	}
	return out
}

// cyclic reports whether a node can reach itself without descending into
// the instance (a schema strict loading refuses, which the suite has).
func cyclic(root *node) bool {
	const (
		unseen = iota
		active
		done
	)
	state := map[*node]int{}
	var visit func(n *node) bool
	var all func(n *node) bool
	visit = func(n *node) bool {
		if n == nil {
			return false
		}
		switch state[n] {
		case active:
			return true
		case done:
			return false
		}
		state[n] = active
		for _, m := range n.inPlace() {
			if visit(m) {
				return true
			}
		}
		state[n] = done
		return false
	}
	seen := map[*node]bool{}
	all = func(n *node) bool {
		if n == nil || seen[n] {
			return false
		}
		seen[n] = true
		if visit(n) {
			return true
		}
		kids := n.inPlace()
		kids = append(kids, n.additional, n.propNames, n.unevalProps, n.items, n.contains, n.unevalItems)
		kids = append(kids, n.prefix...)
		for _, p := range n.props {
			kids = append(kids, p.n)
		}
		for _, p := range n.patProps {
			kids = append(kids, p.n)
		}
		for _, k := range kids {
			if all(k) {
				return true
			}
		}
		return false
	}
	return all(root)
}

// discriminators finds, for every node that is a oneOf/anyOf branch, the
// members with a const or enum (directly or through its $ref) that tell
// the branches apart.
func discriminators(n *node) []namedNode {
	var out []namedNode
	for m := n; m != nil; m = m.ref {
		for _, k := range sortedKeys(m.props) {
			p := m.props[k].n
			if p.constV != nil || p.enum != nil {
				out = append(out, namedNode{k, p})
			}
		}
		if m.ref == m {
			break
		}
	}
	return out
}

// maxMemoScan bounds the schemas markMemo looks for shared subschemas in
// (its work is the subschemas times the in-place edges); past it only the
// work bound (WorkFactor) stands between a shared subschema and repeated
// walks.
const maxMemoScan = 4096

// markMemo marks the nodes whose verdicts a validation keeps per value:
//   - a node that two in-place paths (through $ref, allOf, anyOf, oneOf,
//     not, if, then, else, dependentSchemas) lead to from one node: it
//     would be walked against one value as many times as there are paths,
//     2^k for a chain of k pairs;
//   - the branches (anyOf, oneOf, if, contains) of every node in place
//     under one with unevaluatedProperties or unevaluatedItems, which ask
//     again which branches passed.
//
// Other nodes keep nothing: a oneOf on every item of a list costs no
// memory per item.
func markMemo(nodes map[*jsonschema.Schema]*node) {
	all := make([]*node, 0, len(nodes))
	for _, n := range nodes {
		all = append(all, n)
	}
	if len(all) <= maxMemoScan {
		seen := map[*node]int{}
		for stamp, x := range all {
			var walk func(n *node)
			walk = func(n *node) {
				for _, m := range n.inPlace() {
					if m == nil {
						continue
					}
					if seen[m] == stamp+1 {
						m.memo = true // a second path from x
						continue
					}
					seen[m] = stamp + 1
					walk(m)
				}
			}
			walk(x)
		}
	}
	for _, u := range all {
		if u.unevalProps == nil && u.unevalItems == nil {
			continue
		}
		done := map[*node]bool{}
		var walk func(n *node)
		walk = func(n *node) {
			if n == nil || done[n] {
				return
			}
			done[n] = true
			for _, b := range n.anyOf {
				b.memo = true
			}
			for _, b := range n.oneOf {
				b.memo = true
			}
			for _, b := range []*node{n.ifN, n.contains} {
				if b != nil {
					b.memo = true
				}
			}
			for _, m := range n.inPlace() {
				walk(m)
			}
		}
		walk(u)
	}
}
