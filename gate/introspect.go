package gate

import (
	"io/fs"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/introspect"
	"github.com/airlockdev/airlock/internal/manifest"
	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/jsonpointer"
)

// ProjectionField is one projection entry of an upstream version: the agent
// field (a member of the success envelope's data object) and the JSON
// Pointer (RFC 6901, with "*" for every array element) it copies from the
// validated value.
type ProjectionField struct {
	Field   string
	Pointer jsonpointer.Pointer
}

// Projection returns an upstream version's projection, sorted by field (a
// new slice with new pointers), and false when the contract has no such
// version.
func (c *Contract) Projection(version string) ([]ProjectionField, bool) {
	u := c.versions[version]
	if u == nil {
		return nil, false
	}
	out := make([]ProjectionField, len(u.projection))
	for i, f := range u.projection {
		out[i] = ProjectionField{Field: f.field, Pointer: append(jsonpointer.Pointer(nil), f.pointer...)}
	}
	return out, true
}

// init gives airlock's harness (package internal/introspect) what it needs
// and a connector does not.
func init() {
	introspect.Value = func(v any) (any, bool) {
		vd := v.(*Verdict)
		return vd.valueOf()
	}
	introspect.ErrorValue = func(v any) (any, bool) {
		vd := v.(*Verdict)
		return vd.errValue, vd.hasErrValue
	}
	introspect.Manifest = func(c any) manifest.Manifest { return c.(*Contract).manifest.Clone() }
	introspect.Schema = func(c any, version string) (*jsonschema.Schema, bool) {
		u, ok := c.(*Contract).versions[version]
		if !ok {
			return nil, false
		}
		return u.schema.ref, true
	}
	introspect.AgentSchema = func(c any) *jsonschema.Schema { return c.(*Contract).agentSchema.ref }
	introspect.SchemaDocument = func(c any, name string) any { return c.(*Contract).schemas.Doc(name) }
	introspect.RawProjection = rawProjection
	introspect.Extracted = func(v any) (jsonpointer.Pointer, bool) {
		from := v.(*Verdict).from
		return append(jsonpointer.Pointer(nil), from.at...), from.text
	}
	introspect.Source = func(c any) (fs.FS, string, string) {
		k := c.(*Contract)
		return k.fsys, k.dir, k.shown
	}
	introspect.SchemaDir = func(c any) *schema.Dir { return c.(*Contract).schemas }
	introspect.SuccessEnvelope = successEnvelope
}

// rawProjection is introspect.RawProjection.
func rawProjection(c any, version string, verdict any) []introspect.Field {
	k := c.(*Contract)
	proj, ok := k.Projection(version)
	if !ok {
		return nil
	}
	prefix := jsonpointer.Pointer{"structuredContent"}
	if v, ok := verdict.(*Verdict); ok && v != nil && v.from.at != nil {
		prefix = v.from.at
	}
	out := make([]introspect.Field, len(proj))
	for i, f := range proj {
		p := f.Pointer
		if k.protocol == ProtocolMCP {
			p = append(slices.Clone(prefix), p...)
		}
		out[i] = introspect.Field{Field: f.Field, Pointer: p}
	}
	return out
}
