package mutate

// Score is the mutation score of one contract and upstream version
// (docs/mutate.md, Score).
type Score struct {
	Tool, UpstreamVersion string
	// Generated counts the mutants run through the gate (every outcome but
	// Equivalent); Killed those killed.
	Generated, Killed int
	// Scored is what Ratio divides by: Generated less Baselined, and less
	// Unseen unless the score is Strict.
	Scored int
	// Survived counts the mutants that reach the agent (not baselined);
	// Unseen the admitted mutants whose agent output is the fixture's (not
	// baselined); Baselined those a baseline entry accepts; Equivalent
	// those dropped before running. Failed counts WrongReason and Leaked.
	Survived, Unseen, Baselined, Equivalent, Failed int
	// Strict is Options.Strict: Unseen counts against the score.
	Strict bool
	// ByFamily counts scored and killed mutants per family:
	// ByFamily["values"] = [scored, killed]. A mutant counts in the family
	// of its result (MutantResult.Family: a projection-stage refusal counts
	// in FamilyProjection). A family that scored nothing has no entry; list
	// families in Families order.
	ByFamily map[string][2]int
}

// Ratio is Killed / Scored (1 when nothing was scored).
func (s Score) Ratio() float64 {
	if s.Scored == 0 {
		return 1
	}
	return float64(s.Killed) / float64(s.Scored)
}

// Percent is the score in percent, rounded down to two decimals
// (Killed*10000/Scored in integers, then /100): 100.00 only when every
// scored mutant was killed (24020 of 24021 is 99.99, never 100.00); 100
// when nothing was scored. Every printed score uses it.
func (s Score) Percent() float64 {
	if s.Scored == 0 {
		return 100
	}
	return float64(int64(s.Killed)*10000/int64(s.Scored)) / 100
}

// scoresOf adds up results per tool and upstream version, in the order in
// which each pair is first seen.
func scoresOf(results []MutantResult, strict bool) []Score {
	byKey := map[[2]string]*Score{}
	var order [][2]string
	for _, r := range results {
		k := [2]string{r.Fixture.Tool, r.Fixture.UpstreamVersion}
		s := byKey[k]
		if s == nil {
			s = &Score{Tool: k[0], UpstreamVersion: k[1], Strict: strict, ByFamily: map[string][2]int{}}
			byKey[k] = s
			order = append(order, k)
		}
		switch r.Outcome {
		case Equivalent:
			s.Equivalent++
			continue
		case Baselined:
			s.Generated++
			s.Baselined++
			continue
		case Unseen:
			s.Unseen++
			if !strict {
				s.Generated++
				continue
			}
		case Survived:
			s.Survived++
		case WrongReason, Leaked:
			s.Failed++
		}
		s.Generated++
		s.Scored++
		fam := s.ByFamily[r.Family]
		fam[0]++
		if r.Outcome == Killed {
			s.Killed++
			fam[1]++
		}
		s.ByFamily[r.Family] = fam
	}
	out := make([]Score, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	return out
}
