package gate_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/semantic"
)

// The orders contract exercises the rules that fit real data: an integer
// id bound to typed request context, "*" over every item, a count and a
// CEL expression.
const ordersManifest = `tool: orders
version: "1.0.0"
agent_schema: agent.schema.json
upstream_versions:
  v1:
    schema: upstream.schema.json
    projection: {customer: /customer_id, skus: /items/*/sku}
    rules:
      - name: customer_match
        context: {pointer: /customer_id, key: customer}
      - name: items_for_customer
        context: {pointer: /items/*/customer_id, key: customer}
      - name: all_items
        count: {pointer: /items, equals_pointer: /total}
      - name: page_size
        count: {pointer: /items, key: page_size}
      - name: quantities
        cel: {expr: 'value.items.all(i, i.qty > 0 && i.qty <= 100) && request.id.startsWith("req-")'}
`

const ordersUpstream = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "additionalProperties": false,
  "required": ["customer_id", "items", "total"],
  "properties": {
    "customer_id": {"type": "integer"},
    "total": {"type": "integer", "minimum": 0},
    "items": {"type": "array", "maxItems": 100, "items": {
      "type": "object", "additionalProperties": false, "required": ["sku", "qty", "customer_id"],
      "properties": {"sku": {"type": "string", "maxLength": 16}, "qty": {"type": "integer"}, "customer_id": {"type": "integer"}}
    }}
  }
}`

const ordersAgent = `{
  "type": "object", "additionalProperties": false, "required": ["customer", "skus"],
  "properties": {"customer": {"type": "integer"}, "skus": {"type": "array", "items": {"type": "string"}}}
}`

func ordersFiles(manifest string) map[string]string {
	return map[string]string{"contract.yaml": manifest, "upstream.schema.json": ordersUpstream, "agent.schema.json": ordersAgent}
}

// ordersBody is a response for customer 42 with one item per quantity.
func ordersBody(customer, total int, qtys ...int) string {
	var items []string
	for i, q := range qtys {
		items = append(items, fmt.Sprintf(`{"sku":"S-%d","qty":%d,"customer_id":%d}`, i, q, customer))
	}
	return fmt.Sprintf(`{"customer_id":%d,"total":%d,"items":[%s]}`, customer, total, strings.Join(items, ","))
}

var _ = Describe("rules that fit real data", func() {
	var c *gate.Contract
	BeforeEach(func() {
		var err error
		c, err = gate.LoadDir(writeContract(GinkgoT().TempDir(), "orders", ordersFiles(ordersManifest)), gate.Options{})
		Expect(err).NotTo(HaveOccurred())
	})
	call := func(ctx map[string]any) gate.Call {
		return gate.Call{Request: semantic.Request{ID: probeReqID, Context: ctx}, Now: probeNow}
	}
	typed := map[string]any{"customer": json.Number("42"), "page_size": 2}

	It("binds an integer id to a context number", func() {
		v := runCheck(c, jsonResp(ordersBody(42, 2, 1, 5)), call(typed))
		expectAdmitted(v, `{"tool":"orders","request_id":"req-00000001","outcome":"success","data":{"customer":42,"skus":["S-0","S-1"]}}`)
	})

	It("refuses the string \"42\" for the integer 42", func() {
		v := runCheck(c, jsonResp(ordersBody(42, 2, 1, 5)), call(map[string]any{"customer": "42", "page_size": 2}))
		expectRefused(v, "orders", "semantic.customer_match", gate.InvalidResponse, false)
		Expect(v.Audit.Message).To(ContainSubstring(`the number 42 differs from the requested customer, the string "42"`))
	})

	It("refuses another customer's number", func() {
		v := runCheck(c, jsonResp(ordersBody(43, 2, 1, 5)), call(typed))
		expectRefused(v, "orders", "semantic.customer_match", gate.InvalidResponse, false)
		Expect(v.Audit.InstanceLocation).To(Equal("/customer_id"))
	})

	It(`checks every element under "*" and names the failing one`, func() {
		body := `{"customer_id":42,"total":2,"items":[{"sku":"a","qty":1,"customer_id":42},{"sku":"b","qty":1,"customer_id":7}]}`
		v := runCheck(c, jsonResp(body), call(typed))
		expectRefused(v, "orders", "semantic.items_for_customer", gate.InvalidResponse, false)
		Expect(v.Audit.InstanceLocation).To(Equal("/items/1/customer_id"))
	})

	It(`passes "*" over an empty array (count and CEL then judge it)`, func() {
		v := runCheck(c, jsonResp(ordersBody(42, 0)), call(map[string]any{"customer": 42, "page_size": 0}))
		expectAdmitted(v, `{"tool":"orders","request_id":"req-00000001","outcome":"success","data":{"customer":42,"skus":[]}}`)
	})

	It("refuses a page shorter than the total it reports", func() {
		v := runCheck(c, jsonResp(ordersBody(42, 3, 1, 5)), call(typed))
		expectRefused(v, "orders", "semantic.all_items", gate.InvalidResponse, false)
		Expect(v.Audit.Message).To(Equal("the array has 2 elements; /total says the number 3"))
		Expect(v.Audit.InstanceLocation).To(Equal("/items"))
	})

	It("refuses a page whose length differs from the requested page size", func() {
		v := runCheck(c, jsonResp(ordersBody(42, 3, 1, 5, 7)), call(typed))
		expectRefused(v, "orders", "semantic.page_size", gate.InvalidResponse, false)
	})

	It("refuses what the CEL expression says is false", func() {
		v := runCheck(c, jsonResp(ordersBody(42, 2, 1, 500)), call(typed))
		expectRefused(v, "orders", "semantic.quantities", gate.InvalidResponse, false)
		Expect(v.Audit.Message).To(HavePrefix("the CEL expression is false: value.items.all("))
	})

	It("gives CEL the request", func() {
		ctx := call(typed)
		ctx.Request.ID = "other-1"
		v, err := c.Check(GinkgoT().Context(), jsonResp(ordersBody(42, 2, 1, 5)), ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(v.Reason).To(Equal("semantic.quantities"))
	})

	DescribeTable("refuses a rule that cannot work when the contract loads, at its key and line",
		func(rule, key, msg string) {
			manifest := strings.Replace(ordersManifest, "      - name: customer_match\n", rule+"      - name: customer_match\n", 1)
			_, err := gate.LoadDir(writeContract(GinkgoT().TempDir(), "orders", ordersFiles(manifest)), gate.Options{})
			var ce *gate.ConfigError
			Expect(errors.As(err, &ce)).To(BeTrue(), "%v", err)
			Expect(ce.Key).To(Equal(key))
			Expect(ce.Msg).To(ContainSubstring(msg))
			Expect(ce.Line).To(BeNumerically(">=", lineStarting(manifest, "      - name: bad")))
			Expect(ce.Line).To(BeNumerically("<=", lineStarting(manifest, "      - name: bad")+1))
		},
		Entry("a CEL syntax error", "      - name: bad\n        cel: {expr: 'value.items.all(i,'}\n",
			"/upstream_versions/v1/rules/0/cel/expr", "CEL: "),
		Entry("a CEL unknown variable", "      - name: bad\n        cel: {expr: 'items.size() > 0'}\n",
			"/upstream_versions/v1/rules/0/cel/expr", "undeclared reference to 'items'"),
		Entry("a CEL expression that is not a bool", "      - name: bad\n        cel: {expr: '1 + 1'}\n",
			"/upstream_versions/v1/rules/0/cel/expr", "a rule needs a bool"),
		Entry("a count with both sources", "      - name: bad\n        count: {pointer: /items, equals_pointer: /total, key: k}\n",
			"/upstream_versions/v1/rules/0/count", "exactly one of equals_pointer and key"),
		Entry("a count with a *", "      - name: bad\n        count: {pointer: /items/*/parts, key: k}\n",
			"/upstream_versions/v1/rules/0/count/pointer", `leave out the "*"`),
		Entry("a count with neither source", "      - name: bad\n        count: {pointer: /items}\n",
			"/upstream_versions/v1/rules/0/count", "exactly one of equals_pointer and key"),
	)
})
