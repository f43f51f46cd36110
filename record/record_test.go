package record_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/internal/testtree"
	"github.com/airlockdev/airlock/record"
	"github.com/airlockdev/airlock/redact"
	"github.com/airlockdev/airlock/semantic"
)

// Secrets the upstreams below are given or send back; none may reach disk.
const (
	secretAuth   = "Bearer s3cr3t-AUTH-0001"
	secretQuery  = "s3cr3t-QUERY-0002"
	secretCookie = "sid=s3cr3t-COOKIE-0003"
	secretBody   = "s3cr3t-BODY-0004"
	secretArg    = "s3cr3t-ARG-0005"
)

var allSecrets = []string{"s3cr3t-AUTH", "s3cr3t-QUERY", "s3cr3t-COOKIE", "s3cr3t-BODY", "s3cr3t-ARG"}

// step is one scripted answer of the drifting upstream.
type step struct {
	status  int
	ctype   string
	body    string
	delay   time.Duration
	length  int // a Content-Length larger than the body: the connection is cut short
	gzipped bool
}

// drifting serves script[i] to the i-th request and counts requests.
func drifting(script []step) (*httptest.Server, *atomic.Int32, *atomic.Value) {
	var hits atomic.Int32
	var lastAuth atomic.Value
	lastAuth.Store("")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(hits.Add(1)) - 1
		lastAuth.Store(r.Header.Get("Authorization"))
		if i >= len(script) {
			http.Error(w, "script exhausted", http.StatusTeapot)
			return
		}
		s := script[i]
		if s.delay > 0 {
			select {
			case <-time.After(s.delay):
			case <-r.Context().Done():
				return
			}
		}
		body := []byte(s.body)
		if s.gzipped && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			zw.Write(body)
			zw.Close()
			body = buf.Bytes()
			w.Header().Set("Content-Encoding", "gzip")
		}
		if s.ctype != "" {
			w.Header().Set("Content-Type", s.ctype)
		}
		w.Header().Add("Set-Cookie", secretCookie)
		w.Header().Set("X-Upstream", "drifty/1")
		if s.length > 0 {
			w.Header().Set("Content-Length", fmt.Sprint(s.length))
		}
		w.WriteHeader(s.status)
		w.Write(body)
	}))
	return srv, &hits, &lastAuth
}

// noSecretsUnder fails when any file under dir holds one of the secrets
// (allSecrets when none are given).
func noSecretsUnder(dir string, secrets ...string) {
	if len(secrets) == 0 {
		secrets = allSecrets
	}
	n := 0
	Expect(filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		Expect(err).NotTo(HaveOccurred())
		if d.IsDir() {
			return nil
		}
		n++
		b, err := os.ReadFile(p)
		Expect(err).NotTo(HaveOccurred())
		for _, s := range secrets {
			Expect(string(b)).NotTo(ContainSubstring(s), "%s holds a secret", p)
		}
		return nil
	})).To(Succeed())
	Expect(n).To(BeNumerically(">", 0), "no files under %s", dir)
}

// filesUnder lists the files under dir, relative to it.

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func noteProject() (string, record.Options) {
	files := testtree.Project()
	for k := range files {
		if strings.HasPrefix(k, "fixtures/") {
			delete(files, k)
		}
	}
	files["fixtures/.keep"] = ""
	dir := testtree.Tree(files)
	return dir, record.Options{
		SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures"),
		Tool: "note_status", Timeout: 2 * time.Second,
	}
}

func httpCall(name, url string) record.Call {
	h := http.Header{}
	h.Set("Authorization", secretAuth)
	h.Set("Accept", "application/json")
	return record.Call{
		Name:    name,
		Request: semantic.Request{ID: "req-00000001", Context: map[string]any{"project": "copperhead"}},
		HTTP:    &record.HTTPCall{URL: url + "/notes/N-17?api_key=" + secretQuery + "&view=full", Header: h},
	}
}

const goodNote = `{"request_id":"req-00000001","note_id":"N-17","state":"open","session_token":"` + secretBody + `"}`

