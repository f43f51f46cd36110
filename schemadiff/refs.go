package schemadiff

import (
	"strings"

	"github.com/airlockdev/airlock/reports"
)

// The $ref family: where a definition moved. The walk compares the resolved
// schemas anyway, so a real difference behind a moved $ref is reported
// under its own rule.

var (
	refTargetChanged = Rule{ID: RuleRefTargetChanged, Level: reports.Compatible,
		Description: "A $ref names another schema. The resolved schemas are compared as well, so any real difference is reported under its own rule; this one says only where the definition moved. The same component in another version's folder of the shared components (../_components/<api>/<version>/, one per imported description) is not a move."}
)

// compareRefs reports a first $ref of the location that names another
// schema on the new side (as written, relative to the schema's file).
func compareRefs(o, n *View, e *Emitter) {
	if len(o.refs) > 0 && len(n.refs) > 0 && o.refs[0].text != n.refs[0].text && !sameComponent(o.refs[0].text, n.refs[0].text) {
		e.Emit(refTargetChanged, o.refs[0].ptr, n.refs[0].ptr, "$ref changed from %q to %q", o.refs[0].text, n.refs[0].text)
	}
}

// sameComponent reports whether two $refs name the same file (and
// fragment) of the shared components in two version folders of one API:
// ../_components/<api>/<version>/<file>#<fragment>.
func sameComponent(a, b string) bool {
	const prefix = "../_components/"
	ra, okA := strings.CutPrefix(a, prefix)
	rb, okB := strings.CutPrefix(b, prefix)
	if !okA || !okB {
		return false
	}
	pa, pb := strings.SplitN(ra, "/", 3), strings.SplitN(rb, "/", 3)
	return len(pa) == 3 && len(pb) == 3 && pa[0] == pb[0] && pa[2] == pb[2]
}
