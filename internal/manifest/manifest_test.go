package manifest_test

import (
	"os"
	"testing"

	"github.com/airlockdev/airlock/internal/manifest"
)

// compilesAtStart is the count after package initialisation, before any
// test has decoded a manifest.
var compilesAtStart int32

func TestMain(m *testing.M) {
	compilesAtStart = manifest.Compiles()
	os.Exit(m.Run())
}

// The embedded contract schema is compiled by the first Decode, never by
// package initialisation, and only once however many manifests follow.
func TestSchemaCompiledAtFirstDecode(t *testing.T) {
	if compilesAtStart != 0 {
		t.Fatalf("the contract schema was compiled %d times before any Decode (at start-up)", compilesAtStart)
	}
	data, err := os.ReadFile("../../schemas/review_status/contract.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := manifest.Decode("contract.yaml", data); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := manifest.Decode("bad.yaml", []byte("tool: 1\n")); err == nil {
		t.Fatal("a manifest with tool: 1 was decoded")
	}
	if n := manifest.Compiles(); n != 1 {
		t.Fatalf("after four Decodes the contract schema was compiled %d times; want 1", n)
	}
}
