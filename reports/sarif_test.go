package reports_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/shard"
	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/internal/testbody"
	"github.com/airlockdev/airlock/reports"
)

var (
	sarifOnce   sync.Once
	sarifSchema *jsonschema.Schema
	sarifErr    error
)

// officialSARIF is the official SARIF 2.1.0 JSON Schema, compiled (make
// sarif-schema installs it in .ci/node/sarif, or $AIRLOCK_SARIF_SCHEMA
// names it); the spec is skipped without it, and fails under CI=true.
func officialSARIF() *jsonschema.Schema {
	b, err := testbody.SARIFSchema()
	if err != nil {
		msg := err.Error()
		if os.Getenv("CI") == "true" {
			Fail("CI=true but " + msg)
		}
		Skip(msg)
	}
	sarifOnce.Do(func() {
		doc, err := strictjson.Parse(b, strictjson.Limits{MaxStringLength: 1 << 20})
		if err != nil {
			sarifErr = err
			return
		}
		c := schema.NewCompiler(nil)
		if sarifErr = c.AddResource("airlock:sarif-2.1.0.json", doc); sarifErr != nil {
			return
		}
		sarifSchema, sarifErr = c.Compile("airlock:sarif-2.1.0.json")
	})
	Expect(sarifErr).NotTo(HaveOccurred())
	return sarifSchema
}

// validSARIF checks a log against the official SARIF 2.1.0 schema and
// GitHub code scanning's upload limits (reports.CheckGitHubSARIF), and
// returns it decoded.
func validSARIF(out []byte) map[string]any {
	doc, err := strictjson.Parse(out, strictjson.Limits{MaxStringLength: 1 << 20})
	Expect(err).NotTo(HaveOccurred(), string(out))
	Expect(officialSARIF().Validate(doc)).To(Succeed(), string(out))
	Expect(reports.CheckGitHubSARIF(out)).To(Succeed())
	var m map[string]any
	Expect(json.Unmarshal(out, &m)).To(Succeed())
	return m
}

// sarifRun is the one run of a decoded log.
func sarifRun(m map[string]any) map[string]any {
	runs := m["runs"].([]any)
	Expect(runs).To(HaveLen(1))
	return runs[0].(map[string]any)
}

func sarifResults(m map[string]any) []map[string]any {
	var out []map[string]any
	for _, r := range sarifRun(m)["results"].([]any) {
		out = append(out, r.(map[string]any))
	}
	return out
}

func sarifRuleIDs(m map[string]any) []string {
	var out []string
	for _, r := range sarifRun(m)["tool"].(map[string]any)["driver"].(map[string]any)["rules"].([]any) {
		out = append(out, r.(map[string]any)["id"].(string))
	}
	return out
}

// physical is a result's first physical location: uri, start line and
// column; ok false without one.
func physical(r map[string]any) (uri string, line, col float64, ok bool) {
	loc := r["locations"].([]any)[0].(map[string]any)
	p, ok := loc["physicalLocation"].(map[string]any)
	if !ok {
		return "", 0, 0, false
	}
	uri = p["artifactLocation"].(map[string]any)["uri"].(string)
	if rg, ok := p["region"].(map[string]any); ok {
		line, _ = rg["startLine"].(float64)
		col, _ = rg["startColumn"].(float64)
	}
	return uri, line, col, true
}

func fixtureCase(tool, version, kind, suite, name string, st reports.Status, expected, actual string) reports.Case {
	return reports.Case{Tool: tool, UpstreamVersion: version, Kind: kind, Suite: suite, Name: name,
		File: "fixtures/" + tool + "/" + version + "/" + kind + "/" + name, Status: st, Expected: expected, Actual: actual, Message: suite + " " + hostile}
}

