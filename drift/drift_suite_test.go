package drift_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestDrift(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "drift")
}
