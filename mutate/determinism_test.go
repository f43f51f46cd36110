package mutate_test

import (
	"context"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/internal/testtree"
	"github.com/airlockdev/airlock/mutate"
)

// A meter contract whose numbers carry both maximum and exclusiveMaximum
// (and both lower bounds), with several enum, pattern, property and
// patternProperties members: every place where the facts of a location
// come from more than one keyword or subschema.
//
// The two patternProperties that both match "abc" fail the same keyword
// (maxLength) on purpose: when two of them fail different keywords at one
// instance location, the gate's reason (and so a killed mutant's written
// expectation) follows the validator's map order; that is the gate's to
// fix, not mutate's.
const (
	meterManifest = `tool: meter
version: "1"
agent_schema: agent.schema.json
upstream_versions:
  v1:
    schema: upstream.schema.json
    projection: {level: /level, unit: /unit, state: /state}
    rules:
      - name: request_binding
        binding: {pointer: /request_id}
`
	meterUpstream = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["request_id", "level", "ratio", "unit", "state", "serial"],
  "properties": {
    "request_id": {"type": "string", "pattern": "^req-[0-9]+$"},
    "level": {"type": "integer", "minimum": 0, "exclusiveMinimum": -1, "maximum": 100, "exclusiveMaximum": 101},
    "ratio": {"type": "number", "minimum": 0.25, "exclusiveMinimum": 0, "maximum": 1.5, "exclusiveMaximum": 2.25},
    "unit": {"enum": ["kw", "kwh", "w", "wh"]},
    "state": {"enum": ["on", "off", "idle"]},
    "serial": {"type": "string", "pattern": "^S-[0-9]+$", "maxLength": 12},
    "labels": {
      "type": "object",
      "additionalProperties": false,
      "patternProperties": {"^a": {"type": "string", "maxLength": 8}, "^ab": {"type": "string", "maxLength": 4}, "^x": {"enum": ["on", "off"]}}
    },
    "readings": {"type": "array", "items": {"type": "integer", "maximum": 1000, "exclusiveMaximum": 999, "minimum": 1, "exclusiveMinimum": 0}}
  }
}`
	meterAgent = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["level", "unit", "state"],
  "properties": {"level": {"type": "integer"}, "unit": {"enum": ["kw", "kwh", "w", "wh"]}, "state": {"enum": ["on", "off", "idle"]}}
}`
	meterBody   = `{"request_id":"req-1","level":42,"ratio":0.5,"unit":"kw","state":"on","serial":"S-17","labels":{"abc":"x","axe":"long","xy":"on"},"readings":[1,2,3]}`
	meterOutput = `{"tool":"meter","request_id":"req-1","outcome":"success","data":{"level":42,"state":"on","unit":"kw"}}`
)

// readTree returns every file under dir by slash path relative to dir.
func readTree(dir string) map[string]string {
	out := map[string]string{}
	for _, p := range testtree.Files(dir) {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		Expect(err).NotTo(HaveOccurred())
		out[p] = string(b)
	}
	return out
}

var _ = Describe("airlock mutate --all --write", func() {
	It("writes the same tree, byte for byte, on every run", func() {
		dir := testtree.Tree(map[string]string{
			"schemas/meter/contract.yaml":                   meterManifest,
			"schemas/meter/upstream.schema.json":            meterUpstream,
			"schemas/meter/agent.schema.json":               meterAgent,
			"fixtures/meter/defaults.meta.yaml":             "request: {id: req-1}\nclock: 2025-06-01T12:00:00Z\n",
			"fixtures/meter/v1/accepted/reading.json":       meterBody,
			"fixtures/meter/v1/accepted/reading.agent.json": meterOutput + "\n",
		})
		opts := mutate.Options{SchemasDir: filepath.Join(dir, "schemas"), FixturesDir: filepath.Join(dir, "fixtures")}
		var (
			first    map[string]string
			firstDir string
		)
		for i := range 8 {
			rep, err := mutate.Mutate(context.Background(), opts)
			Expect(err).NotTo(HaveOccurred())
			out := GinkgoT().TempDir()
			written, skipped, err := mutate.WriteMutants(context.Background(), opts, out, rep.Results)
			Expect(err).NotTo(HaveOccurred())
			Expect(skipped).To(BeEmpty())
			Expect(written).To(HaveLen(len(rep.Results)))
			got := readTree(out)
			if i == 0 {
				first, firstDir = got, out
				Expect(first).NotTo(BeEmpty())
				continue
			}
			Expect(testtree.Files(out)).To(Equal(testtree.Files(firstDir)), "run %d: the written files", i+1)
			for _, p := range testtree.Files(firstDir) {
				Expect(got[p]).To(Equal(first[p]), "run %d: %s", i+1, p)
			}
		}
	})
})