// sampleRun has one failure of each run rule, passes and an unchecked
// case, and a broken contract.
func sampleRun() *reports.Run {
	return &reports.Run{Cases: []reports.Case{
		reports.ContractError("broken_tool", "contract.yaml", "schemas/broken_tool/contract.yaml", 3, 1, "schemas/broken_tool/contract.yaml:3:1: tool: unknown key"),
		fixtureCase("deploy_status", "v1", "accepted", "schema", "ok.json", reports.Passed, "admitted", "admitted"),
		fixtureCase("deploy_status", "v1", "accepted", "schema", "refused.json", reports.Failed, "admitted", "schema.type"),
		fixtureCase("deploy_status", "v1", "near-miss", "schema", "admitted.json", reports.Failed, "schema.enum", "admitted"),
		fixtureCase("deploy_status", "v1", "near-miss", "schema", "wrong.json", reports.Failed, "schema.enum", "schema.type"),
		fixtureCase("deploy_status", "v1", "near-miss", "parse", "stage.json", reports.Failed, "schema.enum", "schema.enum"),
		fixtureCase("deploy_status", "v1", "accepted", "projection", "golden.json", reports.Failed, "admitted", "admitted"),
		fixtureCase("deploy_status", "v1", "accepted", "no-leak", "leaks.json", reports.Failed, "admitted", "admitted"),
		fixtureCase("deploy_status", "v1", "accepted", "mutation", "survivor.json", reports.Failed, "admitted", "admitted"),
		fixtureCase("deploy_status", "v1", "recorded", "schema", "unchecked.json", reports.Unchecked, "", "admitted"),
		fixtureCase("job_run", "2025-06-01", "historical", "semantic", "old.json", reports.Failed, "admitted", "semantic.fresh"),
	}}
}

