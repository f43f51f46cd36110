// Package record records live upstreams into fixtures: HTTP (http.go),
// commands (command.go) and MCP servers over stdio or streamable HTTP
// (mcp.go), one call or a requests file (requests.go). Bodies are kept byte
// for byte, secrets are redacted on disk by package redact, the contract
// judges each response at once, and files are written whole or not at all.
package record

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
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/fileio"
	"github.com/airlockdev/airlock/internal/mcpclient"
	"github.com/airlockdev/airlock/internal/sanitize"
	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/redact"
	"github.com/airlockdev/airlock/semantic"
)

// Errors of Record and Promote, for exit codes: errors.Is(err, ErrFixtureExists)
// is a refused write (exit 2), ErrUnwritable a folder that cannot be created
// or written (exit 3), ErrUpstream an upstream that did not answer with a
// complete response (exit 3).
var (
	ErrFixtureExists = fileio.ErrExists
	ErrUnwritable    = fileio.ErrUnwritable
	ErrUpstream      = errors.New("upstream error")
)

// Recording defaults.
const (
	// DefaultTimeout bounds one call: connecting, sending, and reading
	// the whole response.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxBytes is the largest body record reads from an
	// upstream (and, for a gzip body, the largest it inflates to redact).
	DefaultMaxBytes = 16 << 20
)

// Call is one call to a live upstream. Exactly one of HTTP, Command
// and MCP is set.
type Call struct {
	// Name is the fixture's name: the body is <Name>.<ext> and the sidecar
	// <Name>.meta.yaml. It matches ^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$ and is
	// not "defaults"; "" picks the UTC time of the run (20250601T120000Z,
	// then -2, -3… when taken).
	Name string
	// Request is the adapter's request the gate judges the response for;
	// an empty ID becomes "rec-<Name>".
	Request semantic.Request
	HTTP    *HTTPCall
	Command *CommandCall
	MCP     *MCPCall
}

// HTTPCall is an HTTP request.
type HTTPCall struct {
	// Method defaults to GET; URL is absolute http or https.
	Method string
	URL    string
	Header http.Header
	// Body is sent as the request body (never recorded).
	Body []byte
	// FollowRedirects follows 3xx responses; off by default, so a redirect
	// is recorded as the 3xx it is.
	FollowRedirects bool
	// Gzip sends Accept-Encoding: gzip. A gzip answer is stored as it came
	// (compressed, content_encoding: gzip), so the gate's inflation limit
	// is exercised when the fixture runs. Without it no Accept-Encoding is
	// sent and nothing is decoded for you either way.
	Gzip bool
}

// CommandCall runs a command; its standard output is the body.
type CommandCall struct {
	Argv  []string
	Stdin []byte
	// Dir is the working directory ("" the current one); Env the
	// environment (nil inherits airlock's).
	Dir string
	Env []string
	// ContentType is recorded for the body; "" means application/json (the
	// adapter running the command declares JSON).
	ContentType string
}

// MCPCall is a tools/call on an MCP server, over stdio (Command) or
// streamable HTTP (URL); exactly one of them is set.
type MCPCall struct {
	Command []string
	Dir     string
	Env     []string
	URL     string
	Header  http.Header
	// Tool is the MCP tool's name; Arguments a JSON object (nil: {}).
	Tool      string
	Arguments json.RawMessage
}

// Options configure Record.
type Options struct {
	// SchemasDir holds the contracts; FixturesDir the fixture trees, under
	// which responses land in <tool>/<upstream-version>/recorded/.
	SchemasDir  string
	FixturesDir string
	// Tool is the airlock tool name (^[a-z][a-z0-9_]{0,63}$). Its contract
	// judges each response right away; without one the verdict is
	// "unchecked" and UpstreamVersion is required.
	Tool string
	// UpstreamVersion defaults to the contract's current version.
	UpstreamVersion string
	Calls           []Call
	// Timeout bounds each call; 0 means DefaultTimeout. A call that
	// runs out of time records nothing.
	Timeout time.Duration
	// MaxBytes is the largest body read; 0 means DefaultMaxBytes. A
	// longer one records nothing.
	MaxBytes int64
	// Redactor says what is secret; NoRedact turns redaction off.
	Redactor redact.Redactor
	NoRedact bool
	// Progress, when set, is called after each call with how many are done
	// and how many there are. nil: none.
	Progress func(done, total int)
	// Gate is the contract loading options (custom rules).
	Gate gate.Options
}

