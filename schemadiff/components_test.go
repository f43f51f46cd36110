package schemadiff_test

import (
	"errors"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/testtree"
	"github.com/airlockdev/airlock/reports"
	"github.com/airlockdev/airlock/schemadiff"
)

var _ = Describe("shared components", func() {
	components := map[string]string{
		"schemas/_components/github/v1/user.schema.json": `{"type": "object", "properties": {"id": {"type": "integer"}}}`,
		"schemas/_components/github/v2/user.schema.json": `{"type": "object", "properties": {"id": {"type": "string"}}}`,
	}

	It("follows the refs of two files into different component folders", func() {
		files := map[string]string{
			"schemas/pulls/upstream.v1.schema.json": `{"type": "object", "properties": {"user": {"$ref": "../_components/github/v1/user.schema.json"}}}`,
			"schemas/pulls/upstream.v2.schema.json": `{"type": "object", "properties": {"user": {"$ref": "../_components/github/v2/user.schema.json"}}}`,
		}
		for k, v := range components {
			files[k] = v
		}
		root := testtree.Tree(files)
		d, err := schemadiff.Files(filepath.Join(root, "schemas/pulls/upstream.v1.schema.json"), filepath.Join(root, "schemas/pulls/upstream.v2.schema.json"))
		Expect(err).NotTo(HaveOccurred())
		Expect(d.Comparisons).To(HaveLen(1))
		// The same component in another version's folder is no move: only
		// the real change behind it is reported.
		changes := d.Comparisons[0].Changes
		Expect(changes).To(HaveLen(1))
		Expect(changes[0].Rule).To(Equal(schemadiff.RuleTypeChanged))
		Expect(changes[0].Level).To(Equal(reports.Breaking))
		Expect(changes[0].Instance).To(Equal("/user/id"))
		Expect(changes[0].NewPointer).To(Equal("/properties/user/$ref/properties/id/type"))
	})

	It("reports a $ref moved to another component, or to another API's folder", func() {
		files := map[string]string{
			"schemas/pulls/upstream.v1.schema.json":           `{"type": "object", "properties": {"user": {"$ref": "../_components/github/v1/user.schema.json"}, "owner": {"$ref": "../_components/github/v1/user.schema.json"}}}`,
			"schemas/pulls/upstream.v2.schema.json":           `{"type": "object", "properties": {"user": {"$ref": "../_components/github/v1/owner.schema.json"}, "owner": {"$ref": "../_components/gitlab/v1/user.schema.json"}}}`,
			"schemas/_components/github/v1/user.schema.json":  `{"type": "object"}`,
			"schemas/_components/github/v1/owner.schema.json": `{"type": "object"}`,
			"schemas/_components/gitlab/v1/user.schema.json":  `{"type": "object"}`,
		}
		root := testtree.Tree(files)
		d, err := schemadiff.Files(filepath.Join(root, "schemas/pulls/upstream.v1.schema.json"), filepath.Join(root, "schemas/pulls/upstream.v2.schema.json"))
		Expect(err).NotTo(HaveOccurred())
		changes := d.Comparisons[0].Changes
		Expect(changes).To(HaveLen(2))
		for _, c := range changes {
			Expect(c.Rule).To(Equal(schemadiff.RuleRefTargetChanged))
		}
	})

	It("compares the upstream versions of a contract whose schemas ref components", func() {
		files := map[string]string{
			"schemas/pulls/contract.yaml": `tool: pulls
version: "1"
agent_schema: agent.schema.json
upstream_versions:
  v1:
    schema: upstream.v1.schema.json
    projection:
      id: /user/id
  v2:
    schema: upstream.v2.schema.json
    projection:
      id: /user/id
`,
			"schemas/pulls/agent.schema.json":       `{"type": "object", "additionalProperties": false, "properties": {"id": {}}}`,
			"schemas/pulls/upstream.v1.schema.json": `{"type": "object", "properties": {"user": {"$ref": "../_components/github/v1/user.schema.json"}}}`,
			"schemas/pulls/upstream.v2.schema.json": `{"type": "object", "properties": {"user": {"$ref": "../_components/github/v2/user.schema.json"}}}`,
		}
		for k, v := range components {
			files[k] = v
		}
		root := testtree.Tree(files)
		d, err := schemadiff.UpstreamVersions(filepath.Join(root, "schemas"), "pulls", "v1", "v2", gate.Options{})
		Expect(err).NotTo(HaveOccurred())
		changes := d.Comparisons[0].Changes
		Expect(changes).To(HaveLen(1))
		Expect(changes[0].Rule).To(Equal(schemadiff.RuleTypeChanged))
		Expect(changes[0].Instance).To(Equal("/user/id"))
	})

	It("refuses a component ref that leaves the components folder", func() {
		root := testtree.Tree(map[string]string{
			"schemas/pulls/old.json": `{"type": "object"}`,
			"schemas/pulls/new.json": `{"$ref": "../_components/../other/x.json"}`,
			"schemas/other/x.json":   `{"type": "object"}`,
		})
		_, err := schemadiff.Files(filepath.Join(root, "schemas/pulls/old.json"), filepath.Join(root, "schemas/pulls/new.json"))
		var ce *gate.ConfigError
		Expect(errors.As(err, &ce)).To(BeTrue(), "%v", err)
		Expect(errors.Is(err, gate.ErrOutsideContract)).To(BeTrue(), "%v", err)
	})
})
