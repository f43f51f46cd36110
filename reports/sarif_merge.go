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
// included), a result no airlock writer writes (checkMergedResult: a URI
// that is not a relative reference inside the repository as sarifURI
// spells it, an over-long message text, naming the result), and, as a
// *SetError, a set that is not shards 1..N of one N each exactly once
// (CheckSet: an unsharded log, shards of different N or of different
// fixture sets, a shard without one, a missing or duplicated shard) or a
// driver, rule list, automationDetails id
// or columnKind that differs from the first input's. Work and memory are
// linear in the inputs' size.
func MergeSARIF(names []string, inputs [][]byte) ([]byte, error) {
	b, _, err := MergeSARIFSet(names, inputs)
	return b, err
}

// MergeSARIFSet is MergeSARIF that also returns each input's shard and
// command as CheckSet saw them (MergeInput; Command is the <command> of
// automationDetails.id "airlock/<command>/", "" when the id is not so
// spelled), for CheckKinds.
func MergeSARIFSet(names []string, inputs [][]byte) ([]byte, []MergeInput, error) {
	b, set, err := mergeSARIF(names, inputs)
	if err != nil {
		return nil, nil, err
	}
	return b, set, nil
}

func mergeSARIF(names []string, inputs [][]byte) ([]byte, []MergeInput, error) {
	if len(inputs) == 0 || len(names) != len(inputs) {
		return nil, nil, errors.New("merge sarif: no input, or not one name per input")
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
			return nil, nil, fmt.Errorf("%s is not an airlock SARIF log: %v", name, err)
		}
		if dec.More() {
			return nil, nil, fmt.Errorf("%s: data after the SARIF log", name)
		}
		if log.Version != SARIFVersion || len(log.Runs) != 1 || log.Runs[0] == nil {
			return nil, nil, fmt.Errorf("%s: want one SARIF %s run, got version %q with %d run(s)", name, SARIFVersion, log.Version, len(log.Runs))
		}
		run := log.Runs[0]
		if spec, _ := run.Properties[sarifShardProperty].(string); spec != "" {
			sh, err := shard.Parse(spec)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: run.properties %q: %v", name, sarifShardProperty, err)
			}
			if sh.Set, _ = run.Properties[sarifShardSetProperty].(string); sh.Set != "" && !shard.ValidSet(sh.Set) {
				return nil, nil, fmt.Errorf("%s: run.properties %q: want %d lower-case hex digits", name, sarifShardSetProperty, shard.SetLen)
			}
			set[i] = MergeInput{Name: names[i], Shard: sh}
		} else {
			set[i] = MergeInput{Name: names[i]}
		}
		if ad := run.AutomationDetails; ad != nil {
			if c, ok := strings.CutPrefix(ad.ID, "airlock/"); ok && strings.HasSuffix(c, "/") && strings.Count(c, "/") == 1 {
				set[i].Command = strings.TrimSuffix(c, "/")
			}
		}
		if first == nil {
			first = run
		} else if err := sameSARIFRun(first, run); err != nil {
			return nil, nil, &SetError{Msg: fmt.Sprintf("%s: %v than %s", name, err, Ident(names[0]))}
		}
		for j, r := range run.Results {
			if err := checkMergedResult(r, set[i].Command); err != nil {
				return nil, nil, fmt.Errorf("%s: result %d: %v", name, j, err)
			}
		}
		if x, ok := run.Properties[sarifOmittedProperty].(float64); ok && x > 0 && x < 1<<31 {
			omitted += int(x)
		}
		results = append(results, run.Results...)
	}
	if err := CheckSet(KindSARIF, set); err != nil {
		return nil, nil, err
	}
	index := map[string]int{}
	for i, r := range first.Tool.Driver.Rules {
		if r != nil {
			index[r.ID] = i
		}
	}
	for _, r := range results {
		if r == nil {
			return nil, nil, errors.New("merge sarif: a result is null")
		}
		i, ok := index[r.RuleID]
		if !ok {
			return nil, nil, fmt.Errorf("merge sarif: result of rule %q, which the driver does not list", r.RuleID)
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
		return nil, nil, err
	}
	return buf.Bytes(), set, nil
}

// checkMergedResult refuses a result an airlock SARIF writer would not
// write, so that merge passes on only what the shards' writers could have
// produced: a null result or location; a message text that exactText
// (the writers' cleaning: valid UTF-8, at most maxSARIFText bytes)
// changes; a region line or column below 0; and, in locations and
// relatedLocations, an artifactLocation.uri that is not what sarifURI
// writes — a relative reference (RFC 3986 §4.2) with no scheme, no
// authority, no leading "/", no "." or ".." segment, valid
// percent-encoding (§2.1) and every segment encoded as sarifURI encodes
// it; suppressions other than lint's (checkSuppressions: a suppression
// would hide an alert), result.properties keys or values the command's
// writer does not set (checkResultProperties), and logical locations
// not as the writers spell them (checkLogicalLocations). command is the
// <command> of the log's automationDetails.id. (A message with Markdown or HTML is written as is by the writers
// too: SARIF's message.text is plain text, §3.11.3; message.markdown,
// which viewers render, is an unknown member and refused when the log is
// decoded.)
func checkMergedResult(r *sarifResult, command string) error {
	if r == nil {
		return errors.New("null")
	}
	if exactText(r.Message.Text, maxSARIFText) != r.Message.Text {
		return fmt.Errorf("rule %s: a message text of %d bytes, longer than any airlock writes (%d)", Line(r.RuleID), len(r.Message.Text), maxSARIFText)
	}
	if err := checkSuppressions(r.Suppressions, command); err != nil {
		return fmt.Errorf("rule %s: %v", Line(r.RuleID), err)
	}
	if err := checkResultProperties(r.Properties, command); err != nil {
		return fmt.Errorf("rule %s: %v", Line(r.RuleID), err)
	}
	for _, set := range []struct {
		what string
		locs []*sarifLocation
	}{{"locations", r.Locations}, {"relatedLocations", r.RelatedLocations}} {
		what := set.what
		for i, l := range set.locs {
			if l == nil {
				return fmt.Errorf("rule %s: %s[%d] is null", Line(r.RuleID), what, i)
			}
			if err := checkLogicalLocations(l.LogicalLocations); err != nil {
				return fmt.Errorf("rule %s: %s[%d]: %v", Line(r.RuleID), what, i, err)
			}
			p := l.PhysicalLocation
			if p == nil {
				continue
			}
			if rg := p.Region; rg != nil && (rg.StartLine < 0 || rg.StartColumn < 0) {
				return fmt.Errorf("rule %s: %s[%d]: a negative line or column", Line(r.RuleID), what, i)
			}
			if err := airlockURI(p.ArtifactLocation.URI); err != nil {
				return fmt.Errorf("rule %s: %s[%d]: artifactLocation.uri %q: %v", Line(r.RuleID), what, i, Line(p.ArtifactLocation.URI), err)
			}
		}
	}
	return nil
}

