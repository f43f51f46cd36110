package reports

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/airlockdev/airlock/internal/shard"
)

// MergeSARIF joins the SARIF logs of the N shards of one command (each
// written by an airlock SARIF writer with --shard K/N) into the log the
// unsharded command writes: one run with the same driver, rules and
// automationDetails, every result of every shard sorted by the same total
// key (sarifCompare), ruleIndex recomputed, no "airlock/shard" or
// "airlock/shardSet" property,
// and the cap of GitHub's limits applied again (results a shard left out
// are added to "airlock/omittedResults"). Equal to the unsharded log when
// no shard had to leave results out.
//
// names[i] names inputs[i] in errors (a file name). It refuses, naming the
// files: an input that is not one airlock SARIF run (unknown members
// included), and, as a *SetError, a set that is not shards 1..N of one N
// each exactly once (CheckSet: an unsharded log, shards of different N or
// of different fixture sets, a shard without one, a missing or duplicated
// shard) or a driver, rule list, automationDetails id
// or columnKind that differs from the first input's. Work and memory are
// linear in the inputs' size.
func MergeSARIF(names []string, inputs [][]byte) ([]byte, error) {
	if len(inputs) == 0 || len(names) != len(inputs) {
		return nil, errors.New("merge sarif: no input, or not one name per input")
	}
	var first *sarifRun
	results := []*sarifResult{} // never null: SARIF's results is an array
	omitted := 0
	set := make([]MergeInput, len(inputs))
	for i, in := range inputs {
		name := Ident(names[i])
		var log sarifLog
		dec := json.NewDecoder(bytes.NewReader(in))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&log); err != nil {
			return nil, fmt.Errorf("%s is not an airlock SARIF log: %v", name, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("%s: data after the SARIF log", name)
		}
		if log.Version != SARIFVersion || len(log.Runs) != 1 || log.Runs[0] == nil {
			return nil, fmt.Errorf("%s: want one SARIF %s run, got version %q with %d run(s)", name, SARIFVersion, log.Version, len(log.Runs))
		}
		run := log.Runs[0]
		if spec, _ := run.Properties[sarifShardProperty].(string); spec != "" {
			sh, err := shard.Parse(spec)
			if err != nil {
				return nil, fmt.Errorf("%s: run.properties %q: %v", name, sarifShardProperty, err)
			}
			if sh.Set, _ = run.Properties[sarifShardSetProperty].(string); sh.Set != "" && !shard.ValidSet(sh.Set) {
				return nil, fmt.Errorf("%s: run.properties %q: want %d lower-case hex digits", name, sarifShardSetProperty, shard.SetLen)
			}
			set[i] = MergeInput{Name: names[i], Shard: sh}
		} else {
			set[i] = MergeInput{Name: names[i]}
		}
		if first == nil {
			first = run
		} else if err := sameSARIFRun(first, run); err != nil {
			return nil, &SetError{Msg: fmt.Sprintf("%s: %v than %s", name, err, Ident(names[0]))}
		}
		if x, ok := run.Properties[sarifOmittedProperty].(float64); ok && x > 0 && x < 1<<31 {
			omitted += int(x)
		}
		results = append(results, run.Results...)
	}
	if err := CheckSet(KindSARIF, set); err != nil {
		return nil, err
	}
	index := map[string]int{}
	for i, r := range first.Tool.Driver.Rules {
		if r != nil {
			index[r.ID] = i
		}
	}
	for _, r := range results {
		if r == nil {
			return nil, errors.New("merge sarif: a result is null")
		}
		i, ok := index[r.RuleID]
		if !ok {
			return nil, fmt.Errorf("merge sarif: result of rule %q, which the driver does not list", r.RuleID)
		}
		r.RuleIndex = i
	}
	run := first
	run.Results = results
	delete(run.Properties, sarifShardProperty)
	delete(run.Properties, sarifShardSetProperty)
	delete(run.Properties, sarifOmittedProperty)
	var buf bytes.Buffer
	if err := writeSARIFRun(&buf, run, omitted); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// sameSARIFRun says how b's driver, rules, automationDetails or columnKind
// differ from a's; nil when they do not.
func sameSARIFRun(a, b *sarifRun) error {
	da, db := a.Tool.Driver, b.Tool.Driver
	switch {
	case da.Name != db.Name || da.Version != db.Version || da.SemanticVersion != db.SemanticVersion || da.InformationURI != db.InformationURI:
		return fmt.Errorf("another driver (%s %s)", db.Name, db.Version)
	case !reflect.DeepEqual(da.Rules, db.Rules):
		return errors.New("another rule list")
	case !reflect.DeepEqual(a.AutomationDetails, b.AutomationDetails):
		return errors.New("another automationDetails id")
	case a.ColumnKind != b.ColumnKind:
		return errors.New("another columnKind")
	}
	return nil
}

// CheckGitHubSARIF checks a SARIF log against GitHub code scanning's
// upload limits and rules: version 2.1.0, at most MaxSARIFRuns runs, at
// most MaxSARIFResults results per run, at most MaxSARIFGzipBytes once
// gzip-compressed, every result with a ruleId, a message text and at
// least one location (upload-sarif refuses a result without), and
// every artifactLocation.uri a relative reference inside the repository
// (no scheme, no host, no leading "/", no ".." escaping the root). It
// returns the first problem found.
func CheckGitHubSARIF(log []byte) error {
	var doc struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []struct {
				RuleID  string `json:"ruleId"`
				Message struct {
					Text string `json:"text"`
				} `json:"message"`
				Locations []json.RawMessage `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(log, &doc); err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	if doc.Version != SARIFVersion {
		return fmt.Errorf("version %q, want %s", doc.Version, SARIFVersion)
	}
	if len(doc.Runs) > MaxSARIFRuns {
		return fmt.Errorf("%d runs, at most %d", len(doc.Runs), MaxSARIFRuns)
	}
	for i, r := range doc.Runs {
		if len(r.Results) > MaxSARIFResults {
			return fmt.Errorf("run %d has %d results, at most %d", i, len(r.Results), MaxSARIFResults)
		}
		for j, res := range r.Results {
			if res.RuleID == "" || res.Message.Text == "" {
				return fmt.Errorf("run %d result %d has no ruleId or message text", i, j)
			}
			if len(res.Locations) == 0 {
				return fmt.Errorf("run %d result %d has no location", i, j)
			}
		}
	}
	var z bytes.Buffer
	gw := gzip.NewWriter(&z)
	if _, err := gw.Write(log); err != nil {
		return err
	}
	if err := gw.Close(); err != nil {
		return err
	}
	if z.Len() > MaxSARIFGzipBytes {
		return fmt.Errorf("%d bytes gzip-compressed, at most %d", z.Len(), MaxSARIFGzipBytes)
	}
	var whole any
	if err := json.Unmarshal(log, &whole); err != nil {
		return err
	}
	return checkURIs(whole, "")
}

// checkURIs checks every artifactLocation.uri under v (at JSON Pointer at).
func checkURIs(v any, at string) error {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			p := at + "/" + k
			if k == "artifactLocation" {
				if loc, ok := x[k].(map[string]any); ok {
					if s, ok := loc["uri"].(string); ok {
						if err := repoRelative(s); err != nil {
							return fmt.Errorf("%s/uri %q: %v", p, s, err)
						}
					}
				}
			}
			if err := checkURIs(x[k], p); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range x {
			if err := checkURIs(e, at+"/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// repoRelative refuses a URI that is not a relative reference inside the
// repository root.
func repoRelative(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	switch {
	case u.Scheme != "" || u.Host != "":
		return errors.New("absolute URI")
	case strings.HasPrefix(u.Path, "/"):
		return errors.New("absolute path")
	}
	if c := path.Clean(u.Path); c == ".." || strings.HasPrefix(c, "../") {
		return errors.New("outside the repository")
	}
	return nil
}
