package drift_test

import (
	. "github.com/onsi/ginkgo/v2"

	"github.com/airlockdev/airlock/internal/testtree"
	"github.com/airlockdev/airlock/reports"
	"github.com/airlockdev/airlock/runner"
)

// Shared by this package's specs; see package testtree.
var (
	tree    = func(files map[string]string) string { return testtree.Write(GinkgoT(), files) }
	project = testtree.Project
	run     = testtree.Run
)

// byName finds the case of one fixture and suite, failing the spec without.
func byName(res *runner.Result, name, suite string) reports.Case {
	c, ok := testtree.Case(res, name, suite)
	if !ok {
		Fail("no case " + name + " in suite " + suite)
	}
	return c
}
