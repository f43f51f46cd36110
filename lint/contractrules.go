package lint

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/introspect"
	"github.com/airlockdev/airlock/internal/schemawalk"
	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/internal/validator"
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

// checkRulePointers: a rule on a value the schema does not declare, or
// declares without a type, const or enum.
func checkRulePointers(k *contract, e *emitter) {
	for _, v := range k.versions() {
		root, _ := introspect.Schema(k.c, v)
		for i, r := range k.m.UpstreamVersions[v].Rules {
			kind, raw := r.Kind()
			ptr, err := jsonpointer.Parse(raw)
			if kind == "count" || kind == "cel" || kind == "custom" || err != nil {
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
								strictjson.LineColumns(k.dir.Bytes(p.Name), []int64{off}, func(_, line, _ int) {
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

// checkProjectedText: a projected field that can carry strings (member
// names included) with no length bound from the text policy's max_length,
// the agent-facing schema or the upstream schema at the projection
// pointer.
func checkProjectedText(k *contract, e *emitter) {
	agent := introspect.AgentSchema(k.c)
	for _, v := range k.versions() {
		root, _ := introspect.Schema(k.c, v)
		proj, _ := k.c.Projection(v)
		for _, f := range proj {
			if k.textMaxLength(f.Field) {
				continue
			}
			agentSet, _ := schemawalk.Member(schemawalk.Applicable([]*jsonschema.Schema{agent}), f.Field)
			at, unbounded := k.textUnbounded(agentSet, 0)
			if !unbounded {
				continue
			}
			if _, up := k.textUnbounded(schemasAt(root, f.Pointer), 0); !up {
				continue
			}
			fix := "Set a max_length or a maxLength"
			if strings.HasPrefix(at, "member names") {
				fix = "Set a max_length, or bound the names in a schema (propertyNames: {maxLength: N}, or additionalProperties: false with the names listed)"
			}
			e.atManifest(projectedTextUnbounded, versionKey(v)+"/projection/"+jsonpointer.EscapeToken(f.Field), v, f.Pointer.String(),
				"projected field %q can carry strings of any length (%s): no text policy max_length (text.fields.%s or text.default), and neither the agent-facing schema nor the upstream schema at %s bounds them (maxLength, enum, const, a bounded pattern or a short format); only limits.max_string_length (%d bytes) does. %s",
				f.Field, at, f.Field, f.Pointer, k.c.Limits().MaxStringLength, fix)
		}
	}
}

// textMaxLength reports whether the text policy bounds field's strings.
func (k *contract) textMaxLength(field string) bool {
	if p, ok := k.m.Text.Fields[field]; ok && p.MaxLength != nil {
		return true
	}
	return k.m.Text.Default.MaxLength != nil
}

// schemasAt returns the schemas that apply to the value at ptr (with "*"
// for every element) below root; nil when a token is not declared.
func schemasAt(root *jsonschema.Schema, ptr jsonpointer.Pointer) []*jsonschema.Schema {
	set := []*jsonschema.Schema{root}
	follow(root, ptr, func(_ int, st step) bool {
		if !st.declared {
			set = nil
			return false
		}
		set = st.next
		return true
	})
	return set
}

// maxTextDepth bounds textUnbounded's descent into members and items.
const maxTextDepth = 16

// textUnbounded reports whether a value that every schema of set admits
// can hold a string, or an object member name, with no length bound, and
// where ("the value", "member names at /x", "/x/*"). Only what set merges
// ($ref, allOf) applies together; a oneOf or anyOf bounds the value's
// strings when each of its branches does. No schema at all is any value.
func (k *contract) textUnbounded(set []*jsonschema.Schema, depth int) (string, bool) {
	where := func(s string) string {
		if s == "" {
			return "the value"
		}
		return s
	}
	if len(set) == 0 {
		return "the value (no schema describes it)", true
	}
	if depth > maxTextDepth {
		return "", false
	}
	all := closureAll(set)
	admits := func(t string) bool {
		for _, x := range all {
			if x.Bool == nil && x.Types != nil && !hasType(x, t) {
				return false
			}
		}
		return true
	}
	for _, x := range all {
		if x.Bool != nil && !*x.Bool || x.Bool == nil && (x.Const != nil || x.Enum != nil) {
			return "", false
		}
	}
	branchesBound := func(bound func(b *jsonschema.Schema) bool) bool {
		for _, x := range all {
			for _, group := range [][]*jsonschema.Schema{x.OneOf, x.AnyOf} {
				if len(group) > 0 && !slices.ContainsFunc(group, func(b *jsonschema.Schema) bool { return !bound(b) }) {
					return true
				}
			}
		}
		return false
	}
	if admits("string") {
		if !k.stringBound(all) && !branchesBound(func(b *jsonschema.Schema) bool { return k.stringBound(closure(b)) }) {
			return where(""), true
		}
	}
	if admits("object") && !branchesBound(func(b *jsonschema.Schema) bool {
		return slices.ContainsFunc(closure(b), func(x *jsonschema.Schema) bool { return x.Types != nil && !hasType(x, "object") })
	}) {
		namesClosed, membersClosed := false, false
		var members []*jsonschema.Schema
		for _, x := range all {
			if x.Bool != nil {
				continue
			}
			if ap, ok := x.AdditionalProperties.(bool); ok && !ap && len(x.PatternProperties) == 0 {
				namesClosed = true
			}
			if u := x.UnevaluatedProperties; u != nil && u.Bool != nil && !*u.Bool {
				namesClosed = true
			}
			if x.PropertyNames != nil && k.stringBound(closure(x.PropertyNames)) {
				namesClosed = true
			}
			if closesObject(x) {
				membersClosed = true
			}
			for _, name := range slices.Sorted(maps.Keys(x.Properties)) {
				members = append(members, x.Properties[name])
			}
			for _, p := range x.PatternProperties {
				members = append(members, p)
			}
			if ap, ok := x.AdditionalProperties.(*jsonschema.Schema); ok {
				members = append(members, ap)
			}
		}
		if !namesClosed {
			return "member names", true
		}
		if !membersClosed {
			return "the members of an open object", true
		}
		for _, m := range members {
			if at, ok := k.textUnbounded([]*jsonschema.Schema{m}, depth+1); ok {
				return "inside an object: " + at, true
			}
		}
	}
	if admits("array") && !branchesBound(func(b *jsonschema.Schema) bool {
		return slices.ContainsFunc(closure(b), func(x *jsonschema.Schema) bool { return x.Types != nil && !hasType(x, "array") })
	}) {
		items := false
		for _, x := range all {
			if x.Bool != nil {
				continue
			}
			prefix, rest := schemawalk.ElementSchemas(x, "")
			for _, p := range prefix {
				if at, ok := k.textUnbounded([]*jsonschema.Schema{p.Schema}, depth+1); ok {
					return "in an element: " + at, true
				}
			}
			if rest != nil {
				items = true
				if at, ok := k.textUnbounded([]*jsonschema.Schema{rest.Schema}, depth+1); ok {
					return "in an element: " + at, true
				}
			}
		}
		if !items {
			return "in an element of any value", true
		}
	}
	return "", false
}

// stringBound reports whether schemas that all apply to a value bound the
// length of a string there: maxLength, const, enum, a short asserted
// format, an anchored pattern without unbounded repetition, a type that
// excludes strings, or false.
func (k *contract) stringBound(list []*jsonschema.Schema) bool {
	return slices.ContainsFunc(list, func(x *jsonschema.Schema) bool {
		if x.Bool != nil {
			return !*x.Bool
		}
		if x.MaxLength != nil || x.Const != nil || x.Enum != nil || k.boundingFormat(x.Format) || x.Types != nil && !hasType(x, "string") {
			return true
		}
		p, ok := patternOf(x)
		return ok && p.start && p.end && !p.unbounded
	})
}

// checkValidatorFallback reports each schema the compiled validator leaves
// to jsonschema/v6, at the keyword that made it (validator.Fallback).
func checkValidatorFallback(k *contract, e *emitter) {
	report := func(s *jsonschema.Schema, version, what string) {
		vd := validator.Compile(s)
		if vd.Fallback() == "" {
			return
		}
		loc, kw := vd.FallbackAt()
		e.atLocation(validatorFallback, loc, kw, version, "",
			"%s runs on jsonschema/v6, not the compiled validator: %s. It is slower, collects every error, and has no work bound",
			what, strings.TrimSuffix(vd.Fallback(), " at "+loc))
	}
	for _, v := range k.versions() {
		root, _ := introspect.Schema(k.c, v)
		report(root, v, "the schema of upstream version "+v)
	}
	report(introspect.AgentSchema(k.c), "", "the agent-facing schema")
}
