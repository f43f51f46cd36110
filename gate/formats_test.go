package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/manifest"
	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/semantic"
)

// The author contract: a commit author as forges send it, with a format on
// every string the format policy specs need, and a projection of all of it.
const authorUpstream = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["id", "email"],
  "properties": {
    "id": {"type": "string"},
    "email": {"type": "string", "format": "email"},
    "homepage": {"type": "string", "format": "uri"},
    "seen": {"type": "string", "format": "date-time"},
    "n": {"type": "number"},
    "hidden": {"type": "number"},
    "items": {"type": "array", "items": {"type": "object", "additionalProperties": false,
      "properties": {"email": {"type": "string", "format": "email"}, "n": {"type": "number"}, "deep": {}}}}
  }
}`

const authorAgent = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["id", "email"],
  "properties": {
    "id": {"type": "string"},
    "email": {"type": "string", "format": "email"},
    "homepage": {"type": "string", "format": "uri"},
    "seen": {"type": "string"},
    "n": {"type": "number"},
    "item_emails": {"type": "array"},
    "item_ns": {"type": "array"},
    "item_deep": {"type": "array"}
  }
}`

// loadAuthor loads the author contract with formatsLine ("" for none) in
// its manifest.
func loadAuthor(formatsLine string) (*gate.Contract, error) {
	m := "tool: author\nversion: \"1\"\nagent_schema: agent.schema.json\n" + formatsLine + `
upstream_versions:
  v1:
    schema: upstream.schema.json
    projection:
      id: /id
      email: /email
      homepage: /homepage
      seen: /seen
      n: /n
      item_emails: /items/*/email
      item_ns: /items/*/n
      item_deep: /items/*/deep
`
	dir := writeContract(GinkgoT().TempDir(), "author", map[string]string{
		"contract.yaml": m, "upstream.schema.json": authorUpstream, "agent.schema.json": authorAgent,
	})
	return gate.LoadDir(dir, gate.Options{})
}

func mustLoadAuthor(formatsLine string) *gate.Contract {
	GinkgoHelper()
	c, err := loadAuthor(formatsLine)
	Expect(err).NotTo(HaveOccurred())
	return c
}

func checkAuthor(c *gate.Contract, body string) *gate.Verdict {
	GinkgoHelper()
	v, err := c.Check(context.Background(), gate.Response{Status: 200, ContentType: "application/json", Body: strings.NewReader(body)},
		gate.Call{Request: semantic.Request{ID: "req-1"}})
	Expect(err).NotTo(HaveOccurred())
	return v
}

// auditWarnings decodes the warnings of the audit record's JSON line.
func auditWarnings(v *gate.Verdict) []gate.Warning {
	GinkgoHelper()
	var rec struct {
		Warnings []gate.Warning `json:"warnings"`
	}
	Expect(json.Unmarshal(v.Audit.JSON(), &rec)).To(Succeed())
	return rec.Warnings
}

const botEmail = "12345+ci[bot]@users.noreply.example.com"

