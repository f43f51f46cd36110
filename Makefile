# airlock: `make run` runs the main job on the bundled contracts and fixtures,
# `make test` runs every test. See README.md.

GO       ?= go
BIN      := bin/airlock
PKGS     := ./...
BENCHTIME ?= 2s

.PHONY: all build run test lint bench fuzz schemas clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/airlock

# The main job: every bundled fixture through the gate, JUnit report in out/.
run: build
	$(BIN) run --schemas schemas --fixtures fixtures --junit out/junit.xml --json out/results.json

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

# All tests: unit and ginkgo specs, conformance corpora (../shared/conformance,
# or $$AIRLOCK_CONFORMANCE), testscript CLI scripts, and the fuzz seed corpora.
test: lint
	$(GO) test -count=1 $(PKGS)

# Benchmarks: the gate against encoding/json+schema on ~2 KB and ~200 KB
# results, then the ratio table.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./gate | tee bench.out
	$(GO) run ./scripts/benchratio < bench.out

# Run each fuzz target for FUZZTIME (default 30s).
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./gate
	$(GO) test -run '^$$' -fuzz '^FuzzGate$$' -fuzztime $(FUZZTIME) ./gate

# Refresh the published copies of airlock's own schemas.
schemas: build
	$(BIN) schema contract > schemas/contract.schema.json
	$(BIN) schema fixture-meta > schemas/fixture-meta.schema.json
	$(BIN) schema results > schemas/results.schema.json

clean:
	rm -rf bin out bench.out
