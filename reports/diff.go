package reports

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Level classifies a schema change from the consumer's side: the agent or
// adapter reads what the producer sends.
type Level string

// Change levels, most severe first.
const (
	// Breaking: the producer may now send something a consumer written for
	// the old schema cannot rely on or does not expect.
	Breaking Level = "breaking"
	// ContractChange: the promise changed in a way someone must decide on
	// (e.g. a new member in a closed object), though nothing the old
	// consumer relied on is gone.
	ContractChange Level = "contract-change"
	// Compatible: every response of the new schema was acceptable to the
	// old one, or nothing observable changed.
	Compatible Level = "compatible"
)

// Levels lists the levels, most severe first.
var Levels = []Level{Breaking, ContractChange, Compatible}

// Change is one classified difference between two schemas.
type Change struct {
	// Rule is the stable rule id, e.g. "response-property-type-changed".
	Rule  string `json:"rule"`
	Level Level  `json:"level"`
	// Instance is the instance location the change applies to: an RFC 6901
	// JSON Pointer into the response, "*" standing for every array element;
	// "" is the whole response.
	Instance string `json:"instance"`
	// OldPointer and NewPointer are the keyword locations of the change in
	// each schema, JSON Pointers from the schema's root through any $ref
	// (like JSON Schema's keywordLocation). Where a keyword exists on one
	// side only, the other side points at the enclosing schema.
	OldPointer string `json:"old_pointer"`
	NewPointer string `json:"new_pointer"`
	// Message is one sentence for people.
	Message string `json:"message"`
	// File and Line name where a manifest change is written: the
	// contract.yaml that holds the key (the new one, or the old one for a
	// key only the old manifest has) and the 1-based line of the key; both
	// empty for a schema change, Line 0 when unknown. OldPointer and
	// NewPointer are then JSON Pointers (RFC 6901) into each manifest, and
	// Instance is the instance location the rule or projection entry reads
	// ("" when the change is not about one).
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// NewFile, NewLine and NewColumn are where a schema change's
	// NewPointer lies in the new schema's files, $refs followed: the file
	// as the comparison names it (a sibling or shared component included),
	// the 1-based line and column (in Unicode code points) of the keyword
	// or, when the new schema has no such keyword (a removed member), of
	// the nearest enclosing value; "" and 0 when unknown (a manifest
	// change, or a location outside the files). Every format places a
	// schema change there (Where): the text "at" line, the Markdown and
	// summary tables, SARIF, annotations, and the JSON report's optional
	// new_file, new_line and new_column (format version 3 still: optional
	// fields only).
	NewFile   string `json:"new_file,omitempty"`
	NewLine   int    `json:"new_line,omitempty"`
	NewColumn int    `json:"new_column,omitempty"`
	// Impact is what the change means to the gate (airlock diff on two
	// contracts); nil for a comparison of schema files or upstream versions.
	Impact *Impact `json:"impact,omitempty"`
}

// Impact is the gate-impact view of one change between two contracts.
// Whatever makes a change count for --fail-on gate-impact (Counts) is held
// here, so every change counted in Diff.GateImpact shows why in each
// format.
type Impact struct {
	// Projected lists the agent fields whose projection pointer the
	// change's instance location touches (one is a prefix of the other, "*"
	// matching every array element), sorted; for a change of the
	// agent-facing schema, the agent fields under its instance location;
	// for an error contract's schema or the agent error schema, the detail
	// fields, as "detail.<field>". For a manifest change that alters what
	// reaches the agent (current changed, an upstream version added, a
	// projection field added, removed or re-pointed), the agent fields it
	// alters; nil for other manifest changes.
	Projected []string `json:"projected,omitempty"`
	// Repointed is, for a projection field re-pointed, the agent field,
	// its upstream version and the JSON Pointers (RFC 6901) it copied from
	// and copies from now: whose agent output changes. nil otherwise.
	Repointed *Repointed `json:"repointed,omitempty"`
	// Rules lists the semantic rules whose pointer the change's instance
	// location touches, sorted.
	Rules []string `json:"rules,omitempty"`
	// Loosens is true for a breaking manifest change other than a
	// projection field removed or re-pointed (a limit raised, a rule
	// removed, loosened or changed, content types widened, a policy
	// loosened, an error contract or the agent error schema changed, the
	// protocol changed), and for a contract added: the gate may now admit
	// what it refused.
	Loosens bool `json:"loosens,omitempty"`
	// Fixtures is the fixture evidence of a change that may refuse what
	// the old contract admitted (a compatible-level narrowing, or a
	// member retyped, a const, pattern or format changed, a semantic rule
	// changed): nil when none was gathered for it.
	Fixtures *FixtureEvidence `json:"fixtures,omitempty"`
}

