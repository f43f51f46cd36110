package record

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/redact"
)

// The recorder's redaction of descriptive fields (URLs, headers, argv);
// with NoRedact they pass through as they are.

func (rec *recorder) redactURL(u string) (string, []redact.Redaction) {
	if rec.opts.NoRedact {
		return u, nil
	}
	return rec.opts.Redactor.URL(u)
}

func (rec *recorder) redactHeader(h http.Header, where string) (map[string]string, []redact.Redaction) {
	if rec.opts.NoRedact {
		out := map[string]string{}
		for k, v := range h {
			out[k] = strings.Join(v, ", ")
		}
		if len(out) == 0 {
			return nil, nil
		}
		return out, nil
	}
	return rec.opts.Redactor.Header(h, where)
}

// redactResponseHeader is h as a sidecar's response_headers: every value
// of every name, in order, each through Redactor.HeaderValue (Set-Cookie's
// cookie value, a secret header name's whole value, and what Redactor.Text
// finds in any other: the secret parameters of a Location, Link or Refresh
// URL, a token in a custom header). One redaction per name changed. The
// gate still judged the headers as received.
func (rec *recorder) redactResponseHeader(h http.Header) (map[string]fixture.HeaderValues, []redact.Redaction) {
	if len(h) == 0 {
		return nil, nil
	}
	if rec.opts.NoRedact {
		return fixture.HeaderMeta(h), nil
	}
	out := make(map[string]fixture.HeaderValues, len(h))
	var found []redact.Redaction
	for _, k := range slices.Sorted(maps.Keys(h)) {
		changed := false
		for _, v := range h[k] {
			value, c := rec.opts.Redactor.HeaderValue(k, v)
			changed = changed || c
			out[k] = append(out[k], value)
		}
		if changed {
			found = append(found, redact.Redaction{Where: redact.RedactedResponseHeader, Name: k})
		}
	}
	return out, found
}

func (rec *recorder) redactArgv(argv []string) ([]string, []redact.Redaction) {
	if rec.opts.NoRedact {
		return argv, nil
	}
	return rec.opts.Redactor.Argv(argv)
}

// fetchHTTP sends one HTTP request and reads the whole response. A
// transport failure, a timeout, a body cut short or one past MaxBytes is an
// ErrUpstream and nothing is recorded.
func (rec *recorder) fetchHTTP(ctx context.Context, c *HTTPCall) (*capture, error) {
	method := c.Method
	if method == "" {
		method = http.MethodGet
	}
	source, redacted := rec.redactURL(c.URL)
	what := method + " " + source
	var reqBody io.Reader
	if c.Body != nil {
		reqBody = bytes.NewReader(c.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL, reqBody)
	if err != nil {
		return nil, &gate.ConfigError{File: "record", Msg: fmt.Sprintf("%s: %v", what, err)}
	}
	if c.Header != nil {
		req.Header = c.Header.Clone()
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "github.com/airlockdev/airlock/"+gate.Version)
	}
	if c.Gzip {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	client := &http.Client{
		// DisableCompression: never ask for gzip behind the caller's back and
		// never inflate, so the body is what the upstream sent.
		Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, DisableCompression: true},
	}
	if !c.FollowRedirects {
		client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	defer client.CloseIdleConnections()

	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its message repeats the URL with its secrets
		}
		return nil, upstreamErr(ctx, rec.opts.Timeout, what, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, rec.opts.MaxBytes+1))
	if err != nil {
		return nil, upstreamErr(ctx, rec.opts.Timeout, what+": reading the body after "+fmt.Sprint(len(body))+" bytes", err)
	}
	if int64(len(body)) > rec.opts.MaxBytes {
		return nil, fmt.Errorf("%w: %s: the body is longer than %d bytes (--max-bytes); nothing recorded", ErrUpstream, what, rec.opts.MaxBytes)
	}
	got := &capture{
		status:          resp.StatusCode,
		contentType:     resp.Header.Get("Content-Type"),
		contentEncoding: resp.Header.Get("Content-Encoding"),
		body:            body,
		received:        time.Now(),
		redacted:        redacted,
	}
	got.duration = got.received.Sub(start)
	got.source = what
	if final := resp.Request.URL.String(); c.FollowRedirects && final != req.URL.String() {
		red, _ := rec.redactURL(final)
		got.source += " (redirected to " + red + ")"
	}
	var found []redact.Redaction
	got.reqHeader, found = rec.redactHeader(req.Header, redact.RedactedHeader)
	got.redacted = append(got.redacted, found...)
	got.header = resp.Header
	got.respHeader, found = rec.redactResponseHeader(resp.Header)
	got.redacted = append(got.redacted, found...)
	return got, nil
}
