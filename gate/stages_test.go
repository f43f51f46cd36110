package gate_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/airlockdev/airlock/internal/introspect"
	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/redact"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/semantic"
)

// The probe contract exercises every stage: its schema has one property per
// keyword under test, its rules one of each built-in kind plus a custom Go
// rule, and its projection a wildcard and an optional path.
const probeManifest = `# probe: a contract built by the specs
tool: probe
version: "3.1.0"
current: v1
agent_schema: agent.schema.json
limits:
  max_bytes: 2048
  max_depth: 6
  max_number_length: 40
  max_string_length: 64
upstream_versions:
  v1:
    schema: upstream.schema.json
    projection:
      id: /id
      state: /status
      amount: /amount
      big: /big
      names: /items/*/name
      label: /label
      first_tag: /tags/0
    rules:
      - name: request_binding
        binding: {pointer: /request_id}
      - name: project_match
        context: {pointer: /project_id, key: project}
      - name: fresh
        freshness: {pointer: /updated_at, max_age: 1h, max_skew: 30s}
      - name: run_member
        membership: {pointer: /run_id, key: runs}
      - name: even_count
        custom: even
  v0:
    description: no rules; the envelope's request id is still the adapter's
    schema: upstream.schema.json
    projection:
      id: /id
      state: /status
      names: /items/*/name
  broken:
    description: projects a path the upstream never sends
    schema: upstream.schema.json
    projection:
      id: /id
      state: /state
      names: /items/*/name
`

const probeUpstreamSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "additionalProperties": false,
  "required": ["request_id", "project_id", "id", "status", "kind", "updated_at", "run_id", "count", "items"],
  "properties": {
    "request_id": {"type": "string"},
    "project_id": {"type": "string"},
    "id": {"type": "string", "pattern": "^P-[0-9]+$"},
    "status": {"enum": ["open", "closed"]},
    "kind": {"const": "probe"},
    "updated_at": {"type": "string", "format": "date-time"},
    "run_id": {"type": "string"},
    "count": {"type": "integer"},
    "amount": {"type": "number"},
    "big": {"type": "integer"},
    "note": {"type": "string", "maxLength": 5},
    "label": {"type": "string"},
    "tags": {"type": "array", "items": {"type": "string"}},
    "items": {
      "type": "array",
      "items": {"type": "object", "additionalProperties": false, "properties": {"name": {"type": "string"}}}
    },
    "choice": {"oneOf": [{"type": "integer"}, {"minimum": 0}]},
    "nest": true
  }
}
`

const probeAgentSchema = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["id", "state", "names"],
  "properties": {
    "id": {"type": "string"},
    "state": {"enum": ["open", "closed"]},
    "amount": {"type": "number"},
    "big": {"type": "integer"},
    "names": {"type": "array", "items": {"type": "string"}},
    "label": {"type": "string", "maxLength": 40},
    "first_tag": {"type": "string"}
  }
}
`

const (
	probeReqID = "req-00000001"
	// probeOK is the agent output of the base body.
	probeOK = `{"tool":"probe","request_id":"req-00000001","outcome":"success","data":{"id":"P-7","names":["x","y"],"state":"open"}}`
)

var probeNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func probeCall() gate.Call {
	return gate.Call{
		Request: semantic.Request{ID: probeReqID, Context: map[string]any{"project": "proj-a", "runs": "run_a,run_b"}},
		Now:     probeNow,
	}
}

// member is one member of a body, its value as raw JSON text.
type bodyMember struct{ name, raw string }

// baseMembers make a body the probe contract admits (v1, at probeNow).
var baseMembers = []bodyMember{
	{"request_id", `"req-00000001"`},
	{"project_id", `"proj-a"`},
	{"id", `"P-7"`},
	{"status", `"open"`},
	{"kind", `"probe"`},
	{"updated_at", `"2025-06-01T11:30:00Z"`},
	{"run_id", `"run_b"`},
	{"count", `2`},
	{"items", `[{"name":"x"},{"name":"y"}]`},
}

type bodyMod func([]bodyMember) []bodyMember

// set replaces a member's raw value, or appends the member.
func withMember(name, raw string) bodyMod {
	return func(ms []bodyMember) []bodyMember {
		for i := range ms {
			if ms[i].name == name {
				ms[i].raw = raw
				return ms
			}
		}
		return append(ms, bodyMember{name, raw})
	}
}

func withoutMember(name string) bodyMod {
	return func(ms []bodyMember) []bodyMember {
		out := ms[:0]
		for _, m := range ms {
			if m.name != name {
				out = append(out, m)
			}
		}
		return out
	}
}

// body renders the base members with mods applied, compactly.
func probeBody(mods ...bodyMod) string {
	ms := append([]bodyMember(nil), baseMembers...)
	for _, m := range mods {
		ms = m(ms)
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%s", m.name, m.raw)
	}
	b.WriteByte('}')
	return b.String()
}

// success is the probe's success envelope around data (canonical JSON).
func probeSuccess(data string) string {
	return `{"tool":"probe","request_id":"req-00000001","outcome":"success","data":` + data + `}`
}

// failureBytes spells the failure envelope independently of gate.FailureEnvelope.
func failureBytes(tool, requestID string, code gate.ErrorCode, retryable bool) string {
	return fmt.Sprintf(`{"tool":%q,"request_id":%q,"outcome":"failure","error":{"code":%q,"retryable":%t}}`, tool, requestID, code, retryable)
}

func jsonResp(b string) gate.Response {
	return gate.Response{Status: 200, ContentType: "application/json", Body: strings.NewReader(b)}
}

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write(b)
	Expect(err).NotTo(HaveOccurred())
	Expect(zw.Close()).To(Succeed())
	return buf.Bytes()
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// ruleFunc is a custom Go rule for gate.Options.CustomRules.
type ruleFunc struct {
	name  string
	check func(semantic.Input) *semantic.Violation
}

func (r ruleFunc) Name() string                                { return r.name }
func (r ruleFunc) Check(in semantic.Input) *semantic.Violation { return r.check(in) }

// Messages the custom rule returns for particular counts, to test the audit
// record's sanitising.
var (
	longMessage  = strings.Repeat("0123456789", 300)
	exactMessage = strings.Repeat("m", gate.MaxAuditMessage)
	ansiMessage  = "\x1b[31mred\x1b[0m\nnext\tline\x00\x7f\u0085\u2028 \xff done"
)

// evenRule refuses an odd /count.
var evenRule = ruleFunc{name: "even", check: func(in semantic.Input) *semantic.Violation {
	n, _ := jsonpointer.Pointer{"count"}.Lookup(in.Value)
	msg := "count is odd"
	switch n {
	case json.Number("7"):
		msg = longMessage
	case json.Number("9"):
		msg = ansiMessage
	case json.Number("11"):
		msg = exactMessage
	}
	if num, ok := n.(json.Number); ok {
		if i, err := num.Int64(); err == nil && i%2 == 0 {
			return nil
		}
	}
	return &semantic.Violation{Pointer: "/count", Message: msg}
}}

var probeOptions = gate.Options{CustomRules: map[string]semantic.Rule{"even": evenRule}}

// writeContract writes files into root/tool and returns the directory.
func writeContract(root, tool string, files map[string]string) string {
	dir := filepath.Join(root, tool)
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	for name, content := range files {
		Expect(os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)).To(Succeed())
	}
	return dir
}

func probeFiles(manifest string) map[string]string {
	return map[string]string{
		"contract.yaml":        manifest,
		"upstream.schema.json": probeUpstreamSchema,
		"agent.schema.json":    probeAgentSchema,
	}
}

// loadProbe builds the probe contract in a fresh temporary directory.
func loadProbe() *gate.Contract {
	dir := writeContract(GinkgoT().TempDir(), "probe", probeFiles(probeManifest))
	c, err := gate.LoadDir(dir, probeOptions)
	Expect(err).NotTo(HaveOccurred())
	return c
}

func runCheck(c *gate.Contract, resp gate.Response, call gate.Call) *gate.Verdict {
	v, err := c.Check(context.Background(), resp, call)
	Expect(err).NotTo(HaveOccurred())
	Expect(v).NotTo(BeNil())
	return v
}

// expectRefused asserts the reason, its stage, the failure envelope's bytes
// and the audit record's outcome.
func expectRefused(v *gate.Verdict, tool, reason string, code gate.ErrorCode, retryable bool) {
	GinkgoHelper()
	Expect(v.Reason).To(Equal(reason), "audit: %s", v.Audit.JSON())
	Expect(v.Admitted).To(BeFalse())
	stage, _, _ := strings.Cut(reason, ".")
	Expect(v.Stage).To(Equal(gate.Stage(stage)))
	Expect(v.ErrorCode).To(Equal(code))
	Expect(v.Retryable).To(Equal(retryable))
	Expect(string(v.Output)).To(Equal(failureBytes(tool, probeReqID, code, retryable)))
	Expect(v.Audit.Outcome).To(Equal("failure"))
	Expect(v.Audit.Reason).To(Equal(reason))
	Expect(v.Audit.Stage).To(Equal(gate.Stage(stage)))
}

func expectAdmitted(v *gate.Verdict, output string) {
	GinkgoHelper()
	Expect(v.Reason).To(BeEmpty(), "audit: %s", v.Audit.JSON())
	Expect(v.Admitted).To(BeTrue())
	Expect(v.Stage).To(BeEmpty())
	Expect(v.ErrorCode).To(BeEmpty())
	Expect(v.Retryable).To(BeFalse())
	Expect(string(v.Output)).To(Equal(output))
	Expect(v.Audit.Outcome).To(Equal("success"))
}

// errReader returns its bytes, then err.
type errReader struct {
	data []byte
	err  error
}

