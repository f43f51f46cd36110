package schemadiff_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/reports"
	"github.com/airlockdev/airlock/schemadiff"
)

// selfDiffFiles are the schemas every self-diff check starts from: the
// hand-written tricky ones of testdata/selfdiff (oneOf inside allOf with a
// branch the allOf excludes, by const, type, false, through $ref and
// nested; recursive $refs, $dynamicRef, if/then/else, nested anyOf, a
// shared $ref target) and the bundled schemas of ../schemas.
func selfDiffFiles() []string {
	var out []string
	for _, pattern := range []string{"testdata/selfdiff/*.json", "../schemas/*.json", "../schemas/*/*.json"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			panic(err)
		}
		out = append(out, m...)
	}
	return out
}

// selfDiffError is the error a self-diff may give: only the documented
// bounds (schemadiff.Compare), never another.
func selfDiffError(err error) bool {
	var ce *gate.ConfigError
	return errors.As(err, &ce) && (strings.Contains(ce.Msg, "alternatives, more than the 64 the diff compares") || strings.Contains(ce.Msg, "too large to compare with") || strings.Contains(ce.Msg, "cannot compare instance location"))
}

var _ = Describe("a schema diffed against itself", func() {
	var entries []TableEntry
	for _, f := range selfDiffFiles() {
		entries = append(entries, Entry(f, f))
	}
	DescribeTable("reports no change",
		func(path string) {
			d, err := schemadiff.Files(path, path)
			Expect(err).NotTo(HaveOccurred())
			Expect(d.Comparisons[0].Changes).To(BeEmpty())
		},
		entries,
	)

	It("reports no change where an allOf beside a oneOf excludes a branch (the 13-line reproduction of issue 16)", func() {
		// Before the fix: branch removed + branch added (breaking) for the
		// const, type, false, $ref and nested variants of testdata/selfdiff.
		d, err := schemadiff.Files("testdata/selfdiff/allof-oneof-const-top.json", "testdata/selfdiff/allof-oneof-const-top.json")
		Expect(err).NotTo(HaveOccurred())
		Expect(d.Comparisons[0].Changes).To(BeEmpty())
	})

	It("still reports a branch an allOf newly excludes as removed, and one it no longer excludes as added", func() {
		old := `{"allOf": [{"oneOf": [{"const": "a"}, {"const": "b"}]}, {"enum": ["a", "b"]}]}`
		neu := `{"allOf": [{"oneOf": [{"const": "a"}, {"const": "b"}]}, {"const": "a"}]}`
		Expect(rulesOf(diffOf(diffCase{old: old, new: neu}))).To(Equal([]string{schemadiff.RuleBranchRemoved}))
		Expect(rulesOf(diffOf(diffCase{old: neu, new: old}))).To(Equal([]string{schemadiff.RuleBranchAdded}))
	})
})

