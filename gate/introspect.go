package gate

import (
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/semantic"
)

// ProjectionField is one projection entry of an upstream version: the agent
// field and the JSON Pointer (with "*" for every array element) it copies.
type ProjectionField struct {
	Field   string
	Pointer semantic.Pointer
}

// Projection returns an upstream version's projection, sorted by field, and
// false when the contract has no such version.
func (c *Contract) Projection(version string) ([]ProjectionField, bool) {
	u := c.versions[version]
	if u == nil {
		return nil, false
	}
	out := make([]ProjectionField, len(u.projection))
	for i, f := range u.projection {
		out[i] = ProjectionField{Field: f.field, Pointer: f.pointer}
	}
	return out, true
}

// Expand evaluates a projection pointer against a decoded value the way the
// projection stage does: a "*" token maps every array element; false when
// the pointer reaches nothing.
func Expand(v any, p semantic.Pointer) (any, bool) { return expand(v, p) }

// AgentSchema returns the compiled agent-facing schema, which every
// admitted response's data object satisfies.
func (c *Contract) AgentSchema() *jsonschema.Schema { return c.agentSchema }