func (r *errReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

var errReset = errors.New("connection reset by peer")

var _ = Describe("the gate's stages", func() {
	var c *gate.Contract
	BeforeEach(func() { c = loadProbe() })

	check := func(resp gate.Response) *gate.Verdict { return runCheck(c, resp, probeCall()) }
	checkBody := func(b string) *gate.Verdict { return check(jsonResp(b)) }

	It("admits the base body with the exact agent output", func() {
		expectAdmitted(checkBody(probeBody()), probeOK)
	})

	Describe("transport", func() {
		DescribeTable("transport.status maps the upstream status",
			func(status int, code gate.ErrorCode, retryable bool) {
				resp := jsonResp(probeBody())
				resp.Status = status
				expectRefused(check(resp), "probe", gate.ReasonStatus, code, retryable)
			},
			Entry("404 is NOT_FOUND, not retryable", 404, gate.NotFound, false),
			Entry("503 is UPSTREAM_UNAVAILABLE, retryable", 503, gate.UpstreamUnavailable, true),
			Entry("500", 500, gate.UpstreamUnavailable, true),
			Entry("502", 502, gate.UpstreamUnavailable, true),
			Entry("599", 599, gate.UpstreamUnavailable, true),
			Entry("429 is UPSTREAM_UNAVAILABLE, retryable", 429, gate.UpstreamUnavailable, true),
			Entry("408", 408, gate.UpstreamUnavailable, true),
			Entry("302 is INVALID_RESPONSE", 302, gate.InvalidResponse, false),
			Entry("400", 400, gate.InvalidResponse, false),
			Entry("401", 401, gate.InvalidResponse, false),
			Entry("403", 403, gate.InvalidResponse, false),
			Entry("410", 410, gate.InvalidResponse, false),
			Entry("100", 100, gate.InvalidResponse, false),
			Entry("199", 199, gate.InvalidResponse, false),
			Entry("300", 300, gate.InvalidResponse, false),
			Entry("negative", -1, gate.InvalidResponse, false),
		)

		It("reads the body of a refused status only for the audit record, within the limit", func() {
			body := probeBody()
			r := &countingReader{r: strings.NewReader(body)}
			resp := gate.Response{Status: 503, ContentType: "application/json", Body: r}
			v := check(resp)
			expectRefused(v, "probe", gate.ReasonStatus, gate.UpstreamUnavailable, true)
			Expect(r.n).To(BeNumerically("==", len(body)))
			Expect(v.Audit.Size).To(BeNumerically("==", len(body)))
			sum := sha256.Sum256([]byte(body))
			Expect(v.Audit.SHA256).To(Equal(hex.EncodeToString(sum[:])))
		})

		DescribeTable("admits every 2xx status and status 0 (no status)",
			func(status int) {
				resp := jsonResp(probeBody())
				resp.Status = status
				expectAdmitted(check(resp), probeOK)
			},
			Entry("0", 0), Entry("200", 200), Entry("201", 201), Entry("203", 203), Entry("299", 299),
		)

		Describe("transport.too_large", func() {
			limit := 2048
			padded := func(n int) string {
				b := probeBody()
				return b + strings.Repeat(" ", n-len(b))
			}

			It("admits a body of exactly max_bytes", func() {
				v := checkBody(padded(limit))
				expectAdmitted(v, probeOK)
				Expect(v.Audit.Size).To(Equal(int64(limit)))
			})

			It("refuses a body of max_bytes+1, having read max_bytes+1 bytes", func() {
				v := checkBody(padded(limit + 1))
				expectRefused(v, "probe", gate.ReasonTooLarge, gate.InvalidResponse, false)
				Expect(v.Audit.Size).To(Equal(int64(limit + 1)))
				Expect(v.Audit.Offset).To(Equal(int64(limit)))
			})

			It("counts the same through a reader without a length", func() {
				resp := jsonResp("")
				resp.Body = io.MultiReader(strings.NewReader(padded(limit)))
				expectAdmitted(check(resp), probeOK)
				cr := &countingReader{r: strings.NewReader(padded(limit + 1000))}
				resp.Body = cr
				expectRefused(check(resp), "probe", gate.ReasonTooLarge, gate.InvalidResponse, false)
				Expect(cr.n).To(Equal(int64(limit + 1)))
			})

			It("limits a gzip body after inflation", func() {
				resp := jsonResp("")
				resp.ContentEncoding = "gzip"
				resp.Body = bytes.NewReader(gzipBytes([]byte(padded(limit))))
				v := check(resp)
				expectAdmitted(v, probeOK)
				Expect(v.Audit.Size).To(Equal(int64(limit)))
				Expect(v.Audit.SHA256).To(Equal(sha256Hex([]byte(padded(limit)))), "the audit hashes the decoded body")

				small := gzipBytes([]byte(padded(limit + 1)))
				Expect(len(small)).To(BeNumerically("<", limit), "the compressed body is under the limit")
				resp.Body = bytes.NewReader(small)
				expectRefused(check(resp), "probe", gate.ReasonTooLarge, gate.InvalidResponse, false)
			})
		})

		DescribeTable("transport.encoding refuses what it cannot decode",
			func(encoding string, raw []byte) {
				resp := gate.Response{Status: 200, ContentType: "application/json", ContentEncoding: encoding, Body: bytes.NewReader(raw)}
				expectRefused(check(resp), "probe", gate.ReasonEncoding, gate.InvalidResponse, false)
			},
			Entry("br", "br", []byte(probeBody())),
			Entry("deflate", "deflate", []byte(probeBody())),
			Entry("compress", "compress", []byte(probeBody())),
			Entry("gzip, br (a list)", "gzip, br", gzipBytes([]byte(probeBody()))),
			Entry("gzip of plain text", "gzip", []byte(probeBody())),
			Entry("gzip with a corrupt stream", "gzip", func() []byte {
				z := gzipBytes([]byte(probeBody()))
				for i := 12; i < len(z)-8; i++ {
					z[i] ^= 0x5a
				}
				return z
			}()),
			Entry("gzip cut short", "gzip", func() []byte {
				z := gzipBytes([]byte(probeBody()))
				return z[:len(z)-6]
			}()),
			Entry("gzip with a wrong checksum", "gzip", func() []byte {
				z := gzipBytes([]byte(probeBody()))
				z[len(z)-8] ^= 0xff
				return z
			}()),
			Entry("gzip header only", "gzip", []byte{0x1f, 0x8b}),
		)

		DescribeTable("admits identity and gzip in any spelling",
			func(encoding string, gz bool) {
				raw := []byte(probeBody())
				if gz {
					raw = gzipBytes(raw)
				}
				resp := gate.Response{Status: 200, ContentType: "application/json", ContentEncoding: encoding, Body: bytes.NewReader(raw)}
				expectAdmitted(check(resp), probeOK)
			},
			Entry("empty", "", false),
			Entry("identity", "identity", false),
			Entry("Identity", " Identity ", false),
			Entry("gzip", "gzip", true),
			Entry("GZIP", "GZIP", true),
			Entry("x-gzip", "x-gzip", true),
		)

		DescribeTable("transport.read_error when the upstream fails midway",
			func(encoding string, raw []byte) {
				resp := gate.Response{Status: 200, ContentType: "application/json", ContentEncoding: encoding, Body: &errReader{data: raw, err: errReset}}
				v := check(resp)
				expectRefused(v, "probe", gate.ReasonReadError, gate.UpstreamUnavailable, true)
				Expect(v.Audit.Message).To(Equal("connection reset by peer"))
			},
			Entry("after half the body", "", []byte(probeBody()[:40])),
			Entry("before any byte", "", nil),
			Entry("inside a gzip stream", "gzip", gzipBytes([]byte(probeBody()))[:30]),
			Entry("inside the gzip header", "gzip", []byte{0x1f, 0x8b, 8}),
		)

		It("refuses a read error even after a complete value", func() {
			resp := gate.Response{Status: 200, ContentType: "application/json", Body: &errReader{data: []byte(probeBody()), err: io.ErrUnexpectedEOF}}
			expectRefused(check(resp), "probe", gate.ReasonReadError, gate.UpstreamUnavailable, true)
		})

		DescribeTable("transport.empty_body",
			func(resp gate.Response) {
				expectRefused(check(resp), "probe", gate.ReasonEmptyBody, gate.UpstreamUnavailable, true)
			},
			Entry("no body", gate.Response{Status: 200, ContentType: "application/json"}),
			Entry("0 bytes", jsonResp("")),
			Entry("whitespace only", jsonResp(" \t\r\n  \n")),
			Entry("0 bytes without a content type (empty wins)", gate.Response{Status: 200, Body: strings.NewReader("")}),
			Entry("0 bytes with HTML content type", gate.Response{Status: 200, ContentType: "text/html", Body: strings.NewReader("")}),
			Entry("gzip of nothing", gate.Response{Status: 200, ContentType: "application/json", ContentEncoding: "gzip", Body: bytes.NewReader(gzipBytes(nil))}),
			Entry("204 with no body", gate.Response{Status: 204, ContentType: "application/json"}),
		)

		DescribeTable("transport.content_type",
			func(ct string) {
				resp := jsonResp(probeBody())
				resp.ContentType = ct
				expectRefused(check(resp), "probe", gate.ReasonContentType, gate.InvalidResponse, false)
			},
			Entry("missing", ""),
			Entry("blank", "  "),
			Entry("text/html", "text/html"),
			Entry("text/html with utf-8", "text/html; charset=utf-8"),
			Entry("text/plain", "text/plain"),
			Entry("text/json", "text/json"),
			Entry("charset=latin1", "application/json; charset=latin1"),
			Entry("charset=iso-8859-1", "application/json; charset=iso-8859-1"),
			Entry("charset=utf-16", "application/json; charset=utf-16"),
			Entry("application/json-seq", "application/json-seq"),
			Entry("application/x-json", "application/x-json"),
			Entry("a +json suffix without subtype", "application/+json"),
			Entry("a +json suffix in another top-level type", "text/foo+json"),
			Entry("+jsonx", "application/foo+jsonx"),
			Entry("unparsable", "application/json; =x"),
			Entry("a bare type", "application"),
			Entry("with control characters", "application/json\x1b[2J"),
		)

		DescribeTable("admits JSON content types by default",
			func(ct string) {
				resp := jsonResp(probeBody())
				resp.ContentType = ct
				expectAdmitted(check(resp), probeOK)
			},
			Entry("application/json", "application/json"),
			Entry("upper case", "Application/JSON"),
			Entry("charset=utf-8", "application/json; charset=utf-8"),
			Entry("charset=UTF-8 quoted", `application/json; charset="UTF-8"`),
			Entry("application/problem+json", "application/problem+json"),
			Entry("application/vnd.api+json", "application/vnd.api+json"),
			Entry("with another parameter", "application/json; profile=x"),
		)

		DescribeTable("transport.not_json sniffs HTML and XML whatever the header says",
			func(ct, b string, reason string) {
				resp := jsonResp(b)
				resp.ContentType = ct
				expectRefused(check(resp), "probe", reason, gate.InvalidResponse, false)
			},
			Entry("HTML with a JSON content type", "application/json", "<!DOCTYPE html><html><body>502 Bad Gateway</body></html>", gate.ReasonNotJSON),
			Entry("HTML after whitespace", "application/json", "\r\n  \t<html></html>", gate.ReasonNotJSON),
			Entry("XML", "application/json", `<?xml version="1.0"?><error>nope</error>`, gate.ReasonNotJSON),
			Entry("XML with a +json type", "application/problem+json", `<error/>`, gate.ReasonNotJSON),
			Entry("HTML with an HTML content type is a content_type refusal first", "text/html", "<html></html>", gate.ReasonContentType),
		)

		It("records the not_json offset", func() {
			v := checkBody("  \n<html>")
			expectRefused(v, "probe", gate.ReasonNotJSON, gate.InvalidResponse, false)
			Expect(v.Audit.Offset).To(Equal(int64(3)))
		})
	})

	Describe("parse", func() {
		DescribeTable("refuses with the exact reason",
			func(b string, reason string) {
				code, retry := gate.InvalidResponse, false
				if reason == gate.ReasonTruncated {
					code, retry = gate.UpstreamUnavailable, true
				}
				expectRefused(checkBody(b), "probe", reason, code, retry)
			},
			Entry("syntax: missing value", `{"a":}`, gate.ReasonSyntax),
			Entry("syntax: missing colon", `{"a" 1}`, gate.ReasonSyntax),
			Entry("syntax: trailing comma in an object", `{"a":1,}`, gate.ReasonSyntax),
			Entry("syntax: trailing comma in an array", `[1,]`, gate.ReasonSyntax),
			Entry("syntax: single quotes", `{'a':1}`, gate.ReasonSyntax),
			Entry("syntax: a number member name", `{1:2}`, gate.ReasonSyntax),
			Entry("syntax: unquoted name", `{a:1}`, gate.ReasonSyntax),
			Entry("syntax: NaN", `{"a":NaN}`, gate.ReasonSyntax),
			Entry("syntax: Infinity", `[Infinity]`, gate.ReasonSyntax),
			Entry("syntax: hex number", `[0x10]`, gate.ReasonSyntax),
			Entry("syntax: plus sign", `[+1]`, gate.ReasonSyntax),
			Entry("syntax: bad escape", `["\x"]`, gate.ReasonSyntax),
			Entry("syntax: short unicode escape", `["\u00"]`, gate.ReasonSyntax),
			Entry("syntax: raw control character in a string", "[\"a\tb\"]", gate.ReasonSyntax),
			Entry("syntax: closing bracket first", `]`, gate.ReasonSyntax),
			Entry("syntax: mismatched brackets", `[1}`, gate.ReasonSyntax),
			Entry("syntax: comment", `{"a":1 /* c */}`, gate.ReasonSyntax),
			Entry("syntax: True", `[True]`, gate.ReasonSyntax),
			Entry("truncated: inside an object", `{"request_id":"req-0000`, gate.ReasonTruncated),
			Entry("truncated: after a member", `{"a":1`, gate.ReasonTruncated),
			Entry("truncated: after a comma", `{"a":1,`, gate.ReasonTruncated),
			Entry("truncated: inside an array", `[1,2`, gate.ReasonTruncated),
			Entry("truncated: inside a string", `"abc`, gate.ReasonTruncated),
			Entry("truncated: inside a literal", `[tru`, gate.ReasonTruncated),
			Entry("truncated: after a name", `{"a"`, gate.ReasonTruncated),
			Entry("truncated: the base body minus its last byte", strings.TrimSuffix(probeBody(), "}"), gate.ReasonTruncated),
			Entry("duplicate_member", `{"a":1,"a":2}`, gate.ReasonDuplicate),
			Entry(`duplicate_member spelled with \u0061`, `{"a":1,"\u0061":2}`, gate.ReasonDuplicate),
			Entry(`duplicate_member spelled with \/`, `{"a/b":1,"a\/b":2}`, gate.ReasonDuplicate),
			Entry("duplicate_member nested", `{"x":{"y":[{"b":1,"b":1}]}}`, gate.ReasonDuplicate),
			Entry("duplicate_member with equal values", `{"a":null,"a":null}`, gate.ReasonDuplicate),
			Entry("duplicate_member: request_id twice", strings.Replace(probeBody(), `"project_id"`, `"request_id":"req-00000001","project_id"`, 1), gate.ReasonDuplicate),
			Entry("invalid_utf8: a stray continuation byte", "{\"a\":\"\x80\"}", gate.ReasonInvalidUTF8),
			Entry("invalid_utf8: 0xff", "[\"\xff\"]", gate.ReasonInvalidUTF8),
			Entry("invalid_utf8: overlong slash", "[\"\xc0\xaf\"]", gate.ReasonInvalidUTF8),
			Entry("invalid_utf8: UTF-8-encoded surrogate", "[\"\xed\xa0\x80\"]", gate.ReasonInvalidUTF8),
			Entry("invalid_utf8: cut multi-byte sequence", "[\"\xe2\x82\"]", gate.ReasonInvalidUTF8),
			Entry("invalid_utf8: in a member name", "{\"\xfe\":1}", gate.ReasonInvalidUTF8),
			Entry("invalid_utf8: beyond U+10FFFF", "[\"\xf4\x90\x80\x80\"]", gate.ReasonInvalidUTF8),
			Entry(`lone_surrogate: \ud800`, `["\ud800"]`, gate.ReasonLoneSurrogate),
			Entry(`lone_surrogate: \uDBFF`, `["\uDBFF"]`, gate.ReasonLoneSurrogate),
			Entry(`lone_surrogate: low half \udc00`, `["\udc00"]`, gate.ReasonLoneSurrogate),
			Entry("lone_surrogate: high then a letter", `["\ud800x"]`, gate.ReasonLoneSurrogate),
			Entry("lone_surrogate: high then a non-surrogate escape", `["\ud800\u0041"]`, gate.ReasonLoneSurrogate),
			Entry("lone_surrogate: reversed pair", `["\udc00\ud800"]`, gate.ReasonLoneSurrogate),
			Entry("lone_surrogate: in a member name", `{"\ud800":1}`, gate.ReasonLoneSurrogate),
			Entry("bom: UTF-8", "\xef\xbb\xbf"+probeBody(), gate.ReasonBOM),
			Entry("bom: UTF-16 BE", "\xfe\xff"+probeBody(), gate.ReasonBOM),
			Entry("bom: UTF-16 LE", "\xff\xfe"+probeBody(), gate.ReasonBOM),
			Entry("bom: U+FEFF after whitespace is a syntax error", " \xef\xbb\xbf"+probeBody(), gate.ReasonSyntax),
			Entry("trailing_data: a letter", probeBody()+"x", gate.ReasonTrailingData),
			Entry("trailing_data: a second object", probeBody()+"{}", gate.ReasonTrailingData),
			Entry("trailing_data: a second value after space", probeBody()+" 1", gate.ReasonTrailingData),
			Entry("trailing_data: a closing bracket", probeBody()+"]", gate.ReasonTrailingData),
			Entry("trailing_data: a NUL byte", probeBody()+"\x00", gate.ReasonTrailingData),
			Entry("trailing_data: a second copy", probeBody()+"\n"+probeBody(), gate.ReasonTrailingData),
			Entry("depth: arrays one past the cap", probeBody(withMember("nest", `[[[[[[1]]]]]]`)), gate.ReasonDepth),
			Entry("depth: objects one past the cap", probeBody(withMember("nest", `{"a":{"a":{"a":{"a":{"a":{"a":1}}}}}}`)), gate.ReasonDepth),
			Entry("depth: an empty array one past the cap", probeBody(withMember("nest", `[[[[[[]]]]]]`)), gate.ReasonDepth),
			Entry("depth: a top-level array at the cap plus one", `[[[[[[[]]]]]]]`, gate.ReasonDepth),
			Entry("number: one byte past the length cap", probeBody(withMember("big", strings.Repeat("1", 41))), gate.ReasonNumber),
			Entry("number: a long fraction", probeBody(withMember("amount", "0."+strings.Repeat("1", 40))), gate.ReasonNumber),
			Entry("number: 1e400 overflows", probeBody(withMember("amount", "1e400")), gate.ReasonNumber),
			Entry("number: -1E+400 overflows", probeBody(withMember("amount", "-1E+400")), gate.ReasonNumber),
			Entry("number: 1e-400 underflows", probeBody(withMember("amount", "1e-400")), gate.ReasonNumber),
			Entry("number: -2.5e-400 underflows", probeBody(withMember("amount", "-2.5e-400")), gate.ReasonNumber),
			Entry("number: at top level", `1e999`, gate.ReasonNumber),
			Entry("string_too_long: 65 bytes", probeBody(withMember("label", `"`+strings.Repeat("a", 65)+`"`)), gate.ReasonStringTooLong),
			Entry("string_too_long: 22 euro signs (66 bytes)", probeBody(withMember("label", `"`+strings.Repeat("€", 22)+`"`)), gate.ReasonStringTooLong),
			Entry(`string_too_long: 33 \u00e9 escapes decode to 66 bytes`, probeBody(withMember("label", `"`+strings.Repeat(`\u00e9`, 33)+`"`)), gate.ReasonStringTooLong),
			Entry("string_too_long: a member name", probeBody(withMember(strings.Repeat("k", 65), "1")), gate.ReasonStringTooLong),
			Entry("string_too_long: in an array", `["`+strings.Repeat("a", 65)+`"]`, gate.ReasonStringTooLong),
		)

		It("reports parse offsets in the audit record", func() {
			v := checkBody(`{"a":1,"a":2}`)
			expectRefused(v, "probe", gate.ReasonDuplicate, gate.InvalidResponse, false)
			Expect(v.Audit.Offset).To(Equal(int64(7)))
			Expect(v.Audit.Message).To(ContainSubstring("duplicate"))
			Expect(v.Audit.KeywordLocation).To(BeEmpty())
		})

		DescribeTable("admits what the limits allow, with exact agent output",
			func(b, output string) { expectAdmitted(checkBody(b), output) },
			Entry("nesting exactly at the cap",
				probeBody(withMember("nest", `[[[[[1]]]]]`)), probeOK),
			Entry("objects exactly at the cap",
				probeBody(withMember("nest", `{"a":{"a":{"a":{"a":{"a":1}}}}}`)), probeOK),
			Entry("a number token exactly at the length cap keeps its digits",
				probeBody(withMember("big", strings.Repeat("9", 40))),
				probeSuccess(`{"big":`+strings.Repeat("9", 40)+`,"id":"P-7","names":["x","y"],"state":"open"}`)),
			Entry("numbers keep their exact text",
				probeBody(withMember("amount", "1.000000000000000000001"), withMember("big", "12345678901234567890123")),
				probeSuccess(`{"amount":1.000000000000000000001,"big":12345678901234567890123,"id":"P-7","names":["x","y"],"state":"open"}`)),
			Entry("an exponent keeps its spelling",
				probeBody(withMember("amount", "1E+2")), probeSuccess(`{"amount":1E+2,"id":"P-7","names":["x","y"],"state":"open"}`)),
			Entry("negative zero stays -0",
				probeBody(withMember("amount", "-0.0")), probeSuccess(`{"amount":-0.0,"id":"P-7","names":["x","y"],"state":"open"}`)),
			Entry("zero with a huge negative exponent is zero, not an underflow",
				probeBody(withMember("amount", "0e-400")), probeSuccess(`{"amount":0e-400,"id":"P-7","names":["x","y"],"state":"open"}`)),
			Entry("the largest binary64 magnitude",
				probeBody(withMember("amount", "1.7976931348623157e308")), probeSuccess(`{"amount":1.7976931348623157e308,"id":"P-7","names":["x","y"],"state":"open"}`)),
			Entry("a subnormal",
				probeBody(withMember("amount", "5e-324")), probeSuccess(`{"amount":5e-324,"id":"P-7","names":["x","y"],"state":"open"}`)),
			Entry("a string of exactly the cap",
				probeBody(withMember("label", `"`+strings.Repeat("a", 40)+`"`), withMember("note", `"12345"`), withMember("tags", `["`+strings.Repeat("t", 64)+`"]`)),
				probeSuccess(`{"first_tag":"`+strings.Repeat("t", 64)+`","id":"P-7","label":"`+strings.Repeat("a", 40)+`","names":["x","y"],"state":"open"}`)),
			Entry("a raw string longer than the cap that decodes within it",
				probeBody(withMember("label", `"`+strings.Repeat(`\u0041`, 20)+`"`)),
				probeSuccess(`{"id":"P-7","label":"AAAAAAAAAAAAAAAAAAAA","names":["x","y"],"state":"open"}`)),
			Entry(`32 \u00e9 escapes decode to exactly 64 bytes`,
				probeBody(withMember("tags", `["`+strings.Repeat(`\u00e9`, 32)+`"]`)),
				probeSuccess(`{"first_tag":"`+strings.Repeat("é", 32)+`","id":"P-7","names":["x","y"],"state":"open"}`)),
			Entry("a member name of exactly the cap (unprojected)",
				probeBody(withMember("nest", `{"`+strings.Repeat("k", 64)+`":1}`)), probeOK),
			// DEL, NUL, U+2028 and noncharacters are the text policy's to
			// refuse (textpolicy_test.go).
			Entry("escapes come out minimally escaped",
				probeBody(withMember("label", `"\u0041\/\"\\\n\u00e9\ud83d\ude00<>&"`)),
				probeSuccess(`{"id":"P-7","label":"A/\"\\\n`+"é😀<>&"+`","names":["x","y"],"state":"open"}`)),
			Entry("whitespace around the value",
				" \n\t\r"+probeBody()+" \n\t\r", probeOK),
			Entry("members in another order and with insignificant space",
				`{ "items" : [ {"name":"y"} , {"name":"x"} ] , "count":2,"run_id":"run_b","updated_at":"2025-06-01T11:30:00Z","kind":"probe","status":"open","id":"P-7","project_id":"proj-a","request_id":"req-00000001" }`,
				probeSuccess(`{"id":"P-7","names":["y","x"],"state":"open"}`)),
		)
	})

	Describe("schema", func() {
		DescribeTable("names the failing keyword of the most specific cause",
			func(b, reason, keywordLocation, instanceLocation string) {
				v := checkBody(b)
				expectRefused(v, "probe", reason, gate.InvalidResponse, false)
				Expect(v.Audit.KeywordLocation).To(Equal(keywordLocation))
				Expect(v.Audit.InstanceLocation).To(Equal(instanceLocation))
				Expect(v.Audit.Message).NotTo(BeEmpty())
				Expect(v.Audit.Offset).To(Equal(int64(-1)))
			},
			Entry("additionalProperties", probeBody(withMember("extra", "1")), "schema.additionalProperties",
				"upstream.schema.json#/additionalProperties", ""),
			Entry("additionalProperties nested", probeBody(withMember("items", `[{"name":"x","secret":"s3cr3t"}]`)), "schema.additionalProperties",
				"upstream.schema.json#/properties/items/items/additionalProperties", "/items/0"),
			Entry("required", probeBody(withoutMember("kind")), "schema.required", "upstream.schema.json#/required", ""),
			Entry("type", probeBody(withMember("count", `"2"`)), "schema.type", "upstream.schema.json#/properties/count/type", "/count"),
			Entry("type: a fraction for an integer", probeBody(withMember("count", `2.5`)), "schema.type", "upstream.schema.json#/properties/count/type", "/count"),
			Entry("type: the whole document", `[1]`, "schema.type", "upstream.schema.json#/type", ""),
			Entry("enum", probeBody(withMember("status", `"pending"`)), "schema.enum", "upstream.schema.json#/properties/status/enum", "/status"),
			Entry("const", probeBody(withMember("kind", `"probe "`)), "schema.const", "upstream.schema.json#/properties/kind/const", "/kind"),
			Entry("format: 2021-02-29 refused by the strict parser", probeBody(withMember("updated_at", `"2021-02-29T00:00:00Z"`)), "schema.format",
				"upstream.schema.json#/properties/updated_at/format", "/updated_at"),
			Entry("format: 24:00", probeBody(withMember("updated_at", `"2025-06-01T24:00:00Z"`)), "schema.format",
				"upstream.schema.json#/properties/updated_at/format", "/updated_at"),
			Entry("format: missing offset", probeBody(withMember("updated_at", `"2025-06-01T11:30:00"`)), "schema.format",
				"upstream.schema.json#/properties/updated_at/format", "/updated_at"),
			Entry("format: a leap second not at 23:59 UTC", probeBody(withMember("updated_at", `"2025-06-01T11:59:60Z"`)), "schema.format",
				"upstream.schema.json#/properties/updated_at/format", "/updated_at"),
			Entry("maxLength", probeBody(withMember("note", `"123456"`)), "schema.maxLength", "upstream.schema.json#/properties/note/maxLength", "/note"),
			Entry("maxLength counts code points", probeBody(withMember("note", `"éééééé"`)), "schema.maxLength", "upstream.schema.json#/properties/note/maxLength", "/note"),
			Entry("pattern", probeBody(withMember("id", `"Q-7"`)), "schema.pattern", "upstream.schema.json#/properties/id/pattern", "/id"),
			Entry("pattern: a trailing newline", probeBody(withMember("id", `"P-7\n"`)), "schema.pattern", "upstream.schema.json#/properties/id/pattern", "/id"),
			Entry("oneOf matching both branches", probeBody(withMember("choice", "5")), "schema.oneOf", "upstream.schema.json#/properties/choice/oneOf", "/choice"),
			Entry("oneOf matching neither branch follows the closest", probeBody(withMember("choice", `-1.5`)), "schema.type",
				"upstream.schema.json#/properties/choice/oneOf/0/type", "/choice"),
		)

		It("lets a body through whose oneOf matches exactly one branch", func() {
			expectAdmitted(checkBody(probeBody(withMember("choice", "-1"))), probeOK)
			expectAdmitted(checkBody(probeBody(withMember("choice", "1.5"))), probeOK)
		})

		It("gives the same reason every time when several members fail", func() {
			// The validator visits members in map order; the reason is the
			// first failing cause by instance location: /count < /kind < /status.
			b := probeBody(withMember("status", `"pending"`), withMember("kind", `"x"`), withMember("count", `"2"`))
			for range 40 {
				v := checkBody(b)
				expectRefused(v, "probe", "schema.type", gate.InvalidResponse, false)
				Expect(v.Audit.InstanceLocation).To(Equal("/count"))
			}
			// An unknown member is the object's own failure, at "".
			b = probeBody(withMember("status", `"pending"`), withMember("zz", "1"), withMember("count", `"2"`))
			for range 40 {
				v := checkBody(b)
				expectRefused(v, "probe", "schema.additionalProperties", gate.InvalidResponse, false)
				Expect(v.Audit.InstanceLocation).To(Equal(""))
			}
		})

		It("runs before the semantic rules", func() {
			// The id echo is wrong too, but the schema refuses first.
			v := checkBody(probeBody(withMember("request_id", `"other"`), withMember("status", `"pending"`)))
			expectRefused(v, "probe", "schema.enum", gate.InvalidResponse, false)
		})
	})

	Describe("semantic", func() {
		DescribeTable("refuses with semantic.<rule name>",
			func(b, reason, instanceLocation string) {
				v := checkBody(b)
				expectRefused(v, "probe", reason, gate.InvalidResponse, false)
				Expect(v.Audit.InstanceLocation).To(Equal(instanceLocation))
				Expect(v.Audit.KeywordLocation).To(BeEmpty())
			},
			Entry("binding", probeBody(withMember("request_id", `"req-00000002"`)), "semantic.request_binding", "/request_id"),
			Entry("context match", probeBody(withMember("project_id", `"proj-b"`)), "semantic.project_match", "/project_id"),
			Entry("freshness: stale by one second", probeBody(withMember("updated_at", `"2025-06-01T10:59:59Z"`)), "semantic.fresh", "/updated_at"),
			Entry("freshness: future past the skew", probeBody(withMember("updated_at", `"2025-06-01T12:00:30.001Z"`)), "semantic.fresh", "/updated_at"),
			Entry("freshness: a valid leap second long ago", probeBody(withMember("updated_at", `"2016-12-31T23:59:60Z"`)), "semantic.fresh", "/updated_at"),
			Entry("membership", probeBody(withMember("run_id", `"run_z"`)), "semantic.run_member", "/run_id"),
			Entry("custom Go rule", probeBody(withMember("count", "3")), "semantic.even_count", "/count"),
			Entry("the first failing rule in manifest order", probeBody(withMember("project_id", `"proj-b"`), withMember("run_id", `"run_z"`)), "semantic.project_match", "/project_id"),
		)

		DescribeTable("admits values exactly at the freshness limits",
			func(ts string) { expectAdmitted(checkBody(probeBody(withMember("updated_at", `"`+ts+`"`))), probeOK) },
			Entry("exactly max_age old", "2025-06-01T11:00:00Z"),
			Entry("exactly max_skew ahead", "2025-06-01T12:00:30Z"),
			Entry("exactly max_skew ahead in another offset", "2025-06-01T05:00:30-07:00"),
		)

		It("reads context from the call, not from the body", func() {
			call := probeCall()
			call.Request.Context["project"] = "proj-b"
			v := runCheck(c, jsonResp(probeBody(withMember("project_id", `"proj-b"`))), call)
			expectAdmitted(v, probeOK)
			call.Request.Context = nil
			v = runCheck(c, jsonResp(probeBody()), call)
			expectRefused(v, "probe", "semantic.project_match", gate.InvalidResponse, false)
		})

		It("refuses a custom rule name that is not registered", func() {
			dir := writeContract(GinkgoT().TempDir(), "probe", probeFiles(probeManifest))
			_, err := gate.LoadDir(dir, gate.Options{})
			var ce *gate.ConfigError
			Expect(errors.As(err, &ce)).To(BeTrue(), "%v", err)
			Expect(ce.Msg).To(Equal(`custom rule "even" is not registered (gate.Options.CustomRules)`))
			Expect(ce.Key).To(Equal("/upstream_versions/v1/rules/4"))
			Expect(ce.Line).To(Equal(lineStarting(probeManifest, "      - name: even_count")))
		})
	})

	Describe("projection", func() {
		DescribeTable("builds a new object from the allowlist",
			func(b, output string) { expectAdmitted(checkBody(b), output) },
			Entry("a wildcard maps every element", probeBody(withMember("items", `[{"name":"a"},{"name":"b"},{"name":"c"}]`)),
				probeSuccess(`{"id":"P-7","names":["a","b","c"],"state":"open"}`)),
			Entry("a wildcard over an empty array is an empty array", probeBody(withMember("items", `[]`)),
				probeSuccess(`{"id":"P-7","names":[],"state":"open"}`)),
			Entry("an optional path that is missing leaves its field out", probeBody(withMember("tags", `[]`)), probeOK),
			Entry("an index pointer", probeBody(withMember("tags", `["t1","t2"]`)),
				probeSuccess(`{"first_tag":"t1","id":"P-7","names":["x","y"],"state":"open"}`)),
			Entry("unprojected members never reach the agent", probeBody(withMember("note", `"hello"`), withMember("nest", `{"secret":"hunter2"}`)), probeOK),
		)

		DescribeTable("projection.agent_schema when the projection does not satisfy the agent-facing schema",
			func(version, b string) {
				call := probeCall()
				call.UpstreamVersion = version
				v := runCheck(c, jsonResp(b), call)
				expectRefused(v, "probe", gate.ReasonAgentSchema, gate.InvalidResponse, false)
				Expect(v.Audit.KeywordLocation).To(HavePrefix("agent.schema.json#/"))
			},
			Entry("a wildcard element without the path drops the field", "v1", probeBody(withMember("items", `[{"name":"x"},{}]`))),
			Entry("a path the upstream never sends", "broken", probeBody()),
			Entry("a value the agent schema constrains more tightly", "v1", probeBody(withMember("label", `"`+strings.Repeat("a", 41)+`"`))),
		)

		It("puts the adapter's request id in the envelope, never the upstream's", func() {
			call := probeCall()
			call.UpstreamVersion = "v0"
			v := runCheck(c, jsonResp(probeBody(withMember("request_id", `"evil-id"`))), call)
			expectAdmitted(v, probeOK)
			Expect(string(v.Output)).NotTo(ContainSubstring("evil-id"))
			Expect(v.Audit.UpstreamVersion).To(Equal("v0"))
		})
	})

	Describe("envelope", func() {
		It("spells the failure envelope exactly", func() {
			Expect(string(gate.FailureEnvelope("probe", "req-00000001", gate.InvalidResponse, false))).To(Equal(
				`{"tool":"probe","request_id":"req-00000001","outcome":"failure","error":{"code":"INVALID_RESPONSE","retryable":false}}`))
			Expect(string(gate.FailureEnvelope("review_status", "r-1", gate.UpstreamUnavailable, true))).To(Equal(
				`{"tool":"review_status","request_id":"r-1","outcome":"failure","error":{"code":"UPSTREAM_UNAVAILABLE","retryable":true}}`))
			Expect(string(gate.FailureEnvelope("t", "a\"b\\c</script>\u2028\x01", gate.NotFound, false))).To(Equal(
				`{"tool":"t","request_id":"a\"b\\c</script>` + "\u2028" + `\u0001","outcome":"failure","error":{"code":"NOT_FOUND","retryable":false}}`))
		})

		It("spells the success envelope canonically", func() {
			data := map[string]any{"b": []any{json.Number("1.50"), true, nil, "x"}, "a": map[string]any{"z": false, "é": "", "Z": json.Number("-0")}}
			Expect(string(introspect.SuccessEnvelope("t", "r", data))).To(Equal(
				`{"tool":"t","request_id":"r","outcome":"success","data":{"a":{"Z":-0,"z":false,"é":""},"b":[1.50,true,null,"x"]}}`))
			Expect(string(introspect.SuccessEnvelope("t", "r", map[string]any{}))).To(Equal(`{"tool":"t","request_id":"r","outcome":"success","data":{}}`))
		})

		It("gives the refusal the failure envelope of the call's request id", func() {
			v := checkBody(probeBody(withMember("status", `"nope"`)))
			Expect(v.Output).To(Equal(gate.FailureEnvelope("probe", probeReqID, gate.InvalidResponse, false)))
		})

		Describe("with narrowed error codes and retryable overrides", func() {
			const narrowManifest = `tool: narrow
version: "1"
current: v1
agent_schema: agent.schema.json
error_codes: [INVALID_RESPONSE, UPSTREAM_UNAVAILABLE]
content_types: [application/json]
retryable:
  transport.empty_body: false
  parse.syntax: true
  schema.enum: true
  semantic.request_binding: true
upstream_versions:
  v1:
    schema: upstream.schema.json
    projection: {id: /id, state: /status, names: /items/*/name}
    rules:
      - name: request_binding
        binding: {pointer: /request_id}
`
			var n *gate.Contract
			BeforeEach(func() {
				dir := writeContract(GinkgoT().TempDir(), "narrow", probeFiles(narrowManifest))
				var err error
				n, err = gate.LoadDir(dir, gate.Options{})
				Expect(err).NotTo(HaveOccurred())
			})

			DescribeTable("maps reason to code and retryability",
				func(resp gate.Response, reason string, code gate.ErrorCode, retryable bool) {
					expectRefused(runCheck(n, resp, probeCall()), "narrow", reason, code, retryable)
				},
				Entry("404 narrowed to INVALID_RESPONSE", gate.Response{Status: 404}, gate.ReasonStatus, gate.InvalidResponse, false),
				Entry("503 stays UPSTREAM_UNAVAILABLE", gate.Response{Status: 503}, gate.ReasonStatus, gate.UpstreamUnavailable, true),
				Entry("empty body made not retryable", jsonResp(""), gate.ReasonEmptyBody, gate.UpstreamUnavailable, false),
				Entry("syntax made retryable", jsonResp(`{,}`), gate.ReasonSyntax, gate.InvalidResponse, true),
				Entry("schema.enum made retryable", jsonResp(probeBody(withMember("status", `"x"`))), "schema.enum", gate.InvalidResponse, true),
				Entry("another schema keyword keeps its default", jsonResp(probeBody(withMember("kind", `"x"`))), "schema.const", gate.InvalidResponse, false),
				Entry("semantic rule made retryable", jsonResp(probeBody(withMember("request_id", `"x"`))), "semantic.request_binding", gate.InvalidResponse, true),
				Entry("truncated keeps its default", jsonResp(`[`), gate.ReasonTruncated, gate.UpstreamUnavailable, true),
				Entry("a custom allowlist drops +json", gate.Response{Status: 200, ContentType: "application/problem+json", Body: strings.NewReader(probeBody())},
					gate.ReasonContentType, gate.InvalidResponse, false),
			)

			It("still admits with its own tool name", func() {
				v := runCheck(n, jsonResp(probeBody()), probeCall())
				expectAdmitted(v, strings.Replace(probeOK, `"tool":"probe"`, `"tool":"narrow"`, 1))
			})

			It("keeps retryable when only INVALID_RESPONSE is allowed", func() {
				dir := writeContract(GinkgoT().TempDir(), "narrow", probeFiles(strings.Replace(narrowManifest,
					"[INVALID_RESPONSE, UPSTREAM_UNAVAILABLE]", "[INVALID_RESPONSE]", 1)))
				only, err := gate.LoadDir(dir, gate.Options{})
				Expect(err).NotTo(HaveOccurred())
				expectRefused(runCheck(only, gate.Response{Status: 503}, probeCall()), "narrow", gate.ReasonStatus, gate.InvalidResponse, true)
				expectRefused(runCheck(only, gate.Response{Status: 404}, probeCall()), "narrow", gate.ReasonStatus, gate.InvalidResponse, false)
				expectRefused(runCheck(only, jsonResp(`[`), probeCall()), "narrow", gate.ReasonTruncated, gate.InvalidResponse, true)
			})
		})
	})

	Describe("audit", func() {
		It("records every field of an admission", func() {
			b := probeBody()
			resp := jsonResp(b)
			resp.Status = 201
			resp.ContentType = "application/json; charset=utf-8"
			resp.Source = "https://api.example.com/v1/probe?id=7"
			v := check(resp)
			expectAdmitted(v, probeOK)
			a := v.Audit
			Expect(a.Time).To(Equal("2025-06-01T12:00:00Z"))
			Expect(a.Tool).To(Equal("probe"))
			Expect(a.ContractVersion).To(Equal("3.1.0"))
			Expect(a.UpstreamVersion).To(Equal("v1"))
			Expect(a.RequestID).To(Equal(probeReqID))
			Expect(a.Source).To(Equal("https://api.example.com/v1/probe?id=7"))
			Expect(a.Status).To(Equal(201))
			Expect(a.ContentType).To(Equal("application/json; charset=utf-8"))
			Expect(a.Size).To(Equal(int64(len(b))))
			Expect(a.SHA256).To(Equal(sha256Hex([]byte(b))))
			Expect(a.Outcome).To(Equal("success"))
			Expect(a.Stage).To(BeEmpty())
			Expect(a.Reason).To(BeEmpty())
			Expect(a.ErrorCode).To(BeEmpty())
			Expect(a.Retryable).To(BeFalse())
			Expect(a.KeywordLocation).To(BeEmpty())
			Expect(a.InstanceLocation).To(BeEmpty())
			Expect(a.Message).To(BeEmpty())
			Expect(a.Offset).To(Equal(int64(-1)))
			Expect(a.OutputSHA256).To(Equal(sha256Hex(v.Output)))
			Expect(a.AirlockVersion).To(Equal(gate.Version))
			Expect(a.DurationMicros).To(BeNumerically(">=", 0))
		})

		It("records every field of a refusal and serialises them as one JSON line", func() {
			b := probeBody(withMember("note", `"toolong"`))
			v := checkBody(b)
			expectRefused(v, "probe", "schema.maxLength", gate.InvalidResponse, false)
			a := v.Audit
			Expect(a.ErrorCode).To(Equal(gate.InvalidResponse))
			Expect(a.KeywordLocation).To(Equal("upstream.schema.json#/properties/note/maxLength"))
			Expect(a.InstanceLocation).To(Equal("/note"))
			Expect(a.Message).NotTo(BeEmpty())
			Expect(a.Message).NotTo(ContainSubstring("file://"), "absolute schema URLs are shortened")
			Expect(a.Size).To(Equal(int64(len(b))))
			Expect(a.SHA256).To(Equal(sha256Hex([]byte(b))))
			Expect(a.OutputSHA256).To(Equal(sha256Hex(v.Output)))

			line := a.JSON()
			Expect(line).NotTo(ContainSubstring("\n"))
			var m map[string]any
			Expect(json.Unmarshal(line, &m)).To(Succeed())
			Expect(m).To(HaveKeyWithValue("tool", "probe"))
			Expect(m).To(HaveKeyWithValue("contract_version", "3.1.0"))
			Expect(m).To(HaveKeyWithValue("upstream_version", "v1"))
			Expect(m).To(HaveKeyWithValue("request_id", probeReqID))
			Expect(m).To(HaveKeyWithValue("outcome", "failure"))
			Expect(m).To(HaveKeyWithValue("stage", "schema"))
			Expect(m).To(HaveKeyWithValue("reason", "schema.maxLength"))
			Expect(m).To(HaveKeyWithValue("error_code", "INVALID_RESPONSE"))
			Expect(m).To(HaveKeyWithValue("retryable", false))
			Expect(m).To(HaveKeyWithValue("keyword_location", "upstream.schema.json#/properties/note/maxLength"))
			Expect(m).To(HaveKeyWithValue("instance_location", "/note"))
			Expect(m).To(HaveKeyWithValue("offset", float64(-1)))
			Expect(m).To(HaveKeyWithValue("sha256", sha256Hex([]byte(b))))
			Expect(m).To(HaveKeyWithValue("output_sha256", sha256Hex(v.Output)))
			Expect(m).To(HaveKeyWithValue("airlock_version", gate.Version))
			Expect(m).To(HaveKeyWithValue("time", "2025-06-01T12:00:00Z"))
			Expect(m).To(HaveKey("message"))
			Expect(m).To(HaveKey("status"))
			Expect(m).To(HaveKey("content_type"))
			Expect(m).To(HaveKey("size"))
			Expect(m).To(HaveKey("duration_us"))
			Expect(m).NotTo(HaveKey("source"))
			Expect(string(line)).NotTo(ContainSubstring("toolong"), "the audit record keeps no upstream value")
		})

		It("caps the message at MaxAuditMessage bytes", func() {
			v := checkBody(probeBody(withMember("count", "7")))
			expectRefused(v, "probe", "semantic.even_count", gate.InvalidResponse, false)
			Expect(len(v.Audit.Message)).To(Equal(gate.MaxAuditMessage))
			Expect(v.Audit.Message).To(HaveSuffix("…"))
			Expect(longMessage).To(HavePrefix(strings.TrimSuffix(v.Audit.Message, "…")))
		})

		It("keeps a message of exactly MaxAuditMessage bytes whole", func() {
			v := checkBody(probeBody(withMember("count", "11")))
			expectRefused(v, "probe", "semantic.even_count", gate.InvalidResponse, false)
			Expect(v.Audit.Message).To(Equal(exactMessage))
		})

		It("escapes control characters, ANSI escapes and invalid UTF-8", func() {
			v := checkBody(probeBody(withMember("count", "9")))
			expectRefused(v, "probe", "semantic.even_count", gate.InvalidResponse, false)
			Expect(v.Audit.Message).To(Equal(`\x1b[31mred\x1b[0m\x0anext\x09line\x00\x7f\u{0085}\u{2028} \xff done`))
			Expect(regexp.MustCompile("[\x00-\x1f\x7f]").MatchString(string(v.Audit.JSON()))).To(BeFalse())
		})

		It("escapes the content type", func() {
			resp := jsonResp(probeBody())
			resp.ContentType = "application/json\x1b[2J\r\n"
			v := check(resp)
			expectRefused(v, "probe", gate.ReasonContentType, gate.InvalidResponse, false)
			Expect(v.Audit.ContentType).To(Equal(`application/json\x1b[2J\x0d\x0a`))
			Expect(v.Audit.Message).NotTo(ContainSubstring("\x1b"))
		})

		It("redacts the source", func() {
			resp := jsonResp(probeBody())
			resp.Source = "https://bob:hunter2@api.example.com/v1/probe?access_token=abc123&page=2"
			v := check(resp)
			Expect(v.Audit.Source).To(Equal("https://bob:REDACTED@api.example.com/v1/probe?access_token=REDACTED&page=2"))
			Expect(string(v.Audit.JSON())).NotTo(ContainSubstring("hunter2"))
			Expect(string(v.Audit.JSON())).NotTo(ContainSubstring("abc123"))
		})

		DescribeTable("redacts the source as the recorder does (one policy, package redact)",
			func(src, secret string) {
				resp := jsonResp(probeBody())
				resp.Source = src
				v := check(resp)
				recorded, _ := (&redact.Redactor{}).URL(src)
				Expect(v.Audit.Source).To(Equal(recorded))
				Expect(string(v.Audit.JSON())).NotTo(ContainSubstring(secret))
			},
			Entry("a cookie parameter", "https://api.example.com/v1/probe?cookie=abc123&page=2", "abc123"),
			Entry("a session id", "https://api.example.com/v1/probe?sessionid=abc123", "abc123"),
			Entry("a signature", "https://api.example.com/v1/probe?X-Amz-Signature=abc123&X-Amz-Date=1", "abc123"),
			Entry("a token-shaped value under a harmless name", "https://api.example.com/v1/probe?q=ghp_0123456789abcdefghij0123", "ghp_0123456789"),
			Entry("userinfo", "https://bob:hunter2@api.example.com/v1/probe", "hunter2"),
			Entry("a fragment", "https://api.example.com/cb#access_token=abc123&state=1", "abc123"),
		)

		It("redacts the source with the contract's configured policy", func() {
			dir := writeContract(GinkgoT().TempDir(), "probe", probeFiles(probeManifest))
			c, err := gate.LoadDir(dir, gate.Options{CustomRules: probeOptions.CustomRules, Redactor: &redact.Redactor{Names: []string{"tenant"}}})
			Expect(err).NotTo(HaveOccurred())
			resp := jsonResp(probeBody())
			resp.Source = "https://api.example.com/v1/probe?tenant=acme&token=t"
			v, err := c.Check(context.Background(), resp, probeCall())
			Expect(err).NotTo(HaveOccurred())
			Expect(v.Audit.Source).To(Equal("https://api.example.com/v1/probe?tenant=REDACTED&token=t"))
		})
	})

	Describe("call errors", func() {
		It("refuses an unknown upstream version", func() {
			call := probeCall()
			call.UpstreamVersion = "v9"
			_, err := c.Check(context.Background(), jsonResp(probeBody()), call)
			Expect(errors.Is(err, gate.ErrUsage)).To(BeTrue())
			Expect(err.Error()).To(ContainSubstring(`"v9"`))
		})

		It("refuses a request without an id", func() {
			call := probeCall()
			call.Request.ID = ""
			_, err := c.Check(context.Background(), jsonResp(probeBody()), call)
			Expect(errors.Is(err, gate.ErrUsage)).To(BeTrue())
		})

		It("uses the current version and the wall clock by default", func() {
			Expect(c.Current()).To(Equal("v1"))
			Expect(c.UpstreamVersions()).To(Equal([]string{"broken", "v0", "v1"}))
			Expect(c.Limits()).To(Equal(gate.Limits{MaxBytes: 2048, MaxDepth: 6, MaxNumberLength: 40, MaxStringLength: 64}))
			call := probeCall()
			call.Now = time.Time{}
			ts := time.Now().UTC().Format(time.RFC3339)
			v := runCheck(c, jsonResp(probeBody(withMember("updated_at", `"`+ts+`"`))), call)
			expectAdmitted(v, probeOK)
		})
	})
})

// lineOf returns the 1-based line of the first line of text starting with prefix.
func lineStarting(text, prefix string) int {
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return i + 1
		}
	}
	Fail(fmt.Sprintf("no line starts with %q", prefix))
	return 0
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

