package schema_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/strictjson"
)

func compileDoc(t *testing.T, doc string) (interface{ Validate(any) error }, error) {
	t.Helper()
	v, err := strictjson.Parse([]byte(doc), schema.FileLimits)
	if err != nil {
		t.Fatal(err)
	}
	c := schema.NewCompiler(nil)
	if err := c.AddResource("mem:///s.json", v); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem:///s.json")
	if err != nil {
		return nil, err
	}
	return s, nil
}

func TestCompilePatternBounds(t *testing.T) {
	for _, tc := range []struct {
		expr  string
		insts int    // 0: not checked
		err   string // "": compiles
	}{
		{`^[a-z0-9-]{1,64}$`, 131, ""},
		{`^\d{4}-\d{2}-\d{2}$`, 14, ""},
		{`[a-z]{1000}`, 1002, ""},
		{strings.Repeat(`[a-y]{1000}`, 4) + "z", 4003, ""},
		{strings.Repeat(`[a-y]{1000}`, 5), 0, "compiles to 5002 instructions, more than the limit of 5000"},
		{`(?:[a-y]{10}){1000}z`, 0, "invalid repeat count"},
		{`a{1001}`, 0, "invalid repeat count"},
		{alternation(schema.MaxPatternLength), 0, ""},
		{alternation(schema.MaxPatternLength + 1), 0, "longer than the limit of 16384"},
		{strings.Repeat("a", 5000), 0, "compiles to 5002 instructions"},
		{`(?<=a)b`, 0, "error parsing regexp"},
	} {
		re, n, err := schema.CompilePattern(tc.expr)
		short := tc.expr[:min(len(tc.expr), 40)]
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("CompilePattern(%q): %v", short, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("CompilePattern(%q) = %v, want an error saying %q", short, err, tc.err)
		case tc.err != "" && re != nil:
			t.Errorf("CompilePattern(%q) returned a regexp with its error", short)
		case tc.insts != 0 && n != tc.insts:
			t.Errorf("CompilePattern(%q) = %d instructions, want %d", short, n, tc.insts)
		}
	}
}

// The gate's compiler uses CompilePattern for every regexp: a pattern past
// the bounds does not compile even outside a contract folder, and a
// format "regex" value past them is refused as a value.
func TestCompilerUsesBoundedRegexps(t *testing.T) {
	if _, err := compileDoc(t, `{"pattern": "`+strings.Repeat(`[a-y]{1000}`, 6)+`"}`); err == nil || !strings.Contains(err.Error(), "more than the limit of 5000") {
		t.Errorf("compiling a 6,000-instruction pattern: %v", err)
	}
	if _, err := compileDoc(t, `{"patternProperties": {"`+strings.Repeat(`[a-y]{1000}`, 6)+`": true}}`); err == nil {
		t.Error("compiling a 6,000-instruction patternProperties key succeeded")
	}
	s, err := compileDoc(t, `{"format": "regex"}`)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(`^[a-z]{1,64}$`); err != nil {
		t.Errorf("an ordinary regex value is refused: %v", err)
	}
	if err := s.Validate(strings.Repeat(`[a-y]{1000}`, 6)); err == nil {
		t.Error("a 6,000-instruction regex value is admitted as format regex")
	}
}

// alternation returns w0000000|w0000001|… cut to n bytes: a long pattern
// with a small program.
func alternation(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteByte('|')
		}
		fmt.Fprintf(&b, "w%07d", i)
	}
	return b.String()[:n]
}
