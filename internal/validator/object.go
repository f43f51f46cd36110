// The keywords of an object, and its members.

package validator

import (
	"net/url"

	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// maxLinearProps is the most properties looked up by comparing names one
// by one (lengths first) rather than by hashing.
const maxLinearProps = 16

// present reports whether the object at i has a member named name.
func (r *run) present(i int32, name string) bool {
	_, ok := r.t.Member(i, name)
	return ok
}

// missing lists the names the object at i lacks, in the order given.
func (r *run) missing(i int32, names []string) []string {
	var out []string
	for _, name := range names {
		if !r.present(i, name) {
			out = append(out, name)
		}
	}
	return out
}

// objectOwn checks an object's own keywords: minProperties,
// maxProperties, required, dependentRequired, additionalProperties: false
// (the names it refuses), propertyNames.
func (r *run) objectOwn(n *node, i int32) bool {
	nd := &r.t.Nodes[i]
	size := int(nd.Len)
	if n.minProps >= 0 && size < n.minProps {
		return r.fail(n, "minProperties", &kind.MinProperties{Got: size, Want: n.minProps})
	}
	if n.maxProps >= 0 && size > n.maxProps {
		return r.fail(n, "maxProperties", &kind.MaxProperties{Got: size, Want: n.maxProps})
	}
	if len(n.required) > 0 && (r.rec || !n.reqInProps) && !r.hasRequired(n, i) {
		// Not recording, members counts them in its pass when it can.
		return r.fail(n, "required", &kind.Required{Missing: r.missing(i, n.required)})
	}
	for _, dr := range n.depRequired {
		if !r.present(i, dr.name) {
			continue
		}
		if m := r.missing(i, dr.list); m != nil {
			return r.failAt(n.loc+"/dependentRequired/"+url.PathEscape(jsonpointer.EscapeToken(dr.name)), "dependentRequired",
				&kind.DependentRequired{Prop: dr.name, Missing: m})
		}
	}
	if n.additional != nil && n.additional.boolean == -1 && r.rec {
		// Not recording, members judges this in its one pass.
		var extra []string
		for j := i + 1; j < nd.End; j = r.t.Nodes[j].End {
			if name := r.t.Name(j); !n.declares(name) {
				extra = append(extra, name)
			}
		}
		if extra != nil {
			sortStrings(extra)
			return r.fail(n, "additionalProperties", &kind.AdditionalProperties{Properties: extra})
		}
	}
	if n.propNames != nil {
		bad, found := "", false
		saved, tape := r.rec, r.t
		r.rec, r.t = false, &r.names
		for j := i + 1; j < nd.End; j = tape.Nodes[j].End {
			name := tape.Name(j)
			r.names.SetString(name)
			if (!found || name < bad) && !r.validate(n.propNames, 0) {
				if !saved {
					r.rec, r.t = saved, tape
					return false
				}
				bad, found = name, true
			}
		}
		r.rec, r.t = saved, tape
		if found {
			return r.fail(n, "propertyNames", &kind.PropertyNames{Property: bad})
		}
	}
	return true
}

// hasRequired reports whether the object at i has every required member:
// one pass over its members when it is large, a lookup per name when
// small.
func (r *run) hasRequired(n *node, i int32) bool {
	nd := &r.t.Nodes[i]
	if int(nd.Len) < len(n.required) {
		return false
	}
	if nd.Len <= 8 || n.reqIndex == nil {
		for _, name := range n.required {
			if !r.present(i, name) {
				return false
			}
		}
		return true
	}
	found := 0
	for j := i + 1; j < nd.End; j = r.t.Nodes[j].End {
		if _, ok := n.reqIndex[r.t.Name(j)]; ok {
			found++
		}
	}
	return found == len(n.reqIndex)
}

// lookup finds a member's name in properties.
func (n *node) lookup(name string) (prop, bool) {
	if len(n.propKeys) > maxLinearProps {
		p, ok := n.props[name]
		return p, ok
	}
	for k, pn := range n.propKeys {
		if len(pn) == len(name) && pn == name {
			return n.propList[k], true
		}
	}
	return prop{}, false
}

// declares reports whether properties or patternProperties name a member.
func (n *node) declares(name string) bool {
	if _, ok := n.lookup(name); ok {
		return true
	}
	for _, p := range n.patProps {
		if p.re.MatchString(name) {
			return true
		}
	}
	return false
}

// members validates each member against properties, patternProperties
// and additionalProperties. Without recording, it goes in the order of
// the text and stops at the first failure (additionalProperties: false
// included, which recording checks among the object's own keywords, and
// required when properties names every required member); recording, it
// goes in code point order of the names, so the cause is the same
// whatever the order of the text.
func (r *run) members(n *node, i int32) bool {
	closed := n.additional != nil && n.additional.boolean == -1
	if n.props == nil && n.patProps == nil && (n.additional == nil || n.additional.boolean == 1) {
		return true // nothing applies to members
	}
	end := r.t.Nodes[i].End
	if !r.rec {
		found := 0
		for j := i + 1; j < end; j = r.t.Nodes[j].End {
			name := r.t.Name(j)
			p, declared := n.lookup(name)
			if p.required {
				found++
			}
			r.push(name)
			ok := r.memberValue(n, name, j, p, declared, closed)
			r.pop()
			if !ok {
				return false
			}
		}
		return !n.reqInProps || found == len(n.required)
	}
	idx := make([]int32, 0, r.t.Nodes[i].Len)
	for j := i + 1; j < end; j = r.t.Nodes[j].End {
		idx = append(idx, j)
	}
	sortByName(r.t, idx)
	valid := true
	for _, j := range idx {
		name := r.t.Name(j)
		p, declared := n.lookup(name)
		r.push(name)
		ok := r.memberValue(n, name, j, p, declared, false)
		r.pop()
		if !ok {
			if !r.more() {
				return false
			}
			valid = false
		}
	}
	return valid
}

// memberValue validates one member's value once its name is looked up in
// properties (p, declared); closed: a member that properties and
// patternProperties do not declare fails (additionalProperties: false
// judged here when not recording).
func (r *run) memberValue(n *node, name string, j int32, p prop, declared, closed bool) bool {
	valid, evaluated := true, false
	if declared {
		evaluated = true
		if !r.validate(p.n, j) {
			if !r.more() {
				return false
			}
			valid = false
		}
	}
	for _, pp := range n.patProps {
		if pp.re.MatchString(name) {
			evaluated = true
			if !r.validate(pp.n, j) {
				if !r.more() {
					return false
				}
				valid = false
			}
		}
	}
	if !evaluated && n.additional != nil {
		if closed {
			return false
		}
		if n.additional.boolean == 0 && !r.validate(n.additional, j) {
			return false
		}
	}
	return valid
}
