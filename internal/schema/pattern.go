package schema

import (
	"fmt"
	"regexp"
	"regexp/syntax"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Bounds on the regular expressions of a schema (pattern, the keys of
// patternProperties, and every string the validator compiles as a regexp,
// format "regex" values included). Go's regexp never backtracks: matching
// a string of n bytes visits each instruction of the compiled program at
// most twice per byte (once to queue it, once to step it), so a program of
// at most MaxPatternInsts instructions costs at most 2 × 5,000 = 10,000
// instruction steps per byte of the string it is matched against, whatever
// the string holds. RE2's own parser caps each repetition count at 1000,
// nested repetitions at a product of 1000 (x{10}{100} is the most), and
// nesting at a depth of 1000.
const (
	// MaxPatternLength is the longest regular expression compiled, in
	// bytes (16 KiB). Parsing costs time linear in it.
	MaxPatternLength = 16 << 10
	// MaxPatternInsts is the largest compiled program of one regular
	// expression, in instructions of regexp/syntax's Prog (the program Go's
	// regexp runs): 5,000. ^[a-z0-9-]{1,64}$ is 131; [a-z]{1000} is 1,002;
	// an e-mail pattern with {1,64}, {1,255} and {2,63} counts about 770.
	MaxPatternInsts = 5000
	// MaxContractPatternInsts bounds the programs of all the regular
	// expressions of one contract's schema files together (50,000
	// instructions), so that a value matched once against each of them —
	// a member name against every patternProperties key, say — costs at
	// most 100,000 instruction steps per byte.
	MaxContractPatternInsts = 50000
)

// CompilePattern compiles expr as the validator runs it (Go RE2 syntax,
// Perl flags, as regexp.Compile) after checking the bounds above. It
// returns the regexp and the size of its program in instructions. The
// error says which bound was passed (or what does not parse), never
// leaving a regexp that could cost more.
func CompilePattern(expr string) (*regexp.Regexp, int, error) {
	if len(expr) > MaxPatternLength {
		return nil, 0, fmt.Errorf("regular expression of %d bytes is longer than the limit of %d", len(expr), MaxPatternLength)
	}
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, 0, err
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, 0, err
	}
	n := len(prog.Inst)
	if n > MaxPatternInsts {
		return nil, n, fmt.Errorf("regular expression compiles to %d instructions, more than the limit of %d (matching costs up to 2 steps per instruction per byte); split it, or bound the value with maxLength instead of counted repetition", n, MaxPatternInsts)
	}
	r, err := regexp.Compile(expr)
	if err != nil {
		return nil, n, err
	}
	return r, n, nil
}

// boundedRegexp is the compiler's regexp engine: CompilePattern.
func boundedRegexp(expr string) (jsonschema.Regexp, error) {
	r, _, err := CompilePattern(expr)
	if err != nil {
		return nil, err
	}
	return r, nil
}
