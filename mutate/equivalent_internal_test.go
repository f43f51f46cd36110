package mutate

import (
	"encoding/json"

	g "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/jsonpointer"
)

var _ = g.Describe("equivalence's helpers", func() {
	g.DescribeTable("overlaps: a rule reads at, above or below the location",
		func(rule, loc string, want bool) {
			r, err := jsonpointer.Parse(rule)
			Expect(err).NotTo(HaveOccurred())
			l, err := jsonpointer.Parse(loc)
			Expect(err).NotTo(HaveOccurred())
			Expect(overlaps(r, l)).To(Equal(want))
		},
		g.Entry("the same location", "/a/b", "/a/b", true),
		g.Entry("the rule above", "/a", "/a/b", true),
		g.Entry("the rule below", "/a/b/c", "/a/b", true),
		g.Entry("a sibling", "/a/c", "/a/b", false),
		g.Entry("every element", "/items/*/id", "/items/3/id", true),
		g.Entry("every element, another member", "/items/*/id", "/items/3/name", false),
	)

	g.DescribeTable("equalJSON is JSON equality",
		func(a, b any, want bool) { Expect(equalJSON(a, b)).To(Equal(want)) },
		g.Entry("numbers by value", json.Number("1.0"), json.Number("1"), true),
		g.Entry("numbers with exponents", json.Number("1e2"), json.Number("100"), true),
		g.Entry("a huge exponent is not expanded", json.Number("1e999999999"), json.Number("1e999999998"), false),
		g.Entry("the same huge text", json.Number("1e999999999"), json.Number("1e999999999"), true),
		g.Entry("a number and a string", json.Number("1"), "1", false),
		g.Entry("null and an empty string", nil, "", false),
		g.Entry("objects by members", map[string]any{"a": json.Number("2"), "b": nil}, map[string]any{"b": nil, "a": json.Number("2.00")}, true),
		g.Entry("objects with other members", map[string]any{"a": nil}, map[string]any{"b": nil}, false),
		g.Entry("arrays in order", []any{"x", true}, []any{true, "x"}, false),
	)
})
