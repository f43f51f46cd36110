package sanitize_test

import (
	"math/rand/v2"
	"strconv"
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
		Entry("Line breaks a comment opener", "a <!-- b --> c", 100, sanitize.Line, `a <\x21-- b --> c`),
		Entry("Line breaks a CDATA end", "x]]>y]]]>", 100, sanitize.Line, `x]]\x3ey]]]\x3e`),
		Entry("Line: a removed ANSI sequence does not join < and !", "<\x1b[0m!--", 100, sanitize.Line, `<\x21--`),
		Entry("Block breaks them across kept lines", "<!\n]]>", 100, sanitize.Block, "<\\x21\n]]\\x3e"),
		Entry("Escape (audit records) leaves them", "<!-- ]]>", 100, sanitize.Escape, "<!-- ]]>"),
		Entry("a cut keeps the context of what came before", "<!"+strings.Repeat("x", 20), 8, sanitize.Line, `<\x21…`),
		Entry("Name escapes line breaks, tabs and ESC", "a\nb\tc\rd\x1b[2J", 100, sanitize.Name, `a\x0ab\x09c\x0dd\x1b[2J`),
		Entry("Name doubles backslashes", `a\x01`, 100, sanitize.Name, `a\\x01`),
		Entry(`Name tells \x01 from \x02`, "n\x01|n\x02", 100, sanitize.Name, `n\x01|n\x02`),
		Entry("Name breaks <! and ]]>", "<!--]]>", 100, sanitize.Name, `<\x21--]]\x3e`),
	)

	// unescape inverts Text in Name mode: \\ is a backslash, \xNN a byte
	// (an ASCII character or, from 0x80, a byte of invalid UTF-8), \u{N} a
	// character; everything else stands for itself.
	unescape := func(s string) string {
		var b strings.Builder
		for i := 0; i < len(s); {
			if s[i] != '\\' {
				b.WriteByte(s[i])
				i++
				continue
			}
			switch s[i+1] {
			case '\\':
				b.WriteByte('\\')
				i += 2
			case 'x':
				n, err := strconv.ParseUint(s[i+2:i+4], 16, 8)
				Expect(err).NotTo(HaveOccurred(), "escape in %q", s)
				b.WriteByte(byte(n))
				i += 4
			case 'u':
				end := strings.IndexByte(s[i:], '}')
				n, err := strconv.ParseUint(s[i+3:i+end], 16, 32)
				Expect(err).NotTo(HaveOccurred(), "escape in %q", s)
				b.WriteRune(rune(n))
				i += end + 1
			default:
				Fail("a lone backslash in " + strconv.Quote(s))
			}
		}
		return b.String()
	}
	// hostile draws n-character strings from pieces that meet at every
	// escape and at "<!" and "]]>".
	pieces := []string{"a", "<", "!", "-", "]", ">", "\\", "x", "0", "1", "\x01", "\x02", "\x1b", "[", "m", "\n", "\t", "\r", "\xff", "\xc3", "\u0085", "\u202e", "\ufffe", "é", "{", "}", "u"}
	hostile := func(r *rand.Rand, n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}

	It("in Name mode is injective: every result decodes back to its input", func() {
		r := rand.New(rand.NewPCG(9, 5))
		seen := map[string]string{}
		for range 5000 {
			s := hostile(r, 1+r.IntN(8))
			got := sanitize.Text(s, 1<<20, sanitize.Name)
			Expect(unescape(got)).To(Equal(s), "%q printed as %q", s, got)
			if prev, ok := seen[got]; ok {
				Expect(prev).To(Equal(s), "two inputs printed as %q", got)
			}
			seen[got] = s
			Expect(got).NotTo(ContainSubstring("\n"))
		}
	})

	It("never lets <! or ]]> through in the report modes, whole or cut", func() {
		r := rand.New(rand.NewPCG(9, 6))
		for range 5000 {
			s := hostile(r, 1+r.IntN(12))
			for _, mode := range []sanitize.Mode{sanitize.Line, sanitize.Block, sanitize.Name} {
				for _, max := range []int{1 << 20, 5 + r.IntN(20)} {
					got := sanitize.Text(s, max, mode)
					Expect(got).NotTo(ContainSubstring("<!"), "%q in mode %d", s, mode)
					Expect(got).NotTo(ContainSubstring("]]>"), "%q in mode %d", s, mode)
					Expect(utf8.ValidString(got)).To(BeTrue())
					Expect(len(got)).To(BeNumerically("<=", max))
				}
			}
		}
	})

	It("caps huge input cheaply and ends in the ellipsis", func() {
		got := sanitize.Text(strings.Repeat("\x00", 1<<20), 512, sanitize.Escape)
		Expect(len(got)).To(BeNumerically("<=", 512))
		Expect(got).To(HaveSuffix(sanitize.Ellipsis))
	})
})
