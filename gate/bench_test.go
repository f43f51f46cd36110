package gate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/strictjson"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/semantic"
)

// The benchmarks compare the whole gate (Contract.Check: transport, strict
// parse, schema, semantic, projection, agent schema, envelope, audit record)
// with a baseline that does only what a connector without airlock would do:
// encoding/json's Decoder with UseNumber into an any, then Validate with the
// same upstream schema compiled the same way. `make bench` runs them and
// scripts/benchratio prints the ratios.

// benchTool is a list tool whose upstream value grows with its item count.
const benchTool = "bench_list"

var benchFiles = map[string]string{
	gate.ManifestFile: `tool: bench_list
version: "1.0.0"
description: Benchmark contract, a paged list of issues.
agent_schema: agent.schema.json
limits:
  max_bytes: 8388608
upstream_versions:
  v1:
    schema: upstream.schema.json
    projection:
      ids: /items/*/id
      states: /items/*/state
      next_cursor: /next_cursor
    rules:
      - name: request_binding
        binding: {pointer: /request_id}
`,
	"upstream.schema.json": `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://airlock.invalid/bench_list/upstream.schema.json",
  "type": "object",
  "required": ["request_id", "items", "next_cursor"],
  "additionalProperties": false,
  "properties": {
    "request_id": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]{7,63}$"},
    "next_cursor": {"type": ["string", "null"], "maxLength": 128},
    "items": {"type": "array", "maxItems": 100000, "items": {"$ref": "#/$defs/item"}}
  },
  "$defs": {
    "item": {
      "type": "object",
      "required": ["id", "title", "state", "author", "created_at", "labels", "comments", "score"],
      "additionalProperties": false,
      "properties": {
        "id": {"type": "string", "pattern": "^ISS-[0-9]{1,10}$"},
        "title": {"type": "string", "minLength": 1, "maxLength": 256},
        "state": {"enum": ["open", "closed", "triaged"]},
        "author": {"type": "string", "pattern": "^[a-z][a-z0-9._-]*$"},
        "created_at": {"type": "string", "format": "date-time"},
        "labels": {"type": "array", "maxItems": 16, "uniqueItems": true, "items": {"type": "string", "maxLength": 32}},
        "comments": {"type": "integer", "minimum": 0},
        "score": {"type": "number", "minimum": 0, "maximum": 100},
        "assignee": {"type": ["string", "null"]}
      }
    }
  }
}
`,
	"agent.schema.json": `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://airlock.invalid/bench_list/agent.schema.json",
  "type": "object",
  "required": ["ids", "states"],
  "additionalProperties": false,
  "properties": {
    "ids": {"type": "array", "items": {"type": "string"}},
    "states": {"type": "array", "items": {"enum": ["open", "closed", "triaged"]}},
    "next_cursor": {"type": ["string", "null"]}
  }
}
`,
}

const benchRequestID = "req.B3nchm4rk"

// benchBody returns an upstream value of at least size bytes: a page of
// items with strings (some escaped, some non-ASCII), integers, decimals,
// nulls and small arrays.
func benchBody(size int) []byte {
	states := []string{"open", "closed", "triaged"}
	authors := []string{"mlopez", "akim", "r.okafor", "j-nguyen"}
	b := []byte(`{"request_id":"` + benchRequestID + `","items":[`)
	for i := 0; len(b) < size-40; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"id":"ISS-%d","title":"Gate refuses \"%d\" — retry with café config #%d",`, 1000+i, i, i%97)
		b = fmt.Appendf(b, `"state":%q,"author":%q,"created_at":"2025-06-%02dT%02d:%02d:07.25Z",`, states[i%3], authors[i%4], 1+i%28, i%24, i%60)
		b = fmt.Appendf(b, `"labels":["area/gate","kind/bug","p%d"],"comments":%d,"score":%d.%02d,"assignee":`, i%4, i*7%300, i%100, i*13%100)
		if i%2 == 0 {
			b = append(b, "null}"...)
		} else {
			b = fmt.Appendf(b, "%q}", authors[(i+1)%4])
		}
	}
	return append(b, `],"next_cursor":"c.AAAAAQ"}`...)
}

func writeBenchContract(b *testing.B) string {
	dir := filepath.Join(b.TempDir(), benchTool)
	if err := os.Mkdir(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	for name, text := range benchFiles {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

func BenchmarkCheck(b *testing.B) {
	dir := writeBenchContract(b)
	c, err := gate.LoadDir(dir, gate.Options{})
	if err != nil {
		b.Fatal(err)
	}

	// The baseline's schema: the same file, compiled by the same compiler
	// configuration as LoadContract's.
	const url = "https://airlock.invalid/bench_list/upstream.schema.json"
	doc, err := strictjson.Parse([]byte(benchFiles["upstream.schema.json"]), strictjson.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	compiler := schema.NewCompiler(nil)
	if err := compiler.AddResource(url, doc); err != nil {
		b.Fatal(err)
	}
	sch, err := compiler.Compile(url)
	if err != nil {
		b.Fatal(err)
	}

	call := gate.Call{
		Request: semantic.Request{ID: benchRequestID},
		Now:     time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC),
	}
	for _, size := range []int{2 << 10, 200 << 10} {
		body := benchBody(size)
		name := strconv.Itoa(size>>10) + "KB"

		// Both sides must accept the body, or the comparison is void.
		v, err := c.Check(context.Background(), gate.Response{Status: 200, ContentType: "application/json", Body: bytes.NewReader(body)}, call)
		if err != nil || !v.Admitted {
			b.Fatalf("%s: gate refused the benchmark body: %v %+v", name, err, v.Audit)
		}
		if err := baseline(sch, body); err != nil {
			b.Fatalf("%s: baseline refused the benchmark body: %v", name, err)
		}

		b.Run(name+"/gate", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				v, err := c.Check(context.Background(), gate.Response{Status: 200, ContentType: "application/json", Body: bytes.NewReader(body)}, call)
				if err != nil || !v.Admitted {
					b.Fatal("refused")
				}
			}
		})
		b.Run(name+"/baseline", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if err := baseline(sch, body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// baseline is the usual unguarded path: decode with encoding/json (numbers
// kept as json.Number), then validate against the upstream schema.
func baseline(sch interface{ Validate(any) error }, body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	return sch.Validate(v)
}
