package gate

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/manifest"
	"github.com/airlockdev/airlock/jsonpointer"
)

// upstreamError is one compiled error shape of an upstream version
// (contract.yaml upstream_versions.<v>.errors[]).
type upstreamError struct {
	name      string
	status    []int
	isError   bool
	schema    *jsonschema.Schema // nil: every candidate matches
	code      ErrorCode
	retryable bool
	detail    []projField
}

// candidate reports whether a response is a candidate of e: an MCP result
// with isError: true when e takes those, any other response when its
// status is in e's list.
func (e *upstreamError) candidate(status int, isError bool) bool {
	if isError {
		return e.isError
	}
	return slices.Contains(e.status, status)
}

// errorCandidates reports whether any error shape of u takes a response
// with status (isError false) or an MCP isError result (isError true).
func (u *upstream) errorCandidates(status int, isError bool) bool {
	for i := range u.errors {
		if u.errors[i].candidate(status, isError) {
			return true
		}
	}
	return false
}

// compileErrors compiles the error shapes of one upstream version: a
// configuration error for a repeated name, a code outside error_codes,
// is_error without protocol: mcp, a 2xx status or a detail without a
// schema, a detail pointer that does not parse or does not reach an enum
// or const of the error schema (see closedAt).
func (c *Contract) compileErrors(u *upstream, specs []manifest.ErrorSpec, key string, compile func(key, name string) (*jsonschema.Schema, error), cfgErr func(key, msg string) error) error {
	seen := map[string]bool{}
	for i, s := range specs {
		k := key + "/errors/" + strconv.Itoa(i)
		if seen[s.Name] {
			return cfgErr(k+"/name", fmt.Sprintf("error %q is declared twice in this upstream version", s.Name))
		}
		seen[s.Name] = true
		e := upstreamError{name: s.Name, status: slices.Clone(s.When.Status), isError: s.When.IsError, code: ErrorCode(s.Code), retryable: s.Retryable}
		if !slices.Contains(c.errorCodes, e.code) {
			return cfgErr(k+"/code", fmt.Sprintf("code %s is not in this contract's error_codes %v", s.Code, c.errorCodes))
		}
		if e.isError && c.protocol != ProtocolMCP {
			return cfgErr(k+"/when/is_error", "is_error takes MCP results with isError: true and needs protocol: mcp; this contract's protocol is "+c.protocol)
		}
		if s.Schema == "" {
			for _, st := range e.status {
				if st >= 200 && st <= 299 {
					return cfgErr(k+"/when/status", fmt.Sprintf("status %d is a success status: an error body served with it must be told apart from a success by a schema; name one", st))
				}
			}
			if len(s.Detail) > 0 {
				return cfgErr(k+"/detail", "detail projects from the error value, which an error without a schema never reads; name a schema")
			}
		} else {
			var err error
			if e.schema, err = compile(k+"/schema", s.Schema); err != nil {
				return err
			}
		}
		for field, ptr := range s.Detail {
			fk := k + "/detail/" + jsonpointer.EscapeToken(field)
			p, err := jsonpointer.Parse(ptr)
			if err != nil {
				return cfgErr(fk, err.Error())
			}
			if why := c.closedAt(s.Schema, p); why != "" {
				return cfgErr(fk, fmt.Sprintf("detail %s (%s) must be a closed, enum-valued field of %s: %s; free text never reaches the agent", field, ptr, s.Schema, why))
			}
			e.detail = append(e.detail, projField{field: field, pointer: p})
		}
		sort.Slice(e.detail, func(a, b int) bool { return e.detail[a].field < e.detail[b].field })
		u.errors = append(u.errors, e)
	}
	return nil
}

