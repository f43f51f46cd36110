package gate

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/airlockdev/airlock/internal/manifest"
	"github.com/airlockdev/airlock/jsonpointer"
)

// upstreamError is one compiled error shape of an upstream version
// (contract.yaml upstream_versions.<v>.errors[]).
type upstreamError struct {
	name      string
	status    []int
	isError   bool
	schema    *compiledSchema // nil: every candidate matches
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
func (c *Contract) compileErrors(u *upstream, specs []manifest.ErrorSpec, key string, compile func(key, name string) (*compiledSchema, error), cfgErr func(key, msg string) error) error {
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

// closedAt reports whether pointer p into values of the schema file is
// closed: "" when some schema that applies to the value at p, reached from
// the file's root through properties, prefixItems, items and $ref (to a
// fragment of the same file or to another file of the contract; at most
// 32 deep), has enum or const; else why not. Every schema on such a route
// applies to the value at once, so one enum or const bounds it.
func (c *Contract) closedAt(file string, p jsonpointer.Pointer) string {
	doc := c.schemas.Doc(file)
	if doc == nil {
		return "no schema file " + file
	}
	if c.closed(file, doc, doc, p, 0) {
		return ""
	}
	return fmt.Sprintf("no schema on the way to %s (through properties, prefixItems, items and $ref) has enum or const", p)
}

func (c *Contract) closed(file string, doc, node any, p jsonpointer.Pointer, depth int) bool {
	m, ok := node.(map[string]any)
	if !ok || depth > 32 {
		return false
	}
	if len(p) == 0 {
		if _, ok := m["const"]; ok {
			return true
		}
		if _, ok := m["enum"]; ok {
			return true
		}
	} else {
		tok := p[0]
		if props, ok := m["properties"].(map[string]any); ok && props[tok] != nil && c.closed(file, doc, props[tok], p[1:], depth+1) {
			return true
		}
		if n, err := strconv.Atoi(tok); err == nil && n >= 0 && strconv.Itoa(n) == tok {
			pre, _ := m["prefixItems"].([]any)
			if n < len(pre) && c.closed(file, doc, pre[n], p[1:], depth+1) {
				return true
			}
			if it, ok := m["items"]; ok && n >= len(pre) && c.closed(file, doc, it, p[1:], depth+1) {
				return true
			}
		}
	}
	ref, ok := m["$ref"].(string)
	if !ok {
		return false
	}
	target, frag, _ := strings.Cut(ref, "#")
	d := doc
	if target != "" {
		if file = c.schemas.RefName(file, target); file == "" {
			return false
		}
		if d = c.schemas.Doc(file); d == nil {
			return false
		}
	}
	fp, err := jsonpointer.Parse(frag)
	if err != nil {
		return false
	}
	next, ok := fp.Lookup(d)
	return ok && c.closed(file, d, next, p, depth+1)
}

// matchError tries u's error shapes, in order, on a candidate response:
// status, or an MCP isError result; value is the error value (parsed, and
// for MCP taken from the result as the version's result says) when
// hasValue. The first shape that takes the response and whose schema (if
// any) admits the value gives the refusal upstream.<name> with its code,
// retryable and detail; a detail that fails the agent error schema is
// projection.agent_error_schema. nil when none matches.
func (c *Contract) matchError(u *upstream, status int, isError bool, value any, hasValue bool, size int) *refusal {
	for i := range u.errors {
		e := &u.errors[i]
		if !e.candidate(status, isError) {
			continue
		}
		if e.schema != nil && (!hasValue || !e.schema.fast.Valid(value, size)) {
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
			if rr := c.checkText(e.detail, d, c.text.detailField, "detail field"); rr != nil {
				rr.upstreamError = e.name
				rr.message = "the detail of upstream error " + e.name + ": " + rr.message
				return rr
			}
			if c.agentErrorSchema != nil {
				if rr := c.schemaStage(c.agentErrorSchema, d, size); rr != nil {
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
