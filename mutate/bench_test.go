package mutate_test

import (
	"context"
	"testing"

	"github.com/airlockdev/airlock/mutate"
)

// BenchmarkMutate measures mutants generated and proven per second over the
// bundled contracts and fixtures (every mutant through the whole gate, the
// envelope and canary checks).
func BenchmarkMutate(b *testing.B) {
	n := 0
	for range b.N {
		rep, err := mutate.Mutate(context.Background(), mutate.Options{SchemasDir: "../schemas", FixturesDir: "../fixtures"})
		if err != nil {
			b.Fatal(err)
		}
		if len(rep.Survivors()) > 0 {
			b.Fatalf("%d survivors in the bundled contracts", len(rep.Survivors()))
		}
		n += len(rep.Results)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "mutants/s")
}
