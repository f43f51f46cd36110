package proxy

import (
	"slices"
	"sync/atomic"

	"github.com/airlockdev/airlock/gate"
)

// ContractSet is one loaded set of contracts, by tool name; immutable.
type ContractSet struct {
	byTool map[string]*gate.Contract
}

// LoadContracts loads every contract under schemasDir (gate.LoadAllDir).
// The error is the gate's (*gate.ConfigError for a broken contract).
func LoadContracts(schemasDir string, opts gate.Options) (*ContractSet, error) {
	cs, err := gate.LoadAllDir(schemasDir, opts)
	if err != nil {
		return nil, err
	}
	set := &ContractSet{byTool: make(map[string]*gate.Contract, len(cs))}
	for _, c := range cs {
		set.byTool[c.Tool()] = c
	}
	return set, nil
}

// Get returns the contract of tool (the contract's tool name); false when
// there is none. A nil set has none.
func (s *ContractSet) Get(tool string) (*gate.Contract, bool) {
	if s == nil {
		return nil, false
	}
	c, ok := s.byTool[tool]
	return c, ok
}

// Tools returns the tool names of the set, sorted.
func (s *ContractSet) Tools() []string {
	if s == nil {
		return nil
	}
	names := make([]string, 0, len(s.byTool))
	for t := range s.byTool {
		names = append(names, t)
	}
	slices.Sort(names)
	return names
}

// Contracts holds the contract set the proxy gates with, swapped whole.
// The zero value holds none. Safe for concurrent use.
type Contracts struct {
	set atomic.Pointer[ContractSet]
}

// NewContracts returns a holder of set.
func NewContracts(set *ContractSet) *Contracts {
	c := &Contracts{}
	c.set.Store(set)
	return c
}

// Load returns the current set (nil: none).
func (c *Contracts) Load() *ContractSet {
	if c == nil {
		return nil
	}
	return c.set.Load()
}

// Reload loads schemasDir and swaps the new set in; a set that does not
// load keeps the old one and returns why.
func (c *Contracts) Reload(schemasDir string, opts gate.Options) error {
	set, err := LoadContracts(schemasDir, opts)
	if err != nil {
		return err
	}
	c.set.Store(set)
	return nil
}