// closedAt follows pointer p through the schema document of file (its
// properties, prefixItems and items keywords, and $ref to a fragment of the
// same file or to another file of the contract) and returns "" when it
// reaches a schema with enum or const, else why not.
func (c *Contract) closedAt(file string, p jsonpointer.Pointer) string {
	doc := c.schemas.Doc(file)
	node, why := c.deref(file, doc, doc)
	if why != "" {
		return why
	}
	for i, tok := range p {
		m := node.(map[string]any)
		var next any
		if props, ok := m["properties"].(map[string]any); ok {
			next = props[tok]
		}
		if n, err := strconv.Atoi(tok); next == nil && err == nil && n >= 0 {
			if pre, ok := m["prefixItems"].([]any); ok && n < len(pre) {
				next = pre[n]
			} else if it, ok := m["items"].(map[string]any); ok {
				next = it
			}
		}
		if next == nil {
			return fmt.Sprintf("%s names nothing in properties, prefixItems or items", jsonpointer.Pointer(p[:i+1]))
		}
		if node, why = c.deref(file, doc, next); why != "" {
			return why
		}
	}
	m := node.(map[string]any)
	if _, ok := m["const"]; ok {
		return ""
	}
	if _, ok := m["enum"]; ok {
		return ""
	}
	return "its schema has no enum or const"
}

// deref resolves a chain of $ref (at most 32) from node in doc of file.
func (c *Contract) deref(file string, doc, node any) (any, string) {
	for range 32 {
		m, ok := node.(map[string]any)
		if !ok {
			return nil, "a boolean schema, not an enum or const"
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return m, ""
		}
		target, frag, _ := strings.Cut(ref, "#")
		d := doc
		if target != "" {
			if d = c.schemas.Doc(target); d == nil {
				return nil, fmt.Sprintf("$ref %q is not a schema file of the contract", ref)
			}
			doc, file = d, target
		}
		p, err := jsonpointer.Parse(frag)
		if err != nil {
			return nil, fmt.Sprintf("$ref %q: %v", ref, err)
		}
		if node, ok = p.Lookup(d); !ok {
			return nil, fmt.Sprintf("$ref %q reaches nothing", ref)
		}
	}
	return nil, "$ref chain longer than 32"
}

// matchError tries u's error shapes, in order, on a candidate response:
// status, or an MCP isError result; value is the error value (parsed, and
// for MCP taken from the result as the version's result says) when
// hasValue. The first shape that takes the response and whose schema (if
// any) admits the value gives the refusal upstream.<name> with its code,
// retryable and detail; a detail that fails the agent error schema is
// projection.agent_error_schema. nil when none matches.
func (c *Contract) matchError(u *upstream, status int, isError bool, value any, hasValue bool) *refusal {
	for i := range u.errors {
		e := &u.errors[i]
		if !e.candidate(status, isError) {
			continue
		}
		if e.schema != nil && (!hasValue || c.schemaStage(e.schema, value) != nil) {
			continue
		}
		what := fmt.Sprintf("status %d", status)
		if isError {
			what = "an MCP result with isError: true"
		}
		r := &refusal{reason: "upstream." + e.name, offset: -1, upstreamError: e.name,
			code: e.code, retryable: e.retryable, setCode: true,
			message: fmt.Sprintf("%s matched the declared upstream error %s", what, e.name)}
		if len(e.detail) > 0 {
			d := project(e.detail, value)
			if c.agentErrorSchema != nil {
				if rr := c.schemaStage(c.agentErrorSchema, d); rr != nil {
					rr.reason = ReasonAgentErrorSchema
					rr.upstreamError = e.name
					rr.message = "the detail of upstream error " + e.name + ": " + rr.message
					return rr
				}
			}
			r.detail = d
		}
		r.errValue, r.hasErrValue = value, hasValue
		return r
	}
	return nil
}

// errorBody reads the body of a non-success status as an error value:
// the transport checks of a success body (empty, content type, HTML/XML
// sniff), then the parse stage and, for protocol: mcp, the CallToolResult
// as the version's result says. Whatever fails leaves no value (only the
// error shapes without a schema can then match) and is not itself a
// refusal.
func (c *Contract) errorBody(body []byte, contentType string, u *upstream) (any, bool) {
	if len(body) == 0 || isJSONSpace(body) || int64(len(body)) > c.limits.MaxBytes {
		return nil, false
	}
	if _, ok := c.allowedContentType(contentType); !ok {
		return nil, false
	}
	for _, b := range body {
		if b == ' ' || b == '\t' || b == '\r' || b == '\n' {
			continue
		}
		if b == '<' {
			return nil, false
		}
		break
	}
	value, r := parse(body, c.limits, c.locations)
	if r != nil {
		return nil, false
	}
	if c.protocol == ProtocolMCP {
		var from extracted
		if value, from, _, r = c.unwrapMCP(value, u, true); r != nil {
			return nil, false
		}
		_ = from
	}
	return value, true
}