// Repointed is a projection field that copies from another JSON Pointer.
type Repointed struct {
	Field           string `json:"field"`
	UpstreamVersion string `json:"upstream_version"`
	Old             string `json:"old"`
	New             string `json:"new"`
}

// Counts reports whether the impact makes its change count for --fail-on
// gate-impact: it names a projected field or a rule, it loosens the gate,
// or its narrowing refuses fixtures the old contract admitted. A nil
// Impact counts for nothing.
func (im *Impact) Counts() bool {
	if im == nil {
		return false
	}
	return len(im.Projected) > 0 || len(im.Rules) > 0 || im.Loosens || im.Repointed != nil ||
		im.Fixtures != nil && im.Fixtures.Refused > 0
}

// FixtureEvidence counts the accepted, historical and recorded fixtures of
// the tool that the old contract admits and the new one refuses, where the
// new refusal is attributed to this change.
type FixtureEvidence struct {
	// Refused is how many such fixtures there are: refused by this change,
	// or refused earlier by another and, judged against this change alone,
	// refused by it too.
	Refused int `json:"refused"`
	// Examples are the first of their body paths, at most MaxImpactExamples.
	Examples []string `json:"examples,omitempty"`
	// NotJudged is how many fixtures the old contract admits were not
	// judged against this change: the new contract refused them at an
	// earlier stage, and judging this change alone was not possible (a
	// semantic rule, a text policy, a projection that changed too).
	NotJudged int `json:"not_judged,omitempty"`
	// RefusedEarlierBy names what refused those fixtures first: the
	// changes (rule id and pointer) or, where no change explains it, the
	// refusal's reason; at most MaxImpactExamples, each once.
	RefusedEarlierBy []string `json:"refused_earlier_by,omitempty"`
}

// MaxImpactExamples is the most fixture paths one FixtureEvidence lists,
// and the most names in RefusedEarlierBy.
const MaxImpactExamples = 5

// TouchesGate reports whether c counts for --fail-on gate-impact: its
// Impact counts (Impact.Counts): it touches a projected path or a rule's
// pointer, alters what reaches the agent, loosens the gate (a breaking
// manifest change), or its narrowing refuses fixtures the old contract
// admitted. The gate-impact line of each format shows the same reasons.
func (c Change) TouchesGate() bool { return c.Impact.Counts() }

// Comparison is the changes between one pair of schemas.
type Comparison struct {
	// Name says what was compared, e.g. "deploy_status upstream v0 → v1".
	Name string `json:"name"`
	// Old and New are the schema files compared.
	Old     string   `json:"old"`
	New     string   `json:"new"`
	Changes []Change `json:"changes"`
	// Tool is, in a diff of contracts, the tool whose contract the
	// comparison belongs to; "" for schema files and upstream versions.
	// The text and Markdown reports write the consecutive comparisons of
	// one tool as one contract: one line when none has a change. Not part
	// of the JSON report.
	Tool string `json:"-"`
}

// contractGroups splits comparisons into runs: consecutive comparisons of
// one Tool, or a single comparison without one.
func contractGroups(cmps []Comparison) [][]Comparison {
	var out [][]Comparison
	for i := 0; i < len(cmps); {
		j := i + 1
		for cmps[i].Tool != "" && j < len(cmps) && cmps[j].Tool == cmps[i].Tool {
			j++
		}
		out = append(out, cmps[i:j])
		i = j
	}
	return out
}

