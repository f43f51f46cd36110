package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/airlockdev/airlock/internal/planted"
)

// The end-to-end planted-secret battery: the battery of
// redact/testdata/planted.yaml is planted in everything airlock records or
// checks — an HTTP upstream's URL, request headers, response headers and body;
// a command's argv and output; an MCP server's arguments and text content; the
// source of `airlock check`, its response headers and body — and then every
// file written (bodies, sidecars, output schemas, the audit file, the reports of
// `airlock run --junit --json`), every file name, and everything airlock printed
// is searched for every rendered secret. None may survive.

// batteryRun is one airlock invocation and what it printed.
type batteryRun struct {
	label    string
	code     int
	out, err string
}

type e2eBattery struct {
	t                 *testing.T
	work, in          string
	schemas, fixtures string
	runs              []batteryRun
	entries           []planted.Rendered
}

func (b *e2eBattery) airlock(label string, args ...string) int {
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, Stdio{Out: &out, Err: &errb}, Options{})
	b.runs = append(b.runs, batteryRun{label: label, code: code, out: out.String(), err: errb.String()})
	if code > 1 && !strings.Contains(label, "(fails)") {
		// Not a failure of the battery (nothing written is what it wants),
		// but a plant that never ran proves nothing: say so.
		b.t.Logf("%s: exit %d\n%s", label, code, strings.TrimSpace(errb.String()))
	}
	return code
}

func (b *e2eBattery) place(p string) []planted.Rendered {
	var out []planted.Rendered
	for _, r := range b.entries {
		if r.Place == p {
			out = append(out, r)
		}
	}
	return out
}

// input writes a file the test gives airlock (never searched).
func (b *e2eBattery) input(name, text string) string {
	p := filepath.Join(b.in, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		b.t.Fatal(err)
	}
	return p
}

func headerLine(text string) (string, string) {
	name, value, _ := strings.Cut(text, ": ")
	return name, value
}

// plantedBody is a review_status-like envelope holding every planted body,
// body_name and text_content value (the gate refuses it: extra members).
func (b *e2eBattery) plantedBody() string {
	var events []map[string]any
	for _, r := range b.place(planted.Body) {
		events = append(events, map[string]any{"level": "warn", "message": r.Value})
	}
	var fields []map[string]any
	for _, r := range b.place(planted.BodyName) {
		name, value := headerLine(r.Value)
		fields = append(fields, map[string]any{name: value})
	}
	var content []map[string]any
	for _, r := range b.place(planted.TextContent) {
		content = append(content, map[string]any{"type": "text", "text": r.Value})
	}
	doc := map[string]any{
		"tool": "review_status", "request_id": "req.J7q94MkP", "outcome": "success",
		"data":   map[string]any{"change_id": "CR-1042", "decision": "approved", "reviewed_by": "m.okafor"},
		"events": events, "fields": fields, "content": content,
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		b.t.Fatal(err)
	}
	return buf.String()
}

// everythingServer finds @modelcontextprotocol/server-everything's entry
// script as the record specs do: $AIRLOCK_MCP_EVERYTHING or .ci/node; "" with
// a reason when it is missing.
func everythingServer() (string, string) {
	if _, err := exec.LookPath("node"); err != nil {
		return "", "node is not on PATH"
	}
	entry := os.Getenv("AIRLOCK_MCP_EVERYTHING")
	if entry == "" {
		entry, _ = filepath.Abs(filepath.Join("..", ".ci", "node", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	}
	if _, err := os.Stat(entry); err != nil {
		return "", "the MCP server @modelcontextprotocol/server-everything is not installed (" + entry + ")"
	}
	return entry, ""
}

// toLocal points a planted URL at the test server, keeping its userinfo,
// path, query and fragment.
func toLocal(raw, server string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return server + "/"
	}
	s, _ := url.Parse(server)
	u.Scheme, u.Host = s.Scheme, s.Host
	if u.Path == "" {
		u.Path = "/"
	}
	return u.String()
}

// spellings is a file's text followed by the strings it holds as decoded
// YAML, JSON (a document, or one per line), XML and percent-encoding, so that a
// secret that only changed its spelling (escaped, folded, encoded) still
// counts as surviving.
func spellings(name string, raw []byte) string {
	var b strings.Builder
	b.Write(raw)
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			b.WriteString("\n")
			b.WriteString(v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for k, e := range v {
				walk(k)
				walk(e)
			}
		}
	}
	switch {
	case strings.HasSuffix(name, ".yaml"):
		var v any
		if yaml.Unmarshal(raw, &v) == nil {
			walk(normalize(v))
		}
	case strings.HasSuffix(name, ".xml"):
		b.WriteString("\n" + html.UnescapeString(string(raw)))
	default:
		var v any
		if json.Unmarshal(raw, &v) == nil {
			walk(v)
		} else {
			for _, line := range bytes.Split(raw, []byte("\n")) {
				if json.Unmarshal(line, &v) == nil {
					walk(v)
				}
			}
		}
	}
	text := b.String()
	if u, err := url.PathUnescape(text); err == nil && u != text {
		text += "\n" + u
	}
	return text
}