var _ = Describe("airlock record from HTTP", func() {
	It("records an upstream drifting between calls, each with its sidecar and the gate's verdict", func() {
		srv, hits, lastAuth := drifting([]step{
			{status: 200, ctype: "application/json", body: `{"request_id":"req-00000001","note_id":"N-17","state":"open"}`},
			{status: 200, ctype: "application/json", body: `{"request_id":"req-00000001","note_id":"N-17","state":"open","priority":"high"}`},
			{status: 200, ctype: "application/json", body: `{"request_id":"req-00000001","note_id":17,"state":"open"}`},
			{status: 200, ctype: "text/html; charset=utf-8", body: "<!doctype html><html><body><h1>502 Bad Gateway</h1></body></html>\n"},
			{status: 200, ctype: "application/json", body: `{"request_id":"req-00000001","note_id":"N-`},
			{status: 200, ctype: "application/json", body: `{"request_id":"req-00000001","note_id":"N-17","state":"open"}`, delay: 5 * time.Second},
			{status: 503, ctype: "application/json", body: `{"error":"maintenance"}`},
		})
		defer srv.Close()
		dir, opts := noteProject()
		opts.Timeout = 300 * time.Millisecond
		for _, name := range []string{"baseline", "new-member", "retyped", "html-200", "truncated", "slow", "unavailable"} {
			opts.Calls = append(opts.Calls, httpCall(name, srv.URL))
		}
		results, err := record.Record(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(hits.Load()).To(BeEquivalentTo(7))
		Expect(lastAuth.Load()).To(Equal(secretAuth), "the upstream gets the real credentials")

		want := map[string]struct{ outcome, reason, ext string }{
			"baseline":    {"admitted", "", ".json"},
			"new-member":  {"refused", "schema.additionalProperties", ".json"},
			"retyped":     {"refused", "schema.type", ".json"},
			"html-200":    {"refused", "transport.content_type", ".html"},
			"truncated":   {"refused", "parse.truncated", ".json"},
			"unavailable": {"refused", "transport.status", ".json"},
		}
		rdir := filepath.Join(dir, "fixtures", "note_status", "v1", "recorded")
		for i, r := range results {
			if r.Name == "slow" {
				// A response past the timeout records nothing.
				Expect(errors.Is(r.Err, record.ErrUpstream)).To(BeTrue(), "%v", r.Err)
				Expect(r.Err.Error()).To(ContainSubstring("timed out after 300ms"))
				Expect(r.Err.Error()).NotTo(ContainSubstring(secretQuery))
				Expect(r.Body).To(BeEmpty())
				continue
			}
			w := want[r.Name]
			Expect(r.Err).NotTo(HaveOccurred(), r.Name)
			Expect(r.Body).To(Equal(filepath.Join(rdir, r.Name+w.ext)))
			body, err := os.ReadFile(r.Body)
			Expect(err).NotTo(HaveOccurred())
			// Byte for byte what the upstream sent (none of these carry a secret).
			Expect(string(body)).To(Equal([]step{
				{body: `{"request_id":"req-00000001","note_id":"N-17","state":"open"}`},
				{body: `{"request_id":"req-00000001","note_id":"N-17","state":"open","priority":"high"}`},
				{body: `{"request_id":"req-00000001","note_id":17,"state":"open"}`},
				{body: "<!doctype html><html><body><h1>502 Bad Gateway</h1></body></html>\n"},
				{body: `{"request_id":"req-00000001","note_id":"N-`},
				{},
				{body: `{"error":"maintenance"}`},
			}[i].body), r.Name)

			m := testtree.ReadMeta(r.Meta)
			Expect(m.Recorded).NotTo(BeNil())
			p := m.Recorded
			Expect(p.Verdict.Outcome).To(Equal(w.outcome), r.Name)
			Expect(p.Verdict.Reason).To(Equal(w.reason), r.Name)
			Expect(p.Verdict.ContractVersion).To(Equal("1"))
			Expect(r.Verdict.Admitted).To(Equal(w.outcome == "admitted"))
			Expect(p.Size).To(BeEquivalentTo(len(body)))
			Expect(p.SHA256).To(Equal(sha(body)))
			Expect(p.Source).To(Equal("GET " + srv.URL + "/notes/N-17?api_key=REDACTED&view=full"))
			Expect(p.RequestHeaders).To(HaveKeyWithValue("Authorization", "Bearer REDACTED"))
			Expect(p.RequestHeaders).To(HaveKeyWithValue("Accept", "application/json"))
			Expect(p.ResponseHeaders).To(BeEmpty(), "response headers are in response_headers, where the gate reads them")
			Expect(m.ResponseHeaders).To(HaveKeyWithValue("Set-Cookie", fixture.HeaderValues{"sid=REDACTED"}))
			Expect(m.ResponseHeaders).To(HaveKeyWithValue("X-Upstream", fixture.HeaderValues{"drifty/1"}))
			Expect(p.Redacted).To(ContainElements(
				redact.Redaction{Where: redact.RedactedQuery, Name: "api_key"},
				redact.Redaction{Where: redact.RedactedHeader, Name: "Authorization"},
				redact.Redaction{Where: redact.RedactedResponseHeader, Name: "Set-Cookie"},
			))
			Expect(p.AirlockVersion).NotTo(BeEmpty())
			Expect(*m.Request.ID).To(Equal("req-00000001"))
			Expect(m.Request.Context).To(Equal(map[string]any{"project": "copperhead"}))
			Expect(*m.Clock).To(Equal(p.Time), "the clock is pinned to the time of recording")
			Expect(m.Expect).To(BeNil(), "a recorded fixture states no expectation until promoted")
			wantStatus := 200
			if r.Name == "unavailable" {
				wantStatus = 503
			}
			Expect(*m.Status).To(Equal(wantStatus))
		}
		Expect(*testtree.ReadMeta(filepath.Join(rdir, "html-200.meta.yaml")).ContentType).To(Equal("text/html; charset=utf-8"))
		Expect(testtree.ReadMeta(filepath.Join(rdir, "truncated.meta.yaml")).Notes).To(ContainSubstring("not JSON from start to end"))
		Expect(testtree.Files(rdir)).To(ConsistOf(
			"baseline.json", "baseline.meta.yaml", "new-member.json", "new-member.meta.yaml",
			"retyped.json", "retyped.meta.yaml", "html-200.html", "html-200.meta.yaml",
			"truncated.json", "truncated.meta.yaml", "unavailable.json", "unavailable.meta.yaml",
		), "nothing for the slow call, no temporary files")
		noSecretsUnder(dir)

		// The tree stays runnable: recorded fixtures are discovered (the
		// drifted ones unchecked, since they state no expectation).
		res, err := testtree.Run(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Fixtures).To(Equal(6))
		_, failed, _ := res.Run.Counts()
		Expect(failed).To(BeZero())
	})

	It("writes a sidecar that loads whatever the upstream sends: a 10 KB Content-Type, a 10 KB URL, 400 long headers, invalid UTF-8", func() {
		longType := "application/json; profile=" + strings.Repeat("p", 10<<10)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", longType)
			w.Header().Set("X-Latin1", "caf\xe9 \xff\xfe")
			for i := range 400 {
				w.Header().Set(fmt.Sprintf("X-Long-%03d", i), strings.Repeat("v", 5000))
			}
			w.Write([]byte(testtree.GoodBody))
		}))
		defer srv.Close()
		dir, opts := noteProject()
		opts.Calls = []record.Call{{
			Name:    "huge",
			Request: semantic.Request{ID: "req-00000001"},
			HTTP:    &record.HTTPCall{URL: srv.URL + "/notes/" + strings.Repeat("n", 10<<10) + "?api_key=" + secretQuery},
		}}
		results, err := record.Record(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(results[0].Err).NotTo(HaveOccurred())
		Expect(results[0].Verdict.Admitted).To(BeTrue(), "the gate judges the response as received")

		raw, err := os.ReadFile(results[0].Meta)
		Expect(err).NotTo(HaveOccurred())
		Expect(len(raw)).To(BeNumerically("<=", 1<<20))
		m := testtree.ReadMeta(results[0].Meta)
		Expect(*m.ContentType).To(HavePrefix("application/json; profile=ppp"))
		Expect(*m.ContentType).To(HaveSuffix(fixture.TruncatedMarker + sha([]byte(longType)) + "]"))
		Expect([]rune(*m.ContentType)).To(HaveLen(fixture.MaxContentType))
		Expect(m.Recorded.Source).To(HavePrefix("GET " + srv.URL + "/notes/nnn"))
		Expect(m.Recorded.Source).To(ContainSubstring(fixture.TruncatedMarker))
		Expect([]rune(m.Recorded.Source)).To(HaveLen(fixture.MaxSource))
		Expect(m.ResponseHeaders).To(HaveKeyWithValue("X-Latin1", fixture.HeaderValues{"caf\ufffd \ufffd\ufffd"}))
		Expect(m.ResponseHeaders).To(HaveKey("Content-Type"))
		Expect(len(m.ResponseHeaders)).To(BeNumerically("<", 400))
		Expect(m.Notes).To(ContainSubstring("the sidecar keeps a bounded form: content_type: 10266 characters cut to 256"))
		Expect(m.Notes).To(ContainSubstring("response_headers:"))
		Expect(m.Notes).To(ContainSubstring("entries (in name order) left out"))
		Expect(results[0].Warnings).To(ContainElement(ContainSubstring("content_type")))
		noSecretsUnder(dir)

		// The tree runs, and the fixture promotes: it is judged with the
		// Content-Type the sidecar keeps, which the gate cannot parse.
		res, err := testtree.Run(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Fixtures).To(Equal(1))
		p, err := fixture.Promote(context.Background(), fixture.PromoteOptions{
			SchemasDir: opts.SchemasDir, Fixture: results[0].Body, To: fixture.KindHistorical,
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Expect).To(Equal(&fixture.Expect{Outcome: "refused", Reason: "transport.content_type"}))
		promoted := testtree.ReadMeta(filepath.Join(dir, "fixtures", "note_status", "v1", "historical", "huge.meta.yaml"))
		Expect(promoted.ContentType).To(Equal(m.ContentType))
		Expect(promoted.Recorded).To(Equal(m.Recorded))
		res, err = testtree.Run(dir)
		Expect(err).NotTo(HaveOccurred())
		_, failed, _ := res.Run.Counts()
		Expect(failed).To(BeZero())
	})

	It("refuses a request the sidecar could only hold cut, before any call", func() {
		dir, opts := noteProject()
		for _, req := range []semantic.Request{
			{ID: strings.Repeat("r", fixture.MaxRequestID+1)},
			{ID: "req-\xff"},
			{ID: "req-1", Context: map[string]any{"project": strings.Repeat("p", fixture.MaxContextValue+1)}},
			{ID: "req-1", Context: map[string]any{strings.Repeat("k", fixture.MaxContextKey+1): "v"}},
		} {
			opts.Calls = []record.Call{{Name: "x", Request: req, HTTP: &record.HTTPCall{URL: "http://127.0.0.1:1/"}}}
			_, err := record.Record(context.Background(), opts)
			Expect(err).To(MatchError(ContainSubstring("/0/request")))
		}
		Expect(testtree.Files(dir)).NotTo(ContainElement(ContainSubstring("recorded")))
	})

	It("redacts secrets in the body and says where", func() {
		srv, _, _ := drifting([]step{{status: 200, ctype: "application/json", body: goodNote}})
		defer srv.Close()
		dir, opts := noteProject()
		opts.Calls = []record.Call{httpCall("with-token", srv.URL)}
		results, err := record.Record(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())
		r := results[0]
		Expect(r.Err).NotTo(HaveOccurred())
		body, _ := os.ReadFile(r.Body)
		Expect(string(body)).To(Equal(`{"request_id":"req-00000001","note_id":"N-17","state":"open","session_token":"REDACTED"}`))
		m := testtree.ReadMeta(r.Meta)
		Expect(m.Recorded.Redacted).To(ContainElement(redact.Redaction{Where: redact.RedactedBody, Pointer: "/session_token"}))
		Expect(m.Recorded.SHA256).To(Equal(sha(body)), "size and hash describe the file as written")
		// The verdict is the gate's on the response as received.
		Expect(m.Recorded.Verdict.Reason).To(Equal("schema.additionalProperties"))
		noSecretsUnder(dir)
	})

	It("writes everything as received with NoRedact", func() {
		srv, _, _ := drifting([]step{{status: 200, ctype: "application/json", body: goodNote}})
		defer srv.Close()
		_, opts := noteProject()
		opts.NoRedact = true
		opts.Calls = []record.Call{httpCall("raw", srv.URL)}
		results, err := record.Record(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())
		body, _ := os.ReadFile(results[0].Body)
		Expect(string(body)).To(Equal(goodNote))
		side, _ := os.ReadFile(results[0].Meta)
		Expect(string(side)).To(ContainSubstring(secretQuery))
		Expect(string(side)).To(ContainSubstring("redaction off"))
	})

	It("stores a gzip answer compressed as sent, with content_encoding, and re-compresses it when redacting", func() {
		srv, _, _ := drifting([]step{
			{status: 200, ctype: "application/json", body: `{"request_id":"req-00000001","note_id":"N-17","state":"closed"}`, gzipped: true},
			{status: 200, ctype: "application/json", body: goodNote, gzipped: true},
		})
		defer srv.Close()
		dir, opts := noteProject()
		a, b := httpCall("gz", srv.URL), httpCall("gz-secret", srv.URL)
		a.HTTP.Gzip, b.HTTP.Gzip = true, true
		opts.Calls = []record.Call{a, b}
		results, err := record.Record(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(results[0].Err).NotTo(HaveOccurred())
		Expect(results[0].Body).To(HaveSuffix("gz.bin"))
		m := testtree.ReadMeta(results[0].Meta)
		Expect(*m.ContentEncoding).To(Equal("gzip"))
		Expect(m.Recorded.RequestHeaders).To(HaveKeyWithValue("Accept-Encoding", "gzip"))
		Expect(results[0].Verdict.Admitted).To(BeTrue())
		stored, _ := os.ReadFile(results[0].Body)
		Expect(stored[:2]).To(Equal([]byte{0x1f, 0x8b}))
		zr, err := gzip.NewReader(bytes.NewReader(stored))
		Expect(err).NotTo(HaveOccurred())
		var plain bytes.Buffer
		plain.ReadFrom(zr)
		Expect(plain.String()).To(Equal(`{"request_id":"req-00000001","note_id":"N-17","state":"closed"}`))

		stored, _ = os.ReadFile(results[1].Body)
		zr, err = gzip.NewReader(bytes.NewReader(stored))
		Expect(err).NotTo(HaveOccurred())
		plain.Reset()
		plain.ReadFrom(zr)
		Expect(plain.String()).To(ContainSubstring(`"session_token":"REDACTED"`))
		noSecretsUnder(dir)

		// The gate runs the stored fixture through its inflation path.
		res, err := testtree.Run(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Fixtures).To(Equal(2))
	})

	It("refuses to store a gzip body whose bytes after the stream hold a secret", func() {
		var zipped bytes.Buffer
		zw := gzip.NewWriter(&zipped)
		zw.Write([]byte(`{"ok":true}`))
		zw.Close()
		trailing := append(zipped.Bytes(), []byte("\npassword="+secretBody+"\n")...)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(trailing)
		}))
		defer srv.Close()
		dir, opts := noteProject()
		c := httpCall("gz-trailing", srv.URL)
		c.HTTP.Gzip = true
		opts.Calls = []record.Call{c}
		results, err := record.Record(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(results[0].Err).To(MatchError(ContainSubstring("cannot be redacted inside a broken stream")))
		noSecretsUnder(dir)
	})

	It("records a redirect as the 3xx it is, and follows it only when asked", func() {
		var target string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/moved" {
				http.Redirect(w, r, target, http.StatusFound)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"request_id":"req-00000001","note_id":"N-17","state":"open"}`))
		}))
		defer srv.Close()
		target = srv.URL + "/notes/N-17"
		_, opts := noteProject()
		a := record.Call{Name: "redirect", Request: semantic.Request{ID: "req-00000001"}, HTTP: &record.HTTPCall{URL: srv.URL + "/moved"}}
		b := record.Call{Name: "followed", Request: semantic.Request{ID: "req-00000001"}, HTTP: &record.HTTPCall{URL: srv.URL + "/moved", FollowRedirects: true}}
		opts.Calls = []record.Call{a, b}
		results, err := record.Record(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(*testtree.ReadMeta(results[0].Meta).Status).To(Equal(302))
		Expect(results[0].Verdict.Reason).To(Equal("transport.status"))
		Expect(results[1].Verdict.Admitted).To(BeTrue())
		Expect(testtree.ReadMeta(results[1].Meta).Recorded.Source).To(ContainSubstring("(redirected to " + target + ")"))
	})

	It("records nothing for a body cut short or past the byte limit", func() {
		srv, _, _ := drifting([]step{
			{status: 200, ctype: "application/json", body: `{"request_id":"req-00000001"`, length: 500},
			{status: 200, ctype: "application/json", body: `{"request_id":"req-00000001","note_id":"N-17","state":"open"}`},
		})
		defer srv.Close()
		dir, opts := noteProject()
		opts.MaxBytes = 32
		opts.Calls = []record.Call{httpCall("cut", srv.URL), httpCall("big", srv.URL)}
		results, err := record.Record(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(errors.Is(results[0].Err, record.ErrUpstream)).To(BeTrue(), "%v", results[0].Err)
		Expect(results[0].Err.Error()).To(ContainSubstring("reading the body"))
		Expect(errors.Is(results[1].Err, record.ErrUpstream)).To(BeTrue(), "%v", results[1].Err)
		Expect(results[1].Err.Error()).To(ContainSubstring("longer than 32 bytes"))
		Expect(testtree.Files(filepath.Join(dir, "fixtures"))).To(Equal([]string{".keep"}), "not even an empty folder")
	})

	It("refuses an existing fixture name before calling anything, and never overwrites", func() {
		srv, hits, _ := drifting([]step{{status: 200, ctype: "application/json", body: `{}`}})
		defer srv.Close()
		dir, opts := noteProject()
		rdir := filepath.Join(dir, "fixtures", "note_status", "v1", "recorded")
		Expect(os.MkdirAll(rdir, 0o755)).To(Succeed())
		// Any file of the fixture takes the name: here an orphan golden.
		Expect(os.WriteFile(filepath.Join(rdir, "taken.html"), []byte("keep me"), 0o644)).To(Succeed())
		opts.Calls = []record.Call{httpCall("free", srv.URL), httpCall("taken", srv.URL)}
		_, err := record.Record(context.Background(), opts)
		Expect(errors.Is(err, record.ErrFixtureExists)).To(BeTrue(), "%v", err)
		Expect(hits.Load()).To(BeZero())
		b, _ := os.ReadFile(filepath.Join(rdir, "taken.html"))
		Expect(string(b)).To(Equal("keep me"))
		Expect(testtree.Files(rdir)).To(Equal([]string{"taken.html"}))

		opts.Calls = []record.Call{httpCall("twice", srv.URL), httpCall("twice", srv.URL)}
		_, err = record.Record(context.Background(), opts)
		Expect(err).To(MatchError(ContainSubstring(`the name "twice" is used twice`)))
	})

	It("refuses a folder that cannot be created before calling anything", func() {
		srv, hits, _ := drifting([]step{{status: 200, ctype: "application/json", body: `{}`}})
		defer srv.Close()
		dir, opts := noteProject()
		// A regular file where a folder must go: not even root can create it.
		blocker := filepath.Join(dir, "fixtures", "note_status")
		Expect(os.WriteFile(blocker, []byte("a file"), 0o644)).To(Succeed())
		opts.Calls = []record.Call{httpCall("x", srv.URL)}
		_, err := record.Record(context.Background(), opts)
		Expect(errors.Is(err, record.ErrUnwritable)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("is not a folder"))
		Expect(hits.Load()).To(BeZero())
	})

	It("leaves no file behind when interrupted mid-call", func() {
		started := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(200)
			w.Write([]byte(`{"request_id":"req-00000001",`))
			w.(http.Flusher).Flush()
			close(started)
			<-r.Context().Done()
		}))
		defer srv.Close()
		dir, opts := noteProject()
		opts.Timeout = 10 * time.Second
		opts.Calls = []record.Call{httpCall("interrupted", srv.URL), httpCall("never", srv.URL)}
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-started; cancel() }()
		results, err := record.Record(ctx, opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(results[0].Err).To(MatchError(ContainSubstring("interrupted")))
		Expect(results[1].Err).To(MatchError(ContainSubstring("interrupted before the call")))
		Expect(testtree.Files(filepath.Join(dir, "fixtures"))).To(Equal([]string{".keep"}))
	})

	It("needs an upstream version when the tool has no contract yet, and then records unchecked", func() {
		srv, _, _ := drifting([]step{{status: 200, ctype: "application/json", body: `{"a":1}`}})
		defer srv.Close()
		dir, opts := noteProject()
		opts.Tool = "new_tool"
		opts.Calls = []record.Call{httpCall("first", srv.URL)}
		_, err := record.Record(context.Background(), opts)
		Expect(err).To(MatchError(ContainSubstring("--upstream-version")))
		opts.UpstreamVersion = "2025-06-01"
		results, err := record.Record(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(results[0].Verdict).To(BeNil())
		Expect(testtree.ReadMeta(results[0].Meta).Recorded.Verdict.Outcome).To(Equal("unchecked"))
		Expect(results[0].Body).To(Equal(filepath.Join(dir, "fixtures", "new_tool", "2025-06-01", "recorded", "first.json")))
	})
})

var _ = Describe("recorded fixtures on disk", func() {
	It("publishes the sidecar schema it writes", func() {
		published, err := os.ReadFile(filepath.Join("..", "schemas", "fixture-meta.schema.json"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(published)).To(Equal(string(fixture.MetaSchema())), "regenerate with: go run ./cmd/airlock schema fixture-meta > schemas/fixture-meta.schema.json")
	})

	It("treats <name>.output-schema.json as a sidecar, never a body, and refuses an orphan", func() {
		files := testtree.Project()
		files["fixtures/note_status/v1/accepted/open.output-schema.json"] = `{"type":"object"}`
		res, err := testtree.Run(testtree.Tree(files))
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Fixtures).To(Equal(4))
		files["fixtures/note_status/v1/accepted/gone.output-schema.json"] = `{"type":"object"}`
		_, err = testtree.Run(testtree.Tree(files))
		Expect(err).To(MatchError(ContainSubstring("gone.output-schema.json: MCP output schema without a body file gone.<ext>")))
	})
})

var _ = Describe("airlock record from a command", func() {
	script := func(dir, name, text string) string {
		p := filepath.Join(dir, name)
		Expect(os.WriteFile(p, []byte(text), 0o755)).To(Succeed())
		return p
	}
	const good = `{"request_id":"req-00000001","note_id":"N-17","state":"open"}`

	It("records standard output byte for byte, the exit status and the size (never the content) of standard error", func() {
		dir, opts := noteProject()
		clean := script(dir, "clean.sh", "#!/bin/sh\nprintf '%s\\n' '"+good+"'\necho \"debug: token=$2\" >&2\n")
		noisy := script(dir, "noisy.sh", "#!/bin/sh\necho 'Starting note exporter v2.1...'\necho 'WARNING: config file not found, using defaults'\nprintf '%s\\n' '"+good+"'\necho 'Done in 0.2s'\nexit 3\n")
		opts.Calls = []record.Call{
			{Name: "clean", Request: semantic.Request{ID: "req-00000001"}, Command: &record.CommandCall{Argv: []string{clean, "--api-key", secretArg}}},
			{Name: "noisy", Request: semantic.Request{ID: "req-00000001"}, Command: &record.CommandCall{Argv: []string{noisy}}},
		}
		results, err := record.Record(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())
		c, n := results[0], results[1]
		Expect(c.Err).NotTo(HaveOccurred())
		Expect(n.Err).NotTo(HaveOccurred())

		body, _ := os.ReadFile(c.Body)
		Expect(string(body)).To(Equal(good + "\n"))
		Expect(c.Verdict.Admitted).To(BeTrue())
		m := testtree.ReadMeta(c.Meta)
		Expect(*m.Status).To(Equal(0))
		Expect(*m.ContentType).To(Equal("application/json"))
		Expect(*m.Recorded.ExitStatus).To(Equal(0))
		Expect(*m.Recorded.StderrBytes).To(BeEquivalentTo(len("debug: token=" + secretArg + "\n")))
		Expect(m.Recorded.Source).To(Equal("command: " + clean + " --api-key REDACTED"))

		// Banners and warnings around the JSON: the gate refuses, record keeps the bytes.
		body, _ = os.ReadFile(n.Body)
		Expect(string(body)).To(Equal("Starting note exporter v2.1...\nWARNING: config file not found, using defaults\n" + good + "\nDone in 0.2s\n"))
		Expect(n.Body).To(HaveSuffix("noisy.txt"))
		Expect(n.Verdict.Admitted).To(BeFalse())
		Expect(n.Verdict.Reason).To(HavePrefix("parse."))
		m = testtree.ReadMeta(n.Meta)
		Expect(m.Recorded.Verdict.Reason).To(Equal(n.Verdict.Reason))
		Expect(*m.Recorded.ExitStatus).To(Equal(3))
		Expect(m.Notes).To(ContainSubstring("exited with status 3"))
		noSecretsUnder(dir)
	})

	It("records nothing for a command that runs out of time or cannot start", func() {
		dir, opts := noteProject()
		opts.Timeout = 200 * time.Millisecond
		slow := script(dir, "slow.sh", "#!/bin/sh\necho '{'\nexec sleep 10\n")
		opts.Calls = []record.Call{
			{Name: "slow", Command: &record.CommandCall{Argv: []string{slow}}},
			{Name: "missing", Command: &record.CommandCall{Argv: []string{filepath.Join(dir, "no-such-program")}}},
		}
		start := time.Now()
		results, err := record.Record(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(time.Since(start)).To(BeNumerically("<", 5*time.Second))
		Expect(results[0].Err).To(MatchError(ContainSubstring("timed out after 200ms")))
		Expect(errors.Is(results[1].Err, record.ErrUpstream)).To(BeTrue())
		Expect(testtree.Files(filepath.Join(dir, "fixtures"))).To(Equal([]string{".keep"}))
	})

	It("reads several calls from a requests file", func() {
		dir, opts := noteProject()
		emit := script(dir, "emit.sh", "#!/bin/sh\nprintf '{\"request_id\":\"%s\",\"note_id\":\"%s\",\"state\":\"open\"}' \"$1\" \"$2\"\n")
		reqs := filepath.Join(dir, "calls.yaml")
		Expect(os.WriteFile(reqs, []byte(`- name: n17
  request_id: req-17
  args: [req-17, N-17]
- name: bad-id
  request_id: req-18
  args: [req-18, not-a-note]
`), 0o644)).To(Succeed())
		calls, err := record.LoadCalls(reqs, record.Call{Command: &record.CommandCall{Argv: []string{emit}}})
		Expect(err).NotTo(HaveOccurred())
		opts.Calls = calls
		results, err := record.Record(context.Background(), opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(results[0].Verdict.Admitted).To(BeTrue())
		Expect(results[1].Verdict.Reason).To(Equal("schema.pattern"))
		Expect(*testtree.ReadMeta(results[1].Meta).Request.ID).To(Equal("req-18"))
	})

	DescribeTable("requests files are strict",
		func(text string, base record.Call, msg string) {
			dir := testtree.Tree(map[string]string{"calls.yaml": text})
			_, err := record.LoadCalls(filepath.Join(dir, "calls.yaml"), base)
			Expect(err).To(MatchError(ContainSubstring(msg)))
		},
		Entry("unknown key", "- name: a\n  urll: http://x\n", record.Call{}, "urll"),
		Entry("no name", "- url: http://x\n", record.Call{}, "needs a name"),
		Entry("no source", "- name: a\n", record.Call{}, "no source"),
		Entry("mixed sources", "- name: a\n  url: http://x\n  args: [x]\n", record.Call{}, "not args or stdin"),
		Entry("MCP keys without a server", "- name: a\n  mcp_tool: t\n", record.Call{}, "an MCP call needs a server"),
		Entry("an MCP server without a tool", "- name: a\n  mcp_server: [node, s.js]\n", record.Call{}, "name the MCP tool"),
		Entry("both MCP servers", "- name: a\n  mcp_tool: t\n  mcp_server: [node]\n  url: http://x\n", record.Call{}, "not both"),
		Entry("MCP with args", "- name: a\n  mcp_tool: t\n  args: [x]\n", record.Call{Command: &record.CommandCall{Argv: []string{"node"}}}, "not args or stdin"),
		Entry("MCP with a body", "- name: a\n  mcp_tool: t\n  url: http://x\n  body: x\n", record.Call{}, "not method or body"),
		Entry("MCP headers over stdio", "- name: a\n  mcp_tool: t\n  headers: {A: b}\n", record.Call{Command: &record.CommandCall{Argv: []string{"node"}}}, "headers go with"),
		Entry("an MCP server with --stdin", "- name: a\n  mcp_tool: t\n", record.Call{Command: &record.CommandCall{Argv: []string{"node"}, Stdin: []byte("x")}}, "--stdin goes with a command"),
		Entry("an MCP URL with --data", "- name: a\n  mcp_tool: t\n", record.Call{HTTP: &record.HTTPCall{URL: "http://x", Body: []byte("x")}}, "--method, --data"),
		Entry("empty", "[]\n", record.Call{}, "lists no calls"),
	)

	It("reads MCP calls without --mcp: the server from the entry or the command line", func() {
		dir := testtree.Tree(map[string]string{"calls.yaml": `- name: from-command-line
  mcp_tool: get-sum
  arguments: {a: 1, b: 2}
- name: own-server
  mcp_server: [node, other.js, stdio]
  mcp_tool: echo
- name: over-http
  url: https://mcp.example/mcp
  headers: {Authorization: Bearer x}
  mcp_tool: lookup
- name: plain-command
  args: [--flag]
`})
		base := record.Call{Request: semantic.Request{Context: map[string]any{"k": "v"}}, Command: &record.CommandCall{Argv: []string{"node", "server.js", "stdio"}, ContentType: "application/json"}}
		calls, err := record.LoadCalls(filepath.Join(dir, "calls.yaml"), base)
		Expect(err).NotTo(HaveOccurred())
		Expect(calls).To(HaveLen(4))
		Expect(calls[0].Command).To(BeNil())
		Expect(calls[0].MCP).To(Equal(&record.MCPCall{Command: []string{"node", "server.js", "stdio"}, Tool: "get-sum", Arguments: json.RawMessage(`{"a":1,"b":2}`)}))
		Expect(calls[0].Request.Context).To(Equal(map[string]any{"k": "v"}))
		Expect(calls[1].MCP.Command).To(Equal([]string{"node", "other.js", "stdio"}))
		Expect(calls[2].MCP.Command).To(BeNil())
		Expect(calls[2].MCP.URL).To(Equal("https://mcp.example/mcp"))
		Expect(calls[2].MCP.Header.Get("Authorization")).To(Equal("Bearer x"))
		Expect(calls[3].MCP).To(BeNil(), "an entry without MCP keys stays a command")
		Expect(calls[3].Command.Argv).To(Equal([]string{"node", "server.js", "stdio", "--flag"}))

		// --url on the command line names the server over streamable HTTP
		// (an entry with args is no HTTP call).
		_, err = record.LoadCalls(filepath.Join(dir, "calls.yaml"), record.Call{HTTP: &record.HTTPCall{Method: "GET", URL: "https://mcp.example/v2"}})
		Expect(err).To(MatchError(ContainSubstring("/3: an HTTP call takes")))
		all, _ := os.ReadFile(filepath.Join(dir, "calls.yaml"))
		mcpOnly := filepath.Join(dir, "mcp.yaml")
		Expect(os.WriteFile(mcpOnly, all[:strings.Index(string(all), "- name: plain-command")], 0o644)).To(Succeed())
		h := http.Header{}
		h.Set("Authorization", "Bearer y")
		calls, err = record.LoadCalls(mcpOnly, record.Call{HTTP: &record.HTTPCall{Method: "GET", URL: "https://mcp.example/v2", Header: h}})
		Expect(err).NotTo(HaveOccurred())
		Expect(calls[0].MCP.URL).To(Equal("https://mcp.example/v2"))
		Expect(calls[0].MCP.Header.Get("Authorization")).To(Equal("Bearer y"))
		Expect(calls[2].MCP.Header).To(Equal(http.Header{"Authorization": {"Bearer x"}}), "the command line's headers go to its own server only")
	})
})
