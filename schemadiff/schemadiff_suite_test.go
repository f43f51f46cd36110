package schemadiff_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestSchemadiff(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "schemadiff")
}