// Result is one call's outcome.
type Result struct {
	Name string
	// Body, Meta and OutputSchema are the paths written; OutputSchema is ""
	// when the tool had none.
	Body, Meta, OutputSchema string
	// Provenance is the sidecar's recorded: block.
	Provenance *fixture.Provenance
	// Verdict is the gate's verdict on the response as received; nil when
	// the tool has no contract.
	Verdict *gate.Verdict
	// Warnings are things a person should know (a body that is not JSON was
	// not redacted, redaction was off…); they are in the sidecar's notes too.
	Warnings []string
	// Err is why nothing was written for this call.
	Err error
}

// capture is what one call brought back, secrets already out of the
// descriptive fields (not yet out of the body).
type capture struct {
	status          int
	contentType     string
	contentEncoding string
	body            []byte
	source          string
	reqHeader       map[string]string
	// header is the HTTP response header as received (the gate judges
	// it); respHeader the redacted copy the sidecar keeps.
	header       http.Header
	respHeader   map[string]fixture.HeaderValues
	redacted     []redact.Redaction
	exitStatus   *int
	stderrBytes  *int64
	mcpTool      string
	outputSchema []byte
	warnings     []string
	received     time.Time
	duration     time.Duration
}

// Record calls each upstream in opts.Calls and writes every complete
// response as a recorded fixture: the body byte for byte (secrets
// redacted) and a sidecar with status, content type, request, clock and
// provenance, plus the MCP tool's outputSchema when there is one.
//
// Before any call it checks the options, the names (unique, free in the
// recorded/ folder: ErrFixtureExists) and that the folder can be created
// (ErrUnwritable); those return an error and call nothing. A call that
// fails (ErrUpstream: unreachable, timed out, cut short, too large) or
// cannot be written leaves no file and is reported in its Result;
// the other calls still run, unless ctx is cancelled.
func Record(ctx context.Context, opts Options) ([]Result, error) {
	rec, err := newRecorder(opts)
	if err != nil {
		return nil, err
	}
	defer rec.close()
	results := make([]Result, len(rec.calls))
	for i, call := range rec.calls {
		results[i].Name = call.Name
		if err := ctx.Err(); err != nil {
			results[i].Err = fmt.Errorf("%w: interrupted before the call: %v", ErrUpstream, err)
			continue
		}
		results[i] = rec.record(ctx, call)
		if opts.Progress != nil {
			opts.Progress(i+1, len(rec.calls))
		}
	}
	return results, nil
}

type recorder struct {
	opts     Options
	contract *gate.Contract
	version  string
	dir      string
	calls    []Call
	mcp      map[string]*mcpSession
	w        *fileio.Writer // nil until the first fixture is written
	// stderrTail, when set, keeps the end of a stdio MCP server's
	// standard error (ListTools quotes it in errors; Record never does).
	stderrTail *mcpclient.Tail
	// readFailed, when set, is told when an MCP server sends what is not
	// JSON-RPC (ListTools ends the listing at once; Record waits).
	readFailed func(error)
}

