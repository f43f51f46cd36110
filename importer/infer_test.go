package importer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing/fstest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/importer"
	"github.com/airlockdev/airlock/semantic"
)

// infer infers a schema from JSON texts and returns it re-read as plain
// JSON values (numbers as json.Number), as it is written to disk.
func infer(samples ...string) map[string]any {
	bs := make([][]byte, len(samples))
	for i, s := range samples {
		bs[i] = []byte(s)
	}
	sch, _, err := importer.Infer(bs, importer.InferOptions{})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return roundTrip(sch)
}

func roundTrip(v map[string]any) map[string]any {
	b, err := json.Marshal(v)
	ExpectWithOffset(2, err).NotTo(HaveOccurred())
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var out map[string]any
	ExpectWithOffset(2, d.Decode(&out)).To(Succeed())
	return out
}

// load loads a contract whose one upstream version v1 has schema sch and
// projects the whole value, from memory.
func load(sch map[string]any) *gate.Contract {
	b, err := json.Marshal(sch)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	fs := fstest.MapFS{
		"t/contract.yaml":        {Data: []byte("tool: t\nversion: \"1\"\nagent_schema: agent.schema.json\nupstream_versions:\n  v1:\n    schema: upstream.schema.json\n    projection:\n      v: \"\"\n")},
		"t/upstream.schema.json": {Data: b},
		"t/agent.schema.json":    {Data: []byte(`{"type":"object","additionalProperties":false,"properties":{"v":true}}`)},
	}
	c, err := gate.Load(fs, "t", gate.Options{})
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), string(b))
	return c
}

// schemaAdmits reports whether the contract's schema stage admits body
// (later stages are not infer's).
func schemaAdmits(c *gate.Contract, body string) (bool, string) {
	v, err := c.Check(context.Background(), gate.Response{Status: 200, ContentType: "application/json", Body: strings.NewReader(body)},
		gate.Call{UpstreamVersion: "v1", Request: semantic.Request{ID: "r"}})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	if v.Admitted || v.Stage == gate.StageProjection || v.Stage == gate.StageSemantic {
		return true, ""
	}
	return false, v.Reason + " at " + v.Audit.InstanceLocation + ": " + v.Audit.Message
}