// sarifResultProperties are the result.properties keys each command's
// SARIF writer sets (WriteRunSARIF; addChange for diff and drift; lint
// sets none), every value a string.
var sarifResultProperties = map[string][]string{
	"run":   {"suite", "expected", "actual"},
	"diff":  {"level", "oldPointer", "newPointer"},
	"drift": {"level", "oldPointer", "newPointer"},
}

// checkSuppressions refuses suppressions airlock's writers do not write
// for command: only lint writes one, a single suppression of kind
// "inSource", status "accepted" and a non-empty justification that
// exactText leaves unchanged (SARIF §3.35). A suppression from anywhere
// else would hide an alert in code scanning.
func checkSuppressions(sups []*sarifSuppression, command string) error {
	if len(sups) == 0 {
		return nil
	}
	if command != "lint" {
		return fmt.Errorf("suppressions, which airlock %s never writes", Line(command))
	}
	if len(sups) != 1 || sups[0] == nil {
		return fmt.Errorf("%d suppressions; airlock lint writes one", len(sups))
	}
	s := sups[0]
	if s.Kind != "inSource" || s.Status != "accepted" || s.Justification == "" || exactText(s.Justification, maxSARIFText) != s.Justification {
		return fmt.Errorf("a suppression of kind %q, status %q; airlock lint writes kind inSource, status accepted and a justification", Line(s.Kind), Line(s.Status))
	}
	return nil
}

// checkResultProperties refuses result.properties keys command's writer
// does not set (sarifResultProperties), and values that are not strings
// exactText(v, maxSARIFName) leaves unchanged.
func checkResultProperties(props map[string]any, command string) error {
	allowed := sarifResultProperties[command]
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if !slices.Contains(allowed, k) {
			return fmt.Errorf("result.properties %q, which airlock %s never writes", Line(k), Line(command))
		}
		v, ok := props[k].(string)
		if !ok || exactText(v, maxSARIFName) != v {
			return fmt.Errorf("result.properties %q: not a string of at most %d bytes", Line(k), maxSARIFName)
		}
	}
	return nil
}

// checkLogicalLocations refuses logical locations airlock's writers do not
// write: more than one per location, a null one, a kind other than
// object, resource or module, or a name or fully qualified name that
// logicalText changes.
func checkLogicalLocations(ls []*sarifLogicalLocation) error {
	if len(ls) > 1 {
		return fmt.Errorf("%d logical locations; airlock writes at most one", len(ls))
	}
	for _, l := range ls {
		switch {
		case l == nil:
			return errors.New("a null logical location")
		case l.Kind != "object" && l.Kind != "resource" && l.Kind != "module":
			return fmt.Errorf("a logical location of kind %q; airlock writes object, resource or module", Line(l.Kind))
		case logicalText(l.Name) != l.Name || logicalText(l.FullyQualifiedName) != l.FullyQualifiedName:
			return fmt.Errorf("a logical location name %q not spelled as airlock writes it (control characters, \"<!\", over %d bytes)", Line(l.Name+" "+l.FullyQualifiedName), maxSARIFName)
		}
	}
	return nil
}

// airlockURI returns why uri is not an artifactLocation.uri sarifURI
// writes, nil when it is one: sarifURI of its percent-decoded path must
// give it back unchanged.
func airlockURI(uri string) error {
	u, err := url.Parse(uri)
	switch {
	case err != nil:
		return errors.New("not a URI reference")
	case u.Scheme != "" || u.Host != "" || u.User != nil || strings.HasPrefix(uri, "//"):
		return errors.New("an absolute URI; airlock writes paths relative to the repository root")
	case strings.HasPrefix(uri, "/"):
		return errors.New("an absolute path; airlock writes paths relative to the repository root")
	}
	p, err := url.PathUnescape(uri)
	if err != nil {
		return errors.New("invalid percent-encoding")
	}
	if c := path.Clean(p); c == ".." || strings.HasPrefix(c, "../") {
		return errors.New("a path outside the repository")
	}
	if again, ok := sarifURI(p); !ok || again != uri {
		return errors.New("not spelled as airlock writes it (a \".\" or \"..\" segment, a query, a fragment, or other encoding)")
	}
	return nil
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
