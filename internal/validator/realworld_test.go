package validator_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/conformance"
	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/internal/validator"
)

// Real upstream data: every JSON file of the pinned npm packages make
// test installs into .ci/node (the MCP servers, the SARIF schema, ajv
// when make bench ran) — package.json files as the registry serves them,
// JSON Schemas, data files. Each goes through the tape parse (its fast
// path included) and the strict parser, which must agree; then a hostile
// copy (a member repeated under a case-folded name, and one cut short)
// must be refused the same way by both. Each package.json is validated
// against a package.json contract by the compiled validator and by
// jsonschema/v6, which must agree; real packages both pass and fail it.

// packageSchema is a strict reading of package.json: what a connector
// that reads npm metadata would contract for.
const packageSchema = `{
  "type": "object",
  "required": ["name", "version"],
  "properties": {
    "name": {"type": "string", "pattern": "^(@[a-z0-9._-]+/)?[a-z0-9._-]+$", "maxLength": 214},
    "version": {"type": "string", "pattern": "^[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z.-]+)?(\\+[0-9A-Za-z.-]+)?$"},
    "description": {"type": "string", "maxLength": 512},
    "license": {"type": "string"},
    "author": {"oneOf": [{"type": "string"}, {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "email": {"type": "string", "format": "email"}, "url": {"type": "string"}}}]},
    "dependencies": {"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 64},
    "keywords": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
    "engines": {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}},
    "type": {"enum": ["module", "commonjs"]}
  }
}`

func TestRealNpmPackages(t *testing.T) {
	root, err := conformance.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, ".ci", "node")
	if _, err := os.Stat(dir); err != nil {
		msg := "no npm packages in .ci/node (make test installs them): " + err.Error()
		if conformance.Required() {
			t.Fatal("CI=true but " + msg)
		}
		t.Skip(msg)
	}
	s, vd := compileStrict(t, packageSchema)
	lim := strictjson.Limits{FoldCollisions: true, MaxStringLength: 1 << 20}
	var files, packages, admitted, refused int
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".json" || d.Type()&fs.ModeSymlink != 0 {
			return err
		}
		body, err := os.ReadFile(p)
		if err != nil || len(body) > 4<<20 {
			return err
		}
		files++
		v := agree(t, p, body, lim)
		// Hostile copies: a repeat of the first member under another case,
		// and the body cut short.
		if i := bytes.IndexByte(body, '{'); i >= 0 {
			hostile := append([]byte(`{"NAME":1,"name":2,`), body[i+1:]...)
			if agree(t, p+" (folded repeat)", hostile, lim) != nil {
				t.Errorf("%s: a folded repeat was admitted", p)
			}
		}
		if agree(t, p+" (cut)", body[:len(body)/2], lim) != nil && len(bytes.TrimSpace(body[:len(body)/2])) > 0 {
			t.Errorf("%s: half a body was admitted", p)
		}
		if filepath.Base(p) != "package.json" || v == nil {
			return nil
		}
		packages++
		f, err := vd.Validate(v)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		ref, _ := schema.Validate(s, v)
		if (f == nil) != (ref == nil) {
			t.Errorf("%s: compiled valid=%v, v6 valid=%v (%v / %v)", p, f == nil, ref == nil, f, ref)
		}
		if f == nil {
			admitted++
		} else {
			refused++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d JSON files of the pinned npm packages; %d package.json files: %d admitted, %d refused by both validators", files, packages, admitted, refused)
	if packages == 0 || admitted == 0 || refused == 0 {
		t.Errorf("the real packages should both pass and fail the contract: %d admitted, %d refused", admitted, refused)
	}
}

// agree parses body both ways and fails unless they agree; it returns the
// value (nil when refused).
func agree(t *testing.T, name string, body []byte, lim strictjson.Limits) any {
	t.Helper()
	v, err := strictjson.Parse(body, lim)
	tape, terr := strictjson.ParseTape(body, lim)
	if (err == nil) != (terr == nil) {
		t.Fatalf("%s: Parse error %v, ParseTape error %v", name, err, terr)
	}
	if err != nil {
		var a, b *strictjson.Error
		if !errors.As(err, &a) || !errors.As(terr, &b) || !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: Parse refused %v, ParseTape %v", name, err, terr)
		}
		return nil
	}
	if !reflect.DeepEqual(tape.Value(0), v) {
		t.Fatalf("%s: the tape reads back differently", name)
	}
	return v
}

// compileStrict compiles a schema document as airlock's compiler does.
func compileStrict(t *testing.T, doc string) (*jsonschema.Schema, *validator.Validator) {
	t.Helper()
	v, err := strictjson.Parse([]byte(doc), strictjson.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	c := schema.NewCompiler(nil)
	if err := c.AddResource("https://airlock.invalid/package.json", v); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("https://airlock.invalid/package.json")
	if err != nil {
		t.Fatal(err)
	}
	vd := validator.Compile(s)
	if vd.Fallback() != "" {
		t.Fatal(vd.Fallback())
	}
	return s, vd
}
