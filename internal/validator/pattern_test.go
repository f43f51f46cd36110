package validator

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// The sequence matcher must answer as Go's regexp does, on every string.
// Patterns: the bundled contracts' and shapes near the edge of what it
// takes (a repetition followed by an overlapping class, optional items,
// non-ASCII classes), each against strings drawn from the characters the
// pattern names and a few others.
var patternCases = []struct {
	expr string
	fast bool // whether fastPattern takes it
}{
	{`^CR-[0-9]{1,10}$`, true},
	{`^[0-9a-f]{64}$`, true},
	{`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`, true},
	{`^[a-z][a-z0-9._-]*$`, true},
	{`^ord_[0-9]+$`, true},
	{`^usr_[a-z0-9]{8,32}$`, true},
	{`^[^\p{Cc}\p{Cf}\p{Zl}\p{Zp}\x{FFFE}\x{FFFF}]+$`, true},
	{`^[a-z]+\.[A-Za-z0-9_$]+$`, true},
	{`^ISS-[0-9]{1,10}$`, true},
	{`^é[à-ÿ]{2,3}x?$`, true},
	{`^$`, true},
	{`^a?b$`, true},
	// Not taken: a repeated class that overlaps what follows, an optional
	// next item, an unanchored or alternating pattern, case folding,
	// groups.
	{`^[a-z]*a$`, false},
	{`^[0-9]+[0-9]$`, false},
	{`^a*b?c$`, true},
	{`^a*b?a$`, false},
	{`^[a-z]*x?[0-9]$`, false},
	{`[0-9]+`, false},
	{`^(a|b)$`, false},
	{`^(?i)abc$`, false},
	{`^(/([^~]|~[01])*)*$`, false},
	{`^[A-Za-z0-9_][A-Za-z0-9_.-]*\.json$`, false},
	{`^a.b$`, false},
	{`^a+?b$`, false},
}

func TestFastPatternAgreesWithRegexp(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 1))
	alphabet := []rune("aAbBcCzZ09-_.$/~é à ÿ\u0000\u200b\uFFFE\u00e9CRISSord_usrjson\x7f")
	for _, c := range patternCases {
		re := regexp.MustCompile(c.expr)
		fp := fastPattern(re)
		_, took := fp.(*seqPattern)
		if took != c.fast {
			t.Errorf("%s: fastPattern took it = %v, want %v", c.expr, took, c.fast)
		}
		if fp.String() != re.String() {
			t.Errorf("%s: String() = %q", c.expr, fp.String())
		}
		// Strings made of the pattern's own literal characters and the
		// alphabet, of every length up to 70.
		own := []rune(strings.Map(func(r rune) rune {
			if strings.ContainsRune(`^$[]{}()\*+?|`, r) {
				return -1
			}
			return r
		}, c.expr))
		pool := append(append([]rune{}, alphabet...), own...)
		var matched int
		for i := range 4000 {
			n := rng.IntN(70)
			if i < 70 {
				n = i
			}
			var b strings.Builder
			for range n {
				b.WriteRune(pool[rng.IntN(len(pool))])
			}
			s := b.String()
			want := re.MatchString(s)
			if got := fp.MatchString(s); got != want {
				t.Fatalf("%s on %q: got %v, regexp says %v", c.expr, s, got, want)
			}
			if want {
				matched++
			}
		}
		// Strings that should match, built from the pattern's pieces.
		for _, s := range []string{"CR-1", "CR-1234567890", "ord_7", "usr_abcdefgh", "ISS-0", "a.B", "ab", "b", "", "éàà", "éààx", "éàààx", "aac", "abc", "c", "aaba", "ba", "abc9", "x9", "9"} {
			if got, want := fp.MatchString(s), re.MatchString(s); got != want {
				t.Fatalf("%s on %q: got %v, regexp says %v", c.expr, s, got, want)
			}
		}
		t.Logf("%-45s fast=%-5v %d of 4000 random strings matched", c.expr, took, matched)
	}
}

func FuzzPattern(f *testing.F) {
	for _, c := range patternCases {
		f.Add(c.expr, "CR-12")
		f.Add(c.expr, "")
	}
	f.Fuzz(func(t *testing.T, expr, s string) {
		re, err := regexp.Compile(expr)
		if err != nil {
			return
		}
		if got, want := fastPattern(re).MatchString(s), re.MatchString(s); got != want {
			t.Fatalf("%q on %q: got %v, regexp says %v", expr, s, got, want)
		}
	})
}
