package proxy

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/airlockdev/airlock/gate"
)

// ContractSet is the contracts of one schemas folder, keyed by the MCP
// tool name each serves: the manifest's tool name (contract.yaml tool,
// which must equal its folder's name; manifests have no separate MCP
// tool name). Immutable once loaded, safe for concurrent use.
type ContractSet struct {
	dir       string
	contracts map[string]*gate.Contract
	tools     []string
}

// LoadContracts loads every contract of schemasDir (each subfolder with a
// contract.yaml, gate.LoadAllDir) with opts. Errors are the gate's
// *gate.ConfigError, naming the file and line; a folder with no contract
// is an error too (a proxy that gates nothing is a misconfiguration: use
// --mode off to pass everything).
func LoadContracts(schemasDir string, opts gate.Options) (*ContractSet, error) {
	all, err := gate.LoadAllDir(schemasDir, opts)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("%s: no contract (no subfolder holds a %s)", schemasDir, gate.ManifestFile)
	}
	s := &ContractSet{dir: schemasDir, contracts: make(map[string]*gate.Contract, len(all))}
	for _, c := range all {
		if _, dup := s.contracts[c.Tool()]; dup {
			return nil, fmt.Errorf("%s: two contracts serve the tool %q", schemasDir, c.Tool())
		}
		s.contracts[c.Tool()] = c
		s.tools = append(s.tools, c.Tool())
	}
	slices.Sort(s.tools)
	return s, nil
}

// Get returns the contract of the MCP tool named tool; false when none.
// A nil set has none.
func (s *ContractSet) Get(tool string) (*gate.Contract, bool) {
	if s == nil {
		return nil, false
	}
	c, ok := s.contracts[tool]
	return c, ok
}

// Tools returns the tool names of the set, sorted (a copy).
func (s *ContractSet) Tools() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.tools)
}

// Dir is the schemas folder the set was loaded from.
func (s *ContractSet) Dir() string {
	if s == nil {
		return ""
	}
	return s.dir
}

// Contracts holds the contract set the proxy gates with and swaps it whole
// on Reload (on SIGHUP, say): a call sees either the old set or the new
// one, never a mix. The zero value holds no set (Load returns nil). Safe
// for concurrent use.
type Contracts struct {
	cur atomic.Pointer[ContractSet]
	// reload serialises Reloads, so that the last to finish is the last
	// to start.
	reload sync.Mutex
}

// OpenContracts loads schemasDir (LoadContracts) into a new holder.
func OpenContracts(schemasDir string, opts gate.Options) (*Contracts, error) {
	c := &Contracts{}
	if err := c.Reload(schemasDir, opts); err != nil {
		return nil, err
	}
	return c, nil
}

// NewContracts is a holder serving set (loaded by the caller, with
// LoadContracts) until a Reload.
func NewContracts(set *ContractSet) *Contracts {
	c := &Contracts{}
	c.cur.Store(set)
	return c
}

// Load returns the current set; nil before the first successful Reload.
// It is one atomic load: cheap on every call.
func (c *Contracts) Load() *ContractSet { return c.cur.Load() }

// Reload loads schemasDir with opts and, when every contract loads,
// makes it the current set. When any contract fails to load the current
// set stays (the old contracts keep serving) and the error says why,
// naming the file and line (*gate.ConfigError).
func (c *Contracts) Reload(schemasDir string, opts gate.Options) error {
	c.reload.Lock()
	defer c.reload.Unlock()
	s, err := LoadContracts(schemasDir, opts)
	if err != nil {
		if c.cur.Load() != nil {
			return fmt.Errorf("reloading contracts, the previous ones stay: %w", err)
		}
		return err
	}
	c.cur.Store(s)
	return nil
}
