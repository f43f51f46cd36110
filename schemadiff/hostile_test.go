package schemadiff_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/schemadiff"
)

// The hostile review of the memoised walk (issue 16, part 3): each spec is
// a reproduction that the walk got wrong, silently or at great cost.

// nullableChain nests n objects, each an anyOf [null, object] (how the
// importer writes a nullable value) with one property c, around a string
// of maxLength.
func nullableChain(n int, maxLength string) string {
	s := `{"type":"string","maxLength":` + maxLength + `}`
	for range n {
		s = `{"anyOf":[{"type":"null"},{"type":"object","properties":{"c":` + s + `}}]}`
	}
	return s
}

var _ = Describe("the depth of the walk", func() {
	It("counts reference tokens of the instance location, not oneOf/anyOf steps (33 nullable levels)", func() {
		// Before: each anyOf added a level, so the change at 33 tokens
		// was past the bound and the diff said "no changes".
		d, err := schemadiff.Files("testdata/hostile/depth/o33.json", "testdata/hostile/depth/n33.json")
		Expect(err).NotTo(HaveOccurred())
		changes := d.Comparisons[0].Changes
		Expect(rulesOf(changes)).To(Equal([]string{schemadiff.RuleLengthLoosened}))
		Expect(changes[0].Instance).To(Equal(strings.Repeat("/c", 33)))
	})

	It("fails, naming the instance location, rather than skip a location deeper than 64 reference tokens", func() {
		oldPath, newPath := writeSchemas(diffCase{old: nullableChain(70, "8"), new: nullableChain(70, "16")})
		_, err := schemadiff.Files(oldPath, newPath)
		var ce *gate.ConfigError
		Expect(errors.As(err, &ce)).To(BeTrue(), "%v", err)
		Expect(ce.File).To(Equal(newPath))
		Expect(ce.Key).To(Equal(strings.Repeat("/c", 65)))
		Expect(ce.Msg).To(ContainSubstring("cannot compare instance location " + strings.Repeat("/c", 65) + ": it has more than 64 reference tokens"))
	})
})

var _ = Describe("a $dynamicRef", func() {
	It("whose anchor has two targets is refused, naming the file and JSON Pointer, rather than resolved statically", func() {
		// list.json's items $dynamicRef "#T" resolves, from s.json, to
		// s.json's T (maxLength 8 → 16); followed statically it reached
		// list.json's default T, and the diff said "no changes".
		_, err := schemadiff.Files("testdata/hostile/dyn/o/s.json", "testdata/hostile/dyn/n/s.json")
		var ce *gate.ConfigError
		Expect(errors.As(err, &ce)).To(BeTrue(), "%v", err)
		Expect(ce.File).To(HaveSuffix(filepath.Join("dyn", "o", "list.json")))
		Expect(ce.Key).To(Equal("/items/$dynamicRef"))
		Expect(ce.Msg).To(ContainSubstring(`$dynamicRef "#T": 2 schemas declare $dynamicAnchor "T"`))
	})

	It("whose anchor has two targets is refused inside not as well (compared by fingerprint)", func() {
		list, err := os.ReadFile("testdata/hostile/dyn/o/list.json")
		Expect(err).NotTo(HaveOccurred())
		s := `{"type":"object","not":{"$ref":"list.json"},"$defs":{"T":{"$dynamicAnchor":"T","type":"string","maxLength":8}}}`
		oldPath, newPath := writeSchemas(diffCase{old: s, new: s, files: map[string]string{"list.json": string(list)}})
		_, err = schemadiff.Files(oldPath, newPath)
		var ce *gate.ConfigError
		Expect(errors.As(err, &ce)).To(BeTrue(), "%v", err)
		Expect(ce.Key).To(Equal("/items/$dynamicRef"))
	})

	It("whose anchor has one target is compared as a reference", func() {
		tree := func(maxLength string) string {
			return `{"$dynamicAnchor":"node","type":"object","properties":{` +
				`"name":{"type":"string","maxLength":` + maxLength + `},` +
				`"children":{"type":"array","items":{"$dynamicRef":"#node"}}}}`
		}
		Expect(rulesOf(diffOf(diffCase{old: tree("8"), new: tree("16")}))).To(Equal([]string{schemadiff.RuleLengthLoosened}))
	})
})

