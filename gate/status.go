package gate

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/airlockdev/airlock/internal/manifest"
	"github.com/airlockdev/airlock/internal/sanitize"
)

// StatusOutcome is what a non-success upstream status means to the agent:
// the failure envelope's error code and whether the call may be retried.
type StatusOutcome struct {
	ErrorCode ErrorCode
	Retryable bool
}

// RateLimitHeaders returns the response headers that make a 403 a rate limit
// (retryable UPSTREAM_UNAVAILABLE) rather than a refusal of access
// (INVALID_RESPONSE), by canonical name:
//
//   - Retry-After with a valid value (RFC 9110 §10.2.3; see
//     ParseRetryAfter);
//   - X-RateLimit-Remaining: 0 (the de-facto header of GitHub, GitLab and
//     many others);
//   - RateLimit-Remaining: 0 (draft-ietf-httpapi-ratelimit-headers, the
//     earlier drafts' separate field).
//
// A remaining count is "0" after trimming spaces; the first field line
// counts. The structured RateLimit field of later drafts is not read. The
// slice is a new copy.
func RateLimitHeaders() []string {
	return []string{"Retry-After", remainingHeaders[0], remainingHeaders[1]}
}

// remainingHeaders are the rate-limit headers whose value "0" means none
// left, by canonical name.
var remainingHeaders = [2]string{"X-Ratelimit-Remaining", "Ratelimit-Remaining"}

// MaxRetryAfter is the longest delay a Retry-After gives the verdict, in
// seconds: 2^31, the value RFC 9111 §1.2.2 has a cache use for a
// delta-seconds it cannot represent. A longer delay is cut to it.
const MaxRetryAfter = 1 << 31

