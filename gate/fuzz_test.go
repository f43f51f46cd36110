package gate_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/airlockdev/airlock/internal/introspect"
	"github.com/airlockdev/airlock/internal/strictjson"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/semantic"
)

// The fuzz targets. Under plain `go test` they run their seeds: the
// JSONTestSuite parsing corpus (AIRLOCK_CONFORMANCE, default
// ../../shared/conformance; skipped silently when missing), every fixture
// body under ../fixtures, and the inline seeds below. `make fuzz` runs them.

// fuzzSeeds returns the seed bodies: inline, conformance and fixtures.
func fuzzSeeds(tb testing.TB) [][]byte {
	seeds := [][]byte{
		nil,
		[]byte(`{}`),
		[]byte(`[]`),
		[]byte(`0`),
		[]byte(`-0.0e-0`),
		[]byte(`"\u0000\ud83d\ude00\/"`),
		[]byte(`{"a":1,"\u0061":2}`),
		[]byte(`{"a":{"b":[1,2,{"c":null}]},"d":true}`),
		[]byte(`["\ud800"]`),
		[]byte("\xef\xbb\xbf{}"),
		[]byte(`1e400`),
		[]byte(`1e-400`),
		[]byte(`0e-400`),
		[]byte(`12345678901234567890123`),
		[]byte(`1.000000000000000000001`),
		[]byte(strings.Repeat("[", 70) + strings.Repeat("]", 70)),
		[]byte(`{"a":1} x`),
		[]byte(`<html></html>`),
		[]byte(`{"tool":"review_status","request_id":"req-fuzz-0001","outcome":"success","data":{"change_id":"CR-1","decision":"approved","reviewed_by":"alice"}}`),
		[]byte(`{"tool":"review_status","request_id":"req-fuzz-0001","outcome":"failure","error":{"code":"NOT_FOUND","retryable":false}}`),
		[]byte(`{"change_id":"CR-1","status":"pending","reviewer":"bob.b"}`),
		[]byte(`{"change_id":"CR-1","status":"pending","reviewer":"b\u006fb"}`),
		[]byte(`{"change_id":"CR-1","status":"rejected","reviewer":"x","extra":1}`),
		// Several members failing at once: the reason once depended on map order.
		[]byte(`{"change_id":"X","status":"nope","reviewer":"Bad Name"}`),
		[]byte(`{"tool":"review_status","request_id":"req-fuzz-0001","outcome":"success","data":{"change_id":"X","decision":"maybe","reviewed_by":""}}`),
		[]byte(`{"tool":"other","request_id":"r","outcome":"done","data":{},"z":1}`),
	}

	root := os.Getenv("AIRLOCK_CONFORMANCE")
	if root == "" {
		root = filepath.Join("..", "..", "shared", "conformance")
	}
	if files, err := filepath.Glob(filepath.Join(root, "JSONTestSuite", "test_parsing", "*.json")); err == nil {
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil {
				seeds = append(seeds, b)
			}
		}
	}

	_ = filepath.WalkDir(filepath.Join("..", "fixtures"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml") {
			return nil
		}
		if b, err := os.ReadFile(path); err == nil {
			seeds = append(seeds, b)
		}
		return nil
	})
	return seeds
}

// fuzzLimits are small enough that the fuzzer reaches every limit, each
// with and without the case-folding check.
var fuzzLimits = []strictjson.Limits{
	{},
	{MaxDepth: 3, MaxNumberLength: 8, MaxStringLength: 8},
	{FoldCollisions: true},
	{MaxDepth: 3, MaxNumberLength: 8, MaxStringLength: 8, FoldCollisions: true},
}

// fuzzPointer matches an RFC 6901 JSON Pointer.
var fuzzPointer = regexp.MustCompile(`^(/([^~]|~[01])*)*$`)

