package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/airlockdev/airlock/fixture"
	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/fileio"
	"github.com/airlockdev/airlock/internal/strictyaml"
	"github.com/airlockdev/airlock/semantic"
)

// requestFlags are the flags that describe the adapter's request, shared by
// check and record: --request FILE, then --request-id and --context on top.
type requestFlags struct {
	id          string
	file        string
	context     []string
	contextJSON []string
}

// register adds the flags; idHelp describes --request-id for the command.
func (r *requestFlags) register(f *pflag.FlagSet, idHelp string) {
	f.StringVar(&r.id, "request-id", "", idHelp)
	f.StringArrayVar(&r.context, "context", nil, "request context KEY=VALUE, the value a string, repeatable (adds to the request file's)")
	f.StringArrayVar(&r.contextJSON, "context-json", nil, "request context KEY=JSON, the value a JSON string, number, boolean or null (user=42 is the number 42), repeatable")
	f.StringVar(&r.file, "request", "", "YAML or JSON file with the request: {id: ..., context: {KEY: VALUE}}")
}

// request builds the request: the file's (strict: unknown keys are errors
// with file and line; a YAML number stays a number), then --context (string
// values), then --context-json (one JSON string, number, boolean or null
// each; numbers kept as written), which wins over --context for the same
// key. Context is never nil.
func (r *requestFlags) request() (semantic.Request, error) {
	req := semantic.Request{}
	if r.file != "" {
		data, err := fileio.ReadRegularFile(r.file, gate.MaxConfigFile)
		if err != nil {
			return req, usageErr("--request: %v", err)
		}
		if err := strictyaml.Decode(r.file, data, nil, &req); err != nil {
			return req, err
		}
		if err := fixture.ExactNumbers(r.file, data, "/context", req.Context); err != nil {
			return req, err
		}
		if err := semantic.NormalizeContext(req.Context); err != nil {
			return req, &gate.ConfigError{File: r.file, Key: "/context", Msg: err.Error()}
		}
	}
	if req.Context == nil {
		req.Context = map[string]any{}
	}
	if r.id != "" {
		req.ID = r.id
	}
	for _, kv := range r.context {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return req, usageErr("--context %q: want KEY=VALUE", kv)
		}
		req.Context[k] = v
	}
	for _, kv := range r.contextJSON {
		k, raw, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return req, usageErr("--context-json %q: want KEY=JSON", kv)
		}
		v, err := jsonScalar(raw)
		if err != nil {
			return req, usageErr("--context-json %s: %v", k, err)
		}
		switch v.(type) {
		case map[string]any, []any:
			return req, usageErr("--context-json %s: want a JSON string, number, boolean or null, not an object or array", k)
		}
		req.Context[k] = v
	}
	return req, nil
}

// jsonScalar parses one JSON value (numbers kept as json.Number, exactly as
// written); anything after it is an error.
func jsonScalar(raw string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON (a string needs its quotes: '\"abc\"'): %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}
