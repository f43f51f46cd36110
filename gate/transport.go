package gate

import (
	"compress/gzip"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/airlockdev/airlock/internal/sanitize"
)

// Response is one raw upstream result as the adapter received it.
type Response struct {
	// Status is the HTTP status code; 0 means the upstream has none (a
	// command, a file) and counts as 200.
	Status int
	// ContentType is the Content-Type header value; "" means missing, which
	// the content-type allowlist refuses.
	ContentType string
	// ContentEncoding is the Content-Encoding header value: "" or "identity"
	// for a plain body, "gzip" for a gzip body (limited after inflation).
	// Anything else is refused with transport.encoding.
	ContentEncoding string
	// Body is read once, up to the byte limit plus one byte; nil is an empty
	// body. The gate does not close it.
	Body io.Reader
	// Header is the response's header fields by canonical name (as
	// net/http gives them; nil is none). The transport stage reads only
	// the status policy's (RateLimitHeaders) and Retry-After (RFC 9110
	// §10.2.3); ContentType and ContentEncoding above are what it judges,
	// not their copies here. Header values never reach the agent or the
	// audit record.
	Header http.Header
	// Source names where the response came from, for the audit record only
	// (a URL, a command, a file). Secrets in it are redacted (see
	// AuditRecord.Source); "" records none.
	Source string
}

// DefaultContentTypes is the content-type allowlist used when a contract
// names none: application/json and any application/*+json (RFC 6839 §3.1).
var DefaultContentTypes = []string{"application/json", "application/*+json"}

// transport runs the transport stage: status, byte limit, empty body,
// content type and sniff, in that order. It returns the decoded body.
//
// A non-success status is refused with transport.status (or
// transport.not_modified); its body is still read within the limit, and
// decoded (gzip) when an error shape of u takes the status, so that the
// error path can parse it.
func (c *Contract) transport(resp Response, u *upstream) ([]byte, *refusal) {
	status := resp.Status
	if status == 0 {
		status = 200
	}
	if status < 200 || status > 299 {
		o, rule := c.statusOutcome(status, resp.Header)
		r := &refusal{reason: ReasonStatus, offset: -1, message: fmt.Sprintf("upstream status %d (%s)", status, rule)}
		if status == 304 {
			r.reason = ReasonNotModified
			r.message = fmt.Sprintf("upstream status 304 Not Modified: a conditional request's answer, with no representation to admit (%s)", rule)
		}
		r.code, r.retryable = o.ErrorCode, o.Retryable
		r.setCode = true
		// The body is still read, within the limit and not decoded, so the
		// audit record holds its size and SHA-256 for the operator.
		encoding := "identity"
		if u != nil && u.errorCandidates(status, false) {
			encoding = resp.ContentEncoding
		}
		body, _ := readBody(resp.Body, encoding, c.limits.MaxBytes)
		return body, r
	}

	body, r := readBody(resp.Body, resp.ContentEncoding, c.limits.MaxBytes)
	if r != nil {
		return body, r
	}
	if len(body) == 0 || isJSONSpace(body) {
		return body, &refusal{reason: ReasonEmptyBody, offset: 0, message: fmt.Sprintf("success status with %d bytes of body and no value", len(body))}
	}
	if msg, ok := c.allowedContentType(resp.ContentType); !ok {
		return body, &refusal{reason: ReasonContentType, offset: -1, message: msg}
	}
	for i, b := range body {
		if b == ' ' || b == '\t' || b == '\r' || b == '\n' {
			continue
		}
		if b == '<' {
			return body, &refusal{reason: ReasonNotJSON, offset: int64(i), message: "body starts with \"<\": an HTML or XML document, not JSON"}
		}
		break
	}
	return body, nil
}

