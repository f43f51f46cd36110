package proxy

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"

	"github.com/airlockdev/airlock/internal/sanitize"
)

// AuditMessage is the message of every audit line NewAuditLogger writes.
const AuditMessage = "airlock verdict"

// maxLabel is the most bytes of a tool name or reason an audit line
// carries outside the audit record (which the gate already capped).
const maxLabel = 256

// NewAuditLogger returns an Observe function that writes one JSON line
// per observation to w with log/slog's JSON handler: time, level (INFO;
// WARN when refused or upstream_unavailable), msg AuditMessage, tool,
// mode, outcome, reason (when refused), latency_us, bytes, and audit —
// the gate's audit record (gate.AuditRecord's JSON form, already redacted
// and capped by the gate) when the result was checked. Tool and reason
// are sanitised (control characters escaped) and capped at 256 bytes. A
// line is at most a few KiB: the audit record's message and locations are
// capped by the gate.
//
// It is safe for concurrent use: slog's handler writes each line with one
// Write call under its lock. A write error loses that line only (the
// proxy goes on); NewAuditLoggerOf gives the same logger with the count
// of lost lines (AuditLogger.Dropped). A writer that blocks blocks the
// call: give it a file or stderr, not an unread pipe.
func NewAuditLogger(w io.Writer) func(Observation) {
	return NewAuditLoggerOf(w).Observe
}

// AuditLogger is NewAuditLogger's logger with its count of lost lines.
type AuditLogger struct {
	logger  *slog.Logger
	dropped atomic.Int64
}

// NewAuditLoggerOf returns the AuditLogger NewAuditLogger's function
// belongs to.
func NewAuditLoggerOf(w io.Writer) *AuditLogger {
	a := &AuditLogger{}
	a.logger = slog.New(slog.NewJSONHandler(&countingWriter{w: w, failed: &a.dropped}, nil))
	return a
}

// Dropped is the number of lines a write error lost.
func (a *AuditLogger) Dropped() int64 { return a.dropped.Load() }

// Observe writes o's line.
func (a *AuditLogger) Observe(o Observation) {
	level := slog.LevelInfo
	if o.Outcome == OutcomeRefused || o.Outcome == OutcomeUpstreamUnavailable {
		level = slog.LevelWarn
	}
	attrs := make([]slog.Attr, 0, 7)
	attrs = append(attrs,
		slog.String("tool", sanitize.Text(o.Tool, maxLabel, sanitize.Escape)),
		slog.String("mode", sanitize.Text(string(o.Mode), maxLabel, sanitize.Escape)),
		slog.String("outcome", sanitize.Text(o.Outcome, maxLabel, sanitize.Escape)))
	if o.Reason != "" {
		attrs = append(attrs, slog.String("reason", sanitize.Text(o.Reason, maxLabel, sanitize.Escape)))
	}
	attrs = append(attrs, slog.Int64("latency_us", o.Latency.Microseconds()), slog.Int("bytes", o.Bytes))
	if o.Audit != nil {
		attrs = append(attrs, slog.Any("audit", o.Audit))
	}
	a.logger.LogAttrs(context.Background(), level, AuditMessage, attrs...)
}

// countingWriter counts the failed writes of w.
type countingWriter struct {
	w      io.Writer
	failed *atomic.Int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err != nil {
		c.failed.Add(1)
	}
	return n, err
}
