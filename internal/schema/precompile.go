package schema

import (
	"maps"
	"net/url"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// minPrecompileFiles is the number of other files a schema file must reach
// through $refs before CompileWith compiles them one by one first (a
// variable for the tests only).
var minPrecompileFiles = 8

// precompile compiles, with c, the files the schema file at rootURL
// reaches through $refs, each in a Compile call of its own, a file after
// the files it reaches (depth-first, in member-name order), when there are
// at least minPrecompileFiles of them. jsonschema/v6 looks each schema up
// in the queue of one Compile call by a linear scan, so one call over n
// subschemas costs O(n²): a 5 MB schema of 970 files spends most of its
// compile there; file by file, each call's queue holds one file.
//
// It is only a speed-up and changes no result: the compile of rootURL that
// follows finds the files compiled. The $refs are found by a scan of each
// file's JSON (a file that declares $id, whose $refs resolve against it,
// stops the scan); on the first problem (a file that cannot be read or
// compiled) it stops, and the compile of rootURL reports the problem as
// it would have. The files it read are marked served, as the compile of
// rootURL, which does not read them again, would have marked them.
func (d *Dir) precompile(c *jsonschema.Compiler, rootURL string) {
	defer func() { d.refused = "" }()
	var order []string
	seen := map[string]bool{rootURL: true}
	var visit func(fileURL string, doc any) bool
	visit = func(fileURL string, doc any) bool {
		base, err := url.Parse(fileURL)
		if err != nil {
			return false
		}
		refs, ok := fileRefs(doc)
		if !ok {
			return false
		}
		for _, ref := range refs {
			r, err := url.Parse(ref)
			if err != nil {
				return false
			}
			target := base.ResolveReference(r)
			target.Fragment, target.RawFragment = "", ""
			t := target.String()
			if seen[t] {
				continue
			}
			seen[t] = true
			td, err := d.Load(t)
			if err != nil || !visit(t, td) {
				return false
			}
			order = append(order, t)
		}
		return true
	}
	doc, err := d.Load(rootURL)
	if err != nil || !visit(rootURL, doc) || len(order) < minPrecompileFiles {
		return
	}
	for _, u := range order {
		if _, err := c.Compile(u); err != nil {
			return
		}
	}
}

// fileRefs returns the $ref values of a file's JSON, in document order
// (members by name); ok is false when the file declares $id anywhere.
func fileRefs(doc any) (refs []string, ok bool) {
	stack := []any{doc}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch v := v.(type) {
		case map[string]any:
			if _, ok := v["$id"].(string); ok {
				return nil, false
			}
			if r, ok := v["$ref"].(string); ok {
				refs = append(refs, r)
			}
			keys := slices.Sorted(maps.Keys(v))
			for i := len(keys) - 1; i >= 0; i-- {
				stack = append(stack, v[keys[i]])
			}
		case []any:
			for i := len(v) - 1; i >= 0; i-- {
				stack = append(stack, v[i])
			}
		}
	}
	return refs, true
}
