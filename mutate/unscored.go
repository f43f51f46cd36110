package mutate

import (
	"context"
	"path/filepath"
	"slices"

	"github.com/airlockdev/airlock/fixture"
)

// The upstream versions a run could not score (Report.Unscored), in an
// unsharded run and in one shard of a sharded one.

// scoredOf returns the (tool, upstream version) pairs results are of.
func scoredOf(results []MutantResult) map[[2]string]bool {
	scored := map[[2]string]bool{}
	for _, r := range results {
		scored[[2]string{r.Fixture.Tool, r.Fixture.UpstreamVersion}] = true
	}
	return scored
}

// unscoredSharded is unscored for one shard of a sharded run: the
// unscored versions are contract-level, so shard 1 alone reports them,
// judged over the whole selection (set.Unsharded) as the unsharded run
// judges them, and the other shards report none. Shard 1 learns whether
// another shard's fixture is skipped by checking that fixture's original
// (the gate, once; no mutant), only for the versions none of its own
// results is of. A fixture whose original is admitted counts its version
// as scored.
func unscoredSharded(ctx context.Context, set *fixture.Set, opts Options, fixtures []fixture.Fixture, skipped []string, results []MutantResult) ([]Unscored, error) {
	if !opts.Filter.Shard.ReportsContract() {
		return nil, nil
	}
	scored := scoredOf(results)
	own := map[string]string{}
	for i, f := range fixtures {
		own[fixtureKey(f)] = skipped[i]
	}
	var all []fixture.Fixture
	var allSkipped []string
	for _, f := range set.Unsharded {
		if f.Kind != fixture.KindAccepted && f.Kind != fixture.KindHistorical {
			continue
		}
		why, mine := own[fixtureKey(f)]
		if !mine && !scored[[2]string{f.Tool, f.UpstreamVersion}] {
			p, err := set.Prepare(f)
			if err != nil {
				return nil, err
			}
			j, skip, err := fixtureMutator(ctx, set, f, p)
			if err != nil {
				return nil, err
			}
			if j != nil {
				scored[[2]string{f.Tool, f.UpstreamVersion}] = true
			}
			why = skip
		}
		all = append(all, f)
		allSkipped = append(allSkipped, why)
	}
	return unscored(set, opts.FixturesDir, all, allSkipped, scored, opts.Filter), nil
}

// unscored lists the selected upstream versions of set's contracts that
// are not in scored, with their selected accepted and historical fixtures
// and why each was skipped (skipped[i] for fixtures[i]).
func unscored(set *fixture.Set, fixturesDir string, fixtures []fixture.Fixture, skipped []string, scored map[[2]string]bool, filter fixture.Filter) []Unscored {
	var out []Unscored
	for _, c := range set.List {
		for _, v := range c.UpstreamVersions() {
			if scored[[2]string{c.Tool(), v}] || len(filter.UpstreamVersions) > 0 && !slices.Contains(filter.UpstreamVersions, v) {
				continue
			}
			u := Unscored{Tool: c.Tool(), UpstreamVersion: v, Dir: filepath.Join(fixturesDir, c.Tool(), v)}
			for i, f := range fixtures {
				if f.Tool == c.Tool() && f.UpstreamVersion == v {
					u.Fixtures++
					u.Skipped = append(u.Skipped, f.Body+": "+skipped[i])
				}
			}
			out = append(out, u)
		}
	}
	return out
}
