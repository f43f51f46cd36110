package gate

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/semantic"
)

// ManifestFile is the name of a contract manifest inside schemas/<tool>/.
const ManifestFile = "contract.yaml"

//go:embed contract.schema.json
var manifestSchemaJSON []byte

// ManifestSchema returns the published JSON Schema of contract.yaml, the
// same bytes as schemas/contract.schema.json in the repository.
func ManifestSchema() []byte { return slices.Clone(manifestSchemaJSON) }

var manifestSchema = func() *jsonschema.Schema {
	doc, err := Parse(manifestSchemaJSON, schemaFileLimits)
	if err != nil {
		panic("gate: embedded contract.schema.json: " + err.Error())
	}
	c := NewSchemaCompiler(nil)
	const url = "airlock:contract.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		panic(err)
	}
	return c.MustCompile(url)
}()

// Manifest is the decoded contract.yaml; its format is published as
// schemas/contract.schema.json, which documents each field.
type Manifest struct {
	Tool             string                     `yaml:"tool"`
	Version          string                     `yaml:"version"`
	Description      string                     `yaml:"description"`
	Current          string                     `yaml:"current"`
	Protocol         string                     `yaml:"protocol"`
	AgentSchema      string                     `yaml:"agent_schema"`
	ErrorCodes       []ErrorCode                `yaml:"error_codes"`
	ContentTypes     []string                   `yaml:"content_types"`
	Limits           Limits                     `yaml:"limits"`
	Retryable        map[string]bool            `yaml:"retryable"`
	UpstreamVersions map[string]UpstreamVersion `yaml:"upstream_versions"`
}

// UpstreamVersion is one upstream version's part of the manifest.
type UpstreamVersion struct {
	Schema      string            `yaml:"schema"`
	Description string            `yaml:"description"`
	Projection  map[string]string `yaml:"projection"`
	Rules       []RuleSpec        `yaml:"rules"`
}

// RuleSpec is one semantic rule in the manifest: a name and exactly one kind.
type RuleSpec struct {
	Name       string         `yaml:"name"`
	Binding    *PointerSpec   `yaml:"binding"`
	Context    *KeyedSpec     `yaml:"context"`
	Freshness  *FreshnessSpec `yaml:"freshness"`
	Membership *KeyedSpec     `yaml:"membership"`
	Custom     string         `yaml:"custom"`
}

// PointerSpec names one location in the validated value.
type PointerSpec struct {
	Pointer string `yaml:"pointer"`
}

// KeyedSpec names a location and a request context key.
type KeyedSpec struct {
	Pointer string `yaml:"pointer"`
	Key     string `yaml:"key"`
}

// FreshnessSpec configures semantic.Freshness.
type FreshnessSpec struct {
	Pointer string        `yaml:"pointer"`
	MaxAge  time.Duration `yaml:"max_age"`
	MaxSkew time.Duration `yaml:"max_skew"`
}

// Options configure contract loading.
type Options struct {
	// CustomRules are Go rules a manifest may name with "custom: <name>".
	CustomRules map[string]semantic.Rule
}

// Contract is one tool's compiled contract, safe for concurrent use.
type Contract struct {
	// Tool is the tool name, Version the contract's own version.
	Tool    string
	Version string
	// Dir is the contract's directory; Manifest the decoded contract.yaml.
	Dir      string
	Manifest Manifest

	limits       Limits
	contentTypes []string
	errorCodes   []ErrorCode
	agentSchema  *jsonschema.Schema
	versions     map[string]*upstream
	current      string
	schemas      *SchemaDir
}

type upstream struct {
	name       string
	schema     *jsonschema.Schema
	projection []projField
	rules      []semantic.Rule
}

// projField is one projection entry: agent field ← pointer.
type projField struct {
	field   string
	pointer semantic.Pointer
}

// Limits returns the contract's limits with defaults filled in.
func (c *Contract) Limits() Limits { return c.limits }

