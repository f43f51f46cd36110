package gate_test

import (
	"os/exec"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The import direction of DESIGN.md: cmd → runner → reports and
// runner → gate → semantic; gate and semantic import nothing else from the
// module.
var _ = Describe("package layering", func() {
	It("keeps imports pointing one way", func() {
		out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}:{{join .Deps " "}}`, "github.com/airlockdev/airlock/...").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		allowed := map[string][]string{
			"github.com/airlockdev/airlock/semantic":    {},
			"github.com/airlockdev/airlock/gate":        {"github.com/airlockdev/airlock/semantic"},
			"github.com/airlockdev/airlock/reports":     {},
			"github.com/airlockdev/airlock/runner":      {"github.com/airlockdev/airlock/gate", "github.com/airlockdev/airlock/semantic", "github.com/airlockdev/airlock/reports"},
			"github.com/airlockdev/airlock/cmd/airlock": {"github.com/airlockdev/airlock/gate", "github.com/airlockdev/airlock/semantic", "github.com/airlockdev/airlock/reports", "github.com/airlockdev/airlock/runner"},
		}
		seen := 0
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			pkg, deps, _ := strings.Cut(line, ":")
			ok, known := allowed[pkg]
			if !known {
				// scripts and other tools: only the entry points may import anything.
				continue
			}
			seen++
			for _, d := range strings.Fields(deps) {
				if strings.HasPrefix(d, "github.com/airlockdev/airlock/") {
					Expect(ok).To(ContainElement(d), "%s must not import %s", pkg, d)
				}
			}
		}
		Expect(seen).To(BeNumerically(">=", 3), "go list found too few airlock packages:\n%s", out)
	})
})
