package schema

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/jsonpointer"
)

// Where references may go and where they land: the shared components'
// names and confinement, and the sites of references a load refused.

// ComponentsFolder is the folder of shared components beside the contract
// folders (schemas/_components/<api>/<version>/<component>.schema.json);
// ComponentPrefix is how a contract's schema file reaches it, and how a
// Dir names a component file (Position.Name, Bytes, keyword locations).
const (
	ComponentsFolder = "_components"
	ComponentPrefix  = "../" + ComponentsFolder + "/"
)

// componentFolder is what a folder below ComponentsFolder may be named, and
// MaxComponentDepth the most segments (folders and the file) of a
// component's path below it.
var componentFolder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`) })

// MaxComponentDepth is the most slash-separated segments of a component's
// path below ComponentsFolder, its file name included.
const MaxComponentDepth = 4

// componentPath reports whether rel, a slash-separated path below
// ComponentsFolder, names a component file: at most MaxComponentDepth
// segments, each folder matching componentFolder and the file fileName
// (no "..", no leading dot, no escape of any kind).
func componentPath(rel string) bool {
	segs := strings.Split(rel, "/")
	if len(segs) > MaxComponentDepth || len(rel) > 4*64 {
		return false
	}
	for _, f := range segs[:len(segs)-1] {
		if !componentFolder().MatchString(f) {
			return false
		}
	}
	return fileName.MatchString(segs[len(segs)-1])
}

// componentBase is the URL of the components folder seen from a folder
// URL base (ending in "/"): base resolved against "../_components/". At
// the root ("file:///") it is "file:///_components/": a URL cannot climb
// above its root.
func componentBase(base string) string {
	b, err := url.Parse(base)
	if err != nil {
		return ""
	}
	return b.ResolveReference(&url.URL{Path: ComponentPrefix}).String()
}

// IsComponent reports whether name (as Position.Name gives it) is a shared
// component rather than a file of the contract folder.
func IsComponent(name string) bool { return strings.HasPrefix(name, ComponentPrefix) }

// danglingTarget is the URL a reference named that resolves to a file but
// to nothing in it (a JSON Pointer or an anchor the document lacks), and
// what is missing; "" for any other error.
func danglingTarget(err error) (target, what string) {
	var pe *jsonschema.JSONPointerNotFoundError
	if errors.As(err, &pe) {
		doc, ptr := splitLocation(pe.URL)
		return pe.URL, fmt.Sprintf("nothing at %s in %s", ptr, path.Base(doc))
	}
	var ae *jsonschema.AnchorNotFoundError
	if errors.As(err, &ae) {
		doc, frag := splitLocation(ae.Reference)
		return ae.Reference, fmt.Sprintf("no anchor %q in %s", frag, path.Base(doc))
	}
	return "", ""
}

// refText is the string value at ptr of file name ("" when it is not one).
func (d *Dir) refText(name, ptr string) string {
	if v, err := jsonpointer.Parse(ptr); err == nil {
		if x, ok := v.Lookup(d.Docs[d.url(name)]); ok {
			s, _ := x.(string)
			return s
		}
	}
	return ""
}

// refusedMessage says why the reference at ptr of file name could not be
// served: a file the folder does not hold, or a document outside it.
func (d *Dir) refusedMessage(name, ptr string) string {
	ref := d.refText(name, ptr)
	kw := ptr[strings.LastIndex(ptr, "/")+1:]
	path, _, _ := strings.Cut(ref, "#")
	if file, ok := d.fileFor(d.refused); ok && IsComponent(file) {
		return fmt.Sprintf("%s %q: no shared component %s", kw, ref, d.Show(file))
	}
	if file, ok := d.fileFor(d.refused); ok && !strings.ContainsAny(path, "/:\\") {
		return fmt.Sprintf("%s %q: no file %s in the contract folder (a $ref may name only the *.json files beside this one)", kw, ref, file)
	}
	return fmt.Sprintf("%s %q: %v (airlock reads no other file and fetches nothing)", kw, ref, ErrOutsideContract)
}

// refSite finds the $ref (or $dynamicRef, $schema) that names target, a
// URL the compiler could not serve: the file of the folder and the JSON
// Pointer of that keyword, for the error's line and column. A reference is
// resolved against its document's URL (RFC 3986 §5.2) and compared with
// its fragment (percent-decoded) when fragment is true, without it
// otherwise; the files are searched in name order, each member in name
// order, and the first match wins.
func (d *Dir) refSite(target string, fragment bool) (name, ptr string, ok bool) {
	if target == "" {
		return "", "", false
	}
	norm := func(u string) string {
		doc, frag := splitLocation(u)
		if !fragment {
			return doc
		}
		return doc + "#" + frag
	}
	target = norm(target)
	for _, n := range slices.Sorted(maps.Keys(d.raw)) {
		doc := d.Docs[d.url(n)]
		bases := []string{d.url(n)}
		if obj, ok := doc.(map[string]any); ok {
			if id, ok := obj["$id"].(string); ok && strings.Contains(id, "://") {
				bases = append(bases, id) // the document's own base URI (Core 2020-12 §8.2.1)
			}
		}
		if p, found := findRef(doc, "", func(s string) bool {
			ref, err := url.Parse(s)
			if err != nil {
				return false
			}
			for _, b := range bases {
				if base, err := url.Parse(b); err == nil && norm(base.ResolveReference(ref).String()) == target {
					return true
				}
			}
			return false
		}); found {
			return n, p, true
		}
	}
	return "", "", false
}

// findRef walks v for a reference keyword whose value is names.
func findRef(v any, ptr string, names func(string) bool) (string, bool) {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			at := ptr + "/" + jsonpointer.EscapeToken(k)
			if s, isStr := v[k].(string); isStr && (k == "$ref" || k == "$dynamicRef" || k == "$schema") {
				if names(s) {
					return at, true
				}
				continue
			}
			if p, ok := findRef(v[k], at, names); ok {
				return p, true
			}
		}
	case []any:
		for i, x := range v {
			if p, ok := findRef(x, ptr+"/"+strconv.Itoa(i), names); ok {
				return p, true
			}
		}
	}
	return "", false
}

// refProblems are the references a file may not spell, at each of its
// schema positions (w.schemas), before anything is resolved. A file: URL
// is refused in every file (the folder's URLs are names, not paths). From
// a file of the contract folder, a relative $ref or $dynamicRef starting with
// "_components/" is refused (the components are reached as
// ComponentPrefix + path, the same from every folder). A shared component
// (component) may carry no $id (it is named by its path alone) and may
// $ref only a #fragment or a file beside it (with or without a fragment):
// never a component in another folder, a contract's file or a URL.
func refProblems(doc any, w *checked, component bool) []finding {
	var out []finding
	for _, ptr := range slices.Sorted(maps.Keys(w.schemas)) {
		p, err := jsonpointer.Parse(ptr)
		if err != nil {
			continue
		}
		v, _ := p.Lookup(doc)
		obj, ok := v.(map[string]any)
		if !ok {
			continue
		}
		if _, ok := obj["$id"]; ok && component {
			out = append(out, finding{Pointer: ptr + "/$id", Msg: "$id: a shared component is named by its path under " + ComponentsFolder + "; remove $id", Err: ErrOutsideContract})
		}
		for _, kw := range []string{"$ref", "$dynamicRef"} {
			s, ok := obj[kw].(string)
			if !ok {
				continue
			}
			file, _, _ := strings.Cut(s, "#")
			switch {
			case strings.HasPrefix(strings.ToLower(s), "file:"):
				out = append(out, finding{Pointer: ptr + "/" + jsonpointer.EscapeToken(kw),
					Msg: fmt.Sprintf("%s %q: %v: a file: URL names no contract file (name the file beside this one, or a shared component as %s<api>/<version>/<file>.json)", kw, s, ErrOutsideContract, ComponentPrefix),
					Err: ErrOutsideContract})
			case component && file != "" && !fileName.MatchString(file):
				out = append(out, finding{Pointer: ptr + "/" + jsonpointer.EscapeToken(kw),
					Msg: fmt.Sprintf("%s %q: %v: a shared component may reference only the components beside it (a file name, with or without a #fragment) or a #fragment of itself", kw, s, ErrOutsideContract),
					Err: ErrOutsideContract})
			case !component && strings.HasPrefix(strings.TrimPrefix(file, "./"), ComponentsFolder+"/"):
				out = append(out, finding{Pointer: ptr + "/" + jsonpointer.EscapeToken(kw),
					Msg: fmt.Sprintf("%s %q: %v: the shared components are reached as %s<api>/<version>/<file>.json", kw, s, ErrOutsideContract, ComponentPrefix),
					Err: ErrOutsideContract})
			}
		}
	}
	return out
}

// RefName is the name (as Position.Name spells it) of the file that the
// file part of a $ref names from file from: a sibling of from (a file of the
// folder, or a component beside a component), or ComponentPrefix + path
// from a file of the folder. "" when ref names no file this Dir could
// serve.
func (d *Dir) RefName(from, ref string) string {
	if rel, ok := strings.CutPrefix(from, ComponentPrefix); ok {
		if !fileName.MatchString(ref) {
			return ""
		}
		return ComponentPrefix + path.Join(path.Dir(rel), ref)
	}
	if rel, ok := strings.CutPrefix(ref, ComponentPrefix); ok && componentPath(rel) {
		return ref
	}
	if fileName.MatchString(ref) {
		return ref
	}
	return ""
}
