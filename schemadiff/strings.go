package schemadiff

import (
	"github.com/airlockdev/airlock/internal/schemawalk"
	"github.com/airlockdev/airlock/reports"
)

// The string families: pattern and format (airlock asserts formats). Every
// pattern or format that applies at a location counts; the two sides are
// compared as sets.

var (
	patternChanged = Rule{ID: RulePatternChanged, Level: reports.Breaking,
		Description: "A string pattern changed: whether the new one admits more cannot be decided, so strings the old pattern refused may arrive."}
	patternRemoved = Rule{ID: RulePatternRemoved, Level: reports.Breaking,
		Description: "A string pattern was dropped: strings of any shape may arrive."}
	patternAdded = Rule{ID: RulePatternAdded, Level: reports.Compatible,
		Description: "A string pattern now restricts a string that used to be free."}
	formatChanged = Rule{ID: RuleFormatChanged, Level: reports.Breaking,
		Description: "A string format changed (airlock asserts formats): strings of another format may arrive."}
	formatRemoved = Rule{ID: RuleFormatRemoved, Level: reports.Breaking,
		Description: "A string format was dropped: strings the old format refused may arrive."}
	formatAdded = Rule{ID: RuleFormatAdded, Level: reports.Compatible,
		Description: "A string format now restricts a string that used to be free."}
)

// comparePatterns compares the patterns, where both sides allow strings.
func comparePatterns(o, n *View, e *Emitter) {
	if common(o, n)&schemawalk.String != 0 {
		compareStrings(o.patterns, n.patterns, "pattern", patternAdded, patternRemoved, patternChanged, o, n, e)
	}
}

// compareFormats compares the formats, where both sides allow strings.
func compareFormats(o, n *View, e *Emitter) {
	if common(o, n)&schemawalk.String != 0 {
		compareStrings(o.formats, n.formats, "format", formatAdded, formatRemoved, formatChanged, o, n, e)
	}
}

// compareStrings compares the keyword kw's values on each side: only new
// ones are each added, only old ones each removed, both one change (the
// first of each).
func compareStrings(ol, nl []located, kw string, added, removed, changed Rule, o, n *View, e *Emitter) {
	gone, fresh := missingFrom(ol, nl), missingFrom(nl, ol)
	switch {
	case len(gone) == 0 && len(fresh) == 0:
	case len(gone) == 0:
		for _, x := range fresh {
			e.Emit(added, o.ptr, x.ptr, "%s %q added", kw, x.text)
		}
	case len(fresh) == 0:
		for _, x := range gone {
			e.Emit(removed, x.ptr, n.ptr, "%s %q dropped", kw, x.text)
		}
	default:
		e.Emit(changed, gone[0].ptr, fresh[0].ptr, "%s changed from %q to %q", kw, gone[0].text, fresh[0].text)
	}
}

// missingFrom is the entries of a whose text b does not have, in a's order.
func missingFrom(a, b []located) []located {
	in := map[string]bool{}
	for _, x := range b {
		in[x.text] = true
	}
	var out []located
	for _, x := range a {
		if !in[x.text] {
			out = append(out, x)
		}
	}
	return out
}
