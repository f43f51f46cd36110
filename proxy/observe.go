package proxy

import (
	"time"

	"github.com/airlockdev/airlock/gate"
)

// Observation is one verdict as metrics and logs see it.
type Observation struct {
	Tool    string // the MCP tool name
	Mode    gate.Mode
	Outcome string            // "admitted", "refused", "passed" (no contract / off), "upstream_unavailable"
	Reason  string            // the gate's reason code when refused ("" otherwise)
	Latency time.Duration     // time inside the gate (Check), 0 when not checked
	Bytes   int               // size of the upstream result in bytes
	Audit   *gate.AuditRecord // the verdict's audit record; nil when not checked
}