var _ = Describe("number magnitude with a long max_number_length", func() {
	lim := strictjson.Limits{MaxNumberLength: 4096}

	DescribeTable("refuses a long token outside binary64 even without an exponent",
		func(tok string) {
			_, err := strictjson.Parse([]byte(tok), lim)
			var pe *strictjson.Error
			Expect(errors.As(err, &pe)).To(BeTrue(), "%v", err)
			Expect(pe.Reason).To(Equal(gate.ReasonNumber))
			Expect(pe.Offset).To(Equal(int64(0)))
		},
		Entry("a 400-digit integer", "1"+strings.Repeat("0", 400)),
		Entry("a negative 400-digit integer", "-1"+strings.Repeat("0", 400)),
		Entry("a 400-digit fraction that underflows", "0."+strings.Repeat("0", 400)+"1"),
	)

	DescribeTable("admits a long token inside binary64 with its exact text",
		func(tok string) {
			v, err := strictjson.Parse([]byte(tok), lim)
			Expect(err).NotTo(HaveOccurred())
			Expect(v).To(Equal(json.Number(tok)))
		},
		Entry("300 nines", strings.Repeat("9", 300)),
		Entry("a long zero", "0."+strings.Repeat("0", 400)),
		Entry("308 digits", "1"+strings.Repeat("0", 307)),
		Entry("a long fraction near 1", "1."+strings.Repeat("0", 400)+"1"),
	)
})

