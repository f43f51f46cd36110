package gate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockdev/airlock/gate"
)

// The worst case of the benchmarks and of TestPeakRSS: a list whose items
// each fail a 16-branch oneOf, refused, beside a plain list of the same
// size (benchBody against the bench_list contract), admitted.

// worstTool is the contract of the refused side.
const worstTool = "worst_list"

// worstBranches is how many branches the item's oneOf has.
const worstBranches = 16

// worstSize is the size of both bodies, and 8 MiB the contracts' max_bytes.
const worstSize = 4 << 20

// worstFiles returns the files of the worst_list contract: every branch of
// the oneOf is a closed object told apart by the const of its member
// "kind", with a few typed members.
func worstFiles() map[string]string {
	var defs, refs []string
	for j := range worstBranches {
		refs = append(refs, fmt.Sprintf(`{"$ref": "#/$defs/b%d"}`, j))
		defs = append(defs, fmt.Sprintf(`    "b%d": {
      "type": "object",
      "required": ["kind", "id", "name", "size"],
      "additionalProperties": false,
      "properties": {
        "kind": {"const": "kind_%d"},
        "id": {"type": "integer", "minimum": 0},
        "name": {"type": "string", "maxLength": 64},
        "size": {"type": "number", "minimum": 0},
        "tags": {"type": "array", "maxItems": 8, "items": {"type": "string"}}
      }
    }`, j, j))
	}
	return map[string]string{
		gate.ManifestFile: `tool: worst_list
version: "1.0.0"
description: Benchmark contract, a list whose items are one of 16 shapes.
agent_schema: agent.schema.json
limits:
  max_bytes: 8388608
upstream_versions:
  v1:
    schema: upstream.schema.json
    projection:
      kinds: /items/*/kind
`,
		"upstream.schema.json": `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://airlock.invalid/worst_list/upstream.schema.json",
  "type": "object",
  "required": ["items"],
  "additionalProperties": false,
  "properties": {
    "items": {"type": "array", "items": {"oneOf": [` + strings.Join(refs, ", ") + `]}}
  },
  "$defs": {
` + strings.Join(defs, ",\n") + `
  }
}
`,
		"agent.schema.json": `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://airlock.invalid/worst_list/agent.schema.json",
  "type": "object",
  "required": ["kinds"],
  "additionalProperties": false,
  "properties": {
    "kinds": {"type": "array", "items": {"type": "string"}}
  }
}
`,
	}
}

// worstBody returns a worst_list value of at least size bytes whose items
// match no branch: an item names the kind of one branch but breaks it (a
// string size, or a member no branch has), so that each branch has
// something to look at before it fails.
func worstBody(size int) []byte {
	b := []byte(`{"items":[`)
	for i := 0; len(b) < size-40; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		k := i % worstBranches
		if i%2 == 0 {
			b = fmt.Appendf(b, `{"kind":"kind_%d","id":%d,"name":"item %d","size":"%d.5","tags":["a","b%d"]}`, k, i, i, i%1000, k)
		} else {
			b = fmt.Appendf(b, `{"kind":"kind_%d","id":%d,"name":"item %d","size":%d.5,"tags":["a"],"note":"x"}`, k, i, i, i%1000)
		}
	}
	return append(b, `]}`...)
}

// writeBenchFiles writes files into a new folder named tool under a
// temporary directory and returns the folder.
func writeBenchFiles(tb testing.TB, tool string, files map[string]string) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), tool)
	if err := os.Mkdir(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}