var _ = Describe("a change behind a shared $ref", func() {
	It("is reported once, at the shallowest location, naming the other locations where the same schemas apply", func() {
		raw, err := os.ReadFile("testdata/selfdiff/shared-ref.json")
		Expect(err).NotTo(HaveOccurred())
		changes := diffOf(diffCase{old: string(raw), new: strings.Replace(string(raw), `"maxLength": 8`, `"maxLength": 16`, 1)})
		Expect(changes).To(HaveLen(1))
		// The maxLength keyword of the one shared definition: line 9, column 75.
		Expect([]int{changes[0].NewLine, changes[0].NewColumn}).To(Equal([]int{9, 75}))
		changes[0].NewFile, changes[0].NewLine, changes[0].NewColumn = "", 0, 0
		Expect(changes).To(Equal([]reports.Change{{
			Rule: schemadiff.RuleLengthLoosened, Level: reports.Breaking, Instance: "/user/login",
			OldPointer: "/properties/user/$ref/properties/login/maxLength", NewPointer: "/properties/user/$ref/properties/login/maxLength",
			Message: "/user/login: maxLength 8 became maxLength 16 (reported once; the same schemas also apply at /head/user/login, /repo/owner/login and /head/repo/owner/login)",
		}}))
	})

	It("is reported once in a recursive schema, at the top", func() {
		node := func(maxLength string) string {
			return `{"$ref":"#/$defs/node","$defs":{"node":{"type":"object","properties":{` +
				`"children":{"type":"array","items":{"$ref":"#/$defs/node"}},` +
				`"name":{"type":"string","maxLength":` + maxLength + `}}}}}`
		}
		changes := diffOf(diffCase{old: node("8"), new: node("16")})
		Expect(changes).To(HaveLen(1))
		Expect(changes[0].Instance).To(Equal("/name"))
		Expect(changes[0].Message).To(HaveSuffix("(reported once; the same schemas also apply at /children/*/name and at more instance locations, as they recur)"))
	})

	It("is rebased onto the location where it is reported when a oneOf's trial compared the pair elsewhere first", func() {
		// The trial pairing of the oneOf at /a compares user's login first,
		// through /properties/a/oneOf/0; /b/login is as shallow, and its
		// frame comes first (an alternative is a level of its own), so the
		// change is reported there, with /b's keyword locations.
		s := func(maxLength string) string {
			return `{"type":"object","properties":{` +
				`"a":{"oneOf":[{"$ref":"#/$defs/user"},{"type":"string"}]},` +
				`"b":{"$ref":"#/$defs/user"}},` +
				`"$defs":{"user":{"type":"object","properties":{"login":{"type":"string","maxLength":` + maxLength + `}}}}}`
		}
		changes := diffOf(diffCase{old: s("8"), new: s("16")})
		Expect(changes).To(HaveLen(1))
		Expect(changes[0].Instance).To(Equal("/b/login"))
		Expect(changes[0].OldPointer).To(Equal("/properties/b/$ref/properties/login/maxLength"))
		Expect(changes[0].NewPointer).To(Equal("/properties/b/$ref/properties/login/maxLength"))
		Expect(changes[0].Message).To(Equal("/b/login: maxLength 8 became maxLength 16 (reported once; the same schemas also apply at /a/login)"))
	})
})

// FuzzSelfDiff: a schema diffed against itself (two compiles of one file)
// reports no change, and fails only at a documented bound. An input that
// is JSON is the schema; any other is read by genSchema as choices among
// the keywords the diff handles, so most inputs are schemas. The seeds
// are the files of selfDiffFiles (written alone into a folder: one that
// $refs a sibling does not compile there) and a few byte strings; an input
// that does not compile, or longer than 64 KiB, is skipped.
func FuzzSelfDiff(f *testing.F) {
	for _, p := range selfDiffFiles() {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{7, 8, 5, 2, 2, 9, 3, 4, 13, 1})
	f.Add([]byte{13, 5, 1, 2, 8, 3, 3, 10, 11, 12, 6})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return
		}
		if !json.Valid(data) {
			data = []byte(genSchema(data))
		}
		p := filepath.Join(t.TempDir(), "s.json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		o, err := schemadiff.CompileFile(p)
		if err != nil {
			return
		}
		n, err := schemadiff.CompileFile(p)
		if err != nil {
			t.Fatalf("compiles once, not twice: %v", err)
		}
		c, err := schemadiff.Compare("self", o, n)
		if err != nil {
			if selfDiffError(err) {
				return
			}
			t.Fatalf("self-diff error: %v\n%s", err, data)
		}
		if len(c.Changes) > 0 {
			t.Fatalf("self-diff reports %d change(s), first %+v\n%s", len(c.Changes), c.Changes[0], data)
		}
	})
}

// genSchema reads b as a sequence of choices and writes the JSON Schema
// they pick: a root with $defs a and b (which may $ref each other and
// themselves) and a $dynamicAnchor, built from type, const, enum,
// properties/required/additionalProperties, items, allOf, oneOf, anyOf,
// $ref, $dynamicRef, if/then/else, not and the bounds; nesting stops at
// depth 4, and past the end of b every choice is 0.
func genSchema(b []byte) string {
	g := &schemaGen{b: b}
	return `{"$dynamicAnchor":"node","$defs":{"a":` + g.schema(1) + `,"b":` + g.schema(1) + `},"allOf":[` + g.schema(0) + `]}`
}

