package reports

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/airlockdev/airlock/internal/shard"
)

// SARIF 2.1.0 logs (OASIS Static Analysis Results Interchange Format
// 2.1.0): one builder (sarifBuilder) serves lint, run, diff and drift, so
// every log has the same driver, rule and location shape:
//
//   - one run whose tool.driver is airlock with version, semanticVersion
//     and informationUri, and the command's whole rule registry in a fixed
//     order (so two shards' rule lists are equal);
//   - run.automationDetails.id "airlock/<command>/": GitHub code scanning
//     takes the part before the last "/" as the category, the same for
//     every shard of a command;
//   - run.properties "airlock/shard": "K/N" for a shard (--shard), and
//     "airlock/shardSet": the digest of the fixture set it was cut from
//     (shard.Shard.Set), which MergeSARIF requires to be one;
//   - results sorted by the total key of sarifLess (artifact URI, start
//     line, start column, rule id, message, logical location, then the
//     rest of the result), ruleIndex pointing into the rule list;
//   - GitHub's upload limits kept (CheckGitHubSARIF): at most
//     MaxSARIFResults results, most severe kept first, and the file under
//     maxSARIFBytes; what was left out is counted in run.properties
//     "airlock/omittedResults" and said in a toolExecutionNotification;
//   - file paths are made relative to the working directory (run airlock
//     from the repository root); one outside it gets no physical location,
//     only its logical location: code scanning refuses URIs outside the
//     repository.

// SARIFVersion and SARIFSchemaURI are the log's version and $schema.
const (
	SARIFVersion   = "2.1.0"
	SARIFSchemaURI = "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/main/sarif-2.1/schema/sarif-schema-2.1.0.json"
)

// sarifInformationURI is the tool's documentation as SARIF's
// tool.driver.informationUri names it (the module path's page).
const sarifInformationURI = "https://pkg.go.dev/github.com/airlockdev/airlock"

// GitHub code scanning's upload limits ("SARIF support for code
// scanning", "Uploading a SARIF file to GitHub"): results per run, runs
// per file, and the gzip-compressed size of a file.
const (
	MaxSARIFResults   = 25000
	MaxSARIFRuns      = 20
	MaxSARIFGzipBytes = 10 << 20
)

// maxSARIFBytes bounds a log's uncompressed size: under it the gzip
// stream (deflate's stored blocks add 5 bytes per 64 KiB) stays under
// MaxSARIFGzipBytes whatever the text. Results are dropped, least severe
// first, until the compact encoding fits in sarifResultBudget; the log is
// written indented when that fits under maxSARIFBytes, compact otherwise.
const (
	maxSARIFBytes     = 9_500_000
	sarifResultBudget = 8_000_000
)

// maxSARIFText caps one message text, maxSARIFName a URI, name or
// pointer, in bytes (longer ones end in "…"): a hostile file name or
// pointer cannot make one result take the file's budget.
const (
	maxSARIFText = 4096
	maxSARIFName = 1024
)

// Property names airlock puts in run.properties.
const (
	sarifShardProperty    = "airlock/shard"
	sarifShardSetProperty = "airlock/shardSet"
	sarifOmittedProperty  = "airlock/omittedResults"
)

type sarifLog struct {
	Schema  string      `json:"$schema"`
	Version string      `json:"version"`
	Runs    []*sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool              sarifTool          `json:"tool"`
	AutomationDetails *sarifAutomation   `json:"automationDetails,omitempty"`
	Invocations       []*sarifInvocation `json:"invocations,omitempty"`
	ColumnKind        string             `json:"columnKind,omitempty"`
	Results           []*sarifResult     `json:"results"`
	Properties        map[string]any     `json:"properties,omitempty"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name            string       `json:"name"`
	Version         string       `json:"version,omitempty"`
	SemanticVersion string       `json:"semanticVersion,omitempty"`
	InformationURI  string       `json:"informationUri,omitempty"`
	Rules           []*sarifRule `json:"rules"`
}

type sarifAutomation struct {
	ID string `json:"id"`
}

type sarifInvocation struct {
	ExecutionSuccessful bool           `json:"executionSuccessful"`
	Notifications       []*sarifNotice `json:"toolExecutionNotifications,omitempty"`
}

type sarifNotice struct {
	Level   string       `json:"level"`
	Message sarifMessage `json:"message"`
}

type sarifRule struct {
	ID                   string          `json:"id"`
	ShortDescription     *sarifMultiText `json:"shortDescription,omitempty"`
	FullDescription      *sarifMultiText `json:"fullDescription,omitempty"`
	Help                 *sarifMultiText `json:"help,omitempty"`
	HelpURI              string          `json:"helpUri,omitempty"`
	DefaultConfiguration *sarifConfig    `json:"defaultConfiguration,omitempty"`
}

type sarifMultiText struct {
	Text string `json:"text"`
}

type sarifConfig struct {
	Level string `json:"level"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID           string              `json:"ruleId"`
	RuleIndex        int                 `json:"ruleIndex"`
	Level            string              `json:"level"`
	Message          sarifMessage        `json:"message"`
	Locations        []*sarifLocation    `json:"locations"`
	RelatedLocations []*sarifLocation    `json:"relatedLocations,omitempty"`
	Suppressions     []*sarifSuppression `json:"suppressions,omitempty"`
	Properties       map[string]any      `json:"properties,omitempty"`
}

