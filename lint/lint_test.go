package lint_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/internal/testbody"
	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/lint"
	"github.com/airlockdev/airlock/reports"
)

// lintTree lints the contracts of schemas with the fixtures of fixtures
// ("" for none).
func lintTree(schemas, fixtures string) *reports.Lint {
	set, err := fixture.Open(schemas, fixtures, fixture.Filter{}, gate.Options{})
	Expect(err).NotTo(HaveOccurred())
	in := lint.Input{Contracts: set.List, Broken: set.Broken, FixturesDir: fixtures}
	if fixtures != "" {
		in.Set = set
	}
	l, err := lint.Lint(context.Background(), in)
	Expect(err).NotTo(HaveOccurred())
	return l
}

// oneSchemaContract writes, in a new folder, the contract of tool with
// upstream as its one upstream version's schema (v1), the weak contracts'
// agent schema, and a projection of id from ptr; it returns the folder.
func oneSchemaContract(tool, upstream, ptr string) string {
	dir := GinkgoT().TempDir()
	folder := filepath.Join(dir, tool)
	Expect(os.MkdirAll(folder, 0o755)).To(Succeed())
	agent, err := os.ReadFile(filepath.Join("testdata/weak/schemas", "open_object", "agent.schema.json"))
	Expect(err).NotTo(HaveOccurred())
	manifest := "tool: " + tool + "\nversion: \"1\"\nagent_schema: agent.schema.json\n" +
		"upstream_versions:\n  v1:\n    schema: upstream.v1.schema.json\n    projection:\n      id: " + ptr + "\n"
	for name, text := range map[string]string{"upstream.v1.schema.json": upstream, "agent.schema.json": string(agent), gate.ManifestFile: manifest} {
		Expect(os.WriteFile(filepath.Join(folder, name), []byte(text), 0o644)).To(Succeed())
	}
	return dir
}

// compile compiles a JSON Schema document of any dialect the validator
// knows, from bytes.
func compile(b []byte) *jsonschema.Schema {
	doc, err := strictjson.Parse(b, strictjson.Limits{MaxStringLength: 1 << 20})
	Expect(err).NotTo(HaveOccurred())
	c := schema.NewCompiler(nil)
	Expect(c.AddResource("airlock:under-test.schema.json", doc)).To(Succeed())
	sch, err := c.Compile("airlock:under-test.schema.json")
	Expect(err).NotTo(HaveOccurred())
	return sch
}

// validates parses out strictly and validates it against sch.
func validates(sch *jsonschema.Schema, out []byte) {
	doc, err := strictjson.Parse(out, strictjson.Limits{MaxStringLength: 1 << 20})
	Expect(err).NotTo(HaveOccurred(), string(out))
	Expect(sch.Validate(doc)).To(Succeed(), string(out))
}

// sarifSchema is the SARIF 2.1.0 JSON Schema (make sarif-schema installs
// it), or $AIRLOCK_SARIF_SCHEMA; nil after Skip, or Fail under CI=true.
func sarifSchema() []byte {
	b, err := testbody.SARIFSchema()
	if err != nil {
		msg := err.Error()
		if os.Getenv("CI") == "true" {
			Fail("CI=true but " + msg)
		}
		Skip(msg)
	}
	return b
}