var _ = Describe("the format policy", func() {
	botBody := `{"id":"a1","email":"` + botEmail + `"}`
	botOutput := `{"tool":"author","request_id":"req-1","outcome":"success","data":{"email":"` + botEmail + `","id":"a1"}}`

	It("refuses a bot's email by default, as before, and says the policy that judged it", func() {
		v := checkAuthor(mustLoadAuthor(""), botBody)
		Expect(v.Admitted).To(BeFalse())
		Expect(v.Reason).To(Equal("schema.format"))
		Expect(v.Audit.KeywordLocation).To(Equal("upstream.schema.json#/properties/email/format"))
		Expect(v.Audit.InstanceLocation).To(Equal("/email"))
		Expect(v.Audit.Message).To(Equal(`'` + botEmail + `' is not valid email: invalid character '['; format policy email: assert`))
		Expect(v.Warnings).To(BeEmpty())
		Expect(string(v.Audit.JSON())).NotTo(ContainSubstring("warnings"))

		explicit := checkAuthor(mustLoadAuthor("formats: {default: assert, email: assert}"), botBody)
		Expect(explicit.Reason).To(Equal(v.Reason))
		Expect(explicit.Audit.Message).To(Equal(v.Audit.Message))
	})

	It("with email: annotate, admits a bot's email and records the warning in the verdict and the audit record, never in the output", func() {
		v := checkAuthor(mustLoadAuthor("formats: {email: annotate}"), botBody)
		expectAdmitted(v, botOutput)
		want := []gate.Warning{{
			Code:             "format.annotated",
			InstanceLocation: "/email",
			Message:          `'` + botEmail + `' is not valid email: invalid character '['; format policy email: annotate, so admitted (upstream.schema.json#/properties/email/format)`,
		}}
		Expect(v.Warnings).To(Equal(want))
		Expect(v.Audit.Warnings).To(Equal(want))
		Expect(auditWarnings(v)).To(Equal(want))
		Expect(string(v.Output)).NotTo(ContainSubstring("format"))
		Expect(string(v.Output)).NotTo(ContainSubstring("warning"))
	})

	It("with email: annotate, a valid email gets no warning", func() {
		v := checkAuthor(mustLoadAuthor("formats: {email: annotate}"), `{"id":"a1","email":"ci@example.com"}`)
		Expect(v.Admitted).To(BeTrue())
		Expect(v.Warnings).To(BeEmpty())
	})

	It("with email: mailbox, admits a bot's email with no warning", func() {
		v := checkAuthor(mustLoadAuthor("formats: {email: mailbox}"), botBody)
		expectAdmitted(v, botOutput)
		Expect(v.Warnings).To(BeEmpty())
		Expect(v.Audit.Warnings).To(BeEmpty())
	})

	It("with email: mailbox, refuses what the mailbox checker refuses, naming the checker", func() {
		v := checkAuthor(mustLoadAuthor("formats: {email: mailbox}"), `{"id":"a1","email":"\"john doe\"@example.com"}`)
		Expect(v.Reason).To(Equal("schema.format"))
		Expect(v.Audit.Message).To(HaveSuffix("; format policy email: mailbox"))
		Expect(v.Audit.Message).To(ContainSubstring(`invalid character '"' in the local part`))
	})

	It("with email: rfc5322, refuses a bot's email and admits a quoted local part", func() {
		c := mustLoadAuthor("formats: {email: rfc5322}")
		v := checkAuthor(c, botBody)
		Expect(v.Reason).To(Equal("schema.format"))
		Expect(v.Audit.Message).To(HaveSuffix("; format policy email: rfc5322"))
		Expect(checkAuthor(c, `{"id":"a1","email":"\"john doe\"@example.com"}`).Admitted).To(BeTrue())
	})

	DescribeTable("an annotated uri admits what real APIs send as a homepage, with a warning",
		func(homepage, message string) {
			c := mustLoadAuthor("formats: {uri: annotate}")
			body := `{"id":"a1","email":"a@example.com","homepage":"` + homepage + `"}`
			v := checkAuthor(c, body)
			Expect(v.Admitted).To(BeTrue(), "%s", v.Audit.JSON())
			Expect(v.Warnings).To(Equal([]gate.Warning{{Code: "format.annotated", InstanceLocation: "/homepage", Message: message}}))

			Expect(checkAuthor(mustLoadAuthor(""), body).Reason).To(Equal("schema.format"))
			lenient := checkAuthor(mustLoadAuthor("formats: {uri: uri-reference}"), body)
			Expect(lenient.Admitted).To(BeTrue())
			Expect(lenient.Warnings).To(BeEmpty())
		},
		Entry("an empty string", "",
			`'' is not valid uri: relative url; format policy uri: annotate, so admitted (upstream.schema.json#/properties/homepage/format)`),
		Entry("a host without a scheme", "www.example.com",
			`'www.example.com' is not valid uri: relative url; format policy uri: annotate, so admitted (upstream.schema.json#/properties/homepage/format)`),
	)

	It("default: annotate annotates every format the policy does not name", func() {
		c := mustLoadAuthor("formats: {default: annotate, email: assert}")
		v := checkAuthor(c, `{"id":"a1","email":"a@example.com","homepage":"www.example.com","seen":"next tuesday"}`)
		Expect(v.Admitted).To(BeTrue())
		Expect(v.Warnings).To(HaveLen(2))
		Expect(v.Warnings[0].InstanceLocation).To(Equal("/homepage"))
		Expect(v.Warnings[1].InstanceLocation).To(Equal("/seen"))
		Expect(v.Warnings[1].Message).To(ContainSubstring("format policy date-time: annotate"))
		Expect(checkAuthor(c, botBody).Reason).To(Equal("schema.format"))
	})

	It("warns about every failing location in order, array indexes by number, at most gate.MaxWarnings", func() {
		items := make([]string, 20)
		for i := range items {
			items[i] = fmt.Sprintf(`{"email":"bot%d[bot]@example.com"}`, i)
		}
		v := checkAuthor(mustLoadAuthor("formats: {email: annotate}"), `{"id":"a1","email":"`+botEmail+`","items":[`+strings.Join(items, ",")+`]}`)
		Expect(v.Admitted).To(BeTrue())
		Expect(v.Warnings).To(HaveLen(gate.MaxWarnings))
		Expect(v.Audit.Warnings).To(HaveLen(gate.MaxWarnings))
		var locs []string
		for _, w := range v.Warnings {
			Expect(w.Code).To(Equal("format.annotated"))
			locs = append(locs, w.InstanceLocation)
		}
		want := []string{"/email"}
		for i := range gate.MaxWarnings - 1 {
			want = append(want, fmt.Sprintf("/items/%d/email", i))
		}
		Expect(locs).To(Equal(want))
	})

	It("still warns when an annotated format only decides which subschema applies", func() {
		dir := writeContract(GinkgoT().TempDir(), "cond", map[string]string{
			"contract.yaml":        "tool: cond\nversion: \"1\"\nagent_schema: agent.schema.json\nformats: {email: annotate}\nupstream_versions:\n  v1: {schema: upstream.schema.json, projection: {v: /v}}\n",
			"upstream.schema.json": `{"type": "object", "properties": {"v": {"if": {"format": "email"}, "then": {"maxLength": 100}, "else": {"const": "x"}}}}`,
			"agent.schema.json":    `{"type": "object", "additionalProperties": false, "properties": {"v": {}}}`,
		})
		c, err := gate.LoadDir(dir, gate.Options{})
		Expect(err).NotTo(HaveOccurred())
		v, err := c.Check(context.Background(), gate.Response{Status: 200, ContentType: "application/json", Body: strings.NewReader(`{"v":"not an address"}`)},
			gate.Call{Request: semantic.Request{ID: "req-1"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(v.Admitted).To(BeTrue())
		Expect(v.Warnings).To(HaveLen(1))
		Expect(v.Warnings[0].Code).To(Equal("format.annotated"))
		Expect(v.Warnings[0].InstanceLocation).To(Equal("/v"))
		Expect(v.Warnings[0].Message).To(HavePrefix("admitted only because the formats [email] are annotated: with them asserted, value must be 'x'"))
	})

	It("gives every concurrent check its own warnings", func() {
		c := mustLoadAuthor("formats: {email: annotate}")
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for g := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 50 {
					bad := (g+i)%2 == 0
					email := fmt.Sprintf("u%d-%d@example.com", g, i)
					if bad {
						email = fmt.Sprintf("u%d-%d[bot]@example.com", g, i)
					}
					v, err := c.Check(context.Background(), gate.Response{Status: 200, ContentType: "application/json",
						Body: strings.NewReader(`{"id":"a1","email":"` + email + `"}`)}, gate.Call{Request: semantic.Request{ID: "req-1"}})
					switch {
					case err != nil:
						errs <- err
					case !v.Admitted:
						errs <- fmt.Errorf("%s refused: %s", email, v.Audit.JSON())
					case bad && (len(v.Warnings) != 1 || !strings.Contains(v.Warnings[0].Message, "'"+email+"'")):
						errs <- fmt.Errorf("%s: warnings %v", email, v.Warnings)
					case !bad && len(v.Warnings) != 0:
						errs <- fmt.Errorf("%s: warnings %v", email, v.Warnings)
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			Fail(err.Error())
		}
	})

	DescribeTable("a policy the gate cannot apply is a configuration error with file and line",
		func(line, key, msg string) {
			_, err := loadAuthor(line)
			var ce *gate.ConfigError
			Expect(errors.As(err, &ce)).To(BeTrue(), "%v", err)
			Expect(ce.File).To(HaveSuffix("author/contract.yaml"))
			Expect(ce.Line).To(Equal(4))
			Expect(ce.Key).To(Equal(key))
			Expect(ce.Msg).To(ContainSubstring(msg))
		},
		Entry("a misspelt format", "formats: {emial: annotate}", "/formats/emial", "'emial' not allowed"),
		Entry("an unknown policy", "formats: {email: lenient}", "/formats/email", "'assert', 'annotate', 'mailbox', 'rfc5322'"),
		Entry("another format's checker", "formats: {uri: mailbox}", "/formats/uri", "'assert', 'annotate', 'uri-reference'"),
		Entry("a checker as the default", "formats: {default: mailbox}", "/formats/default", "'assert', 'annotate'"),
		Entry("regex, which is always asserted", "formats: {regex: annotate}", "/formats/regex", "'regex' not allowed"),
		Entry("not a map", "formats: annotate", "/formats", "object"),
	)

	It("the published manifest schema offers exactly the policy formats and checkers", func() {
		var doc struct {
			Properties struct {
				Formats struct {
					Properties map[string]struct {
						Ref  string   `json:"$ref"`
						Enum []string `json:"enum"`
					} `json:"properties"`
				} `json:"formats"`
			} `json:"properties"`
		}
		Expect(json.Unmarshal(manifest.SchemaJSON(), &doc)).To(Succeed())
		props := doc.Properties.Formats.Properties
		Expect(props).To(HaveKey("default"))
		Expect(props["default"].Ref).To(Equal("#/$defs/formatPolicy"))
		var names []string
		for name := range props {
			if name != "default" {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		Expect(names).To(Equal(schema.PolicyFormats()))
		for _, f := range schema.PolicyFormats() {
			want := []string{"assert", "annotate"}
			for _, ck := range schema.Checkers() {
				if ck.Format == f {
					want = append(want, ck.Name)
				}
			}
			if len(want) == 2 {
				Expect(props[f].Ref).To(Equal("#/$defs/formatPolicy"), f)
			} else {
				Expect(props[f].Enum).To(Equal(want), f)
			}
		}
	})
})

var _ = Describe("numbers beyond I-JSON's exact range", func() {
	c := func() *gate.Contract { return mustLoadAuthor("") }

	DescribeTable("a projected number",
		func(token string, warn bool) {
			v := checkAuthor(c(), `{"id":"a1","email":"a@example.com","n":`+token+`}`)
			Expect(v.Admitted).To(BeTrue(), "%s", v.Audit.JSON())
			Expect(string(v.Output)).To(ContainSubstring(`"n":` + token + `}`))
			if !warn {
				Expect(v.Warnings).To(BeEmpty())
				return
			}
			want := []gate.Warning{{Code: "number.inexact", InstanceLocation: "/n", Message: "the integer " + token +
				", copied to the agent's data/n, is outside I-JSON's exact range [-(2^53)+1, 2^53-1] (RFC 7493 §2.2): a consumer that reads numbers as IEEE 754 doubles will round it"}}
			Expect(v.Warnings).To(Equal(want))
			Expect(auditWarnings(v)).To(Equal(want))
			Expect(string(v.Output)).NotTo(ContainSubstring("I-JSON"))
		},
		Entry("2^53+1", "9007199254740993", true),
		Entry("2^53 (also what 2^53+1 rounds to)", "9007199254740992", true),
		Entry("2^53-1, the largest exact integer", "9007199254740991", false),
		Entry("-(2^53)+1", "-9007199254740991", false),
		Entry("-(2^53)-1", "-9007199254740993", true),
		Entry("a 40-digit integer", strings.Repeat("9", 40), true),
		Entry("1e16", "1e16", true),
		Entry("9.007199254740993E15", "9.007199254740993E15", true),
		Entry("9.007199254740991e15", "9.007199254740991e15", false),
		Entry("2^53+1 spelt with a fraction of zeros", "9007199254740993.000", true),
		Entry("a fraction beyond 2^53", "12345678901234567.5", false),
		Entry("1e300, an integer in value", "1e300", true),
		Entry("a small fraction", "0.1", false),
		Entry("zero with a huge exponent", "0e400", false),
		Entry("a huge integer with leading zeros in the exponent", "1e+0016", true),
		Entry("1e-5", "1e-5", false),
		Entry("a small integer", "42", false),
	)

	It("warns only where the agent output copies the number, by its location in the body", func() {
		locations := func(v *gate.Verdict) []string {
			GinkgoHelper()
			Expect(v.Admitted).To(BeTrue(), "%s", v.Audit.JSON())
			var locs []string
			for _, w := range v.Warnings {
				Expect(w.Code).To(Equal("number.inexact"))
				locs = append(locs, w.InstanceLocation)
			}
			return locs
		}
		v := checkAuthor(c(), `{"id":"a1","email":"a@example.com","hidden":9007199254740993,`+
			`"items":[{"n":1,"deep":null},{"n":9007199254740993,"deep":{"b":[18014398509481984],"a":-9007199254740993}}]}`)
		Expect(locations(v)).To(Equal([]string{"/items/1/deep/a", "/items/1/deep/b/0", "/items/1/n"}))
		Expect(v.Warnings[0].Message).To(ContainSubstring("copied to the agent's data/item_deep"))

		// An element without "deep" leaves item_deep out of the output, and
		// its numbers with it.
		v = checkAuthor(c(), `{"id":"a1","email":"a@example.com",`+
			`"items":[{"n":1},{"n":9007199254740993,"deep":{"b":[18014398509481984],"a":-9007199254740993}}]}`)
		Expect(string(v.Output)).NotTo(ContainSubstring("item_deep"))
		Expect(locations(v)).To(Equal([]string{"/items/1/n"}))
	})

	It("says nothing when the response is refused", func() {
		v := checkAuthor(c(), `{"id":"a1","email":"bad","n":9007199254740993}`)
		Expect(v.Admitted).To(BeFalse())
		Expect(v.Warnings).To(BeEmpty())
	})
})
