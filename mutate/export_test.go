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
	err = eachFixture(ctx, set, results, func(p fixture.Prepared, x MutantResult, mu Mutant) error {
		r, err := mu.open(ctx, set, x.Fixture, p)
		if err != nil {
			return err
		}
		b, err := io.ReadAll(r)
		out = append(out, b)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