var _ = Describe("keywords compared by fingerprint", func() {
	// Before: dependentRequired, dependentSchemas inside not were left out
	// of the fingerprint, and it stopped at depth 12 (deepnot, deepthen).
	for _, name := range []string{"deepnot", "deepthen", "depreq", "depsch", "pp"} {
		It("report a change inside them ("+name+".json)", func() {
			d, err := schemadiff.Files("testdata/hostile/fp/o/"+name+".json", "testdata/hostile/fp/n/"+name+".json")
			Expect(err).NotTo(HaveOccurred())
			Expect(rulesOf(d.Comparisons[0].Changes)).To(Equal([]string{schemadiff.RuleUnclassifiedKeywordChange}))
		})
	}

	It("report a change inside a recursive schema under not, and none when it is the same", func() {
		s := func(maxLength string) string {
			return `{"type":"object","not":{"$ref":"#/$defs/n"},"$defs":{"n":{"type":"object","properties":{` +
				`"next":{"$ref":"#/$defs/n"},"m":{"$ref":"#/$defs/m"}}},` +
				`"m":{"properties":{"back":{"$ref":"#/$defs/n"},"s":{"maxLength":` + maxLength + `}}}}}`
		}
		Expect(diffOf(diffCase{old: s("8"), new: s("8")})).To(BeEmpty())
		Expect(rulesOf(diffOf(diffCase{old: s("8"), new: s("16")}))).To(Equal([]string{schemadiff.RuleUnclassifiedKeywordChange}))
	})

	It("cost one digest per shared schema (16 properties each $ref'ing the next level, 7 deep, inside not)", func() {
		// Before: 180 s and 2.9 GB, each level fingerprinted 16 times per
		// path to it.
		d, err := schemadiff.Files("testdata/hostile/fp/wide-not.json", "testdata/hostile/fp/wide-not.json")
		Expect(err).NotTo(HaveOccurred())
		Expect(d.Comparisons[0].Changes).To(BeEmpty())
	})
})

var _ = Describe("the cost of the walk", func() {
	It("merges an allOf diamond 20 deep once per schema, not once per path", func() {
		// d_i = {allOf: [{$ref: d_i+1}, {$ref: d_i+1}]}. Before: 30 s and
		// 3.1 GB, the view piling up 2^20 members.
		path := "testdata/hostile/cost/allof-diamond-20.json"
		d, err := schemadiff.Files(path, path)
		Expect(err).NotTo(HaveOccurred())
		Expect(d.Comparisons[0].Changes).To(BeEmpty())
	})
})

// fanOut is an object of sites properties, each a $ref to B, an object of
// props string properties (B's "p0" of maxLength maxLength).
func fanOut(sites, props int, maxLength string) string {
	var ps, bs []string
	for i := range sites {
		ps = append(ps, fmt.Sprintf(`"r%d":{"$ref":"#/$defs/B"}`, i))
	}
	for i := range props {
		bs = append(bs, fmt.Sprintf(`"p%d":{"type":"string"}`, i))
	}
	bs[0] = `"p0":{"type":"string","maxLength":` + maxLength + `}`
	return `{"type":"object","properties":{` + strings.Join(ps, ",") + `},"$defs":{"B":{"type":"object","properties":{` + strings.Join(bs, ",") + `}}}}`
}

var _ = Describe("a component $ref'd from many places", func() {
	It("is compared once, not once per $ref site (3000 sites of a 2000-property component)", func() {
		// Before: 50 s and 4 GB, B's view rebuilt at each site.
		changes := diffOf(diffCase{old: fanOut(3000, 2000, "8"), new: fanOut(3000, 2000, "16")})
		Expect(rulesOf(changes)).To(Equal([]string{schemadiff.RuleLengthLoosened}))
		Expect(changes[0].Message).To(Equal("/r0/p0: maxLength 8 became maxLength 16 (reported once; the same schemas also apply at /r1/p0, /r10/p0, /r100/p0 and at 2996 more instance location(s))"))
	})

	It("reports a property added to it once, naming the other places", func() {
		// Before: once per $ref site (GHES 3.17 → 3.19: custom_properties
		// added to minimal-repository reported 13 times).
		s := func(extra string) string {
			return `{"type":"object","properties":{"a":{"$ref":"#/$defs/repo"},"b":{"type":"object","properties":{"repository":{"$ref":"#/$defs/repo","description":"the repository"}}},` +
				`"c":{"type":"array","items":{"$ref":"#/$defs/repo"}}},` +
				`"$defs":{"repo":{"type":"object","properties":{"id":{"type":"integer"}` + extra + `}}}}`
		}
		changes := diffOf(diffCase{old: s(""), new: s(`,"custom_properties":{"type":"object"}`)})
		Expect(rulesOf(changes)).To(Equal([]string{schemadiff.RulePropertyAddedOpen}))
		Expect(changes[0].Instance).To(Equal("/a/custom_properties"))
		Expect(changes[0].Message).To(HaveSuffix("(reported once; the same schemas also apply at /b/repository/custom_properties and /c/*/custom_properties)"))
	})
})

