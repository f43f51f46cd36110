// Package importer writes contracts from what already describes an
// upstream: an OpenAPI description (OpenAPI 3.0, 3.1, Swagger 2.0), an MCP
// server's tools/list, or recorded responses.
//
// Each importer builds a Draft: the upstream schema converted to JSON
// Schema 2020-12, a projection, the closed agent-facing schema derived from
// the projected fields' schemas, a format policy, the shared components the
// schema references, and the vendor's examples. Write proves the draft
// before it writes a byte: it loads the contract with the gate from memory
// (so a draft the gate would refuse writes nothing), judges every example
// (admitted ones become accepted fixtures with their golden agent output,
// refused ones near-misses expecting the gate's reason), and then writes
// the files, never overwriting one that differs.
//
// The reading of OpenAPI descriptions and their $ref resolution is
// github.com/getkin/kin-openapi's; the conversion to 2020-12, the object
// closing, the projection and the agent-facing schema are this package's.
package importer
