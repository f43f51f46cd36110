package gate

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/internal/fileio"
	"github.com/airlockdev/airlock/internal/manifest"
	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/strictyaml"
	"github.com/airlockdev/airlock/internal/validator"
	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/redact"
	"github.com/airlockdev/airlock/semantic"
)

// ManifestFile is the name of a contract manifest inside a contract folder
// (schemas/<tool>/contract.yaml by convention).
const ManifestFile = "contract.yaml"

// Options configure contract loading. The zero value is ready to use.
type Options struct {
	// CustomRules are Go rules a manifest may name with "custom: <name>",
	// by that name. The manifest's rule name replaces the rule's own in
	// refusals (semantic.<manifest name>). A manifest naming a rule that is
	// not here is a *ConfigError. Rules must be safe for concurrent use.
	CustomRules map[string]semantic.Rule
	// Redactor is the secret policy applied to Response.Source before it
	// enters an audit record; nil means the default redact.Redactor (the
	// one airlock record uses unless configured).
	Redactor *redact.Redactor
	// InstanceLocations is the most failing instance locations an audit
	// record lists (AuditRecord.InstanceLocations) for a schema refusal or
	// repeated member names: 0 means MaxInstanceLocations (16), more is
	// capped at it, and a negative value lists only the chosen one (the
	// record's instance_location), skipping the walk of the validator's
	// causes.
	InstanceLocations int
	// Mode is what the contract's callers do with its verdicts (see Mode):
	// "" means ModeStrict. In ModeWarn, Check runs every stage and returns
	// the verdict as in ModeStrict, with Verdict.Mode ModeWarn, so that
	// Verdict.AgentOutput gives the original result; in ModeOff, Check
	// reads nothing and returns a verdict with Mode ModeOff, no Output and
	// an audit record with outcome "passed". A mode ParseMode does not
	// accept is a *ConfigError. Contract.WithMode changes it per contract.
	Mode Mode
	// Observe, when set, is called once per verdict Check returns (not for
	// an error), after the verdict is complete, on Check's goroutine: with
	// the tool, mode, outcome, reason, latency and bytes (Observation) —
	// a metrics hook that keeps the gate free of any metrics library. It
	// must be safe for concurrent use and return quickly. nil: none.
	Observe func(Observation)
	// Logger, when set, gets one structured line per verdict Check
	// returns: message AuditMessage, level Info (Warn when refused), the
	// attributes mode, outcome, latency_us and audit (the AuditRecord,
	// already redacted; with slog.JSONHandler its JSON form). nil: nothing
	// is logged.
	Logger *slog.Logger
}

// Contract is one tool's compiled contract: immutable once loaded and safe
// for concurrent use by any number of goroutines. Its accessors return
// copies.
type Contract struct {
	tool, version, current, protocol string

	manifest     manifest.Manifest // never handed out (see introspect.Manifest)
	limits       Limits
	contentTypes []string
	errorCodes   []ErrorCode
	retryable    map[string]bool
	statuses     statusPolicy
	agentSchema  *compiledSchema
	// agentErrorSchema checks a matched upstream error's detail; nil: none.
	agentErrorSchema *compiledSchema
	// text is the resolved text policy of projected strings.
	text       textPolicies
	formats    schema.FormatPolicy
	annotated  []string // the formats the policy only annotates, sorted
	versions   map[string]*upstream
	schemas    *schema.Dir
	redactor   *redact.Redactor
	locations  int // the most instance locations an audit record lists
	fsys       fs.FS
	dir, shown string
	// components serves the shared components (nil: none), shown as
	// componentsShown.
	components      fs.FS
	componentsShown string
	// mode, observeFn and logger are Options.Mode (never ""),
	// Options.Observe and Options.Logger.
	mode      Mode
	observeFn func(Observation)
	logger    *slog.Logger
}

type upstream struct {
	name   string
	schema *compiledSchema
	// asserting is schema with the annotated formats asserted, which finds
	// the values they would refuse (format.annotated warnings); nil when the
	// policy annotates no format the contract's schema files name.
	asserting *jsonschema.Schema
	// assertingFast is asserting compiled (see internal/validator): the
	// quick question whether there is anything to warn about at all.
	assertingFast *validator.Validator
	projection    []projField
	rules         []semantic.Rule
	// result and textBlock say where an MCP contract's value is (see
	// ResultStructured; textBlock -1: the only text block).
	result    string
	textBlock int
	// errors are the declared upstream error shapes, in manifest order.
	errors []upstreamError
	// paths are the pointers the stages after the schema look up, and
	// whole says they need the whole value instead (see view).
	paths []jsonpointer.Pointer
	whole bool
}

