package semantic

import (
	"encoding/json"
	"fmt"
	"regexp/syntax"
	"strconv"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
)

// Bounds of a CEL rule.
const (
	// CELCostLimit is the most a CEL rule may spend on one response, in
	// cel-go's runtime cost units (about one per operation, so six to ten
	// per element a comprehension visits; string and list operations cost
	// in proportion to their size). An expression that would exceed it is
	// stopped and the response refused (matches() is bounded apart, by
	// MaxCELPatternInsts at load):
	// `value.items.all(i, i.qty > 0)` over 10,000 items costs about 60,000;
	// a comprehension nested three deep over 1,000 items, about 10^10.
	CELCostLimit = 1_000_000
	// MaxCELExpr is the longest expression, in bytes (the manifest schema
	// says the same).
	MaxCELExpr = 4096
	// celRecursionLimit bounds the parser's nesting depth.
	celRecursionLimit = 64
	// MaxCELPatternInsts bounds a pattern given to matches(): its compiled
	// RE2 program may have at most this many instructions (the bound
	// schema patterns have, schema.MaxPatternInsts). A regular expression
	// runs in time linear in the string but in proportion to its program
	// too, and cel-go's cost model counts neither, so the bound is checked
	// at load.
	MaxCELPatternInsts = 5000
)

// CEL is a rule written as a Common Expression Language expression
// (cel.dev/cel-go) that must evaluate to true. The expression sees three
// variables:
//
//   - value: the value that passed the schema (dyn). Objects are maps,
//     arrays lists, strings strings, booleans bools, null null; a number
//     is an int when it is an integer that fits int64, a uint when it fits
//     only uint64, and a double otherwise (so integers compare exactly
//     within 64 bits, and 1.5 == 1.5 as doubles).
//   - request: a map with "id" (string) and "context" (a map of the
//     request's context values, numbers converted like value's).
//   - now: the clock's now, a timestamp.
//
// Examples: `value.items.all(i, i.state in ["done", "skipped"])`,
// `size(value.items) <= value.page_size`,
// `value.owner == request.context.user`,
// `now - timestamp(value.updated_at) < duration("15m")`.
//
// Only the standard CEL library is available. Evaluation is bounded by
// CELCostLimit. A result that is not true (false, a non-bool, an error such
// as a missing member or the cost limit) is a violation naming the
// expression's outcome; Pointer is "" (the whole value).
type CEL struct {
	RuleName string
	Expr     string
	prg      cel.Program
}

var (
	celEnvOnce sync.Once
	celEnv     *cel.Env
	celEnvErr  error
)

func environment() (*cel.Env, error) {
	celEnvOnce.Do(func() {
		celEnv, celEnvErr = cel.NewEnv(
			cel.Variable("value", cel.DynType),
			cel.Variable("request", cel.MapType(cel.StringType, cel.DynType)),
			cel.Variable("now", cel.TimestampType),
			cel.ParserExpressionSizeLimit(MaxCELExpr),
			cel.ParserRecursionLimit(celRecursionLimit),
		)
	})
	return celEnv, celEnvErr
}

// NewCEL compiles and type-checks expr for a rule named name. It returns an
// error, for a configuration error message, when the expression is longer
// than MaxCELExpr, does not parse, does not type-check (an unknown
// variable or function, a wrong argument type) or has a static type other
// than bool (a dyn result is checked when it runs).
func NewCEL(name, expr string) (*CEL, error) {
	if len(expr) > MaxCELExpr {
		return nil, fmt.Errorf("the expression has %d bytes; at most %d", len(expr), MaxCELExpr)
	}
	env, err := environment()
	if err != nil {
		return nil, err
	}
	ast, iss := env.Compile(expr)
	if iss != nil && iss.Err() != nil {
		return nil, fmt.Errorf("CEL: %s", issues(iss.Err().Error()))
	}
	if t := ast.OutputType(); !t.IsExactType(cel.BoolType) && !t.IsExactType(cel.DynType) {
		return nil, fmt.Errorf("CEL: the expression's type is %s; a rule needs a bool", t)
	}
	if err := checkPatterns(ast); err != nil {
		return nil, err
	}
	prg, err := env.Program(ast, cel.CostLimit(CELCostLimit))
	if err != nil {
		return nil, fmt.Errorf("CEL: %s", oneLine(err.Error()))
	}
	return &CEL{RuleName: name, Expr: expr, prg: prg}, nil
}

// Name implements Rule.
func (r *CEL) Name() string { return r.RuleName }

