package mutate

import (
	"context"
	"time"

	g "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = g.Describe("the mutants' durations", func() {
	sum := func(rs []MutantResult) (s time.Duration) {
		for _, r := range rs {
			s += r.Duration
		}
		return s
	}
	results := func(ds ...time.Duration) []MutantResult {
		out := make([]MutantResult, len(ds))
		for i, d := range ds {
			out[i].Duration = d
		}
		return out
	}

	g.It("are each mutant's share of the wall time when overlapping workers add up to more", func() {
		rs := results(3*time.Second, time.Second, 2*time.Second, 2*time.Second) // four workers over 2 s
		shareDurations(rs, 2*time.Second)
		Expect(sum(rs)).To(BeNumerically("<=", 2*time.Second))
		Expect(rs[0].Duration).To(Equal(750 * time.Millisecond))
		Expect(rs[1].Duration).To(Equal(250 * time.Millisecond))
		// Large values: exact, no overflow (an hour of mutants over a minute).
		rs = results(time.Hour, time.Hour, 1)
		shareDurations(rs, time.Minute)
		Expect(sum(rs)).To(BeNumerically("<=", time.Minute))
		Expect(rs[0].Duration).To(BeNumerically("~", 30*time.Second, 1))
	})

	g.It("are left as they are when they fit in the wall time (one worker)", func() {
		rs := results(time.Second, time.Second)
		shareDurations(rs, 3*time.Second)
		Expect(rs[0].Duration).To(Equal(time.Second))
		Expect(sum(rs)).To(Equal(2 * time.Second))
	})

	g.It("add up to at most the run's wall time with several workers", func() {
		rep, err := Mutate(context.Background(), Options{SchemasDir: "../schemas", FixturesDir: "../fixtures", Workers: 4})
		Expect(err).NotTo(HaveOccurred())
		Expect(len(rep.Results)).To(BeNumerically(">", 100))
		Expect(sum(rep.Results)).To(BeNumerically("<=", rep.Duration))
		for _, r := range rep.Results {
			if r.Outcome != Equivalent {
				Expect(r.Duration).To(BeNumerically(">", 0), r.Mutant.ID)
			}
		}
	})
})
