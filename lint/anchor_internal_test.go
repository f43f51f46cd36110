package lint

import (
	"regexp/syntax"
	"testing"
)

func TestPatternShape(t *testing.T) {
	for _, c := range []struct {
		expr                string
		start, end, unbound bool
	}{
		{"^[a-z]+$", true, true, true},
		{"^[a-z]{1,8}$", true, true, false},
		{"[a-z]+", false, false, true},
		{"^abc", true, false, false},
		{"abc$", false, true, false},
		{"^a$|^b$", true, true, false},
		{"^a$|b", false, false, false},
		{"^(ab|cd)$", true, true, false},
		{"^(?:x)*$", true, true, true},
		{"^a{2,}$", true, true, true},
		{`\Aab\z`, true, true, false},
		{`^a\$`, true, false, false},
	} {
		re, err := syntax.Parse(c.expr, syntax.Perl)
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		if got := anchoredStart(re); got != c.start {
			t.Errorf("anchoredStart(%q) = %v, want %v", c.expr, got, c.start)
		}
		if got := anchoredEnd(re); got != c.end {
			t.Errorf("anchoredEnd(%q) = %v, want %v", c.expr, got, c.end)
		}
		if got := unboundedRepeat(re); got != c.unbound {
			t.Errorf("unboundedRepeat(%q) = %v, want %v", c.expr, got, c.unbound)
		}
	}
}
