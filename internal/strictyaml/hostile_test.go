package strictyaml_test

import (
	"fmt"
	"runtime"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/internal/config"
	"github.com/airlockdev/airlock/internal/manifest"
	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/internal/strictyaml"
)

// The hostile-config battery: configuration files built to make a YAML
// loader blow up, each of about the size asked for (never past
// config.MaxFile). The unit specs check each is refused with the expected
// error, naming the file and line, or loaded, and that either costs at
// most hostileBudget bytes; the benchmarks print bytes allocated per input
// byte beside a harmless file of the same size.
type hostileInput struct {
	name string
	make func(size int) []byte
	// refusal is part of the expected error, with the line it names; ""
	// when the file loads. Both are for the first decodeTarget.
	refusal string
	line    int
}

// hostileBudget is the most a configuration file of up to config.MaxFile
// bytes may cost to load or refuse, in bytes allocated.
const hostileBudget = 64 << 20

// repeat repeats unit as often as fits in size bytes (at least once).
func repeat(unit string, size int) string { return strings.Repeat(unit, max(size/len(unit), 1)) }

// linesUpTo writes lines made by line(i) until the next would pass size
// bytes.
func linesUpTo(size int, line func(i int) string) []byte {
	var b strings.Builder
	for i := 0; ; i++ {
		l := line(i)
		if b.Len()+len(l) > size {
			return []byte(b.String())
		}
		b.WriteString(l)
	}
}

