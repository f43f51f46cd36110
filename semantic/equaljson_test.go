package semantic_test

import (
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/semantic"
)

var _ = Describe("whole JSON values", func() {
	DescribeTable("EqualJSON is JSON equality (const and enum's sense)",
		func(a, b any, want bool) { Expect(semantic.EqualJSON(a, b)).To(Equal(want)) },
		Entry("numbers by value", json.Number("1.0"), json.Number("1"), true),
		Entry("numbers with exponents", json.Number("1e2"), json.Number("100"), true),
		Entry("a huge exponent is not expanded", json.Number("1e999999999"), json.Number("1e999999998"), false),
		Entry("the same huge text", json.Number("1e999999999"), json.Number("1e999999999"), true),
		Entry("a number and a string", json.Number("1"), "1", false),
		Entry("null and an empty string", nil, "", false),
		Entry("objects by members", map[string]any{"a": json.Number("2"), "b": nil}, map[string]any{"b": nil, "a": json.Number("2.00")}, true),
		Entry("objects with other members", map[string]any{"a": nil}, map[string]any{"b": nil}, false),
		Entry("arrays in order", []any{"x", true}, []any{true, "x"}, false),
	)
})
