package gate

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/airlockdev/airlock/internal/manifest"
	"github.com/airlockdev/airlock/jsonpointer"
)

// UntrustedTextKey is the one member of the object an untrusted_text field
// wraps each of its strings in: {"untrusted_text": "<the string>"}.
const UntrustedTextKey = "untrusted_text"

// textPolicy is one resolved text policy (contract.yaml text): what every
// string of a projected field, or of a matched error's detail field, must
// meet (docs/contracts.md, "Text policy").
type textPolicy struct {
	maxLength int // code points; 0: no bound
	form      norm.Form
	hasForm   bool
	formName  string
	tab       bool // controls allowed
	lf        bool
	cr        bool
	ls, ps    bool // U+2028 LINE SEPARATOR, U+2029 PARAGRAPH SEPARATOR allowed
	tags      bool // the TAG characters U+E0000–U+E007F allowed
	bidi      bool // bidi formatting characters allowed
	zeroWidth bool // zero-width and invisible characters allowed
	untrusted bool // wrap every string as {"untrusted_text": s}
}

// defaultTextPolicy is the built-in default: no length bound beyond the
// schemas', no normalization form, TAB and LF the only controls, no bidi
// formatting or invisible characters, no wrapping.
var defaultTextPolicy = textPolicy{tab: true, lf: true}

// resolve returns p with the keys set in w (a manifest policy) replaced.
func (p textPolicy) resolve(w manifest.TextPolicy) textPolicy {
	if w.MaxLength != nil {
		p.maxLength = *w.MaxLength
	}
	if w.Normalization != nil {
		p.formName = *w.Normalization
		p.hasForm = true
		switch *w.Normalization {
		case "NFC":
			p.form = norm.NFC
		case "NFD":
			p.form = norm.NFD
		case "NFKC":
			p.form = norm.NFKC
		case "NFKD":
			p.form = norm.NFKD
		default:
			p.hasForm, p.formName = false, ""
		}
	}
	if w.Controls != nil {
		p.tab, p.lf, p.cr = slices.Contains(w.Controls, "TAB"), slices.Contains(w.Controls, "LF"), slices.Contains(w.Controls, "CR")
		p.ls, p.ps = slices.Contains(w.Controls, "LS"), slices.Contains(w.Controls, "PS")
	}
	if w.Bidi != nil {
		p.bidi = *w.Bidi
	}
	if w.ZeroWidth != nil {
		p.zeroWidth = *w.ZeroWidth
	}
	if w.TagCharacters != nil {
		p.tags = *w.TagCharacters
	}
	if w.UntrustedText != nil {
		p.untrusted = *w.UntrustedText
	}
	return p
}

// textPolicies are a contract's resolved text policies.
type textPolicies struct {
	def    textPolicy
	fields map[string]textPolicy // by agent field
	detail map[string]textPolicy // by detail field (untrusted never set)
}

// field returns the policy of agent field name.
func (t *textPolicies) field(name string) textPolicy {
	if p, ok := t.fields[name]; ok {
		return p
	}
	return t.def
}

// detailField returns the policy of detail field name.
func (t *textPolicies) detailField(name string) textPolicy {
	if p, ok := t.detail[name]; ok {
		return p
	}
	p := t.def
	p.untrusted = false
	return p
}

