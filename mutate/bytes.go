package mutate

import (
	"bytes"
	"fmt"
	"io"
	"iter"
	"maps"
	"slices"
	"strings"
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
// nesting and size past the limits, an HTML page and an empty body. Each
// body is built only when its mutant is kept and proved; the oversize
// mutant is a stream (never built in memory).
func (m *mutator) bytesMutants() {
	raw := m.raw
	add := func(kind string, build func() []byte, expect []string, canary string) {
		m.addBytes(Mutant{Family: FamilyBytes, Kind: kind,
			Expect: expect, Reason: expect[0], Canary: canary, Hint: "built into the gate"}, build)
	}
	m.memberMutants(raw, nil, nil)
	if m.text != nil {
		m.textMutants()
	}

	// The rest carry a canary member at the start of the top-level object.
	m.at = nil // the whole body
	c := m.canary()
	withCanary, at := raw, -1
	for o := range objectStarts(raw) {
		if len(o.ptr) == 0 {
			at = o.after
			withCanary = insertAt(raw, at, appendMember(nil, "airlock_canary", c))
		}
		break // the first object is the top-level one, or there is none
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
		add(fmt.Sprintf("truncated_%d_of_6", i), func() []byte { return withCanary[:off:off] }, []string{gate.ReasonTruncated, gate.ReasonEmptyBody}, can)
	}
	canaryOf := func() string {
		if at >= 0 {
			return c
		}
		return ""
	}
	add("bom", func() []byte { return append([]byte{0xEF, 0xBB, 0xBF}, withCanary...) }, []string{gate.ReasonBOM}, canaryOf())
	if at >= 0 {
		c2 := m.canary()
		add("invalid_utf8", func() []byte { return insertAt(raw, at, []byte(`"airlock_canary":"`+c2+"\xff\",")) }, []string{gate.ReasonInvalidUTF8}, c2)
		c3 := m.canary()
		add("lone_surrogate", func() []byte { return insertAt(raw, at, []byte(`"airlock_canary":"`+c3+`\ud800",`)) }, []string{gate.ReasonLoneSurrogate}, c3)
	}
	c4 := m.canary()
	add("second_value", func() []byte { return append(slices.Clone(raw), []byte("\n{\"airlock_canary\":\""+c4+"\"}")...) }, []string{gate.ReasonTrailingData}, c4)
	depth := m.limits.MaxDepth
	add("too_deep", func() []byte {
		return append(append(bytes.Repeat([]byte("["), depth), withCanary...), bytes.Repeat([]byte("]"), depth)...)
	}, []string{gate.ReasonDepth}, canaryOf())
	if pad := m.limits.MaxBytes + 1 - int64(len(withCanary)); pad > 0 {
		m.tooLarge(withCanary, pad, canaryOf())
	}
	c5 := m.canary()
	html := "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1><p>" + c5 + "</p></body></html>\n"
	m.addBytes(Mutant{Family: FamilyBytes, Kind: "html_error_page", Status: 200, ContentType: "application/json",
		Expect: []string{gate.ReasonNotJSON}, Reason: gate.ReasonNotJSON, Canary: c5, Hint: "built into the gate"}, func() []byte { return []byte(html) })
	m.addBytes(Mutant{Family: FamilyBytes, Kind: "empty_body", Status: 200,
		Expect: []string{gate.ReasonEmptyBody}, Reason: gate.ReasonEmptyBody, Hint: "built into the gate"}, func() []byte { return []byte{} })
}

// addBytes adds a bytes mutant whose body build makes; when built, its
// Before and After are excerpts of the original body and of the mutant's
// around the change.
func (m *mutator) addBytes(mu Mutant, build func() []byte) {
	raw := m.raw
	m.add(mu, func(mu *Mutant) {
		countBuilt()
		mu.Body = build()
		mu.Before, mu.After = excerpts(raw, mu.Body)
	})
}

// tooLarge adds the oversize mutant: body (the body with its canary)
// followed by pad spaces, max_bytes+1 bytes in all, which the transport
// stage refuses with transport.too_large after reading max_bytes+1 bytes.
// It is a stream, an io.MultiReader of body and a reader of spaces: its
// bytes are never held in memory here; the gate reads max_bytes+1 of them
// into one buffer of its own (the stream tells its length), so proving it
// costs max_bytes+1 bytes per worker while it runs.
func (m *mutator) tooLarge(body []byte, pad int64, canary string) {
	if !m.keeps() {
		m.skip()
		return
	}
	tail := body[max(0, len(body)-excerptContext):]
	mu := Mutant{Family: FamilyBytes, Kind: "too_large",
		Expect: []string{gate.ReasonTooLarge}, Reason: gate.ReasonTooLarge, Canary: canary, Hint: "built into the gate",
		Before: "…" + string(m.raw[max(0, len(m.raw)-excerptContext):]),
		After:  fmt.Sprintf("…%s + %d spaces (%d bytes: max_bytes+1)", tail, pad, int64(len(body))+pad)}
	m.add(mu, nil)
	last := &m.out[len(m.out)-1]
	last.stream = func() io.Reader {
		return &sized{Reader: io.MultiReader(bytes.NewReader(body), &spaces{n: pad}), n: int64(len(body)) + pad}
	}
}

// sized is a stream that tells its length (Len, the bytes not yet read),
// as bytes.Reader does, so the gate reads it into one buffer of
// max_bytes+1 bytes instead of growing one.
type sized struct {
	io.Reader
	n int64
}

func (s *sized) Read(p []byte) (int, error) {
	n, err := s.Reader.Read(p)
	s.n -= int64(n)
	return n, err
}

// Len is the number of bytes left to read.
func (s *sized) Len() int { return int(s.n) }

// spaces reads n ASCII spaces.
type spaces struct{ n int64 }

func (s *spaces) Read(p []byte) (int, error) {
	if s.n <= 0 {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), s.n))
	for i := range p[:n] {
		p[i] = ' '
	}
	s.n -= int64(n)
	return n, nil
}

