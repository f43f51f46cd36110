package gate_test

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/airlockdev/airlock/internal/strictjson"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/semantic"
)

// The hostile contract allows 16 MiB bodies so that the parse limits, not
// the byte limit, meet the attacks that fit in it.
const hostileManifest = `tool: hostile
version: "1"
agent_schema: agent.schema.json
limits:
  max_bytes: 16777216
upstream_versions:
  v1:
    schema: upstream.schema.json
    projection:
      n: /n
`

const (
	hostileUpstream = `{"type":"object","properties":{"n":{"type":"number","minimum":0,"multipleOf":0.5},"s":{"type":"string"}}}`
	hostileAgent    = `{"type":"object","additionalProperties":false,"properties":{"n":{"type":"number"}}}`
	gib             = int64(1) << 30
)

// patternReader streams n bytes of a repeated pattern without holding them.
type patternReader struct {
	pattern []byte
	n       int64 // bytes left
	off     int
}

func (r *patternReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.n {
		p = p[:r.n]
	}
	for i := 0; i < len(p); {
		n := copy(p[i:], r.pattern[r.off:])
		i += n
		r.off = (r.off + n) % len(r.pattern)
	}
	r.n -= int64(len(p))
	return len(p), nil
}

// gzipBomb streams a single gzip member of size zero bytes, compressed on
// the fly as the reader pulls; stop ends the producer and reports how many
// uncompressed bytes it fed the compressor.
func gzipBomb(size int64) (body *countingReader, stop func() int64) {
	pr, pw := io.Pipe()
	done := make(chan int64, 1)
	go func() {
		var fed int64
		defer func() { done <- fed }()
		zw, err := gzip.NewWriterLevel(pw, gzip.BestCompression)
		if err != nil {
			pw.CloseWithError(err)
			return
		}
		zeros := make([]byte, 256<<10)
		for fed < size {
			n, err := zw.Write(zeros[:min(int64(len(zeros)), size-fed)])
			fed += int64(n)
			if err != nil {
				return
			}
		}
		pw.CloseWithError(zw.Close())
	}()
	return &countingReader{r: pr}, func() int64 {
		pr.CloseWithError(errors.New("test done"))
		return <-done
	}
}

// hostileSchema loads the hostile contract with upstream as its schema
// and an agent schema of one string member n.
func hostileSchema(upstream string) *gate.Contract {
	GinkgoHelper()
	dir := writeContract(GinkgoT().TempDir(), "hostile", map[string]string{
		"contract.yaml":        hostileManifest,
		"upstream.schema.json": upstream,
		"agent.schema.json":    `{"type":"object","additionalProperties":false,"properties":{"n":{"type":"string"}}}`,
	})
	c, err := gate.LoadDir(dir, gate.Options{})
	Expect(err).NotTo(HaveOccurred())
	return c
}

