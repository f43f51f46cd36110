package schemadiff

import (
	"fmt"
	"slices"
	"strings"

	"github.com/airlockdev/airlock/internal/manifest"
)

// The text policy family (docs/contracts.md#text-policy): each scope's
// policy with the built-in defaults and the default scope filled in, key by
// key, as the gate resolves it.

// textPolicy is one scope's effective policy, and for each key the
// manifest key that set it ("" for the built-in default).
type textPolicy struct {
	maxLength     int // 0: no bound
	normalization string
	controls      []string // sorted
	bidi          bool
	zeroWidth     bool
	tags          bool
	untrusted     bool
	from          map[string]string
}

// resolveText applies the manifest policies layers in order over the
// built-in default; keys[i] is the manifest key of layers[i].
func resolveText(layers []manifest.TextPolicy, keys []string) textPolicy {
	p := textPolicy{controls: []string{"LF", "TAB"}, normalization: "none", from: map[string]string{}}
	for i, w := range layers {
		k := keys[i]
		if w.MaxLength != nil {
			p.maxLength, p.from["max_length"] = *w.MaxLength, k+"/max_length"
		}
		if w.Normalization != nil {
			p.normalization, p.from["normalization"] = *w.Normalization, k+"/normalization"
		}
		if w.Controls != nil {
			p.controls, p.from["controls"] = slices.Sorted(slices.Values(w.Controls)), k+"/controls"
			p.controls = slices.Compact(p.controls)
		}
		if w.Bidi != nil {
			p.bidi, p.from["bidi"] = *w.Bidi, k+"/bidi"
		}
		if w.ZeroWidth != nil {
			p.zeroWidth, p.from["zero_width"] = *w.ZeroWidth, k+"/zero_width"
		}
		if w.TagCharacters != nil {
			p.tags, p.from["tag_characters"] = *w.TagCharacters, k+"/tag_characters"
		}
		if w.UntrustedText != nil {
			p.untrusted, p.from["untrusted_text"] = *w.UntrustedText, k+"/untrusted_text"
		}
	}
	return p
}

// textScope is one scope of the text policy: the default, an agent field
// or a detail field.
type textScope struct {
	name   string // "default", "field title", "detail field upstream_code"
	layers func(m manifest.Manifest) ([]manifest.TextPolicy, []string)
}

func textScopes(o, n manifest.Manifest) []textScope {
	scopes := []textScope{{name: "default", layers: func(m manifest.Manifest) ([]manifest.TextPolicy, []string) {
		return []manifest.TextPolicy{m.Text.Default}, []string{"/text/default"}
	}}}
	for _, f := range unionKeys(o.Text.Fields, n.Text.Fields) {
		scopes = append(scopes, textScope{name: "field " + f, layers: func(m manifest.Manifest) ([]manifest.TextPolicy, []string) {
			return []manifest.TextPolicy{m.Text.Default, m.Text.Fields[f]}, []string{"/text/default", key("text", "fields", f)}
		}})
	}
	for _, f := range unionKeys(o.Text.DetailFields, n.Text.DetailFields) {
		scopes = append(scopes, textScope{name: "detail field " + f, layers: func(m manifest.Manifest) ([]manifest.TextPolicy, []string) {
			d := m.Text.Default.Clone()
			d.UntrustedText = nil // the default's untrusted_text does not apply to details
			return []manifest.TextPolicy{d, m.Text.DetailFields[f]}, []string{"/text/default", key("text", "detail_fields", f)}
		}})
	}
	return scopes
}

// compareTextPolicy reports each key of each scope's effective policy that
// admits more (loosened) or less (tightened) than before.
func compareTextPolicy(o, n *ManifestView, e *ManifestEmitter) {
	for _, s := range textScopes(o.M, n.M) {
		ol, ok := s.layers(o.M)
		nl, nk := s.layers(n.M)
		op, np := resolveText(ol, ok), resolveText(nl, nk)
		report := func(name string, looser bool, from, to string) {
			okey, nkey := keyOr(op.from[name], "/text"), keyOr(np.from[name], "/text")
			r := manifestTextPolicyTightened
			if looser {
				r = manifestTextPolicyLoosened
			}
			e.Emit(r, okey, nkey, side(np.from[name] != ""), "", "text policy (%s) %s: %s became %s", s.name, name, from, to)
		}
		if op.maxLength != np.maxLength {
			report("max_length", np.maxLength == 0 || op.maxLength != 0 && np.maxLength > op.maxLength, lengthText(op.maxLength), lengthText(np.maxLength))
		}
		if op.normalization != np.normalization {
			// From no form to one only tightens; dropping a form or
			// changing it admits strings the old form refused.
			report("normalization", op.normalization != "none", op.normalization, np.normalization)
		}
		if !slices.Equal(op.controls, np.controls) {
			report("controls", len(minus(np.controls, op.controls)) > 0, "["+strings.Join(op.controls, " ")+"]", "["+strings.Join(np.controls, " ")+"]")
		}
		for _, b := range []struct {
			name     string
			old, new bool
		}{{"bidi", op.bidi, np.bidi}, {"zero_width", op.zeroWidth, np.zeroWidth}, {"tag_characters", op.tags, np.tags}} {
			if b.old != b.new {
				report(b.name, b.new, fmt.Sprint(b.old), fmt.Sprint(b.new))
			}
		}
		if op.untrusted != np.untrusted {
			report("untrusted_text", !np.untrusted, fmt.Sprint(op.untrusted), fmt.Sprint(np.untrusted))
		}
	}
}

func lengthText(n int) string {
	if n == 0 {
		return "no bound"
	}
	return fmt.Sprint(n)
}

func keyOr(k, or string) string {
	if k == "" {
		return or
	}
	return k
}
