package mutate_test

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/internal/testtree"
	"github.com/airlockdev/airlock/mutate"
)

// The memo project with an echoed request id (rid), a date-time (at) and
// typed request context values (proj, live, ratio) in fields nothing
// projects, and no rule reading them.
func echoFiles() map[string]string {
	files := memoFiles(nil)
	files["fixtures/memo/v1/accepted/memo.json"] = strings.Replace(memoBody, `{"id":"M-1",`, `{"id":"M-1","rid":"req-1","at":"2025-06-01T11:00:00Z","proj":42,"live":true,"ratio":2.5,"page":42,"draft":true,`, 1)
	files["fixtures/memo/defaults.meta.yaml"] = "request: {id: req-1, context: {proj: 42, live: true, ratio: 2.50}}\nclock: 2025-06-01T12:00:00Z\n"
	return files
}

var _ = Describe("mutate's semantic mutants", func() {
	It("calls an admitted swap of a value bound to the request a survivor, though nothing projected changed", func() {
		rep := mutateTree(testtree.Tree(echoFiles()))
		res := byID(rep)
		id := "semantic.bound_value_swapped@/rid"
		Expect(res).To(HaveKey(id))
		Expect(res[id].Outcome).To(Equal(mutate.Survived), "%s: %s", id, res[id].Problem)
		Expect(res[id].Problem).To(ContainSubstring("belongs to another request"))
		Expect(res[id].Fails(false)).To(BeTrue())
		// An old date nothing projects and no freshness rule reads is a
		// real answer (a commit's author date): judged by what reaches the
		// agent, like a values mutant a schema keyword could refuse.
		Expect(res["values.datetime_stale@/at"].Outcome).To(Equal(mutate.Unseen))
		Expect(res["values.datetime_invalid@/at"].Outcome).To(Equal(mutate.Unseen))
	})

	It("swaps numbers and booleans equal to a request context value", func() {
		rep := mutateTree(testtree.Tree(echoFiles()))
		res := byID(rep)
		for id, after := range map[string]any{
			"semantic.bound_value_swapped@/proj":  "43",
			"semantic.bound_value_swapped@/live":  false,
			"semantic.bound_value_swapped@/ratio": "2.6",
		} {
			Expect(res).To(HaveKey(id))
			r := res[id]
			Expect(r.Outcome).To(Equal(mutate.Survived), "%s: %s", id, r.Problem)
			if s, ok := after.(string); ok {
				Expect(r.Mutant.After).To(BeEquivalentTo(s), id)
			} else {
				Expect(r.Mutant.After).To(Equal(after), id)
			}
		}
		Expect(res["semantic.bound_value_swapped@/proj"].Mutant.Hint).To(Equal("a context rule: context: {pointer: /proj, key: proj}"))
		// The same number and boolean in members not named as the key are
		// coincidences (a page number, a flag), not echoes of the request.
		Expect(res).NotTo(HaveKey("semantic.bound_value_swapped@/page"))
		Expect(res).NotTo(HaveKey("semantic.bound_value_swapped@/draft"))
		again := byID(mutateTree(testtree.Tree(echoFiles())))
		for id, r := range res {
			Expect(fmt.Sprintf("%#v", again[id].Mutant.After)).To(Equal(fmt.Sprintf("%#v", r.Mutant.After)), id)
			Expect(again[id].Mutant.Canary).To(Equal(r.Mutant.Canary), id)
		}
	})
})
