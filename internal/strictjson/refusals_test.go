package strictjson_test

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/internal/strictjson"
)

// refused parses body and returns its refusal.
func refused(body string, lim strictjson.Limits) *strictjson.Error {
	GinkgoHelper()
	v, err := strictjson.Parse([]byte(body), lim)
	Expect(err).To(HaveOccurred(), "admitted as %#v", v)
	var pe *strictjson.Error
	Expect(errors.As(err, &pe)).To(BeTrue())
	return pe
}

var fold = strictjson.Limits{FoldCollisions: true}

var _ = Describe("a refusal's location", func() {
	DescribeTable("carries the JSON Pointer of the value beside the byte offset",
		func(body, reason string, offset int, pointer string) {
			for _, lim := range []strictjson.Limits{{MaxDepth: 4, MaxNumberLength: 8, MaxStringLength: 8}, {MaxDepth: 4, MaxNumberLength: 8, MaxStringLength: 8, FoldCollisions: true}} {
				pe := refused(body, lim)
				Expect(pe.Reason).To(Equal(reason), "%v", pe)
				Expect(pe.Offset).To(Equal(int64(offset)), "%v", pe)
				Expect(pe.Pointer).To(Equal(pointer), "%v", pe)
				Expect(pe.Error()).To(ContainSubstring(fmt.Sprintf("pointer %q", pointer)))
			}
		},
		Entry("a duplicate member names the member", `{"a":{"b":1,"b":2}}`, strictjson.ReasonDuplicate, 12, "/a/b"),
		Entry("a duplicate spelled with an escape", `{"x":[{"a/b":1,"a\/b":2}]}`, strictjson.ReasonDuplicate, 15, "/x/0/a~1b"),
		Entry("invalid UTF-8 in a string value", "{\"a\":[\"ok\",\"\xff\"]}", strictjson.ReasonInvalidUTF8, 12, "/a/1"),
		Entry("invalid UTF-8 in a member name names the object", "{\"a\":{\"\xfe\":1}}", strictjson.ReasonInvalidUTF8, 7, "/a"),
		Entry("a lone surrogate in a value", `{"a":{"t~":"\ud800"}}`, strictjson.ReasonLoneSurrogate, 12, "/a/t~0"),
		Entry("a lone surrogate in a member name names the object", `[{"\udc00":1}]`, strictjson.ReasonLoneSurrogate, 3, "/0"),
		Entry("a number past the length cap", `{"n":[1,123456789]}`, strictjson.ReasonNumber, 8, "/n/1"),
		Entry("a number that overflows", `{"n":1e400}`, strictjson.ReasonNumber, 5, "/n"),
		Entry("a string past the length cap", `{"s":"123456789"}`, strictjson.ReasonStringTooLong, 5, "/s"),
		Entry("a member name past the length cap names the object", `{"o":{"123456789":1}}`, strictjson.ReasonStringTooLong, 6, "/o"),
		Entry("nesting past the cap names the container opened too deep", `{"a":[[[{"b":1}]]]}`, strictjson.ReasonDepth, 8, "/a/0/0/0"),
		Entry("a bad literal", `{"a":[true,nul1]}`, strictjson.ReasonSyntax, 14, "/a/1"),
		Entry("a missing value", `{"a":}`, strictjson.ReasonSyntax, 5, "/a"),
		Entry("a missing comma names the object", `{"a":1 "b":2}`, strictjson.ReasonSyntax, 7, ""),
		Entry("a trailing comma names the array", `{"a":[1,]}`, strictjson.ReasonSyntax, 7, "/a"),
		Entry("a BOM is the whole text", "\xef\xbb\xbf{}", strictjson.ReasonBOM, 0, ""),
	)

	DescribeTable("puts the trailing-data offset at the second value, past the whitespace",
		func(body string, offset int) {
			pe := refused(body, strictjson.Limits{})
			Expect(pe.Reason).To(Equal(strictjson.ReasonTrailingData))
			Expect(pe.Offset).To(Equal(int64(offset)))
			Expect(pe.Pointer).To(Equal(""))
		},
		Entry("right after", `{}x`, 2),
		Entry("after spaces", `{}   1`, 5),
		Entry("after a newline", "{\"a\":1}\r\n\t{\"a\":1}", 10),
		Entry("a closing bracket", `[1] ]`, 4),
		Entry("after a top-level number", `12 3`, 3),
	)

	DescribeTable("names the innermost open container and how many are open when the input ends",
		func(body string, unclosed int, pointer, message string) {
			pe := refused(body, strictjson.Limits{})
			Expect(pe.Reason).To(Equal(strictjson.ReasonTruncated))
			Expect(pe.Offset).To(Equal(int64(len(body))))
			Expect(pe.Unclosed).To(Equal(unclosed))
			Expect(pe.Pointer).To(Equal(pointer))
			Expect(pe.Message).To(Equal(message))
			Expect(pe.Message).NotTo(ContainSubstring("EOF"))
		},
		Entry("inside a nested array", `{"a":{"b":[1,2`, 3, "/a/b",
			`input ends with 3 objects and arrays unclosed; the innermost is the array at "/a/b"`),
		Entry("inside a string value", `{"a":[{"b":"ab`, 3, "/a/0",
			`input ends with 3 objects and arrays unclosed; the innermost is the object at "/a/0", inside the value at "/a/0/b"`),
		Entry("after a name", `{"a":{"b"`, 2, "/a",
			`input ends with 2 objects and arrays unclosed; the innermost is the object at "/a", where the value at "/a/b" was expected`),
		Entry("after a comma", `[{"a":1},`, 1, "",
			`input ends with 1 object or array unclosed; the innermost is the array at ""`),
		Entry("inside a literal", `[[tru`, 2, "/0",
			`input ends with 2 objects and arrays unclosed; the innermost is the array at "/0", inside the value at "/0/0"`),
		Entry("inside a top-level string", `"abc`, 0, "", `input ends inside the top-level value`),
		Entry("before any value", ``, 0, "", `input ends where a value was expected`),
	)
})

