package gate_test

import (
	"context"
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
		c, err := gate.LoadDir(dir, gate.Options{})
		Expect(err).NotTo(HaveOccurred())
		check := func(body string) *gate.Verdict {
			v, err := c.Check(context.Background(), gate.Response{ContentType: "application/json", Body: strings.NewReader(body)}, gate.Call{Request: semantic.Request{ID: "r1"}})
			Expect(err).NotTo(HaveOccurred())
			return v
		}
		Expect(check(`{"id":"id-7"}`).Admitted).To(BeTrue())
		Expect(check(`{"id":"x-7"}`).Reason).To(Equal("schema.pattern"))
	})
})
