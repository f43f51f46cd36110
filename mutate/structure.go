package mutate

import "slices"

// Family structure: the shape of the value changes while every scalar stays
// what it was. An object gains a member carrying an instruction, loses its
// type to null or an array; an array turns into null or an object; a
// success also carries an error; a oneOf discriminator names another
// branch. These are refused by the schema stage when the contract's objects
// are closed and typed.

// schemaReasons is what a mutant the schema should refuse accepts: any
// reason of the schema stage.
var schemaReasons = []string{"schema.*"}

// structureMutants derives the structure family at each location, in walk
// order, then the success that also carries an error at the root.
func (m *mutator) structureMutants(root any, locs locations) {
	for l := range locs {
		switch x := l.v.(type) {
		case map[string]any:
			name := "airlock_injected"
			for x[name] != nil {
				name += "_"
			}
			c := m.canary()
			m.valueMutant(FamilyStructure, "unexpected_property", append(l.loc[:len(l.loc):len(l.loc)], name), instruction+c, schemaReasons, "schema.additionalProperties", c, "additionalProperties: false (or unevaluatedProperties: false)")
			m.valueMutant(FamilyStructure, "null_for_object", l.loc, nil, schemaReasons, "schema.type", "", "type: object")
			c = m.canary()
			m.valueMutant(FamilyStructure, "array_for_object", l.loc, []any{instruction + c}, schemaReasons, "schema.type", c, "type: object")
		case []any:
			m.valueMutant(FamilyStructure, "null_for_array", l.loc, nil, schemaReasons, "schema.type", "", "type: array")
			c := m.canary()
			m.valueMutant(FamilyStructure, "object_for_array", l.loc, map[string]any{"message": instruction + c}, schemaReasons, "schema.type", c, "type: array")
		case string:
			m.discriminatorSwapped(l, x)
		}
	}
	if obj, ok := root.(map[string]any); ok {
		if _, has := obj["error"]; !has {
			c := m.canary()
			m.valueMutant(FamilyStructure, "success_with_error", append(m.scope[:len(m.scope):len(m.scope)], "error"), map[string]any{"code": "UPSTREAM_UNAVAILABLE", "message": instruction + c}, schemaReasons, "schema.additionalProperties", c, "close the success shape (additionalProperties: false) so it cannot also carry an error")
		}
	}
}

// discriminatorSwapped swaps a string that is one of two or more const
// values at its location (a oneOf discriminator) for the first other one in
// sorted order.
func (m *mutator) discriminatorSwapped(l location, x string) {
	consts := m.facts(l.loc).consts
	if len(consts) < 2 || !slices.Contains(consts, x) {
		return
	}
	for _, other := range consts {
		if other != x {
			m.valueMutant(FamilyStructure, "discriminator_swapped", l.loc, other, schemaReasons, "schema.oneOf", "", "exclusive shapes: oneOf branches that each list and close their members")
			return
		}
	}
}
