package gate_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/semantic"
)

var _ = Describe("contract schema files", func() {
	It("resolve a relative $ref against an https $id to the sibling file with that $id", func() {
		dir := filepath.Join(GinkgoT().TempDir(), "shared_ids")
		Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
		files := map[string]string{
			"contract.yaml": "tool: shared_ids\nversion: \"1\"\nagent_schema: agent.schema.json\nupstream_versions:\n  v1:\n    schema: upstream.schema.json\n    projection: {id: /id}\n",
			"upstream.schema.json": `{"$id": "https://airlock.invalid/shared_ids/upstream.schema.json", "type": "object",
				"required": ["id"], "additionalProperties": false, "properties": {"id": {"$ref": "common.schema.json#/$defs/id"}}}`,
			"common.schema.json": `{"$id": "https://airlock.invalid/shared_ids/common.schema.json", "$defs": {"id": {"type": "string", "pattern": "^id-[0-9]+$"}}}`,
			"agent.schema.json":  `{"type": "object", "additionalProperties": false, "properties": {"id": {"type": "string"}}}`,
		}
		for name, content := range files {
			Expect(os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)).To(Succeed())
		}
		c, err := gate.LoadContract(dir, gate.Options{})
		Expect(err).NotTo(HaveOccurred())
		check := func(body string) *gate.Verdict {
			v, err := c.Check(gate.Response{ContentType: "application/json", Body: strings.NewReader(body)}, gate.Call{Request: semantic.Request{ID: "r1"}})
			Expect(err).NotTo(HaveOccurred())
			return v
		}
		Expect(check(`{"id":"id-7"}`).Admitted).To(BeTrue())
		Expect(check(`{"id":"x-7"}`).Reason).To(Equal("schema.pattern"))
	})
})

var _ = Describe("the number policy", func() {
	DescribeTable("refuses exponents beyond ±1000 even when the value is zero",
		func(body string, refused bool) {
			_, err := gate.Parse([]byte(body), gate.Limits{})
			if !refused {
				Expect(err).NotTo(HaveOccurred())
				return
			}
			var pe *gate.ParseError
			Expect(errors.As(err, &pe)).To(BeTrue())
			Expect(pe.Reason).To(Equal(gate.ReasonNumber))
		},
		Entry("zero with a 20-digit exponent", `0e99999999999999999999`, true),
		Entry("negative zero with a huge negative exponent", `-0.0e-99999999999999999999`, true),
		Entry("zero at the edge", `0e1000`, false),
		Entry("zero just past it", `0e1001`, true),
		Entry("an ordinary exponent with leading zeros", `-0.0e-0001`, false),
	)
})

var _ = Describe("airlock's YAML files", func() {
	decode := func(doc string) error {
		var v struct {
			A any `yaml:"a"`
		}
		return gate.DecodeYAML("f.yaml", []byte(doc), nil, &v)
	}
	It("refuses anchors and aliases before expanding them", func() {
		err := decode("a: &x [1, 2]\nb: *x\n")
		var ce *gate.ConfigError
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
	})
	It("refuses files over 1 MiB", func() {
		Expect(decode("a: " + strings.Repeat("x", gate.MaxConfigFile) + "\n")).To(MatchError(ContainSubstring("at most")))
	})
})
