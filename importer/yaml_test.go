package importer_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/importer"
)

var _ = Describe("a YAML description", func() {
	write := func(text string) string {
		p := filepath.Join(GinkgoT().TempDir(), "api.yaml")
		Expect(os.WriteFile(p, []byte(text), 0o644)).To(Succeed())
		return p
	}

	It("is read with unquoted status keys, anchors and aliases", func() {
		p := write(`openapi: 3.0.3
info: {title: T, version: "2"}
paths:
  /a:
    get:
      operationId: getA
      responses:
        200:
          description: ok
          content:
            application/json:
              schema: &item {type: object, properties: {n: {type: integer, format: int32}, when: {type: string, format: date-time}}}
              example: {n: 1, when: 2025-06-01T12:00:00Z}
  /b:
    get:
      operationId: getB
      responses:
        200: {description: ok, content: {application/json: {schema: *item}}}
`)
		d, err := importer.ImportOpenAPI(context.Background(), importer.OpenAPIOptions{Spec: p, Operation: "getA", Tool: "a"})
		Expect(err).NotTo(HaveOccurred())
		Expect(jsonOf(d.Version.Schema["properties"])).To(MatchJSON(`{"n": {"type": "integer", "minimum": -2147483648, "maximum": 2147483647}, "when": {"type": "string", "format": "date-time"}}`))
		Expect(d.Examples).To(HaveLen(1))
		Expect(string(d.Examples[0].Body)).To(ContainSubstring(`"when": "2025-06-01T12:00:00Z"`))
	})

	It("refuses a billion laughs without expanding it, and a YAML file past its size limit", func() {
		var b strings.Builder
		b.WriteString("openapi: 3.0.3\ninfo: {title: T, version: '1'}\nx-a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
		for i := 1; i <= 9; i++ {
			b.WriteString("x-a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
			for j := 0; j < 10; j++ {
				if j > 0 {
					b.WriteString(", ")
				}
				b.WriteString("*a" + string(rune('0'+i-1)))
			}
			b.WriteString("]\n")
		}
		b.WriteString("paths: {/a: {get: {operationId: getA, responses: {'200': {description: ok, content: {application/json: {schema: {type: string}}}}}}}}\n")
		_, err := importer.ImportOpenAPI(context.Background(), importer.OpenAPIOptions{Spec: write(b.String()), Operation: "getA", Tool: "a"})
		Expect(err).To(MatchError(importer.ErrDescription))

		big := write("openapi: 3.0.3\n# " + strings.Repeat("x", importer.MaxYAMLDescription) + "\n")
		_, err = importer.ImportOpenAPI(context.Background(), importer.OpenAPIOptions{Spec: big, Operation: "getA", Tool: "a"})
		Expect(err).To(MatchError(ContainSubstring("convert it to JSON")))
	})
})
