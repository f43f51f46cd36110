// Package manifest is the decoded form of a contract manifest
// (schemas/<tool>/contract.yaml) and its published JSON Schema. The gate
// decodes manifests with it; harness tools read a contract's manifest (a
// deep copy) through package introspect.
package manifest

import (
	_ "embed"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/config"
	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/internal/strictyaml"
)

//go:embed contract.schema.json
var schemaJSON []byte

// SchemaJSON returns the published JSON Schema of contract.yaml, the same
// bytes as schemas/contract.schema.json in the repository.
func SchemaJSON() []byte { return slices.Clone(schemaJSON) }

// compiled is the manifest schema, compiled at its first use (a command
// that reads no contract never pays for it) and once only. A failure is a
// programming error and panics, at every call.
var compiled = sync.OnceValue(func() *jsonschema.Schema {
	compiles.Add(1)
	doc, err := strictjson.Parse(schemaJSON, schema.FileLimits)
	if err != nil {
		panic("manifest: embedded contract.schema.json: " + err.Error())
	}
	c := schema.NewCompiler(nil)
	const url = "airlock:contract.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		panic(err)
	}
	return c.MustCompile(url)
})

// compiles counts the compilations of the manifest schema (at most one);
// the tests read it.
var compiles atomic.Int32

// Decode decodes a contract.yaml strictly (strictyaml.Decode against the
// published schema), then checks what the schema cannot say
// (CheckLintIgnore); errors are *config.Error values naming file and line.
func Decode(file string, data []byte) (Manifest, error) {
	var m Manifest
	if err := strictyaml.Decode(file, data, compiled(), &m); err != nil {
		return m, err
	}
	if i, msg := CheckLintIgnore(m.Lint.Ignore); msg != "" {
		key := fmt.Sprintf("/lint/ignore/%d/file", i)
		line, col := strictyaml.Position(data, key)
		return m, &config.Error{File: file, Line: line, Column: col, Key: key, Msg: msg}
	}
	return m, nil
}

// AnyRule is the rule of a lint.ignore entry that accepts every rule's
// findings in the files its file names.
const AnyRule = "*"

// componentsPrefix is how a contract's $refs name the shared components
// folder (schemas/_components), and so how lint.ignore's file names it.
const componentsPrefix = "../_components/"

// CheckLintIgnore returns the index of the first lint.ignore entry that
// accepts too much, and why ("" when none does). An AnyRule entry may only
// name the vendor's shared components that airlock import wrote: its file
// must start with ../_components/<api>/<version>/ with <api> and <version>
// written out (no *, ? or **) and name something below it. A glob over
// the contract's own files ("*", "**", "?*", "*.*") or over every
// component ("../_components/**") with rule "*" would accept every finding
// of the contract, and turn off run --strict with one line: such an entry
// must name its rule (docs/lint.md, Accepting a finding).
func CheckLintIgnore(ignore []LintIgnore) (int, string) {
	for i, ig := range ignore {
		if ig.Rule != AnyRule {
			continue
		}
		rest, ok := strings.CutPrefix(ig.File, componentsPrefix)
		segs := strings.Split(rest, "/")
		ok = ok && len(segs) >= 3 && segs[len(segs)-1] != ""
		for j := 0; ok && j < 2; j++ {
			ok = segs[j] != "" && !strings.ContainsAny(segs[j], "*?")
		}
		if !ok {
			return i, fmt.Sprintf(`lint.ignore with rule "*" names file %q: an entry for every rule may only name the vendor's components under ../_components/<api>/<version>/, both written out (the importer writes ../_components/<api>/<version>/*); for the contract's own files, or across APIs and versions, name the rule the entry accepts (docs/lint.md, Accepting a finding)`, ig.File)
		}
	}
	return 0, ""
}

// Manifest is the decoded contract.yaml; schemas/contract.schema.json
// documents each field.
type Manifest struct {
	Tool        string `yaml:"tool"`
	Version     string `yaml:"version"`
	Description string `yaml:"description"`
	Current     string `yaml:"current"`
	Protocol    string `yaml:"protocol"`
	// Result is where an MCP contract finds the value it checks:
	// "structured" (structuredContent; also when ""), "text" (the JSON text
	// of one text content block) or "auto". Only with protocol: mcp.
	Result string `yaml:"result"`
	// TextBlock is the index in content of the text block a text or auto
	// result reads; nil means the only text block.
	TextBlock   *int   `yaml:"text_block"`
	AgentSchema string `yaml:"agent_schema"`
	// AgentErrorSchema is the closed schema a matched upstream error's
	// detail object must satisfy; "" means none.
	AgentErrorSchema string                     `yaml:"agent_error_schema"`
	ErrorCodes       []string                   `yaml:"error_codes"`
	ContentTypes     []string                   `yaml:"content_types"`
	Limits           Limits                     `yaml:"limits"`
	Retryable        map[string]bool            `yaml:"retryable"`
	Statuses         map[string]StatusSpec      `yaml:"statuses"`
	Formats          map[string]string          `yaml:"formats"`
	UpstreamVersions map[string]UpstreamVersion `yaml:"upstream_versions"`
	Lint             Lint                       `yaml:"lint"`
	// Text is the text policy of projected strings (docs/contracts.md,
	// "Text policy"); the zero value takes every default.
	Text Text `yaml:"text"`
}

