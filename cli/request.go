package cli

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/fileio"
	"github.com/airlockdev/airlock/internal/strictyaml"
	"github.com/airlockdev/airlock/semantic"
)

// requestFlags are the flags that describe the adapter's request, shared by
// check and record: --request FILE, then --request-id and --context on top.
type requestFlags struct {
	id      string
	file    string
	context []string
}

// register adds the flags; idHelp describes --request-id for the command.
func (r *requestFlags) register(f *pflag.FlagSet, idHelp string) {
	f.StringVar(&r.id, "request-id", "", idHelp)
	f.StringArrayVar(&r.context, "context", nil, "request context KEY=VALUE, repeatable (adds to the request file's)")
	f.StringVar(&r.file, "request", "", "YAML or JSON file with the request: {id: ..., context: {KEY: VALUE}}")
}

// request builds the request: the file's (strict: unknown keys are errors
// with file and line), then the flags. Context is never nil.
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
	}
	if req.Context == nil {
		req.Context = map[string]string{}
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
	return req, nil
}
