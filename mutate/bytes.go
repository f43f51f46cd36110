package mutate

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/jsonpointer"
)

// Family bytes: the raw body changes below the JSON value, where only the
// gate's transport and parse stages (RFC 8259, RFC 7493) can refuse it:
// duplicate member names (RFC 7493 §2.3), a member name that differs only
// by case (parse.member_fold_collision, or the schema's when the contract
// turns that off and closes its objects), truncation, a BOM
// (RFC 8259 §8.1), invalid UTF-8, an escaped lone surrogate (RFC 7493
// §2.1), trailing data, nesting and size past the contract's limits, an
// HTML error page and an empty body. Each carries a canary where it adds
// bytes.

// bytesMutants derives the bytes family: member mutants in document order,
// then truncations, a BOM, invalid UTF-8, a lone surrogate, trailing data,
// nesting and size past the limits, an HTML page and an empty body.
func (m *mutator) bytesMutants() {
	raw := m.raw
	add := func(kind string, body []byte, expect []string, canary string) {
		m.add(Mutant{Family: FamilyBytes, Kind: kind, Body: body,
			Expect: expect, Reason: expect[0], Canary: canary, Hint: "built into the gate",
			Before: string(raw), After: string(body)})
	}
	objs := objectStarts(raw)

	m.memberMutants(raw, objs, nil, nil)
	if m.text != nil {
		m.textMutants()
	}

	// The rest carry a canary member at the start of the top-level object.
	c := m.canary()
	withCanary, at := raw, -1
	if len(objs) > 0 && objs[0].ptr.String() == "" {
		at = objs[0].after
		withCanary = insertAt(raw, at, appendMember(nil, "airlock_canary", c))
	}
	for i := 1; i <= 5; i++ {
		off := at + (len(withCanary)-at)*i/6
		if at < 0 {
			off = len(withCanary) * i / 6
		}
		if off <= 0 || off >= len(withCanary) {
			continue
		}
		can := ""
		if at >= 0 && off > at+len(c)+20 {
			can = c
		}
		add(fmt.Sprintf("truncated_%d_of_6", i), slices.Clone(withCanary[:off]), []string{gate.ReasonTruncated, gate.ReasonEmptyBody}, can)
	}
	canaryOf := func() string {
		if at >= 0 {
			return c
		}
		return ""
	}
	add("bom", append([]byte{0xEF, 0xBB, 0xBF}, withCanary...), []string{gate.ReasonBOM}, canaryOf())
	if at >= 0 {
		c2 := m.canary()
		add("invalid_utf8", insertAt(raw, at, []byte(`"airlock_canary":"`+c2+"\xff\",")), []string{gate.ReasonInvalidUTF8}, c2)
		c3 := m.canary()
		add("lone_surrogate", insertAt(raw, at, []byte(`"airlock_canary":"`+c3+`\ud800",`)), []string{gate.ReasonLoneSurrogate}, c3)
	}
	c4 := m.canary()
	add("second_value", append(slices.Clone(raw), []byte("\n{\"airlock_canary\":\""+c4+"\"}")...), []string{gate.ReasonTrailingData}, c4)
	depth := m.limits.MaxDepth
	add("too_deep", append(append(bytes.Repeat([]byte("["), depth), withCanary...), bytes.Repeat([]byte("]"), depth)...), []string{gate.ReasonDepth}, canaryOf())
	if pad := m.limits.MaxBytes + 1 - int64(len(withCanary)); pad > 0 {
		add("too_large", append(slices.Clone(withCanary), bytes.Repeat([]byte(" "), int(pad))...), []string{gate.ReasonTooLarge}, canaryOf())
	}
	c5 := m.canary()
	html := []byte("<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1><p>" + c5 + "</p></body></html>\n")
	m.add(Mutant{Family: FamilyBytes, Kind: "html_error_page", Body: html, Status: 200, ContentType: "application/json",
		Expect: []string{gate.ReasonNotJSON}, Reason: gate.ReasonNotJSON, Canary: c5, Hint: "built into the gate", Before: string(raw), After: string(html)})
	m.add(Mutant{Family: FamilyBytes, Kind: "empty_body", Body: []byte{}, Status: 200,
		Expect: []string{gate.ReasonEmptyBody}, Reason: gate.ReasonEmptyBody, Hint: "built into the gate", Before: string(raw), After: ""})
}

// objStart is an object in the raw bytes: its location and the offset just
// after its "{".
type objStart struct {
	ptr   jsonpointer.Pointer
	after int
}

