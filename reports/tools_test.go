package reports_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/reports"
)

var _ = Describe("tools listing (airlock tools --format json)", func() {
	It("writes JSON that validates against the published schema, schemas as sent", func() {
		t := &reports.Tools{Server: "mcp stdio: node server.js", Tools: []reports.Tool{
			{Name: "weather", Title: "Weather", Description: hostile,
				InputSchema:  json.RawMessage(`{"type":"object","properties":{"z":{},"a":{}}}`),
				OutputSchema: json.RawMessage(`{"type":"object","properties":{"t":{"type":"number"}}}`)},
			{Name: "huge", Description: "", Omitted: map[string]int{"inputSchema": 300000}},
		}}
		var buf bytes.Buffer
		Expect(reports.WriteToolsJSON(&buf, t)).To(Succeed())
		validates(reports.ToolsSchema(), buf.Bytes())
		Expect(buf.String()).To(ContainSubstring(`\u001b[31m`), "control characters JSON-escaped")
		Expect(strings.Index(buf.String(), `"z"`)).To(BeNumerically("<", strings.Index(buf.String(), `"a"`)), "member order kept")
		Expect(t.Tools[1].InputSchema).To(BeNil(), "the caller's tools are not changed")
		var doc struct {
			Tools []map[string]any `json:"tools"`
		}
		Expect(json.Unmarshal(buf.Bytes(), &doc)).To(Succeed())
		Expect(doc.Tools[1]).To(HaveKeyWithValue("inputSchema", BeNil()))
		Expect(doc.Tools[1]).To(HaveKeyWithValue("outputSchema", BeNil()))
	})

	It("writes valid JSON for a server without tools", func() {
		var buf bytes.Buffer
		Expect(reports.WriteToolsJSON(&buf, &reports.Tools{Server: "mcp http://x"})).To(Succeed())
		validates(reports.ToolsSchema(), buf.Bytes())
		Expect(buf.String()).To(ContainSubstring(`"tools": []`))
	})

	It("publishes the same schema as schemas/tools.schema.json", func() {
		b, err := os.ReadFile("../schemas/tools.schema.json")
		Expect(err).NotTo(HaveOccurred())
		Expect(reports.ToolsSchema()).To(Equal(b), "refresh it with: airlock schema tools > schemas/tools.schema.json")
	})
})