var _ = Describe("Infer", func() {
	DescribeTable("rules",
		func(samples []string, pointer string, want map[string]any) {
			sch := infer(samples...)
			at := sch
			for _, t := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
				if t == "" {
					continue
				}
				if t == "*" {
					at = at["items"].(map[string]any)
					continue
				}
				at = at["properties"].(map[string]any)[t].(map[string]any)
			}
			for k, v := range want {
				if v == nil {
					Expect(at).NotTo(HaveKey(k))
					continue
				}
				Expect(at).To(HaveKeyWithValue(k, v), "%s in %v", k, at)
			}
			// Every rule's schema admits its samples.
			c := load(sch)
			for _, s := range samples {
				ok, why := schemaAdmits(c, s)
				Expect(ok).To(BeTrue(), "%s: %s", s, why)
			}
		},
		Entry("integer by the number's value: 1.0 is an integer", []string{`{"n":1}`, `{"n":1.0}`, `{"n":2e1}`}, "/n",
			map[string]any{"type": "integer"}),
		Entry("number when one value has a fraction", []string{`{"n":1}`, `{"n":1.5}`}, "/n", map[string]any{"type": "number"}),
		Entry("range: minimum 0 when nothing is negative, maximum highest + max(|lowest|, |highest|, 1)", []string{`{"n":3}`, `{"n":10}`}, "/n",
			map[string]any{"minimum": json.Number("0"), "maximum": json.Number("20")}),
		Entry("range: below zero, lowest − w", []string{`{"n":-5}`, `{"n":30}`}, "/n",
			map[string]any{"minimum": json.Number("-35"), "maximum": json.Number("60")}),
		Entry("range of fractions, exactly: w is at least 1", []string{`{"n":0.25}`, `{"n":0.5}`}, "/n",
			map[string]any{"minimum": json.Number("0"), "maximum": json.Number("1.5")}),
		Entry("a bound past MaxBoundLength is left out", []string{`{"n":1e70}`}, "/n",
			map[string]any{"minimum": json.Number("0"), "maximum": nil}),
		Entry("required: in every object; closed", []string{`{"a":1,"b":2}`, `{"a":1}`}, "",
			map[string]any{"required": []any{"a"}, "additionalProperties": false}),
		Entry("enum: 2 values in 6 strings", []string{`{"s":"x"}`, `{"s":"y"}`, `{"s":"x"}`, `{"s":"y"}`, `{"s":"x"}`, `{"s":"y"}`}, "/s",
			map[string]any{"enum": []any{"x", "y"}, "maxLength": nil}),
		Entry("no enum: 2 values in 5 strings (fewer than 3 per value)", []string{`{"s":"x"}`, `{"s":"y"}`, `{"s":"x"}`, `{"s":"y"}`, `{"s":"x"}`}, "/s",
			map[string]any{"enum": nil, "maxLength": json.Number("64"), "minLength": json.Number("1"), "pattern": "^[a-z]*$"}),
		Entry("no enum past EnumMaxValues distinct values", strings.Split(`{"s":"a"} {"s":"b"} {"s":"c"} {"s":"d"} {"s":"e"} {"s":"f"} {"s":"g"} {"s":"h"} {"s":"i"}`, " "), "/s",
			map[string]any{"enum": nil}),
		Entry("enum with null", []string{`{"s":"x"}`, `{"s":"x"}`, `{"s":"x"}`, `{"s":null}`}, "/s",
			map[string]any{"enum": []any{"x", nil}, "type": []any{"string", "null"}}),
		Entry("maxLength ×2 past the floor; empty seen: no minLength", []string{`{"s":"` + strings.Repeat("é", 40) + `"}`, `{"s":""}`}, "/s",
			map[string]any{"maxLength": json.Number("80"), "minLength": nil}),
		Entry("token alphabet", []string{`{"s":"run_8fK2"}`, `{"s":"a-b.c"}`}, "/s", map[string]any{"pattern": `^[a-zA-Z0-9\-._]*$`}),
		Entry("text: no control or bidi character", []string{`{"s":"hello world"}`, `{"s":"line\nbreak"}`}, "/s",
			map[string]any{"pattern": importer.ControlPattern}),
		Entry("text with a control character: no pattern", []string{`{"s":"a\rb c"}`, `{"s":"x y"}`}, "/s", map[string]any{"pattern": nil}),
		Entry("format date-time when every value parses", []string{`{"t":"2025-06-01T12:00:00Z"}`, `{"t":"1998-12-31T15:59:60.5-08:00"}`}, "/t",
			map[string]any{"format": "date-time", "pattern": nil}),
		Entry("no format when one value does not match", []string{`{"t":"2025-06-01T12:00:00Z"}`, `{"t":"2025-06-01 12:00:00"}`}, "/t",
			map[string]any{"format": nil}),
		Entry("format uuid", []string{`{"u":"0f8fad5b-d9cb-469f-a165-70867728950e"}`, `{"u":"7C9E6679-7425-40DE-944B-E07FC1F90AE7"}`}, "/u",
			map[string]any{"format": "uuid"}),
		Entry("format email", []string{`{"e":"a.b@example.com"}`, `{"e":"x+y@mail.example.org"}`}, "/e", map[string]any{"format": "email"}),
		Entry("format uri", []string{`{"u":"https://example.com/a?b=c"}`, `{"u":"http://localhost:8080/"}`}, "/u", map[string]any{"format": "uri"}),
		Entry("null mixed in: a type list", []string{`{"a":1}`, `{"a":null}`}, "/a", map[string]any{"type": []any{"integer", "null"}}),
		Entry("conflict: object and string, a union", []string{`{"a":{"b":1}}`, `{"a":"s"}`}, "/a",
			map[string]any{"type": []any{"object", "string"}, "additionalProperties": false}),
		Entry("array items merged over every element", []string{`{"l":[{"a":1},{"b":"x"}]}`, `{"l":[]}`}, "/l/*",
			map[string]any{"required": nil, "additionalProperties": false}),
		Entry("an array empty in every sample: maxItems 0", []string{`{"l":[]}`}, "/l", map[string]any{"maxItems": json.Number("0")}),
		Entry("maxItems ×2 past the floor", []string{`[` + strings.TrimSuffix(strings.Repeat("1,", 40), ",") + `]`}, "",
			map[string]any{"maxItems": json.Number("80")}),
	)

	It("writes no enum of values the redactor calls secrets", func() {
		token := "ghp_" + strings.Repeat("aB3", 12) // a GitHub token's shape, built here
		var samples []string
		for i := 0; i < 6; i++ {
			samples = append(samples, `{"auth": "`+token+`", "kind": "a"}`)
		}
		sch := infer(samples...)
		props := sch["properties"].(map[string]any)
		Expect(props["auth"]).NotTo(HaveKey("enum"))
		Expect(props["kind"]).To(HaveKeyWithValue("enum", []any{"a"}), "an ordinary value still becomes an enum")
		b, err := json.Marshal(sch)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(b)).NotTo(ContainSubstring(token))
	})

	It("refuses a sample that is not strict JSON, naming it", func() {
		_, _, err := importer.Infer([][]byte{[]byte(`{"a":1}`), []byte(`{"a":1,"a":2}`)}, importer.InferOptions{Names: []string{"one.json", "two.json"}})
		Expect(err).To(MatchError(ContainSubstring("two.json: not strict JSON: parse.duplicate_member")))
	})

	It("bounds the work: samples, depth and member names", func() {
		_, _, err := importer.Infer([][]byte{[]byte(`1`), []byte(`2`)}, importer.InferOptions{MaxSamples: 1})
		Expect(err).To(MatchError(ContainSubstring("more than the 1")))
		_, _, err = importer.Infer([][]byte{[]byte(`[[[1]]]`)}, importer.InferOptions{MaxDepth: 2})
		Expect(err).To(MatchError(ContainSubstring("parse.depth")))
		_, _, err = importer.Infer([][]byte{[]byte(`{"a":1,"b":2,"c":3}`)}, importer.InferOptions{MaxMembers: 2})
		Expect(err).To(MatchError(ContainSubstring("more than 2 distinct member names")))
	})

	It("infers over structuredContent of MCP results, skipping error results", func() {
		sch, ev, err := importer.Infer([][]byte{
			[]byte(`{"content":[{"type":"text","text":"{}"}],"structuredContent":{"t":21}}`),
			[]byte(`{"content":[{"type":"text","text":"boom"}],"isError":true}`),
		}, importer.InferOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(ev.Protocol).To(Equal("mcp"))
		Expect(ev.Result).To(Equal("structured"))
		Expect(ev.Samples).To(Equal(1))
		Expect(ev.Skipped).To(HaveLen(1))
		Expect(sch["properties"]).To(HaveKey("t"))
	})

	It("infers over the JSON text block when a result has no structuredContent", func() {
		sch, ev, err := importer.Infer([][]byte{
			[]byte(`{"content":[{"type":"text","text":"{\"k\":\"v\"}"}]}`),
		}, importer.InferOptions{MCP: true})
		Expect(err).NotTo(HaveOccurred())
		Expect(ev.Result).To(Equal("text"))
		Expect(sch["properties"]).To(HaveKey("k"))
	})

	It("admits every sample it was inferred from (random documents)", func() {
		r := rand.New(rand.NewPCG(1, 2))
		for round := 0; round < 150; round++ {
			n := 1 + r.IntN(8)
			samples := make([]string, n)
			// A shared shape makes members recur across samples.
			for i := range samples {
				samples[i] = string(genValue(r, 0, round%3 == 0))
			}
			sch := infer(samples...)
			c := load(sch)
			for _, s := range samples {
				ok, why := schemaAdmits(c, s)
				b, _ := json.Marshal(sch)
				Expect(ok).To(BeTrue(), "round %d: %s refused: %s\nschema: %s", round, s, why, b)
			}
		}
	})
})

