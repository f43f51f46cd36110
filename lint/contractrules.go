package lint

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/introspect"
	"github.com/airlockdev/airlock/internal/manifest"
	"github.com/airlockdev/airlock/internal/schemawalk"
	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/jsonpointer"
)

// step is what a pointer walk found at one token.
type step struct {
	next     []*jsonschema.Schema
	declared bool // a properties, patternProperties, prefixItems or items entry names it
	required bool // every branch requires it (objects only)
}

// follow walks the tokens of ptr from root and calls at for each token
// with what applies there; it stops when at returns false.
func follow(root *jsonschema.Schema, ptr jsonpointer.Pointer, at func(i int, st step) bool) {
	set := []*jsonschema.Schema{root}
	for i, tok := range ptr {
		app := schemawalk.Applicable(set)
		var st step
		if tok == "*" {
			for _, s := range app {
				prefix, rest := schemawalk.ElementSchemas(s, "")
				for _, p := range prefix {
					st.next = append(st.next, p.Schema)
				}
				if rest != nil {
					st.next = append(st.next, rest.Schema)
				}
			}
			st.declared, st.required = len(st.next) > 0, true
		} else {
			st.next, st.declared = schemawalk.Member(app, tok)
			if _, err := strconv.Atoi(tok); err == nil && !st.declared {
				if el := schemawalk.Element(app, mustAtoi(tok)); len(el) > 0 {
					st.next, st.declared, st.required = el, true, true
				}
			}
			st.required = st.required || requiredIn(set, tok)
		}
		if !at(i, st) {
			return
		}
		set = st.next
	}
}

func mustAtoi(s string) int { n, _ := strconv.Atoi(s); return n }

// requiredIn reports whether member name is required of every value set
// admits: a schema merged into one of them requires it, or every branch
// of one of their oneOf/anyOf requires it. Each schema is judged once (a
// branch reached again through a loop counts as not requiring it), so the
// cost is linear in the schemas reached.
func requiredIn(set []*jsonschema.Schema, name string) bool {
	memo := map[*jsonschema.Schema]bool{}
	var requires func(s *jsonschema.Schema) bool
	requires = func(s *jsonschema.Schema) bool {
		if r, ok := memo[s]; ok {
			return r
		}
		memo[s] = false // a loop back here proves nothing
		r := false
		for _, x := range closure(s) {
			if x.Bool != nil {
				continue
			}
			if slices.Contains(x.Required, name) {
				r = true
				break
			}
			for _, group := range [][]*jsonschema.Schema{x.OneOf, x.AnyOf} {
				if len(group) > 0 && !slices.ContainsFunc(group, func(b *jsonschema.Schema) bool { return !requires(b) }) {
					r = true
				}
			}
			if r {
				break
			}
		}
		memo[s] = r
		return r
	}
	return slices.ContainsFunc(set, requires)
}

// checkProjectionOptional: a projected pointer that the schema does not
// require all the way down (or does not declare).
func checkProjectionOptional(k *contract, e *emitter) {
	for _, v := range k.versions() {
		root, _ := introspect.Schema(k.c, v)
		proj, _ := k.c.Projection(v)
		for _, f := range proj {
			agentRequires := requiredIn([]*jsonschema.Schema{introspect.AgentSchema(k.c)}, f.Field)
			key := versionKey(v) + "/projection/" + jsonpointer.EscapeToken(f.Field)
			follow(root, f.Pointer, func(i int, st step) bool {
				at := f.Pointer[:i+1].String()
				switch {
				case !st.declared:
					e.atManifest(projectionOptional, key, v, f.Pointer.String(),
						"projected field %q reads %s, which the schema does not declare: nothing requires it or says what it holds", f.Field, at)
					return false
				case !st.required && agentRequires:
					e.atManifest(projectionOptional, key, v, f.Pointer.String(),
						"projected field %q reads %s, which the schema does not require in every oneOf/anyOf branch (or at all), but the agent-facing schema requires the field: a response without it is admitted by the schema, then refused (by a rule that reads it, or as projection.agent_schema)", f.Field, at)
					return false
				case !st.required:
					return false // optional upstream and for the agent: meant
				}
				return true
			})
		}
	}
}

// rulePointer is a rule's pointer and its manifest key.
func rulePointer(r manifest.RuleSpec) (kind, ptr string) {
	switch {
	case r.Binding != nil:
		return "binding", r.Binding.Pointer
	case r.Context != nil:
		return "context", r.Context.Pointer
	case r.Freshness != nil:
		return "freshness", r.Freshness.Pointer
	case r.Membership != nil:
		return "membership", r.Membership.Pointer
	}
	return "", ""
}

