package schemadiff_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/importer"
	"github.com/airlockdev/airlock/internal/conformance"
	"github.com/airlockdev/airlock/reports"
	"github.com/airlockdev/airlock/schemadiff"
)

// GitHub's REST API descriptions as make openapi-descriptions installs them
// (or under $AIRLOCK_OPENAPI_DIR): api.github.com, and two GitHub
// Enterprise Server releases.
const (
	githubDescription = "octokit-openapi-23.0.2/generated/api.github.com.json"
	ghes317           = "octokit-openapi-23.0.2/generated/ghes-3.17.json"
	ghes319           = "octokit-openapi-23.0.2/generated/ghes-3.19.json"
)

// largeSchema is one JSON Schema of real size built from one of GitHub's
// descriptions through the importer's conversion: a root object with one
// property per schema of components/schemas (969 of them for
// api.github.com, each a $ref into the shared components folder),
// converted by importer.DraftFromOpenAPI and written as the import writes
// it, into a folder of its own. Built once per test process.
type largeSchema struct {
	path  string // the root schema file
	bytes int64  // the root file and every component file, in bytes
	files int
}

// largeBuilt holds what loadLargeSchema built or found, by description.
type largeBuilt struct {
	once   sync.Once
	schema largeSchema
	skip   string
	err    error
}

var (
	largeMu sync.Mutex
	larges  = map[string]*largeBuilt{}
)

// loadLargeSchema builds the large schema of description rel (a path
// under the descriptions' folder), or says why it cannot: skip is the
// message when the description is not installed (and CI is not set).
func loadLargeSchema(rel string) (largeSchema, string, error) {
	largeMu.Lock()
	l := larges[rel]
	if l == nil {
		l = &largeBuilt{}
		larges[rel] = l
	}
	largeMu.Unlock()
	l.once.Do(func() {
		dir := os.Getenv("AIRLOCK_OPENAPI_DIR")
		if dir == "" {
			root, err := conformance.ModuleRoot()
			if err != nil {
				l.err = err
				return
			}
			dir = filepath.Join(root, ".ci", "node", "openapi")
		}
		spec := filepath.Join(dir, rel)
		if _, err := os.Stat(spec); err != nil {
			msg := fmt.Sprintf("public OpenAPI description %s not installed (make openapi-descriptions, or set AIRLOCK_OPENAPI_DIR): %v", rel, err)
			if conformance.Required() {
				l.err = fmt.Errorf("%s (CI=true: a missing description fails the run)", msg)
				return
			}
			l.skip = msg
			return
		}
		l.schema, l.err = buildLargeSchema(spec)
	})
	return l.schema, l.skip, l.err
}

// buildLargeSchema adds an operation to the description whose response is
// an object with a property per component schema, imports it, and writes
// the draft's schema files into a temporary folder.
func buildLargeSchema(spec string) (largeSchema, error) {
	doc, err := importer.LoadOpenAPI(context.Background(), spec)
	if err != nil {
		return largeSchema{}, err
	}
	all := openapi3.NewObjectSchema()
	names := make([]string, 0, len(doc.Components.Schemas))
	for name := range doc.Components.Schemas {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		all.WithPropertyRef(name, &openapi3.SchemaRef{Ref: "#/components/schemas/" + name, Value: doc.Components.Schemas[name].Value})
	}
	op := openapi3.NewOperation()
	op.OperationID = "airlock/all-components"
	op.Responses = openapi3.NewResponses(openapi3.WithStatus(200, &openapi3.ResponseRef{Value: openapi3.NewResponse().WithJSONSchema(all)}))
	doc.Paths.Set("/airlock/all-components", &openapi3.PathItem{Get: op})
	d, err := importer.DraftFromOpenAPI(doc, importer.OpenAPIOptions{Spec: spec, Operation: op.OperationID, Tool: "all", API: "github", UpstreamVersion: "v1", Project: []importer.Field{}})
	if err != nil {
		return largeSchema{}, err
	}
	dir, err := os.MkdirTemp("", "schemadiff-large")
	if err != nil {
		return largeSchema{}, err
	}
	root, err := importer.SchemaFile(d.Version.Schema)
	if err != nil {
		return largeSchema{}, err
	}
	out := largeSchema{path: filepath.Join(dir, "schemas", "all", "upstream.v1.schema.json")}
	// Component paths are relative to the schemas folder.
	files := append([]importer.File{{Path: "all/upstream.v1.schema.json", Data: root}}, d.Components...)
	for _, f := range files {
		p := filepath.Join(dir, "schemas", filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return largeSchema{}, err
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return largeSchema{}, err
		}
		out.bytes += int64(len(f.Data))
		out.files++
	}
	return out, nil
}

// TestMain removes the large schema's folder after the tests and
// benchmarks that built it.
func TestMain(m *testing.M) {
	code := m.Run()
	for _, l := range larges {
		if l.schema.path != "" {
			os.RemoveAll(filepath.Dir(filepath.Dir(filepath.Dir(l.schema.path))))
		}
	}
	os.Exit(code)
}

var (
	largeCompileOnce sync.Once
	largeRoot        *schemadiff.Schema
)

// largeCompiled is the large schema compiled once for the specs (the
// compile takes seconds).
func largeCompiled() *schemadiff.Schema {
	largeCompileOnce.Do(func() {
		var err error
		largeRoot, err = schemadiff.CompileFile(requireLargeSchema(githubDescription).path)
		Expect(err).NotTo(HaveOccurred())
	})
	Expect(largeRoot).NotTo(BeNil())
	return largeRoot
}

