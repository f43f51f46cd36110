package mutate

import (
	"context"
	"io"

	"github.com/airlockdev/airlock/fixture"
)

// BuiltBodies is the number of mutant bodies built so far in this process.
func BuiltBodies() int64 { return builtBodies.Load() }

// Bodies builds again, as WriteMutants does, the body of each result, read
// whole (the oversize mutant's stream included).
func Bodies(ctx context.Context, opts Options, results []MutantResult) ([][]byte, error) {
	set, err := fixture.Open(opts.SchemasDir, "", fixture.Filter{Tools: opts.Filter.Tools}, opts.Gate)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, 0, len(results))
	for i := 0; i < len(results); {
		f := results[i].Fixture
		j := i + 1
		for j < len(results) && results[j].Fixture.Body == f.Body {
			j++
		}
		p, err := set.Prepare(f)
		if err != nil {
			return nil, err
		}
		ms := make([]Mutant, 0, j-i)
		for _, x := range results[i:j] {
			ms = append(ms, x.Mutant)
		}
		again, err := rebuild(ctx, set, f, p, ms)
		if err != nil {
			return nil, err
		}
		for _, mu := range again {
			r, err := mu.open(ctx, set, f, p)
			if err != nil {
				return nil, err
			}
			b, err := io.ReadAll(r)
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
		i = j
	}
	return out, nil
}