type sarifLocation struct {
	ID               *int                    `json:"id,omitempty"`
	PhysicalLocation *sarifPhysicalLocation  `json:"physicalLocation,omitempty"`
	LogicalLocations []*sarifLogicalLocation `json:"logicalLocations,omitempty"`
}

type sarifPhysicalLocation struct {
	ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
	Region           *sarifRegion          `json:"region,omitempty"`
}

type sarifArtifactLocation struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine,omitempty"`
	StartColumn int `json:"startColumn,omitempty"`
}

type sarifLogicalLocation struct {
	Name               string `json:"name,omitempty"`
	FullyQualifiedName string `json:"fullyQualifiedName,omitempty"`
	Kind               string `json:"kind,omitempty"`
}

type sarifSuppression struct {
	Kind          string `json:"kind"`
	Status        string `json:"status,omitempty"`
	Justification string `json:"justification,omitempty"`
}

// SARIFRule is one entry of a command's rule registry as a SARIF
// reportingDescriptor: its stable id, default level (error, warning or
// note, SARIF §3.27.10) and description (one or more sentences; the first
// is the short description, the whole the full description and help).
type SARIFRule struct {
	ID, Level, Description string
	// HelpURI is where the rule is documented; "" for none.
	HelpURI string
}

// sarifBuilder builds one run of one command.
type sarifBuilder struct {
	command string
	run     *sarifRun
	index   map[string]int
}

// newSARIF starts the run of command (lint, run, diff, drift) at airlock
// version with rules, the command's whole registry in its fixed order.
func newSARIF(command, version string, rules []SARIFRule, sh shard.Shard) *sarifBuilder {
	b := &sarifBuilder{command: command, index: map[string]int{}}
	r := &sarifRun{
		Tool:              sarifTool{Driver: sarifDriver{Name: "airlock", Version: version, InformationURI: sarifInformationURI, Rules: []*sarifRule{}}},
		AutomationDetails: &sarifAutomation{ID: "airlock/" + command + "/"},
		ColumnKind:        "unicodeCodePoints",
		Results:           []*sarifResult{},
	}
	if sv := strings.TrimPrefix(version, "v"); semverLike(sv) {
		r.Tool.Driver.SemanticVersion = sv
	}
	for _, rule := range rules {
		if _, dup := b.index[rule.ID]; dup {
			continue
		}
		b.index[rule.ID] = len(r.Tool.Driver.Rules)
		d := exactText(rule.Description, maxSARIFText)
		r.Tool.Driver.Rules = append(r.Tool.Driver.Rules, &sarifRule{
			ID:                   rule.ID,
			ShortDescription:     &sarifMultiText{Text: firstSentence(d)},
			FullDescription:      &sarifMultiText{Text: d},
			Help:                 &sarifMultiText{Text: d},
			HelpURI:              rule.HelpURI,
			DefaultConfiguration: &sarifConfig{Level: rule.Level},
		})
	}
	if !sh.IsZero() {
		r.Properties = map[string]any{sarifShardProperty: sh.String()}
		if sh.Set != "" {
			r.Properties[sarifShardSetProperty] = sh.Set
		}
	}
	b.run = r
	return b
}

func semverLike(s string) bool { return s != "" && s[0] >= '0' && s[0] <= '9' }

