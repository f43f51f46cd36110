package mutate

import (
	"strings"

	g "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = g.Describe("a mutant's diff", func() {
	g.It("is byte-stable: go-cmp's U+00A0 after a line's marker is written as a space", func() {
		// What go-cmp prints in about half of the processes.
		in := "\u00a0\u00a0string(\n-\u00a0\t\"a\",\n+\u00a0\t\"b\u00a0c\",\n\u00a0\u00a0)\n"
		Expect(stableDiff(in)).To(Equal("  string(\n- \t\"a\",\n+ \t\"b\u00a0c\",\n  )\n"), "a U+00A0 inside a value is kept")
		for range 3 {
			d := MutantResult{Mutant: Mutant{Before: map[string]any{"a": "x", "b": []any{"y"}}, After: map[string]any{"a": "z", "b": []any{}}}}.Diff()
			Expect(d).NotTo(BeEmpty())
			Expect(strings.ContainsRune(d, '\u00a0')).To(BeFalse(), "%q", d)
		}
	})
})