// projField is one projection entry: agent field ← pointer.
type projField struct {
	field   string
	pointer jsonpointer.Pointer
}

// Tool returns the tool name, e.g. "review_status" (^[a-z][a-z0-9_]{0,63}$).
func (c *Contract) Tool() string { return c.tool }

// Version returns the contract's own version as the manifest states it.
func (c *Contract) Version() string { return c.version }

// Limits returns the contract's limits with defaults filled in.
func (c *Contract) Limits() Limits { return c.limits }

// UpstreamVersions returns the contract's upstream version names, sorted
// (a new slice).
func (c *Contract) UpstreamVersions() []string {
	return slices.Sorted(maps.Keys(c.versions))
}

// Current returns the upstream version checked when a call names none: the
// manifest's "current", or the only version when there is one; "" when
// neither (every call must then name a version).
func (c *Contract) Current() string { return c.current }

// Protocol returns the contract's upstream protocol, ProtocolJSON or
// ProtocolMCP.
func (c *Contract) Protocol() string { return c.protocol }

// Load loads and compiles the contract in folder dir of fsys: dir/
// contract.yaml and the schema files it names (dir is an fs.ValidPath,
// "." for the root of fsys). Every file is read through fsys only, must be
// a regular file (a manifest of at most MaxConfigFile bytes, a schema file
// of at most 8 MiB), and a $ref may reach only the *.json files directly in
// dir and, when dir is not ".", the shared components in the folder
// "_components" beside it (path.Join(path.Dir(dir), "_components"): a $ref
// "../_components/github/v1/user.schema.json", confined to that folder, see
// schema.Dir); nothing else is read, nothing is fetched. An embed.FS works:
//
//	//go:embed contracts
//	var contracts embed.FS
//	c, err := gate.Load(contracts, "contracts/review_status", gate.Options{})
//
// Errors are *ConfigError values naming the file, line and column: an
// unreadable file, an unknown or duplicate key, a tool name that differs
// from the folder's name (when dir is not "."), a missing schema file, a
// bad JSON Pointer, a rule of unknown kind, a custom rule not in
// opts.CustomRules, a format policy naming a format the validator does not
// check or a checker that does not exist for its format, a $ref outside the
// folder (wrapping ErrOutsideContract), or a schema file that says something the validator
// would not enforce (wrapping ErrNotStrict, with the keyword's JSON
// Pointer: an unknown keyword or format, an integer keyword out of range,
// a pattern past its bounds, a reference loop; see docs/contracts.md).
func Load(fsys fs.FS, dir string, opts Options) (*Contract, error) {
	name := ""
	var comp fs.FS
	compShown := ""
	if dir = path.Clean(dir); dir != "." {
		name = path.Base(dir)
		compShown = path.Join(path.Dir(dir), schema.ComponentsFolder)
		if st, err := fs.Stat(fsys, compShown); err == nil && st.IsDir() {
			if comp, err = fs.Sub(fsys, compShown); err != nil {
				return nil, &ConfigError{File: compShown, Msg: "cannot read the shared components: " + err.Error(), Err: err}
			}
		}
	}
	return load(fsys, dir, dir, name, comp, compShown, opts)
}

