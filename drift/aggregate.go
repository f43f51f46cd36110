package drift

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/reports"
)

// driftAggregate sums what the fixtures of one upstream version show.
type driftAggregate struct {
	fixtures, recorded, historical, admitted, refused int
	refusals                                          map[string]*reports.RefusalCount
	findings                                          map[string]*findingAgg
	order                                             []string
	observed                                          map[string]*observedAgg
}

type findingAgg struct {
	f          rawFinding
	fixtures   []string
	unexpected int
}

type observedAgg struct {
	types       map[string]bool
	count       int
	strings     map[string]bool
	occurrences int
	overflow    bool
	minLen      int
	maxLen      int
	hasString   bool
	declared    bool
}

func newDriftAggregate() *driftAggregate {
	return &driftAggregate{refusals: map[string]*reports.RefusalCount{}, findings: map[string]*findingAgg{}, observed: map[string]*observedAgg{}}
}

func (a *driftAggregate) add(f fixture.Fixture, d fixtureDrift) {
	name := f.Kind + "/" + f.Name
	a.fixtures++
	if f.Kind == fixture.KindRecorded {
		a.recorded++
	} else {
		a.historical++
	}
	if d.admitted {
		a.admitted++
	} else {
		a.refused++
		r := a.refusals[d.reason]
		if r == nil {
			r = &reports.RefusalCount{Reason: d.reason}
			a.refusals[d.reason] = r
		}
		r.Count++
		r.Fixtures = append(r.Fixtures, name)
		if !d.expected {
			r.Unexpected++
		}
	}
	seen := map[string]bool{}
	for _, x := range d.findings {
		k := x.key()
		if seen[k] {
			continue
		}
		seen[k] = true
		g := a.findings[k]
		if g == nil {
			g = &findingAgg{f: x}
			a.findings[k] = g
			a.order = append(a.order, k)
		}
		g.fixtures = append(g.fixtures, name)
		if !d.expected {
			g.unexpected++
		}
	}
	for ptr, s := range d.shape {
		o := a.observed[ptr]
		if o == nil {
			o = &observedAgg{types: map[string]bool{}, strings: map[string]bool{}, declared: true}
			a.observed[ptr] = o
		}
		o.count++
		o.declared = o.declared && s.declared
		for t := range s.types {
			o.types[t] = true
		}
		for _, str := range s.strings {
			n := utf8.RuneCountInString(str)
			if !o.hasString || n < o.minLen {
				o.minLen = n
			}
			if !o.hasString || n > o.maxLen {
				o.maxLen = n
			}
			o.hasString = true
			o.occurrences++
			if n > maxEnumLikeLength {
				o.overflow = true
				continue
			}
			if !o.strings[str] && len(o.strings) == maxEnumLikeValues {
				o.overflow = true
				continue
			}
			o.strings[str] = true
		}
	}
}

// breakingKinds are the finding kinds that break the contract.
var breakingKinds = []string{reports.FindingForbidden, reports.FindingMissing, reports.FindingRetyped, reports.FindingNewEnumValue}

func (a *driftAggregate) report(version string) reports.DriftVersion {
	v := reports.DriftVersion{
		UpstreamVersion: version, Fixtures: a.fixtures, Recorded: a.recorded, Historical: a.historical,
		Admitted: a.admitted, Refused: a.refused,
		Refusals: []reports.RefusalCount{}, Findings: []reports.DriftFinding{}, Observed: []reports.ObservedPath{},
	}
	for _, reason := range slices.Sorted(maps.Keys(a.refusals)) {
		v.Refusals = append(v.Refusals, *a.refusals[reason])
	}
	for _, k := range a.order {
		g := a.findings[k]
		v.Findings = append(v.Findings, reports.DriftFinding{
			Kind: g.f.kind, Pointer: g.f.pointer, Keyword: g.f.keyword, Value: g.f.value,
			Seen: g.f.seen, Allowed: g.f.allowed,
			Count: len(g.fixtures), Fixtures: g.fixtures,
			Breaking: g.unexpected > 0 && slices.Contains(breakingKinds, g.f.kind),
			Message:  findingMessage(g, len(g.fixtures)),
		})
	}
	sort.SliceStable(v.Findings, func(i, j int) bool {
		x, y := v.Findings[i], v.Findings[j]
		if x.Breaking != y.Breaking {
			return x.Breaking
		}
		if a, b := slices.Index(reports.FindingKinds, x.Kind), slices.Index(reports.FindingKinds, y.Kind); a != b {
			return a < b
		}
		return x.Pointer < y.Pointer
	})
	for _, ptr := range slices.Sorted(maps.Keys(a.observed)) {
		o := a.observed[ptr]
		p := reports.ObservedPath{Pointer: ptr, Types: slices.Sorted(maps.Keys(o.types)), Count: o.count, Declared: o.declared}
		if o.hasString {
			p.MinLength, p.MaxLength = &o.minLen, &o.maxLen
			everyValueDiffers := len(o.strings) == o.occurrences && o.occurrences > 3
			if !o.overflow && !everyValueDiffers {
				p.Values = slices.Sorted(maps.Keys(o.strings))
			}
		}
		v.Observed = append(v.Observed, p)
	}
	return v
}

var plainPointer = regexp.MustCompile(`^[\x20-\x7e]*$`)

func findingMessage(g *findingAgg, n int) string {
	f := g.f
	where := f.pointer
	if where == "" {
		where = "the response"
	} else if !plainPointer.MatchString(where) {
		where = strconv.Quote(where)
	}
	in := fmt.Sprintf("in %d fixture(s)", n)
	expected := ""
	if g.unexpected == 0 && slices.Contains(breakingKinds, f.kind) {
		expected = "; every such fixture is an expected refusal"
	}
	switch f.kind {
	case reports.FindingForbidden:
		return fmt.Sprintf("%s is present %s but the schema forbids it (%s)%s", where, in, f.keyword, expected)
	case reports.FindingMissing:
		return fmt.Sprintf("%s is required but missing %s%s", where, in, expected)
	case reports.FindingRetyped:
		return fmt.Sprintf("%s is %s %s where the schema allows %s%s", where, strings.Join(f.seen, ", "), in, strings.Join(f.allowed, ", "), expected)
	case reports.FindingNewEnumValue:
		return fmt.Sprintf("%s is %s %s, not one of the schema's values%s", where, f.value, in, expected)
	case reports.FindingUndeclared:
		return fmt.Sprintf("%s is present %s and allowed, but the schema does not describe it", where, in)
	}
	return fmt.Sprintf("%s fails %s %s", where, f.keyword, in)
}