// objectStarts lists the objects of a valid JSON text in document order.
func objectStarts(raw []byte) []objStart {
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	var out []objStart
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return out
		}
		if tok.Kind() == '{' {
			p, err := jsonpointer.Parse(string(dec.StackPointer()))
			if err == nil {
				out = append(out, objStart{ptr: p, after: int(dec.InputOffset())})
			}
		}
	}
}

func appendMember(dst []byte, name, value string) []byte {
	dst, _ = jsontext.AppendQuote(dst, name)
	dst = append(dst, ':')
	dst, _ = jsontext.AppendQuote(dst, value)
	return append(dst, ',')
}

// insertAt inserts ins at off; a member inserted before "}" loses its comma.
func insertAt(raw []byte, off int, ins []byte) []byte {
	rest := bytes.TrimLeft(raw[off:], " \t\r\n")
	if len(rest) > 0 && rest[0] == '}' {
		ins = bytes.TrimSuffix(ins, []byte(","))
	}
	out := make([]byte, 0, len(raw)+len(ins))
	out = append(out, raw[:off]...)
	out = append(out, ins...)
	return append(out, raw[off:]...)
}

// caseFolded returns name with its first cased letter's case flipped, or ""
// when it has none.
func caseFolded(name string) string {
	for i, r := range name {
		switch {
		case unicode.IsLower(r):
			return name[:i] + string(unicode.ToUpper(r)) + name[i+utf8.RuneLen(r):]
		case unicode.IsUpper(r):
			return name[:i] + string(unicode.ToLower(r)) + name[i+utf8.RuneLen(r):]
		}
	}
	return ""
}

// memberMutants adds, to each object of raw in document order and for each
// of its members in sorted name order, a duplicate member with a
// disagreeing value and, inside scope, a member whose name differs only by
// case. raw is the body, or for an MCP text result the JSON text at
// prefix, which wrap turns back into a body (nil: raw is the body).
func (m *mutator) memberMutants(raw []byte, objs []objStart, prefix jsonpointer.Pointer, wrap func([]byte) []byte) {
	if wrap == nil {
		wrap = func(b []byte) []byte { return b }
	}
	for _, o := range objs {
		ptr := append(slices.Clone(prefix), o.ptr...)
		obj, ok := ptr.Lookup(m.value)
		if !ok {
			continue
		}
		members, _ := obj.(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(members)) {
			c := m.canary()
			ins := appendMember(nil, name, c)
			body := wrap(insertAt(raw, o.after, ins))
			m.add(Mutant{Family: FamilyBytes, Kind: "duplicate_member", Pointer: ptr.String() + "/" + jsonpointer.EscapeToken(name),
				Body: body, Expect: []string{gate.ReasonDuplicate}, Reason: gate.ReasonDuplicate, Canary: c, Hint: "built into the gate",
				Before: string(m.raw), After: string(body)})
			if folded := caseFolded(name); folded != "" && members[folded] == nil && hasPrefix(ptr, m.scope) {
				c := m.canary()
				body := wrap(insertAt(raw, o.after, appendMember(nil, folded, c)))
				mu := Mutant{Family: FamilyBytes, Kind: "case_folded_name", Pointer: ptr.String() + "/" + jsonpointer.EscapeToken(folded),
					Body: body, Expect: []string{gate.ReasonFoldCollision}, Reason: gate.ReasonFoldCollision, Canary: c, Hint: "built into the gate",
					Before: string(m.raw), After: string(body)}
				if m.limits.AllowFoldCollisions {
					mu.Expect, mu.Reason, mu.Hint = []string{"schema.*"}, "schema.additionalProperties", "additionalProperties: false (or limits.member_fold_collision: true)"
				}
				m.add(mu)
			}
		}
	}
}

// textMutants are the bytes family inside an MCP text result's JSON text:
// a duplicate member and a case-folded name in each of its objects, the
// text cut in half and the text followed by a second value, each written
// back into the same text block of the same CallToolResult. The parse
// stage refuses them as it would the same bytes as a raw body.
func (m *mutator) textMutants() {
	inner := []byte(m.text.json)
	m.memberMutants(inner, objectStarts(inner), m.scope, m.text.wrap)
	add := func(kind string, text []byte, expect, canary string) {
		body := m.text.wrap(text)
		m.add(Mutant{Family: FamilyBytes, Kind: kind, Pointer: m.scope.String(), Body: body,
			Expect: []string{expect}, Reason: expect, Canary: canary, Hint: "built into the gate",
			Before: string(m.raw), After: string(body)})
	}
	if len(inner) > 1 {
		add("text_truncated", inner[:len(inner)/2], gate.ReasonTruncated, "")
	}
	c := m.canary()
	add("text_second_value", append(slices.Clone(inner), []byte("\n{\"airlock_canary\":\""+c+"\"}")...), gate.ReasonTrailingData, c)
}
