package gate_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/gate"
)

// Refusals with every detail: the JSON Pointer beside a parse offset, every
// repeated member name, every failing instance location of a schema
// refusal, and the case-folding policy.
var _ = Describe("a refusal's details in the audit record", func() {
	var c *gate.Contract
	BeforeEach(func() { c = loadProbe() })
	checkBody := func(b string) *gate.Verdict { return runCheck(c, jsonResp(b), probeCall()) }

	// auditMap decodes the record's JSON line.
	auditMap := func(v *gate.Verdict) map[string]any {
		GinkgoHelper()
		var m map[string]any
		Expect(json.Unmarshal(v.Audit.JSON(), &m)).To(Succeed())
		return m
	}

	Describe("parse refusals", func() {
		DescribeTable("carry the JSON Pointer of the value beside the byte offset",
			func(b, reason string, offset int, pointer string) {
				v := checkBody(b)
				Expect(v.Reason).To(Equal(reason), "%s", v.Audit.JSON())
				Expect(v.Audit.Offset).To(Equal(int64(offset)))
				Expect(v.Audit.InstanceLocation).To(Equal(pointer))
				Expect(v.Audit.InstanceLocations).To(Equal([]string{pointer}))
				Expect(auditMap(v)).To(HaveKeyWithValue("instance_location", pointer))
			},
			Entry("a duplicate member",
				probeBody(withMember("nest", `{"a":1,"a":2}`)), gate.ReasonDuplicate, strings.Index(probeBody(withMember("nest", `{"a":1,"a":2}`)), `"a":2`), "/nest/a"),
			Entry("invalid UTF-8 in an element",
				probeBody(withMember("tags", "[\"ok\",\"\xff\"]")), gate.ReasonInvalidUTF8, strings.Index(probeBody(withMember("tags", "[\"ok\",\"\xff\"]")), "\xff"), "/tags/1"),
			Entry("a lone surrogate",
				probeBody(withMember("label", `"\ud800"`)), gate.ReasonLoneSurrogate, strings.Index(probeBody(withMember("label", `"\ud800"`)), `\ud800`), "/label"),
			Entry("a number that overflows",
				probeBody(withMember("amount", "1e400")), gate.ReasonNumber, strings.Index(probeBody(withMember("amount", "1e400")), "1e400"), "/amount"),
			Entry("a string past max_string_length",
				probeBody(withMember("items", `[{"name":"`+strings.Repeat("n", 65)+`"}]`)), gate.ReasonStringTooLong, strings.Index(probeBody(withMember("items", `[{"name":"`+strings.Repeat("n", 65)+`"}]`)), `"nnn`), "/items/0/name"),
			Entry("a member name with invalid UTF-8 names its object",
				probeBody(withMember("nest", "{\"\xfe\":1}")), gate.ReasonInvalidUTF8, strings.Index(probeBody(withMember("nest", "{\"\xfe\":1}")), "\xfe"), "/nest"),
			Entry("nesting past max_depth names the container opened too deep",
				probeBody(withMember("nest", `[[[[[[1]]]]]]`)), gate.ReasonDepth, strings.Index(probeBody(withMember("nest", `[[[[[[1]]]]]]`)), `[[[[[[`)+5, "/nest/0/0/0/0/0"),
			Entry("trailing data at the second value, past the whitespace",
				probeBody()+" \n\t{}", gate.ReasonTrailingData, len(probeBody())+3, ""),
			Entry("a BOM is the whole text", "\xef\xbb\xbf"+probeBody(), gate.ReasonBOM, 0, ""),
		)

		It("names the open container of a truncated body and how many are open", func() {
			b := probeBody(withMember("items", `[{"name":"x"},{"name":"y"}]`))
			b = b[:strings.Index(b, `{"name":"y"}`)+len(`{"name":"y`)]
			v := checkBody(b)
			expectRefused(v, "probe", gate.ReasonTruncated, gate.UpstreamUnavailable, true)
			Expect(v.Audit.Offset).To(Equal(int64(len(b))))
			Expect(v.Audit.InstanceLocation).To(Equal("/items/1"))
			Expect(v.Audit.Message).To(Equal(`input ends with 3 objects and arrays unclosed; the innermost is the object at "/items/1", inside the value at "/items/1/name"`))
		})

		It("writes the whole text's location as \"\" when the top-level object is left open", func() {
			v := checkBody(strings.TrimSuffix(probeBody(), "}"))
			expectRefused(v, "probe", gate.ReasonTruncated, gate.UpstreamUnavailable, true)
			Expect(v.Audit.Message).To(HavePrefix("input ends with 1 object or array unclosed; the innermost is the object at \"\""))
			Expect(auditMap(v)).To(HaveKeyWithValue("instance_location", ""))
			Expect(auditMap(v)).To(HaveKeyWithValue("instance_locations", []any{""}))
		})

		It("names every repeated member with its pointer, in the order of the text", func() {
			b := probeBody(withMember("nest", `{"a":1,"a":2,"b":[{"c":1,"C":2}]}`), withMember("Count", "3"))
			v := checkBody(b)
			expectRefused(v, "probe", gate.ReasonDuplicate, gate.InvalidResponse, false)
			Expect(v.Audit.InstanceLocation).To(Equal("/nest/a"))
			Expect(v.Audit.InstanceLocations).To(Equal([]string{"/nest/a", "/nest/b/0/C", "/Count"}))
			Expect(v.Audit.Message).To(HavePrefix(`3 repeated member names: duplicate member name "a" at "/nest/a"`))
			Expect(v.Audit.Message).To(ContainSubstring(fmt.Sprintf(`member name "C" at "/nest/b/0/C" (byte %d) equals "c" (byte %d) under Unicode simple case folding`,
				strings.Index(b, `"C"`), strings.Index(b, `"c"`))))
			Expect(v.Audit.Message).To(ContainSubstring(`"Count" at "/Count"`))
		})

		It("lists at most 16 repeats", func() {
			var nest strings.Builder
			nest.WriteString("[")
			for i := range 20 {
				if i > 0 {
					nest.WriteString(",")
				}
				fmt.Fprintf(&nest, `{"k":%d,"k":0}`, i)
			}
			nest.WriteString("]")
			v := checkBody(probeBody(withMember("nest", nest.String())))
			expectRefused(v, "probe", gate.ReasonDuplicate, gate.InvalidResponse, false)
			Expect(v.Audit.InstanceLocations).To(HaveLen(gate.MaxInstanceLocations))
			Expect(v.Audit.InstanceLocations[15]).To(Equal("/nest/15/k"))
			Expect(v.Audit.Message).To(HavePrefix("16 repeated member names: "))
			Expect(len(v.Audit.Message)).To(BeNumerically("<=", gate.MaxAuditMessage))
		})
	})

	Describe("parse.member_fold_collision", func() {
		DescribeTable("refuses member names equal under simple case folding, by default",
			func(nest, pointer string) {
				v := checkBody(probeBody(withMember("nest", nest)))
				expectRefused(v, "probe", gate.ReasonFoldCollision, gate.InvalidResponse, false)
				Expect(v.Audit.InstanceLocation).To(Equal(pointer))
				Expect(v.Audit.Message).To(ContainSubstring("under Unicode simple case folding"))
			},
			Entry("Role and role", `{"Role":"user","role":"admin"}`, "/nest/role"),
			Entry("ſ (U+017F) and s", `[{"scope":"read","ſcope":"admin"}]`, "/nest/0/ſcope"),
			Entry("the Kelvin sign and k", `{"k":1,"\u212a":2}`, "/nest/\u212a"),
		)

		It("is a parse refusal before the schema sees the value", func() {
			// "Status" beside "status": additionalProperties would refuse it too.
			v := checkBody(probeBody(withMember("Status", `"closed"`)))
			expectRefused(v, "probe", gate.ReasonFoldCollision, gate.InvalidResponse, false)
			Expect(v.Audit.InstanceLocation).To(Equal("/Status"))
		})

		It("is admitted when the contract turns it off with limits.member_fold_collision: false", func() {
			manifest := strings.Replace(probeManifest, "limits:\n", "limits:\n  member_fold_collision: false\n", 1)
			dir := writeContract(GinkgoT().TempDir(), "probe", probeFiles(manifest))
			off, err := gate.LoadDir(dir, probeOptions)
			Expect(err).NotTo(HaveOccurred())
			Expect(off.Limits().AllowFoldCollisions).To(BeTrue())
			Expect(c.Limits().AllowFoldCollisions).To(BeFalse())
			expectAdmitted(runCheck(off, jsonResp(probeBody(withMember("nest", `{"Role":"user","role":"admin"}`))), probeCall()), probeOK)
			// Exact repeats stay refused.
			v := runCheck(off, jsonResp(probeBody(withMember("nest", `{"role":"user","role":"admin"}`))), probeCall())
			expectRefused(v, "probe", gate.ReasonDuplicate, gate.InvalidResponse, false)
		})

		It("makes a non-boolean member_fold_collision a configuration error with its line", func() {
			manifest := strings.Replace(probeManifest, "limits:\n", "limits:\n  member_fold_collision: \"no\"\n", 1)
			dir := writeContract(GinkgoT().TempDir(), "probe", probeFiles(manifest))
			_, err := gate.LoadDir(dir, probeOptions)
			var ce *gate.ConfigError
			Expect(errors.As(err, &ce)).To(BeTrue(), "%v", err)
			Expect(ce.Line).To(Equal(7))
			Expect(ce.Key).To(Equal("/limits/member_fold_collision"))
		})

		It("is registered with its stage, error code and retry policy", func() {
			info, ok := gate.LookupReason(gate.ReasonFoldCollision)
			Expect(ok).To(BeTrue())
			Expect(info.Stage).To(Equal(gate.StageParse))
			Expect(info.ErrorCode).To(Equal(gate.InvalidResponse))
			Expect(info.Retryable).To(BeFalse())
		})
	})

	Describe("schema refusals", func() {
		// Six members fail at once, each in its own way.
		sixFailures := probeBody(
			withMember("count", `"2"`), withMember("status", `"pending"`), withMember("note", `"toolong"`),
			withMember("items", `[{"name":"x"},{"name":"y","z":1}]`), withMember("tags", `[1,"x",2]`),
		)

		It("list every failing instance location, the chosen cause's first", func() {
			v := checkBody(sixFailures)
			Expect(v.Stage).To(Equal(gate.StageSchema))
			locs := v.Audit.InstanceLocations
			Expect(locs).NotTo(BeEmpty())
			Expect(locs[0]).To(Equal(v.Audit.InstanceLocation))
			Expect(locs).To(ConsistOf("/count", "/items/1", "/note", "/status", "/tags/0", "/tags/2"))
			Expect(locs[1:]).To(Equal(sortedLocations(locs[1:])), "in instance location order after the chosen one")
			Expect(auditMap(v)).To(HaveKey("instance_locations"))
		})

		It("lists the same locations in the same order on every run", func() {
			first := checkBody(sixFailures).Audit
			for range 30 {
				a := checkBody(sixFailures).Audit
				Expect(a.Reason).To(Equal(first.Reason))
				Expect(a.InstanceLocations).To(Equal(first.InstanceLocations))
			}
		})

		It("lists the whole value as \"\" when it is a failing location", func() {
			v := checkBody(probeBody(withMember("extra", "1"), withMember("count", `"2"`)))
			expectRefused(v, "probe", "schema.additionalProperties", gate.InvalidResponse, false)
			Expect(v.Audit.InstanceLocations).To(Equal([]string{"", "/count"}))
			Expect(auditMap(v)).To(HaveKeyWithValue("instance_location", ""))
		})

		It("follows only the closest branch of a oneOf on the chosen cause's way", func() {
			v := checkBody(probeBody(withMember("choice", `-1.5`)))
			expectRefused(v, "probe", "schema.type", gate.InvalidResponse, false)
			Expect(v.Audit.InstanceLocations).To(Equal([]string{"/choice"}))
		})

		It("lists at most 16, array indexes in number order", func() {
			var items strings.Builder
			items.WriteString("[")
			for i := range 30 {
				if i > 0 {
					items.WriteString(",")
				}
				items.WriteString(`{"z":1}`)
			}
			items.WriteString("]")
			v := checkBody(probeBody(withMember("items", items.String())))
			expectRefused(v, "probe", "schema.additionalProperties", gate.InvalidResponse, false)
			want := []string{}
			for i := range 16 {
				want = append(want, fmt.Sprintf("/items/%d", i))
			}
			Expect(v.Audit.InstanceLocations).To(Equal(want))
		})

		It("lists fewer, or only the chosen one, when Options.InstanceLocations says so", func() {
			dir := writeContract(GinkgoT().TempDir(), "probe", probeFiles(probeManifest))
			for n, want := range map[int]int{-1: 1, 1: 1, 3: 3, 100: 6} {
				opts := probeOptions
				opts.InstanceLocations = n
				c, err := gate.LoadDir(dir, opts)
				Expect(err).NotTo(HaveOccurred())
				v := runCheck(c, jsonResp(sixFailures), probeCall())
				Expect(v.Audit.InstanceLocations).To(HaveLen(want), "InstanceLocations %d", n)
				Expect(v.Audit.InstanceLocations[0]).To(Equal(v.Audit.InstanceLocation))
			}
		})
	})

	Describe("the record's JSON", func() {
		It("has one location for a semantic refusal", func() {
			v := checkBody(probeBody(withMember("request_id", `"req-00000002"`)))
			expectRefused(v, "probe", "semantic.request_binding", gate.InvalidResponse, false)
			Expect(v.Audit.InstanceLocations).To(Equal([]string{"/request_id"}))
		})

		It("leaves both locations out of a transport refusal and an admission", func() {
			resp := jsonResp(probeBody())
			resp.ContentType = "text/plain"
			for _, v := range []*gate.Verdict{runCheck(c, resp, probeCall()), checkBody(probeBody())} {
				m := auditMap(v)
				Expect(m).NotTo(HaveKey("instance_location"))
				Expect(m).NotTo(HaveKey("instance_locations"))
			}
		})

		It("is the same through json.Marshal, with AuditRecord's field order", func() {
			v := checkBody(strings.TrimSuffix(probeBody(), "}"))
			line := v.Audit.JSON()
			marshalled, err := json.Marshal(v.Audit)
			Expect(err).NotTo(HaveOccurred())
			Expect(marshalled).To(Equal(line))
			order := []string{`"time"`, `"outcome"`, `"retryable"`, `"instance_location"`, `"instance_locations"`, `"message"`, `"offset"`, `"output_sha256"`, `"duration_us"`}
			at := -1
			for _, k := range order {
				i := bytes.Index(line, []byte(k+":"))
				Expect(i).To(BeNumerically(">", at), "%s out of order in %s", k, line)
				at = i
			}
		})
	})
})

