package reports

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/airlockdev/airlock/internal/shard"
)

// Merging the reports of N shards (airlock merge, --shard K/N): each
// input is one shard's report; the output is the report the unsharded run
// writes, times aside.

// Merge bounds: an input longer than MaxMergeInput bytes, inputs that add
// up to more than MaxMergeTotal bytes, or JUnit inputs that add up to more
// than MaxMergeJUnitTotal bytes, are refused before they are decoded; at
// most shard.MaxCount inputs of one kind can form a set.
//
// MaxMergeJUnitTotal is lower because a JUnit merge's peak memory is
// about 12 times its inputs (encoding/xml's tokens, the decoded
// testcases, the merged report rendered in memory; measured: two 31 MiB
// inputs of 353k minimal testcases each, peak RSS 739 MiB): 64 MiB of
// JUnit keeps it under 1 GiB, and a real 10k-fixture run with six suites
// writes about 6 MB.
const (
	MaxMergeInput      = 64 << 20
	MaxMergeTotal      = 512 << 20
	MaxMergeJUnitTotal = 64 << 20
)

// Report kinds DetectKind tells apart, by content (never by file name).
const (
	KindJUnit   = "junit"   // JUnit XML (<testsuites>), WriteJUnit
	KindResults = "results" // JSON results, WriteJSON
	KindSARIF   = "sarif"   // SARIF 2.1.0 log
	KindDrift   = "drift"   // drift JSON (WriteDriftJSON)
)

// mutationSuite, unscoredName and staleMark are the mutation suite's
// name and the marks of its contract-level testcases (mutate.Suite,
// mutate.UnscoredName, and the "#baseline:" of a stale baseline entry's
// testcase name), which reports cannot import.
const (
	mutationSuite = "mutation"
	// UnscoredName is the testcase name of an upstream version with no
	// mutation score (mutate.UnscoredName).
	UnscoredName = "(not scored)"
	staleMark    = "#baseline:"
)

// DetectKind returns the kind of report data holds, judged by its first
// non-space byte and top-level shape: "<" with a <testsuites> root is
// KindJUnit; a JSON object with "runs" and "version" "2.1.0" is KindSARIF,
// one with "cases" KindResults, one with "summary" and "tools" KindDrift.
// Anything else is an error saying what was found.
func DetectKind(data []byte) (string, error) {
	t := bytes.TrimLeft(data, " \t\r\n\ufeff")
	if len(t) == 0 {
		return "", errors.New("empty file; want a JUnit XML, JSON results or SARIF report")
	}
	switch t[0] {
	case '<':
		d := xml.NewDecoder(bytes.NewReader(t))
		for {
			tok, err := d.Token()
			if err != nil {
				return "", fmt.Errorf("not a JUnit XML report: %v", err)
			}
			if se, ok := tok.(xml.StartElement); ok {
				if se.Name.Local != "testsuites" {
					return "", fmt.Errorf("XML with root element <%s>; want a JUnit report (<testsuites>) as airlock writes it", Line(se.Name.Local))
				}
				return KindJUnit, nil
			}
		}
	case '{':
		var top map[string]json.RawMessage
		if err := json.Unmarshal(t, &top); err != nil {
			return "", fmt.Errorf("not a JSON report: %v", err)
		}
		switch {
		case top["runs"] != nil && string(bytes.TrimSpace(top["version"])) == `"2.1.0"`:
			return KindSARIF, nil
		case top["cases"] != nil:
			return KindResults, nil
		case top["summary"] != nil && top["tools"] != nil:
			return KindDrift, nil
		}
		return "", errors.New("JSON that is none of airlock's results (\"cases\"), a SARIF 2.1.0 log or a drift report")
	}
	return "", errors.New("neither XML nor JSON; want a JUnit XML, JSON results or SARIF report")
}

// MergeInput is one shard's report: Name (a file name, for errors), Shard
// (with its Set digest) and Command (Run.Command; "" when the report does
// not say), read from the report itself.
type MergeInput struct {
	Name    string
	Shard   shard.Shard
	Command string
}

