package validator_test

// The differential run over JSON-Schema-Test-Suite draft 2020-12: every
// case of tests/draft2020-12, optional/ and optional/format/, validated by
// jsonschema/v6 (the oracle, as the gate's schema stage runs it) and by the
// compiled validator, on the same schema v6 compiled with the gate's
// compiler configuration. The two must give the same verdict on every case
// but the few in knownDisagreements, and the compiled validator must pass
// no fewer of a file's cases than v6 does. The corpus is found as the gate's
// conformance specs find it: $AIRLOCK_CONFORMANCE, or ../shared/conformance
// beside the module; without it the test is skipped, except under CI=true.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/conformance"
	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/internal/validator"
)

// suiteCase names one test of the suite: file relative to
// tests/draft2020-12, the group's description, the test's description.
type suiteCase struct{ file, group, test string }

func (c suiteCase) String() string { return fmt.Sprintf("%s / %q / %q", c.file, c.group, c.test) }

// knownDisagreement is a case on which the compiled validator and v6 may
// give different verdicts, and why. Every other disagreement fails the
// test, and so does an entry on which they agree (or that names no case).
// An entry does not excuse a file's conformance dropping below v6's: list
// only cases where v6 is the one that departs from the suite.
type knownDisagreement struct{ file, group, test, why string }

// knownDisagreements is empty: no case is known to need one yet.
var knownDisagreements = []knownDisagreement{}

// suiteLimits decode the suite's own files and remotes (as the gate's
// conformance specs do): generous caps, numbers kept as exact json.Number.
var suiteLimits = strictjson.Limits{MaxDepth: 1000, MaxNumberLength: 1 << 16, MaxStringLength: 1 << 24}

// suiteCorpus returns the JSON-Schema-Test-Suite folder, or skips the test
// (fails it under CI=true) when there is none.
func suiteCorpus(t testing.TB) string {
	t.Helper()
	dir, missing := conformance.Corpus("JSON-Schema-Test-Suite")
	if missing == "" {
		if fi, err := os.Stat(filepath.Join(dir, "tests", "draft2020-12")); err != nil || !fi.IsDir() {
			missing = fmt.Sprintf("JSON-Schema-Test-Suite draft2020-12 not found under %s; set %s", dir, conformance.Env)
		}
	}
	if missing != "" {
		if conformance.Required() {
			t.Fatal("CI=true but " + missing)
		}
		t.Skip(missing)
	}
	return dir
}

// suiteRemotes serves the suite's remotes (conformance.Remotes).
func suiteRemotes(dir string) (schema.ConfinedLoader, error) {
	return conformance.Remotes(dir, suiteLimits)
}

// suiteGroup is one group of a suite file, the instances kept as their
// bytes so that each is parsed the gate's way.
type suiteGroup struct {
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Tests       []struct {
		Description string          `json:"description"`
		Data        json.RawMessage `json:"data"`
		Valid       *bool           `json:"valid"`
	} `json:"tests"`
}

// parseInstance parses an instance as the gate would hand it over
// (strictjson, default limits); what strictjson refuses (a number past
// binary64, a duplicate member name, nesting past 64) is decoded by
// encoding/json with UseNumber instead, and lenient reports that.
func parseInstance(raw []byte) (v any, lenient bool, err error) {
	if v, err := strictjson.Parse(raw, strictjson.Limits{}); err == nil {
		return v, false, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, true, err
	}
	return v, true, nil
}

// fileStats are the figures of one suite file (or a folder's total).
type fileStats struct {
	cases, agree     int
	compiled         int // cases whose schema the compiled engine runs (Fallback "")
	agreeCompiled    int
	oursPass, v6Pass int // verdicts equal to the suite's
	schemas          int
	fallbacks        int // schemas left on fallback
	lenient          int // instances strictjson refused, decoded by encoding/json
	noCompile        int // cases of groups whose schema v6 does not compile (not run)
	checked          int // refusals of both whose description was checked
}

func (s *fileStats) add(o fileStats) {
	s.cases += o.cases
	s.agree += o.agree
	s.compiled += o.compiled
	s.agreeCompiled += o.agreeCompiled
	s.oursPass += o.oursPass
	s.v6Pass += o.v6Pass
	s.schemas += o.schemas
	s.fallbacks += o.fallbacks
	s.lenient += o.lenient
	s.noCompile += o.noCompile
	s.checked += o.checked
}

// suiteRun is the whole run: figures per file, the disagreements and the
// fallback reasons.
type suiteRun struct {
	files         map[string]*fileStats
	disagreements map[suiteCase]string
	// fallback counts schemas and cases by Fallback() reason.
	fallbackSchemas, fallbackCases map[string]int
	problems                       []string
}