func newRecorder(opts Options) (*recorder, error) {
	if !semantic.ValidName(opts.Tool) {
		return nil, &gate.ConfigError{File: "--tool", Msg: fmt.Sprintf("%q is not a tool name (^[a-z][a-z0-9_]{0,63}$)", opts.Tool)}
	}
	if len(opts.Calls) == 0 {
		return nil, &gate.ConfigError{File: "record", Msg: "nothing to record: give a URL, a command or an MCP server"}
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	rec := &recorder{opts: opts, mcp: map[string]*mcpSession{}}

	cdir := filepath.Join(opts.SchemasDir, opts.Tool)
	if _, err := os.Stat(filepath.Join(cdir, gate.ManifestFile)); err == nil {
		c, err := gate.LoadDir(cdir, opts.Gate)
		if err != nil {
			return nil, err
		}
		rec.contract = c
	}
	rec.version = opts.UpstreamVersion
	switch {
	case rec.contract == nil && rec.version == "":
		return nil, &gate.ConfigError{File: filepath.Join(cdir, gate.ManifestFile), Msg: "no contract for tool " + opts.Tool + ": name the upstream version with --upstream-version"}
	case rec.contract != nil && rec.version == "":
		if rec.version = rec.contract.Current(); rec.version == "" {
			return nil, &gate.ConfigError{File: filepath.Join(cdir, gate.ManifestFile), Msg: fmt.Sprintf("the contract has no current upstream version: name one with --upstream-version (have %v)", rec.contract.UpstreamVersions())}
		}
	case rec.contract != nil:
		if _, ok := rec.contract.Projection(rec.version); !ok {
			return nil, &gate.ConfigError{File: "--upstream-version", Msg: fmt.Sprintf("tool %s has no upstream version %q (have %v)", opts.Tool, rec.version, rec.contract.UpstreamVersions())}
		}
	}
	if !versionName().MatchString(rec.version) {
		return nil, &gate.ConfigError{File: "--upstream-version", Msg: fmt.Sprintf("%q is not an upstream version name (^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$)", rec.version)}
	}
	rec.dir = filepath.Join(opts.FixturesDir, opts.Tool, rec.version, fixture.KindRecorded)

	if err := fixture.CheckWritable(opts.FixturesDir, rec.dir); err != nil {
		return nil, err
	}
	taken, err := fixture.TakenNames(opts.FixturesDir, rec.dir)
	if err != nil {
		return nil, err
	}
	stamp := time.Now().UTC().Format("20060102T150405Z")
	seen := map[string]bool{}
	for i, c := range opts.Calls {
		if err := checkCall(i, c); err != nil {
			return nil, err
		}
		if c.Name == "" {
			c.Name = stamp
			for n := 2; taken[c.Name] || seen[c.Name]; n++ {
				c.Name = fmt.Sprintf("%s-%d", stamp, n)
			}
		}
		if !fixture.ValidName(c.Name) {
			return nil, &gate.ConfigError{File: "record", Key: fmt.Sprintf("/%d/name", i), Msg: fmt.Sprintf("%q is not a fixture name (^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$, not \"defaults\")", c.Name)}
		}
		if seen[c.Name] {
			return nil, &gate.ConfigError{File: "record", Key: fmt.Sprintf("/%d/name", i), Msg: fmt.Sprintf("the name %q is used twice", c.Name)}
		}
		seen[c.Name] = true
		if taken[c.Name] {
			return nil, fmt.Errorf("%w: %s already holds a fixture named %q", ErrFixtureExists, rec.dir, c.Name)
		}
		if c.Request.ID == "" {
			c.Request.ID = "rec-" + c.Name
		}
		// The request decides how the fixture is judged: one the sidecar
		// could only hold cut is refused before any call.
		if err := fixture.CheckRequest(c.Request); err != nil {
			return nil, &gate.ConfigError{File: "record", Key: fmt.Sprintf("/%d/request", i), Msg: err.Error()}
		}
		rec.calls = append(rec.calls, c)
	}
	return rec, nil
}

// versionName is an upstream version's name, compiled at its first use
// ({0,63} makes a long program).
var versionName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) })

func checkCall(i int, c Call) error {
	where := func(key, msg string) error {
		return &gate.ConfigError{File: "record", Key: fmt.Sprintf("/%d%s", i, key), Msg: msg}
	}
	n := 0
	for _, set := range []bool{c.HTTP != nil, c.Command != nil, c.MCP != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return where("", "a call needs exactly one source: a URL, a command, or an MCP server")
	}
	switch {
	case c.HTTP != nil:
		if err := checkURL(c.HTTP.URL); err != nil {
			return where("/url", err.Error())
		}
	case c.Command != nil:
		if len(c.Command.Argv) == 0 || c.Command.Argv[0] == "" {
			return where("/args", "the command is empty")
		}
	case c.MCP != nil:
		if (len(c.MCP.Command) == 0) == (c.MCP.URL == "") {
			return where("", "an MCP server is either a command (stdio) or a URL (streamable HTTP)")
		}
		if c.MCP.URL != "" {
			if err := checkURL(c.MCP.URL); err != nil {
				return where("/url", err.Error())
			}
		}
		if c.MCP.Tool == "" {
			return where("/mcp_tool", "name the MCP tool to call")
		}
		if len(c.MCP.Arguments) > 0 {
			v, err := strictjson.Parse(c.MCP.Arguments, strictjson.Limits{})
			if _, ok := v.(map[string]any); err != nil || !ok {
				return where("/arguments", "tool arguments must be a JSON object")
			}
		}
	}
	return nil
}

