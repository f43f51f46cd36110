package lint_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/lint"
	"github.com/airlockdev/airlock/reports"
)

var _ = Describe("shared components", func() {
	It("reports a finding inside a component at the component's file and line", func() {
		dir := oneSchemaContract("pulls", `{"$ref": "../_components/github/v1/pull.schema.json"}`, "/id")
		comp := filepath.Join(dir, "_components", "github", "v1", "pull.schema.json")
		Expect(os.MkdirAll(filepath.Dir(comp), 0o755)).To(Succeed())
		Expect(os.WriteFile(comp, []byte("{\"type\": \"object\",\n \"additionalProperties\": false,\n \"allOf\": [{\"properties\": {\"id\": {\"type\": \"string\", \"maxLength\": 8}}}]}"), 0o644)).To(Succeed())
		l := lintTree(dir, "")
		var files []string
		for _, f := range l.Findings {
			files = append(files, f.File)
			if f.Rule == "closed-beside-composition" {
				Expect(f.File).To(Equal(comp))
				Expect(f.Line).To(Equal(2))
				return
			}
		}
		Fail("no closed-beside-composition finding; findings in " + filepath.Join(files...))
	})
})

var _ = Describe("lint.ignore over a folder of shared components", func() {
	// vendorContract writes a contract whose upstream schema has a finding
	// of its own (an unbounded string) and refs a vendor component with two
	// findings (an open object, an unbounded string); ignore is appended to
	// its manifest.
	vendorContract := func(ignore string) string {
		dir := oneSchemaContract("pulls", `{"type": "object", "properties": {"pull": {"$ref": "../_components/github/v1/pull.schema.json"}, "note": {"type": "string"}}}`, "/pull/id")
		comp := filepath.Join(dir, "_components", "github", "v1", "pull.schema.json")
		Expect(os.MkdirAll(filepath.Dir(comp), 0o755)).To(Succeed())
		Expect(os.WriteFile(comp, []byte(`{"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}, "title": {"type": "string"}}}`), 0o644)).To(Succeed())
		manifest := filepath.Join(dir, "pulls", gate.ManifestFile)
		b, err := os.ReadFile(manifest)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(manifest, append(b, []byte(ignore)...), 0o644)).To(Succeed())
		return dir
	}

	It("accepts every rule's findings in the files a glob names, counted as ignored, and nothing outside them", func() {
		dir := vendorContract("lint:\n  ignore:\n" +
			"    - {rule: \"*\", file: \"../_components/github/v1/**\", reason: the vendor's components stay as imported}\n" +
			"    - {rule: open-object, file: \"../_components/gitlab/*.schema.json\", reason: a glob that matches nothing}\n")
		l := lintTree(dir, "")
		var inComponent, ownIgnored, unused []reports.LintFinding
		for _, f := range l.Findings {
			switch {
			case strings.Contains(f.File, "_components"):
				inComponent = append(inComponent, f)
			case f.Rule == "lint-ignore-unused":
				unused = append(unused, f)
			case f.Ignored != "":
				ownIgnored = append(ownIgnored, f)
			}
		}
		Expect(len(inComponent)).To(BeNumerically(">=", 2), "the component has an open object and an unbounded string")
		rules := map[string]bool{}
		for _, f := range inComponent {
			Expect(f.Ignored).To(Equal("the vendor's components stay as imported"), f.Rule)
			rules[f.Rule] = true
		}
		Expect(rules).To(HaveKey("open-object"))
		Expect(rules).To(HaveKey("string-unbounded"))
		Expect(ownIgnored).To(BeEmpty(), "the contract's own schema is not under the glob")
		Expect(unused).To(HaveLen(1))
		Expect(unused[0].Pointer).To(Equal("/lint/ignore/1"))
		Expect(unused[0].Message).To(ContainSubstring("../_components/gitlab/*.schema.json"))
		Expect(l.Summary()).To(HaveSuffix(fmt.Sprintf(", %d ignored", len(inComponent))))
	})

	It("refuses a wildcard rule without a file, and a file glob that leaves the schemas folder", func() {
		for _, ignore := range []string{
			"    - {rule: \"*\", reason: everything}\n",
			"    - {rule: \"*\", file: \"../../etc/*\", reason: outside}\n",
			"    - {rule: open-object, file: \"../other/**\", reason: another contract's folder}\n",
		} {
			dir := vendorContract("lint:\n  ignore:\n" + ignore)
			set, err := fixture.Open(dir, "", fixture.Filter{}, gate.Options{})
			Expect(err).NotTo(HaveOccurred(), ignore)
			Expect(set.Broken).To(HaveLen(1), ignore)
			Expect(set.Broken[0].Err.Key).To(HavePrefix("/lint/ignore/0"), "%s: %v", ignore, set.Broken[0].Err)
		}
	})

	It("refuses at load a wildcard rule over the contract's own files or over every API or version, with the line and why", func() {
		for _, file := range []string{"*", "**", "?*", "*.*", "*.schema.json", "contract.yaml",
			"../_components/**", "../_components/*/v1/*", "../_components/github/**", "../_components/github/*/*",
			"../_components/git?ub/v1/*", "../_components/github/v?/*"} {
			ignore := "    - {rule: open-object, file: \"*.json\", reason: a named rule may glob}\n" +
				"    - {rule: \"*\", file: \"" + file + "\", reason: everything}\n"
			dir := vendorContract("lint:\n  ignore:\n" + ignore)
			set, err := fixture.Open(dir, "", fixture.Filter{}, gate.Options{})
			Expect(err).NotTo(HaveOccurred(), file)
			Expect(set.Broken).To(HaveLen(1), file)
			e := set.Broken[0].Err
			Expect(e.Key).To(Equal("/lint/ignore/1/file"), file)
			Expect(e.Line).To(BeNumerically(">", 1), file)
			Expect(e.File).To(HaveSuffix(gate.ManifestFile), file)
			Expect(e.Msg).To(ContainSubstring("../_components/<api>/<version>/"), file)
			Expect(e.Msg).To(ContainSubstring("name the rule"), file)
		}
	})

	It("loads the entries the importer writes, and a wildcard rule below one API version's folder", func() {
		for _, file := range []string{"../_components/github/v1/*", "../_components/github/v1/**", "../_components/github/v1/pull.schema.json"} {
			dir := vendorContract("lint:\n  ignore:\n    - {rule: \"*\", file: \"" + file + "\", reason: vendor components}\n")
			set, err := fixture.Open(dir, "", fixture.Filter{}, gate.Options{})
			Expect(err).NotTo(HaveOccurred(), file)
			Expect(set.Broken).To(BeEmpty(), file)
		}
	})
})

