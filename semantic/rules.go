// Package semantic holds the checks a JSON Schema cannot express, kept apart
// from the schema so that a refusal says which layer to fix: binding a
// response to the request that asked for it, matching request context,
// freshness against a clock, membership, array counts, CEL expressions and
// custom rules. It also holds the
// strict RFC 3339 parser (ParseTimestamp), which the gate reuses for its
// date-time format checker. Rules name locations with RFC 6901 JSON
// Pointers from package jsonpointer.
//
// Rules read a value that already passed the schema stage; a rule that finds
// its field missing or of the wrong type reports a violation rather than
// assuming a default. In the pointer of a binding, context, membership or
// freshness rule a token "*" stands for every element of an array: every
// element must pass (an empty array passes), and a violation names the
// first failing element's concrete location (/items/3/id).
package semantic

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/airlockdev/airlock/jsonpointer"
)

// Request is the outstanding call the adapter made. ID is minted by the
// adapter, never taken from the upstream; Context holds the call's
// parameters by name (project, change_id, …) as JSON scalars: a string, a
// json.Number, a bool or nil. A Go integer or finite float is read as a
// number too (see Equal), so Context: map[string]any{"user_id": 42} binds
// an integer id. Rules compare by type: the string "42" is not the number
// 42. A context decoded from YAML should go through NormalizeContext.
type Request struct {
	ID      string         `json:"id" yaml:"id"`
	Context map[string]any `json:"context,omitempty" yaml:"context"`
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

// ruleName is a rule or tool name, compiled at its first use: {0,63}
// makes a program of some 700 allocations, not for start-up to pay.
var ruleName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`) })

// ValidName reports whether s is a valid rule name.
func ValidName(s string) bool { return ruleName().MatchString(s) }

// Binding requires the string at Pointer to equal the request's ID: the
// upstream echoed the call it answers. An empty request ID never matches.
// A "*" token in Pointer requires every element to echo it.
type Binding struct {
	RuleName string
	Pointer  jsonpointer.Pointer
}

// Name implements Rule.
func (r Binding) Name() string { return r.RuleName }

// Check implements Rule.
func (r Binding) Check(in Input) *Violation {
	return each(r.RuleName, r.Pointer, in.Value, func(got any, ok bool) string {
		s, isString := got.(string)
		switch {
		case !ok || !isString:
			return "no string at the bound location"
		case in.Request.ID == "":
			return "the request has no id"
		case s != in.Request.ID:
			return fmt.Sprintf("echoed request id %q differs from the request's %q", clip(s), clip(in.Request.ID))
		}
		return ""
	})
}

// each runs check on the value at every location p reaches in value,
// expanding "*" tokens over arrays, and returns a violation at the first
// location whose check returns a message. check gets ok false when the
// location holds nothing. A "*" over something that is not an array is a
// violation at that location; a "*" over an empty array checks nothing.
func each(rule string, p jsonpointer.Pointer, value any, check func(v any, ok bool) string) *Violation {
	var walk func(v any, i int, at jsonpointer.Pointer) *Violation
	walk = func(v any, i int, at jsonpointer.Pointer) *Violation {
		for ; i < len(p); i++ {
			if p[i] != "*" {
				next, ok := p[i : i+1].Lookup(v)
				at = append(at, p[i])
				if !ok {
					return violationAt(rule, at, p[i+1:], check(nil, false))
				}
				v = next
				continue
			}
			arr, ok := v.([]any)
			if !ok {
				return &Violation{Rule: rule, Pointer: at.String(), Message: fmt.Sprintf("%s is not an array (the rule's pointer has \"*\" there)", describe(v))}
			}
			for j, el := range arr {
				if viol := walk(el, i+1, append(slices.Clip(at), strconv.Itoa(j))); viol != nil {
					return viol
				}
			}
			return nil
		}
		if msg := check(v, true); msg != "" {
			return &Violation{Rule: rule, Pointer: at.String(), Message: msg}
		}
		return nil
	}
	return walk(value, 0, make(jsonpointer.Pointer, 0, len(p)))
}

// violationAt is the violation for a location that holds nothing: at is
// where the walk stopped, rest the tokens it did not reach (a "*" among
// them is kept as written).
func violationAt(rule string, at, rest jsonpointer.Pointer, msg string) *Violation {
	if msg == "" {
		return nil
	}
	full := append(slices.Clip(at), rest...)
	return &Violation{Rule: rule, Pointer: full.String(), Message: msg}
}

// ContextMatch requires the value at Pointer to equal the request's context
// value named Key, compared as JSON values (Equal): a string equals the
// same string, a number the same exact number (the body's 42 equals a
// context value 42 or json.Number("42.0"), never the string "42"), a
// boolean or null itself. A request without that key is a violation, never
// a pass. A "*" token in Pointer requires every element to match.
type ContextMatch struct {
	RuleName string
	Pointer  jsonpointer.Pointer
	Key      string
}

// Name implements Rule.
func (r ContextMatch) Name() string { return r.RuleName }

// Check implements Rule.
func (r ContextMatch) Check(in Input) *Violation {
	want, ok := in.Request.Context[r.Key]
	if !ok {
		return &Violation{Rule: r.RuleName, Pointer: r.Pointer.String(), Message: fmt.Sprintf("the request has no context value %q", r.Key)}
	}
	return each(r.RuleName, r.Pointer, in.Value, func(got any, ok bool) string {
		switch {
		case !ok:
			return "nothing at the matched location"
		case !Equal(got, want):
			return fmt.Sprintf("%s differs from the requested %s, %s", describe(got), r.Key, describe(want))
		}
		return ""
	})
}

// Freshness requires the RFC 3339 date-time at Pointer (parsed by
// ParseTimestamp) to be no older than MaxAge before the clock's now and no
// later than MaxSkew after it. MaxAge 0 means no age limit; MaxSkew 0 means
// no time in the future at all. A leap second (23:59:60 UTC) is judged as
// the last instant of its minute, 23:59:59.999999999, not as the next
// second. A "*" token in Pointer requires every element to be fresh.
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
	return each(r.RuleName, r.Pointer, in.Value, func(got any, ok bool) string {
		s, isString := got.(string)
		if !ok || !isString {
			return "no string at the timestamp location"
		}
		t, err := ParseTimestamp(s)
		if err != nil {
			return err.Error()
		}
		if d := t.Sub(in.Now); d > r.MaxSkew {
			return fmt.Sprintf("timestamp is %s in the future (allowed skew %s)", d, r.MaxSkew)
		}
		if d := in.Now.Sub(t); r.MaxAge > 0 && d > r.MaxAge {
			return fmt.Sprintf("timestamp is %s old (max age %s)", d, r.MaxAge)
		}
		return ""
	})
}

// Membership requires the string at Pointer to be one of the members the
// request lists under context Key, a comma-separated list (e.g. the runs
// known to belong to the requested project: "run_a,run_b"). Spaces around
// members are ignored; an empty or missing list, or a context value that is
// not a string, admits nothing. A "*" token in Pointer requires every
// element to be a member.
type Membership struct {
	RuleName string
	Pointer  jsonpointer.Pointer
	Key      string
}

// Name implements Rule.
func (r Membership) Name() string { return r.RuleName }

// Check implements Rule.
func (r Membership) Check(in Input) *Violation {
	raw, ok := in.Request.Context[r.Key]
	if !ok {
		return &Violation{Rule: r.RuleName, Pointer: r.Pointer.String(), Message: fmt.Sprintf("the request has no context value %q", r.Key)}
	}
	list, isString := raw.(string)
	if !isString {
		return &Violation{Rule: r.RuleName, Pointer: r.Pointer.String(), Message: fmt.Sprintf("the request's context value %q is %s, not a comma-separated string", r.Key, describe(raw))}
	}
	members := strings.Split(list, ",")
	for i := range members {
		members[i] = strings.TrimSpace(members[i])
	}
	return each(r.RuleName, r.Pointer, in.Value, func(got any, ok bool) string {
		s, isString := got.(string)
		if !ok || !isString {
			return "no string at the member location"
		}
		if s == "" || !slices.Contains(members, s) {
			return fmt.Sprintf("%q is not a member of the request's %s", clip(s), r.Key)
		}
		return ""
	})
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
