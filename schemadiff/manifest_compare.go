package schemadiff

// The manifest rules' handlers, one per family of the registry
// (rules.go): presence, upstream versions and current, limits, content
// types, format and text policy, projection, semantic rules, error
// contracts and codes, statuses; and their helpers.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/manifest"
	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/jsonpointer"
)

// key builds a manifest JSON Pointer from tokens, escaping each.
func key(tokens ...string) string {
	return jsonpointer.Pointer(tokens).String()
}

func versionKey(v string) string { return key("upstream_versions", v) }

// comparePresence reports a contract present on one side only.
func comparePresence(o, n *ManifestView, e *ManifestEmitter) {
	switch {
	case o == nil && n != nil:
		e.Emit(manifestContractAdded, "", "", InNew, "", "contract %s (version %s) was added", n.M.Tool, n.M.Version)
	case n == nil && o != nil:
		e.Emit(manifestContractRemoved, "", "", InOld, "", "contract %s (version %s) was removed", o.M.Tool, o.M.Version)
	}
}

// compareVersionsManifest reports upstream versions added and removed,
// current, and the protocol of the contract and each version in both.
func compareVersionsManifest(o, n *ManifestView, e *ManifestEmitter) {
	for _, v := range SortVersions(unionKeys(o.M.UpstreamVersions, n.M.UpstreamVersions)) {
		_, inOld := o.M.UpstreamVersions[v]
		_, inNew := n.M.UpstreamVersions[v]
		switch {
		case !inOld:
			e.Emit(manifestVersionAdded, "/upstream_versions", versionKey(v), InNew, "", "upstream version %s was added", v)
		case !inNew:
			e.Emit(manifestVersionRemoved, versionKey(v), "/upstream_versions", InOld, "", "upstream version %s was removed", v)
		}
	}
	if oc, nc := o.Contract.Current(), n.Contract.Current(); oc != nc {
		e.Emit(manifestCurrentChanged, presentKey(o.M.Current != "", "/current", ""), presentKey(n.M.Current != "", "/current", ""), side(n.M.Current != ""), "",
			"current changed from %s to %s: calls that name no upstream version are judged by %s", oc, nc, nc)
	}
	if op, np := o.Contract.Protocol(), n.Contract.Protocol(); op != np {
		e.Emit(manifestProtocolChanged, presentKey(o.M.Protocol != "", "/protocol", ""), presentKey(n.M.Protocol != "", "/protocol", ""), side(n.M.Protocol != ""), "",
			"protocol changed from %s to %s", op, np)
	}
	if effectiveResult(o.M.Result) != effectiveResult(n.M.Result) || !equalIntPtr(o.M.TextBlock, n.M.TextBlock) {
		e.Emit(manifestProtocolChanged, presentKey(o.M.Result != "", "/result", ""), presentKey(n.M.Result != "", "/result", ""), side(n.M.Result != "" || n.M.TextBlock != nil), "",
			"the MCP result mode changed from %s to %s", resultText(effectiveResult(o.M.Result), o.M.TextBlock), resultText(effectiveResult(n.M.Result), n.M.TextBlock))
	}
	for _, v := range bothVersions(o, n) {
		ov, nv := o.M.UpstreamVersions[v], n.M.UpstreamVersions[v]
		// A version's own result replaces the manifest's; its text block
		// too (docs/contracts.md#mcp-results). The manifest-level change is
		// reported above, so only a difference of the version's own keys
		// is reported here.
		ore, nre := cmpOr(ov.Result, effectiveResult(o.M.Result)), cmpOr(nv.Result, effectiveResult(n.M.Result))
		if (ov.Result != "" || nv.Result != "") && ore != nre || !equalIntPtr(ov.TextBlock, nv.TextBlock) {
			e.Emit(manifestProtocolChanged, presentKey(ov.Result != "", key("upstream_versions", v, "result"), versionKey(v)),
				presentKey(nv.Result != "", key("upstream_versions", v, "result"), versionKey(v)), side(nv.Result != "" || nv.TextBlock != nil), "",
				"upstream %s: the MCP result mode changed from %s to %s", v, resultText(ore, ov.TextBlock), resultText(nre, nv.TextBlock))
		}
	}
}