var _ = Describe("hostile input", func() {
	var hostile, review *gate.Contract
	BeforeEach(func() {
		dir := writeContract(GinkgoT().TempDir(), "hostile", map[string]string{
			"contract.yaml":        hostileManifest,
			"upstream.schema.json": hostileUpstream,
			"agent.schema.json":    hostileAgent,
		})
		var err error
		hostile, err = gate.LoadDir(dir, gate.Options{})
		Expect(err).NotTo(HaveOccurred())
		review, err = gate.LoadDir("../schemas/review_status", gate.Options{})
		Expect(err).NotTo(HaveOccurred())
	})

	call := gate.Call{Request: semantic.Request{ID: probeReqID, Context: map[string]any{"change_id": "CR-1"}}, Now: probeNow}
	check := func(c *gate.Contract, resp gate.Response) *gate.Verdict { return runCheck(c, resp, call) }

	It("refuses a 1 GiB body after reading max_bytes+1 bytes", func() {
		body := &countingReader{r: &patternReader{pattern: []byte(`[{"a":"0123456789"},`), n: gib}}
		v := check(review, gate.Response{Status: 200, ContentType: "application/json", Body: body})
		expectRefused(v, "review_status", gate.ReasonTooLarge, gate.InvalidResponse, false)
		limit := review.Limits().MaxBytes
		Expect(body.n).To(Equal(limit + 1))
		Expect(v.Audit.Size).To(Equal(limit + 1))
	})

	It("refuses a 1 GiB body against a 16 MiB limit, reading 16 MiB+1", func() {
		body := &countingReader{r: &patternReader{pattern: []byte(" "), n: gib}}
		v := check(hostile, gate.Response{Status: 200, ContentType: "application/json", Body: body})
		expectRefused(v, "hostile", gate.ReasonTooLarge, gate.InvalidResponse, false)
		Expect(body.n).To(Equal(int64(16<<20) + 1))
	})

	DescribeTable("refuses a gzip bomb of 1 GiB of zeros after inflating max_bytes+1 bytes",
		func(which string) {
			c := review
			if which == "hostile" {
				c = hostile
			}
			limit := c.Limits().MaxBytes
			body, stop := gzipBomb(gib)
			v := check(c, gate.Response{Status: 200, ContentType: "application/json", ContentEncoding: "gzip", Body: body})
			fed := stop()
			expectRefused(v, c.Tool(), gate.ReasonTooLarge, gate.InvalidResponse, false)
			Expect(v.Audit.Size).To(Equal(limit+1), "inflated bytes the gate kept")
			Expect(body.n).To(BeNumerically("<", limit/100+64<<10), "compressed bytes the gate read")
			Expect(fed).To(BeNumerically("<", 64<<20), "the bomb was never inflated in full")
		},
		Entry("against review_status (16 KiB)", "review_status"),
		Entry("against a 16 MiB limit", "hostile"),
	)

	It("refuses a gzip bomb spread over many gzip members", func() {
		member := gzipBytes(make([]byte, 1<<20))
		body := &countingReader{r: &patternReader{pattern: member, n: int64(len(member)) * 1024}}
		v := check(review, gate.Response{Status: 200, ContentType: "application/json", ContentEncoding: "gzip", Body: body})
		expectRefused(v, "review_status", gate.ReasonTooLarge, gate.InvalidResponse, false)
		Expect(body.n).To(BeNumerically("<=", 4096+len(member)), "one buffered read past the first member at most")
	})

	DescribeTable("refuses deep nesting with parse.depth",
		func(b string, offset int) {
			v := check(hostile, jsonResp(b))
			expectRefused(v, "hostile", gate.ReasonDepth, gate.InvalidResponse, false)
			Expect(v.Audit.Offset).To(BeNumerically("~", offset, 1), "stops at the first bracket past the cap")
		},
		Entry("100,000 nested arrays", strings.Repeat("[", 100000)+strings.Repeat("]", 100000), gate.DefaultMaxDepth),
		Entry("100,000 unclosed arrays", strings.Repeat("[", 100000), gate.DefaultMaxDepth),
		Entry("100,000 nested objects", strings.Repeat(`{"":`, 100000)+"1"+strings.Repeat("}", 100000), gate.DefaultMaxDepth*4),
		Entry("100,000 mixed", strings.Repeat(`[{"a":`, 50000), gate.DefaultMaxDepth/2*6),
	)

	It("never lets Parse panic on nesting deeper than jsontext's own cap", func() {
		deep := []byte(strings.Repeat("[", 20000) + strings.Repeat("]", 20000))
		_, err := strictjson.Parse(deep, strictjson.Limits{MaxDepth: 1 << 20})
		var pe *strictjson.Error
		Expect(errors.As(err, &pe)).To(BeTrue(), "%v", err)
		Expect(pe.Reason).To(HavePrefix("parse."))
	})

	DescribeTable("refuses huge numbers with parse.number before the validator's minimum sees them",
		func(n string) {
			v := check(hostile, jsonResp(`{"n":`+n+`}`))
			expectRefused(v, "hostile", gate.ReasonNumber, gate.InvalidResponse, false)
			Expect(v.Audit.Offset).To(Equal(int64(5)))
		},
		Entry("a million-digit exponent", "1e"+strings.Repeat("9", 1000000)),
		Entry("a million-digit negative exponent", "1e-"+strings.Repeat("9", 1000000)),
		Entry("a million-digit mantissa", strings.Repeat("7", 1000000)),
		Entry("a short token with a huge exponent", "1e99999999999999999999"),
		Entry("a short token with a huge negative exponent", "1e-99999999999999999999"),
	)

	It("admits a number the validator handles cheaply, with its exact text", func() {
		v := check(hostile, jsonResp(`{"n":1.5e300}`))
		expectAdmitted(v, `{"tool":"hostile","request_id":"req-00000001","outcome":"success","data":{"n":1.5e300}}`)
		v = check(hostile, jsonResp(`{"n":-1}`))
		expectRefused(v, "hostile", "schema.minimum", gate.InvalidResponse, false)
	})

	It("refuses a 10 MiB string with parse.string_too_long", func() {
		body := io.MultiReader(strings.NewReader(`{"s":"`), &patternReader{pattern: []byte("abc"), n: 10 << 20}, strings.NewReader(`"}`))
		v := check(hostile, gate.Response{Status: 200, ContentType: "application/json", Body: body})
		expectRefused(v, "hostile", gate.ReasonStringTooLong, gate.InvalidResponse, false)
		Expect(v.Audit.Size).To(Equal(int64(10<<20 + 8)))
		Expect(v.Audit.Offset).To(Equal(int64(5)))
	})

	It("refuses a 10 MiB string of escapes with parse.string_too_long", func() {
		body := io.MultiReader(strings.NewReader(`{"s":"`), &patternReader{pattern: []byte(`\u0041`), n: 6 * (10 << 20 / 6)}, strings.NewReader(`"}`))
		v := check(hostile, gate.Response{Status: 200, ContentType: "application/json", Body: body})
		expectRefused(v, "hostile", gate.ReasonStringTooLong, gate.InvalidResponse, false)
	})

	It("refuses a 10 MiB member name with parse.string_too_long", func() {
		body := io.MultiReader(strings.NewReader(`{"`), &patternReader{pattern: []byte("k"), n: 10 << 20}, strings.NewReader(`":1}`))
		v := check(hostile, gate.Response{Status: 200, ContentType: "application/json", Body: body})
		expectRefused(v, "hostile", gate.ReasonStringTooLong, gate.InvalidResponse, false)
	})

	It("survives many duplicate-free members and refuses the one duplicate at the end", func() {
		var b strings.Builder
		b.WriteString("{")
		for i := range 50000 {
			b.WriteString(`"k`)
			b.WriteString(strings.Repeat("x", i%7))
			b.WriteString(string(rune('a' + i%26)))
			b.WriteString(strings.Repeat("y", i/182))
			b.WriteString(`":0,`)
		}
		b.WriteString(`"ka":1}`)
		v := check(hostile, jsonResp(b.String()))
		expectRefused(v, "hostile", gate.ReasonDuplicate, gate.InvalidResponse, false)
	})

	// chain is a schema whose member n is d0, where d_i = {key: [{$ref:
	// d_i+1}, {$ref: d_i+1}]} and d24 = {type: string}: walked naively, a
	// value is checked against d24 2^24 times.
	chain := func(key string) *gate.Contract {
		var defs []string
		for i := range 24 {
			defs = append(defs, fmt.Sprintf(`"d%d":{"%s":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, key, i+1, i+1))
		}
		defs = append(defs, `"d24":{"type":"string"}`)
		return hostileSchema(`{"type":"object","properties":{"n":{"$ref":"#/$defs/d0"}},"$defs":{` + strings.Join(defs, ",") + `}}`)
	}

	DescribeTable("answers a schema whose in-place applicators share a subschema in linear time: its verdict on a value is kept",
		func(key string) {
			c := chain(key)
			v := check(c, jsonResp(`{"n":5}`))
			expectRefused(v, "hostile", "schema.type", gate.InvalidResponse, false)
			Expect(v.Audit.KeywordLocation).To(Equal("upstream.schema.json#/$defs/d24/type"))
			Expect(check(c, jsonResp(`{"n":"x"}`)).Admitted).To(BeTrue())
		},
		Entry("anyOf", "anyOf"), Entry("allOf", "allOf"))

	It("stops a schema that applies one subschema to a value along many member paths at its work bound, as a refusal", func() {
		// d_i = allOf [{properties: {n: d_i+1}}, {properties: {n: d_i+1}}]:
		// the two paths to d_i+1 go through a member, where no verdict is
		// kept, so a value 24 members deep is checked 2^24 times.
		var defs []string
		for i := range 24 {
			defs = append(defs, fmt.Sprintf(`"d%d":{"allOf":[{"properties":{"n":{"$ref":"#/$defs/d%d"}}},{"properties":{"n":{"$ref":"#/$defs/d%d"}}}]}`, i, i+1, i+1))
		}
		defs = append(defs, `"d24":{"type":"string"}`)
		c := hostileSchema(`{"type":"object","properties":{"n":{"$ref":"#/$defs/d0"}},"$defs":{` + strings.Join(defs, ",") + `}}`)
		deep := func(leaf string) string {
			return `{"n":` + strings.Repeat(`{"n":`, 24) + leaf + strings.Repeat("}", 25)
		}
		// A value that fails stops at the first failure, down one path.
		expectRefused(check(c, jsonResp(deep("5"))), "hostile", "schema.type", gate.InvalidResponse, false)
		v := check(c, jsonResp(deep(`"x"`)))
		expectRefused(v, "hostile", gate.ReasonWorkLimit, gate.InvalidResponse, false)
		Expect(v.Audit.Message).To(ContainSubstring("work bound"))
		// The bound counts the value's JSON values, not its bytes: padding
		// the body with long strings does not buy the schema more time.
		padded := `{"pad":["` + strings.Repeat("p", 60000) + `","` + strings.Repeat("q", 60000) + `"],` + deep(`"x"`)[1:]
		v = check(c, jsonResp(padded))
		expectRefused(v, "hostile", gate.ReasonWorkLimit, gate.InvalidResponse, false)
		Expect(v.Audit.DurationMicros).To(BeNumerically("<", 10_000_000))
	})

	It("refuses a 1 MiB body of items each failing a 16-branch oneOf at the first item's cost", func() {
		var branches []string
		for i := range 16 {
			branches = append(branches, fmt.Sprintf(`{"type":"object","required":["kind","v"],"additionalProperties":false,"properties":{"kind":{"const":"k%d"},"v":{"type":"integer"}}}`, i))
		}
		upstream := `{"type":"object","properties":{"n":{"type":"number"},"items":{"type":"array","items":{"oneOf":[` + strings.Join(branches, ",") + `]}}}}`
		dir := writeContract(GinkgoT().TempDir(), "hostile", map[string]string{
			"contract.yaml":        hostileManifest,
			"upstream.schema.json": upstream,
			"agent.schema.json":    hostileAgent,
		})
		c, err := gate.LoadDir(dir, gate.Options{})
		Expect(err).NotTo(HaveOccurred())
		var b strings.Builder
		b.WriteString(`{"n":1,"items":[`)
		for i := 0; b.Len() < 1<<20; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"kind":"k%d","v":"not a number"}`, i%16)
		}
		b.WriteString(`]}`)
		v := check(c, jsonResp(b.String()))
		expectRefused(v, "hostile", "schema.type", gate.InvalidResponse, false)
		// The branch the item meant (its kind), not the first one.
		Expect(v.Audit.KeywordLocation).To(Equal("upstream.schema.json#/properties/items/items/oneOf/0/properties/v/type"))
		Expect(v.Audit.InstanceLocation).To(Equal("/items/0/v"))
		Expect(v.Audit.InstanceLocations).To(HaveLen(gate.MaxInstanceLocations))
	})

	DescribeTable("refuses a schema $ref that leaves the contract, as a config error",
		func(ref string) {
			dir := writeContract(GinkgoT().TempDir(), "hostile", map[string]string{
				"contract.yaml":        hostileManifest,
				"upstream.schema.json": `{"$ref":"` + ref + `"}`,
				"agent.schema.json":    hostileAgent,
			})
			_, err := gate.LoadDir(dir, gate.Options{})
			var ce *gate.ConfigError
			Expect(errors.As(err, &ce)).To(BeTrue(), "%v", err)
			Expect(ce.File).To(HaveSuffix("/hostile/upstream.schema.json"))
			Expect(errors.Is(err, gate.ErrOutsideContract)).To(BeTrue())
		},
		Entry("a local file", "file:///etc/passwd"),
		Entry("a relative path out of the directory", "../../../../../../etc/passwd"),
		Entry("an https URL", "https://example.com/schema.json"),
		Entry("a metadata service", "http://169.254.169.254/latest/meta-data/"),
	)
})