var _ = Describe("airlock lint", func() {
	const weakSchemas, weakFixtures = "testdata/weak/schemas", "testdata/weak/fixtures"

	It("fires each rule exactly once, in the contract weak in that way, and nowhere else", func() {
		l := lintTree(weakSchemas, weakFixtures)
		Expect(l.Skipped).To(BeEmpty())
		Expect(l.Rules).To(Equal(lint.Rules()))
		byRule := map[string][]reports.LintFinding{}
		for _, f := range l.Findings {
			byRule[f.Rule] = append(byRule[f.Rule], f)
		}
		for _, r := range lint.Rules() {
			got := byRule[r.ID]
			Expect(got).To(HaveLen(1), "rule %s: %v", r.ID, got)
			f := got[0]
			Expect(f.Tool).To(Equal(strings.ReplaceAll(r.ID, "-", "_")), "rule %s fired in the wrong contract", r.ID)
			Expect(f.Level).To(Equal(r.Level))
			Expect(f.Line).To(BeNumerically(">", 0), "rule %s has no line", r.ID)
			Expect(f.Column).To(BeNumerically(">", 0))
			if f.Rule != "open-object" { // the open object of that contract is its root schema, pointer ""
				Expect(f.Pointer).To(HavePrefix("/"))
			}
			Expect(f.Message).NotTo(BeEmpty())
		}
		Expect(l.Findings).To(HaveLen(len(lint.Rules())))
	})

	It("points at the line of the keyword or key that fired", func() {
		l := lintTree(weakSchemas, weakFixtures)
		for _, f := range l.Findings {
			b, err := os.ReadFile(f.File)
			Expect(err).NotTo(HaveOccurred())
			line := strings.Split(string(b), "\n")[f.Line-1]
			last := f.Pointer[strings.LastIndex(f.Pointer, "/")+1:]
			if f.Rule == "open-object" {
				// It points at the object schema itself.
				Expect(line).To(ContainSubstring("{"), "%s: %s line %d", f.Rule, f.File, f.Line)
				continue
			}
			if f.Rule == "lint-ignore-unused" {
				// A list entry: its line starts the entry.
				Expect(strings.TrimSpace(line)).To(HavePrefix("- "), "%s: %s line %d", f.Rule, f.File, f.Line)
				continue
			}
			if f.Rule == "oneof-overlap" || f.Rule == "closed-beside-composition" || strings.HasSuffix(f.File, ".yaml") {
				Expect(line).To(ContainSubstring(last), "%s: %s line %d", f.Rule, f.File, f.Line)
				continue
			}
			// A schema finding points at its keyword's value.
			Expect(line).To(ContainSubstring(`"`+last+`"`), "%s: %s line %d", f.Rule, f.File, f.Line)
		}
	})

	It("finds nothing in a contract that is tight in every construct the rules look at", func() {
		l := lintTree("testdata/sound/schemas", "testdata/sound/fixtures")
		Expect(l.Findings).To(BeEmpty())
	})

	It("finds nothing in the bundled contracts: review_status's failure envelope is an error shape, not a schema branch", func() {
		l := lintTree("../schemas", "../fixtures")
		Expect(l.Findings).To(BeEmpty(), "%v", l.Findings)
	})

	It("skips the fixture rules without a fixture tree, and says so", func() {
		l := lintTree(weakSchemas, "")
		Expect(l.Skipped).To(HaveLen(1))
		for _, f := range l.Findings {
			Expect(f.Rule).NotTo(BeElementOf("version-without-fixtures", "near-miss-stage-uncovered"))
		}
		for _, r := range l.Rules {
			Expect(r.ID).NotTo(BeElementOf("version-without-fixtures", "near-miss-stage-uncovered"))
		}
		Expect(l.Findings).To(HaveLen(len(lint.Rules()) - 2))
	})

	It("writes JSON valid against the published schema, the same bytes as schemas/lint.schema.json", func() {
		var buf bytes.Buffer
		Expect(reports.WriteLintJSON(&buf, lintTree(weakSchemas, weakFixtures))).To(Succeed())
		validates(compile(reports.LintSchema()), buf.Bytes())
		b, err := os.ReadFile("../schemas/lint.schema.json")
		Expect(err).NotTo(HaveOccurred())
		Expect(reports.LintSchema()).To(Equal(b), "refresh it with: airlock schema lint > schemas/lint.schema.json")
	})

	It("writes SARIF 2.1.0 valid against the SARIF JSON Schema, one result per finding", func() {
		sch := compile(sarifSchema())
		l := lintTree(weakSchemas, weakFixtures)
		var buf bytes.Buffer
		Expect(reports.WriteLintSARIF(&buf, l, "v0.0.0-test")).To(Succeed())
		validates(sch, buf.Bytes())
		out := buf.String()
		Expect(strings.Count(out, `"ruleId"`)).To(Equal(len(l.Findings)))
		for _, r := range lint.Rules() {
			Expect(out).To(ContainSubstring(`"id": "` + r.ID + `"`))
		}
		Expect(out).To(ContainSubstring(`"uri": "testdata/weak/schemas/oneof_overlap/upstream.v1.schema.json"`))

		buf.Reset()
		Expect(reports.WriteLintSARIF(&buf, &reports.Lint{Rules: lint.Rules()}, "v0.0.0-test")).To(Succeed())
		validates(sch, buf.Bytes())
		Expect(buf.String()).To(ContainSubstring(`"results": []`))
	})

	It("finds the real weaknesses of a large vendor schema (the SARIF 2.1.0 JSON Schema as a contract)", func() {
		// The schema says 2020-12 but spells $defs the draft-07 way; the
		// strict loader refuses that, so the copy renames them.
		doc := strings.NewReplacer(`"definitions"`, `"$defs"`, `#/definitions/`, `#/$defs/`).Replace(string(sarifSchema()))
		l := lintTree(oneSchemaContract("sarif_log", doc, "/version"), "")
		Expect(l.Count(reports.SeverityError)).To(BeZero())
		count := map[string]int{}
		var unanchored, open []string
		for _, f := range l.Findings {
			count[f.Rule]++
			Expect(f.Line).To(BeNumerically(">", 0), "%+v", f)
			switch f.Rule {
			case "pattern-unanchored":
				unanchored = append(unanchored, f.Pointer)
			case "open-object":
				open = append(open, f.Pointer)
			}
		}
		// Two of its patterns match anywhere ("x1.2.3.4y" is a dotted quad
		// to it); the property bag is its one deliberately open object.
		Expect(unanchored).To(ConsistOf("/$defs/artifact/properties/mimeType/pattern", "/$defs/toolComponent/properties/dottedQuadFileVersion/pattern"))
		Expect(open).To(ConsistOf("/$defs/propertyBag"))
		Expect(count["string-unbounded"]).To(BeNumerically(">", 50))
		Expect(count["array-unbounded"]).To(BeNumerically(">", 50))
	})

	It("accepts what a contract's lint.ignore names, with its reason, counted apart and never failing", func() {
		dir := GinkgoT().TempDir()
		Expect(os.CopyFS(filepath.Join(dir, "open_object"), os.DirFS(filepath.Join(weakSchemas, "open_object")))).To(Succeed())
		manifest := filepath.Join(dir, "open_object", gate.ManifestFile)
		b, err := os.ReadFile(manifest)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(manifest, append(b, []byte("lint:\n  ignore:\n"+
			"    - {rule: open-object, file: upstream.v1.schema.json, pointer: \"\", reason: the upstream adds members every month}\n"+
			"    - {rule: open-object, pointer: /properties/other, reason: a pointer that matches nothing}\n"+
			"    - {rule: no-such-rule, reason: a misspelt id}\n")...), 0o644)).To(Succeed())
		l := lintTree(dir, "")
		var ignored, unused []reports.LintFinding
		for _, f := range l.Findings {
			switch {
			case f.Ignored != "":
				ignored = append(ignored, f)
			case f.Rule == "lint-ignore-unused":
				unused = append(unused, f)
			}
		}
		Expect(ignored).To(HaveLen(1))
		Expect(ignored[0].Rule).To(Equal("open-object"))
		Expect(ignored[0].Ignored).To(Equal("the upstream adds members every month"))
		Expect(unused).To(HaveLen(2))
		Expect(unused[0].Pointer).To(Equal("/lint/ignore/1"))
		Expect(unused[1].Message).To(ContainSubstring(`rule "no-such-rule", which does not exist`))
		Expect(l.Count(reports.SeverityWarning)).To(Equal(2), "the ignored finding is not counted")
		Expect(l.Summary()).To(Equal("0 errors, 2 warnings, 0 notes, 1 ignored"))

		var text bytes.Buffer
		Expect(reports.WriteLintText(&text, l)).To(Succeed())
		Expect(text.String()).NotTo(ContainSubstring("[open-object]"))
		var js bytes.Buffer
		Expect(reports.WriteLintJSON(&js, l)).To(Succeed())
		validates(compile(reports.LintSchema()), js.Bytes())
		Expect(js.String()).To(ContainSubstring(`"ignored": "the upstream adds members every month"`))
		Expect(js.String()).To(ContainSubstring(`"ignored": 1,`))
		var sarif bytes.Buffer
		Expect(reports.WriteLintSARIF(&sarif, l, "v0.0.0-test")).To(Succeed())
		Expect(sarif.String()).To(ContainSubstring(`"justification": "the upstream adds members every month"`))
		if b, err := os.ReadFile("../.ci/node/sarif/sarif-2.1.0.json"); err == nil {
			validates(compile(b), sarif.Bytes())
		}
	})

	It("keeps pointers exact in JSON and counts columns in code points, whatever the member names", func() {
		names := []string{"é\u2028ü", "a/b~c", "evil\u001b[31m|\"q\nnl", strings.Repeat("k", 700)}
		var props []string
		for _, n := range names {
			q, err := json.Marshal(n)
			Expect(err).NotTo(HaveOccurred())
			props = append(props, string(q)+`: {"type": "string"}`)
		}
		up := `{"type": "object", "additionalProperties": false, "properties": {"ééé": {"type": "string", "maxLength": 3}, ` + strings.Join(props, ", ") + `}}`
		l := lintTree(oneSchemaContract("names", up, "/ééé"), "")
		var js bytes.Buffer
		Expect(reports.WriteLintJSON(&js, l)).To(Succeed())
		var doc struct {
			Findings []reports.LintFinding `json:"findings"`
		}
		Expect(json.Unmarshal(js.Bytes(), &doc)).To(Succeed())
		parsed, err := strictjson.Parse([]byte(up), strictjson.Limits{})
		Expect(err).NotTo(HaveOccurred())
		seen := 0
		for _, f := range doc.Findings {
			if f.Rule != "string-unbounded" {
				continue
			}
			seen++
			p, err := jsonpointer.Parse(f.Pointer)
			Expect(err).NotTo(HaveOccurred(), f.Pointer)
			v, ok := p.Lookup(parsed)
			Expect(ok).To(BeTrue(), "the JSON pointer %q names the keyword in the file", f.Pointer)
			Expect(v).To(Equal("string"))
			// One line: the column is the code points before the value.
			off, ok := strictjson.PointerOffset([]byte(up), f.Pointer)
			Expect(ok).To(BeTrue())
			Expect(f.Line).To(Equal(1))
			Expect(f.Column).To(Equal(utf8.RuneCount([]byte(up)[:off]) + 1))
		}
		Expect(seen).To(Equal(len(names)))
	})

	It("stops with the context's error once it is cancelled", func() {
		set, err := fixture.Open(weakSchemas, "", fixture.Filter{}, gate.Options{})
		Expect(err).NotTo(HaveOccurred())
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err = lint.Lint(ctx, lint.Input{Contracts: set.List})
		Expect(err).To(MatchError(context.Canceled))
	})

	It("is listed in docs/lint.md exactly as the registry says", func() {
		doc, err := os.ReadFile("../docs/lint.md")
		Expect(err).NotTo(HaveOccurred())
		table := lint.RulesTable()
		header, _, _ := strings.Cut(table, "\n")
		Expect(strings.Count(string(doc), header)).To(Equal(1), "docs/lint.md has one rule table")
		_, got, _ := strings.Cut(string(doc), header)
		Expect(header+got).To(Equal(table), "docs/lint.md is stale; paste the output of go run ./scripts/genlintrules below its Rules heading")
		seen := map[string]bool{}
		for _, r := range lint.Rules() {
			Expect(seen).NotTo(HaveKey(r.ID))
			seen[r.ID] = true
			Expect(r.ID).To(MatchRegexp(`^[a-z][a-z0-9-]{0,79}$`))
			Expect(r.Level).To(BeElementOf(reports.SeverityError, reports.SeverityWarning, reports.SeverityNote))
			Expect(r.Description).To(HaveSuffix("."))
		}
	})

	It("has one weak contract per rule, named after it", func() {
		entries, err := os.ReadDir(weakSchemas)
		Expect(err).NotTo(HaveOccurred())
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		var want []string
		for _, r := range lint.Rules() {
			want = append(want, strings.ReplaceAll(r.ID, "-", "_"))
		}
		Expect(names).To(ConsistOf(want))
		_, err = os.Stat(filepath.Join(weakSchemas, "open_object", gate.ManifestFile))
		Expect(errors.Is(err, fs.ErrNotExist)).To(BeFalse())
	})
})

