package semantic_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/semantic"
)

var _ = Describe("typed values", func() {
	DescribeTable("Equal compares JSON values by type, numbers exactly",
		func(a, b any, want bool) {
			Expect(semantic.Equal(a, b)).To(Equal(want))
			Expect(semantic.Equal(b, a)).To(Equal(want), "Equal is symmetric")
		},
		Entry("the same integer", json.Number("42"), json.Number("42"), true),
		Entry("a Go int and a json.Number", 42, json.Number("42"), true),
		Entry("42.0 and 4.2e1", json.Number("42.0"), json.Number("4.2e1"), true),
		Entry("a uint64 past int64", uint64(18446744073709551615), json.Number("18446744073709551615"), true),
		Entry("integers past 2^53 that float64 confuses", json.Number("9007199254740993"), json.Number("9007199254740992"), false),
		Entry("decimals past float64's precision", json.Number("0.10000000000000000001"), json.Number("0.1"), false),
		Entry("a float64 and its shortest text", 0.5, json.Number("5e-1"), true),
		Entry("zero and negative zero", json.Number("0"), json.Number("-0.0"), true),
		Entry("a huge exponent, exactly", json.Number("1e99999999999999999999"), json.Number("10e99999999999999999998"), true),
		Entry("a string is not a number", "42", json.Number("42"), false),
		Entry("a string is not a Go int", "42", 42, false),
		Entry("strings", "a", "a", true),
		Entry("booleans", true, true, true),
		Entry("a boolean is not a string", true, "true", false),
		Entry("null and null", nil, nil, true),
		Entry("null is not the empty string", nil, "", false),
		Entry("arrays equal nothing", []any{}, []any{}, false),
		Entry("an invalid json.Number equals nothing", json.Number("4x"), json.Number("4x"), false),
	)

	It("NormalizeContext turns YAML's numbers into json.Number and refuses non-scalars", func() {
		ctx := map[string]any{"a": 42, "b": uint64(7), "c": 0.5, "d": "42", "e": true, "f": nil}
		Expect(semantic.NormalizeContext(ctx)).To(Succeed())
		Expect(ctx).To(Equal(map[string]any{"a": json.Number("42"), "b": json.Number("7"), "c": json.Number("0.5"), "d": "42", "e": true, "f": nil}))
		Expect(semantic.NormalizeContext(map[string]any{"l": []any{1}})).To(MatchError(ContainSubstring(`context value "l"`)))
	})

	Describe("ContextMatch with typed values", func() {
		rule := semantic.ContextMatch{RuleName: "user_match", Pointer: mustPointer("/user_id"), Key: "user"}
		check := func(body, want any) *semantic.Violation {
			return rule.Check(semantic.Input{Value: map[string]any{"user_id": body}, Request: semantic.Request{ID: "r", Context: map[string]any{"user": want}}})
		}
		It("binds an integer id given as a number", func() {
			Expect(check(json.Number("42"), json.Number("42"))).To(BeNil())
			Expect(check(json.Number("42"), 42)).To(BeNil())
			Expect(check(json.Number("42.0"), 42)).To(BeNil())
		})
		It("refuses another number, and a string for a number both ways", func() {
			Expect(check(json.Number("43"), 42)).To(Equal(&semantic.Violation{Rule: "user_match", Pointer: "/user_id",
				Message: "the number 43 differs from the requested user, the number 42"}))
			Expect(check("42", 42).Message).To(Equal(`the string "42" differs from the requested user, the number 42`))
			Expect(check(json.Number("42"), "42").Message).To(Equal(`the number 42 differs from the requested user, the string "42"`))
		})
		It("matches booleans and null by type", func() {
			Expect(check(true, true)).To(BeNil())
			Expect(check(nil, nil)).To(BeNil())
			Expect(check(false, "false")).NotTo(BeNil())
		})
	})

	Describe(`"*" in a rule pointer`, func() {
		req := semantic.Request{ID: "req-1", Context: map[string]any{"project": "p", "runs": "a,b"}}
		in := func(v any) semantic.Input { return semantic.Input{Value: v, Request: req, Now: time.Now()} }
		items := func(ids ...any) any {
			var l []any
			for _, id := range ids {
				l = append(l, map[string]any{"project": id})
			}
			return map[string]any{"items": l}
		}
		ctx := semantic.ContextMatch{RuleName: "project_match", Pointer: mustPointer("/items/*/project"), Key: "project"}

		It("passes when every element passes", func() {
			Expect(ctx.Check(in(items("p", "p", "p")))).To(BeNil())
		})
		It("passes an empty array", func() {
			Expect(ctx.Check(in(map[string]any{"items": []any{}}))).To(BeNil())
		})
		It("names the first failing element", func() {
			Expect(ctx.Check(in(items("p", "q", "r")))).To(Equal(&semantic.Violation{Rule: "project_match", Pointer: "/items/1/project",
				Message: `the string "q" differs from the requested project, the string "p"`}))
		})
		It("names an element that lacks the member", func() {
			v := ctx.Check(in(map[string]any{"items": []any{map[string]any{"project": "p"}, map[string]any{}}}))
			Expect(v.Pointer).To(Equal("/items/1/project"))
			Expect(v.Message).To(Equal("nothing at the matched location"))
		})
		It("refuses a * over something that is not an array", func() {
			v := ctx.Check(in(map[string]any{"items": map[string]any{"project": "p"}}))
			Expect(v.Pointer).To(Equal("/items"))
			Expect(v.Message).To(ContainSubstring("an object is not an array"))
		})
		It("refuses a missing array at the missing location", func() {
			v := ctx.Check(in(map[string]any{}))
			Expect(v.Pointer).To(Equal("/items/*/project"))
		})
		It("nests: every element of every element", func() {
			b := semantic.Binding{RuleName: "echo", Pointer: mustPointer("/pages/*/items/*/rid")}
			page := func(ids ...string) any {
				var l []any
				for _, id := range ids {
					l = append(l, map[string]any{"rid": id})
				}
				return map[string]any{"items": l}
			}
			Expect(b.Check(in(map[string]any{"pages": []any{page("req-1"), page("req-1", "req-1")}}))).To(BeNil())
			v := b.Check(in(map[string]any{"pages": []any{page("req-1"), page("req-1", "req-2")}}))
			Expect(v.Pointer).To(Equal("/pages/1/items/1/rid"))
		})
		It("works for membership and freshness", func() {
			m := semantic.Membership{RuleName: "known", Pointer: mustPointer("/runs/*"), Key: "runs"}
			Expect(m.Check(in(map[string]any{"runs": []any{"a", "b"}}))).To(BeNil())
			Expect(m.Check(in(map[string]any{"runs": []any{"a", "c"}})).Pointer).To(Equal("/runs/1"))
			now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
			f := semantic.Freshness{RuleName: "fresh", Pointer: mustPointer("/at/*"), MaxAge: time.Hour}
			stamps := map[string]any{"at": []any{"2025-06-01T11:30:00Z", "2025-06-01T09:00:00Z"}}
			v := f.Check(semantic.Input{Value: stamps, Request: req, Now: now})
			Expect(v.Pointer).To(Equal("/at/1"))
		})
	})

	Describe("Count", func() {
		doc := func(n int, total any) any {
			l := make([]any, n)
			return map[string]any{"items": l, "total": total}
		}
		byPointer := semantic.Count{RuleName: "all_items", Pointer: mustPointer("/items"), EqualsPointer: mustPointer("/total")}
		byKey := semantic.Count{RuleName: "all_items", Pointer: mustPointer("/items"), Key: "expected"}
		in := func(v any, ctx map[string]any) semantic.Input {
			return semantic.Input{Value: v, Request: semantic.Request{ID: "r", Context: ctx}}
		}

		DescribeTable("compares the array's length with a number",
			func(r semantic.Count, v any, ctx map[string]any, msg string) {
				got := r.Check(in(v, ctx))
				if msg == "" {
					Expect(got).To(BeNil())
					return
				}
				Expect(got).NotTo(BeNil())
				Expect(got.Rule).To(Equal("all_items"))
				Expect(got.Message).To(ContainSubstring(msg))
			},
			Entry("equal to the body's total", byPointer, doc(3, json.Number("3")), nil, ""),
			Entry("3.0 is three", byPointer, doc(3, json.Number("3.0")), nil, ""),
			Entry("an empty array and 0", byPointer, doc(0, json.Number("0")), nil, ""),
			Entry("fewer than the total", byPointer, doc(2, json.Number("3")), nil, "the array has 2 elements; /total says the number 3"),
			Entry("a string total", byPointer, doc(3, "3"), nil, `holds the string "3", not a number`),
			Entry("no total", byPointer, map[string]any{"items": []any{}}, nil, "no number at the count's location"),
			Entry("no array", byPointer, map[string]any{"items": "x", "total": json.Number("1")}, nil, `holds the string "x", not an array`),
			Entry("equal to the context value", byKey, doc(2, nil), map[string]any{"expected": 2}, ""),
			Entry("equal to a json.Number context value", byKey, doc(2, nil), map[string]any{"expected": json.Number("2")}, ""),
			Entry("a context value of another count", byKey, doc(2, nil), map[string]any{"expected": 5}, `the request's context value "expected" says the number 5`),
			Entry("a context string is not a number", byKey, doc(2, nil), map[string]any{"expected": "2"}, "not a number"),
			Entry("a missing context key", byKey, doc(2, nil), map[string]any{}, `the request has no context value "expected"`),
		)
	})

	Describe("CEL", func() {
		now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
		req := semantic.Request{ID: "req-1", Context: map[string]any{"user": json.Number("42"), "name": "ada"}}
		eval := func(expr string, v any) *semantic.Violation {
			r, err := semantic.NewCEL("rule", expr)
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Name()).To(Equal("rule"))
			return r.Check(semantic.Input{Value: v, Request: req, Now: now})
		}
		body := map[string]any{
			"owner": json.Number("42"), "ratio": json.Number("0.5"), "big": json.Number("18446744073709551615"),
			"as_float": json.Number("4.2e1"), "at": "2025-06-01T11:50:00Z",
			"items": []any{map[string]any{"state": "done"}, map[string]any{"state": "skipped"}},
		}

		It("bounds matches(): a literal pattern only, of at most MaxCELPatternInsts instructions", func() {
			Expect(eval(`value.at.matches("^2025-")`, body)).To(BeNil())
			_, err := semantic.NewCEL("rule", `value.at.matches(value.owner_pattern)`)
			Expect(err).To(MatchError(ContainSubstring("needs a string literal")))
			_, err = semantic.NewCEL("rule", `matches(value.at, request.context.name)`)
			Expect(err).To(MatchError(ContainSubstring("needs a string literal")))
			var alts []string // the shape a hostile contract used: 4 KB that compile to some 100,000 instructions
			for n := 1000; n > 900; n-- {
				alts = append(alts, fmt.Sprintf("[a-z]{%d}0", n))
			}
			_, err = semantic.NewCEL("rule", `value.at.matches("`+strings.Join(alts, "|")+`")`)
			Expect(err).To(MatchError(ContainSubstring("more than 5000 instructions")))
		})

		DescribeTable("true passes",
			func(expr string) { Expect(eval(expr, body)).To(BeNil()) },
			Entry("every element", `value.items.all(i, i.state in ["done", "skipped"])`),
			Entry("an integer owner equals the context's number", `value.owner == request.context.user`),
			Entry("an integer is an int", `value.owner == 42 && type(value.owner) == int`),
			Entry("4.2e1 is the int 42", `value.as_float == 42 && type(value.as_float) == int`),
			Entry("a fraction is a double", `value.ratio == 0.5`),
			Entry("past int64 is a uint", `value.big == 18446744073709551615u`),
			Entry("the request id", `request.id == "req-1"`),
			Entry("the clock", `now - timestamp(value.at) < duration("15m")`),
			Entry("size", `size(value.items) == 2`),
		)

		It("refuses false with the expression", func() {
			v := eval(`value.items.all(i, i.state == "done")`, body)
			Expect(v).To(Equal(&semantic.Violation{Rule: "rule", Message: `the CEL expression is false: value.items.all(i, i.state == "done")`}))
		})
		It("refuses a runtime error (a missing member)", func() {
			v := eval(`value.nope == 1`, body)
			Expect(v.Message).To(HavePrefix("the CEL expression failed: "))
			Expect(v.Message).To(ContainSubstring("nope"))
		})
		It("refuses a result that is not a bool", func() {
			Expect(eval(`value.owner`, body).Message).To(Equal("the CEL expression gave a int, not a bool"))
		})

		DescribeTable("NewCEL refuses at compile time",
			func(expr, msg string) {
				_, err := semantic.NewCEL("rule", expr)
				Expect(err).To(MatchError(ContainSubstring(msg)))
			},
			Entry("a syntax error", `value.items.all(i,`, "CEL: "),
			Entry("an unknown variable", `values.x == 1`, "undeclared reference to 'values'"),
			Entry("an unknown function", `frobnicate(value)`, "undeclared reference to 'frobnicate'"),
			Entry("a non-bool type", `1 + 2`, "the expression's type is int; a rule needs a bool"),
			Entry("a type error", `"a" + 1 == 2`, "no matching overload"),
			Entry("too long", strings.Repeat("true && ", 600)+"true", "at most 4096"),
		)

		It("stops a hostile expression at the cost limit", func() {
			l := make([]any, 1000)
			for i := range l {
				l[i] = json.Number(fmt.Sprint(i))
			}
			start := time.Now()
			v := eval(`value.l.all(x, value.l.all(y, value.l.all(z, x + y + z >= 0)))`, map[string]any{"l": l})
			Expect(v).NotTo(BeNil())
			Expect(v.Message).To(Equal(fmt.Sprintf("the CEL expression was stopped: it would cost more than %d (semantic.CELCostLimit)", semantic.CELCostLimit)))
			Expect(time.Since(start)).To(BeNumerically("<", 5*time.Second), "stopped long before 10^9 steps")
		})

		It("stops a comprehension that builds huge strings", func() {
			v := eval(`value.l.map(x, value.l.map(y, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" + string(x) + string(y))).size() > 0`,
				map[string]any{"l": make([]any, 2000)})
			Expect(v).NotTo(BeNil())
		})

		It("is safe for concurrent use", func() {
			r, err := semantic.NewCEL("rule", `value.items.all(i, i.state != "")`)
			Expect(err).NotTo(HaveOccurred())
			done := make(chan *semantic.Violation, 8)
			for range 8 {
				go func() { done <- r.Check(semantic.Input{Value: body, Request: req, Now: now}) }()
			}
			for range 8 {
				Expect(<-done).To(BeNil())
			}
		})
	})
})
