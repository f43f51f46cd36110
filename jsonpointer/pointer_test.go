package jsonpointer_test

import (
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/jsonpointer"
)

// RFC 6901 JSON Pointers, with the projection's "*" extension.
var _ = Describe("Pointer", func() {
	DescribeTable("Parse unescapes reference tokens (RFC 6901 §3, §4)",
		func(s string, want jsonpointer.Pointer) {
			p, err := jsonpointer.Parse(s)
			Expect(err).NotTo(HaveOccurred())
			Expect(p).To(Equal(want))
			Expect(p.String()).To(Equal(s), "String is the inverse of Parse")
		},
		Entry("the whole document", "", jsonpointer.Pointer{}),
		Entry("the empty member name", "/", jsonpointer.Pointer{""}),
		Entry("two empty tokens", "//", jsonpointer.Pointer{"", ""}),
		Entry("plain tokens", "/data/change_id", jsonpointer.Pointer{"data", "change_id"}),
		Entry("~1 is a slash", "/a~1b", jsonpointer.Pointer{"a/b"}),
		Entry("~0 is a tilde", "/m~0n", jsonpointer.Pointer{"m~n"}),
		Entry("~01 is a tilde then 1, not a slash", "/~01", jsonpointer.Pointer{"~1"}),
		Entry("~10 is a slash then 0", "/~10", jsonpointer.Pointer{"/0"}),
		Entry("~0~1 together", "/~0~1~0", jsonpointer.Pointer{"~/~"}),
		Entry("array indices are ordinary tokens", "/items/0/name", jsonpointer.Pointer{"items", "0", "name"}),
		Entry("a wildcard", "/items/*/name", jsonpointer.Pointer{"items", "*", "name"}),
		Entry("non-ASCII", "/café/ü", jsonpointer.Pointer{"café", "ü"}),
		Entry("percent stays literal", "/c%25d", jsonpointer.Pointer{"c%25d"}),
	)

	DescribeTable("Parse refuses a malformed pointer",
		func(s, msg string) {
			_, err := jsonpointer.Parse(s)
			Expect(err).To(MatchError(ContainSubstring(msg)))
		},
		Entry("no leading slash", "data", `must be empty or start with "/"`),
		Entry("a URI fragment", "#/data", `must be empty or start with "/"`),
		Entry("~2", "/a~2b", `"~" must be followed by 0 or 1`),
		Entry("a lone ~ at the end", "/a~", `"~" must be followed by 0 or 1`),
		Entry("a lone ~ in the middle", "/~/x", `"~" must be followed by 0 or 1`),
		Entry("a bad escape in a later token", "/ok/x~9", `"~" must be followed by 0 or 1`),
	)

	DescribeTable("EscapeToken",
		func(t, want string) { Expect(jsonpointer.EscapeToken(t)).To(Equal(want)) },
		Entry("plain", "abc", "abc"),
		Entry("slash", "a/b", "a~1b"),
		Entry("tilde", "m~n", "m~0n"),
		Entry("tilde before 1", "~1", "~01"),
		Entry("both", "~/", "~0~1"),
	)

	It("Wildcard reports a * token only", func() {
		Expect(mustPointer("/items/*/name").Wildcard()).To(BeTrue())
		Expect(mustPointer("/*").Wildcard()).To(BeTrue())
		Expect(mustPointer("/items/0/name").Wildcard()).To(BeFalse())
		Expect(mustPointer("/a*").Wildcard()).To(BeFalse())
		Expect(mustPointer("").Wildcard()).To(BeFalse())
	})

	Describe("Lookup", func() {
		// The example document of RFC 6901 §5.
		doc := map[string]any{
			"foo":  []any{"bar", "baz"},
			"":     json.Number("0"),
			"a/b":  json.Number("1"),
			"c%d":  json.Number("2"),
			"e^f":  json.Number("3"),
			"g|h":  json.Number("4"),
			"i\\j": json.Number("5"),
			"k\"l": json.Number("6"),
			" ":    json.Number("7"),
			"m~n":  json.Number("8"),
			"*":    "star",
			"nested": map[string]any{
				"list": []any{map[string]any{"x": true}, nil},
			},
		}

		DescribeTable("finds the RFC 6901 §5 values",
			func(s string, want any) {
				got, ok := mustPointer(s).Lookup(doc)
				Expect(ok).To(BeTrue())
				if want == nil {
					Expect(got).To(BeNil())
					return
				}
				Expect(got).To(Equal(want))
			},
			Entry(`""`, "", doc),
			Entry(`"/foo"`, "/foo", []any{"bar", "baz"}),
			Entry(`"/foo/0"`, "/foo/0", "bar"),
			Entry(`"/foo/1"`, "/foo/1", "baz"),
			Entry(`"/"`, "/", json.Number("0")),
			Entry(`"/a~1b"`, "/a~1b", json.Number("1")),
			Entry(`"/c%d"`, "/c%d", json.Number("2")),
			Entry(`"/e^f"`, "/e^f", json.Number("3")),
			Entry(`"/g|h"`, "/g|h", json.Number("4")),
			Entry(`"/i\\j"`, "/i\\j", json.Number("5")),
			Entry(`"/k\"l"`, "/k\"l", json.Number("6")),
			Entry(`"/ "`, "/ ", json.Number("7")),
			Entry(`"/m~0n"`, "/m~0n", json.Number("8")),
			Entry("a member literally named *", "/*", "star"),
			Entry("through an array into an object", "/nested/list/0/x", true),
			Entry("a null element is found", "/nested/list/1", nil),
		)

		DescribeTable("reports false for a location that does not exist",
			func(s string) {
				got, ok := mustPointer(s).Lookup(doc)
				Expect(ok).To(BeFalse())
				Expect(got).To(BeNil())
			},
			Entry("a missing member", "/nope"),
			Entry("a member of the wrong case", "/FOO"),
			Entry("an index with a leading zero", "/foo/01"),
			Entry("an index 00", "/foo/00"),
			Entry("the past-the-end index -", "/foo/-"),
			Entry("a negative index", "/foo/-1"),
			Entry("an index with a sign", "/foo/+1"),
			Entry("an out-of-range index", "/foo/2"),
			Entry("a huge index", "/foo/99999999999999999999999999"),
			Entry("an index with a trailing letter", "/foo/1a"),
			Entry("an index with spaces", "/foo/ 1"),
			Entry("an empty index", "/foo/"),
			Entry("a * on an array (Lookup does not expand)", "/foo/*"),
			Entry("a member of a string", "/foo/0/x"),
			Entry("a member of a number", "/a~1b/x"),
			Entry("a member of null", "/nested/list/1/x"),
		)

		It("treats index 0 as canonical", func() {
			got, ok := mustPointer("/0").Lookup([]any{"first"})
			Expect(ok).To(BeTrue())
			Expect(got).To(Equal("first"))
		})

		It("LookupString returns strings only", func() {
			s, ok := mustPointer("/foo/0").LookupString(doc)
			Expect(ok).To(BeTrue())
			Expect(s).To(Equal("bar"))
			_, ok = mustPointer("/a~1b").LookupString(doc)
			Expect(ok).To(BeFalse())
			_, ok = mustPointer("/missing").LookupString(doc)
			Expect(ok).To(BeFalse())
		})
	})

	DescribeTable("Expand maps a * token over every array element",
		func(s string, want any, found bool) {
			v := map[string]any{
				"rows":  []any{map[string]any{"id": "a", "tags": []any{"x", "y"}}, map[string]any{"id": "b", "tags": []any{}}},
				"empty": []any{},
				"mixed": []any{map[string]any{"id": "a"}, map[string]any{}},
				"obj":   map[string]any{"*": "star"},
			}
			got, ok := mustPointer(s).Expand(v)
			Expect(ok).To(Equal(found))
			if want == nil {
				Expect(got).To(BeNil())
			} else {
				Expect(got).To(Equal(want))
			}
		},
		Entry("no star is Lookup", "/rows/0/id", "a", true),
		Entry("one star", "/rows/*/id", []any{"a", "b"}, true),
		Entry("nested stars give nested arrays", "/rows/*/tags/*", []any{[]any{"x", "y"}, []any{}}, true),
		Entry("a star over an empty array", "/empty/*", []any{}, true),
		Entry("an element lacking the rest", "/mixed/*/id", nil, false),
		Entry("a star over an object is not a member lookup", "/obj/*", nil, false),
		Entry("a missing member", "/nope/*", nil, false),
	)
})

func mustPointer(s string) jsonpointer.Pointer {
	p, err := jsonpointer.Parse(s)
	Expect(err).NotTo(HaveOccurred())
	return p
}
