package ci_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// actionMeta is GitHub's action metadata (action.yml) as far as a composite
// action may use it: the keys of "Metadata syntax for GitHub Actions". The
// decoder refuses any other key.
type actionMeta struct {
	Name        string                  `yaml:"name"`
	Author      string                  `yaml:"author"`
	Description string                  `yaml:"description"`
	Branding    map[string]string       `yaml:"branding"`
	Inputs      map[string]actionInput  `yaml:"inputs"`
	Outputs     map[string]actionOutput `yaml:"outputs"`
	Runs        struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
}

type actionInput struct {
	Description        string  `yaml:"description"`
	Required           bool    `yaml:"required"`
	Default            *string `yaml:"default"`
	DeprecationMessage string  `yaml:"deprecationMessage"`
}

type actionOutput struct {
	Description string `yaml:"description"`
	Value       string `yaml:"value"`
}

// actionStep is one step of a composite action (runs.steps[*]).
type actionStep struct {
	Name             string            `yaml:"name"`
	ID               string            `yaml:"id"`
	If               string            `yaml:"if"`
	Uses             string            `yaml:"uses"`
	Run              string            `yaml:"run"`
	Shell            string            `yaml:"shell"`
	With             map[string]string `yaml:"with"`
	Env              map[string]string `yaml:"env"`
	WorkingDirectory string            `yaml:"working-directory"`
	ContinueOnError  bool              `yaml:"continue-on-error"`
}

