package gate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/internal/testbody"
	"github.com/airlockdev/airlock/internal/validator"
	"github.com/airlockdev/airlock/semantic"
)

// The benchmarks compare the whole gate (Contract.Check: transport, strict
// parse, schema, semantic, projection, agent schema, envelope, audit record)
// with a baseline that does only what a connector without airlock would do:
// encoding/json's Decoder with UseNumber into an any, then Validate with the
// same upstream schema compiled the same way (BenchmarkCheck); the gate's
// parse and compiled validator alone, for the comparison with ajv's
// JSON.parse and validate in scripts/ajvbench (BenchmarkParseValidate); and
// a refused worst case beside an admitted body of the same size
// (BenchmarkWorstCase). `make bench` runs them and scripts/benchratio
// prints the ratios. Each benchmark reports its body's size as body-B.

// benchTool is a list tool whose upstream value grows with its item count.
const benchTool = "bench_list"

var benchFiles = testbody.ListContract("limits:\n  max_bytes: 8388608\n")

const benchRequestID = testbody.RequestID

func writeBenchContract(tb testing.TB) string {
	return writeBenchFiles(tb, benchTool, benchFiles)
}

func BenchmarkCheck(b *testing.B) {
	dir := writeBenchContract(b)
	c, err := gate.LoadDir(dir, gate.Options{})
	if err != nil {
		b.Fatal(err)
	}

	// The baseline's schema: the same file, compiled by the same compiler
	// configuration as LoadContract's.
	const url = "https://airlock.invalid/bench_list/upstream.schema.json"
	doc, err := strictjson.Parse([]byte(benchFiles["upstream.schema.json"]), strictjson.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	compiler := schema.NewCompiler(nil)
	if err := compiler.AddResource(url, doc); err != nil {
		b.Fatal(err)
	}
	sch, err := compiler.Compile(url)
	if err != nil {
		b.Fatal(err)
	}

	call := gate.Call{
		Request: semantic.Request{ID: benchRequestID},
		Now:     time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC),
	}
	for _, size := range []int{2 << 10, 200 << 10} {
		body := testbody.List(size)
		name := strconv.Itoa(size>>10) + "KB"

		// Both sides must accept the body, or the comparison is void.
		v, err := c.Check(context.Background(), gate.Response{Status: 200, ContentType: "application/json", Body: bytes.NewReader(body)}, call)
		if err != nil || !v.Admitted {
			b.Fatalf("%s: gate refused the benchmark body: %v %+v", name, err, v.Audit)
		}
		if err := baseline(sch, body); err != nil {
			b.Fatalf("%s: baseline refused the benchmark body: %v", name, err)
		}

		b.Run(name+"/gate", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				v, err := c.Check(context.Background(), gate.Response{Status: 200, ContentType: "application/json", Body: bytes.NewReader(body)}, call)
				if err != nil || !v.Admitted {
					b.Fatal("refused")
				}
			}
			b.ReportMetric(float64(len(body)), "body-B")
		})
		b.Run(name+"/baseline", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if err := baseline(sch, body); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(body)), "body-B")
		})
	}
}

// baseline is the usual unguarded path: decode with encoding/json (numbers
// kept as json.Number), then validate against the upstream schema.
func baseline(sch interface{ Validate(any) error }, body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	return sch.Validate(v)
}

// benchInput is one body of BenchmarkParseValidate and of scripts/ajvbench:
// the verdict both sides must reach, and whether it is timed (a control
// body that must be refused is only judged).
type benchInput struct {
	Name  string `json:"name"`
	File  string `json:"file"`
	Valid bool   `json:"valid"`
	Timed bool   `json:"timed"`
	body  []byte
}

// benchInputs returns the bodies of BenchmarkParseValidate: the 2 KB and
// 200 KB bodies of BenchmarkCheck, and a 2 KB control body with one state
// outside the enum.
func benchInputs() []benchInput {
	var in []benchInput
	for _, size := range []int{2 << 10, 200 << 10} {
		name := strconv.Itoa(size>>10) + "KB"
		in = append(in, benchInput{Name: name, File: name + ".json", Valid: true, Timed: true, body: testbody.List(size)})
	}
	bad := bytes.Replace(testbody.List(2<<10), []byte(`"state":"closed"`), []byte(`"state":"reopened"`), 1)
	return append(in, benchInput{Name: "2KB-refused", File: "2KB-refused.json", body: bad})
}

// benchInputsEnv names the directory BenchmarkParseValidate writes its
// schema, bodies and inputs.json into, for scripts/ajvbench to read the
// same bytes.
const benchInputsEnv = "AIRLOCK_BENCH_INPUTS"

// writeBenchInputs writes the upstream schema, every body and inputs.json
// (the schema's file name and the bodies' names, files, verdicts) into dir.
func writeBenchInputs(dir string, inputs []benchInput) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	const schemaFile = "upstream.schema.json"
	if err := os.WriteFile(filepath.Join(dir, schemaFile), []byte(benchFiles[schemaFile]), 0o644); err != nil {
		return err
	}
	for _, in := range inputs {
		if err := os.WriteFile(filepath.Join(dir, in.File), in.body, 0o644); err != nil {
			return err
		}
	}
	index, err := json.MarshalIndent(struct {
		Schema string       `json:"schema"`
		Inputs []benchInput `json:"inputs"`
	}{schemaFile, inputs}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "inputs.json"), append(index, '\n'), 0o644)
}

