// Package reports writes the results of an airlock run for people and
// tools: JUnit XML (GitLab, Jenkins, GitHub Actions reporters), a JSON
// results file whose schema is published as schemas/results.schema.json,
// and a console summary; and it merges the JUnit reports and JSON results
// of the N shards of one run (merge.go, airlock merge). Every text that
// may carry upstream bytes passes through Clean, the one place where
// output is sanitised.
package reports

import (
	_ "embed"
	"sort"
	"time"

	"github.com/airlockdev/airlock/internal/shard"
)

// Status is a testcase's result.
type Status string

// Testcase statuses. Unchecked marks a fixture without an expectation to
// check (a near-miss that names no reason): visible, never a pass. Errored
// marks a tool whose contract did not load (see ContractError): none of its
// fixtures could run.
const (
	Passed    Status = "passed"
	Failed    Status = "failed"
	Unchecked Status = "unchecked"
	Errored   Status = "error"
)

// SuiteContract is the suite of the one testcase a broken contract gives
// its tool (ContractError).
const SuiteContract = "contract"

// Case is one testcase: one fixture in one suite.
type Case struct {
	Tool            string `json:"tool"`
	UpstreamVersion string `json:"upstream_version"`
	// Kind is the fixture's folder: accepted, near-miss, historical,
	// recorded; "" (and UpstreamVersion "") for a broken contract.
	Kind string `json:"kind"`
	// Suite is parse, schema, semantic, projection, no-leak, mutation, or
	// contract for a broken contract.
	Suite string `json:"suite"`
	// Name is the fixture's file name; File its path as discovered.
	Name string `json:"name"`
	File string `json:"file"`
	// Line and Column place a broken contract's case (suite contract) in
	// File: the 1-based line and column its configuration error names; 0
	// when unknown, and for every fixture's case (a fixture is its whole
	// file).
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	Status Status `json:"status"`
	// Expected and Actual are outcomes: "admitted" or a reason code.
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
	// Message is a one-line summary of a failure; Detail may hold a diff.
	Message string `json:"message,omitempty"`
	Detail  string `json:"detail,omitempty"`
	// Duration is the fixture's time through the gate and the suite checks.
	Duration time.Duration `json:"duration_ns"`
	// Warnings are the verdict's warnings (gate.Warning) as "code at
	// instance location" lines: what was let through without deciding the
	// verdict (an annotated format, an inexact number). Every case of the
	// fixture carries them.
	Warnings []string `json:"warnings,omitempty"`
}

// Classname is JUnit's classname for the case:
// tool.upstream-version.kind.suite. Tool names hold no dot and kinds and
// suites are fixed words, so the classname tells them apart even when an
// upstream version holds dots; with the fixture name as the testcase name,
// (classname, name) names one testcase of a run. A case without upstream
// version and kind (a broken contract's) is tool.suite: "tool.contract".
func (c Case) Classname() string {
	if c.UpstreamVersion == "" && c.Kind == "" {
		return c.Tool + "." + c.Suite
	}
	return c.Tool + "." + c.UpstreamVersion + "." + c.Kind + "." + c.Suite
}

// ContractError is the testcase of a tool whose contract did not load:
// suite SuiteContract, status Errored, no upstream version or kind. name is
// the manifest's file name (contract.yaml), file the file the configuration
// error names, line and column the 1-based place in it the error names (0
// when unknown) and message its one-line text (file:line:column: key:
// message).
func ContractError(tool, name, file string, line, column int, message string) Case {
	return Case{Tool: tool, Suite: SuiteContract, Name: name, File: file, Line: max(line, 0), Column: max(column, 0), Status: Errored, Message: message}
}

// The commands that write a Run's reports (Run.Command).
const (
	CommandRun    = "run"
	CommandMutate = "mutate"
)

// Run is a whole run's results, in a deterministic order.
type Run struct {
	Cases []Case `json:"cases"`
	// Duration is the wall time of the run.
	Duration time.Duration `json:"duration_ns"`
	// Shard is the part of the fixtures this run covers (--shard K/N) and
	// the digest of the whole selection (Shard.Set); the zero Shard is the
	// whole selection.
	Shard shard.Shard `json:"shard,omitzero"`
	// Command is the airlock command whose results these are: CommandRun
	// (also with --mutate) or CommandMutate; "" for a run built without
	// one (a library caller), written without a command. airlock merge
	// joins only the shards of one command.
	Command string `json:"command,omitempty"`
	// Lint is the run's lint line (airlock run: the unsharded run and
	// shard 1 set it; nil otherwise, and for mutate): written to the JSON
	// results as "lint", read back and carried by airlock merge, shown by
	// WriteRunSummary.
	Lint *RunLintRecord `json:"lint,omitempty"`
	// written marks a run read back from a report (ReadResults,
	// MergeRuns): its names are printed already, and WriteJSON does not
	// escape them again.
	written bool
}

// Group is the cases of one tool and suite (one JUnit testsuite).
type Group struct {
	Tool, Suite               string
	Cases                     []Case
	Passed, Failed, Unchecked int
	// Errored counts the Errored cases (a broken contract).
	Errored  int
	Duration time.Duration
}

// SuiteOrder is the order suites are reported in: a tool's broken contract
// (SuiteContract) first.
var SuiteOrder = []string{SuiteContract, "parse", "schema", "semantic", "projection", "error", "no-leak", "mutation"}

func suiteRank(s string) int {
	for i, x := range SuiteOrder {
		if x == s {
			return i
		}
	}
	return len(SuiteOrder)
}

// Groups splits the run into one group per tool and suite, sorted by tool
// then suite order; cases keep their run order inside a group.
func (r *Run) Groups() []*Group {
	index := map[[2]string]*Group{}
	var out []*Group
	for _, c := range r.Cases {
		k := [2]string{c.Tool, c.Suite}
		g := index[k]
		if g == nil {
			g = &Group{Tool: c.Tool, Suite: c.Suite}
			index[k] = g
			out = append(out, g)
		}
		g.Cases = append(g.Cases, c)
		g.Duration += c.Duration
		switch c.Status {
		case Passed:
			g.Passed++
		case Failed:
			g.Failed++
		case Errored:
			g.Errored++
		default:
			g.Unchecked++
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Tool != out[j].Tool {
			return out[i].Tool < out[j].Tool
		}
		return suiteRank(out[i].Suite) < suiteRank(out[j].Suite)
	})
	return out
}

// Counts returns the run's totals of passed, failed and unchecked cases;
// Errored cases are in none of them (see Errored).
func (r *Run) Counts() (passed, failed, unchecked int) {
	for _, c := range r.Cases {
		switch c.Status {
		case Passed:
			passed++
		case Failed:
			failed++
		case Errored:
		default:
			unchecked++
		}
	}
	return
}

// Errored returns how many cases are Errored: the run's broken contracts.
func (r *Run) Errored() int {
	n := 0
	for _, c := range r.Cases {
		if c.Status == Errored {
			n++
		}
	}
	return n
}

//go:embed results.schema.json
var resultsSchemaJSON []byte

// ResultsSchema returns the published JSON Schema of WriteJSON's output, the
// same bytes as schemas/results.schema.json.
func ResultsSchema() []byte { return append([]byte(nil), resultsSchemaJSON...) }
