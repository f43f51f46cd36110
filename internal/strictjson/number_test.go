package strictjson_test

import (
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/internal/strictjson"
)

var _ = Describe("the number policy", func() {
	DescribeTable("refuses exponents beyond ±1000 even when the value is zero",
		func(body string, refused bool) {
			_, err := strictjson.Parse([]byte(body), strictjson.Limits{})
			if !refused {
				Expect(err).NotTo(HaveOccurred())
				return
			}
			var pe *strictjson.Error
			Expect(errors.As(err, &pe)).To(BeTrue())
			Expect(pe.Reason).To(Equal(strictjson.ReasonNumber))
		},
		Entry("zero with a 20-digit exponent", `0e99999999999999999999`, true),
		Entry("negative zero with a huge negative exponent", `-0.0e-99999999999999999999`, true),
		Entry("zero at the edge", `0e1000`, false),
		Entry("zero just past it", `0e1001`, true),
		Entry("an ordinary exponent with leading zeros", `-0.0e-0001`, false),
	)
})