var hostileInputs = []hostileInput{
	{"compact nesting", func(n int) []byte { return []byte(repeat("- ", n-2) + "x\n") },
		"nested more than 32 levels", 1},
	{"compact keys", func(n int) []byte { return []byte(repeat("? ", n-2) + "x\n") },
		"nested more than 32 levels", 1},
	{"compact mappings", func(n int) []byte { return []byte(repeat("- a: ", n-2) + "x\n") },
		"a sequence entry (\"- \") cannot start here", 1}, // "- a: - a:" is not YAML; the pre-scan says where
	{"flow nesting", func(n int) []byte { return []byte(repeat("[", (n-1)/2) + repeat("]", (n-1)/2) + "\n") },
		"nested more than 32 levels", 1},
	{"flow mapping nesting", func(n int) []byte { return []byte(repeat("{a: ", n/2) + repeat("}", n/8) + "\n") },
		"nested more than 32 levels", 1},
	{"flow pairs nesting", func(n int) []byte { return []byte(repeat("[a: ", n/2) + repeat("]", n/8) + "\n") },
		"nested more than 32 levels", 1},
	{"deep block indentation", func(n int) []byte {
		return linesUpTo(n, func(i int) string { return strings.Repeat(" ", i%4000) + "a:\n" })
	}, "nested more than 32 levels", 33},
	{"wide block indentation", func(n int) []byte {
		return linesUpTo(n, func(i int) string { return strings.Repeat(" ", 200) + fmt.Sprintf("k%d: v\n", i) })
	}, "indented more than 128 columns", 1},
	{"100k keys", func(n int) []byte {
		return linesUpTo(n, func(i int) string { return fmt.Sprintf("k%d: v%d\n", i, i) })
	}, "more than 120000 YAML nodes", 60000},
	{"1001 keys in a mapping", func(n int) []byte {
		return linesUpTo(n, func(i int) string { return fmt.Sprintf("k%d: %s\n", i, strings.Repeat("v", 1000)) })
	}, "a mapping of more than 1000 keys", 1},
	{"50k keys in small mappings", func(n int) []byte {
		return linesUpTo(n, func(i int) string {
			switch {
			case i > strictyaml.MaxKeys+100:
				return strings.Repeat("x", n) // stop before MaxNodes
			case i%500 == 0:
				return fmt.Sprintf("m%d:\n", i)
			}
			return fmt.Sprintf("  k%d: %s\n", i, strings.Repeat("v", 10))
		})
	}, "more than 50000 keys", 50001},
	{"many small mappings", func(n int) []byte { return []byte(repeat("- {a: 1}\n", n)) },
		"more than 120000 YAML nodes", 40000},
	{"dense flow list", func(n int) []byte { return []byte("[" + repeat("a,", n-3) + "]\n") },
		"more than 120000 YAML nodes", 1},
	{"empty values", func(n int) []byte { return []byte(repeat("-\n", n)) },
		"more than 120000 YAML nodes", 120001},
	{"tags", func(n int) []byte { return []byte(repeat("- !!str a\n", n)) },
		"more than 120000 YAML nodes", 60000}, // a tag counts as a node of its own: errs high
	{"billion laughs", func(n int) []byte {
		var b strings.Builder
		b.WriteString("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
		for i := 'b'; i <= 'z'; i++ {
			fmt.Fprintf(&b, "%c: &%c [*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
		}
		return []byte(b.String())
	}, "anchors and aliases are not allowed", 1},
	{"aliases only", func(n int) []byte { return []byte("a: b\nc: " + repeat("*a ", n-12) + "\n") },
		"anchors and aliases are not allowed", 2},
	{"tag directives", func(n int) []byte {
		return linesUpTo(n, func(i int) string { return fmt.Sprintf("%%TAG !t%d! tag:example.com,2000:\n", i) })
	}, "tag directives (%TAG) are not allowed", 1},
	{"multi-document", func(n int) []byte { return []byte(repeat("a: 1\n---\n", n)) },
		"second YAML document", 2},
	{"document end then more", func(n int) []byte { return []byte(repeat("a: 1\n...\n", n)) },
		"content after the end of the document", 3},
	{"long plain scalar", func(n int) []byte { return []byte("a: " + repeat("x", n-5) + "\n") }, "", 0},
	{"long folded plain scalar", func(n int) []byte { return []byte("a: x\n" + repeat("  x y z\n", n-6)) }, "", 0},
	{"long quoted scalar", func(n int) []byte { return []byte(`a: "` + repeat(`\u00e9\n`, n-7) + "\"\n") }, "", 0},
	{"long block scalar", func(n int) []byte { return []byte("a: |\n" + repeat("  lorem ipsum: - [x] # y\n", n-6)) }, "", 0},
	{"long key", func(n int) []byte { return []byte(repeat("k", n-4) + ": v\n") },
		"mapping value", 1}, // a key runs at most 1,024 characters
	{"comments", func(n int) []byte { return []byte(repeat("# a comment: - [x]\n", n)) }, "", 0},
	{"comments between keys", func(n int) []byte {
		return linesUpTo(n, func(i int) string {
			if i%1000 == 999 {
				return fmt.Sprintf("k%d: v\n", i)
			}
			return "  # note\n"
		})
	}, "", 0},
	// The costliest files that load: as many nodes or keys as the bounds
	// allow, as densely as YAML allows.
	{"flow list that loads", flowList(strictyaml.MaxNodes), "", 0},
	{"small mappings that load", smallMappings(strictyaml.MaxNodes), "", 0},
	{"empty values that load", emptyValues(strictyaml.MaxNodes), "", 0},
	{"keys that load", func(n int) []byte {
		return linesUpTo(n, func(i int) string {
			if i/strictyaml.MaxMappingKeys >= strictyaml.MaxKeys/strictyaml.MaxMappingKeys-1 {
				return strings.Repeat("x", n) // stop
			}
			if i%strictyaml.MaxMappingKeys == 0 {
				return fmt.Sprintf("m%d:\n  k%d: v\n", i, i)
			}
			return fmt.Sprintf("  k%d: v\n", i)
		})
	}, "", 0},
}

// flowList, smallMappings and emptyValues make the densest files of at
// most the given number of nodes: 2 bytes a node.
func flowList(nodes int) func(int) []byte {
	return func(n int) []byte { return []byte("[" + repeat("a,", min(n-3, 2*(nodes-1))) + "]\n") }
}

func smallMappings(nodes int) func(int) []byte {
	return func(n int) []byte { return []byte(repeat("- {a: 1}\n", min(n, 9*(nodes-1)/3))) }
}

func emptyValues(nodes int) func(int) []byte {
	return func(n int) []byte { return []byte(repeat("-\n", min(n, 2*(nodes-1)))) }
}

// atSchemaBound are the costliest files a schema-checked target loads as
// far as the validator.
var atSchemaBound = []hostileInput{
	{"flow list at the schema bound", flowList(strictyaml.MaxSchemaNodes), "", 0},
	{"small mappings at the schema bound", smallMappings(strictyaml.MaxSchemaNodes), "", 0},
	{"empty values at the schema bound", emptyValues(strictyaml.MaxSchemaNodes), "", 0},
}

// targetInputs are more hostile inputs for one decodeTarget: files that
// pass the top of its published schema and fail it everywhere below, for
// the validator's cost grows with its errors.
var targetInputs = map[string][]hostileInput{
	"contract.yaml": {{"schema errors everywhere", func(n int) []byte {
		var b strings.Builder
		b.WriteString("tool: t\nversion: \"1\"\nagent_schema: a.json\ncurrent: v0\nupstream_versions:\n")
		for k := 0; k < strictyaml.MaxSchemaNodes/2-200 && b.Len() < n-64; k++ {
			if k%(strictyaml.MaxMappingKeys-1) == 0 {
				fmt.Fprintf(&b, "  v%d:\n    schema: s.json\n    projection:\n", k)
			}
			fmt.Fprintf(&b, "      F%d: no pointer\n", k)
		}
		return []byte(b.String())
	}, "", 0}},
	"sidecar": {{"schema errors everywhere", func(n int) []byte {
		var b strings.Builder
		b.WriteString("recorded:\n  redacted:\n")
		for i := 0; b.Len() < n-64 && i < strictyaml.MaxSchemaNodes/5-10; i++ {
			fmt.Fprintf(&b, "    - {where: nowhere, x: %d}\n", i)
		}
		return []byte(b.String())
	}, "", 0}},
}

// harmless is an ordinary file of about size bytes: a requests file of
// calls, about 11 bytes a node (94,000 nodes at 1 MiB).
func harmless(size int) []byte {
	return linesUpTo(size, func(i int) string {
		if i%8 != 0 {
			return []string{"", "  request_id: req.000000\n", "  context:\n", "    change_id: CR-10000\n",
				"    project: airlock\n", "  url: https://reviews.example/api/changes/CR-1\n", "  headers:\n",
				"    Accept: application/json\n"}[i%8]
		}
		return fmt.Sprintf("- name: call-%06d\n", i/8)
	})
}

// harmlessProse is an ordinary file of about size bytes with more text
// than structure (a description in each call), about 50 bytes a node, so
// that even at 1 MiB it stays under MaxSchemaNodes.
func harmlessProse(size int) []byte {
	return linesUpTo(size, func(i int) string {
		if i%3 == 1 {
			return "  request_id: req.000000\n"
		}
		if i%3 == 2 {
			return "  description: " + strings.Repeat("Fetches the review decision of one change. ", 20) + "\n"
		}
		return fmt.Sprintf("- name: call-%06d\n", i/3)
	})
}

// decodeTarget is one way airlock decodes a configuration file.
type decodeTarget struct {
	name   string
	schema bool // checked against a schema: MaxSchemaNodes applies
	decode func(data []byte) error
}

// harmless is the target's harmless file of a given size.
func (t decodeTarget) harmless() func(int) []byte {
	if t.schema {
		return harmlessProse
	}
	return harmless
}

var metaSchema = func() *jsonschema.Schema {
	doc, err := strictjson.Parse(fixture.MetaSchema(), strictjson.Limits{})
	if err != nil {
		panic(err)
	}
	c := schema.NewCompiler(nil)
	if err := c.AddResource("airlock:meta.json", doc); err != nil {
		panic(err)
	}
	return c.MustCompile("airlock:meta.json")
}()

// decodeTargets are the ways airlock decodes a configuration file, the
// costliest first: a decode into an interface (a requests file's
// arguments are one), without and with a schema (one that accepts
// anything, so every file reaches every stage), a contract manifest and a
// sidecar. The battery's expected errors are the first target's.
var decodeTargets = []decodeTarget{
	{"requests file", false, func(data []byte) error {
		var v any
		return strictyaml.Decode("f.yaml", data, nil, &v)
	}},
	{"schema, into any", true, func(data []byte) error {
		var v any
		return strictyaml.Decode("f.yaml", data, anySchema, &v)
	}},
	{"contract.yaml", true, func(data []byte) error {
		_, err := manifest.Decode("f.yaml", data)
		return err
	}},
	{"sidecar", true, func(data []byte) error {
		var m fixture.Meta
		return strictyaml.Decode("f.yaml", data, metaSchema, &m)
	}},
}

// inputsFor is every input of the battery that target is to meet.
func inputsFor(target decodeTarget) []hostileInput {
	ins := append([]hostileInput{{"harmless", target.harmless(), "", 0}}, hostileInputs...)
	if target.schema {
		ins = append(ins, atSchemaBound...)
	}
	return append(ins, targetInputs[target.name]...)
}

// allocated returns the bytes f allocates and its error.
func allocated(f func() error) (uint64, error) {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, err
}

// perByteBound is the most a configuration file may cost per byte of
// input, in bytes allocated, beyond fixedBound; the densest file the
// bounds let load (a flow list of one-letter scalars, MaxNodes of them)
// costs about 170.
const (
	perByteBound = 256
	fixedBound   = 1 << 20
)

// The hostile-config battery (hostile_test.go): every input is loaded or
// refused as expected, naming the file and line, and costs at most
// hostileBudget (64 MB) and perByteBound a byte, through every way airlock
// decodes a configuration file, at 1 MiB and (the costliest way) at 64 KiB.
// Allocation, not time: the bound must hold on any machine.
var _ = Describe("the hostile-config battery", func() {
	BeforeEach(func() {
		if strictyaml.RaceEnabled {
			Skip("allocation bounds hold without -race; make test runs the battery so")
		}
	})
	for t, target := range decodeTargets {
		Describe(target.name, func() {
			for _, in := range inputsFor(target) {
				It(in.name, func() {
					sizes := []int{config.MaxFile}
					if t == 0 {
						sizes = append(sizes, 64<<10)
					}
					for _, size := range sizes {
						data := in.make(size)
						Expect(len(data)).To(BeNumerically("<=", config.MaxFile))
						got, err := allocated(func() error { return target.decode(data) })
						limit := min(uint64(hostileBudget), uint64(perByteBound*len(data)+fixedBound))
						Expect(got).To(BeNumerically("<=", limit), "%d bytes allocated for %d bytes of input (%.1f a byte); error: %v",
							got, len(data), float64(got)/float64(len(data)), err)
						if t != 0 || size != config.MaxFile {
							continue
						}
						if in.refusal == "" {
							Expect(err).NotTo(HaveOccurred())
						} else {
							configError(err, in.line, in.refusal)
						}
					}
				})
			}
		})
	}
})