// checkParseRefusal checks what every refusal promises: a location inside
// the body, a well-formed pointer, the repeats of a repeat refusal, the
// end of input for a truncation.
func checkParseRefusal(t *testing.T, body []byte, pe *strictjson.Error) {
	if !utf8.ValidString(pe.Pointer) {
		t.Fatalf("%v: pointer is not UTF-8", pe)
	}
	if !fuzzPointer.MatchString(pe.Pointer) {
		t.Fatalf("%v: pointer %q is not an RFC 6901 pointer", pe, pe.Pointer)
	}
	switch pe.Reason {
	case strictjson.ReasonDuplicate, strictjson.ReasonFoldCollision:
		if len(pe.Repeats) == 0 || len(pe.Repeats) > strictjson.MaxRepeats {
			t.Fatalf("%v: %d repeats", pe, len(pe.Repeats))
		}
		if pe.Repeats[0].Pointer != pe.Pointer || pe.Repeats[0].Offset != pe.Offset || pe.Repeats[0].Folded != (pe.Reason == strictjson.ReasonFoldCollision) {
			t.Fatalf("%v: the first repeat %+v is not the refusal's", pe, pe.Repeats[0])
		}
		for i, rep := range pe.Repeats {
			if rep.EarlierOffset >= rep.Offset || rep.Offset >= int64(len(body)) || i > 0 && rep.Offset <= pe.Repeats[i-1].Offset {
				t.Fatalf("%v: repeat %+v out of order", pe, rep)
			}
			if rep.Folded == (rep.Name == rep.Earlier) || !strings.EqualFold(rep.Name, rep.Earlier) {
				t.Fatalf("%v: repeat %+v is not a repeat", pe, rep)
			}
			if !fuzzPointer.MatchString(rep.Pointer) {
				t.Fatalf("%v: repeat pointer %q", pe, rep.Pointer)
			}
		}
	case strictjson.ReasonTruncated:
		if pe.Offset != int64(len(body)) {
			t.Fatalf("%v: a truncation not at the end of the %d-byte body", pe, len(body))
		}
	}
	if pe.Reason != strictjson.ReasonDuplicate && pe.Reason != strictjson.ReasonFoldCollision && pe.Repeats != nil {
		t.Fatalf("%v: repeats on another reason", pe)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, lim := range fuzzLimits {
			v, err := strictjson.Parse(body, lim)
			again, err2 := strictjson.Parse(body, lim)
			if err != nil {
				pe, ok := err.(*strictjson.Error)
				if !ok {
					t.Fatalf("Parse returned %T %v, want *strictjson.Error", err, err)
				}
				if !strings.HasPrefix(pe.Reason, "parse.") || gate.StageOf(pe.Reason) != gate.StageParse {
					t.Fatalf("reason %q is not a registered parse reason", pe.Reason)
				}
				if pe.Offset < -1 || pe.Offset > int64(len(body)) {
					t.Fatalf("%s: offset %d outside the %d-byte body", pe.Reason, pe.Offset, len(body))
				}
				if err2 == nil || err2.Error() != err.Error() {
					t.Fatalf("not deterministic: %v, then %v", err, err2)
				}
				checkParseRefusal(t, body, pe)
				continue
			}
			if err2 != nil {
				t.Fatalf("not deterministic: admitted, then %v", err2)
			}
			if lim.FoldCollisions {
				plain := lim
				plain.FoldCollisions = false
				if _, err := strictjson.Parse(body, plain); err != nil {
					t.Fatalf("admitted with the folding check, refused without: %v", err)
				}
			}
			if !json.Valid(body) {
				t.Fatalf("admitted a body encoding/json calls invalid: %q", body)
			}
			canon := strictjson.AppendCanonical(nil, v)
			if !bytes.Equal(canon, strictjson.AppendCanonical(nil, again)) {
				t.Fatalf("not deterministic: %s, then %s", canon, strictjson.AppendCanonical(nil, again))
			}
			back, err := strictjson.Parse(canon, lim)
			if err != nil {
				t.Fatalf("the canonical form %q of %q does not re-parse: %v", canon, body, err)
			}
			if re := strictjson.AppendCanonical(nil, back); !bytes.Equal(re, canon) {
				t.Fatalf("canonical form is not stable:\n%s\n%s", canon, re)
			}
		}
	})
}

const fuzzRequestID = "req-fuzz-0001"

var fuzzContentTypes = []string{"application/json", "application/problem+json", "text/html", ""}