func isJSONSpace(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// allowedContentType checks a Content-Type value against the contract's
// allowlist. An entry "type/*+suffix" matches any subtype with that
// structured-syntax suffix; parameters (charset) are ignored except that a
// charset other than utf-8 is refused (RFC 8259 §8.1).
func (c *Contract) allowedContentType(value string) (string, bool) {
	if strings.TrimSpace(value) == "" {
		return "no Content-Type", false
	}
	mt, params, err := mime.ParseMediaType(value)
	if err != nil {
		return fmt.Sprintf("unparsable Content-Type %q", sanitize.Text(value, 128, sanitize.Escape)), false
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return fmt.Sprintf("Content-Type charset %q is not utf-8", sanitize.Text(cs, 64, sanitize.Escape)), false
	}
	for _, allowed := range c.contentTypes {
		if mt == allowed {
			return "", true
		}
		if typ, rest, ok := strings.Cut(allowed, "/*+"); ok {
			if strings.HasPrefix(mt, typ+"/") && strings.HasSuffix(mt, "+"+rest) && len(mt) > len(typ)+2+len(rest) {
				return "", true
			}
		}
	}
	return fmt.Sprintf("Content-Type %q is not in the allowlist %v", mt, c.contentTypes), false
}

// upstreamReader remembers an error of the underlying reader, so that a
// broken connection (transport.read_error) is told apart from a corrupt
// gzip stream (transport.encoding).
type upstreamReader struct {
	r   io.Reader
	err error
}

func (u *upstreamReader) Read(p []byte) (int, error) {
	n, err := u.r.Read(p)
	if err != nil && err != io.EOF {
		u.err = err
	}
	return n, err
}

// readBody reads at most limit+1 decoded bytes. The body's buffer never
// holds more than limit+1 bytes; while it grows, the old and the new buffer
// together stay below 1.5 × (limit+1) bytes.
func readBody(body io.Reader, encoding string, limit int64) ([]byte, *refusal) {
	if body == nil {
		return nil, nil
	}
	up := &upstreamReader{r: body}
	var src io.Reader = up
	sizeHint := 512
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "", "identity":
		if l, ok := body.(interface{ Len() int }); ok {
			sizeHint = int(min(int64(l.Len()), limit)) + 1
		}
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(up)
		if err != nil {
			if up.err != nil {
				return nil, &refusal{reason: ReasonReadError, offset: -1, message: up.err.Error()}
			}
			return nil, &refusal{reason: ReasonEncoding, offset: -1, message: err.Error()}
		}
		defer zr.Close()
		src = zr
	default:
		// Read as is (within the limit) for the audit record, then refuse.
		raw, _ := readBody(body, "identity", limit)
		return raw, &refusal{reason: ReasonEncoding, offset: -1, message: fmt.Sprintf("unsupported Content-Encoding %q", sanitize.Text(encoding, 64, sanitize.Escape))}
	}
	lr := &io.LimitedReader{R: src, N: limit + 1}
	buf := make([]byte, 0, sizeHint)
	for {
		if len(buf) == cap(buf) {
			if lr.N == 0 {
				break
			}
			// Double, but never past limit+1, and with the exact capacity
			// asked for: the old buffer and the new one are the only
			// live copies, so reading an oversize body peaks below
			// 1.5 × (limit+1) bytes (a reader that tells its length,
			// Len(), is read into limit+1 bytes allocated once).
			// A doubling that would leave less than another doubling to
			// the end goes to the end at once, so the last buffer is not
			// followed by one a byte larger.
			want := 2 * int64(cap(buf))
			if end := int64(len(buf)) + lr.N; want >= end || 2*want > end {
				want = end
			}
			next := make([]byte, len(buf), want)
			copy(next, buf)
			buf = next
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			if up.err != nil || src == io.Reader(up) {
				return buf, &refusal{reason: ReasonReadError, offset: int64(len(buf)), message: err.Error()}
			}
			return buf, &refusal{reason: ReasonEncoding, offset: int64(len(buf)), message: err.Error()}
		}
	}
	if int64(len(buf)) > limit {
		return buf, &refusal{reason: ReasonTooLarge, offset: limit, message: fmt.Sprintf("body exceeds the limit of %d bytes", limit)}
	}
	return buf, nil
}
