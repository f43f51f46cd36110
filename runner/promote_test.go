package runner_test

import (
	"errors"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/runner"
)

// recordedProject is the note_status project with three recorded
// fixtures: one admitted, one refused, one whose request comes from a
// defaults file.
func recordedProject() string {
	files := project()
	files["fixtures/note_status/v1/recorded/good.json"] = goodBody
	files["fixtures/note_status/v1/recorded/good.meta.yaml"] = `status: 200
content_type: "application/json"
request: {id: "req-00000001"}
clock: "2025-06-01T12:00:00Z"
recorded:
  source: "GET http://127.0.0.1/notes/N-17?api_key=REDACTED"
  time: "2025-06-01T12:00:00Z"
  duration_ms: 3
  size: 61
  sha256: "0000000000000000000000000000000000000000000000000000000000000000"
  airlock_version: "test"
  verdict: {outcome: admitted, contract_version: "1"}
`
	files["fixtures/note_status/v1/recorded/good.output-schema.json"] = `{"type":"object"}`
	files["fixtures/note_status/v1/recorded/drifted.json"] = `{"request_id":"req-00000001","note_id":"N-17","state":"archived"}`
	files["fixtures/note_status/v1/recorded/drifted.meta.yaml"] = "request: {id: req-00000001}\nrecorded: {verdict: {outcome: refused, reason: schema.enum}}\n"
	files["fixtures/note_status/v1/recorded/defaults.meta.yaml"] = "request: {id: req-00000042}\n"
	files["fixtures/note_status/v1/recorded/inherited.json"] = `{"request_id":"req-00000042","note_id":"N-42","state":"closed"}`
	// The destination's defaults name another request: the promoted sidecar
	// must not start inheriting it.
	files["fixtures/note_status/v1/historical/defaults.meta.yaml"] = "request: {id: req-99999999}\n"
	return tree(files)
}

func promote(dir, fixture, to string) (*runner.Promotion, error) {
	return runner.Promote(runner.PromoteOptions{
		SchemasDir: filepath.Join(dir, "schemas"),
		Fixture:    filepath.Join(dir, "fixtures", "note_status", "v1", fixture),
		To:         to,
	})
}