// SetError is a set of shard reports that does not form one whole run:
// an unsharded report, reports of two commands, two counts N, a shard
// without a fixture-set digest, shards of two fixture sets, a shard given
// twice, or one missing. Msg names the files and shards.
type SetError struct{ Msg string }

func (e *SetError) Error() string { return e.Msg }

// CheckSet returns a *SetError unless inputs are shards 1..N of one N of
// one command, each exactly once, all with one fixture-set digest
// (shard.Shard.Set: shards run on different checkouts or with different
// filters may partition differently, so that a fixture is checked twice
// and another never); kind names the report kind in the message. The
// first problem found is returned, in the order of that list.
func CheckSet(kind string, inputs []MergeInput) error {
	if len(inputs) == 0 {
		return &SetError{Msg: "no " + kind + " report to merge"}
	}
	if len(inputs) > shard.MaxCount {
		return &SetError{Msg: fmt.Sprintf("%d %s reports; at most %d shards can be merged", len(inputs), kind, shard.MaxCount)}
	}
	n := 0
	byIndex := map[int]string{}
	for _, in := range inputs {
		if in.Shard.IsZero() {
			return &SetError{Msg: fmt.Sprintf("%s: an unsharded %s report (no --shard K/N); merge joins the reports of one sharded run", Ident(in.Name), kind)}
		}
		if first := inputs[0]; in.Command != first.Command {
			return &SetError{Msg: fmt.Sprintf("%s is a report of %s but %s of %s: merge joins the shards of one command", Ident(first.Name), commandText(first.Command), Ident(in.Name), commandText(in.Command))}
		}
		if n == 0 {
			n = in.Shard.Count
		}
		if in.Shard.Count != n {
			return &SetError{Msg: fmt.Sprintf("%s is shard %s but %s is shard %s: the %s reports are of different shard counts", Ident(inputs[0].Name), inputs[0].Shard, Ident(in.Name), in.Shard, kind)}
		}
		if in.Shard.Set == "" {
			return &SetError{Msg: fmt.Sprintf("%s: shard %s records no fixture set; it was written by an older airlock: run every shard with one airlock", Ident(in.Name), in.Shard)}
		}
		if first := inputs[0]; in.Shard.Set != first.Shard.Set {
			return &SetError{Msg: fmt.Sprintf("shards of different fixture sets: %s (shard %s, set %s) and %s (shard %s, set %s); run every shard on the same checkout with the same filters", Ident(first.Name), first.Shard, first.Shard.Set, Ident(in.Name), in.Shard, in.Shard.Set)}
		}
		if other, dup := byIndex[in.Shard.Index]; dup {
			return &SetError{Msg: fmt.Sprintf("%s and %s are both shard %s of the %s reports", Ident(other), Ident(in.Name), in.Shard, kind)}
		}
		byIndex[in.Shard.Index] = in.Name
	}
	var missing []string
	for k := 1; k <= n; k++ {
		if _, ok := byIndex[k]; !ok {
			missing = append(missing, shard.Shard{Index: k, Count: n}.String())
		}
	}
	if len(missing) > 0 {
		return &SetError{Msg: fmt.Sprintf("%s reports: missing shard %s (have %d of %d)", kind, strings.Join(missing, ", "), len(inputs), n)}
	}
	return nil
}

// CheckKinds returns a *SetError unless every input agrees with the
// first on the command (Command), the shard count N (Shard.Count) and the
// fixture-set digest (Shard.Set): the reports of several kinds given to one
// airlock merge (JUnit, JSON results, SARIF; each kind already a whole set,
// CheckSet) must be the shards of one run, so that the merged JUnit,
// JSON, summary and SARIF tell of the same testcases. The message names
// two disagreeing files and what differs. Inputs are one per kind (any
// shard of it); fewer than two pass.
func CheckKinds(inputs []MergeInput) error {
	for _, in := range inputs[min(1, len(inputs)):] {
		first := inputs[0]
		switch {
		case in.Command != first.Command:
			return &SetError{Msg: fmt.Sprintf("%s is a report of %s but %s of %s: every report merged in one call must be of one run", Ident(first.Name), commandText(first.Command), Ident(in.Name), commandText(in.Command))}
		case in.Shard.Count != first.Shard.Count:
			return &SetError{Msg: fmt.Sprintf("%s is shard %s but %s is shard %s: every report merged in one call must be of one run", Ident(first.Name), first.Shard, Ident(in.Name), in.Shard)}
		case in.Shard.Set != first.Shard.Set:
			return &SetError{Msg: fmt.Sprintf("%s (set %s) and %s (set %s) are shards of different fixture sets or checks: every report merged in one call must be of one run", Ident(first.Name), first.Shard.Set, Ident(in.Name), in.Shard.Set)}
		}
	}
	return nil
}