// UpstreamVersions returns the contract's upstream version names, sorted.
func (c *Contract) UpstreamVersions() []string {
	out := make([]string, 0, len(c.versions))
	for v := range c.versions {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// Current returns the upstream version checked when a call names none.
func (c *Contract) Current() string { return c.current }

// LoadContracts loads every schemas/<tool>/contract.yaml under root, sorted
// by tool name. A directory without a manifest is skipped; any broken
// contract is an error.
func LoadContracts(root string, opts Options) ([]*Contract, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, &ConfigError{File: root, Msg: fmt.Sprintf("cannot read the schemas directory (%v); run from the project root or pass --schemas", errors.Unwrap(err)), Err: err}
	}
	var out []*Contract
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue // a folder, or a link to one (contracts are only read)
		}
		if _, err := os.Stat(filepath.Join(dir, ManifestFile)); err != nil {
			continue
		}
		c, err := LoadContract(dir, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// LoadContract loads and compiles dir/contract.yaml and the schema files it
// names. Errors are *ConfigError values naming the file (and line, for the
// manifest): an unknown or duplicate key, a tool name that differs from the
// directory, a missing schema file, a bad JSON Pointer, a rule of unknown
// kind, or a $ref outside the contract's own *.json files.
func LoadContract(dir string, opts Options) (*Contract, error) {
	file := filepath.Join(dir, ManifestFile)
	data, err := ReadRegularFile(file, MaxConfigFile)
	if err != nil {
		return nil, &ConfigError{File: file, Msg: "cannot read manifest: " + err.Error(), Err: err}
	}
	var m Manifest
	if err := DecodeYAML(file, data, manifestSchema, &m); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, &ConfigError{File: dir, Err: err}
	}
	c := &Contract{
		Tool: m.Tool, Version: m.Version, Dir: dir, Manifest: m,
		limits:       m.Limits.withDefaults(),
		contentTypes: m.ContentTypes,
		errorCodes:   m.ErrorCodes,
		versions:     map[string]*upstream{},
		current:      m.Current,
	}
	cfgErr := func(key, msg string) error {
		line, col := YAMLPosition(data, key)
		return &ConfigError{File: file, Line: line, Column: col, Key: key, Msg: msg}
	}
	if base := filepath.Base(abs); base != m.Tool {
		return nil, cfgErr("/tool", fmt.Sprintf("tool %q must equal its directory name %q", m.Tool, base))
	}
	if len(c.contentTypes) == 0 {
		c.contentTypes = DefaultContentTypes
	}
	if len(c.errorCodes) == 0 {
		c.errorCodes = ErrorCodes
	}
	for reason := range m.Retryable {
		if _, ok := LookupReason(reason); !ok {
			return nil, cfgErr("/retryable/"+semantic.EscapeToken(reason), fmt.Sprintf("unknown reason %q (see docs/reasons.md)", reason))
		}
	}

	schemas, err := LoadSchemaDir(dir)
	if err != nil {
		return nil, err
	}
	c.schemas = schemas
	compile := func(key, name string) (*jsonschema.Schema, error) {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return nil, cfgErr(key, fmt.Sprintf("schema file %q not found in %s", name, dir))
		}
		return schemas.Compile(name)
	}
	if c.agentSchema, err = compile("/agent_schema", m.AgentSchema); err != nil {
		return nil, err
	}
	for name, uv := range m.UpstreamVersions {
		key := "/upstream_versions/" + semantic.EscapeToken(name)
		u := &upstream{name: name}
		if u.schema, err = compile(key+"/schema", uv.Schema); err != nil {
			return nil, err
		}
		for field, ptr := range uv.Projection {
			p, err := semantic.ParsePointer(ptr)
			if err != nil {
				return nil, cfgErr(key+"/projection/"+field, err.Error())
			}
			u.projection = append(u.projection, projField{field: field, pointer: p})
		}
		sort.Slice(u.projection, func(i, j int) bool { return u.projection[i].field < u.projection[j].field })
		seen := map[string]bool{}
		for i, rs := range uv.Rules {
			rkey := fmt.Sprintf("%s/rules/%d", key, i)
			if seen[rs.Name] {
				return nil, cfgErr(rkey+"/name", fmt.Sprintf("rule name %q is used twice", rs.Name))
			}
			seen[rs.Name] = true
			r, msg := buildRule(rs, opts)
			if msg != "" {
				return nil, cfgErr(rkey, msg)
			}
			u.rules = append(u.rules, r)
		}
		c.versions[name] = u
	}
	if c.current == "" && len(c.versions) == 1 {
		for v := range c.versions {
			c.current = v
		}
	}
	if c.current != "" && c.versions[c.current] == nil {
		return nil, cfgErr("/current", fmt.Sprintf("current upstream version %q is not in upstream_versions", c.current))
	}
	return c, nil
}

// relative shortens the contract's absolute file URLs in a message.
func (c *Contract) relative(s string) string { return c.schemas.Relative(s) }

// lineCol converts a byte offset into a 1-based line and column.
func lineCol(b []byte, off int64) (int, int) {
	if off < 0 || off > int64(len(b)) {
		return 0, 0
	}
	line, col := 1, 1
	for _, c := range b[:off] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

func buildRule(rs RuleSpec, opts Options) (semantic.Rule, string) {
	ptr := func(s string) (semantic.Pointer, string) {
		p, err := semantic.ParsePointer(s)
		if err != nil {
			return nil, err.Error()
		}
		return p, ""
	}
	switch {
	case rs.Binding != nil:
		p, msg := ptr(rs.Binding.Pointer)
		return semantic.Binding{RuleName: rs.Name, Pointer: p}, msg
	case rs.Context != nil:
		p, msg := ptr(rs.Context.Pointer)
		return semantic.ContextMatch{RuleName: rs.Name, Pointer: p, Key: rs.Context.Key}, msg
	case rs.Freshness != nil:
		p, msg := ptr(rs.Freshness.Pointer)
		if rs.Freshness.MaxAge < 0 || rs.Freshness.MaxSkew < 0 {
			return nil, "max_age and max_skew must not be negative"
		}
		return semantic.Freshness{RuleName: rs.Name, Pointer: p, MaxAge: rs.Freshness.MaxAge, MaxSkew: rs.Freshness.MaxSkew}, msg
	case rs.Membership != nil:
		p, msg := ptr(rs.Membership.Pointer)
		return semantic.Membership{RuleName: rs.Name, Pointer: p, Key: rs.Membership.Key}, msg
	case rs.Custom != "":
		r, ok := opts.CustomRules[rs.Custom]
		if !ok {
			return nil, fmt.Sprintf("custom rule %q is not registered (gate.Options.CustomRules)", rs.Custom)
		}
		return named{Rule: r, name: rs.Name}, ""
	}
	return nil, "a rule needs one of binding, context, freshness, membership or custom"
}

// named gives a registered custom rule the manifest's name.
type named struct {
	semantic.Rule
	name string
}

func (n named) Name() string { return n.name }

func (n named) Check(in semantic.Input) *semantic.Violation {
	v := n.Rule.Check(in)
	if v != nil {
		v.Rule = n.name
	}
	return v
}

// SchemaDocument returns a schema file of the contract as parsed, by file
// name; nil when the contract's schemas did not need it. Safe for concurrent
// use once the contract is loaded.
func (c *Contract) SchemaDocument(name string) any { return c.schemas.Docs[c.schemas.BaseURL+name] }