type schemaGen struct {
	b []byte
	i int
}

func (g *schemaGen) next(n int) int {
	if g.i >= len(g.b) {
		return 0
	}
	c := int(g.b[g.i])
	g.i++
	return c % n
}

var (
	genTypes  = []string{`"string"`, `"integer"`, `"number"`, `"object"`, `"array"`, `"null"`, `"boolean"`, `["string","null"]`, `["object","null"]`}
	genValues = []string{`"a"`, `"b"`, `1`, `2.5`, `null`, `true`, `{}`, `[]`}
	genNames  = []string{"kind", "a", "b", "x~y"}
)

func (g *schemaGen) list(depth, max int) string {
	n := g.next(max) + 1
	parts := make([]string, n)
	for i := range parts {
		parts[i] = g.schema(depth + 1)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func (g *schemaGen) schema(depth int) string {
	c := g.next(18)
	if depth >= 4 && c >= 5 {
		c %= 5
	}
	switch c {
	case 0:
		return `true`
	case 1:
		return `false`
	case 2:
		return `{"type":` + genTypes[g.next(len(genTypes))] + `}`
	case 3:
		return `{"const":` + genValues[g.next(len(genValues))] + `}`
	case 4:
		return `{"enum":[` + genValues[g.next(len(genValues))] + `,` + genValues[g.next(len(genValues))] + `]}`
	case 5, 13:
		var props, req []string
		for i, name := range genNames {
			if g.next(2) == 1 || i == 0 && c == 13 {
				props = append(props, `"`+name+`":`+g.schema(depth+1))
			}
			if g.next(3) == 1 {
				req = append(req, `"`+name+`"`)
			}
		}
		s := `{"type":"object","properties":{` + strings.Join(props, ",") + `},"required":[` + strings.Join(req, ",") + `]`
		switch g.next(3) {
		case 1:
			s += `,"additionalProperties":false`
		case 2:
			s += `,"additionalProperties":` + g.schema(depth+1)
		}
		if c == 13 {
			s += `,"oneOf":` + g.list(depth, 3)
		}
		return s + "}"
	case 6:
		s := `{"type":"array","items":` + g.schema(depth+1)
		if g.next(2) == 1 {
			s += `,"prefixItems":` + g.list(depth, 2)
		}
		return s + "}"
	case 7:
		return `{"allOf":` + g.list(depth, 3) + `}`
	case 8:
		return `{"oneOf":` + g.list(depth, 3) + `}`
	case 9:
		return `{"anyOf":` + g.list(depth, 3) + `}`
	case 10:
		return `{"$ref":"#/$defs/` + []string{"a", "b"}[g.next(2)] + `"}`
	case 11:
		return `{"if":` + g.schema(depth+1) + `,"then":` + g.schema(depth+1) + `,"else":` + g.schema(depth+1) + `}`
	case 12:
		return `{"not":` + g.schema(depth+1) + `}`
	case 14:
		return `{"type":"string","minLength":` + strconv.Itoa(g.next(3)) + `,"maxLength":` + strconv.Itoa(g.next(9)) + []string{``, `,"pattern":"^a"`, `,"format":"date-time"`}[g.next(3)] + `}`
	case 15:
		return `{"type":"number","minimum":` + strconv.Itoa(g.next(3)) + `,"exclusiveMaximum":` + strconv.Itoa(g.next(9)) + []string{``, `,"multipleOf":2`}[g.next(2)] + `}`
	case 16:
		return `{"$dynamicRef":"#node"}`
	default:
		return `{"allOf":[{"oneOf":` + g.list(depth, 3) + `},` + g.schema(depth+1) + `]}`
	}
}
