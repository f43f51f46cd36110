package schema_test

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/airlockdev/airlock/internal/config"
	"github.com/airlockdev/airlock/internal/schema"
)

// componentsDir is the folder "schemas/pulls" of an fs with the shared
// components in "schemas/_components".
func componentsDir(upstream string, components map[string]string) *schema.Dir {
	fsys := fstest.MapFS{"schemas/pulls/upstream.schema.json": {Data: []byte(upstream)}}
	comp := fstest.MapFS{}
	for k, v := range components {
		comp[k] = &fstest.MapFile{Data: []byte(v)}
	}
	d := schema.NewDir(fsys, "schemas/pulls", "")
	d.Components, d.ComponentsShown = comp, "schemas/_components"
	return d
}

func TestComponentsLocateValueBytesRelative(t *testing.T) {
	user := "{\"type\": \"object\",\n \"properties\": {\"login\": {\"type\": \"string\"}}}"
	d := componentsDir(`{"properties": {"user": {"$ref": "../_components/github/v1/user.schema.json#/properties/login"}}}`,
		map[string]string{"github/v1/user.schema.json": user})
	s, err := d.Compile("upstream.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	ref := s.Properties["user"].Ref
	if ref == nil {
		t.Fatal("no $ref compiled")
	}
	want := "file:///schemas/_components/github/v1/user.schema.json#/properties/login"
	if ref.Location != want {
		t.Fatalf("Location = %q, want %q", ref.Location, want)
	}
	p, ok := d.Locate(ref.Location, "type")
	if !ok || p.File != "schemas/_components/github/v1/user.schema.json" || p.Name != "../_components/github/v1/user.schema.json" || p.Pointer != "/properties/login/type" {
		t.Fatalf("Locate = %+v, %v", p, ok)
	}
	if !schema.IsComponent(p.Name) || string(d.Bytes(p.Name)) != user {
		t.Fatalf("Bytes(%q) = %q", p.Name, d.Bytes(p.Name))
	}
	if v, ok := d.Value(ref.Location); !ok || v.(map[string]any)["type"] != "string" {
		t.Fatalf("Value = %v, %v", v, ok)
	}
	if got := d.Relative(ref.Location + "/type"); got != "../_components/github/v1/user.schema.json#/properties/login/type" {
		t.Fatalf("Relative = %q", got)
	}
	if got := d.Relative(s.Location); got != "upstream.schema.json#" {
		t.Fatalf("Relative(root) = %q", got)
	}
}

func TestComponentsAtTheRootFolder(t *testing.T) {
	// A folder at the root of its FS (LoadDir's): "../_components/x"
	// resolves to file:///_components/x, served from the components.
	d := schema.NewDir(fstest.MapFS{"up.json": {Data: []byte(`{"$ref": "../_components/a/v1/x.schema.json"}`)}}, ".", "schemas/t")
	d.Components, d.ComponentsShown = fstest.MapFS{"a/v1/x.schema.json": {Data: []byte(`{"type": "integer"}`)}}, "schemas/_components"
	s, err := d.Compile("up.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Relative(s.Ref.Location); got != "../_components/a/v1/x.schema.json#" {
		t.Fatalf("Relative = %q", got)
	}
}

func TestComponentsRefused(t *testing.T) {
	for _, tc := range []struct{ ref, file string }{
		{"../_components/../other/x.json", "schemas/pulls/upstream.schema.json"},
		{"../../etc/passwd", "schemas/pulls/upstream.schema.json"},
		{"../_components/a/..%2f/x.json", "schemas/pulls/upstream.schema.json"},
		{"file:///schemas/_components/github/v1/user.schema.json", "schemas/pulls/upstream.schema.json"},
		{"_components/github/v1/user.schema.json", "schemas/pulls/upstream.schema.json"},
		{"../_components/github/v1/nope.schema.json", "schemas/pulls/upstream.schema.json"},
		{"../_components/github/v1/bad.schema.json", "schemas/_components/github/v1/bad.schema.json"},
	} {
		d := componentsDir(`{"properties": {"id": {"$ref": "`+tc.ref+`"}}}`, map[string]string{
			"github/v1/user.schema.json": `{"type": "string"}`,
			"github/v1/bad.schema.json":  `{"$ref": "../v2/user.schema.json"}`,
		})
		_, err := d.Compile("upstream.schema.json")
		var ce *config.Error
		if !errors.As(err, &ce) || !errors.Is(err, schema.ErrOutsideContract) || ce.File != tc.file {
			t.Errorf("%s: %v", tc.ref, err)
		}
	}
	// Without Components, a component is outside the contract.
	d := componentsDir(`{"$ref": "../_components/github/v1/user.schema.json"}`, nil)
	d.Components = nil
	if _, err := d.Compile("upstream.schema.json"); !errors.Is(err, schema.ErrOutsideContract) || !strings.Contains(err.Error(), "upstream.schema.json:1:2: /$ref") {
		t.Errorf("no components: %v", err)
	}
}