// requireLargeSchema is loadLargeSchema for a spec: skipped with a message
// without the description, failed under CI=true.
func requireLargeSchema(rel string) largeSchema {
	l, skip, err := loadLargeSchema(rel)
	Expect(err).NotTo(HaveOccurred())
	if skip != "" {
		Skip(skip)
	}
	return l
}

var _ = Describe("a schema of real size (GitHub's components, through the importer)", func() {
	It("diffed against itself: no change and no error", func() {
		l := requireLargeSchema(githubDescription)
		Expect(l.bytes).To(BeNumerically(">", 5_000_000), "the schema is over 5 MB")
		n, err := schemadiff.CompileFile(l.path)
		Expect(err).NotTo(HaveOccurred())
		c, err := schemadiff.Compare("self", largeCompiled(), n)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Changes).To(BeEmpty())
		AddReportEntry("large self-diff", fmt.Sprintf("%s: %d files, %d bytes", l.path, l.files, l.bytes))
	})

	It("a change in a component reached from hundreds of places: reported once, with where else it applies", func() {
		l := requireLargeSchema(githubDescription)
		root := filepath.Dir(filepath.Dir(l.path)) // the schemas folder
		neu := filepath.Join(GinkgoT().TempDir(), "schemas")
		Expect(os.CopyFS(neu, os.DirFS(root))).To(Succeed())
		user := filepath.Join(neu, "_components", "github", "v1", "simple-user.schema.json")
		raw, err := os.ReadFile(user)
		Expect(err).NotTo(HaveOccurred())
		changed := strings.Replace(string(raw), `"gists_url": {
      "type": "string"
    }`, `"gists_url": {
      "type": "string",
      "maxLength": 200
    }`, 1)
		Expect(changed).NotTo(Equal(string(raw)))
		Expect(os.WriteFile(user, []byte(changed), 0o644)).To(Succeed())
		n, err := schemadiff.CompileFile(filepath.Join(neu, "all", "upstream.v1.schema.json"))
		Expect(err).NotTo(HaveOccurred())
		c, err := schemadiff.Compare("simple-user changed", largeCompiled(), n)
		Expect(err).NotTo(HaveOccurred())
		changes := c.Changes
		Expect(changes).To(HaveLen(1))
		Expect(changes[0].Rule).To(Equal(schemadiff.RuleLengthTightened))
		Expect(changes[0].Instance).To(Equal("/simple-user/gists_url"))
		m := regexp.MustCompile(`^/simple-user/gists_url: maxLength 200 added \(reported once; the same schemas also apply at /[^,]+/gists_url, /[^,]+/gists_url, /[^,]+/gists_url and at (\d+) more instance location\(s\)\)$`).FindStringSubmatch(changes[0].Message)
		Expect(m).NotTo(BeNil(), changes[0].Message)
		Expect(strconv.Atoi(m[1])).To(BeNumerically(">", 100))
		AddReportEntry("large diff", changes[0].Message)
	})
})

// BenchmarkSelfDiffLarge diffs the large schema (GitHub's components,
// about 5.3 MB in 970 files) against itself with Files, the two compiles
// included: time per diff, and peak-heap-MB, the largest heap (live and
// not yet swept objects) seen while it ran, sampled every millisecond.
// Target: <= 10 s and <= 1 GB (issue 16). Skipped without the description.
func BenchmarkSelfDiffLarge(b *testing.B) {
	l, skip, err := loadLargeSchema(githubDescription)
	if err != nil {
		b.Fatal(err)
	}
	if skip != "" {
		b.Skip(skip)
	}
	runtime.GC()
	stop, peak := sampleHeap()
	b.ResetTimer()
	for range b.N {
		d, err := schemadiff.Files(l.path, l.path)
		if err != nil {
			b.Fatal(err)
		}
		if n := len(d.Comparisons[0].Changes); n != 0 {
			b.Fatalf("%d change(s) in a self-diff", n)
		}
	}
	b.StopTimer()
	stop()
	b.ReportMetric(float64(*peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(l.bytes)/1e6, "schema-MB")
}

// sampleHeap samples the heap every millisecond until stop is called;
// peak is then the largest value seen, in bytes.
func sampleHeap() (stop func(), peak *uint64) {
	peak = new(uint64)
	done, finished := make(chan struct{}), make(chan struct{})
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			*peak = max(*peak, s[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished }, peak
}

// BenchmarkDiffLargeVersions diffs two real versions at real size: the
// component schemas of GitHub Enterprise Server 3.17 and 3.19 (about
// 4.7 MB each), both compiles included: time, peak-heap-MB as in
// BenchmarkSelfDiffLarge, and the changes found by level (3.19 adds
// components and members; nothing breaking).
func BenchmarkDiffLargeVersions(b *testing.B) {
	var ls [2]largeSchema
	for i, rel := range []string{ghes317, ghes319} {
		l, skip, err := loadLargeSchema(rel)
		if err != nil {
			b.Fatal(err)
		}
		if skip != "" {
			b.Skip(skip)
		}
		ls[i] = l
	}
	runtime.GC()
	stop, peak := sampleHeap()
	b.ResetTimer()
	var d *reports.Diff
	for range b.N {
		var err error
		if d, err = schemadiff.Files(ls[0].path, ls[1].path); err != nil {
			b.Fatal(err)
		}
		if len(d.Comparisons[0].Changes) == 0 {
			b.Fatal("no change between GHES 3.17 and 3.19")
		}
	}
	b.StopTimer()
	stop()
	b.ReportMetric(float64(*peak)/(1<<20), "peak-heap-MB")
	for _, l := range reports.Levels {
		b.ReportMetric(float64(d.Count(l)), string(l)+"-changes")
	}
}