var _ = Describe("SARIF logs", func() {
	It("writes run's failed and errored testcases, one rule per kind of failure, valid SARIF within GitHub's limits", func() {
		var buf bytes.Buffer
		Expect(reports.WriteRunSARIF(&buf, sampleRun(), "v1.2.3")).To(Succeed())
		m := validSARIF(buf.Bytes())
		run := sarifRun(m)
		Expect(run["automationDetails"]).To(Equal(map[string]any{"id": "airlock/run/"}))
		Expect(run).NotTo(HaveKey("properties"))
		driver := run["tool"].(map[string]any)["driver"].(map[string]any)
		Expect(driver["name"]).To(Equal("airlock"))
		Expect(driver["version"]).To(Equal("v1.2.3"))
		Expect(driver["semanticVersion"]).To(Equal("1.2.3"))
		Expect(driver["informationUri"]).NotTo(BeEmpty())
		var ids []string
		for _, r := range reports.RunRules {
			ids = append(ids, r.ID)
		}
		Expect(sarifRuleIDs(m)).To(Equal(ids))

		byName := map[string]map[string]any{}
		for _, r := range sarifResults(m) {
			loc := r["locations"].([]any)[0].(map[string]any)
			name := loc["logicalLocations"].([]any)[0].(map[string]any)["name"].(string)
			byName[name] = r
			Expect(ids[int(r["ruleIndex"].(float64))]).To(Equal(r["ruleId"]))
			Expect(r["level"]).To(Equal("error"))
		}
		Expect(byName).To(HaveLen(9), "failed and errored cases only")
		for name, rule := range map[string]string{
			"contract.yaml": "broken-contract", "refused.json": "unexpected-refusal", "admitted.json": "unexpected-admission",
			"wrong.json": "wrong-reason", "stage.json": "wrong-stage", "golden.json": "projection-mismatch",
			"leaks.json": "leak", "survivor.json": "mutant-reaches-agent", "old.json": "unexpected-refusal",
		} {
			Expect(byName).To(HaveKey(name))
			Expect(byName[name]["ruleId"]).To(Equal(rule), name)
		}
		uri, line, _, ok := physical(byName["leaks.json"])
		Expect(ok).To(BeTrue())
		Expect(uri).To(Equal("fixtures/deploy_status/v1/accepted/leaks.json"))
		Expect(line).To(Equal(1.0))
		Expect(byName["old.json"]["locations"].([]any)[0].(map[string]any)["logicalLocations"].([]any)[0].(map[string]any)["fullyQualifiedName"]).
			To(Equal("job_run/2025-06-01/historical/old.json"))
		Expect(byName["wrong.json"]["properties"]).To(Equal(map[string]any{"suite": "schema", "expected": "schema.enum", "actual": "schema.type"}))
		// Every text stays exact: JSON escapes the control characters.
		Expect(byName["wrong.json"]["message"].(map[string]any)["text"]).To(ContainSubstring("\x1b[31m"))

		// Sorted by artifact URI first.
		var uris []string
		for _, r := range sarifResults(m) {
			u, _, _, _ := physical(r)
			uris = append(uris, u)
		}
		Expect(isSorted(uris)).To(BeTrue(), "%v", uris)
	})

	It("gives a path outside the working directory no physical location, only its logical one, and makes one inside relative", func() {
		wd, err := os.Getwd()
		Expect(err).NotTo(HaveOccurred())
		r := &reports.Run{Cases: []reports.Case{
			{Tool: "t", UpstreamVersion: "v1", Kind: "accepted", Suite: "schema", Name: "a.json", File: "/abs/fixtures/t/v1/accepted/a.json", Status: reports.Failed, Expected: "admitted", Actual: "schema.type"},
			{Tool: "t", UpstreamVersion: "v1", Kind: "accepted", Suite: "schema", Name: "b.json", File: "../elsewhere/b.json", Status: reports.Failed, Expected: "admitted", Actual: "schema.type"},
			{Tool: "t", UpstreamVersion: "v1", Kind: "accepted", Suite: "schema", Name: "c:d.json", File: "fixtures/c:d #1.json", Status: reports.Failed, Expected: "admitted", Actual: "schema.type"},
			{Tool: "t", UpstreamVersion: "v1", Kind: "accepted", Suite: "schema", Name: "e.json", File: filepath.Join(wd, "fixtures", "e.json"), Status: reports.Failed, Expected: "admitted", Actual: "schema.type"},
		}}
		var buf bytes.Buffer
		Expect(reports.WriteRunSARIF(&buf, r, "v0.0.0-test")).To(Succeed())
		res := sarifResults(validSARIF(buf.Bytes()))
		Expect(res).To(HaveLen(4))
		var uris []string
		for _, x := range res {
			loc := x["locations"].([]any)[0].(map[string]any)
			Expect(loc["logicalLocations"]).To(HaveLen(1))
			if uri, _, _, ok := physical(x); ok {
				uris = append(uris, uri)
			}
		}
		// The absolute path inside the working directory is made relative.
		Expect(uris).To(ConsistOf("fixtures/c%3Ad%20%231.json", "fixtures/e.json"))
	})

	It("records the shard, and merging the shards' logs gives the unsharded log byte for byte", func() {
		whole := sampleRun()
		var want bytes.Buffer
		Expect(reports.WriteRunSARIF(&want, whole, "v1.2.3")).To(Succeed())
		const n = 3
		logs := make([][]byte, n)
		for k := 1; k <= n; k++ {
			part := &reports.Run{Shard: shard.Shard{Index: k, Count: n, Set: testSet}}
			for i, c := range whole.Cases {
				if i%n == k-1 {
					part.Cases = append(part.Cases, c)
				}
			}
			var buf bytes.Buffer
			Expect(reports.WriteRunSARIF(&buf, part, "v1.2.3")).To(Succeed())
			m := validSARIF(buf.Bytes())
			Expect(sarifRun(m)["properties"]).To(Equal(map[string]any{"airlock/shard": fmt.Sprintf("%d/%d", k, n), "airlock/shardSet": testSet}))
			Expect(sarifRun(m)["automationDetails"]).To(Equal(map[string]any{"id": "airlock/run/"}))
			logs[k-1] = buf.Bytes()
		}
		got, err := reports.MergeSARIF([]string{"c", "a", "b"}, [][]byte{logs[2], logs[0], logs[1]})
		Expect(err).NotTo(HaveOccurred())
		validSARIF(got)
		Expect(string(got)).To(Equal(want.String()))

		_, err = reports.MergeSARIF([]string{"a", "c"}, [][]byte{logs[0], logs[2]})
		Expect(err).To(MatchError(ContainSubstring("missing shard 2/3")))
		_, err = reports.MergeSARIF([]string{"a", "b", "b2", "c"}, [][]byte{logs[0], logs[1], logs[1], logs[2]})
		Expect(err).To(MatchError(ContainSubstring("b and b2 are both shard 2/3")))
		_, err = reports.MergeSARIF([]string{"a", "whole"}, [][]byte{logs[0], want.Bytes()})
		Expect(err).To(MatchError(ContainSubstring("whole: an unsharded sarif report")))

		var other bytes.Buffer
		Expect(reports.WriteRunSARIF(&other, &reports.Run{Shard: shard.Shard{Index: 2, Count: 2, Set: testSet}}, "v1.2.3")).To(Succeed())
		_, err = reports.MergeSARIF([]string{"a", "other"}, [][]byte{logs[0], other.Bytes()})
		Expect(err).To(MatchError(ContainSubstring("the sarif reports are of different shard counts")))
		other.Reset()
		Expect(reports.WriteRunSARIF(&other, &reports.Run{Shard: shard.Shard{Index: 2, Count: 3, Set: otherSet}}, "v1.2.3")).To(Succeed())
		_, err = reports.MergeSARIF([]string{"a", "other", "c"}, [][]byte{logs[0], other.Bytes(), logs[2]})
		Expect(err).To(MatchError(ContainSubstring("shards of different fixture sets: a (shard 1/3, set " + testSet + ") and other (shard 2/3, set " + otherSet + ")")))
		other.Reset()
		Expect(reports.WriteRunSARIF(&other, &reports.Run{Shard: shard.Shard{Index: 2, Count: 3}}, "v1.2.3")).To(Succeed())
		_, err = reports.MergeSARIF([]string{"a", "other", "c"}, [][]byte{logs[0], other.Bytes(), logs[2]})
		Expect(err).To(MatchError(ContainSubstring("other: shard 2/3 records no fixture set")))
		other.Reset()
		Expect(reports.WriteRunSARIF(&other, &reports.Run{Shard: shard.Shard{Index: 2, Count: 3, Set: testSet}}, "v9.9.9")).To(Succeed())
		_, err = reports.MergeSARIF([]string{"a", "other", "c"}, [][]byte{logs[0], other.Bytes(), logs[2]})
		Expect(err).To(MatchError(ContainSubstring("another driver")))
		other.Reset()
		Expect(reports.WriteDiffSARIF(&other, &reports.Diff{}, nil, "v1.2.3")).To(Succeed())
		_, err = reports.MergeSARIF([]string{"a", "diff"}, [][]byte{logs[0], other.Bytes()})
		Expect(err).To(MatchError(ContainSubstring("another rule list")))
		_, err = reports.MergeSARIF([]string{"x.sarif"}, [][]byte{[]byte(`{"version":"2.1.0","runs":[],"extra":1}`)})
		Expect(err).To(MatchError(ContainSubstring("x.sarif is not an airlock SARIF log")))
	})

	It("refuses a shard's log whose results hold what no airlock writer writes: URIs outside the repository, over-long messages, Markdown", func() {
		logs := make([][]byte, 2)
		for k := 1; k <= 2; k++ {
			part := &reports.Run{Shard: shard.Shard{Index: k, Count: 2, Set: testSet}}
			for i, c := range sampleRun().Cases {
				if i%2 == k-1 {
					part.Cases = append(part.Cases, c)
				}
			}
			var buf bytes.Buffer
			Expect(reports.WriteRunSARIF(&buf, part, "v1.2.3")).To(Succeed())
			logs[k-1] = buf.Bytes()
		}
		_, err := reports.MergeSARIF([]string{"s1.sarif", "s2.sarif"}, logs)
		Expect(err).NotTo(HaveOccurred(), "the writers' own logs, hostile messages included, merge")

		// edit returns shard 2's log with its first result changed by f.
		edit := func(f func(res map[string]any)) []byte {
			var m map[string]any
			Expect(json.Unmarshal(logs[1], &m)).To(Succeed())
			f(sarifResults(m)[0])
			b, err := json.Marshal(m)
			Expect(err).NotTo(HaveOccurred())
			return b
		}
		withURI := func(key, uri string) []byte {
			return edit(func(res map[string]any) {
				loc := map[string]any{"physicalLocation": map[string]any{"artifactLocation": map[string]any{"uri": uri}}}
				if key == "relatedLocations" {
					loc["id"] = 1
				}
				res[key] = []any{loc}
			})
		}
		for uri, why := range map[string]string{
			"file:///etc/passwd":     "an absolute URI",
			"https://evil.example/x": "an absolute URI",
			"//evil.example/x":       "an absolute URI",
			"/abs/p":                 "an absolute path",
			"../../../etc/shadow":    "outside the repository",
			"a/../../x":              "outside the repository",
			"a/%zz":                  "not a URI reference",
			"a/%2e%2e/%2e%2e/x":      "outside the repository",
			"a/./b":                  "not spelled as airlock writes it",
			"a/../b":                 "not spelled as airlock writes it",
			"a/b%2Fc":                "not spelled as airlock writes it",
			"a/b?x=1":                "not spelled as airlock writes it",
			"a/b#top":                "not spelled as airlock writes it",
			"a b":                    "not spelled as airlock writes it",
			"":                       "not spelled as airlock writes it",
		} {
			for _, key := range []string{"locations", "relatedLocations"} {
				_, err := reports.MergeSARIF([]string{"s1.sarif", "s2.sarif"}, [][]byte{logs[0], withURI(key, uri)})
				Expect(err).To(MatchError(ContainSubstring("s2.sarif: result 0: rule ")), "%s %q", key, uri)
				Expect(err).To(MatchError(ContainSubstring(key+"[0]: artifactLocation.uri")), "%s %q", key, uri)
				Expect(err).To(MatchError(ContainSubstring(why)), "%s %q", key, uri)
			}
		}
		_, err = reports.MergeSARIF([]string{"s1.sarif", "s2.sarif"}, [][]byte{logs[0], withURI("locations", "fixtures/c%3Ad%20%231.json")})
		Expect(err).NotTo(HaveOccurred(), "a URI as sarifURI encodes it")

		for what, f := range map[string]func(res map[string]any){
			"longer than any airlock writes": func(res map[string]any) {
				res["message"] = map[string]any{"text": strings.Repeat("x", 4097)}
			},
			"unknown field \"markdown\"": func(res map[string]any) {
				res["message"] = map[string]any{"text": "see", "markdown": "[click](https://evil.example)"}
			},
			"locations[0] is null": func(res map[string]any) { res["locations"] = []any{nil} },
			"a negative line or column": func(res map[string]any) {
				res["locations"].([]any)[0].(map[string]any)["physicalLocation"].(map[string]any)["region"] = map[string]any{"startLine": -1}
			},
			"suppressions, which airlock run never writes": func(res map[string]any) {
				res["suppressions"] = []any{map[string]any{"kind": "external", "status": "accepted"}}
			},
			"result.properties \"security-severity\", which airlock run never writes": func(res map[string]any) {
				res["properties"] = map[string]any{"suite": "parse", "security-severity": "10.0"}
			},
			"result.properties \"suite\": not a string": func(res map[string]any) {
				res["properties"] = map[string]any{"suite": 10.0}
			},
			"not spelled as airlock writes it (control characters": func(res map[string]any) {
				res["locations"].([]any)[0].(map[string]any)["logicalLocations"] = []any{map[string]any{"name": "a\u001b[31m<!--x", "fullyQualifiedName": "t/v1/accepted/a", "kind": "resource"}}
			},
			"a logical location of kind \"function\"": func(res map[string]any) {
				res["locations"].([]any)[0].(map[string]any)["logicalLocations"] = []any{map[string]any{"name": "a", "kind": "function"}}
			},
			"2 logical locations": func(res map[string]any) {
				ll := map[string]any{"name": "a", "kind": "resource"}
				res["locations"].([]any)[0].(map[string]any)["logicalLocations"] = []any{ll, ll}
			},
		} {
			_, err := reports.MergeSARIF([]string{"s1.sarif", "s2.sarif"}, [][]byte{logs[0], edit(f)})
			Expect(err).To(MatchError(ContainSubstring("s2.sarif")), what)
			Expect(err).To(MatchError(ContainSubstring(what)), what)
		}
	})

	It("writes diff changes at their level, placed at the new schema's line or the manifest's", func() {
		d := sampleDiff()
		d.Comparisons[0].Changes[1].NewFile, d.Comparisons[0].Changes[1].NewLine, d.Comparisons[0].Changes[1].NewColumn = "schemas/deploy_status/upstream.v1.schema.json", 12, 5
		d.Comparisons[0].Changes = append(d.Comparisons[0].Changes, reports.Change{Rule: "manifest-limit-raised", Level: reports.Breaking,
			OldPointer: "/limits/max_bytes", NewPointer: "/limits/max_bytes", Message: "max_bytes raised", File: "schemas/deploy_status/contract.yaml", Line: 7})
		rules := []reports.DiffRule{
			{ID: "response-property-removed", Level: reports.Breaking, Description: "A property was removed. More."},
			{ID: "response-property-added", Level: reports.ContractChange, Description: "A property was added."},
			{ID: "response-property-enum-value-removed", Level: reports.Compatible, Description: "An enum value was removed."},
			{ID: "manifest-limit-raised", Level: reports.Breaking, Description: "A limit was raised."},
		}
		var buf bytes.Buffer
		Expect(reports.WriteDiffSARIF(&buf, d, rules, "v0.0.0-test")).To(Succeed())
		m := validSARIF(buf.Bytes())
		Expect(sarifRun(m)["automationDetails"]).To(Equal(map[string]any{"id": "airlock/diff/"}))
		Expect(sarifRuleIDs(m)).To(Equal([]string{"response-property-removed", "response-property-added", "response-property-enum-value-removed", "manifest-limit-raised"}))
		levels := map[string]string{}
		at := map[string][3]any{}
		for _, r := range sarifResults(m) {
			levels[r["ruleId"].(string)] = r["level"].(string)
			uri, line, col, _ := physical(r)
			at[r["ruleId"].(string)] = [3]any{uri, line, col}
		}
		Expect(levels).To(Equal(map[string]string{"response-property-removed": "error", "response-property-added": "warning",
			"response-property-enum-value-removed": "note", "manifest-limit-raised": "error"}))
		Expect(at["response-property-added"]).To(Equal([3]any{"schemas/deploy_status/upstream.v1.schema.json", 12.0, 5.0}))
		Expect(at["manifest-limit-raised"]).To(Equal([3]any{"schemas/deploy_status/contract.yaml", 7.0, 0.0}))
		Expect(at["response-property-removed"]).To(Equal([3]any{"schemas/deploy_status/upstream.v1.schema.json", 0.0, 0.0}))

		_, err := reports.MergeSARIF([]string{"d"}, [][]byte{buf.Bytes()})
		Expect(err).To(MatchError(ContainSubstring("d: an unsharded sarif report")))
		Expect(reports.WriteDiffSARIF(&bytes.Buffer{}, d, rules[:1], "v0")).To(MatchError(ContainSubstring("not in the registry")))
	})

	It("writes drift findings, unexpected refusals, broken contracts and version changes", func() {
		d := sampleDrift(true)
		d.Broken = []reports.BrokenContract{{Tool: "broken_tool", File: "schemas/broken_tool/contract.yaml", Message: "schemas/broken_tool/contract.yaml:1:1: bad"}}
		rules := []reports.DiffRule{
			{ID: "response-property-removed", Level: reports.Breaking, Description: "A property was removed."},
			{ID: "response-property-added", Level: reports.ContractChange, Description: "A property was added."},
			{ID: "response-property-enum-value-removed", Level: reports.Compatible, Description: "An enum value was removed."},
		}
		d.Shard = shard.Shard{Index: 1, Count: 2}
		var buf bytes.Buffer
		Expect(reports.WriteDriftSARIF(&buf, d, reports.DriftSARIFOptions{Version: "v0.0.0-test", FixturesDir: "fixtures", DiffRules: rules})).To(Succeed())
		m := validSARIF(buf.Bytes())
		Expect(sarifRun(m)["automationDetails"]).To(Equal(map[string]any{"id": "airlock/drift/"}))
		Expect(sarifRun(m)["properties"]).To(Equal(map[string]any{"airlock/shard": "1/2"}))
		Expect(sarifRuleIDs(m)).To(ContainElements(reports.FindingKinds))
		got := map[string]map[string]any{}
		for _, r := range sarifResults(m) {
			got[r["ruleId"].(string)] = r
		}
		Expect(got["retyped"]["level"]).To(Equal("error"))
		Expect(got["new-enum-value"]["level"]).To(Equal("note"))
		Expect(got["new-enum-value"]["relatedLocations"]).To(HaveLen(4))
		uri, line, _, _ := physical(got["retyped"])
		Expect(uri).To(Equal("fixtures/deploy_status/v1/recorded/state-object.json"))
		Expect(line).To(Equal(1.0))
		Expect(got["unexpected-refusal"]["level"]).To(Equal("error"))
		Expect(got["broken-contract"]["level"]).To(Equal("error"))
		Expect(got["response-property-removed"]["level"]).To(Equal("error"), "the report fails on version changes")

		d.Summary.VersionChangesBreak = false
		buf.Reset()
		Expect(reports.WriteDriftSARIF(&buf, d, reports.DriftSARIFOptions{Version: "v0.0.0-test", DiffRules: rules})).To(Succeed())
		for _, r := range sarifResults(validSARIF(buf.Bytes())) {
			if r["ruleId"] == "response-property-removed" {
				Expect(r["level"]).To(Equal("warning"))
			}
		}
	})

	It("keeps within GitHub's result limit, the most severe first, and says how many it left out", func() {
		rules := []reports.DiffRule{
			{ID: "b", Level: reports.Breaking, Description: "Breaking."},
			{ID: "c", Level: reports.Compatible, Description: "Compatible."},
		}
		var changes []reports.Change
		for i := range 100 {
			changes = append(changes, reports.Change{Rule: "c", Level: reports.Compatible, Instance: fmt.Sprintf("/c%d", i), Message: "narrowed"})
		}
		for i := range reports.MaxSARIFResults {
			changes = append(changes, reports.Change{Rule: "b", Level: reports.Breaking, Instance: fmt.Sprintf("/b%d", i), Message: "widened"})
		}
		d := &reports.Diff{Comparisons: []reports.Comparison{{Name: "x", Old: "old.json", New: "new.json", Changes: changes}}}
		var buf bytes.Buffer
		Expect(reports.WriteDiffSARIF(&buf, d, rules, "v0")).To(Succeed())
		Expect(reports.CheckGitHubSARIF(buf.Bytes())).To(Succeed())
		var m map[string]any
		Expect(json.Unmarshal(buf.Bytes(), &m)).To(Succeed())
		res := sarifResults(m)
		Expect(res).To(HaveLen(reports.MaxSARIFResults))
		for _, r := range res {
			Expect(r["ruleId"]).To(Equal("b"))
		}
		run := sarifRun(m)
		Expect(run["properties"]).To(HaveKeyWithValue("airlock/omittedResults", 100.0))
		Expect(buf.String()).To(ContainSubstring("100 result(s) left out"))
	})

	It("keeps a log of long messages under the size limit", func() {
		long := strings.Repeat("é", 10000)
		r := &reports.Run{}
		for i := range 4000 {
			r.Cases = append(r.Cases, reports.Case{Tool: "t", UpstreamVersion: "v1", Kind: "accepted", Suite: "schema", Name: fmt.Sprintf("f%05d.json", i),
				File: fmt.Sprintf("fixtures/t/v1/accepted/f%05d.json", i), Status: reports.Failed, Expected: "admitted", Actual: "schema.type", Message: long})
		}
		var buf bytes.Buffer
		Expect(reports.WriteRunSARIF(&buf, r, "v0")).To(Succeed())
		Expect(buf.Len()).To(BeNumerically("<", 10_000_000))
		Expect(reports.CheckGitHubSARIF(buf.Bytes())).To(Succeed())
		var m map[string]any
		Expect(json.Unmarshal(buf.Bytes(), &m)).To(Succeed())
		n := len(sarifResults(m))
		Expect(n).To(BeNumerically(">", 0))
		Expect(n).To(BeNumerically("<", 4000))
		Expect(sarifRun(m)["properties"]).To(HaveKeyWithValue("airlock/omittedResults", float64(4000-n)))
	})

	It("CheckGitHubSARIF refuses what code scanning refuses", func() {
		ok := `{"version":"2.1.0","runs":[{"results":[{"ruleId":"r","message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"a/b.json"}}}]}]}]}`
		Expect(reports.CheckGitHubSARIF([]byte(`{"version":"2.1.0","runs":[{"results":[{"ruleId":"r","message":{"text":"m"},"locations":[]}]}]}`))).To(MatchError(ContainSubstring("no location")))
		Expect(reports.CheckGitHubSARIF([]byte(ok))).To(Succeed())
		for _, uri := range []string{"/etc/passwd", "file:///etc/passwd", "../outside.json", "a/../../x", "https://example.invalid/x"} {
			bad := strings.Replace(ok, "a/b.json", uri, 1)
			Expect(reports.CheckGitHubSARIF([]byte(bad))).To(HaveOccurred(), uri)
		}
		Expect(reports.CheckGitHubSARIF([]byte(`{"version":"2.0.0","runs":[]}`))).To(HaveOccurred())
		runs := strings.TrimSuffix(strings.Repeat(`{"results":[]},`, reports.MaxSARIFRuns+1), ",")
		Expect(reports.CheckGitHubSARIF([]byte(`{"version":"2.1.0","runs":[` + runs + `]}`))).To(MatchError(ContainSubstring("runs")))
		Expect(reports.CheckGitHubSARIF([]byte(`{"version":"2.1.0","runs":[{"results":[{"ruleId":"r","message":{"text":""}}]}]}`))).To(HaveOccurred())
	})
})

func isSorted(s []string) bool {
	for i := 1; i < len(s); i++ {
		if s[i-1] > s[i] {
			return false
		}
	}
	return true
}
