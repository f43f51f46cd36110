package proxy

import (
	"encoding/json"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/introspect"
)

// tools/list as the agent sees it: each contracted tool's outputSchema
// is its contract's closed agent schema, and unlisted tools are hidden or
// passed per Options.Unlisted.

// rewriteList gives a tools/list result's contracted tools their agent
// schema and applies Unlisted to the others. It fails closed: an entry
// that is not an object with a string name is dropped (logged), and a
// result that is not an object with a tools array is answered with a
// JSON-RPC error (-32603).
func (p *proxy) rewriteList(resp *jsonrpc.Response) *jsonrpc.Response {
	var page map[string]json.RawMessage
	var raw []json.RawMessage
	if json.Unmarshal(resp.Result, &page) != nil || page == nil || json.Unmarshal(page["tools"], &raw) != nil {
		p.opts.Logger.Warn("refused a tools/list result the proxy could not read")
		return errorResponse(resp.ID, jsonrpc.CodeInternalError, "airlock proxy: the MCP server's tools/list result is not an object with a tools array")
	}
	kept := make([]map[string]json.RawMessage, 0, len(raw))
	var unlisted []string
	dropped := 0
	for _, r := range raw {
		var t map[string]json.RawMessage
		var name string
		if json.Unmarshal(r, &t) != nil || t == nil || json.Unmarshal(t["name"], &name) != nil || name == "" {
			dropped++ // not a tool the proxy can judge: never listed
			continue
		}
		c, mode := p.route(name)
		switch {
		case c == nil:
			if p.opts.Unlisted == UnlistedHide {
				continue
			}
			unlisted = append(unlisted, name)
		case mode == gate.ModeStrict:
			if s := p.agentSchema(c); s != nil {
				t["outputSchema"] = s
			}
		}
		kept = append(kept, t)
	}
	p.warnUnlisted(unlisted)
	if dropped > 0 {
		p.opts.Logger.Warn("dropped tools/list entries that are not objects with a string name", "count", dropped)
	}
	data, err := json.Marshal(kept)
	if err != nil {
		return errorResponse(resp.ID, jsonrpc.CodeInternalError, "airlock proxy: cannot encode the tools/list result")
	}
	page["tools"] = data
	result, err := json.Marshal(page)
	if err != nil {
		return errorResponse(resp.ID, jsonrpc.CodeInternalError, "airlock proxy: cannot encode the tools/list result")
	}
	return &jsonrpc.Response{ID: resp.ID, Result: result}
}

// warnUnlisted logs once each tool without a contract that the proxy lists.
func (p *proxy) warnUnlisted(names []string) {
	p.mu.Lock()
	var fresh []string
	for _, n := range names {
		if !p.warned[n] {
			p.warned[n] = true
			fresh = append(fresh, n)
		}
	}
	p.mu.Unlock()
	if len(fresh) == 0 {
		return
	}
	slices.Sort(fresh)
	switch p.opts.Unlisted {
	case UnlistedRefuse:
		p.opts.Logger.Warn("tools without a contract: listed, every call refused", "tools", fresh)
	default:
		p.opts.Logger.Warn("tools without a contract: passed through unchecked", "tools", fresh)
	}
}

// agentSchema returns c's agent-facing schema as an outputSchema (the
// document without "$schema": MCP's default dialect is 2020-12, and
// clients with a draft-07 validator refuse an unknown $schema).
func (p *proxy) agentSchema(c *gate.Contract) json.RawMessage {
	if s, ok := p.schemas.Load(c); ok {
		return s.(json.RawMessage)
	}
	doc := introspect.SchemaDocument(c, introspect.Manifest(c).AgentSchema)
	m, ok := doc.(map[string]any)
	if !ok {
		return nil
	}
	clone := make(map[string]any, len(m))
	for k, v := range m {
		if k != "$schema" {
			clone[k] = v
		}
	}
	data, err := json.Marshal(clone)
	if err != nil {
		return nil
	}
	p.schemas.Store(c, json.RawMessage(data))
	return data
}
