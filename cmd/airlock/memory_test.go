package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The memory battery: airlock check on hostile bodies of about 16 MiB (the
// contract's max_bytes) under `ulimit -v 1048576` (1 GiB of address
// space). Each must end with its documented verdict code (0 admitted, 1
// refused) and the envelope on standard output, never with the runtime's
// out-of-memory exit. It measures no time; each check gets
// memBatteryTimeout to finish. The Go runtime reserves much of that
// address space for itself at start: a check that runs out does so with
// about 220-260 MiB of heap in use (Go 1.26, linux/amd64).

// memBatteryLimitKiB is the address-space limit, in KiB, of each check.
const memBatteryLimitKiB = 1 << 20

// memBatteryTimeout bounds one check.
const memBatteryTimeout = 60 * time.Second

// memBodySize is the size every body stays under: the contract's max_bytes.
const memBodySize = 16 << 20

// memBranches is the number of branches of the items' oneOf.
const memBranches = 16

// memContract returns the files of the battery contract: 16 MiB bodies,
// the other limits at their defaults (depth 64, strings of 64 KiB); each
// body fills one member of the top-level object.
func memContract() map[string]string {
	var refs, defs []string
	for j := range memBranches {
		refs = append(refs, fmt.Sprintf(`{"$ref": "#/$defs/b%d"}`, j))
		defs = append(defs, fmt.Sprintf(`"b%d": {"type": "object", "required": ["kind", "id", "name", "size"], "additionalProperties": false,
      "properties": {"kind": {"const": "kind_%d"}, "id": {"type": "integer", "minimum": 0}, "name": {"type": "string", "maxLength": 64},
        "size": {"type": "number", "minimum": 0}, "tags": {"type": "array", "maxItems": 8, "items": {"type": "string"}}}}`, j, j))
	}
	return map[string]string{
		"contract.yaml": `tool: battery
version: "1"
agent_schema: agent.schema.json
limits:
  max_bytes: 16777216
upstream_versions:
  v1:
    schema: upstream.schema.json
    projection:
      label: /label
`,
		"upstream.schema.json": `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "required": ["label"],
  "additionalProperties": false,
  "properties": {
    "label": {"type": "string"},
    "items": {"type": "array", "items": {"oneOf": [` + strings.Join(refs, ", ") + `]}},
    "nest": {"$ref": "#/$defs/tree"},
    "members": {"type": "object", "propertyNames": {"maxLength": 16}, "additionalProperties": {"type": "integer"}},
    "texts": {"type": "array", "items": {"type": "string", "maxLength": 65536}}
  },
  "$defs": {
    "tree": {"type": ["array", "string"], "items": {"$ref": "#/$defs/tree"}},
    ` + strings.Join(defs, ",\n    ") + `
  }
}
`,
		"agent.schema.json": `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "required": ["label"],
  "additionalProperties": false,
  "properties": {"label": {"type": "string"}}
}
`,
	}
}

// memBody returns {"label":"battery","<member>":[ unit(0), unit(1), ... ]}
// (or {...} when open is "{"), as many units as keep it within
// memBodySize.
func memBody(member, open string, unit func(b []byte, i int) []byte) []byte {
	closing := map[string]string{"[": "]", "{": "}"}[open]
	b := make([]byte, 0, memBodySize)
	b = append(b, `{"label":"battery","`+member+`":`+open...)
	for i := 0; ; i++ {
		n := len(b)
		if i > 0 {
			b = append(b, ',')
		}
		b = unit(b, i)
		if len(b)+len(closing)+1 > memBodySize {
			b = b[:n]
			break
		}
	}
	return append(b, closing+"}"...)
}

// The hostile bodies.
var memCases = []struct {
	name string
	body func() []byte
	// admitted is the verdict: exit 0 and outcome success, or exit 1 and
	// outcome failure.
	admitted bool
}{
	{
		// Every item matches the branch its kind names: the oneOf tries
		// all 16 branches on each item, and passes.
		"oneOf per item admitted", func() []byte {
			return memBody("items", "[", func(b []byte, i int) []byte {
				b = append(b, `{"kind":"kind_`...)
				b = strconv.AppendInt(b, int64(i%memBranches), 10)
				b = append(b, `","id":`...)
				b = strconv.AppendInt(b, int64(i), 10)
				return append(b, `,"name":"item","size":7.5,"tags":["a"]}`...)
			})
		}, true,
	},
	{
		// Every item names one branch's kind and breaks it: each fails all
		// 16 branches.
		"oneOf per item refused", func() []byte {
			return memBody("items", "[", func(b []byte, i int) []byte {
				b = append(b, `{"kind":"kind_`...)
				b = strconv.AppendInt(b, int64(i%memBranches), 10)
				b = append(b, `","id":`...)
				b = strconv.AppendInt(b, int64(i), 10)
				if i%2 == 0 {
					return append(b, `,"name":"item","size":"7.5","tags":["a","b"]}`...)
				}
				return append(b, `,"name":"item","size":7.5,"tags":["a"],"note":"x"}`...)
			})
		}, false,
	},
	{
		// Trees of arrays reaching the depth limit, 64: the top-level
		// object and "nest" are two levels, each tree 62 more, with a
		// string of 1,000 bytes at its bottom (about 14,500 trees, 900,000
		// arrays; trees of bare brackets, 8 million arrays, would cost the
		// parse stage alone about 320 MiB of live heap).
		"nesting at the depth limit", func() []byte {
			tree := strings.Repeat("[", 62) + `"` + strings.Repeat("deep", 250) + `"` + strings.Repeat("]", 62)
			return memBody("nest", "[", func(b []byte, _ int) []byte { return append(b, tree...) })
		}, true,
	},
	{
		"many small members", func() []byte {
			return memBody("members", "{", func(b []byte, i int) []byte {
				b = append(b, `"m`...)
				b = strconv.AppendInt(b, int64(i), 36)
				b = append(b, `":`...)
				return strconv.AppendInt(b, int64(i%1000), 10)
			})
		}, true,
	},
	{
		// Strings of 65,536 bytes once unescaped (the default
		// max_string_length), with escapes and two-byte characters: each
		// "ab\u00e9cd" is six bytes, and "wxyz" makes up the rest.
		"long strings", func() []byte {
			text := `"` + strings.Repeat(`ab\u00e9cd`, 65536/6) + `wxyz"`
			return memBody("texts", "[", func(b []byte, _ int) []byte { return append(b, text...) })
		}, true,
	},
}

func TestMemoryBattery(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the memory battery checks four 16 MiB bodies")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash here to set ulimit -v")
	}
	bin := airlockBin(t)
	work := t.TempDir()
	dir := filepath.Join(work, "schemas", "battery")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range memContract() {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range memCases {
		t.Run(c.name, func(t *testing.T) {
			body := filepath.Join(work, fmt.Sprintf("body-%d.json", i))
			b := c.body()
			if err := os.WriteFile(body, b, 0o644); err != nil {
				t.Fatal(err)
			}
			audit := filepath.Join(work, fmt.Sprintf("audit-%d.jsonl", i))
			ctx, cancel := context.WithTimeout(context.Background(), memBatteryTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, bash, "-c", fmt.Sprintf(`ulimit -v %d; exec "$0" "$@"`, memBatteryLimitKiB),
				bin, "check", "--schemas", filepath.Join(work, "schemas"), "--tool", "battery", "--request-id", "req.M3mBattery",
				"--clock", "2025-07-01T00:00:00Z", "--audit", audit, body)
			// With cgo, glibc gives each thread that calls malloc an arena
			// of its own, 64 MiB of reserved address space that ulimit -v
			// counts though it is never touched: one arena leaves the 1 GiB
			// to the Go heap (without it even airlock version fails now
			// and then under this limit).
			cmd.Env = append(os.Environ(), "MALLOC_ARENA_MAX=1")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			err := cmd.Run()
			took := time.Since(start).Round(time.Millisecond)
			code := 0
			var ee *exec.ExitError
			switch {
			case ctx.Err() != nil:
				t.Fatalf("%d-byte body: airlock check did not end within %v", len(b), memBatteryTimeout)
			case errors.As(err, &ee):
				code = ee.ExitCode()
			case err != nil:
				t.Fatal(err)
			}
			want, outcome := 1, "failure"
			if c.admitted {
				want, outcome = 0, "success"
			}
			t.Logf("%d-byte body: exit %d after %v", len(b), code, took)
			if code != want {
				t.Fatalf("%d-byte body under ulimit -v %d: exit %d, want %d; standard error begins:\n%s\ngoroutine 1 was in:\n%s", len(b), memBatteryLimitKiB, code, want, head(stderr.String(), 300), frames(stderr.String(), 6))
			}
			var env struct {
				Tool      string `json:"tool"`
				RequestID string `json:"request_id"`
				Outcome   string `json:"outcome"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &env); err != nil || env.Tool != "battery" || env.RequestID != "req.M3mBattery" || env.Outcome != outcome {
				t.Errorf("standard output is not the %s envelope (%v):\n%s", outcome, err, head(stdout.String(), 500))
			}
			record, err := os.ReadFile(audit)
			if err != nil {
				t.Fatal(err)
			}
			var rec struct {
				Outcome, Stage, Reason string
			}
			if err := json.Unmarshal(record, &rec); err != nil {
				t.Fatalf("audit record: %v\n%s", err, record)
			}
			if !c.admitted && rec.Stage != "schema" {
				t.Errorf("refused at stage %q (%s), want the schema stage", rec.Stage, rec.Reason)
			}
		})
	}
}

// frames returns the first n functions of goroutine 1's stack in a Go
// crash report that are not the runtime's: where the memory ran out.
func frames(report string, n int) string {
	_, stack, ok := strings.Cut(report, "\ngoroutine 1 ")
	if !ok {
		return "(no stack)"
	}
	_, stack, _ = strings.Cut(stack, "\n")
	var out []string
	for line := range strings.Lines(stack) {
		if len(out) == n || strings.HasPrefix(line, "goroutine ") {
			break
		}
		if line != "" && line[0] != '\t' && !strings.HasPrefix(line, "runtime.") && !strings.HasPrefix(line, "math/big.") {
			out = append(out, "\t"+strings.TrimSpace(line))
		}
	}
	return strings.Join(out, "\n")
}

// head returns the first n bytes of s.
func head(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
