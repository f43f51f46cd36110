package strictyaml

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The pre-scan is only a bound if it never counts fewer nodes or less
// nesting than the parser builds. These tests compare the two on every
// YAML file in the repository, on generated YAML of every style airlock
// accepts, and on random mutations of it: whenever the parser accepts an
// input, the pre-scan must have read all of it without refusing it, and
// its counts must be at least the tree's.

// treeCounts counts the nodes of a parsed document (not the document node
// itself) and its deepest nesting of collections.
// skipUnderRace skips a test that has no concurrency for the race
// detector to watch and costs seconds under it; make test runs it without
// -race.
func skipUnderRace(t *testing.T) {
	if RaceEnabled {
		t.Skip("single-goroutine and slow under -race; make test runs it without")
	}
}

func treeCounts(n *yaml.Node, depth int) (nodes, deepest int) {
	nodes = 1
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		depth++
		deepest = depth
	}
	for _, c := range n.Content {
		cn, cd := treeCounts(c, depth)
		nodes += cn
		deepest = max(deepest, cd)
	}
	return nodes, deepest
}

// compare checks the pre-scan against the parser on data; it reports
// whether the parser accepted data, and the two node counts.
func compare(t *testing.T, name string, data []byte) (accepted bool, est, actual int) {
	t.Helper()
	doc, err := parseDoc(data)
	if err != nil {
		return false, 0, 0
	}
	s := runScan(data, MaxNodes)
	if s.err != nil {
		for _, rule := range []string{"anchors and aliases", "second YAML document", "byte order mark", "not valid UTF-8", "tag directives"} {
			if strings.Contains(s.err.msg, rule) {
				return false, 0, 0 // airlock's rules, not the parser's (which also reads UTF-16)
			}
		}
		t.Errorf("%s: the parser accepts it, the pre-scan refuses it: %d:%d: %s\n%q", name, s.err.line, s.err.col, s.err.msg, data)
		return true, 0, 0
	}
	if s.stop {
		t.Errorf("%s: the parser accepts it, the pre-scan stopped at %d:%d\n%q", name, s.line, s.col, data)
		return true, 0, 0
	}
	if doc == nil {
		return true, s.nodes, 0
	}
	nodes, depth := treeCounts(doc, 0)
	if s.nodes < nodes || s.deepest < depth {
		t.Errorf("%s: the pre-scan counts %d nodes, depth %d; the parser built %d nodes, depth %d\n%q", name, s.nodes, s.deepest, nodes, depth, data)
	}
	return true, s.nodes, nodes
}

