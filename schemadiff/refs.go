package schemadiff

import "github.com/airlockdev/airlock/reports"

// The $ref family: where a definition moved. The walk compares the resolved
// schemas anyway, so a real difference behind a moved $ref is reported
// under its own rule.

var (
	refTargetChanged = Rule{ID: RuleRefTargetChanged, Level: reports.Compatible,
		Description: "A $ref names another schema. The resolved schemas are compared as well, so any real difference is reported under its own rule; this one says only where the definition moved."}
)

// compareRefs reports a first $ref of the location that names another
// schema on the new side (as written, relative to the schema's file).
func compareRefs(o, n *View, e *Emitter) {
	if len(o.refs) > 0 && len(n.refs) > 0 && o.refs[0].text != n.refs[0].text {
		e.Emit(refTargetChanged, o.refs[0].ptr, n.refs[0].ptr, "$ref changed from %q to %q", o.refs[0].text, n.refs[0].text)
	}
}