// firstSentence is s up to its first ". " (the sentence's period kept).
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// exactText keeps s as it is, valid UTF-8 (an invalid byte becomes
// U+FFFD), cut to at most max bytes at a rune boundary with "…" when
// longer: JSON's escaping makes every control character safe.
func exactText(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= max {
		return s
	}
	cut := max - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// logicalText is a logical location's name or fully qualified name as
// every airlock SARIF writer spells it: Clean to one line of at most
// maxSARIFName bytes (control characters, bidirectional controls and
// "<!" made visible text), so a hostile fixture name or pointer reads as
// what it is in a code-scanning view; MergeSARIF accepts only names it
// leaves unchanged.
func logicalText(s string) string { return Clean(s, maxSARIFName, false) }

// sarifPlace is where a result is: a file (as the report names it, made a
// relative URI reference by sarifURI) with a 1-based line and column in
// Unicode code points (0 when unknown), and a logical location.
type sarifPlace struct {
	File         string
	Line, Column int
	// Name, FullName and Kind are the logical location: its short name, the
	// fully qualified name ("tool/upstream-version#/pointer") and SARIF's
	// kind ("object", "resource", "module").
	Name, FullName, Kind string
}

func (p sarifPlace) location() *sarifLocation {
	loc := &sarifLocation{}
	if uri, ok := sarifURI(p.File); ok {
		phys := &sarifPhysicalLocation{ArtifactLocation: sarifArtifactLocation{URI: uri}}
		if p.Line > 0 {
			phys.Region = &sarifRegion{StartLine: p.Line}
			if p.Column > 0 {
				phys.Region.StartColumn = p.Column
			}
		}
		loc.PhysicalLocation = phys
	}
	if p.Name != "" || p.FullName != "" {
		loc.LogicalLocations = []*sarifLogicalLocation{{
			Name: logicalText(p.Name), FullyQualifiedName: logicalText(p.FullName), Kind: p.Kind,
		}}
	}
	return loc
}

// add appends a result of rule at level with message, at place and, when
// given, related places. A rule missing from the registry is an error: the
// registry passed to newSARIF must be the whole one.
func (b *sarifBuilder) add(rule, level, message string, at sarifPlace, related ...sarifPlace) (*sarifResult, error) {
	i, ok := b.index[rule]
	if !ok {
		return nil, fmt.Errorf("sarif %s: rule %q is not in the registry", b.command, rule)
	}
	res := &sarifResult{RuleID: rule, RuleIndex: i, Level: level, Message: sarifMessage{Text: exactText(message, maxSARIFText)},
		Locations: []*sarifLocation{at.location()}}
	for _, r := range related {
		loc := r.location()
		id := len(res.RelatedLocations) + 1
		loc.ID = &id
		res.RelatedLocations = append(res.RelatedLocations, loc)
	}
	b.run.Results = append(b.run.Results, res)
	return res, nil
}

// write sorts, caps and writes the log.
func (b *sarifBuilder) write(w io.Writer) error {
	return writeSARIFRun(w, b.run, 0)
}

// writeSARIFRun keeps run within GitHub's limits (capSARIF, counting
// omitted more left out before), sorts its results (sarifLess) and writes
// the log, indented when that fits under maxSARIFBytes.
func writeSARIFRun(w io.Writer, run *sarifRun, omitted int) error {
	omitted += capSARIF(run)
	slices.SortStableFunc(run.Results, sarifCompare)
	if omitted > 0 {
		if run.Properties == nil {
			run.Properties = map[string]any{}
		}
		run.Properties[sarifOmittedProperty] = omitted
		run.Invocations = []*sarifInvocation{{ExecutionSuccessful: true, Notifications: []*sarifNotice{{Level: "warning",
			Message: sarifMessage{Text: fmt.Sprintf("%d result(s) left out to keep within code scanning's limits (at most %d results, %d bytes); the least severe went first", omitted, MaxSARIFResults, maxSARIFBytes)}}}}}
	} else {
		delete(run.Properties, sarifOmittedProperty)
		if len(run.Properties) == 0 {
			run.Properties = nil
		}
		run.Invocations = nil
	}
	log := &sarifLog{Schema: SARIFSchemaURI, Version: SARIFVersion, Runs: []*sarifRun{run}}
	out, err := json.MarshalIndent(log, "", "  ")
	if err != nil {
		return err
	}
	if len(out) > maxSARIFBytes {
		if out, err = json.Marshal(log); err != nil {
			return err
		}
	}
	out = append(out, '\n')
	_, err = w.Write(out)
	return err
}

// levelRank orders SARIF levels, most severe first.
func levelRank(l string) int {
	switch l {
	case "error":
		return 0
	case "warning":
		return 1
	case "note":
		return 2
	}
	return 3
}

// capSARIF drops results, least severe first (then last in sarifLess
// order), until at most MaxSARIFResults remain and their compact encoding
// fits in sarifResultBudget; it returns how many it dropped.
func capSARIF(run *sarifRun) int {
	size := 0
	sizes := make(map[*sarifResult]int, len(run.Results))
	for _, r := range run.Results {
		b, _ := json.Marshal(r)
		sizes[r] = len(b) + 1
		size += len(b) + 1
	}
	if len(run.Results) <= MaxSARIFResults && size <= sarifResultBudget {
		return 0
	}
	slices.SortStableFunc(run.Results, func(a, b *sarifResult) int {
		if c := cmp.Compare(levelRank(a.Level), levelRank(b.Level)); c != 0 {
			return c
		}
		return sarifCompare(a, b)
	})
	keep, used := 0, 0
	for _, r := range run.Results {
		if keep == MaxSARIFResults || used+sizes[r] > sarifResultBudget {
			break
		}
		used += sizes[r]
		keep++
	}
	dropped := len(run.Results) - keep
	run.Results = run.Results[:keep]
	return dropped
}

// sarifKey is a result's sort key: artifact URI ("" without a physical
// location), start line, start column, rule id, message, and the fully
// qualified name of its logical location.
func sarifKey(r *sarifResult) (uri string, line, col int, rule, msg, logical string) {
	if len(r.Locations) > 0 {
		l := r.Locations[0]
		if l.PhysicalLocation != nil {
			uri = l.PhysicalLocation.ArtifactLocation.URI
			if rg := l.PhysicalLocation.Region; rg != nil {
				line, col = rg.StartLine, rg.StartColumn
			}
		}
		if len(l.LogicalLocations) > 0 {
			logical = l.LogicalLocations[0].FullyQualifiedName
		}
	}
	return uri, line, col, r.RuleID, r.Message.Text, logical
}

// sarifCompare is the total order of a log's results: sarifKey, then the
// result's whole JSON encoding, so equal results are equal bytes and a
// merged set sorts as the unsharded log does.
func sarifCompare(a, b *sarifResult) int {
	au, al, ac, ar, am, ag := sarifKey(a)
	bu, bl, bc, br, bm, bg := sarifKey(b)
	if c := cmp.Or(strings.Compare(au, bu), cmp.Compare(al, bl), cmp.Compare(ac, bc), strings.Compare(ar, br),
		strings.Compare(am, bm), strings.Compare(ag, bg)); c != 0 {
		return c
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Compare(x, y)
}

// sarifURI spells a file path as SARIF's artifactLocation.uri wants it
// (§3.4.3: a URI reference) and code scanning accepts it (relative to the
// repository root): a relative path that stays inside the working
// directory as a relative reference with "/" separators, each segment
// percent-encoded; an absolute path inside the working directory is made
// relative to it first. ok is false for "", an absolute path outside the
// working directory, or a relative one that leaves it: such a result keeps
// its logical location only.
func sarifURI(p string) (string, bool) {
	if p != "" && filepath.IsAbs(p) {
		wd, err := os.Getwd()
		if err != nil {
			return "", false
		}
		rel, err := filepath.Rel(wd, p)
		if err != nil {
			return "", false
		}
		p = rel
	}
	if p == "" || filepath.IsAbs(p) || path.IsAbs(filepath.ToSlash(p)) || filepath.VolumeName(p) != "" {
		return "", false
	}
	clean := path.Clean(filepath.ToSlash(p))
	if clean == ".." || strings.HasPrefix(clean, "../") || clean == "." {
		return "", false
	}
	segs := strings.Split(clean, "/")
	for i, s := range segs {
		// ":" too, so that a first segment never reads as a scheme.
		segs[i] = strings.ReplaceAll(url.PathEscape(strings.ToValidUTF8(s, "\uFFFD")), ":", "%3A")
	}
	ref := strings.Join(segs, "/")
	if len(ref) > maxSARIFName {
		return "", false
	}
	return ref, true
}
