package jsonpointer_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestJSONPointer(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "jsonpointer")
}
