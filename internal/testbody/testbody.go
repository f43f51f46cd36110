// Package testbody makes the upstream bodies the benchmarks and memory
// specs of several packages share, so that their figures speak of the same
// shape. Only tests import it.
package testbody

import (
	"fmt"
	"os"
	"path/filepath"
)

// RequestID is the request id List echoes.
const RequestID = "req.B3nchm4rk"

// List returns an upstream value of at least size bytes (for size ≥ 64): a
// page of issues, objects of nine members with strings (one escaped, one
// non-ASCII), integers, decimals, nulls and a small array.
func List(size int) []byte {
	states := []string{"open", "closed", "triaged"}
	authors := []string{"mlopez", "akim", "r.okafor", "j-nguyen"}
	b := []byte(`{"request_id":"` + RequestID + `","items":[`)
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

// ListContract returns the files of the contract List's value meets, tool
// bench_list, by file name: contract.yaml (with limits, YAML text such as
// "limits:\n  max_bytes: 8388608\n", or "" for the defaults, in its
// place), upstream.schema.json and agent.schema.json. The gate's and
// mutate's benchmarks load it.
func ListContract(limits string) map[string]string {
	return map[string]string{
		"contract.yaml": `tool: bench_list
version: "1.0.0"
description: Benchmark contract, a paged list of issues.
agent_schema: agent.schema.json
` + limits + `upstream_versions:
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
}

// SARIFSchema reads the official SARIF 2.1.0 JSON Schema the SARIF tests
// validate against: $AIRLOCK_SARIF_SCHEMA, or what make sarif-schema
// installs in .ci/node/sarif/sarif-2.1.0.json (the path is from a package
// folder one below the module root). A missing file is an error saying
// how to install it; the caller skips, or fails under CI=true.
func SARIFSchema() ([]byte, error) {
	b, err := os.ReadFile(SARIFSchemaPath())
	if err != nil {
		return nil, fmt.Errorf("the SARIF 2.1.0 JSON Schema is not installed (make sarif-schema, or set AIRLOCK_SARIF_SCHEMA): %w", err)
	}
	return b, nil
}

// SARIFSchemaPath is where SARIFSchema reads the schema.
func SARIFSchemaPath() string {
	if p := os.Getenv("AIRLOCK_SARIF_SCHEMA"); p != "" {
		return p
	}
	return filepath.Join("..", ".ci", "node", "sarif", "sarif-2.1.0.json")
}
