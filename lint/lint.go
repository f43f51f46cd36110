// Package lint tells a contract author what is weak in a contract before
// production does: an object that admits any member, a string or array
// with no bound, a pattern that matches anywhere, additionalProperties:
// false beside an allOf that adds members, oneOf branches a response can
// satisfy twice, a projected field the schema does not require, a rule on
// a value the schema does not constrain, a projected field whose strings
// nothing bounds in length, an upstream version without fixtures, a stage
// no near-miss fixture exercises.
//
// Every rule is a Rule in one registry (Rules): a stable id, a level, a
// description, and the handler that finds it. docs/lint.md, the SARIF
// rules and the tests read the registry. A finding names the file, line,
// column and JSON Pointer of what fired (reports.LintFinding).
package lint

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/fileio"
	"github.com/airlockdev/airlock/internal/introspect"
	"github.com/airlockdev/airlock/internal/manifest"
	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/strictyaml"
	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/reports"
)

// Input is what one lint run looks at: loaded contracts and, when
// Fixtures is true, the fixtures discovered for them.
type Input struct {
	// Contracts are linted in order.
	Contracts []*gate.Contract
	// Set holds the fixtures of Contracts (fixture.Open); nil when there is
	// no fixture tree, and then the fixture rules do not run.
	Set *fixture.Set
	// FixturesDir is the fixture tree's folder as messages name it.
	FixturesDir string
	// Broken are the contracts that did not load (fixture.Set.Broken):
	// each is a contract-load finding at the loader's file, line and column.
	Broken []fixture.Broken
}

// Lint runs every rule of the registry on in and returns the findings,
// sorted by file, line, column and rule id, with the rules that ran. When
// in.Set is nil, the fixture rules are listed in Skipped instead. Errors
// are *gate.ConfigError values (a fixture sidecar that cannot be read) and
// ctx's error once it is cancelled: the walk checks it at every schema
// position.
//
// Cost: the schema walk visits each schema position at most once per
// combination of the 8 facts it tracks (at most 256 times), and each visit
// costs the schemas that position merges; each schema file is then read
// once more to place every finding in it (strictjson.PointerOffsets and
// one sweep), so placing n findings costs the file's size, not n times
// it. Applying lint.ignore costs, per contract, its entries (at most 256,
// the manifest schema's maxItems) times its findings, each a match of at
// most 17 pattern segments against a path (matchFile). make bench
// reports lint's time against the gate's load time of the same contract
// (BenchmarkLint).
func Lint(ctx context.Context, in Input) (*reports.Lint, error) {
	out := &reports.Lint{}
	for _, r := range registry {
		if r.scope == scopeFixtures && in.Set == nil {
			continue
		}
		out.Rules = append(out.Rules, r.describe())
	}
	if in.Set == nil {
		out.Skipped = append(out.Skipped, "the fixture rules (version-without-fixtures, near-miss-stage-uncovered): no fixtures folder")
	}
	e := &emitter{seen: map[string]int{}, unplaced: map[int]string{}, names: map[int]string{}, triedSet: map[int]bool{}, counted: map[int]bool{}}
	for _, b := range in.Broken {
		e.findings = append(e.findings, reports.LintFinding{
			Rule: contractLoad.ID, Level: contractLoad.Level, Tool: b.Tool,
			File: b.Err.File, Line: b.Err.Line, Column: b.Err.Column, Pointer: b.Err.Key,
			Message: "the contract does not load: " + b.Err.Msg,
		})
	}
	for _, c := range in.Contracts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		k, err := newContract(c)
		if err != nil {
			return nil, err
		}
		e.c, e.tried, e.triedSet = k, nil, map[int]bool{}
		first := len(e.findings)
		if err := k.walkSchemas(ctx, e); err != nil {
			return nil, err
		}
		for _, r := range registry {
			switch {
			case r.scope == scopeContract:
				r.contract(k, e)
			case r.scope == scopeFixtures && in.Set != nil:
				if err := r.fixtures(k, in.Set, in.FixturesDir, e); err != nil {
					return nil, err
				}
			}
		}
		k.placeSchemaFindings(e, first)
		k.applyIgnores(e, in.Set != nil)
	}
	out.Findings = e.findings
	slices.SortStableFunc(out.Findings, func(a, b reports.LintFinding) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column),
			cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Pointer, b.Pointer))
	})
	return out, nil
}

// contract is one contract as the rules see it.
type contract struct {
	c         *gate.Contract
	m         manifest.Manifest
	dir       *schema.Dir
	manifest  string // contract.yaml as errors name it
	positions *strictyaml.Positions
}

