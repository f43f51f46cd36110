package semantic_test

import (
	"errors"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/semantic"
)

// The strict RFC 3339 §5.6 date-time parser, used by the freshness rule and
// as the schema stage's "date-time" format checker.
var _ = Describe("ParseTimestamp", func() {
	utc := func(y int, mo time.Month, d, h, mi, s, ns int) time.Time {
		return time.Date(y, mo, d, h, mi, s, ns, time.UTC)
	}

	DescribeTable("accepts a valid date-time and returns its instant",
		func(s string, want time.Time) {
			got, err := semantic.ParseTimestamp(s)
			Expect(err).NotTo(HaveOccurred())
			Expect(got.Equal(want)).To(BeTrue(), "got %s, want %s", got.UTC().Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
		},
		Entry("Z", "2025-06-01T12:30:00Z", utc(2025, 6, 1, 12, 30, 0, 0)),
		Entry("lower-case t and z (RFC 3339 §5.6 NOTE)", "2025-06-01t12:30:00z", utc(2025, 6, 1, 12, 30, 0, 0)),
		Entry("T with z", "2025-06-01T12:30:00z", utc(2025, 6, 1, 12, 30, 0, 0)),
		Entry("positive offset", "2025-06-01T18:00:00+05:30", utc(2025, 6, 1, 12, 30, 0, 0)),
		Entry("negative offset", "2025-06-01T04:30:00-08:00", utc(2025, 6, 1, 12, 30, 0, 0)),
		Entry("offset -00:00 (unknown local offset, RFC 3339 §4.3)", "2025-06-01T12:30:00-00:00", utc(2025, 6, 1, 12, 30, 0, 0)),
		Entry("offset +23:59", "2025-06-02T12:29:00+23:59", utc(2025, 6, 1, 12, 30, 0, 0)),
		Entry("one-digit fraction", "2025-06-01T12:30:00.5Z", utc(2025, 6, 1, 12, 30, 0, 500000000)),
		Entry("nanosecond fraction", "2025-06-01T12:30:00.123456789Z", utc(2025, 6, 1, 12, 30, 0, 123456789)),
		Entry("fraction longer than nanoseconds is truncated", "2025-06-01T12:30:00.1234567891234Z", utc(2025, 6, 1, 12, 30, 0, 123456789)),
		Entry("fraction with an offset", "2025-06-01T13:30:00.25+01:00", utc(2025, 6, 1, 12, 30, 0, 250000000)),
		Entry("leap second 23:59:60Z is the last instant of its minute", "1990-12-31T23:59:60Z", utc(1990, 12, 31, 23, 59, 59, 999999999)),
		Entry("leap second 15:59:60-08:00 (RFC 3339 §5.8)", "1990-12-31T15:59:60-08:00", utc(1990, 12, 31, 23, 59, 59, 999999999)),
		Entry("leap second with a fraction is the same last instant", "1998-12-31T23:59:60.5Z", utc(1998, 12, 31, 23, 59, 59, 999999999)),
		Entry("leap second with a half-hour offset", "2016-12-31T18:29:60-05:30", utc(2016, 12, 31, 23, 59, 59, 999999999)),
		Entry("leap second written in the next local day (+01:00)", "1999-01-01T00:59:60+01:00", utc(1998, 12, 31, 23, 59, 59, 999999999)),
		Entry("leap second at the end of June", "2015-06-30T23:59:60Z", utc(2015, 6, 30, 23, 59, 59, 999999999)),
		Entry("leap second at the end of March (ITU-R TF.460 allows any month)", "2025-03-31T23:59:60Z", utc(2025, 3, 31, 23, 59, 59, 999999999)),
		Entry("leap second at the end of a leap February", "2024-02-29T23:59:60z", utc(2024, 2, 29, 23, 59, 59, 999999999)),
		Entry("leap second with -00:00 (read as UTC)", "2016-12-31T23:59:60-00:00", utc(2016, 12, 31, 23, 59, 59, 999999999)),
		Entry("leap second with the largest negative offset", "2016-12-31T00:00:60-23:59", utc(2016, 12, 31, 23, 59, 59, 999999999)),
		Entry("29 February in a leap year", "2024-02-29T00:00:00Z", utc(2024, 2, 29, 0, 0, 0, 0)),
		Entry("29 February 2000 (divisible by 400)", "2000-02-29T00:00:00Z", utc(2000, 2, 29, 0, 0, 0, 0)),
		Entry("31 December end of day", "2025-12-31T23:59:59Z", utc(2025, 12, 31, 23, 59, 59, 0)),
		Entry("30 April", "2025-04-30T00:00:00Z", utc(2025, 4, 30, 0, 0, 0, 0)),
		Entry("year 0000", "0000-01-01T00:00:00Z", utc(0, 1, 1, 0, 0, 0, 0)),
		Entry("year 9999", "9999-12-31T23:59:59Z", utc(9999, 12, 31, 23, 59, 59, 0)),
	)

	It("keeps the offset of the stamp", func() {
		got, err := semantic.ParseTimestamp("2025-06-01T18:00:00+05:30")
		Expect(err).NotTo(HaveOccurred())
		_, off := got.Zone()
		Expect(off).To(Equal(5*3600 + 30*60))
	})

	DescribeTable("refuses an invalid date-time with an error wrapping ErrTimestamp",
		func(s, why string) {
			got, err := semantic.ParseTimestamp(s)
			Expect(err).To(HaveOccurred())
			Expect(errors.Is(err, semantic.ErrTimestamp)).To(BeTrue(), "%v", err)
			Expect(err.Error()).To(ContainSubstring(why))
			Expect(got.IsZero()).To(BeTrue())
		},
		Entry("hour 24", "2025-06-01T24:00:00Z", "time out of range"),
		Entry("minute 60", "2025-06-01T12:60:00Z", "time out of range"),
		Entry("second 61", "2025-06-30T23:59:61Z", "time out of range"),
		Entry("30 February", "2024-02-30T00:00:00Z", "day out of range"),
		Entry("29 February 2021", "2021-02-29T00:00:00Z", "day out of range"),
		Entry("29 February 1900 (divisible by 100)", "1900-02-29T00:00:00Z", "day out of range"),
		Entry("31 April", "2025-04-31T00:00:00Z", "day out of range"),
		Entry("day 00", "2025-06-00T00:00:00Z", "day out of range"),
		Entry("day 32", "2025-01-32T00:00:00Z", "day out of range"),
		Entry("month 00", "2025-00-01T00:00:00Z", "month out of range"),
		Entry("month 13", "2025-13-01T00:00:00Z", "month out of range"),
		Entry("missing offset", "2025-06-01T12:30:00", "too short"),
		Entry("missing offset after a fraction", "2025-06-01T12:30:00.123", "missing offset"),
		Entry("missing offset, long", "2025-06-01T12:30:00.123456789", "missing offset"),
		Entry("one-digit month", "2025-6-01T12:30:00+00:00", "date is not YYYY-MM-DD"),
		Entry("one-digit day", "2025-06-1T12:30:00+00:00", "date is not YYYY-MM-DD"),
		Entry("one-digit hour", "2025-06-01T1:30:00+00:00", "time is not hh:mm:ss"),
		Entry("one-digit minute", "2025-06-01T12:3:00+00:00", "time is not hh:mm:ss"),
		Entry("one-digit hour, short", "2025-06-01T1:30:00Z", "too short"),
		Entry("one-digit second", "2025-06-01T12:30:0Z", "too short"),
		Entry("one-digit second, long enough", "2025-06-01T12:30:0+00:00", "time is not hh:mm:ss"),
		Entry("two-digit year", "25-06-01T12:30:00Z+00", "date is not YYYY-MM-DD"),
		Entry("five-digit year", "12025-06-01T12:30:00Z", "date is not YYYY-MM-DD"),
		Entry("leap second at the wrong hour", "2025-06-30T12:59:60Z", "leap second only at 23:59:60 UTC on the last day of a month"),
		Entry("leap second at the wrong minute", "2025-06-30T23:58:60Z", "leap second only at 23:59:60 UTC on the last day of a month"),
		Entry("leap second 23:59:60 local that is not 23:59 UTC", "2025-06-30T23:59:60+01:00", "leap second only at 23:59:60 UTC on the last day of a month"),
		Entry("leap second 23:59:60 local, -01:00", "2025-06-30T23:59:60-01:00", "leap second only at 23:59:60 UTC on the last day of a month"),
		Entry("leap second on a day that ends no month", "2025-06-29T23:59:60Z", "leap second only at 23:59:60 UTC on the last day of a month"),
		Entry("leap second on 28 February of a leap year", "2024-02-28T23:59:60Z", "leap second only at 23:59:60 UTC on the last day of a month"),
		Entry("leap second at the end of a month only in local time", "2025-07-01T00:59:60-01:00", "leap second only at 23:59:60 UTC on the last day of a month"),
		Entry("second 61", "2016-12-31T23:59:61Z", "time out of range"),
		Entry("offset +24:00", "2025-06-01T12:30:00+24:00", "offset out of range"),
		Entry("offset minutes 60", "2025-06-01T12:30:00+05:60", "offset out of range"),
		Entry("offset without colon", "2025-06-01T12:30:00+0530", "offset is not ±hh:mm"),
		Entry("offset with one-digit minute", "2025-06-01T12:30:00+05:3", "offset is not ±hh:mm"),
		Entry("offset with seconds", "2025-06-01T12:30:00+05:30:00", "offset is not ±hh:mm"),
		Entry("offset with a letter", "2025-06-01T12:30:00+0a:00", "offset out of range"),
		Entry("named zone", "2025-06-01T12:30:00UTC", "missing offset"),
		Entry("trailing character after Z", "2025-06-01T12:30:00Zx", "trailing characters"),
		Entry("trailing space", "2025-06-01T12:30:00Z ", "trailing characters"),
		Entry("trailing newline", "2025-06-01T12:30:00Z\n", "trailing characters"),
		Entry("leading space", " 2025-06-01T12:30:00Z", "date is not YYYY-MM-DD"),
		Entry("space instead of T", "2025-06-01 12:30:00Z", `date and time must be separated by "T"`),
		Entry("underscore instead of T", "2025-06-01_12:30:00Z", `date and time must be separated by "T"`),
		Entry("slash in the date", "2025/06/01T12:30:00Z", "date is not YYYY-MM-DD"),
		Entry("dot without fraction digits", "2025-06-01T12:30:00.Z", "fraction needs at least one digit"),
		Entry("comma fraction", "2025-06-01T12:30:00,5Z", "missing offset"),
		Entry("date only", "2025-06-01", "too short"),
		Entry("empty", "", "too short"),
		Entry("sign in the year", "+025-06-01T12:30:00Z", "date is not YYYY-MM-DD"),
		Entry("full-width digits", "２０２５-06-01T12:30:00Z", "date is not YYYY-MM-DD"),
	)

	It("clips a long input in its error message", func() {
		long := "2025-06-01T12:30:00Z" + strings.Repeat("x", 500)
		_, err := semantic.ParseTimestamp(long)
		Expect(errors.Is(err, semantic.ErrTimestamp)).To(BeTrue())
		Expect(err.Error()).To(ContainSubstring("trailing characters"))
		Expect(len(err.Error())).To(BeNumerically("<", 150))
	})

	It("refuses what time.Parse(time.RFC3339) gets wrong", func() {
		// time.Parse accepts a one-digit hour; the strict parser does not.
		_, goErr := time.Parse(time.RFC3339, "2025-06-01T1:30:00Z")
		Expect(goErr).NotTo(HaveOccurred())
		_, err := semantic.ParseTimestamp("2025-06-01T1:30:00Z")
		Expect(err).To(HaveOccurred())
		// time.Parse refuses a leap second; the strict parser accepts it.
		_, goErr = time.Parse(time.RFC3339, "1990-12-31T23:59:60Z")
		Expect(goErr).To(HaveOccurred())
		_, err = semantic.ParseTimestamp("1990-12-31T23:59:60Z")
		Expect(err).NotTo(HaveOccurred())
	})
})