func FuzzGate(f *testing.F) {
	dir := filepath.Join("..", "schemas", "review_status")
	c, err := gate.LoadDir(dir, gate.Options{})
	if err != nil {
		f.Fatal(err)
	}
	agent := compileAgentSchema(f, filepath.Join(dir, "agent.schema.json"))

	for _, s := range fuzzSeeds(f) {
		f.Add(s, uint8(0))
		f.Add(s, uint8(1))
	}
	f.Add([]byte(`{"change_id":"CR-1","status":"approved","reviewer":"carol"}`), uint8(1|2))
	f.Add([]byte(`{"change_id":"CR-1","status":"approved","reviewer":"carol"}`), uint8(1|4))
	f.Add([]byte(`{"change_id":"CR-1","status":"approved","reviewer":"carol"}`), uint8(1|8))

	call := func(flags uint8) gate.Call {
		version := "v2"
		if flags&1 != 0 {
			version = "v1"
		}
		return gate.Call{
			UpstreamVersion: version,
			Request:         semantic.Request{ID: fuzzRequestID, Context: map[string]any{"change_id": "CR-1"}},
			Now:             probeNow,
		}
	}
	response := func(body []byte, flags uint8) gate.Response {
		resp := gate.Response{Status: 200, ContentType: fuzzContentTypes[flags>>2&3], Body: bytes.NewReader(body)}
		if flags&2 != 0 {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			zw.Write(body)
			zw.Close()
			resp.ContentEncoding = "gzip"
			resp.Body = &buf
		}
		return resp
	}

	f.Fuzz(func(t *testing.T, body []byte, flags uint8) {
		v, err := c.Check(context.Background(), response(body, flags), call(flags))
		if err != nil {
			t.Fatalf("Check: %v", err)
		}
		again, err := c.Check(context.Background(), response(body, flags), call(flags))
		if err != nil {
			t.Fatalf("Check: %v", err)
		}
		if !bytes.Equal(v.Output, again.Output) || v.Reason != again.Reason {
			t.Fatalf("not deterministic: %s (%s), then %s (%s)", v.Output, v.Reason, again.Output, again.Reason)
		}

		if !v.Admitted {
			if v.Reason == "" || gate.StageOf(v.Reason) == "" || v.Stage != gate.StageOf(v.Reason) {
				t.Fatalf("refusal with reason %q and stage %q", v.Reason, v.Stage)
			}
			want := gate.FailureEnvelopeDetail("review_status", fuzzRequestID, v.ErrorCode, v.Retryable, v.Detail)
			if !bytes.Equal(v.Output, want) {
				t.Fatalf("refusal output\n%s\nwant\n%s", v.Output, want)
			}
			switch v.ErrorCode {
			case gate.NotFound, gate.UpstreamUnavailable, gate.InvalidResponse:
			default:
				t.Fatalf("error code %q", v.ErrorCode)
			}
			return
		}

		out, err := strictjson.Parse(v.Output, strictjson.Limits{})
		if err != nil {
			t.Fatalf("admitted output %q does not parse: %v", v.Output, err)
		}
		env, ok := out.(map[string]any)
		if !ok || len(env) != 4 || env["tool"] != "review_status" || env["request_id"] != fuzzRequestID || env["outcome"] != "success" {
			t.Fatalf("admitted output is not a success envelope: %s", v.Output)
		}
		data, ok := env["data"].(map[string]any)
		if !ok {
			t.Fatalf("admitted output has no data object: %s", v.Output)
		}
		if err := agent.Validate(data); err != nil {
			t.Fatalf("admitted data fails the agent-facing schema: %s: %v", v.Output, err)
		}
		if want := introspect.SuccessEnvelope("review_status", fuzzRequestID, data); !bytes.Equal(v.Output, want) {
			t.Fatalf("admitted output is not canonical:\n%s\nwant\n%s", v.Output, want)
		}
	})
}

// compileAgentSchema compiles the agent-facing schema on its own, not
// through the contract, so that the check is independent of the gate.
func compileAgentSchema(tb testing.TB, file string) *jsonschema.Schema {
	b, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		tb.Fatal(err)
	}
	comp := jsonschema.NewCompiler()
	comp.AssertFormat()
	if err := comp.AddResource("agent.schema.json", doc); err != nil {
		tb.Fatal(err)
	}
	sch, err := comp.Compile("agent.schema.json")
	if err != nil {
		tb.Fatal(err)
	}
	return sch
}
