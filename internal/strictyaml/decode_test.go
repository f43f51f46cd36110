package strictyaml_test

import (
	"errors"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/config"
	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/strictyaml"
)

// configError asserts err is a *config.Error at file f.yaml, line, whose
// message holds msg, and returns it.
func configError(err error, line int, msg string) *config.Error {
	GinkgoHelper()
	var ce *config.Error
	Expect(errors.As(err, &ce)).To(BeTrue(), "want a *config.Error, got %v", err)
	Expect(ce.File).To(Equal("f.yaml"))
	Expect(ce.Line).To(Equal(line), "%v", err)
	Expect(ce.Msg).To(ContainSubstring(msg))
	return ce
}

var _ = Describe("airlock's YAML files", func() {
	decode := func(doc string) error {
		var v struct {
			A any `yaml:"a"`
			B any `yaml:"b"`
		}
		return strictyaml.Decode("f.yaml", []byte(doc), nil, &v)
	}
	It("refuses anchors and aliases before expanding them", func() {
		ce := configError(decode("a: &x [1, 2]\nb: *x\n"), 1, "anchors and aliases are not allowed")
		Expect(ce.Column).To(Equal(4))
		configError(decode("a: [1, 2]\nb: *x\n"), 2, "anchors and aliases are not allowed")
		Expect(decode("a: \"&x *y\"\nb: x&y*z\n")).To(Succeed(), "& and * inside scalars are text")
	})
	It("refuses deep nesting of every style before parsing", func() {
		configError(decode("a: "+strings.Repeat("[", 40)+strings.Repeat("]", 40)+"\n"), 1, "nested more than 32 levels")
		configError(decode("a: "+strings.Repeat("- ", 40)+"x\n"), 1, "") // "a: - " is no YAML; the pre-scan says so first
		configError(decode("a:\n"+strings.Repeat("- ", 40)+"x\n"), 2, "nested more than 32 levels")
		configError(decode(strings.Repeat("? ", 40)+"x\n"), 1, "nested more than 32 levels")
		configError(decode("a: "+strings.Repeat("{b: ", 40)+"x"+strings.Repeat("}", 40)+"\n"), 1, "nested more than 32 levels")
		configError(decode("a: "+strings.Repeat("[b: ", 20)+"x"+strings.Repeat("]", 20)+"\n"), 1, "nested more than 32 levels")
		var deep strings.Builder
		for i := range 40 {
			deep.WriteString(strings.Repeat(" ", i) + "a:\n")
		}
		configError(decode(deep.String()), 33, "nested more than 32 levels")
		var ok strings.Builder
		for i := range 32 {
			ok.WriteString(strings.Repeat(" ", i) + "a:\n")
		}
		Expect(decode(ok.String())).To(Succeed(), "32 levels are allowed")
		Expect(decode("a: \"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\" # [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\nb: don't [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n")).To(Succeed(), "brackets in scalars and comments do not count")
		Expect(decode("a: [\"x\\\\\", \""+strings.Repeat("{", 40)+"\"]\n")).To(Succeed(), "a backslash escapes only the next character: \"x\\\\\" ends at its second quote")
		Expect(decode("a: [\"x\\\""+strings.Repeat("{", 40)+"\"]\n")).To(Succeed(), "an escaped quote does not end the scalar")
	})
	It("refuses indentation past 128 columns", func() {
		configError(decode("a:\n"+strings.Repeat(" ", 130)+"b: c\n"), 2, "indented more than 128 columns")
		Expect(decode("a: |\n"+strings.Repeat(" ", 130)+"text\n")).To(Succeed(), "a block scalar's text is not indentation")
	})
	It("refuses files over 1 MiB", func() {
		Expect(decode("a: " + strings.Repeat("x", config.MaxFile) + "\n")).To(MatchError(ContainSubstring("at most")))
	})
	It("refuses a second document, naming its line; a lone leading --- is fine", func() {
		configError(decode("a: 1\n---\nb: 2\n"), 2, "second YAML document")
		configError(decode("---\na: 1\n---\n"), 3, "second YAML document")
		configError(decode("---\n---\n"), 2, "second YAML document")
		configError(decode("a: 1\n...\nb: 2\n"), 3, "content after the end of the document (\"...\" on line 2)")
		configError(decode("a: 1\n...\n%YAML 1.1\n---\nb: 2\n"), 3, "second YAML document")
		Expect(decode("# head\n---\na: 1\n")).To(Succeed())
		Expect(decode("%YAML 1.1\n---\na: 1\n")).To(Succeed())
		configError(decode("%TAG !e! tag:example.com,2000:\n---\na: !e!x 1\n"), 1, "tag directives (%TAG) are not allowed")
		Expect(decode("a: 1\n...\n# the end\n")).To(Succeed())
		Expect(decode("a: |\n  ---\n  text\nb: \"--- x\"\n")).To(Succeed(), "--- indented inside a scalar is text")
	})
	It("refuses content after the top-level node, which the parser would drop", func() {
		configError(decode("  a: 1\n  b: 2\nc: 3\n"), 3, "content after the end of the document's top-level node")
	})
	It("refuses duplicate keys, merge keys and keys that are not scalars", func() {
		ce := configError(decode("a: 1\nb: {x: 1, y: 2, x: 3}\n"), 2, `mapping key "x" already defined at line 2`)
		Expect(ce.Column).To(Equal(17))
		configError(decode("a: {<<: {x: 1}}\n"), 1, "merge keys (<<) are not allowed")
		Expect(decode("a: {\"<<\": 1}\n")).To(Succeed(), "a quoted << is a string")
		configError(decode("a: {[x]: 1}\n"), 1, "a key must be a scalar")
	})
	It("bounds the keys of a mapping and of the file", func() {
		var many strings.Builder
		many.WriteString("a:\n")
		for i := range strictyaml.MaxMappingKeys + 1 {
			fmt.Fprintf(&many, "  k%d: v\n", i)
		}
		configError(decode(many.String()), 2, fmt.Sprintf("a mapping of more than %d keys", strictyaml.MaxMappingKeys))
	})
	It("refuses unknown keys at any depth with line, column and location", func() {
		type inner struct {
			Name string `yaml:"name"`
		}
		var v struct {
			Items []inner            `yaml:"items"`
			Named map[string]inner   `yaml:"named"`
			Free  map[string]any     `yaml:"free"`
			Skip  string             `yaml:"-"`
			Lower string             ``
			Ptr   *inner             `yaml:"ptr"`
			Inl   struct{ X string } `yaml:",inline"`
		}
		err := strictyaml.Decode("f.yaml", []byte("items:\n  - name: a\n  - nmae: b\n"), nil, &v)
		ce := configError(err, 3, `unknown key "nmae"; the keys here are name`)
		Expect(ce.Column).To(Equal(5))
		Expect(ce.Key).To(Equal("/items/1/nmae"))
		configError(strictyaml.Decode("f.yaml", []byte("named: {a: {name: x, z: 1}}\n"), nil, &v), 1, `unknown key "z"`)
		configError(strictyaml.Decode("f.yaml", []byte("skip: x\n"), nil, &v), 1, `unknown key "skip"`)
		Expect(strictyaml.Decode("f.yaml", []byte("free: {any: {thing: 1}}\nlower: x\nptr: {name: p}\nx: inline\n"), nil, &v)).To(Succeed())
		Expect(v.Lower).To(Equal("x"))
		Expect(v.Inl.X).To(Equal("inline"))
	})
	It("names the line and column of a value of the wrong type", func() {
		var v struct {
			A string `yaml:"a"`
			B int    `yaml:"b"`
		}
		ce := configError(strictyaml.Decode("f.yaml", []byte("a: x\nb: [1]\n"), nil, &v), 2, "cannot unmarshal !!seq into int")
		Expect(ce.Column).To(Equal(4))
	})
	It("names the line of syntax errors", func() {
		ce := configError(decode("a: 1\n  b: 2\n"), 2, "a mapping value")
		Expect(ce.Column).To(Equal(4))
		configError(decode("a: [1, 2\n"), 1, "did not find expected ',' or ']' in the flow sequence that starts on this line")
		configError(decode("a: 1\n\n- b\n"), 1, "did not find expected key in the block mapping that starts on this line")
		configError(decode("a: 1\nb:\n  c: 1\n  - d\n"), 3, "did not find expected key in the block mapping that starts on this line")
		configError(decode("a: 1\n\tb: 2\n"), 2, "a tab character in indentation")
		configError(decode("a: 'open\n"), 1, "a quoted string (') that is never closed")
		configError(decode("a: \"\\q\"\n"), 1, "unknown escape")
		configError(decode("a: 1\nb\n"), 2, "could not find the ':' of this key")
		configError(decode("a: x\x01\n"), 1, "control character")
		configError(decode("a: \xff\n"), 1, "not valid UTF-8")
	})
	It("keeps dates as written and refuses integers that would be rounded", func() {
		var v struct {
			A map[string]any `yaml:"a"`
		}
		Expect(strictyaml.Decode("f.yaml", []byte("a: {since: 2025-06-01, at: 2025-06-01 10:00:00, n: 9007199254740993, f: 1.5}\n"), nil, &v)).To(Succeed())
		Expect(v.A).To(Equal(map[string]any{"since": "2025-06-01", "at": "2025-06-01 10:00:00", "n": 9007199254740993, "f": 1.5}))
		ce := configError(strictyaml.Decode("f.yaml", []byte("a: {big: 123456789012345678901}\n"), nil, &v), 1, "does not fit in 64 bits")
		Expect(ce.Column).To(Equal(10))
		Expect(strictyaml.Decode("f.yaml", []byte("a: {big: \"123456789012345678901\"}\n"), nil, &v)).To(Succeed())
	})
	It("keeps numbers as written for the schema, and an empty file decodes to nothing", func() {
		var v map[string]any
		Expect(strictyaml.Decode("f.yaml", []byte("# only a comment\n"), anySchema, &v)).To(Succeed())
		Expect(v).To(BeNil())
		configError(strictyaml.Decode("f.yaml", []byte("a: .inf\n"), anySchema, &v), 1, ".inf is not representable as JSON")
	})
})

// anySchema accepts every document, so that every file reaches every
// stage of Decode.
var anySchema = func() *jsonschema.Schema {
	c := schema.NewCompiler(nil)
	if err := c.AddResource("airlock:any.json", true); err != nil {
		panic(err)
	}
	return c.MustCompile("airlock:any.json")
}()
