package record

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"time"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/mcpclient"
	"github.com/airlockdev/airlock/redact"
	"github.com/airlockdev/airlock/semantic"
)

// Sample is one MCP tool result another program received (airlock proxy
// --record-sample), to be written as a recorded fixture.
type Sample struct {
	// Result is the raw CallToolResult, as the server sent it.
	Result []byte
	// Request is the request the result answered (id and context).
	Request semantic.Request
	// Server is the stdio server's command line; MCPTool the tool called.
	Server  []string
	MCPTool string
	// Received is when the result arrived; Duration how long the call took.
	Received time.Time
	Duration time.Duration
}

// WriteSample writes s as a recorded fixture of c's tool under
// fixturesDir/<tool>/<c's current version>/recorded/, named by the UTC
// time of receipt (a "-N" suffix when taken): the body with its secrets
// redacted by redactor (the body, the request context and the command
// line, as airlock record does), a sidecar with the gate's verdict on the
// result as received, all files or none, the fixture tree locked while
// writing. Errors: a folder that cannot be written (ErrUnwritable,
// fileio's), a body that cannot be redacted (ErrUpstream); nothing is
// written then.
func WriteSample(ctx context.Context, fixturesDir string, c *gate.Contract, redactor redact.Redactor, s Sample) (Result, error) {
	rec := &recorder{
		opts:     Options{FixturesDir: fixturesDir, Tool: c.Tool(), Redactor: redactor, MaxBytes: c.Limits().MaxBytes},
		contract: c, version: c.Current(),
	}
	defer rec.close()
	rec.dir = filepath.Join(fixturesDir, c.Tool(), rec.version, fixture.KindRecorded)
	if err := fixture.CheckWritable(fixturesDir, rec.dir); err != nil {
		return Result{}, err
	}
	taken, err := fixture.TakenNames(fixturesDir, rec.dir)
	if err != nil {
		return Result{}, err
	}
	name := s.Received.UTC().Format("20060102T150405Z")
	for n, base := 2, name; taken[name]; n++ {
		name = fmt.Sprintf("%s-%d", base, n)
	}
	argv, redacted := rec.redactArgv(s.Server)
	got := &capture{
		status: 200, contentType: "application/json", body: s.Result,
		source:   fmt.Sprintf("%s: tools/call %s", mcpclient.Source("", argv), s.MCPTool),
		redacted: redacted, mcpTool: s.MCPTool, received: s.Received, duration: s.Duration,
	}
	call := Call{Name: name, Request: s.Request}
	if err := fixture.CheckRequest(call.Request); err != nil {
		return Result{}, &gate.ConfigError{File: "record", Msg: err.Error()}
	}
	prov := &fixture.Provenance{
		Source: got.source, Time: got.received.UTC().Format(time.RFC3339Nano), DurationMS: got.duration.Milliseconds(),
		AirlockVersion: gate.Version, Redacted: got.redacted, MCPTool: got.mcpTool,
	}
	res := Result{Name: name}
	if res.Verdict, err = rec.judge(ctx, call, got, prov); err != nil {
		return res, err
	}
	red, found, warn, err := rec.redactBody(got)
	if err != nil {
		return res, err
	}
	prov.Redacted = append(prov.Redacted, found...)
	if warn != "" {
		res.Warnings = append(res.Warnings, warn)
	}
	sum := sha256.Sum256(red)
	prov.Size, prov.SHA256 = int64(len(red)), hex.EncodeToString(sum[:])
	rec.writeFixture(ctx, call, got, red, prov, &res)
	return res, res.Err
}
