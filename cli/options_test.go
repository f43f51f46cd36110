package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/semantic"
)

// cancelCount refuses an order cancelled more than once (the same rule as
// gate's example, registered here through cli.Options).
type cancelCount struct{}

func (cancelCount) Name() string { return "cancel_count" }

func (cancelCount) Check(in semantic.Input) *semantic.Violation {
	n, ok := jsonpointer.Pointer{"cancellations"}.Lookup(in.Value)
	if num, _ := n.(json.Number); ok && num != "0" && num != "1" {
		return &semantic.Violation{Pointer: "/cancellations", Message: "cancelled more than once"}
	}
	return nil
}

// Custom rules given to Main reach every subcommand that loads contracts:
// without them the contract naming "custom: cancel_count" is a
// configuration error (2); with them check refuses (1) under the rule's
// name in the manifest, and run checks a near-miss expecting that reason.
func TestCustomRulesReachTheCommands(t *testing.T) {
	dir := t.TempDir()
	schemas := filepath.Join(dir, "schemas")
	if err := os.CopyFS(filepath.Join(schemas, "order_status"), os.DirFS("../gate/testdata/contracts/order_status")); err != nil {
		t.Fatal(err)
	}
	body := filepath.Join(dir, "twice.json")
	twice := `{"order_id":"ord_42","state":"cancelled","cancellations":2}`
	if err := os.WriteFile(body, []byte(twice), 0o644); err != nil {
		t.Fatal(err)
	}
	check := []string{"check", "--schemas", schemas, "--tool", "order_status", "--request-id", "r1", "--context", "order=ord_42", body}
	rules := Options{Rules: map[string]semantic.Rule{"cancel_count": cancelCount{}}}

	var errb bytes.Buffer
	if got := Main(context.Background(), check, Stdio{Err: &errb}, Options{}); got != ExitUsage {
		t.Errorf("check without the rule: exit %d, want %d (%s)", got, ExitUsage, errb.String())
	}
	errb.Reset()
	if got := Main(context.Background(), check, Stdio{Err: &errb}, rules); got != ExitFindings || !strings.Contains(errb.String(), `"reason":"semantic.not_cancelled_twice"`) {
		t.Errorf("check with the rule: exit %d, want %d and the rule's reason in the audit (%s)", got, ExitFindings, errb.String())
	}

	once := filepath.Join(dir, "once.json")
	if err := os.WriteFile(once, []byte(`{"order_id":"ord_42","state":"cancelled","cancellations":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	admit := append(check[:len(check)-1:len(check)-1], once)
	if got := Main(context.Background(), admit, Stdio{Err: &errb}, rules); got != ExitOK {
		t.Errorf("check with the rule, a body it passes: exit %d, want %d (%s)", got, ExitOK, errb.String())
	}

	near := filepath.Join(dir, "fixtures", "order_status", "v1", "near-miss")
	if err := os.MkdirAll(near, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"twice.json":      twice,
		"twice.meta.yaml": "request: {id: r1, context: {order: ord_42}}\nexpect: {reason: semantic.not_cancelled_twice}\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(near, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	run := []string{"run", "--schemas", schemas, "--fixtures", filepath.Join(dir, "fixtures")}
	if got := Main(context.Background(), run, Stdio{Out: &out, Err: &errb}, rules); got != ExitOK {
		t.Errorf("run with the rule: exit %d, want %d\n%s%s", got, ExitOK, out.String(), errb.String())
	}
}