var _ = Describe("airlock promote", func() {
	It("moves body, sidecar and output schema to accepted, keeping provenance, and the run passes after --update", func() {
		dir := recordedProject()
		p, err := promote(dir, "recorded/good.json", runner.KindAccepted)
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Verdict.Admitted).To(BeTrue())
		Expect(p.Expect).To(BeNil())
		v1 := filepath.Join(dir, "fixtures", "note_status", "v1")
		Expect(p.Body).To(Equal(filepath.Join(v1, "accepted", "good.json")))
		Expect(filesUnder(filepath.Join(v1, "recorded"))).To(ConsistOf("defaults.meta.yaml", "drifted.json", "drifted.meta.yaml", "inherited.json"))
		body, _ := os.ReadFile(p.Body)
		Expect(string(body)).To(Equal(goodBody))
		Expect(filepath.Join(v1, "accepted", "good.output-schema.json")).To(BeARegularFile())
		m := readMeta(filepath.Join(v1, "accepted", "good.meta.yaml"))
		Expect(m.Expect).To(BeNil())
		Expect(*m.Request.ID).To(Equal("req-00000001"))
		Expect(*m.Clock).To(Equal("2025-06-01T12:00:00Z"))
		Expect(m.Recorded.Source).To(Equal("GET http://127.0.0.1/notes/N-17?api_key=REDACTED"))
		Expect(m.Recorded.Verdict.Outcome).To(Equal("admitted"))

		_, err = run(dir, func(o *runner.Options) { o.Update = true; o.Filter.Kinds = []string{runner.KindAccepted} })
		Expect(err).NotTo(HaveOccurred())
		res, err := run(dir)
		Expect(err).NotTo(HaveOccurred())
		_, failed, _ := res.Run.Counts()
		Expect(failed).To(BeZero(), "%+v", res.Run.Cases)
	})

	It("moves a refused fixture to near-miss with the reason the gate gives now", func() {
		dir := recordedProject()
		p, err := promote(dir, "recorded/drifted.meta.yaml", runner.KindNearMiss)
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Expect).To(Equal(&runner.Expect{Outcome: "refused", Reason: "schema.enum"}))
		side := filepath.Join(dir, "fixtures", "note_status", "v1", "near-miss", "drifted.meta.yaml")
		m := readMeta(side)
		Expect(m.Expect.Reason).To(Equal("schema.enum"))
		Expect(*m.Status).To(Equal(200), "inherited values are spelled out")
		Expect(*m.ContentType).To(Equal("application/json"))
		Expect(*m.Clock).To(Equal("2025-06-01T12:00:00Z"), "the clock the tool's defaults gave")
		Expect(m.Recorded.Verdict.Reason).To(Equal("schema.enum"))
		res, err := run(dir, func(o *runner.Options) { o.Filter.Kinds = []string{runner.KindNearMiss} })
		Expect(err).NotTo(HaveOccurred())
		Expect(byName(res, "drifted.json", runner.SuiteSchema).Status).To(BeEquivalentTo("passed"))
	})

	It("writes inherited values into the sidecar, so the destination's defaults cannot change its meaning", func() {
		dir := recordedProject()
		_, err := promote(dir, "recorded/inherited.json", runner.KindHistorical)
		Expect(err).NotTo(HaveOccurred())
		m := readMeta(filepath.Join(dir, "fixtures", "note_status", "v1", "historical", "inherited.meta.yaml"))
		Expect(*m.Request.ID).To(Equal("req-00000042"))
		res, err := run(dir, func(o *runner.Options) { o.Filter.Kinds = []string{runner.KindHistorical} })
		Expect(err).NotTo(HaveOccurred())
		Expect(byName(res, "inherited.json", runner.SuiteSemantic).Status).To(BeEquivalentTo("passed"))
	})

	It("takes historical as the gate says now: admitted, or refused for its reason", func() {
		dir := recordedProject()
		p, err := promote(dir, "recorded/drifted.json", runner.KindHistorical)
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Expect.Reason).To(Equal("schema.enum"))
		p, err = promote(dir, "recorded/good.json", runner.KindHistorical)
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Expect).To(BeNil())
	})

	DescribeTable("does not move a fixture whose verdict does not fit",
		func(fixture, to, msg string) {
			dir := recordedProject()
			before := filesUnder(dir)
			_, err := promote(dir, fixture, to)
			Expect(errors.Is(err, runner.ErrWrongVerdict)).To(BeTrue(), "%v", err)
			Expect(err.Error()).To(ContainSubstring(msg))
			Expect(filesUnder(dir)).To(Equal(before))
		},
		Entry("refused to accepted", "recorded/drifted.json", runner.KindAccepted, "refused now (schema.enum)"),
		Entry("admitted to near-miss", "recorded/good.json", runner.KindNearMiss, "admitted now"),
	)

	It("never overwrites: a taken name in the destination moves nothing", func() {
		dir := recordedProject()
		dst := filepath.Join(dir, "fixtures", "note_status", "v1", "accepted")
		Expect(os.WriteFile(filepath.Join(dst, "good.agent.json"), []byte("old golden"), 0o644)).To(Succeed())
		before := filesUnder(dir)
		_, err := promote(dir, "recorded/good.json", runner.KindAccepted)
		Expect(errors.Is(err, runner.ErrFixtureExists)).To(BeTrue(), "%v", err)
		Expect(filesUnder(dir)).To(Equal(before))
		b, _ := os.ReadFile(filepath.Join(dst, "good.agent.json"))
		Expect(string(b)).To(Equal("old golden"))
	})

	It("reports a destination that cannot be created and moves nothing", func() {
		dir := recordedProject()
		hist := filepath.Join(dir, "fixtures", "note_status", "v1", "historical")
		Expect(os.RemoveAll(hist)).To(Succeed())
		Expect(os.WriteFile(hist, []byte("a file"), 0o644)).To(Succeed())
		before := filesUnder(dir)
		_, err := promote(dir, "recorded/good.json", runner.KindHistorical)
		Expect(errors.Is(err, runner.ErrUnwritable)).To(BeTrue(), "%v", err)
		Expect(filesUnder(dir)).To(Equal(before))
	})

	DescribeTable("configuration errors",
		func(fixture, to, msg string) {
			dir := recordedProject()
			_, err := promote(dir, fixture, to)
			var ce *gate.ConfigError
			Expect(errors.As(err, &ce)).To(BeTrue(), "%v", err)
			Expect(err.Error()).To(ContainSubstring(msg))
		},
		Entry("unknown destination", "recorded/good.json", "recorded", "not a destination"),
		Entry("same folder", "accepted/open.json", runner.KindAccepted, "already in accepted/"),
		Entry("missing fixture", "recorded/nope.json", runner.KindAccepted, "no such fixture"),
		Entry("a sidecar-like file", "recorded/good.output-schema.json", runner.KindAccepted, "not a fixture body"),
		Entry("outside a kind folder", "../v1", runner.KindAccepted, "not a fixture body"),
	)
})