func TestDifferentialSuite(t *testing.T) {
	corpus := suiteCorpus(t)
	testsDir := filepath.Join(corpus, "tests", "draft2020-12")
	loader, err := suiteRemotes(filepath.Join(corpus, "remotes"))
	if err != nil {
		t.Fatal(err)
	}

	known := map[suiteCase]string{}
	for _, d := range knownDisagreements {
		c := suiteCase{d.file, d.group, d.test}
		if _, dup := known[c]; dup {
			t.Errorf("knownDisagreements lists %v twice", c)
		}
		if d.why == "" || strings.Contains(d.why, "\n") {
			t.Errorf("knownDisagreements %v: the reason must be one non-empty line", c)
		}
		known[c] = d.why
	}

	run := &suiteRun{files: map[string]*fileStats{}, disagreements: map[suiteCase]string{},
		fallbackSchemas: map[string]int{}, fallbackCases: map[string]int{}}
	folders := []string{".", "optional", "optional/format"}
	for _, folder := range folders {
		names, err := suiteFiles(filepath.Join(testsDir, filepath.FromSlash(folder)))
		if err != nil {
			t.Fatal(err)
		}
		if len(names) == 0 {
			t.Fatalf("no test files in %s", path.Join("tests/draft2020-12", folder))
		}
		for _, name := range names {
			file := path.Join(folder, name)
			run.file(t, testsDir, file, loader)
		}
	}

	for _, p := range run.problems {
		t.Error(p)
	}
	var unlisted, stale []string
	for c, what := range run.disagreements {
		if _, ok := known[c]; !ok {
			unlisted = append(unlisted, fmt.Sprintf("%v: %s", c, what))
		}
	}
	for c := range known {
		if _, ok := run.disagreements[c]; !ok {
			stale = append(stale, c.String())
		}
	}
	slices.Sort(unlisted)
	slices.Sort(stale)
	for _, u := range unlisted {
		t.Errorf("the compiled validator and v6 disagree: %s", u)
	}
	for _, s := range stale {
		t.Errorf("knownDisagreements lists %s, on which they agree (or which no longer exists): remove it", s)
	}
	for _, file := range slices.Sorted(maps.Keys(run.files)) {
		if st := run.files[file]; st.oursPass < st.v6Pass {
			t.Errorf("%s: the compiled validator passes %d of %d cases, v6 %d: conformance below v6's", file, st.oursPass, st.cases, st.v6Pass)
		}
	}
	run.log(t, folders)
}

// suiteFiles lists the .json files directly in dir, sorted.
func suiteFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// file runs every case of one suite file.
func (run *suiteRun) file(t *testing.T, testsDir, file string, loader schema.ConfinedLoader) {
	t.Helper()
	st := &fileStats{}
	run.files[file] = st
	body, err := os.ReadFile(filepath.Join(testsDir, filepath.FromSlash(file)))
	if err != nil {
		t.Fatal(err)
	}
	var groups []suiteGroup
	if err := json.Unmarshal(body, &groups); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	seen := map[suiteCase]bool{}
	for gi, g := range groups {
		doc, err := strictjson.Parse(g.Schema, suiteLimits)
		if err != nil {
			t.Fatalf("%s group %q: the schema does not pass the strict parser: %v", file, g.Description, err)
		}
		c := schema.NewCompiler(loader)
		url := fmt.Sprintf("http://airlock.invalid/draft2020-12/%s/group-%d.json", file, gi)
		err = c.AddResource(url, doc)
		var vd *validator.Validator
		var docs map[string]bool
		fallback := ""
		if err == nil {
			s, cerr := c.Compile(url)
			if err = cerr; err == nil {
				st.schemas++
				if vd, err = compileOurs(s); err != nil {
					run.problems = append(run.problems, fmt.Sprintf("%s group %q: %v", file, g.Description, err))
					continue
				}
				if fallback = vd.Fallback(); fallback != "" {
					st.fallbacks++
					run.fallbackSchemas[fallback]++
				}
				docs = resources(s)
				run.group(st, file, g, s, vd, docs, fallback, seen)
				continue
			}
		}
		// v6 does not compile the schema (a pattern RE2 cannot take, say):
		// the gate would refuse the contract, so there is nothing to
		// compare; the gate's conformance specs account for these cases.
		st.noCompile += len(g.Tests)
		for _, tc := range g.Tests {
			seen[suiteCase{file, g.Description, tc.Description}] = true
		}
	}
}

