package sanitize_test

import (
	"strings"
	"unicode/utf8"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/internal/sanitize"
)

var _ = Describe("Text", func() {
	DescribeTable("escapes and cuts",
		func(s string, max int, mode sanitize.Mode, want string) {
			got := sanitize.Text(s, max, mode)
			Expect(got).To(Equal(want))
			Expect(len(got)).To(BeNumerically("<=", max))
			Expect(utf8.ValidString(got)).To(BeTrue())
		},
		Entry("plain", "hello", 10, sanitize.Escape, "hello"),
		Entry("exactly max", "0123456789", 10, sanitize.Escape, "0123456789"),
		Entry("one past max", "0123456789a", 10, sanitize.Escape, "0123456…"),
		Entry("escapes count toward max", "\x01\x02\x03", 12, sanitize.Escape, `\x01\x02\x03`),
		Entry("escapes past max", "\x01\x02\x03", 11, sanitize.Escape, `\x01\x02…`),
		Entry("a multi-byte rune is not split", "ééééé", 8, sanitize.Escape, "éé…"),
		Entry("C1 controls", "\u0085\u009b", 100, sanitize.Escape, `\u{0085}\u{009b}`),
		Entry("line and paragraph separators", "a\u2028b\u2029c", 100, sanitize.Escape, `a\u{2028}b\u{2029}c`),
		Entry("invalid UTF-8", "a\xffb\xc3", 100, sanitize.Escape, `a\xffb\xc3`),
		Entry("only invalid bytes, exactly filling max", "\xff\xfe", 8, sanitize.Escape, `\xff\xfe`),
		Entry("DEL", "\x7f", 100, sanitize.Escape, `\x7f`),
		Entry("bidi controls", "a\u202eb\u2066c", 100, sanitize.Escape, `a\u{202e}b\u{2066}c`),
		Entry("U+FFFE and U+FFFF (not XML 1.0 characters)", "\ufffe\uffff", 100, sanitize.Escape, `\u{fffe}\u{ffff}`),
		Entry("Escape keeps an ANSI sequence visible", "cmd\x1b[2J\n", 100, sanitize.Escape, `cmd\x1b[2J\x0a`),
		Entry("Line removes ANSI sequences", "\x1b[31mred\x1b[0m \x1b]0;title\x07ok", 100, sanitize.Line, "red ok"),
		Entry("Line makes one line", "a\nb\tc\rd", 100, sanitize.Line, "a b c d"),
		Entry("Line escapes other controls", "a\x00b\x1bc", 100, sanitize.Line, `a\x00b`),
		Entry("Block keeps newlines and tabs", "a\nb\tc\rd\x01", 100, sanitize.Block, "a\nb\tc d\\x01"),
		Entry("Block escapes bidi controls", "x\u202ey", 100, sanitize.Block, `x\u{202e}y`),
		Entry("a max below the ellipsis", "abcdef", 2, sanitize.Line, ""),
	)

	It("caps huge input cheaply and ends in the ellipsis", func() {
		got := sanitize.Text(strings.Repeat("\x00", 1<<20), 512, sanitize.Escape)
		Expect(len(got)).To(BeNumerically("<=", 512))
		Expect(got).To(HaveSuffix(sanitize.Ellipsis))
	})
})