// parseValidator is the gate's parse stage and compiled upstream validator
// alone, configured as LoadDir configures them for the bench_list
// contract: its limits, and its schema compiled by schema.Dir.
type parseValidator struct {
	limits strictjson.Limits
	vd     *validator.Validator
}

func newParseValidator(tb testing.TB) *parseValidator {
	tb.Helper()
	dir := writeBenchContract(tb)
	c, err := gate.LoadDir(dir, gate.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	lim := c.Limits()
	sch, err := schema.NewDir(os.DirFS(dir), ".", dir).Compile("upstream.schema.json")
	if err != nil {
		tb.Fatal(err)
	}
	return &parseValidator{
		limits: strictjson.Limits{
			MaxDepth:        lim.MaxDepth,
			MaxNumberLength: lim.MaxNumberLength,
			MaxStringLength: lim.MaxStringLength,
			FoldCollisions:  !lim.AllowFoldCollisions,
		},
		vd: validator.Compile(sch),
	}
}

// check parses body and validates it as the gate's parse and schema
// stages do (strictjson.ParseTape, Validator.ValidateTape): nil when valid.
func (p *parseValidator) check(body []byte) error {
	t, err := strictjson.ParseTape(body, p.limits)
	if err != nil {
		return err
	}
	f, err := p.vd.ValidateTape(t, len(body), 1)
	if err != nil {
		return err
	}
	if f != nil {
		return fmt.Errorf("%s at %q: %s", f.Keyword, f.InstanceLocation, f.Message)
	}
	return nil
}

// TestBenchInputs: the engine reaches each benchmark input's verdict, and
// the inputs written for scripts/ajvbench are the bytes the benchmark uses.
func TestBenchInputs(t *testing.T) {
	p := newParseValidator(t)
	inputs := benchInputs()
	for _, in := range inputs {
		if err := p.check(in.body); (err == nil) != in.Valid {
			t.Errorf("%s: want valid=%v, got %v", in.Name, in.Valid, err)
		}
	}
	dir := t.TempDir()
	if err := writeBenchInputs(dir, inputs); err != nil {
		t.Fatal(err)
	}
	for _, in := range inputs {
		got, err := os.ReadFile(filepath.Join(dir, in.File))
		if err != nil || !bytes.Equal(got, in.body) {
			t.Errorf("%s: written file differs from the benchmark body (%v)", in.File, err)
		}
	}
}

// BenchmarkParseValidate is the gate's strict parse onto a tape and the
// compiled validator alone on the bodies of BenchmarkCheck; scripts/ajvbench times ajv's
// JSON.parse and validate on the same bytes (written into
// $AIRLOCK_BENCH_INPUTS when set) under the names .../ajv.
func BenchmarkParseValidate(b *testing.B) {
	p := newParseValidator(b)
	inputs := benchInputs()
	for _, in := range inputs {
		if err := p.check(in.body); (err == nil) != in.Valid {
			b.Fatalf("%s: want valid=%v, got %v", in.Name, in.Valid, err)
		}
	}
	if dir := os.Getenv(benchInputsEnv); dir != "" {
		if err := writeBenchInputs(dir, inputs); err != nil {
			b.Fatal(err)
		}
	}
	for _, in := range inputs {
		if !in.Timed {
			continue
		}
		b.Run(in.Name+"/engine", func(b *testing.B) {
			b.SetBytes(int64(len(in.body)))
			b.ReportAllocs()
			for b.Loop() {
				if err := p.check(in.body); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(in.body)), "body-B")
		})
	}
}

// BenchmarkWorstCase checks a 4 MiB body whose every item fails a
// 16-branch oneOf (refused by the schema stage) and a plain 4 MiB list
// (admitted), both through Contract.Check (max_bytes 8 MiB); make bench
// runs it apart, a few single checks (-benchtime 1x). Beside ns/op it reports cpu-ns/op: the process's user
// and system time per check, garbage collection on other threads included.
func BenchmarkWorstCase(b *testing.B) {
	worst, err := gate.LoadDir(writeBenchFiles(b, worstTool, worstFiles()), gate.Options{})
	if err != nil {
		b.Fatal(err)
	}
	plain, err := gate.LoadDir(writeBenchContract(b), gate.Options{})
	if err != nil {
		b.Fatal(err)
	}
	call := gate.Call{
		Request: semantic.Request{ID: benchRequestID},
		Now:     time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC),
	}
	name := strconv.Itoa(worstSize>>20) + "MiB"
	for _, side := range []struct {
		name     string
		c        *gate.Contract
		body     []byte
		admitted bool
	}{
		{"refused", worst, worstBody(worstSize), false},
		{"admitted", plain, testbody.List(worstSize), true},
	} {
		// One check takes seconds today: the verdict is checked inside the
		// timed loop (a few comparisons) rather than by a run of its own.
		b.Run(name+"/"+side.name, func(b *testing.B) {
			b.SetBytes(int64(len(side.body)))
			b.ReportAllocs()
			before := cpuTime(b)
			for b.Loop() {
				v, err := side.c.Check(context.Background(), gate.Response{Status: 200, ContentType: "application/json", Body: bytes.NewReader(side.body)}, call)
				if err != nil {
					b.Fatal(err)
				}
				if v.Admitted != side.admitted || (!v.Admitted && !strings.HasPrefix(v.Reason, "schema.")) {
					b.Fatalf("admitted=%v reason %q, want admitted=%v (refused by the schema stage)", v.Admitted, v.Reason, side.admitted)
				}
			}
			b.ReportMetric(float64(cpuTime(b)-before)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(len(side.body)), "body-B")
		})
	}
}

// cpuTime returns the process's user and system CPU time so far.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