// taggedUnion is a oneOf of branches objects, each with a kind const
// ("k0", …) and props object properties of 10 string properties; the
// last branch's first string has maxLength maxLength.
func taggedUnion(branches, props int, maxLength string) string {
	var bs []string
	for i := range branches {
		ps := []string{fmt.Sprintf(`"kind":{"const":"k%d"}`, i)}
		for j := range props {
			var qs []string
			for k := range 10 {
				q := fmt.Sprintf(`"q%d":{"type":"string"}`, k)
				if i == branches-1 && j == 0 && k == 0 {
					q = `"q0":{"type":"string","maxLength":` + maxLength + `}`
				}
				qs = append(qs, q)
			}
			ps = append(ps, fmt.Sprintf(`"p%d":{"type":"object","properties":{%s}}`, j, strings.Join(qs, ",")))
		}
		bs = append(bs, `{"type":"object","properties":{`+strings.Join(ps, ",")+`}}`)
	}
	return `{"oneOf":[` + strings.Join(bs, ",") + `]}`
}

var _ = Describe("a discriminated union", func() {
	It("of 40 branches is compared, each branch with the one of its kind", func() {
		// Before: refused after 7.6 s, 40 × 40 trial pairings of 10
		// objects of 10 properties each.
		changes := diffOf(diffCase{old: taggedUnion(40, 10, "8"), new: taggedUnion(40, 10, "16")})
		Expect(rulesOf(changes)).To(Equal([]string{schemadiff.RuleLengthLoosened}))
		Expect(changes[0].Instance).To(Equal("/p0/q0"))
		Expect(changes[0].NewPointer).To(Equal("/oneOf/39/properties/p0/properties/q0/maxLength"))
	})

	It("reports a branch of a new kind as added, not paired with a branch of another kind", func() {
		old := `{"oneOf":[{"type":"object","properties":{"kind":{"const":"a"},"x":{"type":"string"}}}]}`
		neu := `{"oneOf":[{"type":"object","properties":{"kind":{"const":"a"},"x":{"type":"string"}}},{"type":"object","properties":{"kind":{"const":"b"},"x":{"type":"string"}}}]}`
		Expect(rulesOf(diffOf(diffCase{old: old, new: neu}))).To(Equal([]string{schemadiff.RuleBranchAdded}))
		changed := `{"oneOf":[{"type":"object","properties":{"kind":{"const":"b"},"x":{"type":"string"}}}]}`
		Expect(rulesOf(diffOf(diffCase{old: old, new: changed}))).To(ConsistOf(schemadiff.RuleBranchRemoved, schemadiff.RuleBranchAdded))
	})
})

// BenchmarkDiffHostileShapes times the shapes of the hostile review that
// were exponential or quadratic before the fixes (3000 $ref sites of a
// 2000-property component, a 40-branch tagged union, an allOf diamond 20
// deep, a fingerprint of 16 properties × 7 levels of shared $refs inside
// not), each diffed between two versions or against itself.
func BenchmarkDiffHostileShapes(b *testing.B) {
	dir := b.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
		return p
	}
	for _, c := range []struct{ name, old, new string }{
		{"fan-3000x2000", write("fan-old.json", fanOut(3000, 2000, "8")), write("fan-new.json", fanOut(3000, 2000, "16"))},
		{"tagged-union-40", write("union-old.json", taggedUnion(40, 10, "8")), write("union-new.json", taggedUnion(40, 10, "16"))},
		{"allof-diamond-20", "testdata/hostile/cost/allof-diamond-20.json", "testdata/hostile/cost/allof-diamond-20.json"},
		{"fingerprint-dag", "testdata/hostile/fp/wide-not.json", "testdata/hostile/fp/wide-not.json"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				if _, err := schemadiff.Files(c.old, c.new); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

var _ = Describe("fingerprints past their bound", func() {
	It("fail the diff with an error rather than run for long or say nothing changed", func() {
		// n_i = allOf [$ref n_i+1, $ref n_i+1] with a property back to n_0,
		// 24 deep, inside not: every digest sees the cycle to n_0 above it,
		// so none is memoised and the paths are 2^24.
		var defs []string
		for i := range 24 {
			defs = append(defs, fmt.Sprintf(`"n%d":{"allOf":[{"$ref":"#/$defs/n%d"},{"$ref":"#/$defs/n%d"}],"properties":{"back":{"$ref":"#/$defs/n0"}}}`, i, i+1, i+1))
		}
		defs = append(defs, `"n24":{"type":"string"}`)
		s := `{"type":"object","not":{"$ref":"#/$defs/n0"},"$defs":{` + strings.Join(defs, ",") + `}}`
		oldPath, newPath := writeSchemas(diffCase{old: s, new: s})
		_, err := schemadiff.Files(oldPath, newPath)
		var ce *gate.ConfigError
		Expect(errors.As(err, &ce)).To(BeTrue(), "%v", err)
		Expect(ce.Msg).To(MatchRegexp(`too large to compare with .*: more than \d+ schema fingerprints`))
	})
})
