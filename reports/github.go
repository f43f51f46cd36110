package reports

import (
	"fmt"
	"io"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// MaxAnnotations is the most workflow-command annotations one command
// writes (--format github). GitHub shows at most 10 error and 10 warning
// annotations of a step and 50 of a job (GitHub Docs, "Workflow commands
// for GitHub Actions"); more would only fill the log. The annotations past
// the cap are counted in one ::notice:: line instead.
const MaxAnnotations = 50

// MaxAnnotationMessage caps, in bytes, an annotation's message (before
// GitHub's escaping); a longer one is cut and ends in "…".
const MaxAnnotationMessage = 1024

// AnnotationLevel is a workflow command's name: error, warning or notice.
type AnnotationLevel string

// Annotation levels, most severe first.
const (
	AnnotationError   AnnotationLevel = "error"
	AnnotationWarning AnnotationLevel = "warning"
	AnnotationNotice  AnnotationLevel = "notice"
)

func (l AnnotationLevel) rank() int {
	switch l {
	case AnnotationError:
		return 0
	case AnnotationWarning:
		return 1
	}
	return 2
}

// Annotation is one GitHub Actions workflow-command annotation
// ("::error file=F,line=L,col=C,title=T::message").
type Annotation struct {
	Level AnnotationLevel
	// File is the path the annotation points at, as airlock names it
	// (relative to the working directory, or absolute); "" for none.
	// Line and Col are 1-based, 0 when unknown (then not written).
	File      string
	Line, Col int
	// Title and Message are one line each; both are cleaned (Line) and
	// escaped when written.
	Title, Message string
}

// GitHubOptions say where the paths of annotations are relative to.
type GitHubOptions struct {
	// Workspace is $GITHUB_WORKSPACE: a file inside it is written relative
	// to it, with "/" separators, as GitHub resolves annotation paths; a
	// file outside it gets no file property (its path stays in the
	// message). "" keeps every path as given.
	Workspace string
	// Dir is the working directory relative paths are resolved against.
	Dir string
}

// WriteAnnotations writes anns as GitHub workflow commands, one line each,
// errors first, then warnings, then notices (each in the given order), at
// most MaxAnnotations; when more were given, one "::notice::" line says
// how many were left out. Every text is cleaned (Line: no control
// character, no ANSI sequence, one line) and then escaped as the Actions
// toolkit escapes a command (@actions/core, command.ts): in the message
// "%", CR and LF become %25, %0D and %0A; in a property value ":" and ","
// also become %3A and %2C. A file, title or message can therefore never end
// the command or start another one.
func WriteAnnotations(w io.Writer, anns []Annotation, opts GitHubOptions) error {
	sorted := slices.Clone(anns)
	slices.SortStableFunc(sorted, func(a, b Annotation) int { return a.Level.rank() - b.Level.rank() })
	var b strings.Builder
	for i, a := range sorted {
		if i == MaxAnnotations {
			fmt.Fprintf(&b, "::notice title=airlock::%s\n", escapeData(fmt.Sprintf(
				"%d more annotations not shown (at most %d are written; the report files list every finding)", len(sorted)-MaxAnnotations, MaxAnnotations)))
			break
		}
		var props []string
		msg := a.Message
		if a.File != "" {
			if p, ok := annotationPath(a.File, opts); ok {
				props = append(props, "file="+escapeProperty(Ident(p)))
				if a.Line > 0 {
					props = append(props, fmt.Sprintf("line=%d", a.Line))
					if a.Col > 0 {
						props = append(props, fmt.Sprintf("col=%d", a.Col))
					}
				}
			} else {
				msg = Ident(a.File) + ": " + msg
			}
		}
		if a.Title != "" {
			props = append(props, "title="+escapeProperty(Clean(a.Title, 256, false)))
		}
		level := a.Level
		if level.rank() == 2 {
			level = AnnotationNotice
		}
		b.WriteString("::")
		b.WriteString(string(level))
		if len(props) > 0 {
			b.WriteString(" ")
			b.WriteString(strings.Join(props, ","))
		}
		b.WriteString("::")
		b.WriteString(escapeData(Clean(msg, MaxAnnotationMessage, false)))
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// annotationPath is file as GitHub wants it: relative to the workspace
// when one is set (false when file lies outside it), with "/" separators,
// cleaned ("./new.schema.json" is "new.schema.json").
func annotationPath(file string, opts GitHubOptions) (string, bool) {
	if opts.Workspace == "" {
		return path.Clean(filepath.ToSlash(file)), true
	}
	abs := file
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(opts.Dir, file)
	}
	rel, err := filepath.Rel(opts.Workspace, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return path.Clean(filepath.ToSlash(rel)), true
}

// escapeData escapes a workflow command's message (@actions/core
// escapeData).
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a workflow command's property value (@actions/core
// escapeProperty).
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// RunAnnotations are the annotations of a run: one error per failed
// testcase (the fixture's file, titled tool.suite) and per broken contract
// (the file, line and column its configuration error names). Unchecked
// and passed testcases have none.
func RunAnnotations(run *Run) []Annotation {
	var out []Annotation
	for _, c := range run.Cases {
		switch c.Status {
		case Failed:
			msg := fmt.Sprintf("%s: expected %s, actual %s", Ident(c.Name), c.Expected, c.Actual)
			if c.Message != "" {
				msg += ": " + c.Message
			}
			out = append(out, Annotation{Level: AnnotationError, File: c.File, Title: "airlock " + c.Tool + "." + c.Suite + " failed", Message: msg})
		case Errored:
			out = append(out, Annotation{Level: AnnotationError, File: c.File, Line: c.Line, Col: c.Column, Title: "airlock " + c.Tool + ": contract does not load", Message: c.Message})
		}
	}
	return out
}

// StrictLintAnnotation is the annotation of a run that --strict fails on
// its lint findings (RunLint.Fails): an error without a file (GitHub shows
// it on the run's summary page), titled "airlock run --strict", saying how
// many findings fail the run and which command lists them. Put it first:
// WriteAnnotations keeps the order of errors, and writes at most
// MaxAnnotations.
func StrictLintAnnotation(lint RunLint) Annotation {
	n := 0
	summary := "no lint"
	if lint.Lint != nil {
		n, summary = lint.Lint.Active(), lint.Lint.Summary()
	}
	return Annotation{Level: AnnotationError, Title: "airlock run --strict",
		Message: fmt.Sprintf("the run fails under --strict with %s (%s); %s lists them, and with --format github annotates each",
			lintFindings(n), summary, lint.command())}
}

// LintAnnotations are the annotations of a lint: one per finding that
// counts (not ignored) at its file, line and column; error for an error,
// warning for a warning, notice for a note; titled with the rule id.
func LintAnnotations(l *Lint) []Annotation {
	var out []Annotation
	for _, f := range l.Findings {
		if f.Ignored != "" {
			continue
		}
		level := AnnotationNotice
		switch f.Level {
		case SeverityError:
			level = AnnotationError
		case SeverityWarning:
			level = AnnotationWarning
		}
		msg := f.Message
		if f.Pointer != "" {
			msg += " (at " + pointerText(f.Pointer) + ")"
		}
		out = append(out, Annotation{Level: level, File: f.File, Line: f.Line, Col: f.Column, Title: "airlock lint " + f.Rule, Message: msg})
	}
	return out
}

// DiffAnnotations are the annotations of a diff: an error per breaking
// change, a warning per other change with gate impact (Change.TouchesGate).
// A manifest change points at its contract.yaml and line; a schema change
// at the file, line and column of its NewPointer in the new schema's files
// (NewFile, NewLine, NewColumn: a shared component's file when the change
// lies there), or at the comparison's new schema file (the old one when the
// new is absent) without a line when that is not known.
func DiffAnnotations(d *Diff) []Annotation {
	var out []Annotation
	for _, cmp := range d.Comparisons {
		for _, c := range cmp.Changes {
			level := AnnotationError
			switch {
			case c.Level == Breaking:
			case c.TouchesGate():
				level = AnnotationWarning
			default:
				continue
			}
			file, line, col := c.location()
			if file == "" {
				file = cmp.New
				if file == "" {
					file = cmp.Old
				}
			}
			msg := cmp.Name + ": " + c.Message
			if c.NewPointer != "" {
				msg += " (at " + diffPointerText(c.NewPointer) + ")"
			}
			out = append(out, Annotation{Level: level, File: file, Line: line, Col: col, Title: "airlock diff " + string(c.Level) + " " + c.Rule, Message: msg})
		}
	}
	return out
}

// DriftAnnotations are the annotations of a drift report, fixtures
// pointing into fixturesDir: an error per breaking finding and per refusal
// reason with unexpected refusals (at the first fixture that shows it:
// fixturesDir/tool/upstream-version/kind/name), per broken contract (the
// file, line and column its error names), and per breaking change between
// upstream versions when those fail the run (a warning when they do not),
// at the file, line and column of its NewPointer as DiffAnnotations places
// one.
func DriftAnnotations(d *Drift, fixturesDir string) []Annotation {
	var out []Annotation
	at := func(t DriftTool, v DriftVersion, fixtures []string) string {
		if len(fixtures) == 0 {
			return filepath.Join(fixturesDir, t.Tool, v.UpstreamVersion)
		}
		return filepath.Join(fixturesDir, t.Tool, v.UpstreamVersion, filepath.FromSlash(fixtures[0]))
	}
	for _, b := range d.Broken {
		out = append(out, Annotation{Level: AnnotationError, File: b.File, Line: b.Line, Col: b.Column, Title: "airlock drift " + b.Tool + ": contract does not load", Message: b.Message})
	}
	for _, t := range d.Tools {
		for _, v := range t.Versions {
			for _, f := range v.Findings {
				if !f.Breaking {
					continue
				}
				out = append(out, Annotation{Level: AnnotationError, File: at(t, v, f.Fixtures),
					Title:   "airlock drift " + f.Kind,
					Message: fmt.Sprintf("%s %s: %s (at %s; %d fixture(s))", t.Tool, v.UpstreamVersion, f.Message, instanceText(f.Pointer), f.Count)})
			}
			for _, r := range v.Refusals {
				if r.Unexpected == 0 {
					continue
				}
				out = append(out, Annotation{Level: AnnotationError, File: at(t, v, r.Fixtures),
					Title:   "airlock drift unexpected refusal",
					Message: fmt.Sprintf("%s %s: %d fixture(s) refused for %s that their sidecars did not expect", t.Tool, v.UpstreamVersion, r.Unexpected, r.Reason)})
			}
		}
		level := AnnotationWarning
		if d.Summary.VersionChangesBreak {
			level = AnnotationError
		}
		for _, cmp := range t.VersionChanges {
			for _, c := range cmp.Changes {
				if c.Level != Breaking {
					continue
				}
				file, line, col := c.location()
				if file == "" {
					file = cmp.New
				}
				out = append(out, Annotation{Level: level, File: file, Line: line, Col: col, Title: "airlock drift breaking " + c.Rule, Message: cmp.Name + ": " + c.Message})
			}
		}
	}
	return out
}
