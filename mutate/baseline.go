package mutate

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/config"
	"github.com/airlockdev/airlock/internal/fileio"
	"github.com/airlockdev/airlock/internal/introspect"
	"github.com/airlockdev/airlock/internal/strictyaml"
)

// The baseline: a contract's accepted survivors, each with a reason,
// in schemas/<tool>/mutate.baseline.yaml beside contract.yaml, so that
// whoever reviews the contract reviews them (docs/mutate.md, Baseline).
// The gate and airlock lint read only the files a manifest names; this
// one is airlock mutate's alone.

// BaselineFile is the name of a contract folder's baseline file.
const BaselineFile = "mutate.baseline.yaml"

//go:embed baseline.schema.json
var baselineSchemaJSON []byte

// BaselineSchema returns the published JSON Schema of a baseline file, the
// same bytes as schemas/mutate-baseline.schema.json: for editors. ReadBaseline
// checks the same rules and more (the tool, duplicates) with its own
// messages.
func BaselineSchema() []byte { return slices.Clone(baselineSchemaJSON) }

// BaselineEntry is one accepted survivor.
type BaselineEntry struct {
	// Fixture is the fixture's place in its tree,
	// tool/upstream-version/kind/name (kind accepted or historical; name
	// without extension), as mutant ids and canaries use it.
	Fixture string `yaml:"fixture"`
	// Mutant is the mutant's id ("values.empty_string@/data/title").
	Mutant string `yaml:"mutant"`
	// Reason says why the survivor is accepted; it may not be blank
	// (BlankReason).
	Reason string `yaml:"reason"`
	// Outcome is what the mutant did when the entry was written:
	// OutcomeSurvived or OutcomeUnseen (--baseline-add writes it); ""
	// (files written before the key existed) means OutcomeSurvived. An
	// unseen entry silences only an unseen result: once its mutant reaches
	// the agent it fails again and the entry is stale.
	Outcome string `yaml:"outcome,omitempty"`
	// File and Line are where the entry is (the file as configuration
	// errors name it; 1-based line of its first key).
	File string `yaml:"-"`
	Line int    `yaml:"-"`
}

// Baseline entry outcomes (BaselineEntry.Outcome).
const (
	OutcomeSurvived = string(Survived)
	OutcomeUnseen   = string(Unseen)
)

// silences reports whether e accepts a result of outcome o (Survived or
// Unseen): an entry written for a survivor accepts both; one written for
// an unseen mutant only Unseen.
func (e BaselineEntry) silences(o Outcome) bool {
	return o == Unseen || o == Survived && e.Outcome != OutcomeUnseen
}

// baselineDoc is the file: one key.
type baselineDoc struct {
	Survivors []BaselineEntry `yaml:"survivors"`
}

// StaleEntry is a baseline entry that silences nothing any more.
type StaleEntry struct {
	BaselineEntry
	// Why: the fixture is gone, the mutant is no longer generated, it is
	// now killed (or refused otherwise, or equivalent), or it was unseen
	// when baselined (Outcome unseen) and now reaches the agent.
	Why string
}

// String is "file:line: fixture mutant: why".
func (s StaleEntry) String() string {
	return fmt.Sprintf("%s:%d: %s %s: %s", s.File, s.Line, s.Fixture, s.Mutant, s.Why)
}