func newContract(c *gate.Contract) (*contract, error) {
	fsys, dir, shown := introspect.Source(c)
	file := path.Join(dir, gate.ManifestFile)
	name := filepath.Join(shown, gate.ManifestFile)
	if dir == shown {
		name = file
	}
	raw, err := fileio.ReadFS(fsys, file, gate.MaxConfigFile)
	if err != nil {
		return nil, &gate.ConfigError{File: name, Msg: "cannot read manifest: " + err.Error(), Err: err}
	}
	return &contract{c: c, m: introspect.Manifest(c), dir: introspect.SchemaDir(c), manifest: name, positions: strictyaml.NewPositions(raw)}, nil
}

// versions returns the contract's upstream versions, sorted.
func (k *contract) versions() []string { return k.c.UpstreamVersions() }

// emitter collects findings, each (rule, file, pointer, message) once: a
// schema file shared by two upstream versions is reported for the first; a
// shared component two contracts reach, for the first that does not accept
// it in its lint.ignore (applyIgnores).
type emitter struct {
	c        *contract
	findings []reports.LintFinding
	// seen maps a finding's key to its index in findings.
	seen map[string]int
	// unplaced maps the index of a finding in a schema file to that file's
	// name in the contract folder, until placeSchemaFindings gives it a line.
	unplaced map[int]string
	// names maps the index of a finding to the name of its file as the
	// contract folder names it ("contract.yaml", "upstream.v1.schema.json",
	// "../_components/github/v1/user.schema.json"), which lint.ignore's
	// file matches; absent for a finding no file of the folder holds.
	names map[int]string
	// tried are the indexes of the findings the current contract found,
	// reported for it or, already, for an earlier contract, each once
	// (triedSet).
	tried    []int
	triedSet map[int]bool
	// counted holds the indexes of the findings some contract that reached
	// them does not accept (applyIgnores): they stay counted, whatever the
	// other contracts' lint.ignore says.
	counted map[int]bool
}

// add records a finding of rule r; false when the same finding was
// recorded already (for this contract or an earlier one).
func (e *emitter) add(r *Rule, f reports.LintFinding, name string) bool {
	key := r.ID + "\x00" + f.File + "\x00" + f.Pointer + "\x00" + f.Message
	if i, ok := e.seen[key]; ok {
		if !e.triedSet[i] {
			e.tried, e.triedSet[i] = append(e.tried, i), true
		}
		return false
	}
	i := len(e.findings)
	e.seen[key] = i
	e.tried, e.triedSet[i] = append(e.tried, i), true
	if name != "" {
		e.names[i] = name
	}
	f.Rule, f.Level, f.Tool = r.ID, r.Level, e.c.c.Tool()
	e.findings = append(e.findings, f)
	return true
}

// atSchema reports rule r at keyword of compiled schema s (a location in
// one of the contract's schema files), for the instance location inst.
// Its line and column are found after the walk (placeSchemaFindings).
func (e *emitter) atSchema(r *Rule, s *jsonschema.Schema, keyword, version, inst, format string, args ...any) {
	e.atLocation(r, s.Location, keyword, version, inst, format, args...)
}

// atLocation is atSchema for a schema's absolute location ("url#/ptr").
func (e *emitter) atLocation(r *Rule, location, keyword, version, inst, format string, args ...any) {
	f := reports.LintFinding{UpstreamVersion: version, Instance: inst, Message: fmt.Sprintf(format, args...)}
	p, ok := e.c.dir.Locate(location, keyword)
	name := ""
	if ok {
		f.File, f.Pointer, name = p.File, p.Pointer, p.Name
	} else {
		f.File, f.Pointer = e.c.dir.Relative(location), ""
	}
	if e.add(r, f, name) && ok {
		e.unplaced[len(e.findings)-1] = p.Name
	}
}

// atManifest reports rule r at the key of contract.yaml that key (an RFC
// 6901 pointer) names.
func (e *emitter) atManifest(r *Rule, key, version, inst, format string, args ...any) {
	line, col := e.c.positions.KeyPosition(key)
	e.add(r, reports.LintFinding{File: e.c.manifest, Line: line, Column: col, Pointer: key,
		UpstreamVersion: version, Instance: inst, Message: fmt.Sprintf(format, args...)}, gate.ManifestFile)
}

// versionKey is the manifest pointer of an upstream version.
func versionKey(v string) string { return "/upstream_versions/" + jsonpointer.EscapeToken(v) }