func checkURL(s string) error {
	if s == "" {
		return errors.New("no URL")
	}
	req, err := http.NewRequest(http.MethodGet, s, nil)
	if err != nil || (req.URL.Scheme != "http" && req.URL.Scheme != "https") || req.URL.Host == "" {
		red, _ := (&redact.Redactor{}).URL(s)
		return fmt.Errorf("%q is not an absolute http or https URL", red)
	}
	return nil
}

func (rec *recorder) close() {
	for _, s := range rec.mcp {
		s.close()
	}
	if rec.w != nil {
		rec.w.Close()
	}
}

// writer returns the fixture tree's writer, locking the tree (and making
// its folder) at the first fixture written.
func (rec *recorder) writer(ctx context.Context) (*fileio.Writer, error) {
	if rec.w != nil {
		return rec.w, nil
	}
	if err := os.MkdirAll(rec.opts.FixturesDir, 0o755); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnwritable, err)
	}
	w, err := fileio.NewTree(rec.opts.FixturesDir).Lock(ctx)
	if err != nil {
		return nil, err
	}
	rec.w = w
	return w, nil
}

// record makes one call and writes its fixture.
func (rec *recorder) record(ctx context.Context, call Call) Result {
	res := Result{Name: call.Name}
	cctx, cancel := context.WithTimeout(ctx, rec.opts.Timeout)
	defer cancel()
	got, err := rec.fetch(cctx, call)
	if err != nil {
		res.Err = err
		return res
	}
	res.Warnings = got.warnings

	// The verdict is the gate's on the response as received.
	prov := &fixture.Provenance{
		Source: got.source, RequestHeaders: got.reqHeader,
		Time:           got.received.UTC().Format(time.RFC3339Nano),
		DurationMS:     got.duration.Milliseconds(),
		AirlockVersion: gate.Version,
		Redacted:       got.redacted,
		ExitStatus:     got.exitStatus, StderrBytes: got.stderrBytes,
		MCPTool: got.mcpTool,
	}
	if res.Verdict, err = rec.judge(ctx, call, got, prov); err != nil {
		res.Err = err
		return res
	}

	body := got.body
	if rec.opts.NoRedact {
		res.Warnings = append(res.Warnings, "recorded with redaction off (--no-redact): secrets in the body and sidecar were written as received")
	} else {
		red, found, warn, err := rec.redactBody(got)
		if err != nil {
			res.Err = err
			return res
		}
		body = red
		prov.Redacted = append(prov.Redacted, found...)
		if warn != "" {
			res.Warnings = append(res.Warnings, warn)
		}
	}
	sum := sha256.Sum256(body)
	prov.Size, prov.SHA256 = int64(len(body)), hex.EncodeToString(sum[:])
	rec.writeFixture(ctx, call, got, body, prov, &res)
	return res
}

// fetch makes the call (HTTP, command or MCP) and captures the response.
func (rec *recorder) fetch(ctx context.Context, call Call) (*capture, error) {
	switch {
	case call.HTTP != nil:
		return rec.fetchHTTP(ctx, call.HTTP)
	case call.Command != nil:
		return rec.fetchCommand(ctx, call.Command)
	case call.MCP != nil:
		return rec.fetchMCP(ctx, call.MCP)
	}
	return nil, nil
}

// judge runs the response as received through the contract's gate, if
// there is one, and sets prov.Verdict; the verdict is nil without a contract.
func (rec *recorder) judge(ctx context.Context, call Call, got *capture, prov *fixture.Provenance) (*gate.Verdict, error) {
	if rec.contract == nil {
		prov.Verdict = &fixture.RecordedVerdict{Outcome: "unchecked"}
		return nil, nil
	}
	v, err := rec.contract.Check(ctx, gate.Response{
		Status: got.status, ContentType: got.contentType, ContentEncoding: got.contentEncoding,
		Header: got.header, Body: bytes.NewReader(got.body), Source: got.source,
	}, gate.Call{UpstreamVersion: rec.version, Request: call.Request, Now: got.received})
	if err != nil {
		return nil, &gate.ConfigError{File: "record", Msg: err.Error(), Err: err}
	}
	prov.Verdict = &fixture.RecordedVerdict{Outcome: "admitted", ContractVersion: rec.contract.Version()}
	if !v.Admitted {
		prov.Verdict.Outcome, prov.Verdict.Reason = "refused", v.Reason
	}
	return v, nil
}

