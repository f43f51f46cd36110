package gate

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Mode is what a caller does with a verdict (DESIGN.md "mode"): ModeStrict, the default, gives the agent the verdict's Output; ModeWarn (shadow) gives the agent the original result and only logs and counts the verdict; ModeOff does not check.
type Mode string

const (
	ModeStrict Mode = "strict"
	ModeWarn   Mode = "warn"
	ModeOff    Mode = "off"
)

// ParseMode reads "strict", "warn" or "off"; "" is ModeStrict. Anything else is an error naming the three.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", ModeStrict:
		return ModeStrict, nil
	case ModeWarn, ModeOff:
		return Mode(s), nil
	}
	return "", fmt.Errorf("unknown mode %q: want strict, warn or off", s)
}

// The outcomes of an Observation (Observation.Outcome) and of the audit
// record of a contract in ModeOff (AuditRecord.Outcome "passed").
const (
	// OutcomeAdmitted: every stage passed (the audit record's "success").
	OutcomeAdmitted = "admitted"
	// OutcomeRefused: a stage refused the response (the audit record's
	// "failure"); Observation.Reason says why.
	OutcomeRefused = "refused"
	// OutcomePassed: the contract is in ModeOff and Check did not check.
	OutcomePassed = "passed"
)

// Observation is one verdict as a metrics hook sees it (Options.Observe):
// small, copied by value, with no byte of the response.
type Observation struct {
	// Tool is the contract's tool name.
	Tool string
	// Mode is the contract's mode (Contract.Mode).
	Mode Mode
	// Outcome is OutcomeAdmitted, OutcomeRefused or OutcomePassed.
	Outcome string
	// Reason is the verdict's reason code when refused (a registered
	// reason, see Reasons, or upstream.<name> / semantic.<name> from the
	// contract); "" otherwise.
	Reason string
	// Latency is the wall time inside Check; 0 in ModeOff.
	Latency time.Duration
	// Bytes is the number of decoded body bytes the gate read (at most
	// the byte limit plus one); 0 in ModeOff, where the body is not read.
	Bytes int
}

// Mode is the contract's mode (Options.Mode when loaded, or WithMode):
// ModeStrict, ModeWarn or ModeOff, never "".
func (c *Contract) Mode() Mode { return c.mode }

// WithMode returns a copy of c that runs in mode m (a per-tool mode from a
// proxy configuration, say); c itself is unchanged, and both share the
// compiled schemas. "" is ModeStrict; a mode ParseMode does not accept is
// an error wrapping ErrUsage.
func (c *Contract) WithMode(m Mode) (*Contract, error) {
	m, err := ParseMode(string(m))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	cp := *c
	cp.mode = m
	return &cp, nil
}

// Enforced reports whether the agent must get Output instead of the
// upstream's original result: true in ModeStrict, false in ModeWarn and
// ModeOff.
func (v *Verdict) Enforced() bool { return v.Mode == ModeStrict || v.Mode == "" }

// AgentOutput is what a connector hands the agent for this verdict:
// Output in ModeStrict (the success or the failure envelope), original
// unchanged in ModeWarn (the verdict is only logged and counted) and in
// ModeOff (nothing was checked). A nil Verdict gives original.
func (v *Verdict) AgentOutput(original []byte) []byte {
	if v == nil || !v.Enforced() {
		return original
	}
	return v.Output
}

// passed is Check's verdict in ModeOff: not read, not checked, the
// original result passes. Its audit record names the call and the outcome
// "passed"; Output is nil.
func (c *Contract) passed(call Call, name string, now time.Time) *Verdict {
	v := &Verdict{Mode: ModeOff}
	v.Audit = AuditRecord{
		Time:            now.UTC().Format(time.RFC3339Nano),
		Tool:            c.tool,
		ContractVersion: c.version,
		UpstreamVersion: name,
		RequestID:       call.Request.ID,
		Outcome:         OutcomePassed,
		Offset:          -1,
		AirlockVersion:  Version,
	}
	return v
}

// observe reports v to the contract's hooks (Options.Observe,
// Options.Logger); it does nothing, and allocates nothing, when both are
// nil.
func (c *Contract) observe(ctx context.Context, v *Verdict, latency time.Duration) {
	if c.observeFn == nil && c.logger == nil {
		return
	}
	o := Observation{Tool: c.tool, Mode: c.mode, Latency: latency, Bytes: len(v.Body)}
	switch {
	case v.Mode == ModeOff:
		o.Outcome = OutcomePassed
	case v.Admitted:
		o.Outcome = OutcomeAdmitted
	default:
		o.Outcome, o.Reason = OutcomeRefused, v.Reason
	}
	if c.observeFn != nil {
		c.observeFn(o)
	}
	if c.logger != nil {
		level := slog.LevelInfo
		if o.Outcome == OutcomeRefused {
			level = slog.LevelWarn
		}
		c.logger.LogAttrs(ctx, level, AuditMessage,
			slog.String("mode", string(o.Mode)),
			slog.String("outcome", o.Outcome),
			slog.Int64("latency_us", latency.Microseconds()),
			slog.Any("audit", v.Audit))
	}
}

// AuditMessage is the message of the log line Options.Logger gets per
// verdict.
const AuditMessage = "airlock verdict"