// unchangedNames lists the comparisons of a contract's group that have no
// change, each named without the tool ("upstream v1"); nil for a group
// without a Tool.
func unchangedNames(group []Comparison) []string {
	var out []string
	for _, c := range group {
		if c.Tool != "" && len(c.Changes) == 0 {
			out = append(out, strings.TrimPrefix(c.Name, c.Tool+" "))
		}
	}
	return out
}

// unchanged reports whether no comparison of a group has a change.
func unchanged(group []Comparison) bool {
	for _, c := range group {
		if len(c.Changes) > 0 {
			return false
		}
	}
	return true
}

// Diff is the result of airlock diff: one or more comparisons.
type Diff struct {
	Comparisons []Comparison `json:"comparisons"`
	// Evidence says which fixtures the gate-impact view ran ("12 fixture(s)
	// of fixtures checked against both contracts"), or why it ran none
	// ("no fixture evidence: fixtures does not exist"); "" when the diff
	// has no gate-impact view.
	Evidence string `json:"evidence,omitempty"`
}

// GateImpact returns how many changes count for --fail-on gate-impact
// (Change.TouchesGate).
func (d *Diff) GateImpact() int {
	n := 0
	for _, cmp := range d.Comparisons {
		for _, c := range cmp.Changes {
			if c.TouchesGate() {
				n++
			}
		}
	}
	return n
}

// Count returns how many changes have level l.
func (d *Diff) Count(l Level) int {
	n := 0
	for _, c := range d.Comparisons {
		n += countLevel(c.Changes, l)
	}
	return n
}

// Breaking reports whether any change is breaking.
func (d *Diff) Breaking() bool { return d.Count(Breaking) > 0 }

func countLevel(changes []Change, l Level) int {
	n := 0
	for _, c := range changes {
		if c.Level == l {
			n++
		}
	}
	return n
}

// diffVersion is the version of the JSON diff format: 2 added the
// manifest changes' file and line, the gate-impact view and evidence; 3
// added Impact.Repointed and Loosens and FixtureEvidence.NotJudged and
// RefusedEarlierBy.
const diffVersion = 3

//go:embed diff.schema.json
var diffSchemaJSON []byte

// DiffSchema returns the published JSON Schema of WriteDiffJSON's output,
// the same bytes as schemas/diff.schema.json.
func DiffSchema() []byte { return append([]byte(nil), diffSchemaJSON...) }

// cleanChange makes every text of a change safe for a report.
func cleanChange(c Change) Change {
	c.Rule, c.Instance = Line(c.Rule), Line(c.Instance)
	c.OldPointer, c.NewPointer, c.Message = Line(c.OldPointer), Line(c.NewPointer), Line(c.Message)
	c.File, c.NewFile = Line(c.File), Line(c.NewFile)
	if c.Impact != nil {
		im := *c.Impact
		im.Projected, im.Rules = cleanLines(im.Projected), cleanLines(im.Rules)
		if im.Repointed != nil {
			rp := *im.Repointed
			rp.Field, rp.UpstreamVersion, rp.Old, rp.New = Line(rp.Field), Line(rp.UpstreamVersion), Line(rp.Old), Line(rp.New)
			im.Repointed = &rp
		}
		if im.Fixtures != nil {
			f := *im.Fixtures
			f.Examples, f.RefusedEarlierBy = cleanLines(f.Examples), cleanLines(f.RefusedEarlierBy)
			im.Fixtures = &f
		}
		c.Impact = &im
	}
	return c
}

func cleanLines(in []string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = Line(s)
	}
	return out
}

func cleanComparisons(in []Comparison) []Comparison {
	out := make([]Comparison, len(in))
	for i, cmp := range in {
		cmp.Name, cmp.Old, cmp.New, cmp.Tool = Line(cmp.Name), Line(cmp.Old), Line(cmp.New), Line(cmp.Tool)
		changes := make([]Change, len(cmp.Changes))
		for j, c := range cmp.Changes {
			changes[j] = cleanChange(c)
		}
		cmp.Changes = changes
		out[i] = cmp
	}
	return out
}

