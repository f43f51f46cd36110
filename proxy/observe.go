// Package proxy is the MCP (and HTTP) proxy that gates tool results in
// production: it stands between an agent and an MCP server, runs each
// contracted tool's results through the gate (package gate) in the tool's
// mode, and reports every verdict to the operator as metrics (Metrics) and
// one audit line per verdict (NewAuditLogger). Its contracts are loaded
// from a schemas folder and swapped whole on reload (Contracts).
package proxy

import (
	"time"

	"github.com/airlockdev/airlock/gate"
)

// The outcomes of an Observation (Observation.Outcome).
const (
	// OutcomeAdmitted: the gate admitted the result.
	OutcomeAdmitted = gate.OutcomeAdmitted
	// OutcomeRefused: the gate refused the result; Observation.Reason
	// says why. In gate.ModeWarn the agent still got the original.
	OutcomeRefused = gate.OutcomeRefused
	// OutcomePassed: not checked (no contract, or gate.ModeOff).
	OutcomePassed = gate.OutcomePassed
	// OutcomeUpstreamUnavailable: the server crashed, hung or answered
	// garbage; the agent got an UPSTREAM_UNAVAILABLE failure envelope.
	OutcomeUpstreamUnavailable = "upstream_unavailable"
)

// Observation is one verdict as metrics and logs see it: the proxy calls
// its Options.Observe once per tools/call result of a contracted tool and
// once per call the upstream could not answer.
type Observation struct {
	Tool    string // the MCP tool name
	Mode    gate.Mode
	Outcome string            // "admitted", "refused", "passed" (no contract / off), "upstream_unavailable"
	Reason  string            // the gate's reason code when refused ("" otherwise)
	Latency time.Duration     // time inside the gate (Check), 0 when not checked
	Bytes   int               // size of the upstream result in bytes
	Audit   *gate.AuditRecord // the verdict's audit record; nil when not checked
}
