package record_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/testtree"
	"github.com/airlockdev/airlock/record"
	"github.com/airlockdev/airlock/redact"
	"github.com/airlockdev/airlock/semantic"
)

// statusUpstream serves one failure per path: 304, a rate-limited 403, a
// plain 403, 429 with Retry-After in both forms, and 503. The date form is
// an hour after the moment of the request.
func statusUpstream() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/304":
			h.Set("ETag", `"v1"`)
			w.WriteHeader(http.StatusNotModified)
			return
		case "/403-limited":
			h.Set("X-RateLimit-Limit", "60")
			h.Set("X-RateLimit-Remaining", "0")
			h.Set("Location", "https://api.example.com/next?access_token="+secretQuery)
			h.Add("Set-Cookie", secretCookie)
			h.Add("Set-Cookie", "other=1")
			w.WriteHeader(http.StatusForbidden)
		case "/403":
			h.Set("X-RateLimit-Remaining", "59")
			w.WriteHeader(http.StatusForbidden)
		case "/429-seconds":
			h.Set("Retry-After", "120")
			w.WriteHeader(http.StatusTooManyRequests)
		case "/429-date":
			h.Set("Retry-After", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusTooManyRequests)
		case "/503":
			h.Set("Retry-After", "soon")
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		w.Write([]byte(`{"message":"no"}`))
	}))
}

var _ = Describe("recording failure statuses", func() {
	It("judges each with its headers, saves the headers redacted, and airlock run judges the fixture the same", func() {
		srv := statusUpstream()
		defer srv.Close()
		dir, opts := noteProject()
		names := []string{"304", "403-limited", "403", "429-seconds", "429-date", "503"}
		for _, name := range names {
			opts.Calls = append(opts.Calls, record.Call{
				Name:    name,
				Request: semantic.Request{ID: "req-00000001"},
				HTTP:    &record.HTTPCall{URL: srv.URL + "/" + name},
			})
		}
		results, err := record.Record(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())

		type want struct {
			reason     string
			code       gate.ErrorCode
			retryable  bool
			retryAfter int64 // -1: none
		}
		wants := map[string]want{
			"304":         {gate.ReasonNotModified, gate.InvalidResponse, false, -1},
			"403-limited": {gate.ReasonStatus, gate.UpstreamUnavailable, true, -1},
			"403":         {gate.ReasonStatus, gate.InvalidResponse, false, -1},
			"429-seconds": {gate.ReasonStatus, gate.UpstreamUnavailable, true, 120},
			"429-date":    {gate.ReasonStatus, gate.UpstreamUnavailable, true, 3600},
			"503":         {gate.ReasonStatus, gate.UpstreamUnavailable, true, -1},
		}
		checkVerdict := func(name string, v *gate.Verdict) {
			GinkgoHelper()
			w := wants[name]
			Expect(v.Reason).To(Equal(w.reason), name)
			Expect(v.ErrorCode).To(Equal(w.code), name)
			Expect(v.Retryable).To(Equal(w.retryable), name)
			Expect(string(v.Output)).NotTo(ContainSubstring("retry_after"))
			if w.retryAfter < 0 {
				Expect(v.Audit.RetryAfterSeconds).To(BeNil(), name)
				return
			}
			Expect(v.Audit.RetryAfterSeconds).NotTo(BeNil(), name)
			// The date form counts from the recording's clock, a second or
			// two after the upstream's; seconds are exact.
			Expect(*v.Audit.RetryAfterSeconds).To(BeNumerically("~", w.retryAfter, 2), name)
			Expect(string(v.Audit.JSON())).To(ContainSubstring(`"retry_after_s":`))
		}
		for _, r := range results {
			Expect(r.Err).NotTo(HaveOccurred(), r.Name)
			checkVerdict(r.Name, r.Verdict)
		}
		Expect(results[5].Verdict.Warnings).To(ConsistOf(HaveField("Code", gate.WarningRetryAfter)))

		rdir := filepath.Join(dir, "fixtures", "note_status", "v1", "recorded")
		m := testtree.ReadMeta(filepath.Join(rdir, "403-limited.meta.yaml"))
		Expect(m.ResponseHeaders).To(HaveKeyWithValue("X-Ratelimit-Remaining", fixture.HeaderValues{"0"}))
		Expect(m.ResponseHeaders).To(HaveKeyWithValue("Set-Cookie", fixture.HeaderValues{"sid=REDACTED", "other=REDACTED"}))
		Expect(m.ResponseHeaders["Location"]).To(Equal(fixture.HeaderValues{"https://api.example.com/next?access_token=REDACTED"}))
		Expect(m.Recorded.Redacted).To(ContainElements(
			redact.Redaction{Where: redact.RedactedResponseHeader, Name: "Location"},
			redact.Redaction{Where: redact.RedactedResponseHeader, Name: "Set-Cookie"},
		))
		Expect(testtree.ReadMeta(filepath.Join(rdir, "429-seconds.meta.yaml")).ResponseHeaders).To(HaveKeyWithValue("Retry-After", fixture.HeaderValues{"120"}))
		Expect(*testtree.ReadMeta(filepath.Join(rdir, "304.meta.yaml")).Status).To(Equal(304))
		noSecretsUnder(dir)

		// airlock run's path (fixture.Set) judges each sidecar as record did,
		// from the headers and the clock the sidecar keeps.
		set, err := fixture.Open(opts.SchemasDir, opts.FixturesDir, fixture.Filter{}, gate.Options{})
		Expect(err).NotTo(HaveOccurred())
		Expect(set.Fixtures).To(HaveLen(len(names)))
		for _, f := range set.Fixtures {
			p, err := set.Prepare(f)
			Expect(err).NotTo(HaveOccurred())
			v, err := set.CheckPrepared(context.Background(), f, p)
			Expect(err).NotTo(HaveOccurred())
			checkVerdict(strings.TrimSuffix(filepath.Base(f.Body), ".json"), v)
		}
		raw, err := os.ReadFile(filepath.Join(rdir, "429-date.meta.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(raw)).To(MatchRegexp(`(?m)^response_headers:\n(  ".*\n)*  "Retry-After": "[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT"\n`))
	})
})