// Text is the manifest's text section: the policy every string the agent
// receives from a projected field (or a matched error's detail) must meet.
// Default applies to every field; an entry of Fields (by agent field name
// of a projection) or DetailFields (by detail field name) overrides it key
// by key.
type Text struct {
	Default      TextPolicy            `yaml:"default"`
	Fields       map[string]TextPolicy `yaml:"fields"`
	DetailFields map[string]TextPolicy `yaml:"detail_fields"`
}

// TextPolicy is one text policy as written; a nil key is not set (the
// default's, or the built-in default: no max_length, no normalization
// form, controls TAB and LF, bidi and zero-width characters refused, not
// untrusted_text).
type TextPolicy struct {
	// MaxLength is the most Unicode code points one string may hold.
	MaxLength *int `yaml:"max_length"`
	// Normalization is the Unicode normalization form every string must
	// already be in: "none", "NFC", "NFD", "NFKC" or "NFKD".
	Normalization *string `yaml:"normalization"`
	// Controls are the control characters allowed: "TAB", "LF", "CR".
	Controls []string `yaml:"controls"`
	// Bidi allows the bidirectional formatting characters.
	Bidi *bool `yaml:"bidi"`
	// ZeroWidth allows the zero-width and invisible characters.
	ZeroWidth *bool `yaml:"zero_width"`
	// TagCharacters allows the TAG characters U+E0000–U+E007F.
	TagCharacters *bool `yaml:"tag_characters"`
	// UntrustedText wraps every string of the field as
	// {"untrusted_text": "<string>"} in the agent output.
	UntrustedText *bool `yaml:"untrusted_text"`
}

// Clone returns a deep copy of p.
func (p TextPolicy) Clone() TextPolicy {
	p.MaxLength = cloneInt(p.MaxLength)
	if p.Normalization != nil {
		s := *p.Normalization
		p.Normalization = &s
	}
	if p.Controls != nil {
		p.Controls = slices.Clone(p.Controls)
	}
	p.Bidi, p.ZeroWidth, p.UntrustedText = cloneBool(p.Bidi), cloneBool(p.ZeroWidth), cloneBool(p.UntrustedText)
	p.TagCharacters = cloneBool(p.TagCharacters)
	return p
}

func cloneBool(p *bool) *bool {
	if p == nil {
		return nil
	}
	b := *p
	return &b
}

func clonePolicies(m map[string]TextPolicy) map[string]TextPolicy {
	if m == nil {
		return nil
	}
	out := make(map[string]TextPolicy, len(m))
	for k, v := range m {
		out[k] = v.Clone()
	}
	return out
}

// StatusSpec is one entry of the manifest's statuses section: what a
// non-success upstream status (the key: "404", or a class such as "4xx")
// means to the agent. Retryable nil means true for UPSTREAM_UNAVAILABLE,
// false otherwise.
type StatusSpec struct {
	ErrorCode string `yaml:"error_code"`
	Retryable *bool  `yaml:"retryable"`
}

// Lint is the manifest's lint section: what airlock lint is told to
// accept. The gate ignores it.
type Lint struct {
	Ignore []LintIgnore `yaml:"ignore"`
}

// LintIgnore accepts the findings of one lint rule in this contract, all of
// them or those at one file and JSON Pointer, for a stated reason.
type LintIgnore struct {
	Rule    string `yaml:"rule"`
	File    string `yaml:"file"`
	Pointer string `yaml:"pointer"`
	Reason  string `yaml:"reason"`
}

// Limits is the manifest's limits section, as written (0 or absent: the
// default).
type Limits struct {
	MaxBytes        int64 `yaml:"max_bytes"`
	MaxDepth        int   `yaml:"max_depth"`
	MaxNumberLength int   `yaml:"max_number_length"`
	MaxStringLength int   `yaml:"max_string_length"`
	// MemberFoldCollision is whether parse.member_fold_collision is
	// enforced; nil means true.
	MemberFoldCollision *bool `yaml:"member_fold_collision"`
}

// UpstreamVersion is one upstream version's part of the manifest.
type UpstreamVersion struct {
	Schema      string            `yaml:"schema"`
	Description string            `yaml:"description"`
	Projection  map[string]string `yaml:"projection"`
	Rules       []RuleSpec        `yaml:"rules"`
	// Result and TextBlock override the manifest's top-level keys for this
	// version ("" and nil: inherit).
	Result    string `yaml:"result"`
	TextBlock *int   `yaml:"text_block"`
	// Errors are the upstream's declared error shapes, tried in order.
	Errors []ErrorSpec `yaml:"errors"`
}