// ParseRetryAfter reads a Retry-After field value (RFC 9110 §10.2.3):
// delay-seconds (1*DIGIT; leading zeros allowed, past MaxRetryAfter cut to
// MaxRetryAfter) or an HTTP-date (RFC 9110 §5.6.7: IMF-fixdate, or the
// obsolete RFC 850 and asctime forms a recipient must accept), which is
// turned into seconds from now, rounded up, 0 when it is not after now.
// Spaces and tabs around the value are ignored. It returns the delay in
// whole seconds, and false for anything else: an empty value, a sign, a
// fraction, a unit, a date that does not parse.
func ParseRetryAfter(value string, now time.Time) (seconds int64, ok bool) {
	v := strings.Trim(value, " \t")
	if v == "" {
		return 0, false
	}
	if allDigits(v) {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n > MaxRetryAfter {
			return MaxRetryAfter, true // only digits: too many of them to represent
		}
		return int64(n), true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d := t.Sub(now)
	if d <= 0 {
		return 0, true
	}
	s := int64(math.Ceil(d.Seconds()))
	return min(s, MaxRetryAfter), true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// statusPolicy is a contract's statuses: section: exact statuses and
// classes ("4xx" as 4) to outcomes.
type statusPolicy struct {
	exact   map[int]StatusOutcome
	classes map[int]StatusOutcome
}

// statusOutcome decides the error code and retryability of a non-success
// status: the contract's exact status, then its class, then the default
// (DefaultStatusOutcome). It says which in the returned text, for the
// audit message.
func (c *Contract) statusOutcome(status int, h http.Header) (StatusOutcome, string) {
	if o, ok := c.statuses.exact[status]; ok {
		return o, fmt.Sprintf("contract statuses %q", strconv.Itoa(status))
	}
	if o, ok := c.statuses.classes[status/100]; ok && status >= 100 && status <= 599 {
		return o, fmt.Sprintf("contract statuses \"%dxx\"", status/100)
	}
	return DefaultStatusOutcome(status, h)
}

// DefaultStatusOutcome is the outcome of a non-success status when the
// contract's statuses: section does not name it or its class, with the
// rule that decided it:
//
//	404                               NOT_FOUND             not retryable
//	408, 425, 429, 500–599            UPSTREAM_UNAVAILABLE  retryable
//	403 with a rate-limit header      UPSTREAM_UNAVAILABLE  retryable
//	    (see RateLimitHeaders)
//	any other (304 included)          INVALID_RESPONSE      not retryable
//
// h may be nil.
func DefaultStatusOutcome(status int, h http.Header) (StatusOutcome, string) {
	switch {
	case status == 404:
		return StatusOutcome{NotFound, false}, "default for 404"
	case status == 408 || status == 425 || status == 429:
		return StatusOutcome{UpstreamUnavailable, true}, fmt.Sprintf("default for %d", status)
	case status >= 500 && status <= 599:
		return StatusOutcome{UpstreamUnavailable, true}, "default for 5xx"
	case status == 403:
		if name := rateLimited(h); name != "" {
			return StatusOutcome{UpstreamUnavailable, true}, "default for 403 with rate-limit header " + name
		}
	}
	return StatusOutcome{InvalidResponse, false}, "default"
}

// rateLimited returns the first of RateLimitHeaders() that h carries with a
// rate-limit value, "" when none.
func rateLimited(h http.Header) string {
	if v := h.Values("Retry-After"); len(v) > 0 {
		if _, ok := ParseRetryAfter(v[0], time.Time{}); ok { // validity does not depend on the clock
			return "Retry-After"
		}
	}
	for _, name := range remainingHeaders {
		if v := h.Values(name); len(v) > 0 && strings.Trim(v[0], " \t") == "0" {
			return name + ": 0"
		}
	}
	return ""
}

// retryAfter reads the Retry-After of a non-success response into v, or
// warns (WarningRetryAfter) when it is there but unusable.
func retryAfter(v *Verdict, h http.Header, now time.Time) {
	values := h.Values("Retry-After")
	if len(values) == 0 {
		return
	}
	if len(values) > 1 {
		v.Warnings = append(v.Warnings, Warning{Code: WarningRetryAfter, Message: fmt.Sprintf("%d Retry-After field lines; one is allowed, all ignored", len(values))})
		return
	}
	s, ok := ParseRetryAfter(values[0], now)
	if !ok {
		v.Warnings = append(v.Warnings, Warning{Code: WarningRetryAfter, Message: fmt.Sprintf("Retry-After %q is neither delay-seconds nor an HTTP-date (RFC 9110 §10.2.3); ignored", sanitize.Text(values[0], 128, sanitize.Escape))})
		return
	}
	v.RetryAfter = time.Duration(s) * time.Second
	v.HasRetryAfter = true
}

// parseStatuses compiles the manifest's statuses: section. A key is an
// exact status 100–599 other than 2xx, or a class 1xx, 3xx, 4xx or 5xx;
// the error code must be one the contract may emit. bad is the key of an
// unusable entry.
func parseStatuses(m map[string]manifest.StatusSpec, allowed []ErrorCode) (p statusPolicy, bad string, err error) {
	p = statusPolicy{exact: map[int]StatusOutcome{}, classes: map[int]StatusOutcome{}}
	for key, spec := range m {
		code := ErrorCode(spec.ErrorCode)
		ok := false
		for _, e := range allowed {
			ok = ok || e == code
		}
		if !ok {
			return p, key, fmt.Errorf("error code %s is not in the contract's error_codes %v", code, allowed)
		}
		o := StatusOutcome{ErrorCode: code, Retryable: code == UpstreamUnavailable}
		if spec.Retryable != nil {
			o.Retryable = *spec.Retryable
		}
		if len(key) != 3 || key[0] < '1' || key[0] > '5' {
			return p, key, fmt.Errorf("%q is neither a status 100–599 nor a class 1xx–5xx", key)
		}
		if key[0] == '2' {
			return p, key, fmt.Errorf("%q is a success status; the statuses section maps failures only", key)
		}
		if key[1:] == "xx" {
			p.classes[int(key[0]-'0')] = o
			continue
		}
		n, err := strconv.Atoi(key)
		if err != nil || !allDigits(key) {
			return p, key, fmt.Errorf("%q is neither a status 100–599 nor a class 1xx–5xx", key)
		}
		p.exact[n] = o
	}
	return p, "", nil
}
