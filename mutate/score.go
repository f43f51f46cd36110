package mutate

// Score is the mutation score of one contract and upstream version.
type Score struct {
	Tool, UpstreamVersion string
	Generated, Killed     int
	// ByFamily counts generated and killed mutants per family:
	// ByFamily["values"] = [generated, killed]. A family that generated
	// nothing has no entry; list families in Families order.
	ByFamily map[string][2]int
}

// Ratio is killed / generated (1 when nothing was generated).
func (s Score) Ratio() float64 {
	if s.Generated == 0 {
		return 1
	}
	return float64(s.Killed) / float64(s.Generated)
}

// scoreBoard adds up results per tool and upstream version, keeping the
// order in which each pair was first seen.
type scoreBoard struct {
	byKey map[[2]string]*Score
	order [][2]string
}

// add counts the results of one fixture of tool and upstream version.
func (b *scoreBoard) add(tool, version string, results []MutantResult) {
	k := [2]string{tool, version}
	if b.byKey == nil {
		b.byKey = map[[2]string]*Score{}
	}
	s := b.byKey[k]
	if s == nil {
		s = &Score{Tool: tool, UpstreamVersion: version, ByFamily: map[string][2]int{}}
		b.byKey[k] = s
		b.order = append(b.order, k)
	}
	for _, r := range results {
		fam := s.ByFamily[r.Mutant.Family]
		s.Generated++
		fam[0]++
		if r.Outcome == Killed {
			s.Killed++
			fam[1]++
		}
		s.ByFamily[r.Mutant.Family] = fam
	}
}

// scores lists the scores in first-seen order.
func (b *scoreBoard) scores() []Score {
	out := make([]Score, 0, len(b.order))
	for _, k := range b.order {
		out = append(out, *b.byKey[k])
	}
	return out
}
