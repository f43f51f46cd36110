package reports

import (
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"
)

// sarifInformationURI is the tool's documentation as SARIF's
// tool.driver.informationUri names it (the module path's page).
const sarifInformationURI = "https://pkg.go.dev/github.com/airlockdev/airlock"

// WriteLintSARIF writes l as a SARIF 2.1.0 log (OASIS SARIF 2.1.0) with
// one run whose driver is airlock at version: every rule of l.Rules as a
// reportingDescriptor (id, short description, default level), and every
// finding as a result with its rule id and index, level, message, a
// physical location (the file as a relative URI reference, and the line and
// column when known) and a logical location (tool, upstream version and
// JSON Pointer, kind "object"), columns counted in Unicode code points
// (run.columnKind unicodeCodePoints); a finding the contract ignores carries a
// suppression (kind inSource, status accepted, its reason as the
// justification). The log is built with go-sarif
// (github.com/owenrumney/go-sarif/v3); every text is kept exact
// (exactLint), JSON's escaping making it safe.
func WriteLintSARIF(w io.Writer, l *Lint, version string) error {
	c := exactLint(l)
	run := sarif.NewRunWithInformationURI("airlock", sarifInformationURI)
	run.WithColumnKind("unicodeCodePoints")
	run.Tool.Driver.WithVersion(version).WithSemanticVersion(strings.TrimPrefix(version, "v"))
	for _, r := range c.Rules {
		run.AddRule(r.ID).
			WithShortDescription(sarif.NewMultiformatMessageString().WithText(r.Description)).
			WithHelpURI(sarifInformationURI + "#lint").
			WithDefaultConfiguration(sarif.NewReportingConfiguration().WithLevel(string(r.Level)))
	}
	run.WithResults([]*sarif.Result{})
	for _, f := range c.Findings {
		region := sarif.NewRegion()
		if f.Line > 0 {
			region.WithStartLine(f.Line)
			if f.Column > 0 {
				region.WithStartColumn(f.Column)
			}
		}
		phys := sarif.NewPhysicalLocation().WithArtifactLocation(sarif.NewSimpleArtifactLocation(sarifURI(f.File)))
		if f.Line > 0 {
			phys.WithRegion(region)
		}
		loc := sarif.NewLocationWithPhysicalLocation(phys).AddLogicalLocation(
			sarif.NewLogicalLocation().WithKind("object").WithName(pointerText(f.Pointer)).
				WithFullyQualifiedName(logicalName(f)))
		res := run.CreateResultForRule(f.Rule).
			WithLevel(string(f.Level)).
			WithMessage(sarif.NewTextMessage(f.Message)).
			AddLocation(loc)
		if f.Ignored != "" {
			res.WithSuppressions([]*sarif.Suppression{sarif.NewSuppression().WithKind("inSource").WithStatus("accepted").WithJustification(f.Ignored)})
		}
	}
	rep := sarif.NewReport()
	rep.AddRun(run)
	if err := rep.PrettyWrite(w); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// logicalName is a finding's place for people and code-scanning UIs:
// "tool/upstream-version#/pointer" ("tool#/pointer" without a version).
func logicalName(f LintFinding) string {
	s := f.Tool
	if f.UpstreamVersion != "" {
		s += "/" + f.UpstreamVersion
	}
	return s + "#" + f.Pointer
}

// sarifURI spells a file path as SARIF's artifactLocation.uri wants it
// (§3.4.3: a URI reference): a relative path as a relative reference with
// "/" separators, each segment percent-encoded; an absolute path as a
// file: URI.
func sarifURI(path string) string {
	p := filepath.ToSlash(filepath.Clean(path))
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	ref := strings.Join(segs, "/")
	if filepath.IsAbs(path) {
		return "file://" + ref
	}
	return ref
}
