package schemadiff_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/internal/testtree"
	"github.com/airlockdev/airlock/reports"
	"github.com/airlockdev/airlock/schemadiff"
)

// url is a relative path as a SARIF artifact URI.
func url(p string) string { return strings.ReplaceAll(p, "é", "%C3%A9") }

// placed is where a change was placed: file (relative to the tree), line
// and column.
type placed struct {
	File         string
	Line, Column int
}

var _ = Describe("placing a schema change in the new schema's files", func() {
	// The new schema spreads its changes over lines, over a sibling file
	// reached by $ref, and over a shared component; "état" before a key
	// makes columns count code points, not bytes.
	files := map[string]string{
		"schemas/t/old.json": `{"type": "object", "additionalProperties": false, "required": ["id", "gone"],
 "properties": {
  "id": {"type": "integer"},
  "gone": {"type": "string"},
  "state": {"$ref": "defs.json#/$defs/state"},
  "user": {"$ref": "../_components/gh/v1/user.schema.json"}
 }}`,
		"schemas/t/new.json": `{"type": "object", "additionalProperties": false, "required": ["id"],
 "properties": {
  "id": {"type": "integer"},
  "état": {"type": "string"}, "extra": {"type": "string"},
  "state": {"$ref": "defs.json#/$defs/state"},
  "user": {"$ref": "../_components/gh/v1/user.schema.json"}
 }}`,
		"schemas/t/defs.json": `{"$defs": {
  "state": {
    "enum": ["ok", "failed", "new"]
  }
}}`,
		"schemas/_components/gh/v1/user.schema.json": `{"type": "object",
  "properties": {
    "login": {"type": "string", "maxLength": 64}
  }
}`,
	}
	// The old side's state enum and user component.
	oldFiles := map[string]string{
		"schemas/t/defs.json":                        `{"$defs": {"state": {"enum": ["ok", "failed"]}}}`,
		"schemas/_components/gh/v1/user.schema.json": `{"type": "object", "properties": {"login": {"type": "string", "maxLength": 32}}}`,
	}

	It("gives each change the file, line and column of its NewPointer, $refs followed, and SARIF the same region", func() {
		newRoot := testtree.Tree(files)
		oldTree := map[string]string{"schemas/t/new.json": files["schemas/t/old.json"]}
		for k, v := range oldFiles {
			oldTree[k] = v
		}
		oldRoot := testtree.Tree(oldTree)
		d, err := schemadiff.Files(filepath.Join(oldRoot, "schemas/t/new.json"), filepath.Join(newRoot, "schemas/t/new.json"))
		Expect(err).NotTo(HaveOccurred())
		got := map[string]placed{}
		for _, c := range d.Comparisons[0].Changes {
			rel, err := filepath.Rel(newRoot, c.NewFile)
			Expect(err).NotTo(HaveOccurred(), "%s: %q", c.Rule, c.NewFile)
			got[c.Rule+" "+c.Instance] = placed{filepath.ToSlash(rel), c.NewLine, c.NewColumn}
		}
		Expect(got).To(Equal(map[string]placed{
			// Removed: the enclosing "properties" of the new file.
			schemadiff.RulePropertyRemoved + " /gone": {"schemas/t/new.json", 2, 2},
			// Added: the member's key, after "état" (4 code points, 5 bytes).
			schemadiff.RulePropertyAdded + " /état":  {"schemas/t/new.json", 4, 3},
			schemadiff.RulePropertyAdded + " /extra": {"schemas/t/new.json", 4, 31},
			// Behind a $ref into a sibling: the enum keyword in defs.json.
			schemadiff.RuleEnumValueAdded + " /state": {"schemas/t/defs.json", 3, 5},
			// Behind a $ref into a shared component.
			schemadiff.RuleLengthLoosened + " /user/login": {"schemas/_components/gh/v1/user.schema.json", 3, 33},
		}))

		// The SARIF log places each change there too (the tree made
		// relative, as a repository's paths are).
		for i := range d.Comparisons[0].Changes {
			c := &d.Comparisons[0].Changes[i]
			r, err := filepath.Rel(newRoot, c.NewFile)
			Expect(err).NotTo(HaveOccurred())
			c.NewFile = r
		}
		var buf bytes.Buffer
		Expect(reports.WriteDiffSARIF(&buf, d, schemadiff.ReportRules(), "v0.0.0-test")).To(Succeed())
		var log struct {
			Runs []struct {
				Results []struct {
					RuleID    string `json:"ruleId"`
					Locations []struct {
						PhysicalLocation struct {
							ArtifactLocation struct{ URI string } `json:"artifactLocation"`
							Region           struct{ StartLine, StartColumn int }
						} `json:"physicalLocation"`
						LogicalLocations []struct {
							Name string
						} `json:"logicalLocations"`
					}
				}
			}
		}
		Expect(json.Unmarshal(buf.Bytes(), &log)).To(Succeed())
		inSARIF := map[string]placed{}
		for _, r := range log.Runs[0].Results {
			l := r.Locations[0]
			p := l.PhysicalLocation
			inSARIF[r.RuleID+" "+l.LogicalLocations[0].Name] = placed{p.ArtifactLocation.URI, p.Region.StartLine, p.Region.StartColumn}
		}
		Expect(inSARIF).To(HaveLen(len(got)))
		for k, v := range inSARIF {
			Expect(got).To(HaveKey(k))
			w := got[k]
			w.File = url(w.File)
			Expect(v).To(Equal(w), k)
		}
	})
})