// ReadBaseline reads and checks one baseline file (data, named file in
// errors) of contract tool: strict YAML (internal/strictyaml: unknown and
// duplicate keys, anchors and sizes past its bounds refused), one key
// "survivors", a list of entries whose fixture is
// tool/upstream-version/kind/name with tool the contract's and kind
// accepted or historical, whose mutant is not empty, whose reason is not
// blank, and no two of which name the same fixture and mutant. Errors are
// *gate.ConfigError values naming the file, line and key.
func ReadBaseline(file, tool string, data []byte) ([]BaselineEntry, error) {
	var doc baselineDoc
	if err := strictyaml.Decode(file, data, nil, &doc); err != nil {
		return nil, err
	}
	pos := strictyaml.NewPositions(data)
	bad := func(key, format string, args ...any) error {
		line, col := pos.KeyPosition(key)
		return &gate.ConfigError{File: file, Line: line, Column: col, Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	seen := map[[2]string]int{}
	for i := range doc.Survivors {
		e := &doc.Survivors[i]
		at := "/survivors/" + strconv.Itoa(i)
		e.File = file
		e.Line, _ = pos.KeyPosition(at)
		parts := strings.Split(e.Fixture, "/")
		switch {
		case e.Fixture == "":
			return nil, bad(at+"/fixture", "an entry needs fixture: tool/upstream-version/kind/name")
		case len(parts) != 4 || slices.Contains(parts, ""):
			return nil, bad(at+"/fixture", "fixture %q is not tool/upstream-version/kind/name", e.Fixture)
		case parts[0] != tool:
			return nil, bad(at+"/fixture", "fixture %q names tool %q; every entry of this file names %q, the contract whose folder holds it", e.Fixture, parts[0], tool)
		case parts[2] != fixture.KindAccepted && parts[2] != fixture.KindHistorical:
			return nil, bad(at+"/fixture", "fixture %q: kind %q is never mutated; only accepted and historical fixtures are", e.Fixture, parts[2])
		case e.Mutant == "":
			return nil, bad(at+"/mutant", "an entry needs mutant: the mutant's id, as airlock mutate prints it")
		case BlankReason(e.Reason):
			return nil, bad(at+"/reason", "an entry needs a reason: say why this survivor is accepted")
		case e.Outcome != "" && e.Outcome != OutcomeSurvived && e.Outcome != OutcomeUnseen:
			return nil, bad(at+"/outcome", "outcome %q is not survived or unseen", e.Outcome)
		}
		k := [2]string{e.Fixture, e.Mutant}
		if j, dup := seen[k]; dup {
			return nil, bad(at, "fixture %q mutant %q is listed twice (first at line %d)", e.Fixture, e.Mutant, doc.Survivors[j].Line)
		}
		seen[k] = i
	}
	return doc.Survivors, nil
}

// loadBaseline reads contract c's baseline file; none when the folder has
// no such file.
func loadBaseline(c *gate.Contract) ([]BaselineEntry, error) {
	fsys, dir, shown := introspect.Source(c)
	file := showFile(shown, BaselineFile)
	data, err := fileio.ReadFS(fsys, path.Join(dir, BaselineFile), config.MaxFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &gate.ConfigError{File: file, Msg: "cannot read the baseline: " + err.Error(), Err: err}
	}
	return ReadBaseline(file, c.Tool(), data)
}

// applyBaseline marks the admitted results a baseline entry names as
// Baselined and returns the stale entries, in file order per tool. Only
// entries inside the selection are judged: a tool mutated, an upstream
// version and kind the filter selects. An entry is stale when its fixture was not
// among the mutated ones (gone, or not admitted), or when its mutant was
// run and not admitted, or dropped as equivalent, or, when every mutant of
// its fixture was run (no --max-per-fixture sample), not generated.
func applyBaseline(set *fixture.Set, fixtures []fixture.Fixture, opts Options, rep *Report) error {
	perFixture := map[string]int{}    // results of each fixture
	byMutant := map[[2]string][]int{} // results of each fixture and mutant id
	for i, r := range rep.Results {
		k := fixtureKey(r.Fixture)
		perFixture[k]++
		byMutant[[2]string{k, r.Mutant.ID}] = append(byMutant[[2]string{k, r.Mutant.ID}], i)
	}
	mutated := map[string]bool{}
	for _, f := range fixtures {
		mutated[fixtureKey(f)] = true
	}
	// Under a shard, another shard judges the entries of its fixtures, and
	// shard 1 those of no selected fixture.
	inShard, elsewhere := map[string]bool{}, map[string]bool{}
	for _, f := range set.Fixtures {
		inShard[fixtureKey(f)] = true
	}
	for _, f := range set.Unsharded {
		if k := fixtureKey(f); !inShard[k] {
			elsewhere[k] = true
		}
	}
	for _, c := range set.List {
		entries, err := loadBaseline(c)
		if err != nil {
			return err
		}
		for i := range entries {
			e := &entries[i]
			parts := strings.Split(e.Fixture, "/")
			if len(opts.Filter.UpstreamVersions) > 0 && !slices.Contains(opts.Filter.UpstreamVersions, parts[1]) ||
				len(opts.Filter.Kinds) > 0 && !slices.Contains(opts.Filter.Kinds, parts[2]) {
				continue
			}
			if elsewhere[e.Fixture] || !inShard[e.Fixture] && !opts.Filter.Shard.ReportsContract() {
				continue
			}
			n, ok := perFixture[e.Fixture]
			if !ok {
				why := "no such fixture"
				if mutated[e.Fixture] {
					why = "the fixture was not admitted, so nothing of it was mutated"
				}
				rep.Stale = append(rep.Stale, StaleEntry{*e, why})
				continue
			}
			idx := byMutant[[2]string{e.Fixture, e.Mutant}]
			for _, j := range idx {
				r := &rep.Results[j]
				switch r.Outcome {
				case Survived, Unseen:
					if !e.silences(r.Outcome) {
						rep.Stale = append(rep.Stale, StaleEntry{*e, "the mutant was unseen when baselined and now reaches the agent"})
						continue
					}
					r.Problem = string(r.Outcome) + "; baselined: " + e.Reason
					r.Outcome, r.Baseline = Baselined, e
				case Baselined:
				default:
					rep.Stale = append(rep.Stale, StaleEntry{*e, "the mutant is now " + string(r.Outcome)})
				}
			}
			if len(idx) == 0 && (opts.MaxPerFixture < 0 || n < opts.MaxPerFixture) {
				rep.Stale = append(rep.Stale, StaleEntry{*e, "not generated from this fixture (a typo, or the fixture or contract changed)"})
			}
		}
	}
	return nil
}

// AddToBaseline appends the admitted results that fail (Survived, and
// Unseen when strict) to the baseline file of their contract, each with
// reason and its outcome (survived or unseen), and returns the entries
// added, and the entries already in the file that name one of those
// results (present: written before, or by another run at the same time;
// not an error). An entry that exists (same
// fixture and mutant) is never written again or changed. Each file is
// written whole through a temporary file and a rename, under the contract
// folder's lock (fileio), and only after the new text was read back as a
// valid baseline: the existing text, comments included, is kept byte for
// byte and the entries are appended to its survivors list (which must be
// a block list, or absent). A blank reason is an error; so is an existing
// file that is not a valid baseline (*gate.ConfigError).
func AddToBaseline(ctx context.Context, opts Options, results []MutantResult, reason string, strict bool) (added, present []BaselineEntry, err error) {
	if BlankReason(reason) {
		return nil, nil, errors.New("a baseline entry needs a reason")
	}
	set, err := fixture.Open(opts.SchemasDir, "", fixture.Filter{Tools: opts.Filter.Tools}, opts.Gate)
	if err != nil {
		return nil, nil, err
	}
	byTool := map[string][]MutantResult{}
	var tools []string
	for _, r := range results {
		if r.Outcome != Survived && !(strict && r.Outcome == Unseen) {
			continue
		}
		if _, ok := byTool[r.Fixture.Tool]; !ok {
			tools = append(tools, r.Fixture.Tool)
		}
		byTool[r.Fixture.Tool] = append(byTool[r.Fixture.Tool], r)
	}
	for _, tool := range tools {
		c := set.Contracts[tool]
		if c == nil {
			continue
		}
		got, had, err := addToFile(ctx, c, byTool[tool], reason)
		added = append(added, got...)
		present = append(present, had...)
		if err != nil {
			return added, present, err
		}
	}
	return added, present, nil
}

// SelectSurvivors returns the results of a run that --baseline-add may
// write (Survived, and Unseen when strict) and that one of specs names, in
// results' order. A spec is a mutant id as airlock mutate prints it
// ("values.empty_string@/note_id": that mutant of every fixture), or
// FIXTURE#ID with FIXTURE the fixture's file name ("open.json", as JUnit
// testcase names print it), its path as printed ("fixtures/…/open.json")
// or its baseline key ("note_status/v1/accepted/open.json"). A spec that
// names no such result is an error naming it and saying what it names
// instead (a killed or equivalent mutant, an unseen one without strict,
// nothing at all); every bad spec is in the error.
func SelectSurvivors(results []MutantResult, specs []string, strict bool) ([]MutantResult, error) {
	names := func(r MutantResult, spec string) bool {
		if spec == r.Mutant.ID {
			return true
		}
		f, id, ok := strings.Cut(spec, "#")
		for ok {
			if id == r.Mutant.ID && (f == r.Fixture.Name || f == r.Fixture.Body || f == fixtureKey(r.Fixture)) {
				return true
			}
			// A fixture name may hold '#': try the next one.
			var more string
			more, id, ok = strings.Cut(id, "#")
			f += "#" + more
		}
		return false
	}
	chosen := make([]bool, len(results))
	var bad []string
	for _, spec := range specs {
		found := false
		var other []string
		for i, r := range results {
			if !names(r, spec) {
				continue
			}
			if r.Outcome == Survived || strict && r.Outcome == Unseen {
				chosen[i], found = true, true
				continue
			}
			if r.Outcome == Baselined {
				// Baselined already (by another run at the same time, say):
				// nothing to add, not an error.
				found = true
				continue
			}
			what := string(r.Outcome)
			if r.Outcome == Unseen {
				what += " (baseline unseen mutants with --strict)"
			}
			other = append(other, fixtureKey(r.Fixture)+"#"+r.Mutant.ID+" is "+what)
		}
		switch {
		case found:
		case len(other) > 0:
			bad = append(bad, fmt.Sprintf("%q is not a current survivor: %s", spec, strings.Join(other, "; ")))
		default:
			bad = append(bad, fmt.Sprintf("%q names no mutant of this run (give an id as airlock mutate prints it, or FIXTURE#ID)", spec))
		}
	}
	if len(bad) > 0 {
		return nil, errors.New("--mutant " + strings.Join(bad, "; --mutant "))
	}
	var out []MutantResult
	for i, r := range results {
		if chosen[i] {
			out = append(out, r)
		}
	}
	return out, nil
}

// addToFile appends the results of contract c to its baseline file, and
// returns the entries it added and those already there for a result.
func addToFile(ctx context.Context, c *gate.Contract, results []MutantResult, reason string) (added, present []BaselineEntry, err error) {
	_, _, shown := introspect.Source(c)
	file := showFile(shown, BaselineFile)
	osPath := filepath.Join(shown, BaselineFile)
	w, err := fileio.NewTree(shown).Lock(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer w.Close()
	old, err := fileio.NewTree(shown).ReadFile(osPath, config.MaxFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, &gate.ConfigError{File: file, Msg: "cannot read the baseline: " + err.Error(), Err: err}
	}
	existing, err := ReadBaseline(file, c.Tool(), old)
	if err != nil {
		return nil, nil, err
	}
	have := map[[2]string]int{} // entry index + 1; -1 for an entry being added
	for i, e := range existing {
		have[[2]string{e.Fixture, e.Mutant}] = i + 1
	}
	var add []BaselineEntry
	for _, r := range results {
		k := [2]string{fixtureKey(r.Fixture), r.Mutant.ID}
		if i := have[k]; i != 0 {
			if i > 0 {
				e := existing[i-1]
				if !e.silences(r.Outcome) {
					// Never changed silently: the entry accepted an unseen
					// mutant, and this one now reaches the agent.
					return nil, present, &gate.ConfigError{File: e.File, Line: e.Line,
						Msg: fmt.Sprintf("%s %s: the entry accepts it only as unseen, but it now reaches the agent; review it, then set the entry's outcome to survived (or remove the entry) by hand", e.Fixture, e.Mutant)}
				}
				present = append(present, e)
				have[k] = -1
			}
			continue
		}
		have[k] = -1
		add = append(add, BaselineEntry{Fixture: k[0], Mutant: k[1], Reason: reason, Outcome: string(r.Outcome)})
	}
	if len(add) == 0 {
		return nil, present, nil
	}
	text, err := appendEntries(file, old, add)
	if err != nil {
		return nil, nil, err
	}
	back, err := ReadBaseline(file, c.Tool(), text)
	if err != nil || len(back) != len(existing)+len(add) {
		return nil, nil, &gate.ConfigError{File: file, Msg: "cannot append to the survivors list as it is written; write it as a block list (\"survivors:\" then \"- fixture: …\" lines) at the end of the file", Err: err}
	}
	if err := w.WriteFileAtomic(ctx, osPath, text); err != nil {
		return nil, nil, err
	}
	for i := range add {
		add[i] = back[len(existing)+i]
	}
	return add, present, nil
}

// baselineHeader starts a new baseline file.
const baselineHeader = `# Accepted mutation survivors of this contract (airlock mutate; docs/mutate.md).
# Each entry needs a reason; review them like code.
survivors:
`

// appendEntries returns old with the entries appended to its survivors
// list, indented like the list's first item ("- " at column 1 when the
// list is empty or absent); a file without the key gets it. The lines
// written end like old's first line ("\r\n" or "\n"), so a CRLF file
// stays CRLF.
func appendEntries(file string, old []byte, add []BaselineEntry) ([]byte, error) {
	nl := "\n"
	if i := bytes.IndexByte(old, '\n'); i > 0 && old[i-1] == '\r' {
		nl = "\r\n"
	}
	var b bytes.Buffer
	indent := ""
	switch {
	case len(bytes.TrimSpace(old)) == 0:
		b.WriteString(strings.ReplaceAll(baselineHeader, "\n", nl))
	default:
		b.Write(old)
		if !bytes.HasSuffix(old, []byte("\n")) {
			b.WriteString(nl)
		}
		pos := strictyaml.NewPositions(old)
		if line, col := pos.KeyPosition("/survivors/0"); line > 0 && col > 0 {
			lines := bytes.Split(old, []byte("\n"))
			if line <= len(lines) {
				l := lines[line-1]
				if dash := bytes.LastIndexByte(l[:min(col-1, len(l))], '-'); dash >= 0 {
					indent = strings.Repeat(" ", dash)
				}
			}
		} else if line, _ := pos.KeyPosition("/survivors"); line == 0 {
			b.WriteString("survivors:" + nl)
		}
	}
	for _, e := range add {
		fmt.Fprintf(&b, "%s- fixture: %s%s%s  mutant: %s%s%s  reason: %s%s",
			indent, strconv.Quote(e.Fixture), nl, indent, strconv.Quote(e.Mutant), nl, indent, strconv.Quote(e.Reason), nl)
		if e.Outcome != "" {
			fmt.Fprintf(&b, "%s  outcome: %s%s", indent, e.Outcome, nl)
		}
	}
	return b.Bytes(), nil
}

// Accept marks the results the entries name (Survived or Unseen) as
// Baselined, as a reread of the baseline would, and recomputes the
// scores: what airlock mutate --baseline-add reports after writing them.
func (r *Report) Accept(entries []BaselineEntry) {
	for i := range entries {
		e := &entries[i]
		for j := range r.Results {
			x := &r.Results[j]
			if (x.Outcome == Survived || x.Outcome == Unseen) && e.silences(x.Outcome) && x.Mutant.ID == e.Mutant && fixtureKey(x.Fixture) == e.Fixture {
				x.Problem = string(x.Outcome) + "; baselined: " + e.Reason
				x.Outcome, x.Baseline = Baselined, e
			}
		}
	}
	r.Scores = scoresOf(r.Results, r.Strict)
}

// BlankReason reports whether a reason has no visible character: only
// white space (unicode.IsSpace) and format characters (Unicode category
// Cf: zero-width spaces and joiners, bidi controls, U+FEFF).
func BlankReason(s string) bool {
	for _, r := range s {
		if !invisible(r) {
			return false
		}
	}
	return true
}

// invisible reports whether r shows nothing on its own: white space,
// format characters (Cf), combining and enclosing marks (Mn, Me: U+034F,
// variation selectors), and the filler letters that render blank (Hangul
// fillers U+115F, U+1160, U+3164, U+FFA0, and the blank Braille pattern
// U+2800).
func invisible(r rune) bool {
	switch r {
	case '\u115F', '\u1160', '\u3164', '\uFFA0', '\u2800':
		return true
	}
	return unicode.IsSpace(r) || unicode.In(r, unicode.Cf, unicode.Mn, unicode.Me)
}
