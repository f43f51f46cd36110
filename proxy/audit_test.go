package proxy_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/proxy"
)

func TestAuditLoggerLines(t *testing.T) {
	var buf bytes.Buffer
	log := proxy.NewAuditLogger(&buf)
	rec := &gate.AuditRecord{Tool: "review_status", RequestID: "r-1", Outcome: "failure", Stage: "parse", Reason: "parse.duplicate_member", InstanceLocation: "/a", Offset: 17, Message: "duplicate member \"a\""}
	log(proxy.Observation{Tool: "review_status", Mode: gate.ModeWarn, Outcome: proxy.OutcomeRefused, Reason: "parse.duplicate_member", Latency: 1500 * time.Microsecond, Bytes: 42, Audit: rec})
	log(proxy.Observation{Tool: "evil\n\x1b[31mtool", Mode: gate.ModeStrict, Outcome: proxy.OutcomeUpstreamUnavailable})
	log(proxy.Observation{Tool: "review_status", Mode: gate.ModeStrict, Outcome: proxy.OutcomeAdmitted, Bytes: 2048})

	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), buf.String())
	}
	type line struct {
		Time, Level, Msg, Tool, Mode, Outcome, Reason string
		LatencyUS                                     int64           `json:"latency_us"`
		Bytes                                         int             `json:"bytes"`
		Audit                                         json.RawMessage `json:"audit"`
	}
	var got [3]line
	for i, l := range lines {
		if err := json.Unmarshal([]byte(l), &got[i]); err != nil {
			t.Fatalf("line %d is not JSON: %v: %s", i+1, err, l)
		}
		if got[i].Msg != proxy.AuditMessage || got[i].Time == "" {
			t.Errorf("line %d: msg %q time %q", i+1, got[i].Msg, got[i].Time)
		}
	}
	g := got[0]
	if g.Level != "WARN" || g.Tool != "review_status" || g.Mode != "warn" || g.Outcome != "refused" || g.Reason != "parse.duplicate_member" || g.LatencyUS != 1500 || g.Bytes != 42 {
		t.Errorf("line 1: %+v", g)
	}
	var audit map[string]any
	if err := json.Unmarshal(g.Audit, &audit); err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(rec.JSON(), &want); err != nil {
		t.Fatal(err)
	}
	if a, b := mustJSON(t, audit), mustJSON(t, want); a != b {
		t.Errorf("audit field:\n%s\nwant the record's JSON form:\n%s", a, b)
	}
	if got[1].Level != "WARN" || strings.ContainsAny(got[1].Tool, "\n\x1b") || got[1].Audit != nil {
		t.Errorf("line 2 (hostile tool name, unavailable): %+v", got[1])
	}
	if got[2].Level != "INFO" || got[2].Reason != "" || got[2].Audit != nil {
		t.Errorf("line 3: %+v", got[2])
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestAuditLoggerWriteErrorDrops(t *testing.T) {
	a := proxy.NewAuditLoggerOf(failWriter{})
	a.Observe(proxy.Observation{Tool: "x", Outcome: proxy.OutcomeAdmitted})
	a.Observe(proxy.Observation{Tool: "x", Outcome: proxy.OutcomeAdmitted})
	if a.Dropped() != 2 {
		t.Errorf("Dropped %d, want 2", a.Dropped())
	}
}

// syncBuffer is a bytes.Buffer whose Writes a test can race against.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	n   int
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return s.buf.Write(p)
}

func TestAuditLoggerConcurrentWholeLines(t *testing.T) {
	var sb syncBuffer
	log := proxy.NewAuditLogger(&sb)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				log(proxy.Observation{Tool: "t", Outcome: proxy.OutcomeRefused, Reason: "schema.type", Audit: &gate.AuditRecord{Message: strings.Repeat("m", 500)}})
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(sb.buf.String(), "\n"), "\n")
	if len(lines) != 800 || sb.n != 800 {
		t.Fatalf("%d lines in %d writes, want 800 in 800", len(lines), sb.n)
	}
	for i, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("line %d is not one JSON object: %.80s", i+1, l)
		}
	}
}
