// Package semantic holds the checks a JSON Schema cannot express, kept apart
// from the schema so that a refusal says which layer to fix: binding a
// response to the request that asked for it, matching request context,
// freshness against a clock, membership, and custom rules. It also holds the
// strict RFC 3339 parser (ParseTimestamp), which the gate reuses for its
// date-time format checker. Rules name locations with RFC 6901 JSON
// Pointers from package jsonpointer.
//
// Rules read a value that already passed the schema stage; a rule that finds
// its field missing or of the wrong type reports a violation rather than
// assuming a default.
package semantic

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/airlockdev/airlock/jsonpointer"
)

// Request is the outstanding call the adapter made. ID is minted by the
// adapter, never taken from the upstream; Context holds the call's
// parameters by name (project, change_id, …).
type Request struct {
	ID      string            `json:"id" yaml:"id"`
	Context map[string]string `json:"context,omitempty" yaml:"context"`
}

// Input is what a rule checks: the schema-valid value (map[string]any,
// []any, string, json.Number, bool or nil), the request and the clock's now.
type Input struct {
	Value   any
	Request Request
	Now     time.Time
}

// Violation says why a rule refused. Rule is the rule's name (the reason is
// "semantic." + Rule), Pointer the RFC 6901 location in the value, Message
// an operator-facing sentence.
type Violation struct {
	Rule    string
	Pointer string
	Message string
}

// Rule is one semantic check. Name must match ^[a-z][a-z0-9_]{0,63}$ and be
// unique within a contract version. Check returns nil when the value passes.
// Check must not retain in, and must be safe for concurrent use.
type Rule interface {
	Name() string
	Check(in Input) *Violation
}

var ruleName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// ValidName reports whether s is a valid rule name.
func ValidName(s string) bool { return ruleName.MatchString(s) }

// Binding requires the string at Pointer to equal the request's ID: the
// upstream echoed the call it answers. An empty request ID never matches.
type Binding struct {
	RuleName string
	Pointer  jsonpointer.Pointer
}

// Name implements Rule.
func (r Binding) Name() string { return r.RuleName }

// Check implements Rule.
func (r Binding) Check(in Input) *Violation {
	got, ok := r.Pointer.LookupString(in.Value)
	switch {
	case !ok:
		return r.violation("no string at the bound location")
	case in.Request.ID == "":
		return r.violation("the request has no id")
	case got != in.Request.ID:
		return r.violation(fmt.Sprintf("echoed request id %q differs from the request's %q", clip(got), clip(in.Request.ID)))
	}
	return nil
}

func (r Binding) violation(msg string) *Violation {
	return &Violation{Rule: r.RuleName, Pointer: r.Pointer.String(), Message: msg}
}

// ContextMatch requires the string at Pointer to equal the request's context
// value named Key (e.g. the response's project_id equals the requested
// project). A request without that key is a violation, never a pass.
type ContextMatch struct {
	RuleName string
	Pointer  jsonpointer.Pointer
	Key      string
}

// Name implements Rule.
func (r ContextMatch) Name() string { return r.RuleName }

// Check implements Rule.
func (r ContextMatch) Check(in Input) *Violation {
	v := func(msg string) *Violation {
		return &Violation{Rule: r.RuleName, Pointer: r.Pointer.String(), Message: msg}
	}
	want, ok := in.Request.Context[r.Key]
	if !ok {
		return v(fmt.Sprintf("the request has no context value %q", r.Key))
	}
	got, ok := r.Pointer.LookupString(in.Value)
	if !ok {
		return v("no string at the matched location")
	}
	if got != want {
		return v(fmt.Sprintf("%q differs from the requested %s %q", clip(got), r.Key, clip(want)))
	}
	return nil
}

// Freshness requires the RFC 3339 date-time at Pointer (parsed by
// ParseTimestamp) to be no older than MaxAge before the clock's now and no
// later than MaxSkew after it. MaxAge 0 means no age limit; MaxSkew 0 means
// no time in the future at all. A leap second (23:59:60 UTC) is judged as
// the last instant of its minute, 23:59:59.999999999, not as the next
// second.
type Freshness struct {
	RuleName string
	Pointer  jsonpointer.Pointer
	MaxAge   time.Duration
	MaxSkew  time.Duration
}

// Name implements Rule.
func (r Freshness) Name() string { return r.RuleName }

// Check implements Rule.
func (r Freshness) Check(in Input) *Violation {
	v := func(msg string) *Violation {
		return &Violation{Rule: r.RuleName, Pointer: r.Pointer.String(), Message: msg}
	}
	s, ok := r.Pointer.LookupString(in.Value)
	if !ok {
		return v("no string at the timestamp location")
	}
	t, err := ParseTimestamp(s)
	if err != nil {
		return v(err.Error())
	}
	if d := t.Sub(in.Now); d > r.MaxSkew {
		return v(fmt.Sprintf("timestamp is %s in the future (allowed skew %s)", d, r.MaxSkew))
	}
	if d := in.Now.Sub(t); r.MaxAge > 0 && d > r.MaxAge {
		return v(fmt.Sprintf("timestamp is %s old (max age %s)", d, r.MaxAge))
	}
	return nil
}

// Membership requires the string at Pointer to be one of the members the
// request lists under context Key, a comma-separated list (e.g. the runs
// known to belong to the requested project: "run_a,run_b"). Spaces around
// members are ignored; an empty or missing list admits nothing.
type Membership struct {
	RuleName string
	Pointer  jsonpointer.Pointer
	Key      string
}

// Name implements Rule.
func (r Membership) Name() string { return r.RuleName }

// Check implements Rule.
func (r Membership) Check(in Input) *Violation {
	v := func(msg string) *Violation {
		return &Violation{Rule: r.RuleName, Pointer: r.Pointer.String(), Message: msg}
	}
	list, ok := in.Request.Context[r.Key]
	if !ok {
		return v(fmt.Sprintf("the request has no context value %q", r.Key))
	}
	got, ok := r.Pointer.LookupString(in.Value)
	if !ok {
		return v("no string at the member location")
	}
	members := strings.Split(list, ",")
	for i := range members {
		members[i] = strings.TrimSpace(members[i])
	}
	if got == "" || !slices.Contains(members, got) {
		return v(fmt.Sprintf("%q is not a member of the request's %s", clip(got), r.Key))
	}
	return nil
}

// Check runs rules in order and returns the first violation, or nil.
func Check(rules []Rule, in Input) *Violation {
	for _, r := range rules {
		if v := r.Check(in); v != nil {
			if v.Rule == "" {
				v.Rule = r.Name()
			}
			return v
		}
	}
	return nil
}
