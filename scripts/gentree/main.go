// Command gentree writes a large contract and fixture tree to disk for
// timing airlock run on it: OUT/schemas, the bundled contracts, and
// OUT/fixtures, the bundled fixtures replicated under new names until
// there are at least -n of them (internal/testtree/bigtree, the tree
// BenchmarkRun in runner builds too). make bench writes the 10,000-fixture
// tree that scripts/runcompare times.
//
// Usage (from the repository's root):
//
//	go run ./scripts/gentree [-n 10000] [-schemas schemas] [-fixtures fixtures] -out DIR
//
// DIR may exist, but not DIR/schemas or DIR/fixtures. Exit status: 0 when
// the tree was written, 1 when it was not, 2 on a usage error.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/airlockdev/airlock/internal/testtree/bigtree"
)

func main() {
	n := flag.Int("n", 10000, "how many fixtures the tree holds at least")
	out := flag.String("out", "", "the folder to write schemas/ and fixtures/ into")
	schemas := flag.String("schemas", "schemas", "the contracts to copy")
	fixtures := flag.String("fixtures", "fixtures", "the fixtures to replicate")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: gentree [-n N] [-schemas DIR] [-fixtures DIR] -out DIR")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *out == "" || *n < 1 || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "gentree: %v\n", err)
		os.Exit(1)
	}
	written, err := bigtree.Write(*out, *schemas, *fixtures, *n)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gentree: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("gentree: %d fixtures (%s replicated) and the contracts of %s in %s\n", written, *fixtures, *schemas, *out)
}