// compileText resolves the manifest's text section: a configuration error
// for a field that no upstream version projects, a detail field that no
// declared error projects, untrusted_text on a detail field, or an
// untrusted_text field whose agent schema property says "type": "string"
// (its strings reach the agent wrapped in objects).
func (c *Contract) compileText(m manifest.Manifest, cfgErr func(key, msg string) error) error {
	t := textPolicies{def: defaultTextPolicy.resolve(m.Text.Default), fields: map[string]textPolicy{}, detail: map[string]textPolicy{}}
	projected, details := map[string]bool{}, map[string]bool{}
	for _, uv := range m.UpstreamVersions {
		for f := range uv.Projection {
			projected[f] = true
		}
		for _, e := range uv.Errors {
			for f := range e.Detail {
				details[f] = true
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(m.Text.Fields)) {
		if !projected[name] {
			return cfgErr("/text/fields/"+jsonpointer.EscapeToken(name), fmt.Sprintf("text policy for field %q, which no upstream version projects (projection keys: %v)", name, slices.Sorted(maps.Keys(projected))))
		}
		t.fields[name] = t.def.resolve(m.Text.Fields[name])
	}
	for _, name := range slices.Sorted(maps.Keys(m.Text.DetailFields)) {
		w := m.Text.DetailFields[name]
		key := "/text/detail_fields/" + jsonpointer.EscapeToken(name)
		if !details[name] {
			return cfgErr(key, fmt.Sprintf("text policy for detail field %q, which no declared upstream error projects (detail keys: %v)", name, slices.Sorted(maps.Keys(details))))
		}
		if w.UntrustedText != nil {
			return cfgErr(key+"/untrusted_text", "untrusted_text does not apply to a detail field: a detail holds only enum or const values and keeps the agent_error_schema's shape")
		}
		p := t.def.resolve(w)
		p.untrusted = false
		t.detail[name] = p
	}
	// An untrusted_text field's strings reach the agent as objects: an
	// agent schema property that says "type": "string" would refuse every
	// response.
	props, _ := mapAt(c.schemas.Doc(m.AgentSchema), "properties")
	for _, name := range slices.Sorted(maps.Keys(projected)) {
		if !t.field(name).untrusted {
			continue
		}
		key := "/text/default/untrusted_text"
		if w, ok := m.Text.Fields[name]; ok && w.UntrustedText != nil {
			key = "/text/fields/" + jsonpointer.EscapeToken(name) + "/untrusted_text"
		}
		doc := c.schemas.Doc(m.AgentSchema)
		if at, ok := stringSlot(props[name], doc, jsonpointer.Pointer{"properties", name}, 0); ok {
			return cfgErr(key, fmt.Sprintf("field %q is untrusted_text, so each of its strings reaches the agent as {\"%s\": \"<the string>\"}, but %s says a string goes at %s: describe the wrapped shape there (docs/contracts.md, Text policy)", name, UntrustedTextKey, m.AgentSchema, at))
		}
	}
	c.text = t
	return nil
}

// mapAt returns doc[key] as an object.
func mapAt(doc any, key string) (map[string]any, bool) {
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, false
	}
	v, ok := m[key].(map[string]any)
	return v, ok
}

// stringSlot finds where schema x (at location at of the agent schema
// document doc) expects a plain string where an untrusted_text field sends
// wrapped ones: a type that admits strings but not objects, directly or
// through a local $ref, allOf, items, prefixItems, properties or
// additionalProperties (at most 16 deep). It
// returns the keyword's location as an RFC 6901 pointer.
func stringSlot(x, doc any, at jsonpointer.Pointer, depth int) (string, bool) {
	m, ok := x.(map[string]any)
	if !ok || depth > 16 {
		return "", false
	}
	if props, ok := m["properties"].(map[string]any); ok && props[UntrustedTextKey] != nil {
		return "", false // the wrapped shape itself
	}
	if t, ok := m["type"]; ok && admitsString(t) && !admitsObject(t) {
		return append(slices.Clip(at), "type").String(), true
	}
	if ref, ok := m["$ref"].(string); ok && strings.HasPrefix(ref, "#") {
		frag, err := url.PathUnescape(ref[1:])
		if p, perr := jsonpointer.Parse(frag); err == nil && perr == nil {
			if target, ok := p.Lookup(doc); ok {
				if w, ok := stringSlot(target, doc, p, depth+1); ok {
					return w, true
				}
			}
		}
	}
	if all, ok := m["allOf"].([]any); ok {
		for i, s := range all {
			if w, ok := stringSlot(s, doc, append(slices.Clip(at), "allOf", strconv.Itoa(i)), depth+1); ok {
				return w, true
			}
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if w, ok := stringSlot(m[k], doc, append(slices.Clip(at), k), depth+1); ok {
			return w, true
		}
	}
	if props, ok := m["properties"].(map[string]any); ok {
		for _, k := range slices.Sorted(maps.Keys(props)) {
			if w, ok := stringSlot(props[k], doc, append(slices.Clip(at), "properties", k), depth+1); ok {
				return w, true
			}
		}
	}
	if pre, ok := m["prefixItems"].([]any); ok {
		for i, s := range pre {
			if w, ok := stringSlot(s, doc, append(slices.Clip(at), "prefixItems", strconv.Itoa(i)), depth+1); ok {
				return w, true
			}
		}
	}
	return "", false
}

func admitsString(t any) bool { return typeHas(t, "string") }
func admitsObject(t any) bool { return typeHas(t, "object") }

func typeHas(t any, name string) bool {
	switch t := t.(type) {
	case string:
		return t == name
	case []any:
		return slices.Contains(t, any(name))
	}
	return false
}

// checkText checks every string of every projected field in data (the
// values the projection selected in v, member names included) against its
// field's policy, in field order then document order; the first violation
// is a projection.text_policy refusal whose instance location is the
// string's pointer in v.
func (c *Contract) checkText(fields []projField, data map[string]any, policy func(string) textPolicy, what string) *refusal {
	var loc jsonpointer.Pointer // one stack for every field's walk
	for _, f := range fields {
		if _, ok := data[f.field]; !ok {
			continue
		}
		p := policy(f.field)
		var r *refusal
		if loc == nil {
			loc = make(jsonpointer.Pointer, 0, 16)
		}
		walkProjected(f.pointer, data[f.field], loc[:0], func(x any, at jsonpointer.Pointer) bool {
			r = p.scan(x, at, f.field)
			return r == nil
		})
		if r != nil {
			r.message = what + " " + r.message // "field ids: …"
			return r
		}
	}
	return nil
}

// indexTokens are the JSON Pointer tokens of the first array indices,
// made at the first walk (not at start-up) and once: walking a projected
// array allocates no index strings. All of them slice one string.
var indexTokens = sync.OnceValue(func() []string {
	const n = 1024
	out := make([]string, n)
	ends := make([]int, n)
	var digits []byte
	for i := range out {
		digits = strconv.AppendInt(digits, int64(i), 10)
		ends[i] = len(digits)
	}
	all := string(digits)
	start := 0
	for i, end := range ends {
		out[i] = all[start:end]
		start = end
	}
	return out
})

// index returns the JSON Pointer token of array index i.
func index(i int) string {
	if tokens := indexTokens(); i < len(tokens) {
		return tokens[i]
	}
	return strconv.Itoa(i)
}

// scan checks every string and member name in x (at loc) against p.
func (p textPolicy) scan(x any, loc jsonpointer.Pointer, field string) *refusal {
	switch x := x.(type) {
	case string:
		if why := p.judge(x); why != "" {
			return textRefusal(loc, field, "", why)
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			at := append(loc, k)
			if why := p.judge(k); why != "" {
				return textRefusal(at, field, "member name: ", why)
			}
			if r := p.scan(x[k], at, field); r != nil {
				return r
			}
		}
	case []any:
		for i, el := range x {
			if r := p.scan(el, append(loc, index(i)), field); r != nil {
				return r
			}
		}
	}
	return nil
}

func textRefusal(loc jsonpointer.Pointer, field, what, why string) *refusal {
	return &refusal{reason: ReasonTextPolicy, offset: -1, instanceLocation: loc.String(),
		message: fmt.Sprintf("%s: %s%s (text policy)", field, what, why)}
}

// judge returns why s breaks p ("" when it does not): the first refused
// character (by code point, counted from 0), then the length, then the
// normalization form. It never quotes s.
func (p textPolicy) judge(s string) string {
	n := 0
	var prev rune = -1 // the code point before, -1 at the start
	for _, r := range s {
		name, rule, refused := p.refused(r)
		if !refused && unicode.Is(unicode.Variation_Selector, r) {
			name, rule, refused = p.selector(r, prev)
		}
		if refused && rule == "" {
			return fmt.Sprintf("%U %s at code point %d, always refused", r, name, n)
		}
		if refused {
			return fmt.Sprintf("%U %s at code point %d, refused by %s", r, name, n, rule)
		}
		prev = r
		n++
	}
	if p.maxLength > 0 && n > p.maxLength {
		return fmt.Sprintf("%d code points, max_length %d", n, p.maxLength)
	}
	if p.hasForm && !p.form.IsNormalString(s) {
		return "not in " + p.formName
	}
	return ""
}

// refused reports whether r is refused by p, with its name and the rule
// that refuses it. Variation selectors are judged by selector.
func (p textPolicy) refused(r rune) (name, rule string, refused bool) {
	const controls, always = "controls", ""
	switch {
	case r == '\t':
		return "CHARACTER TABULATION (TAB)", controls, !p.tab
	case r == '\n':
		return "LINE FEED (LF)", controls, !p.lf
	case r == '\r':
		return "CARRIAGE RETURN (CR)", controls, !p.cr
	case r < 0x20 || r == 0x7f:
		return "control character", always, true
	case r >= 0x80 && r <= 0x9f:
		return "C1 control character", always, true
	case r < 0xa0 || r > utf8.MaxRune:
		return "", "", false
	case r == 0x2028:
		return "LINE SEPARATOR (LS)", controls, !p.ls
	case r == 0x2029:
		return "PARAGRAPH SEPARATOR (PS)", controls, !p.ps
	case unicode.Is(unicode.Noncharacter_Code_Point, r):
		return "noncharacter", always, true
	}
	if name, ok := bidiChars[r]; ok {
		return name, "bidi: false", !p.bidi
	}
	if r >= 0xe0000 && r <= 0xe007f {
		return "TAG character (invisible)", "tag_characters: false", !p.tags
	}
	if name, ok := invisibleChars[r]; ok {
		return name, "zero_width: false", !p.zeroWidth
	}
	if unicode.Is(unicode.Variation_Selector, r) {
		return "", "", false
	}
	if unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) {
		return "invisible format character", "zero_width: false", !p.zeroWidth
	}
	return "", "", false
}

// selector judges a variation selector r after the code point prev (-1:
// none). One selector after a character it can vary passes: U+FE0E or
// U+FE0F (text or emoji presentation) after a symbol, digit or punctuation
// ("❤️", "1️⃣"), an ideographic variation selector (U+E0100–U+E01EF) after a
// Han ideograph. A selector after another selector, at the start of a
// string, or after a character it does not vary carries nothing a reader
// sees and can hide any bytes ("😀" followed by selectors that spell an
// instruction): the first is refused always, the others unless
// zero_width: true.
func (p textPolicy) selector(r, prev rune) (name, rule string, refused bool) {
	const name0 = "VARIATION SELECTOR"
	switch {
	case prev < 0 || unicode.Is(unicode.Variation_Selector, prev):
		return name0 + " (not after a character it varies)", "", true
	case (r == 0xfe0e || r == 0xfe0f) && !unicode.IsLetter(prev) && !unicode.Is(unicode.Mn, prev) && !unicode.IsSpace(prev):
		return "", "", false
	case r >= 0xe0100 && r <= 0xe01ef && unicode.Is(unicode.Han, prev):
		return "", "", false
	}
	return name0 + " (after a character it does not vary)", "zero_width: false", !p.zeroWidth
}

// bidiChars are the bidirectional formatting characters (Unicode UAX #9):
// embeddings, overrides, isolates and the implicit marks. They reorder
// what a reader sees without being seen ("Trojan Source", CVE-2021-42574).
var bidiChars = map[rune]string{
	0x061c: "ARABIC LETTER MARK",
	0x200e: "LEFT-TO-RIGHT MARK",
	0x200f: "RIGHT-TO-LEFT MARK",
	0x202a: "LEFT-TO-RIGHT EMBEDDING",
	0x202b: "RIGHT-TO-LEFT EMBEDDING",
	0x202c: "POP DIRECTIONAL FORMATTING",
	0x202d: "LEFT-TO-RIGHT OVERRIDE",
	0x202e: "RIGHT-TO-LEFT OVERRIDE",
	0x2066: "LEFT-TO-RIGHT ISOLATE",
	0x2067: "RIGHT-TO-LEFT ISOLATE",
	0x2068: "FIRST STRONG ISOLATE",
	0x2069: "POP DIRECTIONAL ISOLATE",
}

// invisibleChars are the zero-width and invisible characters named in
// messages: they render as nothing (or as blank space indistinguishable
// from none) and so can hide text from a human reviewer while a model
// still reads it. Every other format character (Unicode category Cf) and
// default-ignorable code point is judged with them; the TAG characters
// U+E0000–U+E007F have their own key (tag_characters), and variation
// selectors their own rule (selector).
var invisibleChars = map[rune]string{
	0x00ad: "SOFT HYPHEN",
	0x034f: "COMBINING GRAPHEME JOINER",
	0x115f: "HANGUL CHOSEONG FILLER",
	0x1160: "HANGUL JUNGSEONG FILLER",
	0x180e: "MONGOLIAN VOWEL SEPARATOR",
	0x17b4: "KHMER VOWEL INHERENT AQ",
	0x17b5: "KHMER VOWEL INHERENT AA",
	0x200b: "ZERO WIDTH SPACE",
	0x200c: "ZERO WIDTH NON-JOINER",
	0x200d: "ZERO WIDTH JOINER",
	0x2060: "WORD JOINER",
	0x2061: "FUNCTION APPLICATION",
	0x2062: "INVISIBLE TIMES",
	0x2063: "INVISIBLE SEPARATOR",
	0x2064: "INVISIBLE PLUS",
	0x3164: "HANGUL FILLER",
	0xfeff: "ZERO WIDTH NO-BREAK SPACE",
	0xffa0: "HALFWIDTH HANGUL FILLER",
}

// wrapUntrusted returns x with every string replaced by
// {"untrusted_text": s}: a new value (x is shared with the verdict and is
// not modified). Member names stay names.
func wrapUntrusted(x any) any {
	switch x := x.(type) {
	case string:
		return map[string]any{UntrustedTextKey: x}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, v := range x {
			out[k] = wrapUntrusted(v)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, v := range x {
			out[i] = wrapUntrusted(v)
		}
		return out
	}
	return x
}

// UntrustedFields returns the agent fields whose strings reach the agent
// wrapped as {"untrusted_text": "<the string>"} (text policy
// untrusted_text), sorted; a new slice.
func (c *Contract) UntrustedFields() []string {
	var out []string
	seen := map[string]bool{}
	for _, u := range c.versions {
		for _, f := range u.projection {
			if !seen[f.field] && c.text.field(f.field).untrusted {
				seen[f.field] = true
				out = append(out, f.field)
			}
		}
	}
	slices.Sort(out)
	return out
}
