package gate_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing/fstest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/strictjson"
)

// The suite's schemas under a contract's strict load (schema.Dir): each
// group's schema as the only file of a contract folder. The conformance
// run above compiles them with schema.NewCompiler alone, as the suite
// intends; this one checks that the strict walk refuses no schema a
// contract may hold, and refuses the ones that test what a contract may
// not (unknown keywords, unknown formats, other metaschemas, …), each for
// the stated reason. Schemas that $ref the suite's remotes are outside a
// contract folder and are only counted.

// confStrictGroup names one group of the suite.
type confStrictGroup struct{ file, group string }

// conformanceStrictRefusals are the groups strict load refuses, with a
// fragment of the message; file is relative to tests/draft2020-12.
var conformanceStrictRefusals = map[confStrictGroup]string{
	{"format.json", "idn-email format"}:                                                                         `format "idn-email" is JSON Schema 2020-12 but the validator has no checker`,
	{"format.json", "idn-hostname format"}:                                                                      `format "idn-hostname" is JSON Schema 2020-12 but the validator has no checker`,
	{"if-then-else.json", "ignore then without if"}:                                                             `"then" without "if" is ignored`,
	{"if-then-else.json", "ignore else without if"}:                                                             `"else" without "if" is ignored`,
	{"if-then-else.json", "non-interference across combined schemas"}:                                           `"then" without "if" is ignored`,
	{"maxContains.json", "maxContains without contains is ignored"}:                                             `"maxContains" without "contains" is ignored`,
	{"minContains.json", "minContains without contains is ignored"}:                                             `"minContains" without "contains" is ignored`,
	{"ref.json", "ref to then"}:                                                                                 `"then" without "if" is ignored`,
	{"ref.json", "ref to else"}:                                                                                 `"else" without "if" is ignored`,
	{"vocabulary.json", "schema that uses custom metaschema with with no validation vocabulary"}:                `contracts are JSON Schema 2020-12 only`,
	{"vocabulary.json", "ignore unrecognized optional vocabulary"}:                                              `contracts are JSON Schema 2020-12 only`,
	{"optional/dependencies-compatibility.json", "single dependency"}:                                           `"dependencies" is not a JSON Schema 2020-12 keyword`,
	{"optional/dependencies-compatibility.json", "empty dependents"}:                                            `"dependencies" is not a JSON Schema 2020-12 keyword`,
	{"optional/dependencies-compatibility.json", "multiple dependents required"}:                                `"dependencies" is not a JSON Schema 2020-12 keyword`,
	{"optional/dependencies-compatibility.json", "dependencies with escaped characters"}:                        `"dependencies" is not a JSON Schema 2020-12 keyword`,
	{"optional/dependencies-compatibility.json", "single schema dependency"}:                                    `"dependencies" is not a JSON Schema 2020-12 keyword`,
	{"optional/dependencies-compatibility.json", "boolean subschemas"}:                                          `"dependencies" is not a JSON Schema 2020-12 keyword`,
	{"optional/dependencies-compatibility.json", "schema dependencies with escaped characters"}:                 `"dependencies" is not a JSON Schema 2020-12 keyword`,
	{"optional/ecmascript-regex.json", "ECMA 262 regex escapes control codes with \\c and upper letter"}:        "invalid escape sequence",
	{"optional/ecmascript-regex.json", "ECMA 262 regex escapes control codes with \\c and lower letter"}:        "invalid escape sequence",
	{"optional/format-assertion.json", "schema that uses custom metaschema with format-assertion: false"}:       `contracts are JSON Schema 2020-12 only`,
	{"optional/format-assertion.json", "schema that uses custom metaschema with format-assertion: true"}:        `contracts are JSON Schema 2020-12 only`,
	{"optional/refOfUnknownKeyword.json", "reference of a root arbitrary keyword "}:                             `unknown keyword "unknown-keyword"`,
	{"optional/refOfUnknownKeyword.json", "reference of an arbitrary keyword of a sub-schema"}:                  `unknown keyword "unknown-keyword"`,
	{"optional/refOfUnknownKeyword.json", "reference of a root arbitrary keyword with encoded ref"}:             `unknown keyword "unknown/keyword"`,
	{"optional/refOfUnknownKeyword.json", "reference of an arbitrary keyword of a sub-schema with encoded ref"}: `unknown keyword "unknown/keyword"`,
	{"optional/refOfUnknownKeyword.json", "reference internals of known non-applicator"}:                        `$ref reaches`,
	{"optional/unknownKeyword.json", "$id inside an unknown keyword is not a real identifier"}:                  `unknown keyword "array_of_schemas"`,
	{"optional/format/idn-email.json", "validation of an internationalized e-mail addresses"}:                   `format "idn-email" is JSON Schema 2020-12 but the validator has no checker`,
	{"optional/format/idn-hostname.json", "validation of internationalized host names"}:                         `format "idn-hostname" is JSON Schema 2020-12 but the validator has no checker`,
	{"optional/format/idn-hostname.json", "validation of separators in internationalized host names"}:           `format "idn-hostname" is JSON Schema 2020-12 but the validator has no checker`,
	{"optional/format/unknown.json", "unknown format"}:                                                          `unknown format "unknown"`,
}

