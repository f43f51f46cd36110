package mutate_test

import (
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
	files["fixtures/memo/v1/accepted/memo.json"] = strings.Replace(memoBody, `{"id":"M-1",`, `{"id":"M-1","rid":"req-1","at":"2025-06-01T11:00:00Z","proj":42,"live":true,"ratio":2.5,`, 1)
	files["fixtures/memo/defaults.meta.yaml"] = "request: {id: req-1, context: {proj: 42, live: true, ratio: 2.50}}\nclock: 2025-06-01T12:00:00Z\n"
	return files
}

var _ = Describe("mutate's semantic mutants", func() {
	It("calls an admitted mutant that expects only semantic refusals a survivor, though nothing projected changed", func() {
		rep := mutateTree(testtree.Tree(echoFiles()))
		res := byID(rep)
		for _, id := range []string{"semantic.bound_value_swapped@/rid", "values.datetime_stale@/at"} {
			Expect(res).To(HaveKey(id))
			Expect(res[id].Outcome).To(Equal(mutate.Survived), "%s: %s", id, res[id].Problem)
			Expect(res[id].Problem).To(ContainSubstring("belongs to another request or is stale"))
			Expect(res[id].Fails(false)).To(BeTrue())
		}
		// A values mutant that a schema keyword could also refuse stays unseen.
		Expect(res["values.datetime_invalid@/at"].Outcome).To(Equal(mutate.Unseen))
	})
})