func TestPrescanCountsRepositoryFiles(t *testing.T) {
	skipUnderRace(t)
	var files int
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == ".ci") {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		if ok, est, actual := compare(t, path, data); ok && est != actual {
			t.Errorf("%s: an ordinary file, yet the pre-scan counts %d nodes and the parser built %d", path, est, actual)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 20 {
		t.Fatalf("found %d YAML files in the repository; the walk is broken", files)
	}
}

// gen writes random YAML in the styles airlock's files use and a few they
// rarely do: block and flow collections, compact and indentless
// sequences, empty values, plain scalars over several lines, quoted
// scalars holding indicators, block scalars with headers, explicit keys,
// tags, comments, CRLF line ends.
type gen struct {
	r *rand.Rand
	b strings.Builder
}

func (g *gen) scalar(flow bool) string {
	switch g.r.IntN(12) {
	case 0:
		return `"a: b # c, [d]"`
	case 1:
		return `'it''s: {x}'`
	case 2:
		return "x-y:z"
	case 3:
		return "12"
	case 4:
		return "~"
	case 5:
		if !flow {
			return "!!str 5"
		}
		return "!!str 5"
	case 6:
		return `"esc \" \\ \u00e9"`
	case 7:
		return "true"
	case 8:
		return "-dash"
	case 9:
		return "a#b"
	case 10:
		return ""
	}
	return fmt.Sprintf("v%d", g.r.IntN(100))
}

func (g *gen) flow(depth int) string {
	if depth > 3 || g.r.IntN(3) == 0 {
		s := g.scalar(true)
		if s == "" {
			return "x"
		}
		return s
	}
	n := g.r.IntN(4)
	var parts []string
	if g.r.IntN(2) == 0 {
		for i := range n {
			switch g.r.IntN(4) {
			case 0:
				parts = append(parts, fmt.Sprintf("k%d: %s", i, g.flow(depth+1)))
			case 1:
				parts = append(parts, fmt.Sprintf("k%d", i))
			case 2:
				parts = append(parts, fmt.Sprintf("k%d:", i))
			default:
				parts = append(parts, fmt.Sprintf("\"k%d\":%s", i, g.flow(depth+1)))
			}
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	for range n {
		switch g.r.IntN(4) {
		case 0:
			parts = append(parts, fmt.Sprintf("p: %s", g.flow(depth+1)))
		default:
			parts = append(parts, g.flow(depth+1))
		}
	}
	sep := ", "
	if g.r.IntN(4) == 0 {
		sep = ",\n  "
	}
	tail := ""
	if n > 0 && g.r.IntN(4) == 0 {
		tail = ","
	}
	return "[" + strings.Join(parts, sep) + tail + "]"
}

// node writes a block node whose first line continues the current line.
func (g *gen) node(indent, depth int) {
	pad := strings.Repeat(" ", indent)
	if depth > 5 {
		g.b.WriteString(" " + g.scalar(false) + "\n")
		return
	}
	switch g.r.IntN(9) {
	case 0, 1: // block mapping on the next lines
		g.b.WriteString("\n")
		n := 1 + g.r.IntN(3)
		ind := indent + 1 + g.r.IntN(3)
		for i := range n {
			g.b.WriteString(strings.Repeat(" ", ind) + fmt.Sprintf("k%d:", i))
			g.node(ind, depth+1)
		}
	case 2: // block sequence on the next lines
		g.b.WriteString("\n")
		n := 1 + g.r.IntN(3)
		ind := indent + 1 + g.r.IntN(3)
		for range n {
			g.b.WriteString(strings.Repeat(" ", ind) + "-")
			g.node(ind, depth+1)
		}
	case 3: // flow
		g.b.WriteString(" " + g.flow(depth) + "\n")
	case 4: // block scalar
		hdr := []string{"|", ">", "|-", ">+", "|2", "|1-"}[g.r.IntN(6)]
		g.b.WriteString(" " + hdr + "\n")
		ind := indent + 2
		for range 1 + g.r.IntN(3) {
			g.b.WriteString(strings.Repeat(" ", ind) + "text: - [x] # not a comment\n")
			if g.r.IntN(3) == 0 {
				g.b.WriteString("\n")
			}
		}
	case 5: // multi-line plain scalar
		g.b.WriteString(" first line\n" + pad + "   second - line\n")
	case 6: // empty value, maybe a comment
		if g.r.IntN(2) == 0 {
			g.b.WriteString(" # nothing\n")
		} else {
			g.b.WriteString("\n")
		}
	default:
		g.b.WriteString(" " + g.scalar(false) + "\n")
	}
}

func (g *gen) doc() string {
	g.b.Reset()
	if g.r.IntN(5) == 0 {
		g.b.WriteString("# head\n---\n")
	}
	switch g.r.IntN(6) {
	case 0: // compact nesting
		d := 1 + g.r.IntN(5)
		g.b.WriteString(strings.Repeat("- ", d) + "x\n" + strings.Repeat("  ", d-1) + "- y\n")
	case 1: // indentless sequence and compact mappings
		g.b.WriteString("a:\n- b: c\n  d:\n- - e\n  - f\ng: h\n")
	case 2: // explicit keys
		g.b.WriteString("? a\n: b\n? - c\n  - d\n: e\n?\n")
	default:
		for i := range 1 + g.r.IntN(4) {
			g.b.WriteString(fmt.Sprintf("key%d:", i))
			g.node(0, 1)
		}
	}
	s := g.b.String()
	if g.r.IntN(6) == 0 {
		s = strings.ReplaceAll(s, "\n", "\r\n")
	}
	return s
}

func TestPrescanCountsGeneratedYAML(t *testing.T) {
	skipUnderRace(t)
	g := &gen{r: rand.New(rand.NewPCG(1, 2))}
	const docs = 3000
	var accepted, exact int
	for i := range docs {
		doc := g.doc()
		ok, est, actual := compare(t, fmt.Sprintf("generated #%d", i), []byte(doc))
		if ok {
			accepted++
			if est == actual {
				exact++
			}
		}
	}
	if accepted < docs*9/10 {
		t.Errorf("the parser accepted %d of %d generated documents: the generator is broken", accepted, docs)
	}
	t.Logf("%d of %d generated documents parsed; the pre-scan's count was exact for %d", accepted, docs, exact)
}

func TestPrescanCountsMutatedYAML(t *testing.T) {
	skipUnderRace(t)
	g := &gen{r: rand.New(rand.NewPCG(3, 4))}
	const tries = 20000
	pieces := []string{" ", "\n", "- ", "? ", ": ", ":", ",", "[", "]", "{", "}", "#", "'", "\"", "|", ">", "!", "\t", "\\", "---\n", "...\n", "  ", "-", "?"}
	var accepted int
	for i := range tries {
		doc := []byte(g.doc())
		for range 1 + g.r.IntN(3) {
			at := g.r.IntN(len(doc) + 1)
			if g.r.IntN(3) == 0 && at < len(doc) {
				doc = append(doc[:at:at], doc[at+1:]...)
				continue
			}
			p := pieces[g.r.IntN(len(pieces))]
			doc = append(doc[:at:at], append([]byte(p), doc[at:]...)...)
		}
		if ok, _, _ := compare(t, fmt.Sprintf("mutant #%d", i), doc); ok {
			accepted++
		}
	}
	t.Logf("the parser accepted %d of %d mutants", accepted, tries)
}

// FuzzPrescan checks the same property on whatever the fuzzer finds
// (go test -fuzz FuzzPrescan ./internal/strictyaml); its seeds run in
// make test.
func FuzzPrescan(f *testing.F) {
	for _, s := range []string{
		"a: b\n", "- - - x\n", "? ? a\n", "[a: b, {c}]\n", "a:\n- b\n- c\nd:\n", "a: |\n  x\n b: c\n",
		"a: 'x\n  y'\n", "a: b\n  c\n", "{a: [b, {c: d}], e: }\n", "- !!str\n- x\n", "? a\n: b\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			return
		}
		compare(t, "fuzz", data)
	})
}