// commandText names a command in a message: "airlock run", or "an
// unnamed command" for "".
func commandText(command string) string {
	if command == "" {
		return "an unnamed command"
	}
	return "airlock " + command
}

// ReadResults decodes a JSON results document (WriteJSON's output,
// schemas/results.schema.json) of at most MaxMergeInput bytes. Unknown
// members, another version, a command other than run or mutate, a shard
// set that is not a digest (shard.ValidSet) or trailing data are errors.
// The cases' texts
// are kept as written, cleaned again (a no-op on airlock's own output);
// the run is marked so that WriteJSON does not print its names a second
// time.
func ReadResults(data []byte) (*Run, error) {
	if len(data) > MaxMergeInput {
		return nil, fmt.Errorf("%d bytes; at most %d are read", len(data), MaxMergeInput)
	}
	var doc resultsDoc
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("not airlock JSON results: %v", err)
	}
	if dec.More() {
		return nil, errors.New("not airlock JSON results: data after the document")
	}
	if doc.Version != resultsVersion {
		return nil, fmt.Errorf("JSON results version %d; this airlock reads version %d", doc.Version, resultsVersion)
	}
	if doc.Command != "" && doc.Command != CommandRun && doc.Command != CommandMutate {
		return nil, fmt.Errorf("command %q; want %q or %q", Line(doc.Command), CommandRun, CommandMutate)
	}
	if !doc.Shard.IsZero() {
		if _, err := shard.Parse(doc.Shard.String()); err != nil {
			return nil, err
		}
		if doc.Shard.Set != "" && !shard.ValidSet(doc.Shard.Set) {
			return nil, fmt.Errorf("shard set %q: want %d lower-case hex digits", Line(doc.Shard.Set), shard.SetLen)
		}
	} else if doc.Shard.Set != "" {
		return nil, errors.New("a shard set without a shard count")
	}
	if l := doc.Lint; l != nil {
		if l.Errors < 0 || l.Warnings < 0 || l.Notes < 0 || l.Ignored < 0 || l.Active() < 0 {
			return nil, errors.New("lint: a negative count")
		}
		if l.StrictFailed != (l.Strict && l.Active() > 0) {
			return nil, errors.New("lint: strict_failed disagrees with strict and the counts")
		}
		if !doc.Shard.ReportsContract() {
			return nil, fmt.Errorf("lint in shard %s; only shard 1 reports it", doc.Shard)
		}
		l.Command = Line(l.Command)
	}
	run := &Run{Cases: doc.Cases, Duration: time.Duration(max(doc.Duration, 0)), Shard: doc.Shard, Command: doc.Command, Lint: doc.Lint, written: true}
	for i := range run.Cases {
		c := &run.Cases[i]
		c.Tool, c.UpstreamVersion, c.Kind, c.Suite = rewritten(c.Tool), rewritten(c.UpstreamVersion), rewritten(c.Kind), rewritten(c.Suite)
		c.Name, c.File = rewritten(c.Name), rewritten(c.File)
		c.Status = Status(Line(string(c.Status)))
		c.Duration = max(c.Duration, 0)
		c.Line, c.Column = max(c.Line, 0), max(c.Column, 0)
		for j, w := range c.Warnings {
			c.Warnings[j] = Line(w)
		}
	}
	return run, nil
}

// rewritten cleans a name already printed with Ident: Ident's output
// holds no character Line changes, so it is kept as it is.
func rewritten(s string) string { return Clean(s, 4*MaxIdent, false) }