// group runs the cases of one compiled group.
func (run *suiteRun) group(st *fileStats, file string, g suiteGroup, sch *jsonschema.Schema, vd *validator.Validator, docs map[string]bool, fallback string, seen map[suiteCase]bool) {
	for _, tc := range g.Tests {
		key := suiteCase{file, g.Description, tc.Description}
		if seen[key] {
			run.problems = append(run.problems, fmt.Sprintf("%v appears twice: the known-disagreements table could not tell them apart", key))
		}
		seen[key] = true
		if tc.Valid == nil {
			run.problems = append(run.problems, fmt.Sprintf("%v: no boolean valid", key))
			continue
		}
		want := invalid
		if *tc.Valid {
			want = valid
		}
		v, lenient, err := parseInstance(tc.Data)
		if err != nil {
			run.problems = append(run.problems, fmt.Sprintf("%v: the instance does not decode: %v", key, err))
			continue
		}
		st.cases++
		if lenient {
			st.lenient++
		}
		if fallback == "" {
			st.compiled++
		} else {
			run.fallbackCases[fallback]++
		}
		ref := runOracle(sch, v)
		got := runOurs(vd, v)
		if ref.out == want {
			st.v6Pass++
		}
		if got.out == want {
			st.oursPass++
		}
		switch {
		case got.out == crashed || got.out == inconsistent:
			run.problems = append(run.problems, fmt.Sprintf("%v: the compiled validator: %s", key, got))
		case got.out != ref.out:
			run.disagreements[key] = fmt.Sprintf("ours %s, v6 %s, suite %s", got, ref, want)
		default:
			st.agree++
			if fallback == "" {
				st.agreeCompiled++
			}
		}
		// The failure list asked for as the gate's audit does: the same
		// verdict, and (below) every location resolving.
		loc := runOursLocations(vd, v, schema.MaxLocations)
		if loc.out != got.out {
			run.problems = append(run.problems, fmt.Sprintf("%v: Validate says %s, ValidateLocations %s", key, got, loc))
		}
		if got.out == invalid && ref.out == invalid {
			st.checked++
			if msg := checkFailure(got.failure, v, docs, 1); msg != "" {
				run.problems = append(run.problems, fmt.Sprintf("%v: ours: %s", key, msg))
			}
			if msg := checkFailure(ref.failure, v, docs, 1); msg != "" {
				// The check itself is wrong if v6 fails it.
				run.problems = append(run.problems, fmt.Sprintf("%v: v6: %s", key, msg))
			}
			if loc.out == invalid {
				if msg := checkFailure(loc.failure, v, docs, schema.MaxLocations); msg != "" {
					run.problems = append(run.problems, fmt.Sprintf("%v: ours (ValidateLocations): %s", key, msg))
				}
			}
		}
	}
}

// log writes the figures: one line per file, a total per folder, and the
// fallback reasons. (The cases where v6 departs from the suite are listed,
// with why, by the gate's conformance specs.)
func (run *suiteRun) log(t *testing.T, folders []string) {
	var b strings.Builder
	b.WriteString("JSON-Schema-Test-Suite draft2020-12, compiled validator vs jsonschema/v6\n")
	fmt.Fprintf(&b, "%-44s %5s %5s %9s %5s %5s %7s %8s %7s %6s\n", "file", "cases", "agree", "compiled", "ours", "v6", "schemas", "fallback", "lenient", "nocomp")
	line := func(name string, s fileStats) {
		fmt.Fprintf(&b, "%-44s %5d %5d %4d/%-4d %5d %5d %7d %8d %7d %6d\n", name, s.cases, s.agree, s.agreeCompiled, s.compiled, s.oursPass, s.v6Pass, s.schemas, s.fallbacks, s.lenient, s.noCompile)
	}
	var all fileStats
	for _, folder := range folders {
		var total fileStats
		for _, file := range slices.Sorted(maps.Keys(run.files)) {
			if path.Dir(file) != folder {
				continue
			}
			line("  "+file, *run.files[file])
			total.add(*run.files[file])
		}
		line("= "+folder+"/", total)
		all.add(total)
	}
	line("= all", all)
	fmt.Fprintf(&b, "(agree: same verdict; compiled: agreements/cases where Fallback() is \"\"; ours, v6: verdicts equal to the suite's;\n"+
		" lenient: instances strictjson refuses, decoded by encoding/json; nocomp: cases of schemas v6 does not compile, not run;\n"+
		" %d refusals of both checked for keyword, keyword location and instance locations)\n", all.checked)
	if len(run.fallbackSchemas) > 0 {
		b.WriteString("schemas left on fallback, by reason:\n")
		for _, why := range slices.Sorted(maps.Keys(run.fallbackSchemas)) {
			fmt.Fprintf(&b, "  %5d schemas, %5d cases: %s\n", run.fallbackSchemas[why], run.fallbackCases[why], why)
		}
	}
	t.Log(b.String())
}
