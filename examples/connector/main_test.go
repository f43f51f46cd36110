package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
		code             int
	}{
		{"admitted", `{"order_id":"ord_42","state":"shipped","internal_note":"do not show"}`,
			`{"tool":"order_status","request_id":"req-1","outcome":"success","data":{"order_id":"ord_42","state":"shipped"}}`, 0},
		{"refused", `{"order_id":"ord_42","state":"lost","internal_note":"do not show"}`,
			`{"tool":"order_status","request_id":"req-1","outcome":"failure","error":{"code":"INVALID_RESPONSE","retryable":false}}`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "body.json")
			if err := os.WriteFile(file, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			if code := run([]string{file}, strings.NewReader(""), &stdout, &stderr); code != tc.code {
				t.Fatalf("exit code %d, want %d; stderr: %s", code, tc.code, stderr.String())
			}
			if got := strings.TrimSpace(stdout.String()); got != tc.want {
				t.Errorf("agent output\n%s\nwant\n%s", got, tc.want)
			}
			if strings.Contains(stdout.String(), "do not show") {
				t.Error("an uncontracted field reached the agent output")
			}
		})
	}
	var stdout, stderr bytes.Buffer
	if code := run(nil, strings.NewReader(`{"order_id":"ord_42","state":"open"}`), &stdout, &stderr); code != 0 {
		t.Fatalf("stdin: exit code %d; stderr: %s", code, stderr.String())
	}
}
