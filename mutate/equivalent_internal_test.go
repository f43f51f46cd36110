package mutate

import (
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

})