// WriteDiffJSON writes d per schemas/diff.schema.json.
func WriteDiffJSON(w io.Writer, d *Diff) error {
	doc := struct {
		Version        int          `json:"version"`
		Breaking       int          `json:"breaking"`
		ContractChange int          `json:"contract_change"`
		Compatible     int          `json:"compatible"`
		GateImpact     int          `json:"gate_impact"`
		Evidence       string       `json:"evidence,omitempty"`
		Comparisons    []Comparison `json:"comparisons"`
	}{diffVersion, d.Count(Breaking), d.Count(ContractChange), d.Count(Compatible), d.GateImpact(), Line(d.Evidence), cleanComparisons(d.Comparisons)}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// WriteDiffText writes d for a terminal or a log (in a diff of contracts,
// a contract without changes is one line, "review_status: no changes", and
// so are the comparisons without changes of a contract that has some,
// "review_status: no changes in agent schema, upstream v1"): a header per
// comparison,
// two lines per change (level, rule and message; then the pointers in
// each schema, or in each manifest, as the JSON report holds them, the
// root shown as "", and "at" where the change is written, Change.Where:
// the key's file and line for a manifest change, the new schema's file,
// line and column for a schema change), a
// third for its gate impact when it has one, and the totals.
func WriteDiffText(w io.Writer, d *Diff) error {
	var b strings.Builder
	// Blocks are separated by a blank line, except one-line blocks that
	// follow each other ("review_status: no changes").
	oneLine := false
	block := func(text string, line bool) {
		if b.Len() > 0 && !(line && oneLine) {
			b.WriteString("\n")
		}
		b.WriteString(text)
		oneLine = line
	}
	for _, group := range contractGroups(cleanComparisons(d.Comparisons)) {
		if group[0].Tool != "" && unchanged(group) {
			block(group[0].Tool+": no changes\n", true)
			continue
		}
		if same := unchangedNames(group); len(same) > 0 {
			block(group[0].Tool+": no changes in "+strings.Join(same, ", ")+"\n", true)
		}
		for _, cmp := range group {
			if cmp.Tool == "" || len(cmp.Changes) > 0 {
				block(comparisonText(cmp), false)
			}
		}
	}
	if d.Evidence != "" {
		fmt.Fprintf(&b, "\n%s\n", Line(d.Evidence))
	}
	fmt.Fprintf(&b, "\n%s\n", diffTotals(d))
	_, err := io.WriteString(w, b.String())
	return err
}

// comparisonText is one comparison's header line and its changes (cmp
// cleaned).
func comparisonText(cmp Comparison) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s → %s\n", cmp.Name, fileOrNone(cmp.Old), fileOrNone(cmp.New))
	if len(cmp.Changes) == 0 {
		b.WriteString("  no changes\n")
	}
	for _, c := range cmp.Changes {
		fmt.Fprintf(&b, "  %-15s %-42s %s\n", c.Level, c.Rule, c.Message)
		fmt.Fprintf(&b, "  %-15s old %s  new %s%s\n", "", diffPointerText(c.OldPointer), diffPointerText(c.NewPointer), fileText(c))
		if s := impactText(c.Impact); s != "" {
			fmt.Fprintf(&b, "  %-15s %s\n", "", s)
		}
	}
	return b.String()
}

