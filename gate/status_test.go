package gate_test

import (
	"errors"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/gate"
)

// statusManifest is the probe contract with a statuses: section.
func statusManifest(statuses string) string {
	return strings.Replace(probeManifest, "upstream_versions:\n", statuses+"upstream_versions:\n", 1)
}

func loadStatusProbe(statuses string) (*gate.Contract, error) {
	dir := writeContract(GinkgoT().TempDir(), "probe", probeFiles(statusManifest(statuses)))
	return gate.LoadDir(dir, probeOptions)
}

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

var _ = Describe("the status policy", func() {
	statusResp := func(status int, h http.Header) gate.Response {
		resp := jsonResp(probeBody())
		resp.Status, resp.Header = status, h
		return resp
	}

	Describe("the defaults", func() {
		var c *gate.Contract
		BeforeEach(func() { c = loadProbe() })

		DescribeTable("map a status and its headers to a code",
			func(status int, h http.Header, reason string, code gate.ErrorCode, retryable bool, msg string) {
				v := runCheck(c, statusResp(status, h), probeCall())
				expectRefused(v, "probe", reason, code, retryable)
				Expect(v.Audit.Message).To(ContainSubstring(msg))
			},
			Entry("404", 404, nil, gate.ReasonStatus, gate.NotFound, false, "default for 404"),
			Entry("408", 408, nil, gate.ReasonStatus, gate.UpstreamUnavailable, true, "default for 408"),
			Entry("425 Too Early", 425, nil, gate.ReasonStatus, gate.UpstreamUnavailable, true, "default for 425"),
			Entry("429", 429, nil, gate.ReasonStatus, gate.UpstreamUnavailable, true, "default for 429"),
			Entry("503", 503, nil, gate.ReasonStatus, gate.UpstreamUnavailable, true, "default for 5xx"),
			Entry("403 alone is INVALID_RESPONSE", 403, nil, gate.ReasonStatus, gate.InvalidResponse, false, "(default)"),
			Entry("403 with unrelated headers", 403, header("X-Ratelimit-Limit", "60", "Www-Authenticate", "Bearer"), gate.ReasonStatus, gate.InvalidResponse, false, "(default)"),
			Entry("403 with X-RateLimit-Remaining: 0", 403, header("X-RateLimit-Remaining", "0"), gate.ReasonStatus, gate.UpstreamUnavailable, true, "X-Ratelimit-Remaining: 0"),
			Entry("403 with X-RateLimit-Remaining: 5 is not", 403, header("X-RateLimit-Remaining", "5"), gate.ReasonStatus, gate.InvalidResponse, false, "(default)"),
			Entry("403 with RateLimit-Remaining: 0", 403, header("RateLimit-Remaining", " 0 "), gate.ReasonStatus, gate.UpstreamUnavailable, true, "Ratelimit-Remaining: 0"),
			Entry("403 with Retry-After", 403, header("Retry-After", "60"), gate.ReasonStatus, gate.UpstreamUnavailable, true, "rate-limit header Retry-After"),
			Entry("403 with a garbage Retry-After is not", 403, header("Retry-After", "soon"), gate.ReasonStatus, gate.InvalidResponse, false, "(default)"),
			Entry("304 has its own reason", 304, nil, gate.ReasonNotModified, gate.InvalidResponse, false, "304 Not Modified"),
			Entry("302", 302, nil, gate.ReasonStatus, gate.InvalidResponse, false, "(default)"),
			Entry("600 (no class)", 600, nil, gate.ReasonStatus, gate.InvalidResponse, false, "(default)"),
		)

		It("does not look at headers of a success", func() {
			v := runCheck(c, statusResp(200, header("Retry-After", "garbage", "X-RateLimit-Remaining", "0")), probeCall())
			expectAdmitted(v, probeOK)
			Expect(v.Warnings).To(BeEmpty())
			Expect(v.HasRetryAfter).To(BeFalse())
			Expect(string(v.Audit.JSON())).NotTo(ContainSubstring("retry_after_s"))
		})
	})

	Describe("a contract's statuses:", func() {
		It("beats the defaults with a class and the class with an exact status", func() {
			c, err := loadStatusProbe(`statuses:
  "4xx": {error_code: UPSTREAM_UNAVAILABLE, retryable: false}
  "404": {error_code: INVALID_RESPONSE}
  "409": {error_code: UPSTREAM_UNAVAILABLE}
  "5xx": {error_code: INVALID_RESPONSE}
  "503": {error_code: UPSTREAM_UNAVAILABLE, retryable: true}
  "304": {error_code: UPSTREAM_UNAVAILABLE, retryable: true}
`)
			Expect(err).NotTo(HaveOccurred())
			for _, tc := range []struct {
				status    int
				h         http.Header
				reason    string
				code      gate.ErrorCode
				retryable bool
				rule      string
			}{
				{404, nil, gate.ReasonStatus, gate.InvalidResponse, false, `contract statuses "404"`},
				{409, nil, gate.ReasonStatus, gate.UpstreamUnavailable, true, `contract statuses "409"`},
				{429, nil, gate.ReasonStatus, gate.UpstreamUnavailable, false, `contract statuses "4xx"`},
				{403, header("Retry-After", "5"), gate.ReasonStatus, gate.UpstreamUnavailable, false, `contract statuses "4xx"`},
				{500, nil, gate.ReasonStatus, gate.InvalidResponse, false, `contract statuses "5xx"`},
				{503, nil, gate.ReasonStatus, gate.UpstreamUnavailable, true, `contract statuses "503"`},
				{304, nil, gate.ReasonNotModified, gate.UpstreamUnavailable, true, `contract statuses "304"`},
				{302, nil, gate.ReasonStatus, gate.InvalidResponse, false, "(default)"},
			} {
				By(tc.rule)
				v := runCheck(c, statusResp(tc.status, tc.h), probeCall())
				expectRefused(v, "probe", tc.reason, tc.code, tc.retryable)
				Expect(v.Audit.Message).To(ContainSubstring(tc.rule))
			}
		})

		It("is still narrowed by retryable: per reason", func() {
			c, err := loadStatusProbe("retryable: {transport.status: false}\nstatuses:\n  \"409\": {error_code: UPSTREAM_UNAVAILABLE}\n")
			Expect(err).NotTo(HaveOccurred())
			expectRefused(runCheck(c, statusResp(409, nil), probeCall()), "probe", gate.ReasonStatus, gate.UpstreamUnavailable, false)
		})

		DescribeTable("refuses a bad entry with its line and column",
			func(statuses, key string, line, col int, msg string) {
				_, err := loadStatusProbe(statuses)
				var ce *gate.ConfigError
				Expect(errors.As(err, &ce)).To(BeTrue(), "got %v", err)
				Expect(ce.Key).To(Equal(key))
				Expect(ce.Line).To(Equal(line), "%v", err)
				Expect(ce.Column).To(Equal(col), "%v", err)
				Expect(ce.Error()).To(ContainSubstring(msg))
			},
			Entry("a success status", "statuses:\n  \"200\": {error_code: NOT_FOUND}\n", "/statuses/200", 12, 10, "success status"),
			Entry("a success class", "statuses:\n  2xx: {error_code: NOT_FOUND}\n", "/statuses/2xx", 12, 8, "success status"),
			Entry("a status past 599", "statuses:\n  \"4xx\": {error_code: NOT_FOUND}\n  \"600\": {error_code: NOT_FOUND}\n", "/statuses/600", 13, 10, "neither a status 100–599 nor a class"),
			Entry("a status with letters", "statuses:\n  \"40x\": {error_code: NOT_FOUND}\n", "/statuses/40x", 12, 10, "neither a status"),
			Entry("a status of four digits", "statuses:\n  \"4040\": {error_code: NOT_FOUND}\n", "/statuses/4040", 12, 11, "4040"),
			Entry("an unknown code", "statuses:\n  \"404\": {error_code: GONE}\n", "/statuses/404/error_code", 12, 23, "must be one of"),
			Entry("no code", "statuses:\n  \"404\": {retryable: true}\n", "/statuses/404", 12, 10, "missing property 'error_code'"),
			Entry("an unknown key", "statuses:\n  \"404\": {error_code: NOT_FOUND, retry: true}\n", "/statuses/404/retry", 12, 41, "'retry' not allowed"),
			Entry("a code the contract does not emit",
				"error_codes: [INVALID_RESPONSE]\nstatuses:\n  \"404\": {error_code: NOT_FOUND}\n", "/statuses/404", 13, 10, "not in the contract's error_codes"),
		)
	})

	Describe("Retry-After", func() {
		var c *gate.Contract
		BeforeEach(func() { c = loadProbe() })

		DescribeTable("is carried in the verdict and the audit record, never the agent output",
			func(status int, value string, want int64) {
				v := runCheck(c, statusResp(status, header("Retry-After", value)), probeCall())
				Expect(v.Admitted).To(BeFalse())
				Expect(v.HasRetryAfter).To(BeTrue())
				Expect(v.RetryAfter).To(Equal(time.Duration(want) * time.Second))
				Expect(v.Audit.RetryAfterSeconds).NotTo(BeNil())
				Expect(*v.Audit.RetryAfterSeconds).To(Equal(want))
				Expect(string(v.Audit.JSON())).To(MatchRegexp(`"retryable":(true|false),"retry_after_s":%d,`, want))
				Expect(string(v.Output)).NotTo(ContainSubstring("retry" + "_after"))
				Expect(v.Warnings).To(BeEmpty())
			},
			Entry("429 with delay-seconds", 429, "120", int64(120)),
			Entry("503 with an IMF-fixdate", 503, "Sun, 01 Jun 2025 12:01:30 GMT", int64(90)),
			Entry("503 with a date in the past is 0", 503, "Sun, 01 Jun 2025 11:00:00 GMT", int64(0)),
			Entry("0", 503, "0", int64(0)),
			Entry("304", 304, "10", int64(10)),
			Entry("404", 404, "7", int64(7)),
		)

		DescribeTable("that cannot be read is a retry_after.invalid warning, not a refusal reason",
			func(h http.Header) {
				v := runCheck(c, statusResp(503, h), probeCall())
				expectRefused(v, "probe", gate.ReasonStatus, gate.UpstreamUnavailable, true)
				Expect(v.HasRetryAfter).To(BeFalse())
				Expect(v.Audit.RetryAfterSeconds).To(BeNil())
				Expect(v.Warnings).To(HaveLen(1))
				Expect(v.Warnings[0].Code).To(Equal(gate.WarningRetryAfter))
				Expect(v.Audit.Warnings).To(Equal(v.Warnings))
				Expect(string(v.Audit.JSON())).NotTo(ContainSubstring("retry_after_s"))
			},
			Entry("negative", header("Retry-After", "-5")),
			Entry("garbage", header("Retry-After", "soon\x1b[31m")),
			Entry("a fraction", header("Retry-After", "1.5")),
			Entry("a unit", header("Retry-After", "10s")),
			Entry("two field lines", header("Retry-After", "1", "Retry-After", "2")),
			Entry("empty", header("Retry-After", "")),
		)
	})
})

