package redact_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockdev/airlock/redact"
)

// BenchmarkText redacts 1 MiB texts: a log holding a few secrets, and the
// worst cases found for each rule (repeated names, parameters, schemes,
// references, base64 lines, anchors); all are linear in the input.
func BenchmarkText(b *testing.B) {
	line := "2026-12-01T12:00:00Z INFO request id=req.J7q94MkP user=ana path=/v1/items?page=2 took 12ms\n"
	logText := strings.Repeat(line, (1<<20)/len(line)) + "token=sk-proj-4fQ9xLm2Vb7Kc1Zp8RtY3wNe\n"
	names := strings.Repeat("password=", (1<<20)/9)
	rep := func(u string) string { return strings.Repeat(u, (1<<20)/len(u)) }
	// The hostile reviews' worst cases, each once quadratic: repeated URL
	// parameters, schemes after a name on one line, character
	// references, base64 lines, YAML anchors.
	for _, tc := range []struct{ name, text string }{
		{"log", logText}, {"names", names}, {"params", rep("&token=")}, {"schemes", rep("Authorization: Bearer ")},
		{"entities", rep("&#")}, {"base64-lines", rep(strings.Repeat("QUFB", 15) + "\n")}, {"anchors", rep("password: &")},
		{"escaped-quotes", rep(`password=\"`)}, {"flags", rep(" -u a:b --password x")}, {"matrix", rep(";password=")},
	} {
		b.Run(tc.name, func(b *testing.B) {
			r := &redact.Redactor{}
			b.SetBytes(int64(len(tc.text)))
			b.ReportAllocs()
			for range b.N {
				r.Text(tc.text)
			}
		})
	}
}

// BenchmarkBody redacts the bundled accepted fixture bodies as one JSON
// array (no secrets: the common case, where the body comes back as it is).
func BenchmarkBody(b *testing.B) {
	var body bytes.Buffer
	files, _ := filepath.Glob("../fixtures/*/*/accepted/*.json")
	body.WriteString("[")
	for i, f := range files {
		if strings.HasSuffix(f, ".agent.json") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		if i > 0 {
			body.WriteString(",")
		}
		body.Write(data)
	}
	body.WriteString("]")
	if len(files) == 0 {
		b.Fatal("no bundled fixtures found")
	}
	r := &redact.Redactor{}
	b.SetBytes(int64(body.Len()))
	b.ReportAllocs()
	for range b.N {
		r.Body(body.Bytes())
	}
}