var _ = Describe("JSON-Schema-Test-Suite draft2020-12 under strict load", Label("conformance"), func() {
	corpus, missing := conformanceCorpus("JSON-Schema-Test-Suite")
	if missing != "" {
		It("finds the corpus", func() { conformanceMissing(missing) })
		return
	}
	testsDir := filepath.Join(corpus, "tests", "draft2020-12")

	It("refuses exactly the listed groups, for the stated reasons, and loads every other one", func() {
		refused := map[confStrictGroup]string{}
		loaded, remote := 0, 0
		for _, folder := range []string{"", "optional", "optional/format"} {
			names, err := confList(filepath.Join(testsDir, filepath.FromSlash(folder)))
			Expect(err).NotTo(HaveOccurred())
			for _, name := range names {
				if !strings.HasSuffix(name, ".json") {
					continue
				}
				file := path.Join(folder, name)
				doc, err := strictjson.Parse(confRead(filepath.Join(testsDir, filepath.FromSlash(file))), conformanceSchemaLimits)
				Expect(err).NotTo(HaveOccurred())
				for _, g := range doc.([]any) {
					group := g.(map[string]any)
					desc, _ := group["description"].(string)
					key := confStrictGroup{file, desc}
					Expect(refused).NotTo(HaveKey(key), "%v appears twice", key)
					body, err := json.Marshal(group["schema"])
					Expect(err).NotTo(HaveOccurred())
					dir := schema.NewDir(fstest.MapFS{"s.json": {Data: body}}, ".", "")
					_, err = dir.Compile("s.json")
					switch {
					case err == nil:
						loaded++
					case errors.Is(err, schema.ErrNotStrict):
						refused[key] = err.Error()
					case errors.Is(err, schema.ErrOutsideContract):
						remote++
					default:
						refused[key] = "not refused by the strict checks: " + err.Error()
					}
				}
			}
		}
		var problems []string
		for k, msg := range refused {
			want, ok := conformanceStrictRefusals[k]
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("refused but not listed: %s / %q: %s", k.file, k.group, msg))
			case !strings.Contains(msg, want):
				problems = append(problems, fmt.Sprintf("refused for another reason: %s / %q: %s (want %q)", k.file, k.group, msg, want))
			}
		}
		for k := range conformanceStrictRefusals {
			if _, ok := refused[k]; !ok {
				problems = append(problems, fmt.Sprintf("listed but not refused: %s / %q", k.file, k.group))
			}
		}
		slices.Sort(problems)
		msg := fmt.Sprintf("JSON-Schema-Test-Suite draft2020-12 strict load: %d groups load, %d refused as listed, %d reach the suite's remotes",
			loaded, len(refused), remote)
		fmt.Println(msg)
		fmt.Fprintln(GinkgoWriter, msg)
		if len(problems) > 0 {
			Fail(strings.Join(problems, "\n"))
		}
	})
})
