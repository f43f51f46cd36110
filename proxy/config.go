package proxy

import (
	"fmt"
	"os"
	"slices"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/config"
	"github.com/airlockdev/airlock/internal/strictyaml"
	"github.com/airlockdev/airlock/jsonpointer"
)

// Config is the proxy's configuration file (airlock proxy --config, YAML):
//
//	default_mode: strict        # strict | warn | off; "" is strict
//	unlisted: pass              # pass | hide | refuse; "" is pass
//	tools:
//	  get-weather: {mode: warn, contract: weather}
//
// tools are by MCP tool name; contract names the contract when the MCP
// name is not the contract's tool name; an empty tool name is an error. Decoded strictly (an unknown or
// duplicate key is an error with its file and line), at most
// config.MaxFile bytes.
type Config struct {
	DefaultMode string               `yaml:"default_mode"`
	Unlisted    string               `yaml:"unlisted"`
	Tools       map[string]ToolEntry `yaml:"tools"`
	file        string
	data        []byte
}

// ToolEntry is one tool of Config.
type ToolEntry struct {
	Mode     string `yaml:"mode"`
	Contract string `yaml:"contract"`
}

// LoadConfig reads and checks a proxy configuration file. Errors are
// *gate.ConfigError naming the file and line.
func LoadConfig(file string) (*Config, error) {
	st, err := os.Stat(file)
	if err != nil {
		return nil, &config.Error{File: file, Msg: "cannot read it", Err: err}
	}
	if st.Size() > config.MaxFile {
		return nil, &config.Error{File: file, Msg: fmt.Sprintf("%d bytes, more than the %d a configuration file may hold", st.Size(), config.MaxFile)}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, &config.Error{File: file, Msg: "cannot read it", Err: err}
	}
	c := &Config{file: file, data: data}
	if err := strictyaml.Decode(file, data, nil, c); err != nil {
		return nil, err
	}
	if _, err := gate.ParseMode(c.DefaultMode); err != nil {
		return nil, c.errAt(jsonpointer.Pointer{"default_mode"}, err)
	}
	if _, err := ParseUnlisted(c.Unlisted); err != nil {
		return nil, c.errAt(jsonpointer.Pointer{"unlisted"}, err)
	}
	for _, name := range c.toolNames() {
		if name == "" {
			return nil, c.errAt(jsonpointer.Pointer{"tools", name}, fmt.Errorf("an empty tool name"))
		}
		if _, err := gate.ParseMode(c.Tools[name].Mode); err != nil {
			return nil, c.errAt(jsonpointer.Pointer{"tools", name, "mode"}, err)
		}
	}
	return c, nil
}

// Apply sets opts.Tools from c and checks every tool's contract against
// set: a contract key naming no loaded contract is an error with its line.
// The default mode and unlisted policy are the caller's to merge (flags win).
func (c *Config) Apply(opts *Options, set *ContractSet) error {
	opts.Tools = map[string]ToolConfig{}
	for _, name := range c.toolNames() {
		e := c.Tools[name]
		mode, _ := gate.ParseMode(e.Mode)
		if e.Mode == "" {
			mode = ""
		}
		if e.Contract != "" {
			if _, ok := set.Get(e.Contract); !ok {
				return c.errAt(jsonpointer.Pointer{"tools", name, "contract"}, fmt.Errorf("no contract for tool %q under --schemas (contracts: %v)", e.Contract, set.Tools()))
			}
		}
		opts.Tools[name] = ToolConfig{Mode: mode, Contract: e.Contract}
	}
	return nil
}

func (c *Config) toolNames() []string {
	names := make([]string, 0, len(c.Tools))
	for n := range c.Tools {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// errAt is a configuration error at the key of pointer.
func (c *Config) errAt(p jsonpointer.Pointer, err error) error {
	line, col := strictyaml.Position(c.data, p.String())
	return &config.Error{File: c.file, Line: line, Column: col, Key: p.String(), Msg: err.Error()}
}