// normalize turns YAML's map[any]any (none with yaml.v3, but keys may be
// non-strings) into map[string]any.
func normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = normalize(e)
		}
		return v
	case map[any]any:
		m := map[string]any{}
		for k, e := range v {
			m[fmt.Sprint(k)] = normalize(e)
		}
		return m
	case []any:
		for i, e := range v {
			v[i] = normalize(e)
		}
	}
	return v
}

func TestPlantedSecretsNeverReachDisk(t *testing.T) {
	es, err := planted.Load(filepath.Join("..", "redact", "testdata", "planted.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := planted.Render(es, 1313)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	b := &e2eBattery{t: t, work: work, in: filepath.Join(work, "in"), schemas: filepath.Join(work, "schemas"),
		fixtures: filepath.Join(work, "fixtures"), entries: rs}
	for _, d := range []string{b.in, b.fixtures, filepath.Join(work, "out")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.CopyFS(b.schemas, os.DirFS(filepath.Join("..", "schemas"))); err != nil {
		t.Fatal(err)
	}
	body := b.plantedBody()
	bodyFile := b.input("planted.json", body)
	rec := []string{"record", "--schemas", b.schemas, "--fixtures", b.fixtures, "--tool", "review_status",
		"--request-id", "req.J7q94MkP", "--context", "change_id=CR-1042"}

	// (a) HTTP: planted secrets in the URL and request headers; the upstream
	// answers with every planted response header and the planted body.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, e := range b.place(planted.ResponseHeader) {
			name, value := headerLine(e.Value)
			w.Header().Add(name, value)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(body))
	}))
	defer srv.Close()
	for i, e := range b.place(planted.URL) {
		b.airlock("record url: "+e.Note, append(rec, "--name", fmt.Sprintf("url-%02d", i), "--url", toLocal(e.Value, srv.URL))...)
	}
	for i, e := range b.place(planted.RequestHeader) {
		b.airlock("record header: "+e.Note, append(rec, "--name", fmt.Sprintf("header-%02d", i),
			"--url", srv.URL+"/reviews/CR-1042", "--header", e.Value)...)
	}

	// (b) Commands: each planted command line is the argv of a shell that
	// prints the planted body.
	for i, e := range b.place(planted.Argv) {
		argv := append([]string{"sh", "-c", `cat "` + bodyFile + `"`}, planted.Split(e.Value)...)
		b.airlock("record argv: "+e.Note, append(append(rec, "--name", fmt.Sprintf("argv-%02d", i), "--"), argv...)...)
	}

	// Calls that record nothing: their errors name the source.
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for i, e := range b.place(planted.URL) {
		b.airlock("record unreachable (fails): "+e.Note, append(rec, "--name", fmt.Sprintf("gone-url-%02d", i), "--url", toLocal(e.Value, closed.URL))...)
	}
	for i, e := range b.place(planted.Argv) {
		argv := planted.Split(e.Value)
		argv[0] = filepath.Join(b.in, "no-such-dir", argv[0])
		b.airlock("record missing program (fails): "+e.Note, append(append(rec, "--name", fmt.Sprintf("gone-argv-%02d", i), "--"), argv...)...)
	}

	// (c) MCP: server-everything's echo tool answers with the message in a
	// text content block; planted secrets go in the arguments.
	mcpCalls := 0
	if entry, missing := everythingServer(); missing != "" {
		msg := missing + "; install it with `make mcp-servers` (or set AIRLOCK_MCP_EVERYTHING to its dist/index.js)"
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true: " + msg)
		}
		t.Log("the MCP part of the battery is skipped: " + msg)
	} else {
		var calls []map[string]any
		for i, e := range append(b.place(planted.TextContent), b.place(planted.Body)...) {
			calls = append(calls, map[string]any{"name": fmt.Sprintf("mcp-%02d", i), "request_id": "req.J7q94MkP",
				"mcp_tool": "echo", "arguments": map[string]any{"message": e.Value}})
		}
		mcpCalls = len(calls)
		reqs, err := json.Marshal(calls)
		if err != nil {
			t.Fatal(err)
		}
		b.airlock("record mcp echo", append(rec[:len(rec)-2:len(rec)-2], "--requests", b.input("mcp.yaml", string(reqs)),
			"--", "node", entry, "stdio")...)
	}

	// (d) airlock check: planted sources, planted response headers, and
	// planted values where the gate refuses them (an enum, the request
	// binding, the context rule), to the audit file and to standard error.
	audit := filepath.Join(work, "out", "audit.jsonl")
	good := filepath.Join("..", "fixtures", "review_status", "v2", "accepted", "approved.json")
	chk := []string{"check", "--schemas", b.schemas, "--tool", "review_status", "--request-id", "req.J7q94MkP",
		"--context", "change_id=CR-1042"}
	for _, e := range b.place(planted.Source) {
		b.airlock("check --source: "+e.Note, append(chk, "--source", e.Value, "--audit", audit, good)...)
	}
	headers := append([]string{}, chk...)
	for _, e := range b.place(planted.ResponseHeader) {
		headers = append(headers, "--response-header", e.Value)
	}
	b.airlock("check --response-header", append(headers, "--status", "503", "--audit", audit, good)...)
	for i, e := range b.place(planted.BodyName) {
		_, secret := headerLine(e.Value)
		data := map[string]any{"change_id": "CR-1042", "decision": "approved", "reviewed_by": "m.okafor"}
		env := map[string]any{"tool": "review_status", "request_id": "req.J7q94MkP", "outcome": "success", "data": data}
		switch i % 4 {
		case 0:
			data["decision"] = secret
		case 1:
			env["request_id"] = secret
		case 2:
			data["change_id"] = secret
		case 3:
			data["reviewed_by"] = secret + strings.Repeat(" ", 300)
		}
		raw, _ := json.Marshal(env)
		f := b.input(fmt.Sprintf("check-%02d.json", i), string(raw))
		b.airlock("check refused body: "+e.Note, append(chk, "--audit", audit, f)...)
		b.airlock("check refused body to stderr: "+e.Note, append(chk, f)...)
	}
	b.airlock("check planted body", append(chk, "--audit", audit, bodyFile)...)

	// (e) airlock run over the recorded tree, with both reports.
	b.airlock("run", "run", "--schemas", b.schemas, "--fixtures", b.fixtures,
		"--junit", filepath.Join(work, "out", "junit.xml"), "--json", filepath.Join(work, "out", "results.json"))

	// Every rendered secret of the battery, and the generated parts of it.
	type needle struct {
		s string
		r planted.Rendered
	}
	var needles []needle
	total := 0
	for _, r := range rs {
		total += len(r.Secrets)
		for _, s := range append(append([]string{}, r.Secrets...), r.Fragments...) {
			if len(s) >= 8 {
				needles = append(needles, needle{s, r})
			}
		}
	}
	// Where a secret survived, by kind of place, with the first example.
	type seen struct {
		at    map[string]bool
		first string
	}
	hits := map[string]map[string]*seen{} // "[place] note (secret k)" → kind → where
	found := func(kind, where, text string) {
		for _, n := range needles {
			if !strings.Contains(text, n.s) {
				continue
			}
			for k, s := range n.r.Secrets {
				if !strings.Contains(s, n.s) {
					continue
				}
				key := fmt.Sprintf("[%s] %s (secret %d)", n.r.Place, n.r.Note, k+1)
				if hits[key] == nil {
					hits[key] = map[string]*seen{}
				}
				if hits[key][kind] == nil {
					hits[key][kind] = &seen{at: map[string]bool{}, first: where}
				}
				hits[key][kind].at[where] = true
			}
		}
	}
	kindOf := func(rel string) string {
		switch {
		case strings.HasSuffix(rel, ".meta.yaml"):
			return "sidecar"
		case strings.HasSuffix(rel, ".output-schema.json"):
			return "output schema"
		case strings.HasPrefix(rel, "fixtures"+string(filepath.Separator)):
			return "fixture body"
		case strings.HasSuffix(rel, "audit.jsonl"):
			return "audit file"
		case strings.HasSuffix(rel, "junit.xml"):
			return "JUnit report"
		case strings.HasSuffix(rel, "results.json"):
			return "JSON report"
		}
		return "other file"
	}
	files := 0
	err = filepath.WalkDir(work, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == b.in || p == b.schemas {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(work, p)
		found("file name", rel, rel)
		if d.IsDir() {
			return nil
		}
		files++
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		found(kindOf(rel), rel, spellings(rel, raw))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range b.runs {
		cmd, _, _ := strings.Cut(r.label, ":")
		found("stdout of "+cmd, r.label, r.out)
		found("stderr of "+cmd, r.label, r.err)
	}
	recorded := 0
	for _, r := range b.runs {
		if strings.HasPrefix(r.label, "record") && r.code <= 1 {
			recorded++
		}
	}
	t.Logf("%d airlock runs (%d recordings that wrote fixtures), %d files written", len(b.runs), recorded, files)
	// The battery proves something only when the plants were recorded and
	// the reports written.
	wantRecorded := len(b.place(planted.URL)) + len(b.place(planted.RequestHeader)) + len(b.place(planted.Argv))
	if mcpCalls > 0 {
		wantRecorded++ // one run records every MCP call
	}
	if recorded < wantRecorded {
		t.Errorf("only %d of %d recording runs wrote fixtures (see the exits logged above)", recorded, wantRecorded)
	}
	for _, f := range []string{"audit.jsonl", "junit.xml", "results.json"} {
		if _, err := os.Stat(filepath.Join(work, "out", f)); err != nil {
			t.Errorf("out/%s was not written: %v", f, err)
		}
	}
	bodies, _ := filepath.Glob(filepath.Join(b.fixtures, "review_status", "v2", "recorded", "*.json"))
	t.Logf("%d recorded bodies and output schemas, %d MCP calls", len(bodies), mcpCalls)
	if len(hits) > 0 {
		keys := make([]string, 0, len(hits))
		per := map[string]int{}
		for k := range hits {
			keys = append(keys, k)
			per[strings.TrimPrefix(strings.SplitN(k, "]", 2)[0], "[")]++
		}
		sort.Strings(keys)
		var report strings.Builder
		fmt.Fprintf(&report, "%d of %d planted secrets survive on disk or in airlock's output\n", len(hits), total)
		for _, p := range planted.Places {
			if per[p] > 0 {
				fmt.Fprintf(&report, "  %-16s %3d\n", p, per[p])
			}
		}
		for _, k := range keys {
			kinds := make([]string, 0, len(hits[k]))
			for kind := range hits[k] {
				kinds = append(kinds, kind)
			}
			sort.Strings(kinds)
			fmt.Fprintf(&report, "- %s\n", k)
			for _, kind := range kinds {
				fmt.Fprintf(&report, "    %s ×%d, e.g. %s\n", kind, len(hits[k][kind].at), hits[k][kind].first)
			}
		}
		t.Error(report.String())
	}
}