// LoadAll loads every <tool>/contract.yaml in folder root of fsys (see
// Load), sorted by tool name. A subfolder without a manifest is skipped
// (the shared components' "_components" among them); any broken contract
// is an error.
func LoadAll(fsys fs.FS, root string, opts Options) ([]*Contract, error) {
	root = path.Clean(root)
	entries, err := fs.ReadDir(fsys, root)
	if err != nil {
		return nil, &ConfigError{File: root, Msg: "cannot read the contracts folder: " + err.Error(), Err: err}
	}
	var out []*Contract
	for _, e := range entries {
		dir := path.Join(root, e.Name())
		if st, err := fs.Stat(fsys, dir); err != nil || !st.IsDir() {
			continue
		}
		if _, err := fs.Stat(fsys, path.Join(dir, ManifestFile)); err != nil {
			continue
		}
		c, err := Load(fsys, dir, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// LoadDir is Load for a contract folder on disk, given as an OS path
// (schemas/<tool> by convention). No symbolic link is followed at or
// beneath the folder: a linked folder, contract.yaml or schema file is a
// *ConfigError wrapping fileio.ErrSymlink. The folders above it may be
// links. Errors name files by their OS paths.
//
// The shared components are served from the folder "_components" beside
// dir (filepath.Join(filepath.Dir(dir), "_components")) when it exists,
// under the same rules: no link followed beneath it, and a linked
// "_components" folder is a *ConfigError wrapping fileio.ErrSymlink.
func LoadDir(dir string, opts Options) (*Contract, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, &ConfigError{File: dir, Err: err}
	}
	if _, err := os.Stat(dir); err != nil {
		file := filepath.Join(dir, ManifestFile)
		return nil, &ConfigError{File: file, Msg: "cannot read manifest: " + err.Error(), Err: err}
	}
	if st, err := os.Lstat(dir); err == nil && st.Mode()&fs.ModeSymlink != 0 && filepath.Base(dir) != "." {
		return nil, &ConfigError{File: dir, Msg: "a symbolic link to a folder; a contract must be a real folder (airlock follows no link inside a contract tree)", Err: fileio.ErrSymlink}
	}
	fsys := fileio.NewTree(dir).FS()
	comp, compShown, err := ComponentsDir(dir)
	if err != nil {
		return nil, err
	}
	c, err := load(fsys, ".", dir, filepath.Base(abs), comp, compShown, opts)
	if err != nil {
		return nil, err
	}
	c.fsys = fsys
	return c, nil
}

// ComponentsDir returns the shared components of the contract folder dir
// on disk (an OS path): the folder "_components" beside it
// (filepath.Join(filepath.Dir(dir), "_components"), dir made absolute
// first), read through a fileio.Tree that follows no link, and how errors
// name that folder (filepath.Join(dir, "..", "_components")). fsys is nil
// when there is no such folder. A symbolic link in its place is a
// *ConfigError wrapping fileio.ErrSymlink.
func ComponentsDir(dir string) (fsys fs.FS, shown string, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, "", &ConfigError{File: dir, Err: err}
	}
	shown = filepath.Join(dir, "..", schema.ComponentsFolder)
	folder := filepath.Join(filepath.Dir(abs), schema.ComponentsFolder)
	st, err := os.Lstat(folder)
	switch {
	case err != nil:
		return nil, shown, nil
	case st.Mode()&fs.ModeSymlink != 0:
		return nil, "", &ConfigError{File: shown, Msg: "a symbolic link; the shared components must be a real folder (airlock follows no link inside a contract tree)", Err: fileio.ErrSymlink}
	case !st.IsDir():
		return nil, shown, nil
	}
	return fileio.NewTree(folder).FS(), shown, nil
}

// LoadAllDir is LoadAll for a folder on disk (schemas/ by convention):
// every subfolder that holds a contract.yaml is loaded with LoadDir. A
// symbolic link in the folder to another folder is a *ConfigError: a
// contract tree holds real folders.
func LoadAllDir(root string, opts Options) ([]*Contract, error) {
	t := fileio.NewTree(root)
	entries, err := t.ReadDir(root)
	if err != nil {
		return nil, &ConfigError{File: root, Msg: fmt.Sprintf("cannot read the schemas directory (%v); run from the project root or pass --schemas", errors.Unwrap(err)), Err: err}
	}
	var out []*Contract
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		if e.Type()&fs.ModeSymlink != 0 {
			if st, err := os.Stat(dir); err == nil && st.IsDir() {
				return nil, &ConfigError{File: dir, Msg: "a symbolic link to a folder; a contract tree must hold real folders (airlock follows no link inside one)", Err: fileio.ErrSymlink}
			}
			continue
		}
		if !e.IsDir() || !t.Exists(filepath.Join(dir, ManifestFile)) {
			continue
		}
		c, err := LoadDir(dir, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// load reads the contract in dir of fsys; shown is how errors name dir,
// folder the name the tool must have ("" for no check), comp the shared
// components (nil: none) shown as compShown.
func load(fsys fs.FS, dir, shown, folder string, comp fs.FS, compShown string, opts Options) (*Contract, error) {
	show := func(name string) string {
		if dir == shown {
			return path.Join(dir, name)
		}
		return filepath.Join(shown, name)
	}
	file := show(ManifestFile)
	mode, err := ParseMode(string(opts.Mode))
	if err != nil {
		return nil, &ConfigError{File: shown, Key: "Options.Mode", Msg: err.Error(), Err: err}
	}
	data, err := fileio.ReadFS(fsys, path.Join(dir, ManifestFile), MaxConfigFile)
	if err != nil {
		return nil, &ConfigError{File: file, Msg: "cannot read manifest: " + err.Error(), Err: err}
	}
	m, err := manifest.Decode(file, data)
	if err != nil {
		return nil, err
	}
	c := &Contract{
		tool: m.Tool, version: m.Version, current: m.Current, protocol: m.Protocol,
		manifest:     m,
		limits:       limitsOf(m.Limits),
		contentTypes: slices.Clone(m.ContentTypes),
		retryable:    maps.Clone(m.Retryable),
		versions:     map[string]*upstream{},
		redactor:     opts.Redactor,
		locations:    instanceLocations(opts.InstanceLocations),
		fsys:         fsys, dir: dir, shown: shown,
		components: comp, componentsShown: compShown,
		mode: mode, observeFn: opts.Observe, logger: opts.Logger,
	}
	if c.protocol == "" {
		c.protocol = ProtocolJSON
	}
	if c.redactor == nil {
		c.redactor = &redact.Redactor{}
	}
	for _, e := range m.ErrorCodes {
		c.errorCodes = append(c.errorCodes, ErrorCode(e))
	}
	cfgErr := func(key, msg string) error {
		line, col := strictyaml.Position(data, key)
		return &ConfigError{File: file, Line: line, Column: col, Key: key, Msg: msg}
	}
	if folder != "" && folder != m.Tool {
		return nil, cfgErr("/tool", fmt.Sprintf("tool %q must equal its directory name %q", m.Tool, folder))
	}
	if len(c.contentTypes) == 0 {
		c.contentTypes = slices.Clone(DefaultContentTypes)
	}
	if len(c.errorCodes) == 0 {
		c.errorCodes = slices.Clone(ErrorCodes)
	}
	for reason := range m.Retryable {
		if _, ok := LookupReason(reason); !ok {
			return nil, cfgErr("/retryable/"+jsonpointer.EscapeToken(reason), fmt.Sprintf("unknown reason %q (see docs/reasons.md)", reason))
		}
	}
	var bad string
	if c.statuses, bad, err = parseStatuses(m.Statuses, c.errorCodes); err != nil {
		return nil, cfgErr("/statuses/"+jsonpointer.EscapeToken(bad), err.Error())
	}
	if err := c.compile(m, opts, cfgErr); err != nil {
		return nil, err
	}
	return c, nil
}

// compile compiles the schemas, projections and rules of every upstream
// version and the agent-facing schema.
func (c *Contract) compile(m manifest.Manifest, opts Options, cfgErr func(key, msg string) error) error {
	c.schemas = schema.NewDir(c.fsys, c.dir, c.shown)
	c.schemas.Components, c.schemas.ComponentsShown = c.components, c.componentsShown
	var err error
	var bad string
	if c.formats, bad, err = schema.ParseFormatPolicy(m.Formats); err != nil {
		return cfgErr("/formats/"+jsonpointer.EscapeToken(bad), err.Error())
	}
	c.annotated = c.formats.Annotated()
	compile := func(key, name string) (*compiledSchema, error) {
		if !c.schemas.Exists(name) {
			return nil, cfgErr(key, fmt.Sprintf("schema file %q not found in %s", name, c.shown))
		}
		s, err := c.schemas.CompileWith(name, c.formats)
		if err != nil {
			return nil, err
		}
		return &compiledSchema{ref: s, fast: validator.Compile(s)}, nil
	}
	if c.agentSchema, err = compile("/agent_schema", m.AgentSchema); err != nil {
		return err
	}
	if m.AgentErrorSchema != "" {
		if c.agentErrorSchema, err = compile("/agent_error_schema", m.AgentErrorSchema); err != nil {
			return err
		}
	}
	for name, uv := range m.UpstreamVersions {
		key := "/upstream_versions/" + jsonpointer.EscapeToken(name)
		u := &upstream{name: name}
		if u.result, u.textBlock, err = c.resultOf(m, uv, key, cfgErr); err != nil {
			return err
		}
		if u.schema, err = compile(key+"/schema", uv.Schema); err != nil {
			return err
		}
		if len(c.annotated) > 0 && c.schemas.MentionsFormat(c.annotated) {
			if u.asserting, err = c.schemas.CompileWith(uv.Schema, c.formats.Asserting()); err != nil {
				return err
			}
			u.assertingFast = validator.Compile(u.asserting)
		}
		for field, ptr := range uv.Projection {
			p, err := jsonpointer.Parse(ptr)
			if err != nil {
				return cfgErr(key+"/projection/"+jsonpointer.EscapeToken(field), err.Error())
			}
			u.projection = append(u.projection, projField{field: field, pointer: p})
		}
		sort.Slice(u.projection, func(i, j int) bool { return u.projection[i].field < u.projection[j].field })
		if u.rules, err = buildRules(key, uv.Rules, opts, cfgErr); err != nil {
			return err
		}
		if err := c.compileErrors(u, uv.Errors, key, compile, cfgErr); err != nil {
			return err
		}
		u.paths, u.whole = readPaths(u)
		c.versions[name] = u
	}
	if c.current == "" && len(c.versions) == 1 {
		for v := range c.versions {
			c.current = v
		}
	}
	if c.current != "" && c.versions[c.current] == nil {
		return cfgErr("/current", fmt.Sprintf("current upstream version %q is not in upstream_versions", c.current))
	}
	return c.compileText(m, cfgErr)
}

// resultOf resolves an upstream version's result and text_block (the
// version's own keys, else the manifest's): a configuration error when
// either is set without protocol: mcp, or text_block with result
// structured at the same level (a version's result: structured ignores the
// manifest's text_block).
func (c *Contract) resultOf(m manifest.Manifest, uv manifest.UpstreamVersion, key string, cfgErr func(key, msg string) error) (string, int, error) {
	result, resultKey := m.Result, "/result"
	if uv.Result != "" {
		result, resultKey = uv.Result, key+"/result"
	}
	block, blockKey := m.TextBlock, "/text_block"
	if uv.TextBlock != nil {
		block, blockKey = uv.TextBlock, key+"/text_block"
	}
	if c.protocol != ProtocolMCP {
		if result != "" {
			return "", 0, cfgErr(resultKey, fmt.Sprintf("result %q needs protocol: mcp (it says where the value is in an MCP CallToolResult); this contract's protocol is %s", result, c.protocol))
		}
		if block != nil {
			return "", 0, cfgErr(blockKey, "text_block needs protocol: mcp and result: text or auto; this contract's protocol is "+c.protocol)
		}
		return "", -1, nil
	}
	if result == "" {
		result = ResultStructured
	}
	if block == nil {
		return result, -1, nil
	}
	if result == ResultStructured {
		if uv.TextBlock == nil && uv.Result != "" {
			// The version reads structuredContent; the manifest's
			// text_block is for its other versions.
			return result, -1, nil
		}
		return "", 0, cfgErr(blockKey, "text_block names a text content block, which result: structured never reads; set result: text or auto, or remove text_block")
	}
	return result, *block, nil
}

// relative shortens the contract's schema URLs in a message to file names.
func (c *Contract) relative(s string) string { return c.schemas.Relative(s) }

// limitsOf converts the manifest's limits and fills in defaults.
func limitsOf(l manifest.Limits) Limits {
	return Limits{
		MaxBytes: l.MaxBytes, MaxDepth: l.MaxDepth, MaxNumberLength: l.MaxNumberLength, MaxStringLength: l.MaxStringLength,
		AllowFoldCollisions: l.MemberFoldCollision != nil && !*l.MemberFoldCollision,
	}.withDefaults()
}

// instanceLocations is Options.InstanceLocations resolved: 1 to
// MaxInstanceLocations.
func instanceLocations(n int) int {
	switch {
	case n == 0 || n > MaxInstanceLocations:
		return MaxInstanceLocations
	case n < 0:
		return 1
	}
	return n
}