// cmpOr is a, or b when a is empty.
func cmpOr(a, b string) string {
	if a == "" {
		return b
	}
	return a
}

// effectiveResult is a result mode with its default filled in: an
// unset one is structured (or, for an upstream version, the manifest's).
func effectiveResult(r string) string {
	if r == "" {
		return "structured"
	}
	return r
}

func resultText(result string, block *int) string {
	if block != nil {
		return fmt.Sprintf("%s (text block %d)", result, *block)
	}
	return result
}

// compareLimits reports each limit raised or lowered, defaults filled in
// (gate.Contract.Limits).
func compareLimits(o, n *ManifestView, e *ManifestEmitter) {
	ol, nl := o.Contract.Limits(), n.Contract.Limits()
	type limit struct {
		name       string
		old, new   int64
		oldSet     bool
		newSet     bool
		unit       string
		defaultFor string
	}
	limits := []limit{
		{"max_bytes", ol.MaxBytes, nl.MaxBytes, o.M.Limits.MaxBytes != 0, n.M.Limits.MaxBytes != 0, "bytes", "transport.too_large"},
		{"max_depth", int64(ol.MaxDepth), int64(nl.MaxDepth), o.M.Limits.MaxDepth != 0, n.M.Limits.MaxDepth != 0, "levels", "parse.depth"},
		{"max_number_length", int64(ol.MaxNumberLength), int64(nl.MaxNumberLength), o.M.Limits.MaxNumberLength != 0, n.M.Limits.MaxNumberLength != 0, "bytes", "parse.number"},
		{"max_string_length", int64(ol.MaxStringLength), int64(nl.MaxStringLength), o.M.Limits.MaxStringLength != 0, n.M.Limits.MaxStringLength != 0, "bytes", "parse.string_too_long"},
	}
	for _, l := range limits {
		if l.old == l.new {
			continue
		}
		ok, nk := limitKey(o, l.name, l.oldSet), limitKey(n, l.name, l.newSet)
		if l.new > l.old {
			e.Emit(manifestLimitRaised, ok, nk, side(l.newSet), "", "limits %s raised from %d to %d %s: bodies refused with %s are admitted", l.name, l.old, l.new, l.unit, l.defaultFor)
		} else {
			e.Emit(manifestLimitLowered, ok, nk, side(l.newSet), "", "limits %s lowered from %d to %d %s: more bodies are refused with %s", l.name, l.old, l.new, l.unit, l.defaultFor)
		}
	}
	of, nf := ol.AllowFoldCollisions, nl.AllowFoldCollisions
	if of != nf {
		ok := limitKey(o, "member_fold_collision", o.M.Limits.MemberFoldCollision != nil)
		nk := limitKey(n, "member_fold_collision", n.M.Limits.MemberFoldCollision != nil)
		if nf {
			e.Emit(manifestLimitRaised, ok, nk, side(n.M.Limits.MemberFoldCollision != nil), "", "limits member_fold_collision turned off: member names equal under case folding are admitted")
		} else {
			e.Emit(manifestLimitLowered, ok, nk, side(n.M.Limits.MemberFoldCollision != nil), "", "limits member_fold_collision turned on: member names equal under case folding are refused with parse.member_fold_collision")
		}
	}
}

// limitKey is /limits/<name> when the manifest sets it, else /limits when
// it has a limits section, else the root.
func limitKey(v *ManifestView, name string, set bool) string {
	switch {
	case set:
		return key("limits", name)
	case v.M.Limits != (manifest.Limits{}):
		return "/limits"
	}
	return ""
}

// compareContentTypes reports the media ranges of one side that the
// other side's do not cover (defaults filled in; compared lower-cased,
// parameters as written): an entry of the new list that no old entry
// covers widens what the gate admits, an old entry no new entry covers
// narrows it. An entry covers another when it admits every media type the
// other admits, as the gate's transport stage matches them (an exact type,
// or "type/*+suffix" for any subtype with that structured-syntax suffix,
// RFC 6839 §3): adding application/problem+json beside application/*+json
// changes nothing the gate admits, and is not reported.
func compareContentTypes(o, n *ManifestView, e *ManifestEmitter) {
	ot, nt := contentTypes(o.M.ContentTypes), contentTypes(n.M.ContentTypes)
	ok := presentKey(o.M.ContentTypes != nil, "/content_types", "")
	nk := presentKey(n.M.ContentTypes != nil, "/content_types", "")
	if added := uncovered(nt, ot); len(added) > 0 {
		e.Emit(manifestContentTypesWidened, ok, nk, side(n.M.ContentTypes != nil), "", "content_types now admits %s", strings.Join(added, ", "))
	}
	if removed := uncovered(ot, nt); len(removed) > 0 {
		e.Emit(manifestContentTypesNarrowed, ok, nk, side(n.M.ContentTypes != nil), "", "content_types no longer admits %s", strings.Join(removed, ", "))
	}
}