// writeFixture writes the (redacted) body, the output schema and the
// sidecar of one call, all or nothing, and fills in res's paths (or Err).
func (rec *recorder) writeFixture(ctx context.Context, call Call, got *capture, body []byte, prov *fixture.Provenance, res *Result) {
	ext := bodyExt(got.contentType, got.contentEncoding, body)
	res.Body = filepath.Join(rec.dir, call.Name+ext)
	res.Meta = filepath.Join(rec.dir, call.Name+fixture.MetaSuffix)
	files := []fileio.NewFile{{Path: res.Body, Data: body}}
	if got.outputSchema != nil {
		res.OutputSchema = filepath.Join(rec.dir, call.Name+fixture.OutputSchemaSuffix)
		prov.OutputSchema = filepath.Base(res.OutputSchema)
		files = append(files, fileio.NewFile{Path: res.OutputSchema, Data: got.outputSchema})
	}
	status := got.status
	ct, clock := got.contentType, prov.Time
	// The request context is the caller's, but a secret given as context
	// ("--context api_key=…") must not reach disk either; a contract rule
	// reading a redacted key then judges the placeholder.
	reqContext := call.Request.Context
	if !rec.opts.NoRedact {
		var found []redact.Redaction
		reqContext, found = rec.opts.Redactor.Context(reqContext)
		prov.Redacted = append(prov.Redacted, found...)
	}
	meta := &fixture.Meta{
		Status: &status, ContentType: &ct, ResponseHeaders: got.respHeader,
		Request:  &fixture.MetaRequest{ID: &call.Request.ID, Context: reqContext},
		Clock:    &clock,
		Notes:    strings.Join(res.Warnings, "\n"),
		Recorded: prov,
	}
	if got.contentEncoding != "" {
		enc := got.contentEncoding
		meta.ContentEncoding = &enc
	}
	// Whatever the upstream sent, the sidecar must load: values past their
	// bounds are cut (with a marker and their SHA-256), and the notes say
	// what was.
	meta, cut := fixture.BoundMeta(meta)
	judged := false
	for _, c := range cut {
		res.Warnings = append(res.Warnings, "the sidecar keeps a bounded form: "+c)
		judged = judged || strings.HasPrefix(c, "content_type:") || strings.HasPrefix(c, "content_encoding:") || strings.HasPrefix(c, "response_headers:")
	}
	if judged {
		res.Warnings = append(res.Warnings, "airlock run and promote judge the fixture with the content type, encoding and response headers the sidecar keeps (headers redacted), so their verdict may differ from the one recorded")
	}
	meta.Notes = strings.Join(res.Warnings, "\n")
	files = append(files, fileio.NewFile{Path: res.Meta, Data: fixture.MarshalMeta(meta, "Recorded by airlock record "+gate.Version+"; see docs/record.md.")})
	res.Provenance = meta.Recorded
	w, err := rec.writer(ctx)
	if err == nil {
		err = w.CreateAll(ctx, rec.dir, files)
	}
	if err != nil {
		res.Body, res.Meta, res.OutputSchema = "", "", ""
		res.Err = err
	}
}

