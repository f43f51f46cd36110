package mutate_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/mutate"
)

var _ = Describe("the mutation score", func() {
	DescribeTable("is printed rounded down, so 100.00% means every scored mutant was killed",
		func(killed, scored int, want string) {
			Expect(fmt.Sprintf("%.2f", mutate.Score{Killed: killed, Scored: scored}.Percent())).To(Equal(want))
		},
		Entry("one survivor in 24021", 24020, 24021, "99.99"),
		Entry("one survivor in a million", 999999, 1000000, "99.99"),
		Entry("all killed", 29, 29, "100.00"),
		Entry("two thirds", 2, 3, "66.66"),
		Entry("nothing scored", 0, 0, "100.00"),
	)
})