// MergeRuns joins the runs of shards 1..N of one run (CheckSet on names
// and their Shard and Command) into the unsharded run's: its cases in the
// order the unsharded run has them (see caseOrder), the shards' Command,
// shard 1's Lint,
// Shard zero, and Duration the
// largest of the shards' Durations (the shards ran side by side; the sum
// would be the machine time, not the wall time). A testcase present in two
// inputs (same tool, upstream version, kind, suite and name) is a
// *SetError: such shards are not of one run.
func MergeRuns(names []string, runs []*Run) (*Run, error) {
	inputs := make([]MergeInput, len(runs))
	for i, r := range runs {
		inputs[i] = MergeInput{Name: names[i], Shard: r.Shard, Command: r.Command}
	}
	if err := CheckSet("JSON results", inputs); err != nil {
		return nil, err
	}
	out := &Run{Command: runs[0].Command, written: true}
	seen := map[[5]string]string{}
	for i, r := range runs {
		out.Duration = max(out.Duration, r.Duration)
		if r.Lint != nil {
			out.Lint = r.Lint // shard 1's alone (ReadResults refuses another's)
		}
		for _, c := range r.Cases {
			k := [5]string{c.Tool, c.UpstreamVersion, c.Kind, c.Suite, c.Name}
			if other, dup := seen[k]; dup && other != names[i] {
				return nil, &SetError{Msg: fmt.Sprintf("%s and %s both hold testcase %s %s: not shards of one run", Ident(other), Ident(names[i]), c.Classname(), c.Name)}
			}
			seen[k] = names[i]
			out.Cases = append(out.Cases, c)
		}
	}
	slices.SortStableFunc(out.Cases, func(a, b Case) int { return compareKeys(caseKey(a), caseKey(b)) })
	return out, nil
}

// orderKey places a testcase where the unsharded run reports it: runner
// suites before the mutation suite (airlock run --mutate appends it),
// then tool; inside the mutation suite a tool's mutant testcases, then
// its unscored versions (contract-level, from shard 1 alone, kept in
// their order), then its stale baseline entries (mutate.Report.Cases
// orders them by fixture); then upstream version, kind in fixture kind
// order, and fixture name, each folder's entries sorted by name as the
// fixture tree's walk lists them. The
// testcases of one fixture come from one shard, and a stable sort keeps
// their order (suites, mutants in generation order).
type orderKey struct {
	mutation        bool
	tool            string
	section         int
	upstreamVersion string
	kind            int
	fixture         string
}

// kinds is fixture.Kinds, the fixture kinds in report order.
var kinds = []string{"accepted", "near-miss", "error", "historical", "recorded"}

func kindRank(k string) int {
	if i := slices.Index(kinds, k); i >= 0 {
		return i
	}
	return len(kinds)
}