// ErrorSpec is one declared upstream error shape: which responses are
// candidates (When), the JSON Schema their value must satisfy ("" means
// any candidate matches), and the failure envelope it gives: Code,
// Retryable and the optional Detail projection (agent field → JSON
// Pointer into the error value).
type ErrorSpec struct {
	Name      string            `yaml:"name"`
	When      ErrorWhen         `yaml:"when"`
	Schema    string            `yaml:"schema"`
	Code      string            `yaml:"code"`
	Retryable bool              `yaml:"retryable"`
	Detail    map[string]string `yaml:"detail"`
}

// ErrorWhen selects the candidates of an ErrorSpec: responses with one of
// Status (0 counts as 200), or MCP results with isError: true when IsError.
type ErrorWhen struct {
	Status  []int `yaml:"status"`
	IsError bool  `yaml:"is_error"`
}

// RuleSpec is one semantic rule in the manifest: a name and exactly one kind.
type RuleSpec struct {
	Name       string         `yaml:"name"`
	Binding    *PointerSpec   `yaml:"binding"`
	Context    *KeyedSpec     `yaml:"context"`
	Freshness  *FreshnessSpec `yaml:"freshness"`
	Membership *KeyedSpec     `yaml:"membership"`
	Count      *CountSpec     `yaml:"count"`
	CEL        *CELSpec       `yaml:"cel"`
	Custom     string         `yaml:"custom"`
}

// Kind names the rule's kind — its manifest key: "binding", "context",
// "freshness", "membership", "count", "cel" or "custom" — and the JSON
// Pointer (RFC 6901 text) it reads: a count rule's array, "" for cel and
// custom, which may read the whole value.
func (r RuleSpec) Kind() (kind, pointer string) {
	switch {
	case r.Binding != nil:
		return "binding", r.Binding.Pointer
	case r.Context != nil:
		return "context", r.Context.Pointer
	case r.Freshness != nil:
		return "freshness", r.Freshness.Pointer
	case r.Membership != nil:
		return "membership", r.Membership.Pointer
	case r.Count != nil:
		return "count", r.Count.Pointer
	case r.CEL != nil:
		return "cel", ""
	}
	return "custom", ""
}

// CountSpec configures semantic.Count: the array at Pointer has as many
// elements as the number at EqualsPointer, or as the request context value
// Key (exactly one of the two is set).
type CountSpec struct {
	Pointer       string `yaml:"pointer"`
	EqualsPointer string `yaml:"equals_pointer"`
	Key           string `yaml:"key"`
}

// CELSpec configures semantic.CEL: Expr must evaluate to true.
type CELSpec struct {
	Expr string `yaml:"expr"`
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

// Clone returns a deep copy of m: no map, slice or pointer is shared.
func (m Manifest) Clone() Manifest {
	if m.Limits.MemberFoldCollision != nil {
		b := *m.Limits.MemberFoldCollision
		m.Limits.MemberFoldCollision = &b
	}
	m.TextBlock = cloneInt(m.TextBlock)
	m.ErrorCodes = slices.Clone(m.ErrorCodes)
	m.ContentTypes = slices.Clone(m.ContentTypes)
	m.Retryable = maps.Clone(m.Retryable)
	if m.Statuses != nil {
		st := make(map[string]StatusSpec, len(m.Statuses))
		for k, v := range m.Statuses {
			if v.Retryable != nil {
				b := *v.Retryable
				v.Retryable = &b
			}
			st[k] = v
		}
		m.Statuses = st
	}
	m.Formats = maps.Clone(m.Formats)
	m.Lint.Ignore = slices.Clone(m.Lint.Ignore)
	m.Text.Default = m.Text.Default.Clone()
	m.Text.Fields = clonePolicies(m.Text.Fields)
	m.Text.DetailFields = clonePolicies(m.Text.DetailFields)
	if m.UpstreamVersions != nil {
		uvs := make(map[string]UpstreamVersion, len(m.UpstreamVersions))
		for k, uv := range m.UpstreamVersions {
			uv.Projection = maps.Clone(uv.Projection)
			uv.TextBlock = cloneInt(uv.TextBlock)
			uv.Rules = slices.Clone(uv.Rules)
			uv.Errors = slices.Clone(uv.Errors)
			for i, e := range uv.Errors {
				e.When.Status = slices.Clone(e.When.Status)
				e.Detail = maps.Clone(e.Detail)
				uv.Errors[i] = e
			}
			for i, r := range uv.Rules {
				uv.Rules[i] = r.clone()
			}
			uvs[k] = uv
		}
		m.UpstreamVersions = uvs
	}
	return m
}

func (r RuleSpec) clone() RuleSpec {
	if r.Binding != nil {
		b := *r.Binding
		r.Binding = &b
	}
	if r.Context != nil {
		c := *r.Context
		r.Context = &c
	}
	if r.Freshness != nil {
		f := *r.Freshness
		r.Freshness = &f
	}
	if r.Membership != nil {
		m := *r.Membership
		r.Membership = &m
	}
	if r.Count != nil {
		c := *r.Count
		r.Count = &c
	}
	if r.CEL != nil {
		c := *r.CEL
		r.CEL = &c
	}
	return r
}

func cloneInt(p *int) *int {
	if p == nil {
		return nil
	}
	n := *p
	return &n
}
