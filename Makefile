# airlock: `make run` runs the main job on the bundled contracts and fixtures,
# `make test` runs every test. See README.md.

GO       ?= go
BIN      := bin/airlock
PKGS     := ./...
BENCHTIME ?= 1s
BENCHCOUNT ?= 6

.PHONY: all build run test test-deps lint bench bench-base bench-deps fuzz schemas clean mcp-servers mcp-everything sarif-schema openapi-descriptions

all: build

build:
	$(GO) build -o $(BIN) ./cmd/airlock

# The main job: every bundled fixture through the gate, JUnit report in out/;
# --strict: a lint finding in the bundled contracts fails it too.
run: build
	$(BIN) run --strict --schemas schemas --fixtures fixtures --junit out/junit.xml --json out/results.json

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

# All tests, under the race detector: unit and ginkgo specs, conformance
# corpora (../shared/conformance, or $$AIRLOCK_CONFORMANCE), testscript CLI
# scripts, the fuzz seed corpora, the layering test, the CI integration (ci/:
# action.yml's steps and the GitLab template's jobs run as bash on the bundled
# tree and a failing one, the workflows checked, the release build run for
# this platform; needs git and bash), and the MCP record specs
# against real servers (installed first when npm is here); then the
# hostile-config battery, the YAML pre-scan's comparison with the parser and the gate's hook allocation count (gate/mode_alloc_test.go)
# without -race (the race detector's sync.Pool drops items, so allocation
# bounds do not hold under it, and these tests have no goroutines); then the example
# connector, a module of its own that requires airlock by its path. FuzzText
# runs a fixed 10,000 inputs, FuzzDifferential (the compiled validator
# against jsonschema/v6) 2,000, FuzzPattern (its pattern matcher against
# Go's regexp) 5,000, FuzzTape (the parse onto a tape, fast path
# included, against the strict parser) 5,000, FuzzSelfDiff (a schema
# diffed against itself reports no change) 2,000 and FuzzContractSelfDiff
# (a contract diffed against itself is empty) 2,000 (counts, not times: no
# deadline to miss on a loaded machine) beyond their seed corpora. The kill
# test (cmd/airlock) SIGKILLs bin/airlock, built without the race detector;
# the memory battery (cmd/airlock) runs bin/airlock check on ~16 MiB hostile
# bodies under ulimit -v 1 GiB, each to its verdict code and envelope.
test: lint test-deps build
	AIRLOCK_BIN=$(abspath $(BIN)) $(GO) test -race -count=1 $(PKGS)
	$(GO) test -count=1 -run 'TestStrictYAML|TestPrescan' ./internal/strictyaml
	$(GO) test -count=1 -run 'TestCheckHooksAllocations' ./gate
	$(GO) test -run '^$$' -fuzz '^FuzzText$$' -fuzztime 10000x -fuzzminimizetime 100x ./redact
	$(GO) test -run '^$$' -fuzz '^FuzzDifferential$$' -fuzztime 2000x ./internal/validator
	$(GO) test -run '^$$' -fuzz '^FuzzPattern$$' -fuzztime 5000x ./internal/validator
	$(GO) test -run '^$$' -fuzz '^FuzzTape$$' -fuzztime 5000x ./internal/strictjson
	$(GO) test -run '^$$' -fuzz '^FuzzSelfDiff$$' -fuzztime 2000x -fuzzminimizetime 100x ./schemadiff
	$(GO) test -run '^$$' -fuzz '^FuzzContractSelfDiff$$' -fuzztime 2000x -fuzzminimizetime 100x ./schemadiff
	cd examples/connector && $(GO) vet ./... && $(GO) test -count=1 ./...

# What the tests use beyond Go: the pinned MCP servers from npm. Without npm
# the MCP specs are skipped with a message (and fail under CI=true). The
# JUnit consumer test needs xmllint and Python's junitparser (Debian
# libxml2-utils, python3-junitparser; .ci/run installs them); without them it
# is skipped with a message (and fails under CI=true).
test-deps:
	@command -v xmllint >/dev/null 2>&1 && /usr/bin/python3 -c 'import junitparser' >/dev/null 2>&1 || \
	  echo "make: xmllint or python3-junitparser not found: the JUnit consumer test will be skipped (CI=true: fail)"
	@if command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1; then 	  $(MAKE) --no-print-directory mcp-servers sarif-schema openapi-descriptions; 	else echo "make: node/npm not found: the MCP record specs, the SARIF schema test and the OpenAPI import specs will be skipped (CI=true: fail)"; fi