// caseKey is the orderKey of a case read from JSON results: its fixture
// name is its name, or for a mutant (fixture#mutant) the base name of its
// file, the fixture's body.
func caseKey(c Case) orderKey {
	k := orderKey{mutation: c.Suite == mutationSuite, tool: c.Tool, upstreamVersion: c.UpstreamVersion, kind: kindRank(c.Kind), fixture: c.Name}
	if k.mutation && !k.contractSection(c.Name) {
		k.fixture = c.File[strings.LastIndexAny(c.File, `/\`)+1:]
	}
	return k
}

// contractSection places a mutation testcase named name that is not a
// mutant's: an unscored upstream version (section 1) or a stale baseline
// entry (section 2, ordered by its fixture). It reports whether name was
// one; a mutant's key takes its fixture from the caller.
func (k *orderKey) contractSection(name string) bool {
	switch {
	case name == UnscoredName:
		k.section = 1
	case strings.Contains(name, staleMark):
		k.section = 2
		k.fixture, _, _ = strings.Cut(name, staleMark)
	default:
		return false
	}
	return true
}

// compareKeys orders two orderKeys; a contract-level section compares by
// tool and section only.
func compareKeys(a, b orderKey) int {
	if a.mutation != b.mutation {
		if a.mutation {
			return 1
		}
		return -1
	}
	if c := strings.Compare(a.tool, b.tool); c != 0 {
		return c
	}
	if a.section != b.section || a.section == 1 {
		return a.section - b.section
	}
	if c := compareNames(a.upstreamVersion, b.upstreamVersion); c != 0 {
		return c
	}
	if a.kind != b.kind {
		return a.kind - b.kind
	}
	return compareNames(a.fixture, b.fixture)
}

// compareNames orders two names printed with Ident as their raw bytes
// order (the fixture tree's walk order): \\ is a backslash, \xNN a byte,
// \u{N…} a character.
func compareNames(a, b string) int {
	if a == b {
		return 0
	}
	return bytes.Compare(unIdent(a), unIdent(b))
}

// unIdent reverses Ident's escapes (a cut name keeps its tail as printed).
func unIdent(s string) []byte {
	if !strings.Contains(s, `\`) {
		return []byte(s)
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			out = append(out, s[i])
			continue
		}
		switch rest := s[i+1:]; {
		case rest[0] == '\\':
			out = append(out, '\\')
			i++
		case rest[0] == 'x' && len(rest) >= 3:
			if v, err := strconv.ParseUint(rest[1:3], 16, 8); err == nil {
				out = append(out, byte(v))
				i += 3
				continue
			}
			out = append(out, s[i])
		case strings.HasPrefix(rest, "u{"):
			if end := strings.IndexByte(rest, '}'); end > 2 {
				if v, err := strconv.ParseUint(rest[2:end], 16, 32); err == nil {
					out = utf8.AppendRune(out, rune(v))
					i += end + 1
					continue
				}
			}
			out = append(out, s[i])
		default:
			out = append(out, s[i])
		}
	}
	return out
}

// ReadJUnit decodes a JUnit XML report as WriteJUnit writes it (at most
// MaxMergeInput bytes; the structure decodeJUnit accepts, refused at the
// first token that departs from it, so memory stays a small multiple of
// the input) and returns it with the command and shard its <testsuites>
// name records (parseJUnitName: "airlock [run|mutate] [shard K/N set
// DIGEST]"; the zero Shard without "shard"). A report whose declared
// tests, failures, errors or skipped counts disagree with the testcases it
// holds is refused too.
func ReadJUnit(data []byte) (*JUnitReport, error) {
	if len(data) > MaxMergeInput {
		return nil, fmt.Errorf("%d bytes; at most %d are read", len(data), MaxMergeInput)
	}
	doc, err := decodeJUnit(data)
	if err != nil {
		return nil, err
	}
	r := &JUnitReport{doc: doc}
	if r.Command, r.Shard, err = parseJUnitName(doc.Name); err != nil {
		return nil, err
	}
	for _, s := range doc.Suites {
		if !strings.Contains(s.Name, ".") {
			return nil, fmt.Errorf("<testsuite name=%q>: want tool.suite", Line(s.Name))
		}
	}
	return r, nil
}

// checkJUnitName refuses a <testsuites> name parseJUnitName does not read.
func checkJUnitName(name string) error {
	_, _, err := parseJUnitName(name)
	return err
}

// JUnitReport is a JUnit XML report read back by ReadJUnit.
type JUnitReport struct {
	Shard shard.Shard
	// Command is the command the name records ("" when it names none).
	Command string
	doc     junitSuites
}

// MergeJUnit joins the JUnit reports of shards 1..N of one run (CheckSet
// on names and their Shard and Command) into the unsharded run's report
// (<testsuites> name "airlock <command>"): one
// <testsuite> per tool and suite in WriteJUnit's order, each holding its
// testcases from every shard in the unsharded run's order (as MergeRuns;
// a mutant's fixture name is its testcase name up to the first "#"), the
// counts added up, a testsuite's time the sum of its shards' times, and
// the <testsuites> time the largest of the shards' (their wall times; the
// shards ran side by side). Texts are cleaned again as WriteJUnit cleans
// them (a no-op on airlock's own output). A testcase (classname, name) in
// two inputs is a *SetError. The " [2]" WriteJUnit adds to a repeated
// (classname, name) within one report is kept as read.
func MergeJUnit(w io.Writer, names []string, reps []*JUnitReport) error {
	inputs := make([]MergeInput, len(reps))
	for i, r := range reps {
		inputs[i] = MergeInput{Name: names[i], Shard: r.Shard, Command: r.Command}
	}
	if err := CheckSet("JUnit", inputs); err != nil {
		return err
	}
	out := junitSuites{Name: junitName(reps[0].Command, shard.Shard{})}
	index := map[string]int{}
	times := map[string]int64{}
	var wall int64
	seen := map[[2]string]string{}
	for i, r := range reps {
		wall = max(wall, parseMillis(r.doc.Time))
		for _, s := range r.doc.Suites {
			name := rewritten(s.Name)
			j, ok := index[name]
			if !ok {
				j = len(out.Suites)
				index[name] = j
				out.Suites = append(out.Suites, junitSuite{Name: name})
			}
			m := &out.Suites[j]
			m.Tests += s.Tests
			m.Failures += s.Failures
			m.Errors += s.Errors
			m.Skipped += s.Skipped
			times[name] += parseMillis(s.Time)
			for _, c := range s.Cases {
				c = cleanJUnitCase(c)
				k := [2]string{c.Classname, c.Name}
				if other, dup := seen[k]; dup {
					return &SetError{Msg: fmt.Sprintf("%s and %s both hold testcase %s %s: not shards of one run", Ident(other), Ident(names[i]), c.Classname, c.Name)}
				}
				seen[k] = names[i]
				m.Cases = append(m.Cases, c)
			}
		}
	}
	for i := range out.Suites {
		s := &out.Suites[i]
		s.Time = millisText(times[s.Name])
		tool, suite, _ := strings.Cut(s.Name, ".")
		slices.SortStableFunc(s.Cases, func(a, b junitCase) int {
			return compareKeys(junitKey(tool, suite, a), junitKey(tool, suite, b))
		})
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Errors += s.Errors
	}
	slices.SortStableFunc(out.Suites, func(a, b junitSuite) int {
		ta, sa, _ := strings.Cut(a.Name, ".")
		tb, sb, _ := strings.Cut(b.Name, ".")
		if c := strings.Compare(ta, tb); c != 0 {
			return c
		}
		return suiteRank(sa) - suiteRank(sb)
	})
	out.Time = millisText(wall)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// junitKey is the orderKey of a testcase of testsuite tool.suite: its
// classname is tool.upstream-version.kind.suite (tool.contract for a
// broken contract).
func junitKey(tool, suite string, c junitCase) orderKey {
	k := orderKey{mutation: suite == mutationSuite, tool: tool, fixture: c.Name}
	mid := strings.TrimSuffix(strings.TrimPrefix(c.Classname, tool+"."), "."+suite)
	if i := strings.LastIndexByte(mid, '.'); i >= 0 {
		k.upstreamVersion, k.kind = mid[:i], kindRank(mid[i+1:])
	}
	if k.mutation && !k.contractSection(c.Name) {
		k.fixture, _, _ = strings.Cut(c.Name, "#")
	}
	return k
}

// cleanJUnitCase cleans a read testcase's texts as WriteJUnit does.
func cleanJUnitCase(c junitCase) junitCase {
	c.Classname, c.Name = rewritten(c.Classname), rewritten(c.Name)
	clean := func(f *junitFailure) *junitFailure {
		if f == nil {
			return nil
		}
		return &junitFailure{Message: Line(f.Message), Type: Line(f.Type), Body: Block(f.Body)}
	}
	c.Failure, c.Error = clean(c.Failure), clean(c.Error)
	if c.Skipped != nil {
		c.Skipped = &junitSkipped{Message: Line(c.Skipped.Message), Body: Block(c.Skipped.Body)}
	}
	c.SystemOut = Line(c.SystemOut)
	c.Time = millisText(parseMillis(c.Time))
	return c
}

// parseMillis reads a time attribute (seconds, three decimals) as
// milliseconds; anything else is 0.
func parseMillis(s string) int64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 1e9 {
		return 0
	}
	return int64(f*1000 + 0.5)
}