// applyIgnores marks the contract's findings that an entry of its
// lint.ignore accepts (ignoreMatches), and reports each entry that accepts
// none (lint-ignore-unused) — unless it names a fixture rule and the
// fixture rules did not run (fixtures false). A finding in a shared
// component several contracts reach is reported once (emitter.add): it is
// ignored only when every one of them accepts it, and otherwise counted,
// for the first contract (in the order linted) that does not accept it.
// So whether a contract's finding counts does not depend on which other
// contracts are linted with it: a selection counts every finding that one
// of its contracts does not accept.
func (k *contract) applyIgnores(e *emitter, fixtures bool) {
	tried := len(e.tried)
	accepted := make(map[int]string, tried)
	for i, ig := range k.m.Lint.Ignore {
		used := false
		for _, j := range e.tried {
			f := &e.findings[j]
			name, hasName := e.names[j]
			if !ignoreMatches(ig, f, name, hasName) {
				continue
			}
			used = true
			if _, ok := accepted[j]; !ok {
				accepted[j] = ig.Reason
			}
		}
		if used {
			continue
		}
		r, known := lookupRule(ig.Rule)
		if known && r.scope == scopeFixtures && !fixtures {
			continue
		}
		known = known || ig.Rule == AnyRule
		key := fmt.Sprintf("/lint/ignore/%d", i)
		switch {
		case !known:
			e.atManifest(ignoreUnused, key, "", "", "lint.ignore names rule %q, which does not exist (docs/lint.md lists the rules)", ig.Rule)
		default:
			rule := ig.Rule
			if rule == AnyRule {
				rule = "any rule's"
			}
			e.atManifest(ignoreUnused, key, "", "", "lint.ignore accepts %s findings%s, and there are none: remove the entry", rule, ignoreWhere(ig.File, ig.Pointer))
		}
	}
	// Each finding this contract reached (not the lint-ignore-unused
	// findings just added) is ignored while every contract that reached it
	// accepts it, and counted from the first that does not, for that one.
	for _, j := range e.tried[:tried] {
		f := &e.findings[j]
		switch reason, ok := accepted[j]; {
		case e.counted[j]:
		case !ok:
			e.counted[j] = true
			f.Ignored, f.Tool = "", k.c.Tool()
		case f.Ignored == "":
			f.Ignored = reason
		}
	}
}

// AnyRule is the rule of a lint.ignore entry that accepts the findings of
// every rule in the files it names (its file is then required).
const AnyRule = manifest.AnyRule

// ignoreMatches reports whether lint.ignore entry ig accepts finding f,
// whose file the contract folder names name (hasName false when no file
// of the folder holds it): the rule is f's or AnyRule, the pointer (when
// set) is f's, and the file (when set) matches name (matchFile).
func ignoreMatches(ig manifest.LintIgnore, f *reports.LintFinding, name string, hasName bool) bool {
	switch {
	case ig.Rule != AnyRule && f.Rule != ig.Rule:
		return false
	case ig.Pointer != "" && f.Pointer != ig.Pointer:
		return false
	case ig.File != "" && (!hasName || !matchFile(ig.File, name)):
		return false
	}
	return true
}

// matchFile reports whether a file name as the contract folder names it
// ("upstream.v1.schema.json", "../_components/github/v1/user.schema.json")
// matches pattern, a lint.ignore file: "/"-separated segments, each
// matched with path.Match ("*" any run of characters within a segment,
// "?" one character), except a segment "**", which matches any number of
// segments, none included. The manifest schema bounds a pattern to 17
// segments and a component's path to MaxComponentDepth, so the match
// costs at most a few hundred segment comparisons.
func matchFile(pattern, name string) bool {
	ps, ns := strings.Split(pattern, "/"), strings.Split(name, "/")
	// ok[j]: the patterns segments so far match ns[:j].
	ok := make([]bool, len(ns)+1)
	ok[0] = true
	for _, p := range ps {
		next := make([]bool, len(ns)+1)
		for j := range ok {
			if !ok[j] {
				continue
			}
			if p == "**" {
				for k := j; k <= len(ns); k++ {
					next[k] = true
				}
				continue
			}
			if j < len(ns) {
				if m, err := path.Match(p, ns[j]); err == nil && m {
					next[j+1] = true
				}
			}
		}
		ok = next
	}
	return ok[len(ns)]
}

// ignoreWhere describes an ignore entry's file and pointer for a message.
func ignoreWhere(file, pointer string) string {
	s := ""
	if file != "" {
		s += " in " + file
	}
	if pointer != "" {
		s += " at " + pointer
	}
	return s
}

// lookupRule returns the registered rule with id.
func lookupRule(id string) (*Rule, bool) {
	for _, r := range registry {
		if r.ID == id {
			return r, true
		}
	}
	return nil, false
}