// uncovered is the entries of a that no entry of b covers, in a's order.
func uncovered(a, b []string) []string {
	var out []string
	for _, t := range a {
		if !slices.ContainsFunc(b, func(r string) bool { return coversMediaRange(r, t) }) {
			out = append(out, t)
		}
	}
	return out
}

// coversMediaRange reports whether content_types entry r admits every
// media type entry t admits: t itself, or r is "type/*+suffix" and t is a
// type of that type with a non-empty subtype before the suffix (the
// gate's match), or t is "type/*+more+suffix" or "type/*+suffix".
func coversMediaRange(r, t string) bool {
	if r == t {
		return true
	}
	typ, suffix, ok := strings.Cut(r, "/*+")
	if !ok {
		return false
	}
	if ttyp, tsuffix, ok := strings.Cut(t, "/*+"); ok {
		return ttyp == typ && (tsuffix == suffix || strings.HasSuffix(tsuffix, "+"+suffix))
	}
	return strings.HasPrefix(t, typ+"/") && strings.HasSuffix(t, "+"+suffix) && len(t) > len(typ)+2+len(suffix)
}

func contentTypes(list []string) []string {
	if list == nil {
		list = gate.DefaultContentTypes
	}
	out := make([]string, 0, len(list))
	for _, t := range list {
		out = append(out, strings.ToLower(strings.TrimSpace(t)))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// The strictness of format policies: assert refuses most, a named checker
// admits some values assert refuses, annotate refuses none.
const (
	policyAnnotate = iota
	policyChecker
	policyAssert
)

func policyRank(p string) int {
	switch p {
	case "assert":
		return policyAssert
	case "annotate":
		return policyAnnotate
	}
	return policyChecker
}

// formatPolicy is the policy the manifest gives format f: its own entry,
// else default, else assert.
func formatPolicy(m map[string]string, f string) (string, string) {
	if p, ok := m[f]; ok {
		return p, key("formats", f)
	}
	if p, ok := m["default"]; ok {
		return p, "/formats/default"
	}
	if m != nil {
		return "assert", "/formats"
	}
	return "assert", ""
}

// compareFormatPolicy compares the policy of every format a policy may
// name.
func compareFormatPolicy(o, n *ManifestView, e *ManifestEmitter) {
	formats := map[string]bool{}
	for f := range o.M.Formats {
		formats[f] = true
	}
	for f := range n.M.Formats {
		formats[f] = true
	}
	delete(formats, "default")
	for _, f := range schema.PolicyFormats() {
		formats[f] = true
	}
	names := make([]string, 0, len(formats))
	for f := range formats {
		names = append(names, f)
	}
	slices.Sort(names)
	for _, f := range names {
		op, ok := formatPolicy(o.M.Formats, f)
		np, nk := formatPolicy(n.M.Formats, f)
		if op == np {
			continue
		}
		at := side(nk != "")
		if policyRank(np) > policyRank(op) {
			e.Emit(manifestFormatPolicyTightened, ok, nk, at, "", "format %s: policy %s became %s", f, op, np)
		} else {
			e.Emit(manifestFormatPolicyLoosened, ok, nk, at, "", "format %s: policy %s became %s: values %s refused are admitted", f, op, np, op)
		}
	}
}

// bothVersions lists the upstream versions both manifests have, in
// version order.
func bothVersions(o, n *ManifestView) []string {
	var out []string
	for _, v := range SortVersions(o.Contract.UpstreamVersions()) {
		if _, ok := n.M.UpstreamVersions[v]; ok {
			out = append(out, v)
		}
	}
	return out
}

// compareProjections reports agent fields added to, removed from or
// re-pointed in the projection of each upstream version in both.
func compareProjections(o, n *ManifestView, e *ManifestEmitter) {
	for _, v := range bothVersions(o, n) {
		op, np := o.M.UpstreamVersions[v].Projection, n.M.UpstreamVersions[v].Projection
		pk := key("upstream_versions", v, "projection")
		for _, f := range unionKeys(op, np) {
			fk := key("upstream_versions", v, "projection", f)
			optr, inOld := op[f]
			nptr, inNew := np[f]
			switch {
			case !inOld:
				e.Emit(manifestProjectionFieldAdded, pk, fk, InNew, nptr, "upstream %s: agent field %s was added, copied from %s", v, f, pointerText(nptr))
			case !inNew:
				e.Emit(manifestProjectionFieldRemoved, fk, pk, InOld, optr, "upstream %s: agent field %s (from %s) was removed", v, f, pointerText(optr))
			case optr != nptr:
				e.Emit(manifestProjectionFieldRepointed, fk, fk, InNew, nptr, "upstream %s: agent field %s copies from %s instead of %s", v, f, pointerText(nptr), pointerText(optr))
			}
		}
	}
}

func pointerText(p string) string {
	if p == "" {
		return "the whole value"
	}
	return p
}

// ruleBody is everything of a rule but its name and, for freshness, its
// window: two rules with equal bodies check the same thing.
func ruleBody(r manifest.RuleSpec) string {
	kind, ptr := r.Kind()
	switch kind {
	case "context":
		return kind + "\x00" + ptr + "\x00" + r.Context.Key
	case "membership":
		return kind + "\x00" + ptr + "\x00" + r.Membership.Key
	case "count":
		return kind + "\x00" + ptr + "\x00" + r.Count.EqualsPointer + "\x00" + r.Count.Key
	case "cel":
		return kind + "\x00" + r.CEL.Expr
	case "custom":
		return kind + "\x00" + r.Custom
	}
	return kind + "\x00" + ptr
}

// compareRules reports the semantic rules of each upstream version in
// both, matched by name: removed, added, changed, and freshness windows
// loosened or tightened.
func compareRules(o, n *ManifestView, e *ManifestEmitter) {
	for _, v := range bothVersions(o, n) {
		or, nr := o.M.UpstreamVersions[v].Rules, n.M.UpstreamVersions[v].Rules
		rk := key("upstream_versions", v, "rules")
		ork, nrk := presentKey(or != nil, rk, versionKey(v)), presentKey(nr != nil, rk, versionKey(v))
		oldAt, newAt := byName(or, func(r manifest.RuleSpec) string { return r.Name }), byName(nr, func(r manifest.RuleSpec) string { return r.Name })
		for i, r := range or {
			kind, ptr := r.Kind()
			j, found := newAt[r.Name]
			if !found {
				e.Emit(manifestRuleRemoved, key("upstream_versions", v, "rules", fmt.Sprint(i)), nrk, InOld, ptr,
					"upstream %s: %s rule %q%s was removed: the gate no longer checks it", v, kind, r.Name, onPointer(ptr))
				continue
			}
			n := nr[j]
			ok, nk := key("upstream_versions", v, "rules", fmt.Sprint(i)), key("upstream_versions", v, "rules", fmt.Sprint(j))
			nkind, nptr := n.Kind()
			if ruleBody(r) != ruleBody(n) {
				e.Emit(manifestRuleChanged, ok, nk, InNew, nptr, "upstream %s: rule %q changed from %s%s to %s%s", v, r.Name, kind, onPointer(ptr), nkind, onPointer(nptr))
				continue
			}
			if kind != "freshness" {
				continue
			}
			of, nf := r.Freshness, n.Freshness
			looser := ageLooser(nf.MaxAge, of.MaxAge) || nf.MaxSkew > of.MaxSkew
			tighter := ageLooser(of.MaxAge, nf.MaxAge) || nf.MaxSkew < of.MaxSkew
			window := func(f *manifest.FreshnessSpec) string {
				age := "no age limit"
				if f.MaxAge > 0 {
					age = "max_age " + f.MaxAge.String()
				}
				return age + ", max_skew " + f.MaxSkew.String()
			}
			fk := nk + "/freshness"
			switch {
			case looser:
				e.Emit(manifestRuleLoosened, ok+"/freshness", fk, InNew, nptr, "upstream %s: freshness rule %q on %s widened from %s to %s", v, r.Name, pointerText(nptr), window(of), window(nf))
			case tighter:
				e.Emit(manifestRuleTightened, ok+"/freshness", fk, InNew, nptr, "upstream %s: freshness rule %q on %s narrowed from %s to %s", v, r.Name, pointerText(nptr), window(of), window(nf))
			}
		}
		for j, r := range nr {
			if _, ok := oldAt[r.Name]; ok {
				continue
			}
			kind, ptr := r.Kind()
			e.Emit(manifestRuleAdded, ork, key("upstream_versions", v, "rules", fmt.Sprint(j)), InNew, ptr,
				"upstream %s: %s rule %q%s was added", v, kind, r.Name, onPointer(ptr))
		}
	}
}

// byName maps each name (rule and error contract names are unique in an
// upstream version: load refuses a repeat) to its first index, so matching
// two lists costs time linear in their length.
func byName[T any](list []T, name func(T) string) map[string]int {
	out := make(map[string]int, len(list))
	for i, x := range list {
		if _, ok := out[name(x)]; !ok {
			out[name(x)] = i
		}
	}
	return out
}

// ageLooser reports whether max_age a admits a stamp b refuses (0 is no
// age limit).
func ageLooser(a, b time.Duration) bool {
	if a == b {
		return false
	}
	return a == 0 || b != 0 && a > b
}

func onPointer(p string) string {
	if p == "" {
		return ""
	}
	return " on " + p
}

// compareErrors reports error_codes, agent_error_schema and the error
// contracts of each upstream version in both, matched by name.
func compareErrors(o, n *ManifestView, e *ManifestEmitter) {
	oc, nc := errorCodes(o.M.ErrorCodes), errorCodes(n.M.ErrorCodes)
	if !slices.Equal(oc, nc) {
		e.Emit(manifestErrorCodesChanged, presentKey(o.M.ErrorCodes != nil, "/error_codes", ""), presentKey(n.M.ErrorCodes != nil, "/error_codes", ""),
			side(n.M.ErrorCodes != nil), "", "error_codes changed from [%s] to [%s]", strings.Join(oc, " "), strings.Join(nc, " "))
	}
	if o.M.AgentErrorSchema != n.M.AgentErrorSchema {
		e.Emit(manifestAgentErrorSchemaChanged, presentKey(o.M.AgentErrorSchema != "", "/agent_error_schema", ""), presentKey(n.M.AgentErrorSchema != "", "/agent_error_schema", ""),
			side(n.M.AgentErrorSchema != ""), "", "agent_error_schema changed from %s to %s", orNone(o.M.AgentErrorSchema), orNone(n.M.AgentErrorSchema))
	}
	for _, v := range bothVersions(o, n) {
		oe, ne := o.M.UpstreamVersions[v].Errors, n.M.UpstreamVersions[v].Errors
		ek := key("upstream_versions", v, "errors")
		oek, nek := presentKey(oe != nil, ek, versionKey(v)), presentKey(ne != nil, ek, versionKey(v))
		name := func(s manifest.ErrorSpec) string { return s.Name }
		oldAt, newAt := byName(oe, name), byName(ne, name)
		for i, s := range oe {
			j, found := newAt[s.Name]
			if !found {
				e.Emit(manifestErrorContractRemoved, key("upstream_versions", v, "errors", fmt.Sprint(i)), nek, InOld, "",
					"upstream %s: error contract %q (%s) was removed", v, s.Name, s.Code)
				continue
			}
			t := ne[j]
			ok, nk := key("upstream_versions", v, "errors", fmt.Sprint(i)), key("upstream_versions", v, "errors", fmt.Sprint(j))
			if !slices.Equal(s.When.Status, t.When.Status) || s.When.IsError != t.When.IsError || s.Schema != t.Schema || !equalMaps(s.Detail, t.Detail) {
				e.Emit(manifestErrorContractChanged, ok, nk, InNew, "", "upstream %s: error contract %q changed its %s", v, s.Name, errorParts(s, t))
			}
			if s.Code != t.Code || s.Retryable != t.Retryable {
				e.Emit(manifestErrorOutcomeChanged, ok, nk, InNew, "", "upstream %s: error contract %q now gives %s (retryable %t) instead of %s (retryable %t)", v, s.Name, t.Code, t.Retryable, s.Code, s.Retryable)
			}
		}
		for j, s := range ne {
			if _, ok := oldAt[s.Name]; !ok {
				e.Emit(manifestErrorContractAdded, oek, key("upstream_versions", v, "errors", fmt.Sprint(j)), InNew, "",
					"upstream %s: error contract %q (%s) was added", v, s.Name, s.Code)
			}
		}
	}
}

func errorParts(s, t manifest.ErrorSpec) string {
	var parts []string
	if !slices.Equal(s.When.Status, t.When.Status) || s.When.IsError != t.When.IsError {
		parts = append(parts, "when")
	}
	if s.Schema != t.Schema {
		parts = append(parts, "schema")
	}
	if !equalMaps(s.Detail, t.Detail) {
		parts = append(parts, "detail")
	}
	return strings.Join(parts, ", ")
}

func errorCodes(list []string) []string {
	if list == nil {
		list = []string{string(gate.InvalidResponse), string(gate.NotFound), string(gate.UpstreamUnavailable)}
	}
	out := slices.Clone(list)
	slices.Sort(out)
	return slices.Compact(out)
}

// compareStatusPolicy reports statuses and retryable entries added,
// removed or changed.
func compareStatusPolicy(o, n *ManifestView, e *ManifestEmitter) {
	for _, s := range unionKeys(o.M.Statuses, n.M.Statuses) {
		os, inOld := o.M.Statuses[s]
		ns, inNew := n.M.Statuses[s]
		if inOld && inNew && os.ErrorCode == ns.ErrorCode && equalBoolPtr(os.Retryable, ns.Retryable) {
			continue
		}
		ok := presentKey(inOld, key("statuses", s), presentKey(o.M.Statuses != nil, "/statuses", ""))
		nk := presentKey(inNew, key("statuses", s), presentKey(n.M.Statuses != nil, "/statuses", ""))
		e.Emit(manifestStatusPolicyChanged, ok, nk, side(inNew), "", "statuses %s: %s became %s", s, statusText(os, inOld), statusText(ns, inNew))
	}
	for _, r := range unionKeys(o.M.Retryable, n.M.Retryable) {
		ov, inOld := o.M.Retryable[r]
		nv, inNew := n.M.Retryable[r]
		if inOld && inNew && ov == nv {
			continue
		}
		ok := presentKey(inOld, key("retryable", r), presentKey(o.M.Retryable != nil, "/retryable", ""))
		nk := presentKey(inNew, key("retryable", r), presentKey(n.M.Retryable != nil, "/retryable", ""))
		e.Emit(manifestStatusPolicyChanged, ok, nk, side(inNew), "", "retryable %s: %s became %s", r, boolText(ov, inOld), boolText(nv, inNew))
	}
}

func statusText(s manifest.StatusSpec, ok bool) string {
	if !ok {
		return "the default"
	}
	if s.Retryable == nil {
		return s.ErrorCode
	}
	return fmt.Sprintf("%s (retryable %t)", s.ErrorCode, *s.Retryable)
}

func boolText(b, ok bool) string {
	if !ok {
		return "the default"
	}
	return fmt.Sprint(b)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// presentKey is k when present, else the enclosing key parent.
func presentKey(present bool, k, parent string) string {
	if present {
		return k
	}
	return parent
}

// side is InNew when the new manifest writes the key, else InOld (whose
// key, or nearest enclosing key, names the line).
func side(inNew bool) Side {
	if inNew {
		return InNew
	}
	return InOld
}

// minus is the elements of a not in b, in a's order.
func minus(a, b []string) []string {
	in := make(map[string]bool, len(b))
	for _, s := range b {
		in[s] = true
	}
	var out []string
	for _, s := range a {
		if !in[s] {
			out = append(out, s)
		}
	}
	return out
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func equalIntPtr(a, b *int) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

func equalBoolPtr(a, b *bool) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}
