package reports

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// codeQualityIssue is one issue of a GitLab Code Quality report (GitLab
// Docs, "Code Quality", section "Code Quality report format": a subset of
// the Code Climate engine specification).
type codeQualityIssue struct {
	Description string              `json:"description"`
	CheckName   string              `json:"check_name"`
	Fingerprint string              `json:"fingerprint"`
	Severity    string              `json:"severity"`
	Location    codeQualityLocation `json:"location"`
}

type codeQualityLocation struct {
	Path  string           `json:"path"`
	Lines codeQualityLines `json:"lines"`
}

type codeQualityLines struct {
	Begin int `json:"begin"`
}

// CodeQualitySeverity is the GitLab Code Quality severity (info, minor,
// major, critical, blocker) of a lint level: error is major, warning
// minor, note info. GitLab ranks them in its merge request widget; a
// contract finding never blocks by itself, so critical and blocker are not
// used.
func CodeQualitySeverity(l Severity) string {
	switch l {
	case SeverityError:
		return "major"
	case SeverityWarning:
		return "minor"
	}
	return "info"
}

// WriteLintCodeQuality writes l as a GitLab Code Quality report
// (artifacts:reports:codequality): a JSON array with one issue per finding
// that counts (ignored findings are left out: the format has no
// suppression), each with the finding's message (and JSON Pointer) as
// description, the rule id as check_name, its severity
// (CodeQualitySeverity), location.path relative to root with "/"
// separators (root is $CI_PROJECT_DIR; a path outside it, or every path
// when root is "", is written as airlock names it, relative to dir when
// it was relative), and location.lines.begin (1 when the line is unknown:
// the format requires a line). The fingerprint is the hexadecimal SHA-256
// of the rule, tool, upstream version, path and JSON Pointer, and of the
// finding's rank among findings that share all of those: stable when
// lines move, distinct within a report (GitLab shows one issue per
// fingerprint). Texts are kept exact but valid UTF-8; JSON's escaping
// makes them safe. An empty lint is "[]".
func WriteLintCodeQuality(w io.Writer, l *Lint, root, dir string) error {
	c := exactLint(l)
	issues := []codeQualityIssue{}
	seen := map[string]int{}
	for _, f := range c.Findings {
		if f.Ignored != "" {
			continue
		}
		p, ok := annotationPath(f.File, GitHubOptions{Workspace: root, Dir: dir})
		if !ok {
			p = filepath.ToSlash(f.File)
		}
		p = strings.TrimPrefix(path.Clean(p), "./")
		key := strings.Join([]string{f.Rule, f.Tool, f.UpstreamVersion, p, f.Pointer}, "\x00")
		rank := seen[key]
		seen[key]++
		sum := sha256.Sum256([]byte(key + "\x00" + strconv.Itoa(rank)))
		desc := f.Message
		if desc == "" {
			desc = f.Rule
		}
		if f.Pointer != "" {
			desc += " (at " + pointerText(f.Pointer) + ")"
		}
		issues = append(issues, codeQualityIssue{
			Description: desc, CheckName: f.Rule, Fingerprint: hex.EncodeToString(sum[:]),
			Severity: CodeQualitySeverity(f.Level),
			Location: codeQualityLocation{Path: p, Lines: codeQualityLines{Begin: max(f.Line, 1)}},
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(issues)
}
