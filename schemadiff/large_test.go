package schemadiff_test

import (
	"bytes"
	"context"
	"encoding/json"
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
	"github.com/airlockdev/airlock/schemadiff"
)

// githubDescription is GitHub's REST API description as make
// openapi-descriptions installs it (or under $AIRLOCK_OPENAPI_DIR).
const githubDescription = "octokit-openapi-23.0.2/generated/api.github.com.json"

// largeSchema is one JSON Schema of real size built from GitHub's REST
// API description through the importer's conversion: a root object with
// one property per schema of components/schemas (969 of them, each a $ref
// into the shared components folder), converted by importer.DraftFromOpenAPI
// and written as the import writes it. Built once per test process.
type largeSchema struct {
	path  string // the root schema file
	bytes int64  // the root file and every component file, in bytes
	files int
}

var (
	largeOnce sync.Once
	large     largeSchema
	largeErr  error
	largeSkip string
)

// loadLargeSchema builds the large schema, or says why it cannot: skip is
// the message when the description is not installed (and CI is not set).
func loadLargeSchema() (largeSchema, string, error) {
	largeOnce.Do(func() {
		dir := os.Getenv("AIRLOCK_OPENAPI_DIR")
		if dir == "" {
			root, err := conformance.ModuleRoot()
			if err != nil {
				largeErr = err
				return
			}
			dir = filepath.Join(root, ".ci", "node", "openapi")
		}
		spec := filepath.Join(dir, githubDescription)
		if _, err := os.Stat(spec); err != nil {
			msg := fmt.Sprintf("public OpenAPI description %s not installed (make openapi-descriptions, or set AIRLOCK_OPENAPI_DIR): %v", githubDescription, err)
			if conformance.Required() {
				largeErr = fmt.Errorf("%s (CI=true: a missing description fails the run)", msg)
				return
			}
			largeSkip = msg
			return
		}
		large, largeErr = buildLargeSchema(spec)
	})
	return large, largeSkip, largeErr
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
	root, err := schemaFile(d.Version.Schema)
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
	if large.path != "" {
		os.RemoveAll(filepath.Dir(filepath.Dir(filepath.Dir(large.path))))
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
		largeRoot, err = schemadiff.CompileFile(large.path)
		Expect(err).NotTo(HaveOccurred())
	})
	Expect(largeRoot).NotTo(BeNil())
	return largeRoot
}

// requireLargeSchema is loadLargeSchema for a spec: skipped with a message
// without the description, failed under CI=true.
func requireLargeSchema() largeSchema {
	l, skip, err := loadLargeSchema()
	Expect(err).NotTo(HaveOccurred())
	if skip != "" {
		Skip(skip)
	}
	return l
}

var _ = Describe("a schema of real size (GitHub's components, through the importer)", func() {
	It("diffed against itself: no change and no error", func() {
		l := requireLargeSchema()
		Expect(l.bytes).To(BeNumerically(">", 5_000_000), "the schema is over 5 MB")
		n, err := schemadiff.CompileFile(l.path)
		Expect(err).NotTo(HaveOccurred())
		c, err := schemadiff.Compare("self", largeCompiled(), n)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Changes).To(BeEmpty())
		AddReportEntry("large self-diff", fmt.Sprintf("%s: %d files, %d bytes", l.path, l.files, l.bytes))
	})

	It("a change in a component reached from hundreds of places: reported once, with where else it applies", func() {
		l := requireLargeSchema()
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

// schemaFile is a schema document as the import writes it: indented by two
// spaces, HTML characters not escaped, one newline at the end.
func schemaFile(doc map[string]any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// BenchmarkSelfDiffLarge diffs the large schema (GitHub's components,
// about 5.3 MB in 970 files) against itself with Files, the two compiles
// included: time per diff, and peak-heap-MB, the largest heap (live and
// not yet swept objects) seen while it ran, sampled every millisecond.
// Target: <= 10 s and <= 1 GB (issue 16). Skipped without the description.
func BenchmarkSelfDiffLarge(b *testing.B) {
	l, skip, err := loadLargeSchema()
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
