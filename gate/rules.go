package gate

import (
	"fmt"

	"github.com/airlockdev/airlock/internal/manifest"
	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/semantic"
)

// buildRules builds an upstream version's semantic rules, in manifest
// order; key is the version's location in the manifest.
func buildRules(key string, specs []manifest.RuleSpec, opts Options, cfgErr func(key, msg string) error) ([]semantic.Rule, error) {
	var rules []semantic.Rule
	seen := map[string]bool{}
	for i, rs := range specs {
		rkey := fmt.Sprintf("%s/rules/%d", key, i)
		if seen[rs.Name] {
			return nil, cfgErr(rkey+"/name", fmt.Sprintf("rule name %q is used twice", rs.Name))
		}
		seen[rs.Name] = true
		r, sub, msg := buildRule(rs, opts)
		if msg != "" {
			return nil, cfgErr(rkey+sub, msg)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// buildRule builds one rule; on a configuration error it returns the
// manifest key below the rule where the problem is ("/cel/expr") and a
// message.
func buildRule(rs manifest.RuleSpec, opts Options) (semantic.Rule, string, string) {
	ptr := func(s string) (jsonpointer.Pointer, string) {
		p, err := jsonpointer.Parse(s)
		if err != nil {
			return nil, err.Error()
		}
		return p, ""
	}
	switch {
	case rs.Binding != nil:
		p, msg := ptr(rs.Binding.Pointer)
		return semantic.Binding{RuleName: rs.Name, Pointer: p}, "", msg
	case rs.Context != nil:
		p, msg := ptr(rs.Context.Pointer)
		return semantic.ContextMatch{RuleName: rs.Name, Pointer: p, Key: rs.Context.Key}, "", msg
	case rs.Freshness != nil:
		p, msg := ptr(rs.Freshness.Pointer)
		if rs.Freshness.MaxAge < 0 || rs.Freshness.MaxSkew < 0 {
			return nil, "", "max_age and max_skew must not be negative"
		}
		return semantic.Freshness{RuleName: rs.Name, Pointer: p, MaxAge: rs.Freshness.MaxAge, MaxSkew: rs.Freshness.MaxSkew}, "", msg
	case rs.Membership != nil:
		p, msg := ptr(rs.Membership.Pointer)
		return semantic.Membership{RuleName: rs.Name, Pointer: p, Key: rs.Membership.Key}, "", msg
	case rs.Count != nil:
		return buildCount(rs.Name, rs.Count)
	case rs.CEL != nil:
		r, err := semantic.NewCEL(rs.Name, rs.CEL.Expr)
		if err != nil {
			return nil, "/cel/expr", err.Error()
		}
		return r, "", ""
	case rs.Custom != "":
		r, ok := opts.CustomRules[rs.Custom]
		if !ok {
			return nil, "", fmt.Sprintf("custom rule %q is not registered (gate.Options.CustomRules)", rs.Custom)
		}
		return named{Rule: r, name: rs.Name}, "", ""
	}
	return nil, "", "a rule needs one of binding, context, freshness, membership, count, cel or custom"
}

// buildCount builds a count rule: exactly one of equals_pointer and key,
// no "*" in either pointer.
func buildCount(name string, c *manifest.CountSpec) (semantic.Rule, string, string) {
	r := semantic.Count{RuleName: name, Key: c.Key}
	for _, f := range []struct {
		key, text string
		dst       *jsonpointer.Pointer
	}{{"/count/pointer", c.Pointer, &r.Pointer}, {"/count/equals_pointer", c.EqualsPointer, &r.EqualsPointer}} {
		if f.text == "" && f.dst == &r.EqualsPointer {
			continue
		}
		p, err := jsonpointer.Parse(f.text)
		if err != nil {
			return nil, f.key, err.Error()
		}
		if p.Wildcard() {
			return nil, f.key, fmt.Sprintf("a count rule's pointer %q names one array, not every element: leave out the \"*\"", f.text)
		}
		*f.dst = p
	}
	if (c.EqualsPointer != "") == (c.Key != "") {
		return nil, "/count", "a count rule needs exactly one of equals_pointer and key"
	}
	return r, "", ""
}

// named gives a registered custom rule the manifest's name.
type named struct {
	semantic.Rule
	name string
}

func (n named) Name() string { return n.name }

func (n named) Check(in semantic.Input) *semantic.Violation {
	v := n.Rule.Check(in)
	if v != nil {
		v.Rule = n.name
	}
	return v
}