var _ = Describe("ParseRetryAfter", func() {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	DescribeTable("reads delay-seconds and HTTP-dates (RFC 9110 §10.2.3)",
		func(value string, want int64, ok bool) {
			got, gotOK := gate.ParseRetryAfter(value, now)
			Expect(gotOK).To(Equal(ok))
			if ok {
				Expect(got).To(Equal(want))
			}
		},
		Entry("seconds", "120", int64(120), true),
		Entry("zero", "0", int64(0), true),
		Entry("leading zeros", "007", int64(7), true),
		Entry("spaces around", " \t30 ", int64(30), true),
		Entry("2^31 exactly", "2147483648", int64(gate.MaxRetryAfter), true),
		Entry("huge is cut to 2^31 (RFC 9111 §1.2.2)", "99999999999999999999999", int64(gate.MaxRetryAfter), true),
		Entry("just past 2^31", "2147483649", int64(gate.MaxRetryAfter), true),
		Entry("IMF-fixdate", "Sun, 01 Jun 2025 12:00:10 GMT", int64(10), true),
		Entry("RFC 850 date", "Sunday, 01-Jun-25 12:01:00 GMT", int64(60), true),
		Entry("asctime date", "Sun Jun  1 12:00:05 2025", int64(5), true),
		Entry("a date now is 0", "Sun, 01 Jun 2025 12:00:00 GMT", int64(0), true),
		Entry("a past date is 0", "Thu, 01 Jan 1970 00:00:00 GMT", int64(0), true),
		Entry("a date far ahead is cut", "Fri, 31 Dec 9999 23:59:59 GMT", int64(gate.MaxRetryAfter), true),
		Entry("negative", "-1", int64(0), false),
		Entry("plus sign", "+5", int64(0), false),
		Entry("fraction", "2.5", int64(0), false),
		Entry("unit", "5s", int64(0), false),
		Entry("empty", "", int64(0), false),
		Entry("spaces only", "  ", int64(0), false),
		Entry("garbage", "tomorrow", int64(0), false),
		Entry("an RFC 3339 date", "2025-06-01T12:00:10Z", int64(0), false),
		Entry("a date with a zone other than GMT", "Sun, 01 Jun 2025 12:00:10 +0200", int64(0), false),
		Entry("a non-ASCII digit", "١٢", int64(0), false),
	)
})
