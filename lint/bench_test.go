package lint_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/lint"
)

// wideContract writes a contract whose upstream schema, one line of JSON,
// has n object members, each an object holding an unbounded string, an
// unbounded integer and an unbounded array: three findings per member,
// every one placed at its line and column.
func wideContract(b *testing.B, n int) string {
	props := map[string]any{}
	for i := range n {
		props[fmt.Sprintf("m%05d", i)] = map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{
			"s": map[string]any{"type": "string"}, "i": map[string]any{"type": "integer"}, "a": map[string]any{"type": "array", "items": map[string]any{"type": "boolean"}},
		}}
	}
	up, _ := json.Marshal(map[string]any{"type": "object", "additionalProperties": false, "properties": props})
	agent := `{"type":"object","additionalProperties":false,"properties":{"x":{"type":"string","maxLength":5}}}`
	dir := filepath.Join(b.TempDir(), "wide")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	files := map[string]string{"upstream.v1.schema.json": string(up), "agent.schema.json": agent,
		gate.ManifestFile: "tool: wide\nversion: \"1\"\nagent_schema: agent.schema.json\nupstream_versions:\n  v1:\n    schema: upstream.v1.schema.json\n    projection: {x: /m00000/s}\n"}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return filepath.Dir(dir)
}

// BenchmarkLint lints a contract of 2,000 members (6,000 findings) and
// reports the ratio of lint's time to the time the gate takes to load the
// same contract (x-load): lint must stay a fraction of loading, whatever
// the number of findings.
func BenchmarkLint(b *testing.B) {
	root := wideContract(b, 2000)
	start := time.Now()
	set, err := fixture.Open(root, "", fixture.Filter{}, gate.Options{})
	if err != nil {
		b.Fatal(err)
	}
	load := time.Since(start)
	b.ResetTimer()
	for b.Loop() {
		l, err := lint.Lint(context.Background(), lint.Input{Contracts: set.List})
		if err != nil {
			b.Fatal(err)
		}
		if len(l.Findings) != 6000 {
			b.Fatalf("%d findings, want 6000", len(l.Findings))
		}
	}
	b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(load), "x-load")
}