var _ = Describe("repeated member names", func() {
	It("names every repeat in the order of the text, with pointers and offsets", func() {
		body := `{"a":1,"x":{"b":1,"b":2,"c":[{"d":1,"d":2}]},"a":3}`
		pe := refused(body, strictjson.Limits{})
		Expect(pe.Reason).To(Equal(strictjson.ReasonDuplicate))
		Expect(pe.Repeats).To(Equal([]strictjson.Repeat{
			{Pointer: "/x/b", Offset: 18, Name: "b", Earlier: "b", EarlierOffset: 12},
			{Pointer: "/x/c/0/d", Offset: 36, Name: "d", Earlier: "d", EarlierOffset: 30},
			{Pointer: "/a", Offset: 45, Name: "a", Earlier: "a", EarlierOffset: 1},
		}))
		Expect(pe.Offset).To(Equal(int64(18)))
		Expect(pe.Pointer).To(Equal("/x/b"))
		Expect(pe.Message).To(Equal(`3 repeated member names: duplicate member name "b" at "/x/b" (byte 18; first at byte 12); ` +
			`duplicate member name "d" at "/x/c/0/d" (byte 36; first at byte 30); duplicate member name "a" at "/a" (byte 45; first at byte 1)`))
	})

	It("lists at most MaxRepeats and says it stopped looking", func() {
		var b strings.Builder
		b.WriteString("[")
		for i := range 40 {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"k%d":1,"k%d":2}`, i, i)
		}
		b.WriteString("]")
		pe := refused(b.String(), strictjson.Limits{})
		Expect(pe.Repeats).To(HaveLen(strictjson.MaxRepeats))
		Expect(pe.Repeats[15].Pointer).To(Equal("/15/k15"))
		Expect(pe.Message).To(HaveSuffix("; not looking for more after 16"))
	})

	It("keeps the reason of the first repeat when the parse stops at a later error", func() {
		pe := refused(`{"a":1,"a":2,"b":[1,2`, strictjson.Limits{})
		Expect(pe.Reason).To(Equal(strictjson.ReasonDuplicate))
		Expect(pe.Pointer).To(Equal("/a"))
		Expect(pe.Message).To(HaveSuffix("; the parse stopped at byte 21: parse.truncated"))
	})

	It("finds repeats in an object past the linear search, before and after the switch to a map", func() {
		var b strings.Builder
		b.WriteString(`{"Zed":0`)
		for i := range 40 {
			fmt.Fprintf(&b, `,"m%d":%d`, i, i)
		}
		b.WriteString(`,"m3":1,"zed":2,"m39":3}`)
		body := b.String()
		pe := refused(body, strictjson.Limits{})
		Expect(pe.Reason).To(Equal(strictjson.ReasonDuplicate))
		Expect(pe.Repeats).To(HaveLen(2))
		Expect(pe.Repeats[0].Pointer).To(Equal("/m3"))
		Expect(pe.Repeats[1].Pointer).To(Equal("/m39"))

		pe = refused(body, fold)
		Expect(pe.Repeats).To(HaveLen(3))
		Expect(pe.Repeats[1]).To(Equal(strictjson.Repeat{Pointer: "/zed", Offset: int64(strings.Index(body, `"zed"`)), Name: "zed", Earlier: "Zed", EarlierOffset: 1, Folded: true}))
	})

	It("names the earlier member of a repeat in a large object as in a small one", func() {
		// Past 16 members the earlier member is found by reading the
		// object again: the first exact repeat if there is one, else the
		// first name that folds alike, spelled with escapes or not.
		var b strings.Builder
		b.WriteString(`{"Role":0,"x":{"k":[{"role":1}]}`)
		for i := range 20 {
			fmt.Fprintf(&b, `,"m%d":{"role":%d}`, i, i)
		}
		b.WriteString(`,"r\u006fle":-1,"ROLE":-2,"role":-3,"\u212aind":-4,"kind":-5,"KIND":-6}`)
		body := b.String()
		at := func(s string) int64 { return int64(strings.Index(body, s)) }
		pe := refused(body, fold)
		Expect(pe.Reason).To(Equal(strictjson.ReasonFoldCollision))
		Expect(pe.Repeats).To(Equal([]strictjson.Repeat{
			{Pointer: "/role", Offset: at(`"r\u006fle"`), Name: "role", Earlier: "Role", EarlierOffset: 1, Folded: true},
			{Pointer: "/ROLE", Offset: at(`"ROLE"`), Name: "ROLE", Earlier: "Role", EarlierOffset: 1, Folded: true},
			{Pointer: "/role", Offset: at(`"role":-3`), Name: "role", Earlier: "role", EarlierOffset: at(`"r\u006fle"`)},
			{Pointer: "/kind", Offset: at(`"kind"`), Name: "kind", Earlier: "\u212aind", EarlierOffset: at(`"\u212aind"`), Folded: true},
			{Pointer: "/KIND", Offset: at(`"KIND"`), Name: "KIND", Earlier: "\u212aind", EarlierOffset: at(`"\u212aind"`), Folded: true},
		}))
		pe = refused(body, strictjson.Limits{})
		Expect(pe.Repeats).To(Equal([]strictjson.Repeat{
			{Pointer: "/role", Offset: at(`"role":-3`), Name: "role", Earlier: "role", EarlierOffset: at(`"r\u006fle"`)},
		}))
	})

	Describe("under simple case folding (Limits.FoldCollisions)", func() {
		DescribeTable("refuses names equal under folding, and only with the option",
			func(body, name, earlier string) {
				_, err := strictjson.Parse([]byte(body), strictjson.Limits{})
				Expect(err).NotTo(HaveOccurred(), "plain RFC 8259 + I-JSON admits it")
				pe := refused(body, fold)
				Expect(pe.Reason).To(Equal(strictjson.ReasonFoldCollision))
				Expect(pe.Repeats).To(HaveLen(1))
				Expect(pe.Repeats[0].Name).To(Equal(name))
				Expect(pe.Repeats[0].Earlier).To(Equal(earlier))
				Expect(pe.Repeats[0].Folded).To(BeTrue())
				Expect(pe.Message).To(ContainSubstring("under Unicode simple case folding"))
			},
			Entry("Role and role", `{"Role":"user","role":"admin"}`, "role", "Role"),
			Entry("ROLE and role, nested", `{"a":[{"role":1,"ROLE":2}]}`, "ROLE", "role"),
			Entry("ſ (U+017F) and s", `{"ſcope":"read","scope":"admin"}`, "scope", "ſcope"),
			Entry("S and ſ spelled with an escape", `{"Scope":1,"\u017fcope":2}`, "ſcope", "Scope"),
			Entry("the Kelvin sign (U+212A) and k", `{"kind":1,"\u212aind":2}`, "\u212aind", "kind"),
			Entry("final and medial sigma", `{"ς":1,"σ":2}`, "σ", "ς"),
			Entry("a titlecase digraph (U+01C5) and its lower case", `{"ǅ":1,"ǆ":2}`, "ǆ", "ǅ"),
			Entry("capital sharp s (U+1E9E) and ß", `{"ß":1,"ẞ":2}`, "ẞ", "ß"),
		)

		DescribeTable("admits names that differ under simple folding",
			func(body string) {
				_, err := strictjson.Parse([]byte(body), fold)
				Expect(err).NotTo(HaveOccurred())
			},
			Entry("ß and ss (full folding only)", `{"ß":1,"ss":2}`),
			Entry("NFC and NFD é (normalisation is not folding)", `{"é":1,"e\u0301":2}`),
			Entry("dotted capital I (U+0130) and i", `{"İ":1,"i":2}`),
			Entry("dotless i (U+0131) and I", `{"ı":1,"I":2}`),
			Entry("the same name in two objects", `[{"Role":1},{"role":2}]`),
			Entry("a name and a string value", `{"Role":"role"}`),
		)

		It("reports an exact repeat as a duplicate even after a folded one", func() {
			pe := refused(`{"Role":1,"role":2,"role":3}`, fold)
			Expect(pe.Reason).To(Equal(strictjson.ReasonFoldCollision))
			Expect(pe.Repeats).To(HaveLen(2))
			Expect(pe.Repeats[1]).To(Equal(strictjson.Repeat{Pointer: "/role", Offset: 19, Name: "role", Earlier: "role", EarlierOffset: 10}))
		})

		It("keeps duplicate_member when the first repeat is exact", func() {
			pe := refused(`{"a":1,"a":2,"A":3}`, fold)
			Expect(pe.Reason).To(Equal(strictjson.ReasonDuplicate))
			Expect(pe.Repeats).To(HaveLen(2))
			Expect(pe.Repeats[1].Folded).To(BeTrue())
		})
	})
})

var _ = Describe("FoldName", func() {
	It("maps a string to one representative of its folding class, as strings.EqualFold compares", func() {
		Expect(strictjson.FoldName("Role")).To(Equal("role"))
		Expect(strictjson.FoldName("ROLE")).To(Equal("role"))
		Expect(strictjson.FoldName("ſcope")).To(Equal("scope"))
		Expect(strictjson.FoldName("\u212aind")).To(Equal("kind"))
		Expect(strictjson.FoldName("ς")).To(Equal(strictjson.FoldName("Σ")))
		Expect(strictjson.FoldName("snake_case_1")).To(Equal("snake_case_1"))
	})

	It("agrees with strings.EqualFold on every code point", func() {
		// FoldName(a) == FoldName(b) exactly when EqualFold(a, b) follows
		// from: every rune is folded to a member of its own orbit, and all
		// members of an orbit are folded alike.
		for r := rune(0); r <= unicode.MaxRune; r++ {
			if !utf8.ValidRune(r) {
				continue
			}
			s := string(r)
			f := strictjson.FoldName(s)
			if !strings.EqualFold(s, f) {
				Fail(fmt.Sprintf("FoldName(%U) = %+q is not EqualFold to it", r, f))
			}
			if g := strictjson.FoldName(string(unicode.SimpleFold(r))); g != f {
				Fail(fmt.Sprintf("FoldName(%U) = %+q but FoldName(SimpleFold) = %+q", r, f, g))
			}
		}
	})
})

var _ = Describe("the cost of finding repeats", func() {
	It("keeps one map for a wide object and finds a repeat at its end", func() {
		var b strings.Builder
		b.WriteString(`{"Member0":0`)
		for i := 1; i < 50000; i++ {
			fmt.Fprintf(&b, `,"member%d":%d`, i, i)
		}
		b.WriteString(`,"MEMBER49999":1}`)
		pe := refused(b.String(), fold)
		Expect(pe.Reason).To(Equal(strictjson.ReasonFoldCollision))
		Expect(pe.Pointer).To(Equal("/MEMBER49999"))
		pe = refused(b.String()[:b.Len()-len(`,"MEMBER49999":1}`)]+`,"member49999":1}`, strictjson.Limits{})
		Expect(pe.Reason).To(Equal(strictjson.ReasonDuplicate))
	})

	It("stops at MaxRepeats when every name of a wide object folds to one", func() {
		// 2^12 spellings of one 12-letter name: the parse ends at the 16th
		// repeat, not after comparing every pair.
		var b strings.Builder
		b.WriteString("{")
		for i := range 1 << 12 {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`"`)
			for j, c := range "abcdefghijkl" {
				if i>>j&1 == 1 {
					c = unicode.ToUpper(c)
				}
				b.WriteRune(c)
			}
			b.WriteString(`":1`)
		}
		b.WriteString("}")
		pe := refused(b.String(), fold)
		Expect(pe.Repeats).To(HaveLen(strictjson.MaxRepeats))
		Expect(pe.Repeats[0].Pointer).To(Equal("/Abcdefghijkl"))
		_, err := strictjson.Parse([]byte(b.String()), strictjson.Limits{})
		Expect(err).NotTo(HaveOccurred())
	})
})
