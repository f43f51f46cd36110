package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockdev/airlock/internal/testtree"
)

// airlock import mcp's exit codes: 2 for usage and bad input (an unknown
// tool, a text that is not JSON, a version that exists), 3 for a server
// that does not start, 0 written; and what it prints.
func TestImportMCPExitCodes(t *testing.T) {
	dir := t.TempDir()
	s, f := filepath.Join(dir, "schemas"), filepath.Join(dir, "fixtures")
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Main(context.Background(), append([]string{"import", "mcp", "--schemas", s, "--fixtures", f}, args...), Stdio{Out: &out, Err: &errb}, Options{})
		return code, out.String(), errb.String()
	}
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"--mcp-tool", "echo", "--", "node"}, ExitUsage},
		{[]string{"--tool", "Bad", "--mcp-tool", "echo", "--", "node"}, ExitUsage},
		{[]string{"--tool", "t", "--mcp-tool", "echo"}, ExitUsage},
		{[]string{"--tool", "t", "--mcp-tool", "echo", "--arguments", "[1]", "--", "node"}, ExitUsage},
		{[]string{"--tool", "t", "--mcp-tool", "echo", "--project", "x", "--", "node"}, ExitUsage},
		{[]string{"--tool", "t", "--mcp-tool", "echo", "--", filepath.Join(dir, "no-such-server")}, ExitInternal},
	} {
		if code, _, errs := run(c.args...); code != c.want {
			t.Errorf("import mcp %v: exit %d, want %d (%s)", c.args, code, c.want, errs)
		}
	}
	if _, err := os.Stat(s); err == nil {
		t.Errorf("a failed import left %s behind", s)
	}

	entry := testtree.MCPServerEntry(t, "server-everything", "AIRLOCK_MCP_EVERYTHING")
	server := []string{"--", "node", entry, "stdio"}
	code, _, errs := run(append([]string{"--tool", "t", "--mcp-tool", "get-structured-contnt"}, server...)...)
	if code != ExitUsage || !strings.Contains(errs, "closest first: get-structured-content") {
		t.Errorf("unknown tool: exit %d: %s", code, errs)
	}
	code, _, errs = run(append([]string{"--tool", "t", "--mcp-tool", "echo", "--arguments", `{"message":"hi"}`}, server...)...)
	if code != ExitUsage || !strings.Contains(errs, "not JSON") {
		t.Errorf("echo: exit %d: %s", code, errs)
	}
	ok := append([]string{"--tool", "weather", "--mcp-tool", "get-structured-content", "--arguments", `{"location":"Chicago"}`}, server...)
	code, out, errs := run(ok...)
	if code != ExitOK || !strings.Contains(out, "examples: 1 accepted, 0 near-miss") || !strings.Contains(out, "review: projection chose 3 top-level scalar fields") {
		t.Errorf("import: exit %d\n%s%s", code, out, errs)
	}
	if code, _, errs = run(ok...); code != ExitUsage || !strings.Contains(errs, "already exists") {
		t.Errorf("again: exit %d: %s", code, errs)
	}
	code, out, errs = run(append([]string{"--upstream-version", "v2"}, ok...)...)
	if code != ExitOK || !strings.Contains(out, "added upstream version beside v1") || !strings.Contains(out, "current is still v1") {
		t.Errorf("v2: exit %d\n%s%s", code, out, errs)
	}
	var out2, errb bytes.Buffer
	if code := Main(context.Background(), []string{"run", "--schemas", s, "--fixtures", f}, Stdio{Out: &out2, Err: &errb}, Options{}); code != ExitOK {
		t.Errorf("run over the imported tree: exit %d\n%s%s", code, out2.String(), errb.String())
	}
}