func parseAction(t *testing.T, src []byte) (*actionMeta, error) {
	t.Helper()
	var m actionMeta
	dec := yaml.NewDecoder(bytes.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return &m, nil
}

func loadAction(t *testing.T) *actionMeta {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := parseAction(t, src)
	if err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return m
}

// exprRE matches one ${{ … }} expression.
var exprRE = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// stepOutputRE matches steps.<id>.outputs.<name>.
var stepOutputRE = regexp.MustCompile(`^steps\.([A-Za-z_][A-Za-z0-9_-]*)\.outputs\.([A-Za-z_][A-Za-z0-9_-]*)$`)

// The branding GitHub's Marketplace accepts: a colour name (the icon is a
// Feather icon name, not checked here).
var brandingColors = []string{"white", "black", "yellow", "blue", "green", "orange", "red", "purple", "gray-dark"}

// checkAction returns what is wrong with a composite action's metadata: the
// required keys (name, description, runs.using composite, steps), each
// step a run: with a shell or a uses:, ids unique, inputs described,
// outputs described and mapped to an output of an earlier step, every
// inputs.X expression naming a declared input, and no ${{ }} inside a
// run: script (script injection: inputs go through env:).
func checkAction(m *actionMeta) []string {
	var bad []string
	if m.Name == "" {
		bad = append(bad, "name is missing")
	}
	if m.Description == "" {
		bad = append(bad, "description is missing")
	}
	if c := m.Branding["color"]; c != "" && !slices.Contains(brandingColors, c) {
		bad = append(bad, fmt.Sprintf("branding.color %q is not one of %v", c, brandingColors))
	}
	if m.Runs.Using != "composite" {
		bad = append(bad, fmt.Sprintf("runs.using is %q, want composite", m.Runs.Using))
	}
	if len(m.Runs.Steps) == 0 {
		bad = append(bad, "runs.steps is empty")
	}
	for name, in := range m.Inputs {
		if in.Description == "" {
			bad = append(bad, fmt.Sprintf("input %s has no description", name))
		}
		if in.Required && in.Default != nil {
			bad = append(bad, fmt.Sprintf("input %s is required and has a default", name))
		}
	}
	exprs := func(where, s string) {
		for _, e := range exprRE.FindAllStringSubmatch(s, -1) {
			if in, ok := strings.CutPrefix(e[1], "inputs."); ok {
				if _, known := m.Inputs[in]; !known {
					bad = append(bad, fmt.Sprintf("%s uses inputs.%s, which the action does not declare", where, in))
				}
			}
		}
	}
	ids := map[string]int{}
	for i, s := range m.Runs.Steps {
		where := fmt.Sprintf("step %d (%s)", i+1, s.Name)
		switch {
		case s.Run != "" && s.Uses != "":
			bad = append(bad, where+" has both run and uses")
		case s.Run == "" && s.Uses == "":
			bad = append(bad, where+" has neither run nor uses")
		case s.Run != "" && s.Shell == "":
			bad = append(bad, where+" has run but no shell (a composite action's run steps need one)")
		case s.Uses != "" && s.Shell != "":
			bad = append(bad, where+" has uses and shell")
		}
		if s.Uses != "" && !strings.HasPrefix(s.Uses, "./") && !strings.Contains(s.Uses, "@") {
			bad = append(bad, fmt.Sprintf("%s uses %s without a version (@ref)", where, s.Uses))
		}
		if strings.Contains(s.Run, "${{") {
			bad = append(bad, where+" has a ${{ }} expression inside its run script: pass it through env:")
		}
		if s.ID != "" {
			if _, dup := ids[s.ID]; dup {
				bad = append(bad, fmt.Sprintf("%s repeats the id %s", where, s.ID))
			}
			ids[s.ID] = i
		}
		for k, v := range s.Env {
			exprs(where+" env "+k, v)
		}
		for k, v := range s.With {
			exprs(where+" with "+k, v)
		}
		exprs(where+" if", s.If)
		reads := slices.Collect(mapValues(s.Env))
		reads = append(reads, slices.Collect(mapValues(s.With))...)
		for _, v := range reads {
			for _, e := range exprRE.FindAllStringSubmatch(v, -1) {
				if sm := stepOutputRE.FindStringSubmatch(e[1]); sm != nil {
					if j, ok := ids[sm[1]]; !ok || j >= i {
						bad = append(bad, fmt.Sprintf("%s reads steps.%s, which is not an earlier step", where, sm[1]))
					}
				}
			}
		}
	}
	for name, out := range m.Outputs {
		if out.Description == "" {
			bad = append(bad, fmt.Sprintf("output %s has no description", name))
		}
		sm := exprRE.FindStringSubmatch(out.Value)
		if sm == nil || stepOutputRE.FindStringSubmatch(sm[1]) == nil {
			bad = append(bad, fmt.Sprintf("output %s's value %q is not ${{ steps.<id>.outputs.<name> }}", name, out.Value))
			continue
		}
		if id := stepOutputRE.FindStringSubmatch(sm[1])[1]; !hasKey(ids, id) {
			bad = append(bad, fmt.Sprintf("output %s reads step %s, which the action does not have", name, id))
		}
	}
	slices.Sort(bad)
	return bad
}

func mapValues(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for _, k := range slices.Sorted(mapKeys(m)) {
			if !yield(m[k]) {
				return
			}
		}
	}
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

// The inputs, outputs and commands the CI plan (issue 17) fixes.
var (
	wantInputs   = []string{"args", "base", "command", "fail-on-findings", "fixtures", "inputs", "reports", "schemas", "shard", "tools"}
	wantOutputs  = []string{"exit-code", "json", "junit", "sarif", "summary"}
	wantCommands = []string{"run", "lint", "diff", "mutate", "drift", "merge"}
)

func TestActionMetadata(t *testing.T) {
	m := loadAction(t)
	if bad := checkAction(m); len(bad) > 0 {
		t.Errorf("action.yml:\n  %s", strings.Join(bad, "\n  "))
	}
	if got := slices.Sorted(mapKeys(m.Inputs)); !slices.Equal(got, wantInputs) {
		t.Errorf("inputs %v, want %v", got, wantInputs)
	}
	if got := slices.Sorted(mapKeys(m.Outputs)); !slices.Equal(got, wantOutputs) {
		t.Errorf("outputs %v, want %v", got, wantOutputs)
	}
	// The Go set-up reads the action's own go.mod; the caches are keyed on
	// the step go's key (checked by TestActionScript: the action's go.sum).
	setup := m.Runs.Steps[0]
	if !strings.HasPrefix(setup.Uses, "actions/setup-go@") || setup.With["go-version-file"] != "${{ github.action_path }}/go.mod" {
		t.Errorf("the first step should be actions/setup-go with the action's go.mod, got %+v", setup)
	}
	cached := false
	for _, s := range m.Runs.Steps {
		cached = cached || strings.HasPrefix(s.Uses, "actions/cache@") && strings.Contains(s.With["key"], "${{ steps.go.outputs.key }}")
	}
	if !cached {
		t.Error("no actions/cache step keyed on ${{ steps.go.outputs.key }}")
	}
}

// TestActionCheckCatches feeds checkAction metadata with one fault each, so
// the structural check above can be seen to fail.
func TestActionCheckCatches(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"no description", "name: x\nruns: {using: composite, steps: [{run: 'true', shell: bash}]}", "description is missing"},
		{"not composite", "name: x\ndescription: d\nruns: {using: node20, steps: [{run: 'true', shell: bash}]}", `runs.using is "node20"`},
		{"no shell", "name: x\ndescription: d\nruns: {using: composite, steps: [{run: 'true'}]}", "has run but no shell"},
		{"injection", "name: x\ndescription: d\ninputs: {a: {description: d}}\nruns: {using: composite, steps: [{run: 'echo ${{ inputs.a }}', shell: bash}]}", "inside its run script"},
		{"undeclared input", "name: x\ndescription: d\nruns: {using: composite, steps: [{run: 'true', shell: bash, env: {A: '${{ inputs.nope }}'}}]}", "inputs.nope"},
		{"input without description", "name: x\ndescription: d\ninputs: {a: {default: b}}\nruns: {using: composite, steps: [{run: 'true', shell: bash}]}", "input a has no description"},
		{"dangling output", "name: x\ndescription: d\noutputs: {o: {description: d, value: '${{ steps.gone.outputs.o }}'}}\nruns: {using: composite, steps: [{id: s, run: 'true', shell: bash}]}", "reads step gone"},
		{"unpinned uses", "name: x\ndescription: d\nruns: {using: composite, steps: [{uses: actions/setup-go}]}", "without a version"},
		{"both", "name: x\ndescription: d\nruns: {using: composite, steps: [{uses: a/b@v1, run: 'true', shell: bash}]}", "has both run and uses"},
	} {
		m, err := parseAction(t, []byte(tc.yaml))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		bad := strings.Join(checkAction(m), "\n")
		if !strings.Contains(bad, tc.want) {
			t.Errorf("%s: want a problem containing %q, got %q", tc.name, tc.want, bad)
		}
	}
	if _, err := parseAction(t, []byte("name: x\ndescription: d\nrun: {using: composite}")); err == nil {
		t.Error("an unknown top-level key (run) was accepted")
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