// checkRulePointers: a rule on a value the schema does not declare, or
// declares without a type, const or enum.
func checkRulePointers(k *contract, e *emitter) {
	for _, v := range k.versions() {
		root, _ := introspect.Schema(k.c, v)
		for i, r := range k.m.UpstreamVersions[v].Rules {
			kind, raw := rulePointer(r)
			ptr, err := jsonpointer.Parse(raw)
			if kind == "" || err != nil {
				continue
			}
			key := fmt.Sprintf("%s/rules/%d/%s/pointer", versionKey(v), i, kind)
			if len(ptr) == 0 {
				continue // the whole value: the schema's root
			}
			follow(root, ptr, func(j int, st step) bool {
				at := ptr[:j+1].String()
				if !st.declared {
					e.atManifest(rulePointerUnconstrained, key, v, raw,
						"rule %q reads %s, which the schema does not name (only additionalProperties covers it, if anything): the rule judges a value the contract never describes", r.Name, at)
					return false
				}
				if j == len(ptr)-1 && !constrains(st.next) {
					where := ""
					if len(st.next) > 0 {
						if p, ok := k.dir.Locate(st.next[0].Location, ""); ok {
							where = fmt.Sprintf(" (%s, %s)", p.File, p.Pointer)
							if off, ok := strictjson.PointerOffset(k.dir.Bytes(p.Name), p.Pointer); ok {
								sweep(k.dir.Bytes(p.Name), []placed{{off: off}}, func(_ placed, line, _ int) {
									where = fmt.Sprintf(" (%s:%d, %s)", p.File, line, p.Pointer)
								})
							}
						}
					}
					e.atManifest(rulePointerUnconstrained, key, v, raw,
						"rule %q reads %s, which the schema declares without a type, const or enum%s: give it one there", r.Name, at, where)
				}
				return true
			})
		}
	}
}

// constrains reports whether the schemas applying to a value say what type
// or values it has.
func constrains(set []*jsonschema.Schema) bool {
	return slices.ContainsFunc(closureAll(schemawalk.Applicable(set)), func(s *jsonschema.Schema) bool {
		return s.Bool == nil && (s.Types != nil && !s.Types.IsEmpty() || s.Const != nil || s.Enum != nil)
	})
}

// fixturesOf returns the fixtures of the contract's tool, by upstream
// version.
func fixturesOf(k *contract, set *fixture.Set) map[string][]fixture.Fixture {
	out := map[string][]fixture.Fixture{}
	for _, f := range set.Fixtures {
		if f.Tool == k.c.Tool() {
			out[f.UpstreamVersion] = append(out[f.UpstreamVersion], f)
		}
	}
	return out
}

// checkVersionFixtures: an upstream version without any fixture.
func checkVersionFixtures(k *contract, set *fixture.Set, fixturesDir string, e *emitter) error {
	byVersion := fixturesOf(k, set)
	for _, v := range k.versions() {
		if len(byVersion[v]) == 0 {
			e.atManifest(versionWithoutFixtures, versionKey(v), v, "",
				"upstream version %q has no fixtures (expected under %s/): record some (airlock record) or write an accepted one", v, filepath.Join(fixturesDir, k.c.Tool(), v))
		}
	}
	return nil
}

// checkNearMissStages: a stage no near-miss fixture of a version expects
// to refuse.
func checkNearMissStages(k *contract, set *fixture.Set, fixturesDir string, e *emitter) error {
	byVersion := fixturesOf(k, set)
	for _, v := range k.versions() {
		fx := byVersion[v]
		if len(fx) == 0 {
			continue // version-without-fixtures says it
		}
		seen := map[gate.Stage]bool{}
		for _, f := range fx {
			if f.Kind != fixture.KindNearMiss {
				continue
			}
			exp, err := set.Expectation(f)
			if err != nil {
				return err
			}
			if info, ok := gate.LookupReason(exp.Reason); ok {
				seen[info.Stage] = true
			}
		}
		stages := []gate.Stage{gate.StageParse, gate.StageSchema}
		if len(k.m.UpstreamVersions[v].Rules) > 0 {
			stages = append(stages, gate.StageSemantic)
		}
		for _, st := range stages {
			if !seen[st] {
				e.atManifest(nearMissStageUncovered, versionKey(v), v, "",
					"upstream version %q has no near-miss fixture expecting a %s.* refusal: add one to %s/ with a sidecar saying expect: {reason: %s.<name>} (airlock reasons lists them)",
					v, st, filepath.Join(fixturesDir, k.c.Tool(), v, fixture.KindNearMiss), st)
			}
		}
	}
	return nil
}