// Excerpts of a bytes mutant (Mutant.Before and After): excerptContext
// bytes of context on each side of the change, and at most excerptMax
// bytes of a changed run (its head and tail, with the count of bytes left
// out between them).
const (
	excerptContext = 40
	excerptMax     = 256
)

// excerpts returns the parts of orig and body around where they differ:
// after their common prefix and before their common suffix, with
// excerptContext bytes either side, a changed run longer than excerptMax
// cut in its middle. "…" marks a cut end. Time O(len(orig)+len(body)), the
// result at most 2×excerptContext + excerptMax + 40 bytes each.
func excerpts(orig, body []byte) (before, after string) {
	p := 0
	for p < len(orig) && p < len(body) && orig[p] == body[p] {
		p++
	}
	s := 0
	for s < len(orig)-p && s < len(body)-p && orig[len(orig)-1-s] == body[len(body)-1-s] {
		s++
	}
	start := max(0, p-excerptContext)
	cut := func(b []byte) string {
		end := len(b) - s
		stop := min(len(b), end+excerptContext)
		var out strings.Builder
		if start > 0 {
			out.WriteString("…")
		}
		out.Write(b[start:p])
		if changed := b[p:end]; len(changed) > excerptMax {
			out.Write(changed[:excerptMax/2])
			fmt.Fprintf(&out, "…(%d bytes)…", len(changed)-excerptMax)
			out.Write(changed[len(changed)-excerptMax/2:])
		} else {
			out.Write(changed)
		}
		out.Write(b[end:stop])
		if stop < len(b) {
			out.WriteString("…")
		}
		return out.String()
	}
	return cut(orig), cut(body)
}

// objStart is an object in the raw bytes: its location and the offset just
// after its "{".
type objStart struct {
	ptr   jsonpointer.Pointer
	after int
}

// objectStarts yields the objects of a valid JSON text in document order,
// read with one decoder: memory O(depth). An objStart is valid only while
// it is visited.
func objectStarts(raw []byte) iter.Seq[objStart] {
	return func(yield func(objStart) bool) {
		dec := jsontext.NewDecoder(bytes.NewReader(raw))
		for {
			tok, err := dec.ReadToken()
			if err != nil {
				return
			}
			if tok.Kind() == '{' {
				p, err := jsonpointer.Parse(string(dec.StackPointer()))
				if err == nil && !yield(objStart{ptr: p, after: int(dec.InputOffset())}) {
					return
				}
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
func (m *mutator) memberMutants(raw []byte, prefix jsonpointer.Pointer, wrap func([]byte) []byte) {
	if wrap == nil {
		wrap = func(b []byte) []byte { return b }
	}
	for o := range objectStarts(raw) {
		ptr := append(slices.Clone(prefix), o.ptr...)
		obj, ok := ptr.Lookup(m.value)
		if !ok {
			continue
		}
		members, _ := obj.(map[string]any)
		after := o.after
		for _, name := range slices.Sorted(maps.Keys(members)) {
			c := m.canary()
			m.at = append(ptr[:len(ptr):len(ptr)], name)
			if m.keeps() { // the pointer's text only for a kept mutant
				m.addBytes(Mutant{Family: FamilyBytes, Kind: "duplicate_member", Pointer: ptr.String() + "/" + jsonpointer.EscapeToken(name),
					Expect: []string{gate.ReasonDuplicate}, Reason: gate.ReasonDuplicate, Canary: c, Hint: "built into the gate"},
					func() []byte { return wrap(insertAt(raw, after, appendMember(nil, name, c))) })
			} else {
				m.skip()
			}
			if folded := caseFolded(name); folded != "" && members[folded] == nil && hasPrefix(ptr, m.scope) {
				c := m.canary()
				m.at = append(ptr[:len(ptr):len(ptr)], folded)
				if !m.keeps() {
					m.skip()
					continue
				}
				mu := Mutant{Family: FamilyBytes, Kind: "case_folded_name", Pointer: ptr.String() + "/" + jsonpointer.EscapeToken(folded),
					Expect: []string{gate.ReasonFoldCollision}, Reason: gate.ReasonFoldCollision, Canary: c, Hint: "built into the gate"}
				if m.limits.AllowFoldCollisions {
					mu.Expect, mu.Reason, mu.Hint = []string{"schema.*"}, "schema.additionalProperties", "additionalProperties: false (or limits.member_fold_collision: true)"
				}
				m.addBytes(mu, func() []byte { return wrap(insertAt(raw, after, appendMember(nil, folded, c))) })
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
	m.memberMutants(inner, m.scope, m.text.wrap)
	m.at = m.scope // the whole text
	add := func(kind string, text func() []byte, expect, canary string) {
		m.addBytes(Mutant{Family: FamilyBytes, Kind: kind, Pointer: m.scope.String(),
			Expect: []string{expect}, Reason: expect, Canary: canary, Hint: "built into the gate"},
			func() []byte { return m.text.wrap(text()) })
	}
	if len(inner) > 1 {
		add("text_truncated", func() []byte { return inner[:len(inner)/2] }, gate.ReasonTruncated, "")
	}
	c := m.canary()
	add("text_second_value", func() []byte { return append(slices.Clone(inner), []byte("\n{\"airlock_canary\":\""+c+"\"}")...) }, gate.ReasonTrailingData, c)
}