var _ = Describe("lint.ignore of a component two contracts share", func() {
	// twoContracts writes pulls and issues, both reaching one component
	// with an open object, each with its own ignore text.
	twoContracts := func(pullsIgnore, issuesIgnore string) string {
		dir := oneSchemaContract("pulls", `{"$ref": "../_components/github/v1/pull.schema.json"}`, "/id")
		comp := filepath.Join(dir, "_components", "github", "v1", "pull.schema.json")
		Expect(os.MkdirAll(filepath.Dir(comp), 0o755)).To(Succeed())
		Expect(os.WriteFile(comp, []byte(`{"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}}}`), 0o644)).To(Succeed())
		Expect(os.CopyFS(filepath.Join(dir, "issues"), os.DirFS(filepath.Join(dir, "pulls")))).To(Succeed())
		for tool, ignore := range map[string]string{"pulls": pullsIgnore, "issues": issuesIgnore} {
			manifest := filepath.Join(dir, tool, gate.ManifestFile)
			b, err := os.ReadFile(manifest)
			Expect(err).NotTo(HaveOccurred())
			b = []byte(strings.Replace(string(b), "tool: pulls", "tool: "+tool, 1))
			Expect(os.WriteFile(manifest, append(b, []byte(ignore)...), 0o644)).To(Succeed())
		}
		return dir
	}
	const entry = "lint:\n  ignore:\n    - {rule: \"*\", file: \"../_components/github/v1/*\", reason: vendor components}\n"

	It("reports the component's finding once, accepted, and the second contract's entry is not unused", func() {
		l := lintTree(twoContracts(entry, entry), "")
		n := 0
		for _, f := range l.Findings {
			Expect(f.Rule).NotTo(Equal("lint-ignore-unused"), f.Message)
			if strings.Contains(f.File, "_components") {
				n++
				Expect(f.Ignored).To(Equal("vendor components"), f.Rule)
			}
		}
		Expect(n).To(BeNumerically(">", 0))
	})

	// componentFindings lints dir's contracts (only tool's when tool is
	// set) and returns the findings in the component, with their tool and
	// whether they are ignored.
	componentFindings := func(dir, tool string) []string {
		set, err := fixture.Open(dir, "", fixture.Filter{Tools: []string{tool}}, gate.Options{})
		if tool == "" {
			set, err = fixture.Open(dir, "", fixture.Filter{}, gate.Options{})
		}
		Expect(err).NotTo(HaveOccurred())
		l, err := lint.Lint(context.Background(), lint.Input{Contracts: set.List, Broken: set.Broken})
		Expect(err).NotTo(HaveOccurred())
		var out []string
		for _, f := range l.Findings {
			Expect(f.Rule).NotTo(Equal("lint-ignore-unused"), f.Message)
			if strings.Contains(f.File, "_components") {
				out = append(out, fmt.Sprintf("%s %s %s ignored=%t", f.Rule, f.Pointer, f.Tool, f.Ignored != ""))
			}
		}
		return out
	}

	It("counts a component finding for a contract that does not accept it, whichever contracts are linted beside it", func() {
		// issues (linted first) accepts the component's findings, pulls
		// does not: they count for pulls, as when pulls is linted alone.
		dir := twoContracts("", entry)
		alone := componentFindings(dir, "pulls")
		Expect(alone).NotTo(BeEmpty())
		for _, f := range alone {
			Expect(f).To(HaveSuffix(" pulls ignored=false"))
		}
		Expect(componentFindings(dir, "")).To(Equal(alone))
		for _, f := range componentFindings(dir, "issues") {
			Expect(f).To(HaveSuffix(" issues ignored=true"))
		}
	})

	It("leaves the finding counted for the contract it is reported for when only the other accepts it", func() {
		// issues is linted first (contracts load in name order).
		l := lintTree(twoContracts(entry, ""), "")
		n := 0
		for _, f := range l.Findings {
			Expect(f.Rule).NotTo(Equal("lint-ignore-unused"), f.Message)
			if strings.Contains(f.File, "_components") {
				n++
				Expect(f.Tool).To(Equal("issues"))
				Expect(f.Ignored).To(BeEmpty())
			}
		}
		Expect(n).To(BeNumerically(">", 0))
	})
})