const minimalManifest = `tool: probe
version: "1"
agent_schema: agent.schema.json
upstream_versions:
  v1:
    schema: upstream.schema.json
    projection:
      id: /id
`

var _ = Describe("contract loading", func() {
	var root string
	BeforeEach(func() { root = GinkgoT().TempDir() })

	load := func(tool, manifest string, extra map[string]string) (string, error) {
		files := probeFiles(manifest)
		for k, v := range extra {
			files[k] = v
		}
		dir := writeContract(root, tool, files)
		_, err := gate.LoadDir(dir, probeOptions)
		return dir, err
	}

	It("loads the minimal manifest", func() {
		_, err := load("probe", minimalManifest, nil)
		Expect(err).NotTo(HaveOccurred())
	})

	DescribeTable("refuses a broken manifest with the file, line and key",
		func(tool, manifest, linePrefix, key, msg string) {
			dir, err := load(tool, manifest, nil)
			ce := configError(err)
			file := filepath.Join(dir, "contract.yaml")
			Expect(ce.File).To(Equal(file))
			line := lineStarting(manifest, linePrefix)
			Expect(ce.Line).To(Equal(line), "%v", err)
			if key != "" {
				Expect(ce.Key).To(Equal(key))
			}
			Expect(err.Error()).To(HavePrefix(fmt.Sprintf("%s:%d:", file, line)))
			Expect(err.Error()).To(ContainSubstring(msg))
		},
		Entry("an unknown top-level key", "probe", minimalManifest+"bogus: 1\n", "bogus:", "/bogus", "bogus"),
		Entry("an unknown key in limits", "probe", strings.Replace(minimalManifest, "upstream_versions:",
			"limits:\n  max_bytes: 10\n  max_bites: 3\nupstream_versions:", 1), "  max_bites:", "/limits/max_bites", "max_bites"),
		Entry("an unknown key in an upstream version", "probe", minimalManifest+"    schemas: x.json\n", "    schemas:", "/upstream_versions/v1/schemas", "schemas"),
		Entry("an unknown key in a rule", "probe", minimalManifest+"    rules:\n      - name: b\n        binding: {pointer: /a, extra: 1}\n",
			"        binding:", "/upstream_versions/v1/rules/0/binding/extra", "extra"),
		Entry("a duplicate key", "probe", strings.Replace(minimalManifest, "agent_schema:", "version: \"2\"\nagent_schema:", 1),
			`version: "2"`, "", "version"),
		Entry("a duplicate nested key", "probe", minimalManifest+"      id: /other\n", "      id: /other", "", "id"),
		Entry("a wrong type", "probe", strings.Replace(minimalManifest, "upstream_versions:",
			"limits:\n  max_depth: deep\nupstream_versions:", 1), "  max_depth:", "/limits/max_depth", "want integer"),
		Entry("a number for a string", "probe", strings.Replace(minimalManifest, `version: "1"`, "version: 1", 1),
			"version:", "/version", "want string"),
		Entry("a string for a mapping", "probe", strings.Replace(minimalManifest, "    projection:\n      id: /id\n", "    projection: /id\n", 1),
			"    projection:", "/upstream_versions/v1/projection", "want object"),
		Entry("a negative limit", "probe", strings.Replace(minimalManifest, "upstream_versions:",
			"limits:\n  max_bytes: -1\nupstream_versions:", 1), "  max_bytes:", "/limits/max_bytes", "minimum"),
		Entry("a tool name that is not the directory's", "other", minimalManifest, "tool:", "/tool",
			`tool "probe" must equal its directory name "other"`),
		Entry("a missing schema file", "probe", strings.Replace(minimalManifest, "upstream.schema.json", "nothere.schema.json", 1),
			"    schema:", "/upstream_versions/v1/schema", `schema file "nothere.schema.json" not found`),
		Entry("a missing agent schema file", "probe", strings.Replace(minimalManifest, "agent_schema: agent.schema.json", "agent_schema: nope.json", 1),
			"agent_schema:", "/agent_schema", `schema file "nope.json" not found`),
		Entry("a schema path leaving the directory", "probe", strings.Replace(minimalManifest, "upstream.schema.json", "../x.json", 1),
			"    schema:", "/upstream_versions/v1/schema", "does not match pattern"),
		Entry("a bad pointer escape", "probe", strings.Replace(minimalManifest, "id: /id", "id: /a~2b", 1),
			"      id:", "/upstream_versions/v1/projection/id", "does not match pattern"),
		Entry("a pointer without a leading slash", "probe", strings.Replace(minimalManifest, "id: /id", "id: id", 1),
			"      id:", "/upstream_versions/v1/projection/id", "does not match pattern"),
		Entry("a bad pointer in a rule", "probe", minimalManifest+"    rules:\n      - name: b\n        binding: {pointer: request_id}\n",
			"        binding:", "/upstream_versions/v1/rules/0/binding/pointer", "does not match pattern"),
		Entry("a rule with two kinds", "probe", minimalManifest+"    rules:\n      - name: b\n        binding: {pointer: /a}\n        custom: even\n",
			"      - name: b", "/upstream_versions/v1/rules/0", "maxProperties"),
		Entry("a rule name used twice", "probe", minimalManifest+"    rules:\n      - name: b\n        binding: {pointer: /a}\n      - name:  b\n        custom: even\n",
			"      - name:  b", "/upstream_versions/v1/rules/1/name", `rule name "b" is used twice`),
		Entry("an unknown retryable reason", "probe", minimalManifest+"retryable:\n  transport.bogus: true\n",
			"  transport.bogus:", "/retryable/transport.bogus", `unknown reason "transport.bogus"`),
		Entry("a current version that does not exist", "probe", minimalManifest+"current: v2\n",
			"current:", "/current", `current upstream version "v2" is not in upstream_versions`),
		Entry("error codes without INVALID_RESPONSE", "probe", minimalManifest+"error_codes: [NOT_FOUND]\n",
			"error_codes:", "/error_codes/0", "INVALID_RESPONSE"),
		Entry("a missing required key", "probe", strings.Replace(minimalManifest, "version: \"1\"\n", "", 1),
			"tool:", "", "version"),
	)

	It("names the same unknown key every time when there are several", func() {
		manifest := minimalManifest + "zzz: 1\nmmm: 2\naaa: 3\n"
		for range 20 {
			_, err := load("probe", manifest, nil)
			ce := configError(err)
			Expect(ce.Key).To(Equal("/aaa"))
			Expect(ce.Line).To(Equal(lineStarting(manifest, "aaa:")))
		}
	})

	It("names the key's own line for an unknown key", func() {
		manifest := minimalManifest + "\n\n# a comment\nbogus: 1\n"
		_, err := load("probe", manifest, nil)
		Expect(configError(err).Line).To(Equal(lineStarting(manifest, "bogus:")))
	})

	DescribeTable("refuses a $ref outside the contract's own schema files",
		func(schemaFile, ref string) {
			other := filepath.Join(root, "other")
			Expect(os.MkdirAll(other, 0o755)).To(Succeed())
			Expect(os.WriteFile(filepath.Join(other, "x.json"), []byte(`{"type":"string"}`), 0o644)).To(Succeed())
			schema := `{"type":"object","properties":{"id":{"$ref":"` + ref + `"}}}`
			dir, err := load("probe", minimalManifest, map[string]string{schemaFile: schema})
			ce := configError(err)
			Expect(ce.File).To(Equal(filepath.Join(dir, schemaFile)))
			Expect(errors.Is(err, gate.ErrOutsideContract)).To(BeTrue(), "%v", err)
			// At the $ref, with what it names.
			Expect(ce.Line).To(Equal(1))
			Expect(ce.Key).To(Equal("/properties/id/$ref"))
			if ref == "missing.schema.json" {
				Expect(err.Error()).To(ContainSubstring(`$ref "missing.schema.json": no file missing.schema.json in the contract folder`))
			} else {
				Expect(err.Error()).To(ContainSubstring(gate.ErrOutsideContract.Error()))
			}
		},
		Entry("file:///etc/passwd", "upstream.schema.json", "file:///etc/passwd"),
		Entry("an absolute path", "upstream.schema.json", "/etc/passwd"),
		Entry("../other/x.json", "upstream.schema.json", "../other/x.json"),
		Entry("an https URL", "upstream.schema.json", "https://example.com/schema.json"),
		Entry("an http URL", "upstream.schema.json", "http://127.0.0.1:1/schema.json"),
		Entry("an https URL from the agent schema", "agent.schema.json", "https://example.com/schema.json#/$defs/x"),
		Entry("a sibling file that does not exist", "upstream.schema.json", "missing.schema.json"),
	)

	DescribeTable("places a $ref to nothing at the $ref, saying what is missing",
		func(ref, want string) {
			schema := `{"$id":"https://airlock.invalid/probe/upstream.schema.json","type":"object","$defs":{"x":{"$anchor":"here","type":"string"}},` + "\n" + `"properties":{"id":{"$ref":"` + ref + `"}}}`
			dir, err := load("probe", minimalManifest, map[string]string{"upstream.schema.json": schema})
			ce := configError(err)
			Expect(ce.File).To(Equal(filepath.Join(dir, "upstream.schema.json")))
			Expect(ce.Line).To(Equal(2))
			Expect(ce.Key).To(Equal("/properties/id/$ref"))
			Expect(ce.Msg).To(Equal(`$ref "` + ref + `": ` + want))
		},
		Entry("a JSON Pointer the file lacks", "#/$defs/nope", "nothing at /$defs/nope in upstream.schema.json"),
		Entry("an anchor the file lacks", "#nope", `no anchor "nope" in upstream.schema.json`),
	)

	It("refuses a $schema meta-schema that is not bundled", func() {
		dir, err := load("probe", minimalManifest, map[string]string{"upstream.schema.json": `{"$schema":"https://example.com/meta","type":"object"}`})
		ce := configError(err)
		Expect(ce.File).To(Equal(filepath.Join(dir, "upstream.schema.json")))
		Expect(errors.Is(err, gate.ErrOutsideContract)).To(BeTrue(), "%v", err)
	})

	It("resolves a $ref to a sibling schema file of the contract", func() {
		_, err := load("probe", minimalManifest, map[string]string{
			"upstream.schema.json": `{"type":"object","properties":{"id":{"$ref":"defs.schema.json#/$defs/id"}}}`,
			"defs.schema.json":     `{"$defs":{"id":{"type":"string"}}}`,
		})
		Expect(err).NotTo(HaveOccurred())
	})

	It("refuses a schema file that is not strict JSON, naming its line", func() {
		schema := "{\n  \"type\": \"object\",\n  \"type\": \"array\"\n}\n"
		dir, err := load("probe", minimalManifest, map[string]string{"upstream.schema.json": schema})
		ce := configError(err)
		Expect(ce.File).To(Equal(filepath.Join(dir, "upstream.schema.json")))
		Expect(ce.Line).To(Equal(3))
		Expect(ce.Msg).To(ContainSubstring(gate.ReasonDuplicate))
	})

	It("refuses a schema that does not compile", func() {
		dir, err := load("probe", minimalManifest, map[string]string{"upstream.schema.json": `{"type":"objekt"}`})
		Expect(configError(err).File).To(Equal(filepath.Join(dir, "upstream.schema.json")))
	})

	It("LoadContracts loads every tool directory, sorted, and skips directories without a manifest", func() {
		writeContract(root, "zeta", map[string]string{"notes.txt": "no manifest here"})
		writeContract(root, "probe", probeFiles(probeManifest))
		writeContract(root, "alpha", probeFiles(strings.Replace(minimalManifest, "tool: probe", "tool: alpha", 1)))
		cs, err := gate.LoadAllDir(root, probeOptions)
		Expect(err).NotTo(HaveOccurred())
		var tools []string
		for _, c := range cs {
			tools = append(tools, c.Tool())
		}
		Expect(tools).To(Equal([]string{"alpha", "probe"}))

		writeContract(root, "broken", probeFiles("tool: broken\n"))
		_, err = gate.LoadAllDir(root, probeOptions)
		Expect(configError(err).File).To(Equal(filepath.Join(root, "broken", "contract.yaml")))
	})

	It("loads the bundled review_status contract", func() {
		c, err := gate.LoadDir("../schemas/review_status", gate.Options{})
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Tool()).To(Equal("review_status"))
		Expect(c.Current()).To(Equal("v2"))
		Expect(c.UpstreamVersions()).To(Equal([]string{"v1", "v2"}))
	})
})

