package main

import (
	"bytes"
	"strings"
	"testing"
)

const sample = `goos: linux
BenchmarkCheck/2KB/gate-2      	2000	500000 ns/op	4.38 MB/s	2190 body-B	60000 B/op	70 allocs/op
BenchmarkCheck/2KB/gate-2      	2000	520000 ns/op	4.21 MB/s	2190 body-B	60000 B/op	70 allocs/op
BenchmarkCheck/2KB/baseline-2  	3000	3000000 ns/op	0.73 MB/s	2190 body-B	80000 B/op	800 allocs/op
BenchmarkParseValidate/2KB/engine-2	5000	100000 ns/op	21.90 MB/s	2190 body-B	43273 B/op	899 allocs/op
BenchmarkParseValidate/2KB/ajv	10000	200000 ns/op	10.95 MB/s	2190 body-B
BenchmarkParseValidate/200KB/engine-2	40	29050372 ns/op	7.05 MB/s	204873 body-B	4012521 B/op	81834 allocs/op
BenchmarkWorstCase/4MiB/refused-2	1	3000000 ns/op	1.40 MB/s	4194323 body-B	2000000 cpu-ns/op	2291 B/op	51 allocs/op
BenchmarkWorstCase/4MiB/admitted-2	1	1000000 ns/op	4.19 MB/s	4194521 body-B	1000000 cpu-ns/op	970 B/op	19 allocs/op
BenchmarkPeakRSS/4MiB/refused	1	877821952 peak-B	4194304 body-B
BenchmarkPeakRSS/4MiB/admitted	1	40000000 peak-B	4194304 body-B
`

func TestRun(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(strings.NewReader(sample), &out, &errOut, false); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	got := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{
		// gate/baseline: 3000000 ÷ 510000, allocs 70 ≤ 2190/100 + 50, B/op 60000 ≤ 80000.
		"5.882 ≥ 5.000 holds",
		"gate ≤ 72 (body/100 + 50) holds",
		"0.750 ≤ 1.000 holds",
		// engine/ajv: 200000 ÷ 100000.
		"2.000 ≥ 1.000 holds",
		"not measured",
		// refused/admitted by cpu-ns/op, not by ns/op (3.0).
		"2.000 ≤ 1.500 MISSED",
		"≤ 64.0 (32 + 8 × body) MISSED",
		"≤ 64.0 (32 + 8 × body) holds",
		"targets: 5 held, 2 missed, 1 not measured",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if code := run(strings.NewReader(sample), &out, &errOut, true); code != 1 {
		t.Errorf("-strict with a missed target: exit %d, want 1", code)
	}
}

func TestRunErrors(t *testing.T) {
	for name, in := range map[string]string{
		"no benchmarks":     "PASS\n",
		"no gate side":      "BenchmarkCheck/2KB/baseline 1 10 ns/op 5 B/op 1 allocs/op\n",
		"no admitted":       "BenchmarkWorstCase/4MiB/refused 1 10 ns/op\n",
		"ajv alone":         "BenchmarkParseValidate/2KB/ajv 1 10 ns/op\n",
		"peak without body": "BenchmarkPeakRSS/4MiB/refused 1 10 peak-B\n",
	} {
		var out, errOut bytes.Buffer
		if code := run(strings.NewReader(in), &out, &errOut, false); code != 1 {
			t.Errorf("%s: exit %d, want 1\n%s", name, code, out.String())
		}
	}
}
