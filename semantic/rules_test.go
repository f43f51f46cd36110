package semantic_test

import (
	"encoding/json"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/semantic"
)

func mustPointer(s string) jsonpointer.Pointer {
	p, err := jsonpointer.Parse(s)
	Expect(err).NotTo(HaveOccurred())
	return p
}

// value is a decoded JSON object as the parse stage produces it.
func value(members map[string]any) any { return members }

var _ = Describe("semantic rules", func() {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	req := semantic.Request{ID: "req-00000001", Context: map[string]any{"project": "proj-a", "runs": "run_a, run_b ,run_c"}}
	in := func(v any) semantic.Input { return semantic.Input{Value: v, Request: req, Now: now} }

	Describe("Binding", func() {
		rule := semantic.Binding{RuleName: "request_binding", Pointer: mustPointer("/request_id")}
		viol := func(msg string) *semantic.Violation {
			return &semantic.Violation{Rule: "request_binding", Pointer: "/request_id", Message: msg}
		}

		It("has its name", func() { Expect(rule.Name()).To(Equal("request_binding")) })

		DescribeTable("checks the echoed request id",
			func(v any, r semantic.Request, want *semantic.Violation) {
				Expect(rule.Check(semantic.Input{Value: v, Request: r, Now: now})).To(Equal(want))
			},
			Entry("equal ids pass", value(map[string]any{"request_id": "req-00000001"}), req, nil),
			Entry("a different id", value(map[string]any{"request_id": "req-00000002"}), req,
				viol(`echoed request id "req-00000002" differs from the request's "req-00000001"`)),
			Entry("ids differing in case", value(map[string]any{"request_id": "REQ-00000001"}), req,
				viol(`echoed request id "REQ-00000001" differs from the request's "req-00000001"`)),
			Entry("a missing id", value(map[string]any{}), req, viol("no string at the bound location")),
			Entry("a number where the id should be", value(map[string]any{"request_id": json.Number("1")}), req,
				viol("no string at the bound location")),
			Entry("a null id", value(map[string]any{"request_id": nil}), req, viol("no string at the bound location")),
			Entry("a scalar document", "req-00000001", req, viol("no string at the bound location")),
			Entry("an empty request id never matches, even an empty echo", value(map[string]any{"request_id": ""}),
				semantic.Request{}, viol("the request has no id")),
		)

		It("clips long ids in its message", func() {
			long := strings.Repeat("x", 1000)
			v := rule.Check(in(value(map[string]any{"request_id": long})))
			Expect(v).NotTo(BeNil())
			Expect(len(v.Message)).To(BeNumerically("<", 400))
		})
	})

	Describe("ContextMatch", func() {
		rule := semantic.ContextMatch{RuleName: "project_match", Pointer: mustPointer("/data/project_id"), Key: "project"}
		viol := func(msg string) *semantic.Violation {
			return &semantic.Violation{Rule: "project_match", Pointer: "/data/project_id", Message: msg}
		}
		doc := func(p any) any { return value(map[string]any{"data": map[string]any{"project_id": p}}) }

		It("has its name", func() { Expect(rule.Name()).To(Equal("project_match")) })

		DescribeTable("compares with the request's context",
			func(v any, r semantic.Request, want *semantic.Violation) {
				Expect(rule.Check(semantic.Input{Value: v, Request: r, Now: now})).To(Equal(want))
			},
			Entry("equal passes", doc("proj-a"), req, nil),
			Entry("another project", doc("proj-b"), req, viol(`the string "proj-b" differs from the requested project, the string "proj-a"`)),
			Entry("a request without the key", doc("proj-a"), semantic.Request{ID: "r"}, viol(`the request has no context value "project"`)),
			Entry("an empty value against a missing key is still refused", doc(""), semantic.Request{ID: "r", Context: map[string]any{}},
				viol(`the request has no context value "project"`)),
			Entry("a missing value", value(map[string]any{"data": map[string]any{}}), req, viol("nothing at the matched location")),
			Entry("a number against a string value", doc(json.Number("7")), req, viol(`the number 7 differs from the requested project, the string "proj-a"`)),
			Entry("an empty value against an empty request value passes", doc(""),
				semantic.Request{ID: "r", Context: map[string]any{"project": ""}}, nil),
		)
	})

	Describe("Freshness", func() {
		rule := semantic.Freshness{RuleName: "fresh", Pointer: mustPointer("/updated_at"), MaxAge: time.Hour, MaxSkew: 30 * time.Second}
		viol := func(msg string) *semantic.Violation {
			return &semantic.Violation{Rule: "fresh", Pointer: "/updated_at", Message: msg}
		}
		at := func(s string) any { return value(map[string]any{"updated_at": s}) }

		It("has its name", func() { Expect(rule.Name()).To(Equal("fresh")) })

		DescribeTable("judges the timestamp against the clock",
			func(r semantic.Freshness, v any, want *semantic.Violation) {
				Expect(r.Check(in(v))).To(Equal(want))
			},
			Entry("now", rule, at("2025-06-01T12:00:00Z"), nil),
			Entry("now in another offset", rule, at("2025-06-01T14:00:00+02:00"), nil),
			Entry("exactly max_age old", rule, at("2025-06-01T11:00:00Z"), nil),
			Entry("one nanosecond past max_age", rule, at("2025-06-01T10:59:59.999999999Z"),
				viol("timestamp is 1h0m0.000000001s old (max age 1h0m0s)")),
			Entry("stale by a day", rule, at("2025-05-31T12:00:00Z"), viol("timestamp is 24h0m0s old (max age 1h0m0s)")),
			Entry("exactly max_skew in the future", rule, at("2025-06-01T12:00:30Z"), nil),
			Entry("one millisecond past max_skew", rule, at("2025-06-01T12:00:30.001Z"),
				viol("timestamp is 30.001s in the future (allowed skew 30s)")),
			Entry("an hour in the future", rule, at("2025-06-01T13:00:00Z"), viol("timestamp is 1h0m0s in the future (allowed skew 30s)")),
			Entry("max_skew 0 refuses a nanosecond in the future",
				semantic.Freshness{RuleName: "fresh", Pointer: mustPointer("/updated_at"), MaxAge: time.Hour},
				at("2025-06-01T12:00:00.000000001Z"), viol("timestamp is 1ns in the future (allowed skew 0s)")),
			Entry("max_skew 0 admits exactly now",
				semantic.Freshness{RuleName: "fresh", Pointer: mustPointer("/updated_at"), MaxAge: time.Hour},
				at("2025-06-01T12:00:00Z"), nil),
			Entry("max_age 0 means no age limit",
				semantic.Freshness{RuleName: "fresh", Pointer: mustPointer("/updated_at")},
				at("1970-01-01T00:00:00Z"), nil),
			Entry("an invalid timestamp", rule, at("2025-06-01T24:00:00Z"),
				viol(`invalid RFC 3339 date-time: "2025-06-01T24:00:00Z": time out of range`)),
			Entry("a timestamp without offset", rule, at("2025-06-01T12:00:00.000"),
				viol(`invalid RFC 3339 date-time: "2025-06-01T12:00:00.000": missing offset`)),
			Entry("a missing timestamp", rule, value(map[string]any{}), viol("no string at the timestamp location")),
			Entry("a numeric timestamp", rule, value(map[string]any{"updated_at": json.Number("1748779200")}), viol("no string at the timestamp location")),
		)

		It("judges a leap second as the last instant of its minute, never as the next second", func() {
			r := semantic.Freshness{RuleName: "fresh", Pointer: mustPointer("/t"), MaxAge: time.Second}
			leap := value(map[string]any{"t": "2016-12-31T23:59:60Z"})
			// A clock that repeats or smears 23:59:59 reads it during the leap
			// second; with no skew allowed the stamp is not in the future once
			// that second has ended.
			Expect(r.Check(semantic.Input{Value: leap, Request: req, Now: time.Date(2016, 12, 31, 23, 59, 59, 999999999, time.UTC)})).To(BeNil())
			Expect(r.Check(semantic.Input{Value: leap, Request: req, Now: time.Date(2017, 1, 1, 0, 0, 0, 0, time.UTC)})).To(BeNil())
			Expect(r.Check(semantic.Input{Value: leap, Request: req, Now: time.Date(2016, 12, 31, 23, 59, 59, 500000000, time.UTC)})).To(Equal(
				&semantic.Violation{Rule: "fresh", Pointer: "/t", Message: "timestamp is 499.999999ms in the future (allowed skew 0s)"}))
			// A second after it, it is one second old.
			Expect(r.Check(semantic.Input{Value: leap, Request: req, Now: time.Date(2017, 1, 1, 0, 0, 0, 999999999, time.UTC)})).To(BeNil())
			Expect(r.Check(semantic.Input{Value: leap, Request: req, Now: time.Date(2017, 1, 1, 0, 0, 1, 0, time.UTC)})).To(Equal(
				&semantic.Violation{Rule: "fresh", Pointer: "/t", Message: "timestamp is 1.000000001s old (max age 1s)"}))
			// The leap second is after every stamp of second 59 and before the next minute.
			leapT, err := semantic.ParseTimestamp("2016-12-31T15:59:60.25-08:00")
			Expect(err).NotTo(HaveOccurred())
			before, _ := semantic.ParseTimestamp("2016-12-31T23:59:59.999Z")
			after, _ := semantic.ParseTimestamp("2017-01-01T00:00:00Z")
			Expect(leapT.After(before)).To(BeTrue())
			Expect(leapT.Before(after)).To(BeTrue())
		})
	})

	Describe("Membership", func() {
		rule := semantic.Membership{RuleName: "run_member", Pointer: mustPointer("/run_id"), Key: "runs"}
		viol := func(msg string) *semantic.Violation {
			return &semantic.Violation{Rule: "run_member", Pointer: "/run_id", Message: msg}
		}
		run := func(s any) any { return value(map[string]any{"run_id": s}) }
		withRuns := func(list string) semantic.Request {
			return semantic.Request{ID: "r", Context: map[string]any{"runs": list}}
		}

		It("has its name", func() { Expect(rule.Name()).To(Equal("run_member")) })

		DescribeTable("checks the value against the request's list",
			func(v any, r semantic.Request, want *semantic.Violation) {
				Expect(rule.Check(semantic.Input{Value: v, Request: r, Now: now})).To(Equal(want))
			},
			Entry("first member", run("run_a"), req, nil),
			Entry("member with spaces around it in the list", run("run_b"), req, nil),
			Entry("last member", run("run_c"), req, nil),
			Entry("not a member", run("run_d"), req, viol(`"run_d" is not a member of the request's runs`)),
			Entry("a prefix of a member", run("run_"), req, viol(`"run_" is not a member of the request's runs`)),
			Entry("the whole list is not a member", run("run_a, run_b ,run_c"), req, viol(`"run_a, run_b ,run_c" is not a member of the request's runs`)),
			Entry("a member with its spaces", run(" run_b "), req, viol(`" run_b " is not a member of the request's runs`)),
			Entry("an empty list admits nothing", run(""), withRuns(""), viol(`"" is not a member of the request's runs`)),
			Entry("an empty member of a list is not a member", run(""), withRuns("a,,b"), viol(`"" is not a member of the request's runs`)),
			Entry("a missing list", run("run_a"), semantic.Request{ID: "r"}, viol(`the request has no context value "runs"`)),
			Entry("a missing value", value(map[string]any{}), req, viol("no string at the member location")),
			Entry("a boolean value", run(true), req, viol("no string at the member location")),
		)
	})

	Describe("Check", func() {
		binding := semantic.Binding{RuleName: "request_binding", Pointer: mustPointer("/request_id")}
		project := semantic.ContextMatch{RuleName: "project_match", Pointer: mustPointer("/project_id"), Key: "project"}

		It("passes when every rule passes", func() {
			v := value(map[string]any{"request_id": "req-00000001", "project_id": "proj-a"})
			Expect(semantic.Check([]semantic.Rule{binding, project}, in(v))).To(BeNil())
			Expect(semantic.Check(nil, in(v))).To(BeNil())
		})

		It("returns the first violation in rule order", func() {
			v := value(map[string]any{"request_id": "other", "project_id": "other"})
			Expect(semantic.Check([]semantic.Rule{binding, project}, in(v)).Rule).To(Equal("request_binding"))
			Expect(semantic.Check([]semantic.Rule{project, binding}, in(v)).Rule).To(Equal("project_match"))
		})

		It("names a violation after its rule when the rule left the name empty", func() {
			anon := ruleFunc{name: "custom_one", check: func(semantic.Input) *semantic.Violation {
				return &semantic.Violation{Message: "no"}
			}}
			Expect(semantic.Check([]semantic.Rule{anon}, in(nil))).To(Equal(&semantic.Violation{Rule: "custom_one", Message: "no"}))
		})
	})

	DescribeTable("ValidName",
		func(s string, ok bool) { Expect(semantic.ValidName(s)).To(Equal(ok)) },
		Entry("lower case", "request_binding", true),
		Entry("digits after the first", "rule2", true),
		Entry("64 characters", "a"+strings.Repeat("b", 63), true),
		Entry("65 characters", "a"+strings.Repeat("b", 64), false),
		Entry("empty", "", false),
		Entry("leading digit", "2rule", false),
		Entry("upper case", "Rule", false),
		Entry("dash", "a-b", false),
		Entry("trailing newline", "rule\n", false),
	)
})

// ruleFunc is a custom rule for the specs.
type ruleFunc struct {
	name  string
	check func(semantic.Input) *semantic.Violation
}

func (r ruleFunc) Name() string                                { return r.name }
func (r ruleFunc) Check(in semantic.Input) *semantic.Violation { return r.check(in) }