# The public MCP servers the record specs start over stdio, pinned,
# installed from npm into .ci/node (git-ignored): server-everything
# (structuredContent, and get-env's JSON in a text block), server-memory and
# server-sequential-thinking (JSON in a text block beside structuredContent).
# The specs find them there, or through $$AIRLOCK_MCP_EVERYTHING,
# $$AIRLOCK_MCP_MEMORY and $$AIRLOCK_MCP_SEQUENTIAL_THINKING (each the
# package's dist/index.js); without them they are skipped, except under
# CI=true. A package is installed again only when its version differs.
MCP_EVERYTHING_VERSION ?= 2026.8.31
MCP_MEMORY_VERSION     ?= 2026.8.31
MCP_THINKING_VERSION   ?= 2026.8.31
MCP_SERVERS := server-everything@$(MCP_EVERYTHING_VERSION) server-memory@$(MCP_MEMORY_VERSION) \
	server-sequential-thinking@$(MCP_THINKING_VERSION)
mcp-servers:
	@for s in $(MCP_SERVERS); do \
	  name=$${s%@*}; want=$${s#*@}; \
	  v=$$(node -p "require('./.ci/node/node_modules/@modelcontextprotocol/$$name/package.json').version" 2>/dev/null); \
	  if [ "$$v" != "$$want" ]; then \
	    npm install --prefix .ci/node --no-save --no-audit --no-fund --loglevel=error \
	      $(addprefix @modelcontextprotocol/,$(MCP_SERVERS)) || exit 1; \
	    break; \
	  fi; \
	done

# The first of them alone (its name is older than the others').
mcp-everything: mcp-servers

# The SARIF 2.1.0 JSON Schema the lint SARIF test validates against: the
# sarif-2.1.0.json that Microsoft's SARIF SDK ships in its npm package
# @microsoft/sarif-multitool-linux (MIT licence), pinned; only that one file
# is kept, in .ci/node/sarif (git-ignored). The test finds it there or
# through $$AIRLOCK_SARIF_SCHEMA; without it it is skipped, except under CI=true.
SARIF_MULTITOOL_VERSION ?= 5.7.0
SARIF_SCHEMA            := .ci/node/sarif/sarif-2.1.0.json
sarif-schema:
	@if [ ! -s $(SARIF_SCHEMA) ]; then \
	  set -e; tmp=$$(mktemp -d); \
	  (cd $$tmp && npm pack --silent --loglevel=error @microsoft/sarif-multitool-linux@$(SARIF_MULTITOOL_VERSION) >/dev/null && \
	    tar -xzf microsoft-sarif-multitool-linux-$(SARIF_MULTITOOL_VERSION).tgz package/sarif-2.1.0.json); \
	  mkdir -p $(dir $(SARIF_SCHEMA)); mv $$tmp/package/sarif-2.1.0.json $(SARIF_SCHEMA).tmp && mv $(SARIF_SCHEMA).tmp $(SARIF_SCHEMA); \
	  rm -rf $$tmp; \
	fi

# Public OpenAPI descriptions the import specs read (importer/realworld_test.go),
# pinned npm packages, MIT licensed, unpacked into .ci/node/openapi/<package>-<version>/
# (git-ignored), only the files named here: GitHub's REST API description
# (OpenAPI 3.0.3; api.github.com and two GitHub Enterprise Server releases, 3.17 and
# 3.19, as two upstream versions of one API) from @octokit/openapi; the Train Travel
# API and the petstore (OpenAPI 3.1, 3.0 and Swagger 2.0) from @readme/oas-examples;
# Scalar's Galaxy (OpenAPI 3.1.1) from @scalar/galaxy. A package is fetched again only
# when its folder's .complete mark does not list the files named here. The specs find them there or under $$AIRLOCK_OPENAPI_DIR;
# without them they are skipped, except under CI=true.
OPENAPI_DIR := .ci/node/openapi
OPENAPI_PACKAGES := \
	@octokit/openapi@23.0.2:package/LICENSE,package/generated/api.github.com.json,package/generated/ghes-3.17.json,package/generated/ghes-3.19.json \
	@readme/oas-examples@8.2.2:package/package.json,package/3.1/json/train-travel.json,package/3.1/json/petstore.json,package/3.0/json/petstore.json,package/2.0/json/petstore.json \
	@scalar/galaxy@0.6.12:package/LICENSE,package/dist/3.1.json
openapi-descriptions:
	@set -e; for s in $(OPENAPI_PACKAGES); do \
	  pkg=$${s%%:*}; files=$${s#*:}; name=$${pkg%@*}; ver=$${pkg##*@}; \
	  dir=$(OPENAPI_DIR)/$$(printf %s "$$name" | tr -d @ | tr / -)-$$ver; \
	  if [ "$$(cat $$dir/.complete 2>/dev/null)" != "$$files" ]; then \
	    tmp=$$(mktemp -d); \
	    (cd $$tmp && npm pack --silent --loglevel=error $$pkg >/dev/null && mkdir x && tar -xzf ./*.tgz -C x $$(printf %s "$$files" | tr , ' ')); \
	    rm -rf $$dir; mkdir -p $(OPENAPI_DIR); mv $$tmp/x/package $$dir; printf %s "$$files" > $$dir/.complete; rm -rf $$tmp; \
	  fi; \
	done

# Benchmarks, in one run. First the gate (./gate, BENCHCOUNT runs each; the
# ratio table takes medians): BenchmarkCheck, the whole gate against
# encoding/json + the same schema on ~2 KB and ~200 KB results;
# BenchmarkParseValidate, the gate's strict parse + compiled validator alone
# on the same bodies, which also writes its schema and bodies into
# $(BENCH_INPUTS) for scripts/ajvbench to time ajv's JSON.parse + validate
# on the same bytes (skipped with a message without node). Then the worst
# case, WORSTCOUNT single checks (BenchmarkWorstCase: a 4 MiB body whose
# every item fails a 16-branch oneOf, refused, beside an admitted 4 MiB
# list), and the peak resident memory of one check of each in a process of
# its own (TestPeakRSS). scripts/benchratio prints the table and whether
# each target holds: engine/ajv throughput ≥ 1.0; gate/baseline ≥ 5×, gate
# allocs/op ≤ body bytes/100 + 50, gate B/op ≤ baseline's; refused/admitted
# CPU time ≤ 1.5×; peak RSS ≤ 32 MiB + 8 × body. Then the runner
# (fixtures/s, peak heap) and the mutation engine (mutants/s over the
# bundled fixtures; BenchmarkMutate200KB: sec/op, mutants/s and
# peak-heap-MB for one generated 200 KB fixture at the default cap); then
# bin/airlock run on the generated 10,000-fixture tree (scripts/gentree,
# in $(BENCH_TREE)) against bin/airlock-base, built from BENCH_BASE, the
# revision before issue 14's work (make bench-base): RUNCOUNT runs of each,
# in turns, median wall, CPU time and peak RSS, fixtures/s, and whether
# new/base throughput ≥ 3.5× held by CPU and by wall time
# (scripts/runcompare; a warning when the two disagree on the testcases);
# the redactor,
# then the hostile-config battery: each hostile YAML file (1 MiB or as large
# as it gets) decoded as a requests file, with bytes allocated per input
# byte and the ratios to a harmless file of the same size (B/in-B,
# x-harmless-B, x-harmless-ns; BenchmarkHostile in internal/strictyaml).
# Last, the package initialisation of bin/airlock check (GODEBUG=inittrace=1,
# median of 5 starts): airlock's packages and all, the top 5, and whether
# the 2 ms target held (scripts/inittrace; MISSED when it did not).
# Then airlock import openapi on a 5 MB description cut from GitHub's (the
# pulls/get path and the paths after it, with the components they reach),
# in processes of their own: median wall time and peak RSS against <= 10 s
# and <= 500 MB, the load of the contract it wrote against <= 1 s, and the
# whole 13 MB description for the record (scripts/importbench). Last,
# airlock diff at real size: GitHub's 969 component schemas imported into
# one 5.3 MB schema (970 files) and diffed against itself, both compiles
# included: time and peak heap against <= 10 s and <= 1 GB
# (BenchmarkSelfDiffLarge in ./schemadiff), and two real versions at that
# size, the components of GitHub Enterprise Server 3.17 and 3.19 (time,
# peak heap, changes by level; BenchmarkDiffLargeVersions); each skipped
# with a message without the descriptions. Last, airlock proxy's load
# (BenchmarkProxyLoad in ./proxy): 8 go-sdk clients over loopback
# streamable HTTP, PROXYLOADTIME rounds of 200 calls each per client
# returning a ~2 KB result, directly and through the proxy's HTTP front (a
# process of its own) in turns: p50/p99 of both sides and the proxy's added
# latency against added p99 <= 2 ms; then 128 hostile 1 MiB results through
# the proxy (8 at once), its peak RSS against <= 64 MiB + 8 x 8 MiB = 128
# MiB; each printed as holds or MISSED.
PROXYLOADTIME ?= 3x
WORSTTIME    ?= 1x
WORSTCOUNT   ?= 3
BENCH_INPUTS := out/bench
bench: bench-deps
	rm -rf $(BENCH_INPUTS) bench.out
	AIRLOCK_BENCH_INPUTS=$(abspath $(BENCH_INPUTS)) $(GO) test -run '^$$' -bench '^Benchmark(Check|ParseValidate)$$' -benchmem -benchtime $(BENCHTIME) -count $(BENCHCOUNT) ./gate | tee bench.out
	@if [ -s $(AJV_PREFIX)/node_modules/ajv/package.json ] && command -v node >/dev/null 2>&1; then \
	  echo "node scripts/ajvbench/bench.mjs --inputs $(BENCH_INPUTS) --prefix $(AJV_PREFIX) --benchtime $(BENCHTIME) --count $(BENCHCOUNT)"; \
	  node scripts/ajvbench/bench.mjs --inputs $(BENCH_INPUTS) --prefix $(AJV_PREFIX) --benchtime $(BENCHTIME) --count $(BENCHCOUNT) > $(BENCH_INPUTS)/ajv.out \
	    || { cat $(BENCH_INPUTS)/ajv.out; exit 1; }; \
	  cat $(BENCH_INPUTS)/ajv.out | tee -a bench.out; \
	else echo "make: ajv is not installed (no node/npm): the ajv side is skipped, engine/ajv is not measured"; fi
	$(GO) test -run '^$$' -bench '^BenchmarkWorstCase$$' -benchmem -benchtime $(WORSTTIME) -count $(WORSTCOUNT) ./gate | tee -a bench.out
	AIRLOCK_PEAK_RSS=1 $(GO) test -count=1 -run '^TestPeakRSS$$' -v ./gate | tee -a bench.out
	$(GO) run ./scripts/benchratio < bench.out
	$(GO) test -run '^$$' -bench . -benchtime 3x ./runner ./mutate ./lint
	$(MAKE) --no-print-directory bench-base
	@if [ -x $(BENCH_BASE_BIN) ]; then \
	  set -ex; rm -rf $(BENCH_TREE); \
	  $(GO) run ./scripts/gentree -n 10000 -out $(BENCH_TREE); \
	  $(GO) build -o $(BIN) ./cmd/airlock; \
	  $(GO) run ./scripts/runcompare -base $(BENCH_BASE_BIN) -new $(BIN) -tree $(BENCH_TREE) -runs $(RUNCOUNT); \
	fi
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 3x ./redact
	$(GO) test -run '^$$' -bench '^BenchmarkParse$$' -benchmem -benchtime $(BENCHTIME) ./internal/strictjson
	$(GO) test -run '^$$' -bench 'Hostile/requests' -benchmem -benchtime 3x ./internal/strictyaml
	$(GO) build -o $(BIN) ./cmd/airlock
	$(GO) run ./scripts/inittrace -runs 5 -- $(BIN) check --help
	@if command -v npm >/dev/null 2>&1; then $(MAKE) --no-print-directory openapi-descriptions; fi
	@if [ -s $(OPENAPI_DIR)/octokit-openapi-23.0.2/generated/api.github.com.json ]; then \
	  echo "go run ./scripts/importbench -bin $(BIN) -spec $(OPENAPI_DIR)/octokit-openapi-23.0.2/generated/api.github.com.json"; \
	  $(GO) run ./scripts/importbench -bin $(BIN) -spec $(OPENAPI_DIR)/octokit-openapi-23.0.2/generated/api.github.com.json; \
	else echo "make: GitHub's OpenAPI description is not installed (no npm): the import benchmark is skipped"; fi
	$(GO) test -run '^$$' -bench '^Benchmark(SelfDiffLarge|DiffLargeVersions)$$' -benchtime 1x -count 3 ./schemadiff
	$(GO) test -run '^$$' -bench '^BenchmarkProxyLoad$$' -benchtime $(PROXYLOADTIME) ./proxy

# The baseline of the runner comparison: bin/airlock-base built from
# BENCH_BASE (git archive into a temporary folder; the same module). In a
# clone without that revision (a shallow one), a message, and make bench
# skips the comparison.
BENCH_BASE     ?= 2f1b8a0
BENCH_BASE_BIN := bin/airlock-base
BENCH_TREE     := out/tree10k
RUNCOUNT       ?= 5
bench-base:
	@rm -f $(BENCH_BASE_BIN); \
	if git cat-file -e '$(BENCH_BASE)^{commit}' 2>/dev/null; then \
	  set -e; tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	  echo "git archive $(BENCH_BASE) | tar -x -C $$tmp; go build -o $(BENCH_BASE_BIN) ./cmd/airlock"; \
	  git archive $(BENCH_BASE) | tar -x -C $$tmp; \
	  (cd $$tmp && $(GO) mod download && $(GO) build -o $(abspath $(BENCH_BASE_BIN)) ./cmd/airlock); \
	else echo "make: git revision $(BENCH_BASE) not found (a shallow clone?): the runner comparison is skipped"; fi

# What make bench uses beyond Go: ajv 8 and ajv-formats, pinned, installed
# from npm into .ci/node/ajvbench (git-ignored; their own dependencies
# follow ajv's version ranges). Installed again only when a version
# differs; without npm, a message, and make bench skips the ajv side.
AJV_VERSION         ?= 8.20.0
AJV_FORMATS_VERSION ?= 3.0.1
AJV_PREFIX          := .ci/node/ajvbench
bench-deps:
	@if command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1; then \
	  for p in ajv@$(AJV_VERSION) ajv-formats@$(AJV_FORMATS_VERSION); do \
	    name=$${p%@*}; want=$${p#*@}; \
	    v=$$(node -p "require('./$(AJV_PREFIX)/node_modules/$$name/package.json').version" 2>/dev/null); \
	    if [ "$$v" != "$$want" ]; then \
	      npm install --prefix $(AJV_PREFIX) --no-save --no-audit --no-fund --loglevel=error \
	        ajv@$(AJV_VERSION) ajv-formats@$(AJV_FORMATS_VERSION) || exit 1; \
	      break; \
	    fi; \
	  done; \
	else echo "make: node/npm not found: make bench will skip the ajv side"; fi

# Run each fuzz target for FUZZTIME (default 30s). FuzzMarshalMeta's inputs
# grow large, and minimising one may take the default 60s: it gets 5s.
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./gate
	$(GO) test -run '^$$' -fuzz '^FuzzGate$$' -fuzztime $(FUZZTIME) ./gate
	$(GO) test -run '^$$' -fuzz '^FuzzMarshalMeta$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./fixture
	$(GO) test -run '^$$' -fuzz '^FuzzPrescan$$' -fuzztime $(FUZZTIME) ./internal/strictyaml
	$(GO) test -run '^$$' -fuzz '^FuzzText$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./redact
	$(GO) test -run '^$$' -fuzz '^FuzzDifferential$$' -fuzztime $(FUZZTIME) ./internal/validator
	$(GO) test -run '^$$' -fuzz '^FuzzPattern$$' -fuzztime $(FUZZTIME) ./internal/validator
	$(GO) test -run '^$$' -fuzz '^FuzzTape$$' -fuzztime $(FUZZTIME) ./internal/strictjson
	$(GO) test -run '^$$' -fuzz '^FuzzSelfDiff$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./schemadiff
	$(GO) test -run '^$$' -fuzz '^FuzzContractSelfDiff$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./schemadiff

# Refresh the published copies of airlock's own schemas.
schemas: build
	$(BIN) schema contract > schemas/contract.schema.json
	$(BIN) schema fixture-meta > schemas/fixture-meta.schema.json
	$(BIN) schema results > schemas/results.schema.json
	$(BIN) schema diff > schemas/diff.schema.json
	$(BIN) schema drift > schemas/drift.schema.json

clean:
	rm -rf bin out bench.out