var _ = Describe("a leap second", func() {
	It("is a valid date-time and, to freshness, the last instant of its minute", func() {
		manifest := strings.Replace(probeManifest, "max_skew: 30s", "max_skew: 0s", 1)
		Expect(manifest).NotTo(Equal(probeManifest))
		dir := writeContract(GinkgoT().TempDir(), "probe", probeFiles(manifest))
		c, err := gate.LoadDir(dir, probeOptions)
		Expect(err).NotTo(HaveOccurred())
		body := probeBody(withMember("updated_at", `"2016-12-31T15:59:60.5-08:00"`))
		call := probeCall()
		// A clock that repeats (or smears) 23:59:59 reads this during the
		// leap second: the stamp is not in the future.
		call.Now = time.Date(2016, 12, 31, 23, 59, 59, 999999999, time.UTC)
		expectAdmitted(runCheck(c, jsonResp(body), call), probeOK)
		call.Now = time.Date(2017, 1, 1, 0, 0, 0, 0, time.UTC)
		expectAdmitted(runCheck(c, jsonResp(body), call), probeOK)
		// Half a second earlier it is.
		call.Now = time.Date(2016, 12, 31, 23, 59, 59, 500000000, time.UTC)
		v := runCheck(c, jsonResp(body), call)
		expectRefused(v, "probe", "semantic.fresh", gate.InvalidResponse, false)
		Expect(v.Audit.Message).To(ContainSubstring("in the future (allowed skew 0s)"))
	})

	It("is refused by the date-time format where the stamp in UTC ends no month", func() {
		call := probeCall()
		call.Now = time.Date(2025, 6, 30, 0, 0, 0, 0, time.UTC)
		v := runCheck(loadProbe(), jsonResp(probeBody(withMember("updated_at", `"2025-06-29T23:59:60Z"`))), call)
		expectRefused(v, "probe", "schema.format", gate.InvalidResponse, false)
		Expect(v.Audit.InstanceLocation).To(Equal("/updated_at"))
	})
})

// sortedLocations orders locations as the audit record lists them after
// the chosen one: token by token, array indexes by number.
func sortedLocations(locs []string) []string {
	out := append([]string(nil), locs...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