// Check implements Rule. It is safe for concurrent use.
func (r *CEL) Check(in Input) *Violation {
	v := func(msg string) *Violation { return &Violation{Rule: r.RuleName, Message: msg} }
	if r.prg == nil {
		return v("the CEL rule was not compiled (use NewCEL)")
	}
	ctx := make(map[string]any, len(in.Request.Context))
	for k, x := range in.Request.Context {
		ctx[k] = celValue(x)
	}
	out, _, err := r.prg.Eval(map[string]any{
		"value":   celValue(in.Value),
		"request": map[string]any{"id": in.Request.ID, "context": ctx},
		"now":     in.Now,
	})
	switch {
	case err != nil && strings.Contains(err.Error(), "cost limit exceeded"):
		return v(fmt.Sprintf("the CEL expression was stopped: it would cost more than %d (semantic.CELCostLimit)", CELCostLimit))
	case err != nil:
		return v("the CEL expression failed: " + clip(oneLine(err.Error())))
	case out == types.True:
		return nil
	case out == types.False:
		return v("the CEL expression is false: " + clip(r.Expr))
	}
	return v(fmt.Sprintf("the CEL expression gave a %s, not a bool", out.Type()))
}

// celValue converts a decoded JSON value for CEL: json.Number becomes
// int64, uint64 or float64 (see CEL), maps and lists are converted
// element by element, everything else stays.
func celValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = celValue(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = celValue(e)
		}
		return l
	case json.Number:
		return celNumber(string(x))
	}
	return v
}

// celNumber is a JSON number's CEL value: an integer (whatever its
// spelling: 42, 42.0, 4.2e1) that fits int64 is an int, one that fits
// uint64 a uint, anything else the nearest double.
func celNumber(s string) any {
	if c, ok := canonicalText(s); ok {
		mant, exp, _ := strings.Cut(c, "e")
		if e, err := strconv.Atoi(exp); c == "0" || err == nil && e >= 0 && e <= 20 {
			text := mant + strings.Repeat("0", max(e, 0))
			if i, err := strconv.ParseInt(text, 10, 64); err == nil {
				return i
			}
			if u, err := strconv.ParseUint(text, 10, 64); err == nil {
				return u
			}
		}
	}
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// issues shortens cel-go's issue report ("ERROR: <input>:1:5: msg", then
// the expression and a caret on lines of their own) to "at 1:5: msg", the
// issues joined with "; ".
func issues(report string) string {
	var out []string
	for _, line := range strings.Split(report, "\n") {
		if rest, ok := strings.CutPrefix(line, "ERROR: <input>:"); ok {
			out = append(out, "at "+rest)
		}
	}
	if len(out) == 0 {
		return oneLine(report)
	}
	return strings.Join(out, "; ")
}

// oneLine joins a multi-line message (cel-go's issues point at the column
// with a caret on a second line) into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// checkPatterns refuses a matches() whose pattern is not a string literal
// (a pattern taken from the upstream's value or the request would be
// compiled and run at the upstream's choosing) or whose literal compiles
// to more than MaxCELPatternInsts instructions.
func checkPatterns(a *cel.Ast) error {
	var problem error
	celast.PreOrderVisit(a.NativeRep().Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if problem != nil || e.Kind() != celast.CallKind || e.AsCall().FunctionName() != "matches" {
			return
		}
		args := e.AsCall().Args()
		if len(args) == 0 {
			return
		}
		pat := args[len(args)-1]
		lit, ok := literalString(pat)
		if !ok {
			problem = fmt.Errorf("CEL: matches() needs a string literal as its pattern: a pattern from the response or the request would run at the upstream's choosing")
			return
		}
		re, err := syntax.Parse(lit, syntax.Perl)
		if err != nil {
			problem = fmt.Errorf("CEL: matches(%q): %v", clip(lit), err)
			return
		}
		prog, err := syntax.Compile(re.Simplify())
		if err != nil || len(prog.Inst) > MaxCELPatternInsts {
			problem = fmt.Errorf("CEL: matches(%q): the pattern compiles to more than %d instructions (semantic.MaxCELPatternInsts)", clip(lit), MaxCELPatternInsts)
		}
	}))
	return problem
}

// literalString is e's value when it is a string literal.
func literalString(e celast.Expr) (string, bool) {
	if e.Kind() != celast.LiteralKind {
		return "", false
	}
	s, ok := e.AsLiteral().Value().(string)
	return s, ok
}
