package validator

import (
	"regexp/syntax"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// A pattern of the shape most contracts use — anchored at both ends, a
// sequence of literals and character classes, each possibly repeated —
// is matched without the regexp engine: one pass over the string, each
// item taking as many characters as it may. Taking the most is the only
// match when a repeated item's class shares no character with what must
// come next (up to the next item that must take one), which fastPattern
// requires; any other pattern keeps Go's
// regexp (which the schema compiler bounded, see schema.CompilePattern).

// patItem is one item of a sequence: a rune class taken min..max times
// (max -1: unbounded).
type patItem struct {
	ranges   []rune // pairs lo, hi (syntax.Regexp.Rune of a CharClass)
	min, max int
}

func (it *patItem) has(r rune) bool {
	for i := 0; i+1 < len(it.ranges); i += 2 {
		if r < it.ranges[i] {
			return false
		}
		if r <= it.ranges[i+1] {
			return true
		}
	}
	return false
}

// seqPattern matches a whole string against its items in order.
type seqPattern struct {
	jsonschema.Regexp // the regexp it stands for, for String and messages
	items             []patItem
}

// MatchString reports whether s matches, as the regexp's MatchString.
func (p *seqPattern) MatchString(s string) bool {
	i := 0
	for k := range p.items {
		it := &p.items[k]
		n := 0
		for i < len(s) && (it.max < 0 || n < it.max) {
			r, w := utf8.DecodeRuneInString(s[i:])
			if !it.has(r) {
				break
			}
			i += w
			n++
		}
		if n < it.min {
			return false
		}
	}
	return i == len(s)
}

// maxPatternItems bounds the items of a sequence pattern.
const maxPatternItems = 64

// fastPattern returns a matcher for re equal to re.MatchString, or re
// itself when its shape is not the one above.
func fastPattern(re jsonschema.Regexp) jsonschema.Regexp {
	if re == nil {
		return nil
	}
	ast, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return re
	}
	if ast.Op != syntax.OpConcat || len(ast.Sub) < 2 {
		return re
	}
	subs := ast.Sub
	if subs[0].Op != syntax.OpBeginText || subs[len(subs)-1].Op != syntax.OpEndText {
		return re
	}
	var items []patItem
	for _, sub := range subs[1 : len(subs)-1] {
		var ok bool
		if items, ok = appendItems(items, sub); !ok || len(items) > maxPatternItems {
			return re
		}
	}
	// Taking the most is right only when no item of variable length could
	// give a character to what follows: its class must be disjoint from
	// every later item's up to and including the first that must take a
	// character (or the end of text). Any match then gives it the same
	// run: a character of its class that it leaves, no later item can take.
	for k := range items {
		if items[k].min == items[k].max {
			continue
		}
		for j := k + 1; j < len(items); j++ {
			if overlap(items[k].ranges, items[j].ranges) {
				return re
			}
			if items[j].min >= 1 {
				break
			}
		}
	}
	return &seqPattern{Regexp: re, items: items}
}

// appendItems adds the items of one sequence element: a literal (each
// rune an item of one), a character class, or a repetition of either of
// one rune.
func appendItems(items []patItem, re *syntax.Regexp) ([]patItem, bool) {
	if re.Flags&syntax.FoldCase != 0 {
		return items, false
	}
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			items = append(items, patItem{ranges: []rune{r, r}, min: 1, max: 1})
		}
		return items, true
	case syntax.OpCharClass:
		return append(items, patItem{ranges: re.Rune, min: 1, max: 1}), true
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		if re.Flags&syntax.NonGreedy != 0 || len(re.Sub) != 1 {
			return items, false
		}
		one, ok := appendItems(nil, re.Sub[0])
		if !ok || len(one) != 1 {
			return items, false
		}
		it := one[0]
		switch re.Op {
		case syntax.OpStar:
			it.min, it.max = 0, -1
		case syntax.OpPlus:
			it.min, it.max = 1, -1
		case syntax.OpQuest:
			it.min, it.max = 0, 1
		default:
			it.min, it.max = re.Min, re.Max
		}
		return append(items, it), true
	}
	return items, false
}

// overlap reports whether two sorted range lists share a rune.
func overlap(a, b []rune) bool {
	i, j := 0, 0
	for i+1 < len(a) && j+1 < len(b) {
		switch {
		case a[i+1] < b[j]:
			i += 2
		case b[j+1] < a[i]:
			j += 2
		default:
			return true
		}
	}
	return false
}
