package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
)

// TestStatusThroughRecordAndCheck records failure statuses from a local
// upstream with airlock record, then gives each recorded response (body,
// status, headers from the sidecar, clock) to airlock check: both must
// give the verdict the status policy specifies, Retry-After in the audit
// record only.
func TestStatusThroughRecordAndCheck(t *testing.T) {
	date := time.Now().Add(10 * time.Minute).UTC().Format(http.TimeFormat)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/not-modified":
			w.WriteHeader(http.StatusNotModified)
			return
		case "/limited":
			h.Set("Ratelimit-Remaining", "0")
			w.WriteHeader(http.StatusForbidden)
		case "/forbidden":
			w.WriteHeader(http.StatusForbidden)
		case "/later-seconds":
			h.Set("Retry-After", "30")
			w.WriteHeader(http.StatusTooManyRequests)
		case "/later-date":
			h.Set("Retry-After", date)
			w.WriteHeader(http.StatusTooManyRequests)
		case "/down":
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		fmt.Fprint(w, `{"message":"no"}`)
	}))
	defer srv.Close()

	dir := t.TempDir()
	schemas := filepath.Join(dir, "schemas")
	if err := os.CopyFS(filepath.Join(schemas, "review_status"), os.DirFS("../schemas/review_status")); err != nil {
		t.Fatal(err)
	}
	fixtures := filepath.Join(dir, "fixtures")
	cases := []struct {
		name       string
		reason     string
		code       gate.ErrorCode
		retryable  bool
		retryAfter int64 // -1: none
	}{
		{"not-modified", gate.ReasonNotModified, gate.InvalidResponse, false, -1},
		{"limited", gate.ReasonStatus, gate.UpstreamUnavailable, true, -1},
		{"forbidden", gate.ReasonStatus, gate.InvalidResponse, false, -1},
		{"later-seconds", gate.ReasonStatus, gate.UpstreamUnavailable, true, 30},
		{"later-date", gate.ReasonStatus, gate.UpstreamUnavailable, true, 600},
		{"down", gate.ReasonStatus, gate.UpstreamUnavailable, true, -1},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		args := []string{"record", "--schemas", schemas, "--fixtures", fixtures, "--tool", "review_status", "--name", c.name, "--request-id", "r1", "--url", srv.URL + "/" + c.name}
		if got := Main(context.Background(), args, Stdio{Out: &out, Err: &errb}, Options{}); got != ExitFindings {
			t.Fatalf("record %s: exit %d, want %d (refused)\n%s%s", c.name, got, ExitFindings, out.String(), errb.String())
		}
		if !strings.Contains(out.String()+errb.String(), c.reason) {
			t.Errorf("record %s: the report does not name %s:\n%s%s", c.name, c.reason, out.String(), errb.String())
		}

		// check, with what the sidecar kept.
		rdir := filepath.Join(fixtures, "review_status", "v2", "recorded")
		m, err := fixture.ReadMeta(filepath.Join(rdir, c.name+".meta.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if m.Recorded.Verdict.Reason != c.reason {
			t.Errorf("%s: recorded verdict %+v, want %s", c.name, m.Recorded.Verdict, c.reason)
		}
		args = []string{"check", "--schemas", schemas, "--tool", "review_status", "--request-id", "r1",
			"--status", fmt.Sprint(*m.Status), "--clock", *m.Clock}
		for _, k := range slices.Sorted(maps.Keys(m.ResponseHeaders)) {
			for _, v := range m.ResponseHeaders[k] {
				args = append(args, "--response-header", k+": "+v)
			}
		}
		args = append(args, filepath.Join(rdir, c.name+".json"))
		out.Reset()
		errb.Reset()
		if got := Main(context.Background(), args, Stdio{Out: &out, Err: &errb}, Options{}); got != ExitFindings {
			t.Fatalf("check %s: exit %d, want %d\n%s%s", c.name, got, ExitFindings, out.String(), errb.String())
		}
		wantOut := fmt.Sprintf(`{"tool":"review_status","request_id":"r1","outcome":"failure","error":{"code":%q,"retryable":%t}}`+"\n", c.code, c.retryable)
		if out.String() != wantOut {
			t.Errorf("check %s: agent output %s, want %s", c.name, out.String(), wantOut)
		}
		var audit struct {
			Reason      string `json:"reason"`
			RetryAfterS *int64 `json:"retry_after_s"`
		}
		if err := json.Unmarshal(errb.Bytes(), &audit); err != nil {
			t.Fatalf("check %s: audit record: %v\n%s", c.name, err, errb.String())
		}
		if audit.Reason != c.reason {
			t.Errorf("check %s: reason %s, want %s", c.name, audit.Reason, c.reason)
		}
		switch {
		case c.retryAfter < 0 && audit.RetryAfterS != nil:
			t.Errorf("check %s: retry_after_s %d, want none", c.name, *audit.RetryAfterS)
		case c.retryAfter >= 0 && audit.RetryAfterS == nil:
			t.Errorf("check %s: no retry_after_s, want %d", c.name, c.retryAfter)
		case c.retryAfter >= 0 && (*audit.RetryAfterS < c.retryAfter-2 || *audit.RetryAfterS > c.retryAfter):
			// The date counts from the sidecar's clock, the moment the
			// response arrived, a little after the upstream wrote it.
			t.Errorf("check %s: retry_after_s %d, want %d (-2 s)", c.name, *audit.RetryAfterS, c.retryAfter)
		}
	}
}
