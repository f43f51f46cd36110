package strictyaml_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestStrictYAML(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "strictyaml")
}