// textContract writes a contract t whose one field "text" projects /text,
// with the upstream and agent schemas of that member as given and text as
// the manifest's text section (or none); it returns the schemas folder.
func textContract(upstream, agent, text string) string {
	dir := GinkgoT().TempDir()
	folder := filepath.Join(dir, "t")
	Expect(os.MkdirAll(folder, 0o755)).To(Succeed())
	wrap := func(member string) string {
		return `{"type":"object","additionalProperties":false,"properties":{"text":` + member + `}}`
	}
	manifest := "tool: t\nversion: \"1\"\nagent_schema: agent.schema.json\n" + text +
		"upstream_versions:\n  v1:\n    schema: upstream.v1.schema.json\n    projection:\n      text: /text\n"
	for name, content := range map[string]string{"upstream.v1.schema.json": wrap(upstream), "agent.schema.json": wrap(agent), gate.ManifestFile: manifest} {
		Expect(os.WriteFile(filepath.Join(folder, name), []byte(content), 0o644)).To(Succeed())
	}
	return dir
}

var _ = Describe("projected-text-unbounded", func() {
	DescribeTable("judges whether a projected field's strings have a length bound",
		func(upstream, agent, text string, fires bool, where string) {
			l := lintTree(textContract(upstream, agent, text), "")
			var got []reports.LintFinding
			for _, f := range l.Findings {
				if f.Rule == "projected-text-unbounded" {
					got = append(got, f)
				}
			}
			if !fires {
				Expect(got).To(BeEmpty())
				return
			}
			Expect(got).To(HaveLen(1))
			Expect(got[0].Pointer).To(Equal("/upstream_versions/v1/projection/text"))
			Expect(got[0].Level).To(Equal(reports.SeverityError))
			Expect(got[0].Message).To(ContainSubstring(where))
		},
		Entry("a free string on both sides", `{"type":"string"}`, `{"type":"string"}`, "", true, "(the value)"),
		Entry("no type at all on either side", `{"maxProperties":2}`, `{"minLength":0}`, "", true, "(the value)"),
		Entry("strings in an array", `{"type":"array","maxItems":2,"items":{"type":"string"}}`, `{"type":"array","items":{"type":"string"}}`, "", true, "in an element: the value"),
		Entry("a string branch of a oneOf", `{"oneOf":[{"type":"integer"},{"type":"string"}]}`, `{"type":["integer","string"]}`, "", true, "(the value)"),
		Entry("bounded by text.default max_length", `{"type":"string"}`, `{"type":"string"}`, "text:\n  default: {max_length: 100}\n", false, ""),
		Entry("bounded by the field's max_length", `{"type":"string"}`, `{"type":"string"}`, "text:\n  fields:\n    text: {max_length: 100}\n", false, ""),
		Entry("a field policy without max_length does not bound it", `{"type":"string"}`, `{"type":"string"}`, "text:\n  fields:\n    text: {bidi: false}\n", true, "(the value)"),
		Entry("bounded by the agent schema's maxLength", `{"type":"string"}`, `{"type":"string","maxLength":10}`, "", false, ""),
		Entry("bounded by the upstream schema's maxLength", `{"type":"string","maxLength":10}`, `{"type":"string"}`, "", false, ""),
		Entry("bounded by an enum", `{"enum":["a","b"]}`, `{"type":"string"}`, "", false, ""),
		Entry("bounded by an anchored pattern of bounded repetition", `{"type":"string"}`, `{"type":"string","pattern":"^[a-z]{1,8}$"}`, "", false, ""),
		Entry("not by a pattern of unbounded repetition", `{"type":"string"}`, `{"type":"string","pattern":"^[a-z]+$"}`, "", true, "(the value)"),
		Entry("not a string at all", `{"type":"integer","minimum":0}`, `{"type":"integer"}`, "", false, ""),
		Entry("each oneOf branch bounded", `{"oneOf":[{"type":"integer"},{"type":"string","maxLength":3}]}`, `{"type":["integer","string"]}`, "", false, ""),
		Entry("an object's free member names", `{"type":"object","additionalProperties":{"type":"string","maxLength":4}}`, `{"type":"object","additionalProperties":{"type":"string","maxLength":4}}`, "", true, "(member names)"),
		Entry("an object's bounded member names", `{"type":"object","propertyNames":{"maxLength":8},"additionalProperties":{"type":"string","maxLength":4}}`, `{"type":"object"}`, "", false, ""),
		Entry("a closed object with a free string member", `{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"}}}`, `{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"}}}`, "", true, "inside an object: the value"),
	)
})