// redactBody redacts got.body (inflating a gzip body first and compressing
// the result again). warn explains a body that could not be (fully)
// redacted.
func (rec *recorder) redactBody(got *capture) (out []byte, found []redact.Redaction, warn string, err error) {
	body := got.body
	if len(body) == 0 {
		return body, nil, "", nil
	}
	gz := false
	switch strings.ToLower(strings.TrimSpace(got.contentEncoding)) {
	case "", "identity":
	case "gzip", "x-gzip":
		zr, zerr := gzip.NewReader(bytes.NewReader(body))
		if zerr != nil {
			// Not gzip at all: its bytes are what anyone reading the
			// fixture sees, so they are searched as text.
			red, fs := rec.opts.Redactor.Text(string(body)), []redact.Redaction(nil)
			if red != string(body) {
				fs = []redact.Redaction{{Where: redact.RedactedBody, Name: redact.TextPart}}
			}
			note := "the gzip body does not inflate (" + zerr.Error() + "): stored as received, searched as text"
			if len(fs) > 0 {
				note = "the gzip body does not inflate (" + zerr.Error() + "): searched as text and stored with its secrets redacted"
			}
			return []byte(red), fs, note, nil
		}
		plain, rerr := io.ReadAll(io.LimitReader(zr, rec.opts.MaxBytes+1))
		if rerr != nil {
			// A stream cut short still inflates up to the cut: what it
			// holds must not be a secret, since it cannot be redacted in
			// place.
			// The bytes after the part that inflates (trailing garbage, a
			// broken second member, plain text after the stream) are
			// searched as they are stored.
			if _, fs, _ := rec.opts.Redactor.Body(plain); len(fs) > 0 || rec.opts.Redactor.Text(string(body)) != string(body) {
				return nil, nil, "", fmt.Errorf("%w: the gzip body breaks after %d inflated bytes (%v) and holds secrets that cannot be redacted inside a broken stream; record with --no-redact", ErrUpstream, len(plain), rerr)
			}
			return body, nil, "the gzip body does not inflate to its end (" + rerr.Error() + "): stored as received; neither the part that inflates nor the raw bytes hold a secret", nil
		}
		if int64(len(plain)) > rec.opts.MaxBytes {
			return nil, nil, "", fmt.Errorf("%w: the gzip body inflates past %d bytes and cannot be redacted; raise --max-bytes or record with --no-redact", ErrUpstream, rec.opts.MaxBytes)
		}
		body, gz = plain, true
	default:
		return nil, nil, "", fmt.Errorf("%w: a body with Content-Encoding %q cannot be redacted; record with --no-redact", ErrUpstream, sanitize.Text(got.contentEncoding, 64, sanitize.Escape))
	}
	red, found, complete := rec.opts.Redactor.Body(body)
	if !complete {
		warn = "the body is not JSON from start to end: the values before the first syntax error were redacted as JSON, the rest as text"
		if t := bytes.TrimLeft(body, " \t\r\n"); len(t) > 0 && strings.IndexByte(`{["-0123456789tfn`, t[0]) < 0 {
			warn = "the body is not JSON: it was searched as text"
		}
	}
	if len(found) == 0 {
		return got.body, nil, warn, nil
	}
	if gz {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(red)
		zw.Close()
		red = buf.Bytes()
	}
	return red, found, warn, nil
}

// bodyExt picks a body file's extension from its media type, or from its
// first byte when the type says nothing useful. A compressed body is .bin.
func bodyExt(contentType, encoding string, body []byte) string {
	if e := strings.ToLower(strings.TrimSpace(encoding)); e != "" && e != "identity" {
		return ".bin"
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	t := bytes.TrimLeft(body, " \t\r\n")
	// A body declared JSON keeps .json unless its first byte says it cannot
	// be JSON (banners before the value, an HTML page).
	mayBeJSON := len(t) == 0 || strings.IndexByte(`{["-0123456789tfn`, t[0]) >= 0
	switch {
	case (mt == "application/json" || strings.HasSuffix(mt, "+json")) && mayBeJSON:
		return ".json"
	case mt == "text/html":
		return ".html"
	case mt == "application/xml" || mt == "text/xml" || strings.HasSuffix(mt, "+xml"):
		return ".xml"
	}
	switch {
	case len(t) > 0 && (t[0] == '{' || t[0] == '['):
		return ".json"
	case len(t) > 0 && t[0] == '<':
		return ".html"
	case strings.HasPrefix(mt, "text/"):
		return ".txt"
	case len(body) == 0:
		return ".json"
	}
	for _, b := range body {
		if b < 0x20 && b != '\n' && b != '\r' && b != '\t' {
			return ".bin"
		}
	}
	return ".txt"
}

// upstreamErr wraps an upstream failure, saying "timed out" for a deadline.
// Libraries quote the URL they failed on, credentials and all, so the
// message goes through the default secret policy (redact.Redactor.Text).
func upstreamErr(ctx context.Context, timeout time.Duration, what string, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %s: timed out after %s; nothing recorded", ErrUpstream, what, timeout)
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return fmt.Errorf("%w: %s: interrupted; nothing recorded", ErrUpstream, what)
	}
	return fmt.Errorf("%w: %s: %s; nothing recorded", ErrUpstream, what, (&redact.Redactor{}).Text(err.Error()))
}

// scrubbed replaces raw (a URL with its credentials) by red in err's text.
func scrubbed(err error, raw, red string) error {
	if err == nil || raw == "" || raw == red {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), raw, red))
}