// WriteDiffMarkdown writes d as Markdown for a pull request: the totals,
// then a table of changes per comparison; in a diff of contracts a
// contract without changes is one list item ("review_status: no
// changes"), and so are the comparisons without changes of a contract
// that has some ("review_status (agent schema, upstream v1): no changes").
func WriteDiffMarkdown(w io.Writer, d *Diff) error {
	var b strings.Builder
	b.WriteString("# airlock diff\n\n")
	fmt.Fprintf(&b, "%s\n", diffTotals(d))
	if d.Evidence != "" {
		fmt.Fprintf(&b, "\n%s\n", mdText(d.Evidence))
	}
	// An untouched contract is one list item, and so are the untouched
	// comparisons of a contract with changes; consecutive items form one
	// list.
	list := false
	item := func(name string) {
		if !list {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "- %s: no changes\n", mdText(name))
		list = true
	}
	for _, group := range contractGroups(d.Comparisons) {
		if group[0].Tool != "" && unchanged(group) {
			item(group[0].Tool)
			continue
		}
		if same := unchangedNames(group); len(same) > 0 {
			item(group[0].Tool + " (" + strings.Join(same, ", ") + ")")
		}
		for _, cmp := range group {
			if cmp.Tool != "" && len(cmp.Changes) == 0 {
				continue
			}
			list = false
			fmt.Fprintf(&b, "\n## %s\n\n%s → %s\n\n", mdText(cmp.Name), mdCode(fileOrNone(cmp.Old)), mdCode(fileOrNone(cmp.New)))
			writeChangeTable(&b, cmp.Changes)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeChangeTable writes a Markdown table of changes, or a line saying
// there are none.
func writeChangeTable(b *strings.Builder, changes []Change) {
	if len(changes) == 0 {
		b.WriteString("No changes.\n")
		return
	}
	b.WriteString("| level | rule | instance | old | new | message | gate impact |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, c := range changes {
		msg := mdText(c.Message)
		if f := fileText(c); f != "" {
			msg += " (" + mdCode(strings.TrimPrefix(f, "  at ")) + ")"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", levelMark(c.Level), mdCode(c.Rule),
			mdCode(instanceText(c.Instance)), mdCode(diffPointerText(c.OldPointer)), mdCode(diffPointerText(c.NewPointer)), msg, mdText(strings.TrimPrefix(impactText(c.Impact), "gate impact: ")))
	}
}

// fileText is "  at " and the change's Where, "" when it has none.
func fileText(c Change) string {
	if w := c.Where(); w != "" {
		return "  at " + w
	}
	return ""
}

// Where is where the change is written, "file:line:column" (each part
// only when known; the file cleaned with Line): a manifest change at its
// File and Line, a schema change at its NewFile, NewLine and NewColumn; ""
// when neither file is known. The text, Markdown and summary reports show
// it; SARIF and annotations use the same fields (WriteDiffSARIF,
// DiffAnnotations).
func (c Change) Where() string {
	file, line, col := c.location()
	if file == "" {
		return ""
	}
	s := Line(file)
	if line > 0 {
		s += fmt.Sprintf(":%d", line)
		if col > 0 {
			s += fmt.Sprintf(":%d", col)
		}
	}
	return s
}

// location is the file, line and column a change is written at: File and
// Line for a manifest change, NewFile, NewLine and NewColumn for a schema
// change; "" and 0 when unknown.
func (c Change) location() (file string, line, col int) {
	switch {
	case c.File != "":
		return c.File, c.Line, 0
	case c.NewFile != "":
		return c.NewFile, c.NewLine, c.NewColumn
	}
	return "", 0, 0
}

// impactText is one line for a change's gate impact, "" for none. When
// the change counts (Impact.Counts) it starts "gate impact: " and says
// why: the projected fields and rules it touches, whose agent output a
// re-pointed field changes, that a breaking manifest change loosens the
// gate, what its narrowing refuses among the fixtures. A narrowing that
// refuses none starts "no gate impact: " and says so, with the fixtures
// it could not be judged on.
func impactText(im *Impact) string {
	if im == nil {
		return ""
	}
	var parts []string
	if rp := im.Repointed; rp != nil {
		parts = append(parts, fmt.Sprintf("the agent's %s (upstream %s) now comes from %s instead of %s",
			Line(rp.Field), Line(rp.UpstreamVersion), diffPointerText(Line(rp.New)), diffPointerText(Line(rp.Old))))
	} else if len(im.Projected) > 0 {
		parts = append(parts, "touches projected "+strings.Join(cleanLines(im.Projected), ", "))
	}
	if len(im.Rules) > 0 {
		parts = append(parts, "touches rule "+strings.Join(cleanLines(im.Rules), ", "))
	}
	if im.Loosens {
		parts = append(parts, "the gate may now admit what it refused")
	}
	if f := im.Fixtures; f != nil {
		switch {
		case f.Refused > 0:
			s := fmt.Sprintf("this narrowing refuses %d fixture(s) the old contract admitted", f.Refused)
			if len(f.Examples) > 0 {
				s += " (" + strings.Join(cleanLines(f.Examples), ", ")
				if f.Refused > len(f.Examples) {
					s += ", …"
				}
				s += ")"
			}
			parts = append(parts, s)
		case f.NotJudged == 0:
			parts = append(parts, "refuses no fixture the old contract admitted")
		default:
			parts = append(parts, "not shown to refuse a fixture")
		}
		if f.NotJudged > 0 {
			parts = append(parts, fmt.Sprintf("%d fixture(s) not judged: refused earlier by %s", f.NotJudged, strings.Join(cleanLines(f.RefusedEarlierBy), ", ")))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	if !im.Counts() {
		return "no gate impact: " + strings.Join(parts, "; ")
	}
	return "gate impact: " + strings.Join(parts, "; ")
}

func levelMark(l Level) string {
	switch l {
	case Breaking:
		return "❌ breaking"
	case ContractChange:
		return "⚠️ contract-change"
	}
	return "✅ " + string(l)
}

func diffTotals(d *Diff) string {
	n := 0
	for _, c := range d.Comparisons {
		n += len(c.Changes)
	}
	s := fmt.Sprintf("%d change(s): %d breaking, %d contract-change, %d compatible",
		n, d.Count(Breaking), d.Count(ContractChange), d.Count(Compatible))
	if d.Evidence != "" || d.GateImpact() > 0 {
		s += fmt.Sprintf(", %d with gate impact", d.GateImpact())
	}
	return s
}

// fileOrNone shows the missing side of a contract added or removed, "",
// as "(none)".
func fileOrNone(f string) string {
	if f == "" {
		return "(none)"
	}
	return f
}

// instanceText shows the root instance location, "", as "(root)".
func instanceText(p string) string {
	if p == "" {
		return "(root)"
	}
	return p
}

// pointerText shows the root schema location, "", as "#" (lint findings
// and SARIF).
func pointerText(p string) string {
	if p == "" {
		return "#"
	}
	return p
}

// diffPointerText shows a change's JSON Pointer as the JSON report holds
// it (RFC 6901), the root, "", as "" between double quotes, so the text,
// Markdown and JSON reports name the same location the same way, for a
// schema's root and a manifest's root alike.
func diffPointerText(p string) string {
	if p == "" {
		return `""`
	}
	return p
}

// mdText makes s safe as Markdown text inside a table cell: one line,
// cleaned, with the characters that would start markup or HTML escaped.
func mdText(s string) string {
	s = Line(s)
	r := strings.NewReplacer(`\`, `\\`, "|", `\|`, "<", "&lt;", ">", "&gt;", "&", "&amp;", "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`)
	return r.Replace(s)
}

// mdCode makes s a Markdown code span (safe inside a table cell): cleaned,
// fenced with more backticks than it contains, pipes escaped.
func mdCode(s string) string { return codeSpan(s, true) }

// codeSpan is mdCode; with table false, for text outside a table, pipes
// are left as they are (a backslash would show inside the span).
func codeSpan(s string, table bool) string {
	s = Line(s)
	if s == "" {
		return ""
	}
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	pad := ""
	if longest > 0 || strings.HasPrefix(s, " ") {
		pad = " "
	}
	if table {
		s = escapePipes(s)
	}
	return fence + pad + s + pad + fence
}

// escapePipes escapes every "|" of s for a GitHub-flavoured Markdown table
// cell, code spans included: a table row is split at each "|" not escaped
// by a backslash, a backslash escaping the character after it (GFM spec,
// "Tables"), so writing `\\|` for a text's `\|` (a backslash, then a
// pipe) would leave the pipe unescaped and end the cell. Each pipe is
// written so that the run of backslashes before it is odd: with one
// backslash added, or two after an odd run.
func escapePipes(s string) string {
	if !strings.Contains(s, "|") {
		return s
	}
	var b strings.Builder
	run := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			run++
			b.WriteByte(c)
		case '|':
			if run%2 == 1 {
				b.WriteString(`\\|`)
			} else {
				b.WriteString(`\|`)
			}
			run = 0
		default:
			run = 0
			b.WriteByte(c)
		}
	}
	return b.String()
}