var _ = Describe("docs/reasons.md", func() {
	It("lists every reason code and warning code of the registries, as they say", func() {
		doc, err := os.ReadFile("../docs/reasons.md")
		Expect(err).NotTo(HaveOccurred())
		lines := strings.Split(string(doc), "\n")
		codes := map[string]bool{}
		for _, r := range gate.Reasons() {
			codes[r.Code] = true
			row := fmt.Sprintf("| `%s` | %s | %s | %v | %s |", r.Code, r.Stage, r.ErrorCode, r.Retryable, strings.ReplaceAll(r.Description, "|", `\|`))
			Expect(lines).To(ContainElement(row), "docs/reasons.md is stale for %s; regenerate it with go run ./scripts/genreasons > docs/reasons.md", r.Code)
		}
		for _, w := range gate.WarningCodes() {
			codes[w.Code] = true
			row := fmt.Sprintf("| `%s` | %s |", w.Code, strings.ReplaceAll(w.Description, "|", `\|`))
			Expect(lines).To(ContainElement(row), "docs/reasons.md is stale for warning %s; regenerate it with go run ./scripts/genreasons > docs/reasons.md", w.Code)
		}
		rowCode := regexp.MustCompile("^\\| `([^`]+)` \\|")
		listed := 0
		for _, l := range lines {
			if m := rowCode.FindStringSubmatch(l); m != nil {
				listed++
				Expect(codes).To(HaveKey(m[1]), "docs/reasons.md lists %s, which the registries do not have", m[1])
			}
		}
		Expect(listed).To(Equal(len(gate.Reasons()) + len(gate.WarningCodes())))
	})

	It("every reason the stages emit is in the registry", func() {
		for _, r := range []string{gate.ReasonStatus, gate.ReasonTooLarge, gate.ReasonEmptyBody, gate.ReasonContentType,
			gate.ReasonNotJSON, gate.ReasonEncoding, gate.ReasonReadError, gate.ReasonSyntax, gate.ReasonTruncated,
			gate.ReasonDuplicate, gate.ReasonInvalidUTF8, gate.ReasonLoneSurrogate, gate.ReasonBOM, gate.ReasonTrailingData,
			gate.ReasonDepth, gate.ReasonNumber, gate.ReasonStringTooLong, gate.ReasonAgentSchema, gate.ReasonPanic,
			"schema.enum", "semantic.request_binding"} {
			info, ok := gate.LookupReason(r)
			Expect(ok).To(BeTrue(), r)
			stage, _, _ := strings.Cut(r, ".")
			Expect(info.Stage).To(Equal(gate.Stage(stage)))
			Expect(gate.StageOf(r)).To(Equal(gate.Stage(stage)))
		}
		for _, r := range []string{"schema.", "semantic.", "parse.bogus", ""} {
			_, ok := gate.LookupReason(r)
			Expect(ok).To(BeFalse(), r)
			Expect(gate.StageOf(r)).To(BeEmpty())
		}
	})
})