// genValue writes a random JSON value, bounded in depth and width; with
// object true the top level is an object of a few recurring names.
func genValue(r *rand.Rand, depth int, object bool) []byte {
	names := []string{"id", "name", "n", "tags", "meta", "ts", "x y", "é"}
	strs := []string{"", "a", "open", "closed", "2025-06-01T12:00:00Z", "0f8fad5b-d9cb-469f-a165-70867728950e",
		"a@example.com", "https://example.com/x", "tab\there", "Ünïcödé ✓", "run_8fK2", "A-b.c:d/e"}
	nums := []string{"0", "-1", "1.0", "2.5", "1e3", "-0.125", "123456789012345678901234567890", "9007199254740993", "1E-3"}
	k := r.IntN(7)
	if object || depth == 0 && k < 3 {
		k = 5
	}
	if depth >= 4 && k >= 5 {
		k = r.IntN(5)
	}
	switch k {
	case 0:
		return []byte("null")
	case 1:
		return []byte([]string{"true", "false"}[r.IntN(2)])
	case 2:
		return []byte(nums[r.IntN(len(nums))])
	case 3, 4:
		b, _ := json.Marshal(strs[r.IntN(len(strs))])
		return b
	case 5:
		var b bytes.Buffer
		b.WriteByte('{')
		used := map[string]bool{}
		for i, m := 0, r.IntN(5); i < m; i++ {
			name := names[r.IntN(len(names))]
			if used[name] {
				continue
			}
			used[name] = true
			if b.Len() > 1 {
				b.WriteByte(',')
			}
			nb, _ := json.Marshal(name)
			fmt.Fprintf(&b, "%s:%s", nb, genValue(r, depth+1, false))
		}
		b.WriteByte('}')
		return b.Bytes()
	default:
		var b bytes.Buffer
		b.WriteByte('[')
		for i, m := 0, r.IntN(4); i < m; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(genValue(r, depth+1, false))
		}
		b.WriteByte(']')
		return b.Bytes()
	}
}
