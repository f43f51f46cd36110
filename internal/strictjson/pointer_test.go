package strictjson_test

import (
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/internal/strictjson"
)

var _ = Describe("PointerOffset", func() {
	const doc = ` {
  "type": "object",
  "properties": {
    "a/b": {"type": "string", "minLength": 1},
    "t~x": {"enum": ["x", {"deep": [10, 20, {"k": true}]}]},
    "\u00e9t\u00e9": {"format": "date"},
    "esc\"q": null
  },
  "allOf": [ {"title": "first"} ,	{"title": "second"} ],
  "empty": {}, "list": []
}`

	// at returns the offset of the n-th (1-based) occurrence of marker.
	at := func(marker string, n int) int64 {
		off := -1
		for range n {
			i := strings.Index(doc[off+1:], marker)
			Expect(i).To(BeNumerically(">=", 0), "marker %q", marker)
			off += 1 + i
		}
		return int64(off)
	}

	DescribeTable("finds the member name or the value",
		func(ptr, marker string, n int) {
			off, ok := strictjson.PointerOffset([]byte(doc), ptr)
			Expect(ok).To(BeTrue())
			Expect(off).To(Equal(at(marker, n)))
		},
		Entry("the root: its first byte after whitespace", "", "{", 1),
		Entry("a top-level member: its name", "/type", `"type"`, 1),
		Entry("a nested member", "/properties/a~1b/minLength", `"minLength"`, 1),
		Entry("~1 unescapes to /", "/properties/a~1b", `"a/b"`, 1),
		Entry("~0 unescapes to ~", "/properties/t~0x", `"t~x"`, 1),
		Entry("a name spelled with \\u escapes compares decoded", "/properties/été/format", `"format"`, 1),
		Entry("a name with an escaped quote", "/properties/esc\"q", `"esc\"q"`, 1),
		Entry("an array element: the value", "/allOf/1", `{"title": "second"}`, 1),
		Entry("inside an array element", "/allOf/1/title", `"title"`, 2),
		Entry("deep in data", "/properties/t~0x/enum/1/deep/2/k", `"k"`, 1),
		Entry("a scalar element", "/properties/t~0x/enum/1/deep/1", `20`, 1),
		Entry("an empty object", "/empty", `"empty"`, 1),
	)

	DescribeTable("says when the pointer names nothing",
		func(ptr string) {
			_, ok := strictjson.PointerOffset([]byte(doc), ptr)
			Expect(ok).To(BeFalse())
		},
		Entry("a missing member", "/nope"),
		Entry("a member of a scalar", "/type/x"),
		Entry("an index past the end", "/allOf/2"),
		Entry("an index into an empty array", "/list/0"),
		Entry("the append index -", "/allOf/-"),
		Entry("an index with a leading zero", "/allOf/01"),
		Entry("a member name used on an array", "/allOf/title"),
		Entry("no leading slash", "type"),
		Entry("a bad escape", "/properties/a~2b"),
		Entry("a trailing ~", "/properties/a~"),
	)

	It("tolerates duplicate names (the first wins) and stops at broken JSON", func() {
		off, ok := strictjson.PointerOffset([]byte(`{"a": 1, "a": 2}`), "/a")
		Expect(ok).To(BeTrue())
		Expect(off).To(BeEquivalentTo(1))
		off, ok = strictjson.PointerOffset([]byte(`{"a": [1, 2], "b": {`), "/a/1")
		Expect(ok).To(BeTrue())
		Expect(off).To(BeEquivalentTo(10))
		_, ok = strictjson.PointerOffset([]byte(`{"a": [1, 2], "b": {`), "/b/c")
		Expect(ok).To(BeFalse())
		_, ok = strictjson.PointerOffset([]byte(`{"a" 1}`), "/a")
		Expect(ok).To(BeTrue(), "the name is found before the syntax error")
		_, ok = strictjson.PointerOffset([]byte(`{"a" 1, "b": 2}`), "/b")
		Expect(ok).To(BeFalse())
	})

	It("finds many pointers in one pass exactly where PointerOffset finds each (PointerOffsets)", func() {
		var all []string
		var walk func(v any, ptr string)
		walk = func(v any, ptr string) {
			all = append(all, ptr)
			switch v := v.(type) {
			case map[string]any:
				for k, x := range v {
					walk(x, ptr+"/"+strings.NewReplacer("~", "~0", "/", "~1").Replace(k))
				}
			case []any:
				for i, x := range v {
					walk(x, ptr+"/"+strconv.Itoa(i))
				}
			}
		}
		parsed, err := strictjson.Parse([]byte(doc), strictjson.Limits{})
		Expect(err).NotTo(HaveOccurred())
		walk(parsed, "")
		misses := []string{"/nope", "/allOf/2", "/allOf/01", "/allOf/-", "/type/x", "~", "/properties/a~2b"}
		got := strictjson.PointerOffsets([]byte(doc), append(append([]string{}, all...), misses...))
		for _, p := range all {
			want, ok := strictjson.PointerOffset([]byte(doc), p)
			Expect(ok).To(BeTrue(), p)
			Expect(got).To(HaveKeyWithValue(p, want), p)
		}
		for _, p := range misses {
			Expect(got).NotTo(HaveKey(p))
		}
		Expect(strictjson.PointerOffsets([]byte(`{"a": 1, "a": 2}`), []string{"/a"})).To(HaveKeyWithValue("/a", int64(1)), "the first of two members wins")
		Expect(strictjson.PointerOffsets([]byte(`{"a": [1, 2], "b": {`), []string{"/a/1", "/b/c"})).To(Equal(map[string]int64{"/a/1": 10}), "located up to where the body breaks")
	})
})

var _ = Describe("LineColumns", func() {
	It("gives each offset its line and code-point column, in any input order, skipping offsets outside the text", func() {
		text := []byte("{\n  \"é\": 1,\n\t\"x\": [2]}")
		offs := []int64{int64(len(text)), 0, 4, -1, int64(len(text)) + 1, 9, 13}
		got := map[int][2]int{}
		var order []int
		strictjson.LineColumns(text, offs, func(i, line, col int) {
			got[i] = [2]int{line, col}
			order = append(order, i)
		})
		Expect(got).To(Equal(map[int][2]int{
			1: {1, 1},  // the opening brace
			2: {2, 3},  // the quote before é
			5: {2, 7},  // "1": é is one column though two bytes
			6: {3, 1},  // the tab
			0: {3, 11}, // the end of the text, after ten characters
		}))
		Expect(order).To(Equal([]int{1, 2, 5, 6, 0}))
	})
})
