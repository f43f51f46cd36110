package strictyaml_test

import (
	"errors"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/internal/config"
	"github.com/airlockdev/airlock/internal/strictyaml"
)

var _ = Describe("airlock's YAML files", func() {
	decode := func(doc string) error {
		var v struct {
			A any `yaml:"a"`
		}
		return strictyaml.Decode("f.yaml", []byte(doc), nil, &v)
	}
	It("refuses anchors and aliases before expanding them", func() {
		err := decode("a: &x [1, 2]\nb: *x\n")
		var ce *config.Error
		Expect(errors.As(err, &ce)).To(BeTrue())
		Expect(ce.Line).To(Equal(1))
		Expect(err.Error()).To(ContainSubstring("anchors and aliases are not allowed"))
	})
	It("refuses deep flow nesting and deep indentation before parsing", func() {
		Expect(decode("a: " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "\n")).To(MatchError(ContainSubstring("nested more than 32 levels")))
		var deep strings.Builder
		for i := range 200 {
			deep.WriteString(strings.Repeat(" ", i) + "a:\n")
		}
		Expect(decode(deep.String())).To(MatchError(ContainSubstring("indented more than 128 columns")))
		Expect(decode("a: \"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\" # [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n")).To(Succeed(), "brackets in quotes and comments do not count")
		Expect(decode("a: [\"x\\\\\", \""+strings.Repeat("{", 40)+"\"]\n")).To(Succeed(), "a backslash escapes only the next character: \"x\\\\\" ends at its second quote")
		Expect(decode("a: [\"x\\\""+strings.Repeat("{", 40)+"\"]\n")).To(Succeed(), "an escaped quote does not end the scalar")
	})
	It("refuses files over 1 MiB", func() {
		Expect(decode("a: " + strings.Repeat("x", config.MaxFile) + "\n")).To(MatchError(ContainSubstring("at most")))
	})
})
