package schemadiff

import (
	"fmt"
	"maps"
	"math/big"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/introspect"
	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/schemawalk"
	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/reports"
)

// This file is airlock diff: two JSON Schemas compared from the consumer's
// side. Both are compiled first, the way the gate compiles contracts (strict
// JSON, draft 2020-12 by default, $refs confined to the *.json files of the
// schema's own folder), so every $ref is resolved before comparing; the
// walk then merges $ref targets and allOf members into one view per
// instance location, distributes oneOf/anyOf into alternatives, and
// classifies each difference with a rule of the registry in diffrules.go.

// Bounds on the work one comparison may do: recursion depth, and the number
// of schema pairs compared (recursive schemas, wide oneOfs).
const (
	maxDiffDepth    = 64
	maxDiffCompares = 20000
	maxAlternatives = 64
)

// Schema is one compiled schema file and the documents its $refs reach.
type Schema struct {
	path string // as given
	name string // base name
	base string // file URL of its folder, ending in "/"
	docs map[string]any
	root *jsonschema.Schema
}

// CompileFile compiles path; its $refs may reach the *.json files of
// its own folder and nothing else (no network, no other folder). Problems
// are *gate.ConfigError values naming the file.
func CompileFile(path string) (*Schema, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, &gate.ConfigError{File: path, Msg: "cannot read schema file", Err: err}
	}
	dir := schema.NewDir(os.DirFS(filepath.Dir(path)), ".", filepath.Dir(path))
	f := &Schema{path: path, name: filepath.Base(path), base: dir.BaseURL, docs: dir.Docs}
	var err error
	if f.root, err = dir.Compile(f.name); err != nil {
		return nil, err
	}
	return f, nil
}

// relative names a compiled schema's location for people: "#/$defs/x" in
// the root file, "other.json#/$defs/x" in a sibling.
// Root returns the compiled root schema.
func (f *Schema) Root() *jsonschema.Schema { return f.root }

func (f *Schema) relative(loc string) string {
	rel := strings.TrimPrefix(loc, f.base)
	if rest, ok := strings.CutPrefix(rel, f.name+"#"); ok {
		return "#" + rest
	}
	return rel
}

// keyword returns the raw value of keyword kw of the schema at loc (the
// compiled form drops formats it does not know).
func (f *Schema) keyword(loc, kw string) (any, bool) {
	url, frag, _ := strings.Cut(loc, "#")
	p, err := jsonpointer.Parse(frag)
	if err != nil {
		return nil, false
	}
	v, ok := p.Lookup(f.docs[url])
	if !ok {
		return nil, false
	}
	m, _ := v.(map[string]any)
	x, ok := m[kw]
	return x, ok
}

// Files compares two schema files. Each may $ref the *.json files
// of its own folder; nothing else is read.
func Files(oldPath, newPath string) (*reports.Diff, error) {
	o, err := CompileFile(oldPath)
	if err != nil {
		return nil, err
	}
	n, err := CompileFile(newPath)
	if err != nil {
		return nil, err
	}
	cmp, err := Compare(filepath.Base(oldPath)+" → "+filepath.Base(newPath), o, n)
	if err != nil {
		return nil, err
	}
	return &reports.Diff{Comparisons: []reports.Comparison{cmp}}, nil
}

// UpstreamVersions compares the schemas of two upstream versions of the
// contract in schemasDir/tool. An unknown version is an error wrapping
// gate.ErrUsage.
func UpstreamVersions(schemasDir, tool, oldVersion, newVersion string, opts gate.Options) (*reports.Diff, error) {
	c, err := gate.LoadDir(filepath.Join(schemasDir, tool), opts)
	if err != nil {
		return nil, err
	}
	cmp, err := diffVersions(c, c, oldVersion, newVersion)
	if err != nil {
		return nil, err
	}
	return &reports.Diff{Comparisons: []reports.Comparison{cmp}}, nil
}

func diffVersions(oc, nc *gate.Contract, oldVersion, newVersion string) (reports.Comparison, error) {
	ov, ok := introspect.Manifest(oc).UpstreamVersions[oldVersion]
	if !ok {
		return reports.Comparison{}, fmt.Errorf("%w: tool %s has no upstream version %q (have %v)", gate.ErrUsage, oc.Tool(), oldVersion, oc.UpstreamVersions())
	}
	nv, ok := introspect.Manifest(nc).UpstreamVersions[newVersion]
	if !ok {
		return reports.Comparison{}, fmt.Errorf("%w: tool %s has no upstream version %q (have %v)", gate.ErrUsage, nc.Tool(), newVersion, nc.UpstreamVersions())
	}
	name := fmt.Sprintf("%s upstream %s → %s", nc.Tool(), oldVersion, newVersion)
	if oldVersion == newVersion {
		name = fmt.Sprintf("%s upstream %s", nc.Tool(), newVersion)
	}
	return Compare(name, contractSchema(oc, ov.Schema, introspect.Schemas(oc)[oldVersion]), contractSchema(nc, nv.Schema, introspect.Schemas(nc)[newVersion]))
}

// contractSchema is a schema the contract compiled when it loaded (file is
// its file name, root the compiled schema): no second compile.
func contractSchema(c *gate.Contract, file string, root *jsonschema.Schema) *Schema {
	dir := introspect.SchemaDir(c)
	return &Schema{path: path.Join(dir.Shown, file), name: file, base: dir.BaseURL, docs: dir.Docs, root: root}
}

// Contracts compares two contract directories (two revisions of one
// tool's contract): the agent-facing schemas, then each upstream version
// present in both, in version order.
func Contracts(oldDir, newDir string, opts gate.Options) (*reports.Diff, error) {
	oc, err := gate.LoadDir(oldDir, opts)
	if err != nil {
		return nil, err
	}
	nc, err := gate.LoadDir(newDir, opts)
	if err != nil {
		return nil, err
	}
	d := &reports.Diff{}
	cmp, err := Compare(nc.Tool()+" agent schema",
		contractSchema(oc, introspect.Manifest(oc).AgentSchema, introspect.AgentSchema(oc)),
		contractSchema(nc, introspect.Manifest(nc).AgentSchema, introspect.AgentSchema(nc)))
	if err != nil {
		return nil, err
	}
	d.Comparisons = append(d.Comparisons, cmp)
	for _, v := range SortVersions(oc.UpstreamVersions()) {
		if _, ok := introspect.Manifest(nc).UpstreamVersions[v]; !ok {
			continue
		}
		cmp, err := diffVersions(oc, nc, v, v)
		if err != nil {
			return nil, err
		}
		d.Comparisons = append(d.Comparisons, cmp)
	}
	return d, nil
}

// SortVersions sorts upstream version names naturally: runs of digits
// compare as numbers, so v9 comes before v10 and dates stay in order.
func SortVersions(vs []string) []string {
	out := slices.Clone(vs)
	slices.SortStableFunc(out, compareVersions)
	return out
}

func compareVersions(a, b string) int {
	for a != "" && b != "" {
		da, db := isASCIIDigit(a[0]), isASCIIDigit(b[0])
		if da && db {
			na, ra := digitRun(a)
			nb, rb := digitRun(b)
			ta, tb := strings.TrimLeft(na, "0"), strings.TrimLeft(nb, "0")
			if c := len(ta) - len(tb); c != 0 {
				return c
			}
			if c := strings.Compare(ta, tb); c != 0 {
				return c
			}
			a, b = ra, rb
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func isASCIIDigit(c byte) bool { return c >= '0' && c <= '9' }

func digitRun(s string) (string, string) {
	i := 0
	for i < len(s) && isASCIIDigit(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

// Compare compares two compiled schemas. Schemas too large to compare
// within maxDiffCompares schema pairs are a configuration error rather
// than a diff that might miss a change.
func Compare(name string, o, n *Schema) (reports.Comparison, error) {
	d := &differ{old: o, new: n, active: map[string]bool{}, budget: maxDiffCompares}
	d.compare([]member{{s: o.root}}, []member{{s: n.root}}, "", 0)
	if d.budget <= 0 {
		return reports.Comparison{}, &gate.ConfigError{File: n.path, Msg: fmt.Sprintf("too large to compare with %s: more than %d schema pairs (wide oneOf/anyOf or deep recursion)", o.path, maxDiffCompares)}
	}
	return reports.Comparison{Name: name, Old: o.path, New: n.path, Changes: append([]reports.Change{}, d.changes...)}, nil
}

// differ walks two compiled schemas side by side.
type differ struct {
	old, new *Schema
	changes  []reports.Change
	// active holds the $ref pairs being compared, so recursive schemas end.
	active map[string]bool
	budget int
}

// member is one schema that applies at an instance location, with its
// keyword location from the root (through $ref, like keywordLocation).
type member struct {
	s   *jsonschema.Schema // nil: the empty schema
	ptr string
	// flat: its oneOf/anyOf were already distributed into alternatives.
	flat bool
}

// located is a keyword's value (as text) and where it is.
type located struct {
	text string
	ptr  string
}

// bound is one numeric bound: the keyword, its value, exclusive or not.
type bound struct {
	kw   string
	val  *big.Rat
	excl bool
	ptr  string
}

func (b *bound) String() string {
	if b == nil {
		return "none"
	}
	return b.kw + " " + b.val.RatString()
}

// group is one oneOf or anyOf: its location and alternatives.
type group struct {
	ptr      string
	branches []member
}

// Closure of an object, from open to closed.
const (
	objOpen        = 0 // unknown members allowed, any value
	objConstrained = 1 // unknown members allowed if they satisfy a schema
	objClosed      = 2 // unknown members refused
)

// view is everything the merged members say about one instance location.
type view struct {
	ptr      string
	never    bool
	neverPtr string

	typed    bool
	types    schemawalk.Types
	typesPtr string

	hasValues bool
	constOnly bool
	values    []any
	valuesPtr string

	minLength, maxLength *bound
	minimum, maximum     *bound
	multipleOf           *bound
	minItems, maxItems   *bound
	minProps, maxProps   *bound
	unique               bool
	uniquePtr            string
	patterns, formats    []located

	props      map[string][]member
	propsPtr   string
	required   map[string]string
	reqPtr     string
	closure    int
	closurePtr string
	additional []member

	items    []member
	itemsPtr string
	prefix   [][]member

	groups  []group
	refs    []located
	entered []*jsonschema.Schema
	other   map[string]located
}

// build merges members into one view, following $ref, $dynamicRef and
// allOf; oneOf and anyOf are kept as groups (unless a member is flat).
func (d *differ) build(side *Schema, ms []member) *view {
	v := &view{types: schemawalk.AllTypes, props: map[string][]member{}, required: map[string]string{}, other: map[string]located{}}
	onStack := map[*jsonschema.Schema]bool{}
	var add func(s *jsonschema.Schema, ptr string, flat bool, depth int)
	add = func(s *jsonschema.Schema, ptr string, flat bool, depth int) {
		if s == nil || depth > maxDiffDepth || onStack[s] {
			return
		}
		onStack[s] = true
		defer delete(onStack, s)
		if s.Bool != nil {
			if !*s.Bool && !v.never {
				v.never, v.neverPtr = true, ptr
			}
			return
		}
		kw := func(k string) string { return ptr + "/" + k }
		if s.Types != nil && !s.Types.IsEmpty() {
			v.types &= schemawalk.TypesOf(s.Types.ToStrings())
			if !v.typed {
				v.typed, v.typesPtr = true, kw("type")
			}
		}
		if s.Enum != nil {
			v.addValues(s.Enum.Values, kw("enum"), false)
		}
		if s.Const != nil {
			v.addValues([]any{*s.Const}, kw("const"), true)
		}
		intBound := func(p *int, k string) *bound {
			if p == nil {
				return nil
			}
			return &bound{kw: k, val: new(big.Rat).SetInt64(int64(*p)), ptr: kw(k)}
		}
		ratBound := func(r *big.Rat, k string, excl bool) *bound {
			if r == nil {
				return nil
			}
			return &bound{kw: k, val: r, excl: excl, ptr: kw(k)}
		}
		mergeLower(&v.minLength, intBound(s.MinLength, "minLength"))
		mergeUpper(&v.maxLength, intBound(s.MaxLength, "maxLength"))
		mergeLower(&v.minItems, intBound(s.MinItems, "minItems"))
		mergeUpper(&v.maxItems, intBound(s.MaxItems, "maxItems"))
		mergeLower(&v.minProps, intBound(s.MinProperties, "minProperties"))
		mergeUpper(&v.maxProps, intBound(s.MaxProperties, "maxProperties"))
		mergeLower(&v.minimum, ratBound(s.Minimum, "minimum", false))
		mergeLower(&v.minimum, ratBound(s.ExclusiveMinimum, "exclusiveMinimum", true))
		mergeUpper(&v.maximum, ratBound(s.Maximum, "maximum", false))
		mergeUpper(&v.maximum, ratBound(s.ExclusiveMaximum, "exclusiveMaximum", true))
		if s.MultipleOf != nil && v.multipleOf == nil {
			v.multipleOf = ratBound(s.MultipleOf, "multipleOf", false)
		}
		if s.UniqueItems && !v.unique {
			v.unique, v.uniquePtr = true, kw("uniqueItems")
		}
		if s.Pattern != nil {
			v.patterns = append(v.patterns, located{s.Pattern.String(), kw("pattern")})
		}
		if f, ok := side.keyword(s.Location, "format"); ok {
			if name, ok := f.(string); ok {
				v.formats = append(v.formats, located{name, kw("format")})
			}
		}
		for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
			if v.propsPtr == "" {
				v.propsPtr = kw("properties")
			}
			v.props[name] = append(v.props[name], member{s: s.Properties[name], ptr: kw("properties") + "/" + jsonpointer.EscapeToken(name)})
		}
		for i, name := range s.Required {
			if v.reqPtr == "" {
				v.reqPtr = kw("required")
			}
			if v.required[name] == "" {
				v.required[name] = kw("required") + "/" + strconv.Itoa(i)
			}
		}
		closure := func(x any, k string) {
			switch x := x.(type) {
			case bool:
				if !x {
					v.close(objClosed, kw(k))
				}
			case *jsonschema.Schema:
				switch {
				case x == nil:
				case x.Bool != nil && !*x.Bool:
					v.close(objClosed, kw(k))
				case x.Bool != nil:
				default:
					v.close(objConstrained, kw(k))
					v.additional = append(v.additional, member{s: x, ptr: kw(k)})
				}
			}
		}
		closure(s.AdditionalProperties, "additionalProperties")
		if s.UnevaluatedProperties != nil {
			closure(s.UnevaluatedProperties, "unevaluatedProperties")
		}
		if s.Items2020 != nil {
			v.addItems(member{s: s.Items2020, ptr: kw("items")})
		}
		switch it := s.Items.(type) {
		case *jsonschema.Schema:
			v.addItems(member{s: it, ptr: kw("items")})
		case []*jsonschema.Schema:
			for i, p := range it {
				v.addPrefix(i, member{s: p, ptr: kw("items") + "/" + strconv.Itoa(i)})
			}
		}
		for i, p := range s.PrefixItems {
			v.addPrefix(i, member{s: p, ptr: kw("prefixItems") + "/" + strconv.Itoa(i)})
		}
		for k, fp := range otherKeywords(s) {
			o := v.other[k]
			if o.ptr == "" {
				o.ptr = kw(k)
			}
			o.text += fp + ";"
			v.other[k] = o
		}
		if s.Ref != nil {
			if !flat {
				v.refs = append(v.refs, located{side.relative(s.Ref.Location), kw("$ref")})
			}
			v.entered = append(v.entered, s.Ref)
			add(s.Ref, kw("$ref"), flat, depth+1)
		}
		if s.DynamicRef != nil && s.DynamicRef.Ref != nil {
			v.entered = append(v.entered, s.DynamicRef.Ref)
			add(s.DynamicRef.Ref, kw("$dynamicRef"), flat, depth+1)
		}
		for i, a := range s.AllOf {
			add(a, kw("allOf")+"/"+strconv.Itoa(i), flat, depth+1)
		}
		if !flat {
			for _, g := range []struct {
				k  string
				ss []*jsonschema.Schema
			}{{"oneOf", s.OneOf}, {"anyOf", s.AnyOf}} {
				if len(g.ss) == 0 {
					continue
				}
				gr := group{ptr: kw(g.k)}
				for i, b := range g.ss {
					gr.branches = append(gr.branches, member{s: b, ptr: kw(g.k) + "/" + strconv.Itoa(i)})
				}
				v.groups = append(v.groups, gr)
			}
		}
	}
	for _, m := range ms {
		if v.ptr == "" {
			v.ptr = m.ptr
		}
		add(m.s, m.ptr, m.flat, 0)
	}
	return v
}

func (v *view) addValues(vals []any, ptr string, isConst bool) {
	if !v.hasValues {
		v.hasValues, v.values, v.valuesPtr, v.constOnly = true, slices.Clone(vals), ptr, isConst
		return
	}
	keep := map[string]bool{}
	for _, x := range vals {
		keep[schemawalk.Canonical(x)] = true
	}
	v.values = slices.DeleteFunc(v.values, func(x any) bool { return !keep[schemawalk.Canonical(x)] })
	v.constOnly = v.constOnly && isConst
}

func (v *view) close(level int, ptr string) {
	if level > v.closure {
		v.closure, v.closurePtr = level, ptr
	}
}

func (v *view) addItems(m member) {
	if v.itemsPtr == "" {
		v.itemsPtr = m.ptr
	}
	v.items = append(v.items, m)
}

func (v *view) addPrefix(i int, m member) {
	for len(v.prefix) <= i {
		v.prefix = append(v.prefix, nil)
	}
	v.prefix[i] = append(v.prefix[i], m)
}

// mergeLower keeps the tighter lower bound.
func mergeLower(cur **bound, b *bound) {
	if b == nil {
		return
	}
	if *cur == nil {
		*cur = b
		return
	}
	if c := b.val.Cmp((*cur).val); c > 0 || c == 0 && b.excl && !(*cur).excl {
		*cur = b
	}
}

// mergeUpper keeps the tighter upper bound.
func mergeUpper(cur **bound, b *bound) {
	if b == nil {
		return
	}
	if *cur == nil {
		*cur = b
		return
	}
	if c := b.val.Cmp((*cur).val); c < 0 || c == 0 && b.excl && !(*cur).excl {
		*cur = b
	}
}

// effTypes is the set of types a value may have: the type keywords',
// narrowed by enum/const.
func (v *view) effTypes() schemawalk.Types {
	m := v.types
	if v.hasValues {
		var vm schemawalk.Types
		for _, x := range v.values {
			vm |= schemawalk.TypeOfValue(x)
		}
		m &= vm
	}
	return m
}

// where names an instance location in a message.
func instanceWhere(inst string) string {
	if inst == "" {
		return "the response"
	}
	return inst
}

func (d *differ) add(rule, inst, oldPtr, newPtr, format string, a ...any) {
	r, ok := Lookup(rule)
	if !ok {
		panic("runner: diff rule " + rule + " is not in the registry")
	}
	d.changes = append(d.changes, reports.Change{
		Rule: rule, Level: r.Level, Instance: inst, OldPointer: oldPtr, NewPointer: newPtr,
		Message: instanceWhere(inst) + ": " + fmt.Sprintf(format, a...),
	})
}

// compare compares what two member lists allow at instance location inst.
func (d *differ) compare(o, n []member, inst string, depth int) {
	if depth > maxDiffDepth || d.budget <= 0 {
		return
	}
	d.budget--
	ov, nv := d.build(d.old, o), d.build(d.new, n)
	if key := cycleKey(ov.entered, nv.entered); key != "" {
		if d.active[key] {
			return
		}
		d.active[key] = true
		defer delete(d.active, key)
	}
	if len(ov.refs) > 0 && len(nv.refs) > 0 && ov.refs[0].text != nv.refs[0].text {
		d.add(RuleRefTargetChanged, inst, ov.refs[0].ptr, nv.refs[0].ptr, "$ref changed from %q to %q", ov.refs[0].text, nv.refs[0].text)
	}
	if len(ov.groups) > 0 || len(nv.groups) > 0 {
		d.compareAlternatives(o, n, ov, nv, inst, depth)
		return
	}
	d.compareViews(ov, nv, inst, depth)
}

func cycleKey(o, n []*jsonschema.Schema) string {
	if len(o) == 0 && len(n) == 0 {
		return ""
	}
	var b strings.Builder
	for _, s := range o {
		fmt.Fprintf(&b, "%p,", s)
	}
	b.WriteString("|")
	for _, s := range n {
		fmt.Fprintf(&b, "%p,", s)
	}
	return b.String()
}

// alternative is one distributed oneOf/anyOf choice: the flattened base
// members plus one branch of each group.
type alternative struct {
	members []member
	ptr     string
}

func (d *differ) alternatives(ms []member, v *view) []alternative {
	if len(v.groups) == 0 {
		return []alternative{{members: ms, ptr: v.ptr}}
	}
	base := make([]member, len(ms))
	for i, m := range ms {
		base[i] = member{s: m.s, ptr: m.ptr, flat: true}
	}
	out := []alternative{{members: base}}
	for _, g := range v.groups {
		var next []alternative
		for _, a := range out {
			for _, b := range g.branches {
				if len(next) == maxAlternatives {
					d.budget = 0 // too many to compare: Compare reports it
					break
				}
				next = append(next, alternative{members: append(slices.Clone(a.members), b), ptr: b.ptr})
			}
		}
		out = next
	}
	return out
}

// compareAlternatives pairs the alternatives of two schemas (at least one
// has oneOf/anyOf) and compares each pair; an alternative of the new schema
// that no old one covers is an added branch, an old one left without a
// partner a removed branch.
func (d *differ) compareAlternatives(o, n []member, ov, nv *view, inst string, depth int) {
	oa, na := d.alternatives(o, ov), d.alternatives(n, nv)
	oviews := make([]*view, len(oa))
	for i, a := range oa {
		oviews[i] = d.build(d.old, a.members)
	}
	nviews := make([]*view, len(na))
	for j, a := range na {
		nviews[j] = d.build(d.new, a.members)
	}
	// scratch compares one pair on the side, for its cost; the work counts
	// toward the budget.
	scratched := map[[2]int][]reports.Change{}
	scratch := func(i, j int) []reports.Change {
		if c, ok := scratched[[2]int{i, j}]; ok {
			return c
		}
		start := min(d.budget, maxDiffCompares/10)
		sd := &differ{old: d.old, new: d.new, active: map[string]bool{}, budget: start}
		for k := range d.active {
			sd.active[k] = true
		}
		sd.compare(oa[i].members, na[j].members, inst, depth+1)
		d.budget -= start - sd.budget
		scratched[[2]int{i, j}] = sd.changes
		return sd.changes
	}
	overlap := func(i, j int) bool {
		return !oviews[i].never && !nviews[j].never && oviews[i].effTypes()&nviews[j].effTypes() != 0
	}
	type cand struct{ i, j, cost int }
	var cands []cand
	for i := range oa {
		for j := range na {
			if overlap(i, j) {
				cands = append(cands, cand{i, j, len(scratch(i, j))})
			}
		}
	}
	sort.SliceStable(cands, func(a, b int) bool {
		x, y := cands[a], cands[b]
		if x.cost != y.cost {
			return x.cost < y.cost
		}
		dx, dy := absInt(x.i-x.j), absInt(y.i-y.j)
		if dx != dy {
			return dx < dy
		}
		return x.i < y.i
	})
	pairOf := make([]int, len(na))
	for j := range pairOf {
		pairOf[j] = -1
	}
	usedOld := make([]bool, len(oa))
	for _, c := range cands {
		if usedOld[c.i] || pairOf[c.j] >= 0 {
			continue
		}
		usedOld[c.i], pairOf[c.j] = true, c.i
	}
	// A new alternative left over is covered when some old one admits
	// everything it does (no breaking change between them).
	for j := range na {
		if pairOf[j] >= 0 {
			continue
		}
		for _, c := range cands {
			if c.j != j {
				continue
			}
			if !slices.ContainsFunc(scratch(c.i, j), func(ch reports.Change) bool { return ch.Level == reports.Breaking }) {
				pairOf[j] = c.i
				break
			}
		}
	}
	oldGroup, newGroup := groupPtr(ov), groupPtr(nv)
	for j, i := range pairOf {
		if i >= 0 {
			d.compare(oa[i].members, na[j].members, inst, depth+1)
		}
	}
	for i := range oa {
		if !slices.Contains(pairOf, i) {
			d.add(RuleBranchRemoved, inst, oa[i].ptr, newGroup, "the alternative at %s (%s) was removed", pointerOrRoot(oa[i].ptr), oviews[i].effTypes())
		}
	}
	for j, i := range pairOf {
		if i < 0 {
			d.add(RuleBranchAdded, inst, oldGroup, na[j].ptr, "an alternative (%s) was added at %s: responses of a shape the old schema refused may arrive", nviews[j].effTypes(), pointerOrRoot(na[j].ptr))
		}
	}
}

func groupPtr(v *view) string {
	if len(v.groups) > 0 {
		return v.groups[0].ptr
	}
	return v.ptr
}

func pointerOrRoot(p string) string {
	if p == "" {
		return "#"
	}
	return p
}

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// compareViews compares two merged views without alternatives.
func (d *differ) compareViews(ov, nv *view, inst string, depth int) {
	switch {
	case ov.never && nv.never:
		return
	case ov.never:
		d.add(RuleTypeWidened, inst, ov.neverPtr, nv.ptr, "the old schema allowed nothing here (false); the new one admits %s", nv.effTypes())
		return
	case nv.never:
		d.add(RuleTypeNarrowed, inst, ov.ptr, nv.neverPtr, "the new schema allows nothing here (false)")
		return
	}
	ot, nt := ov.effTypes(), nv.effTypes()
	typesDisjoint := false
	if ov.typed || nv.typed {
		op, np := orPtr(ov.typesPtr, ov.ptr), orPtr(nv.typesPtr, nv.ptr)
		added, lost := nt&^ot, ot&^nt
		switch {
		case ot == nt:
		case added == 0:
			d.add(RuleTypeNarrowed, inst, op, np, "type narrowed from %s to %s", ot, nt)
		case lost == 0 && added == schemawalk.Null:
			d.add(RuleBecameNullable, inst, op, np, "may now be null (type %s became %s)", ot, nt)
		case lost == 0:
			d.add(RuleTypeWidened, inst, op, np, "type widened from %s to %s", ot, nt)
		default:
			d.add(RuleTypeChanged, inst, op, np, "type changed from %s to %s", ot, nt)
			typesDisjoint = ot&nt == 0
		}
	}
	if typesDisjoint {
		return
	}
	d.compareValues(ov, nv, inst)
	common := ot & nt
	if common&schemawalk.String != 0 {
		d.compareBounds(ov.minLength, nv.minLength, false, RuleLengthLoosened, RuleLengthTightened, inst, ov, nv)
		d.compareBounds(ov.maxLength, nv.maxLength, true, RuleLengthLoosened, RuleLengthTightened, inst, ov, nv)
		d.compareStrings(ov.patterns, nv.patterns, "pattern", RulePatternAdded, RulePatternRemoved, RulePatternChanged, inst, ov, nv)
		d.compareStrings(ov.formats, nv.formats, "format", RuleFormatAdded, RuleFormatRemoved, RuleFormatChanged, inst, ov, nv)
	}
	if common&(schemawalk.Number|schemawalk.Integer) != 0 {
		d.compareBounds(ov.minimum, nv.minimum, false, RuleRangeLoosened, RuleRangeTightened, inst, ov, nv)
		d.compareBounds(ov.maximum, nv.maximum, true, RuleRangeLoosened, RuleRangeTightened, inst, ov, nv)
		d.compareMultipleOf(ov, nv, inst)
	}
	if common&schemawalk.Array != 0 {
		d.compareArrays(ov, nv, inst, depth)
	}
	if common&schemawalk.Object != 0 {
		d.compareObjects(ov, nv, inst, depth)
	}
	for _, k := range slices.Sorted(maps.Keys(mergeKeys(ov.other, nv.other))) {
		o, n := ov.other[k], nv.other[k]
		if o.text != n.text {
			d.add(RuleUnclassifiedKeywordChange, inst, orPtr(o.ptr, ov.ptr), orPtr(n.ptr, nv.ptr), "%s changed; airlock cannot tell which way, review it", k)
		}
	}
}

func mergeKeys(a, b map[string]located) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func orPtr(p, fallback string) string {
	if p != "" {
		return p
	}
	return fallback
}

func (d *differ) compareValues(ov, nv *view, inst string) {
	op, np := orPtr(ov.valuesPtr, ov.ptr), orPtr(nv.valuesPtr, nv.ptr)
	switch {
	case !ov.hasValues && !nv.hasValues:
	case !nv.hasValues:
		d.add(RuleEnumRemoved, inst, op, np, "no longer restricted to %s", valuesText(ov.values))
	case !ov.hasValues:
		d.add(RuleEnumAdded, inst, op, np, "now restricted to %s", valuesText(nv.values))
	case ov.constOnly && nv.constOnly && len(ov.values) == 1 && len(nv.values) == 1:
		if a, b := schemawalk.Canonical(ov.values[0]), schemawalk.Canonical(nv.values[0]); a != b {
			d.add(RuleConstChanged, inst, op, np, "const changed from %s to %s", schemawalk.ValueText(ov.values[0]), schemawalk.ValueText(nv.values[0]))
		}
	default:
		oldSet, newSet := map[string]bool{}, map[string]bool{}
		for _, x := range ov.values {
			oldSet[schemawalk.Canonical(x)] = true
		}
		for _, x := range nv.values {
			newSet[schemawalk.Canonical(x)] = true
		}
		for _, x := range nv.values {
			if !oldSet[schemawalk.Canonical(x)] {
				d.add(RuleEnumValueAdded, inst, op, np, "value %s was added to the allowed values", schemawalk.ValueText(x))
			}
		}
		for _, x := range ov.values {
			if !newSet[schemawalk.Canonical(x)] {
				d.add(RuleEnumValueRemoved, inst, op, np, "value %s is no longer allowed", schemawalk.ValueText(x))
			}
		}
	}
}

func valuesText(vals []any) string {
	parts := make([]string, 0, len(vals))
	for i, x := range vals {
		if i == 8 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, schemawalk.ValueText(x))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// compareBounds classifies a change of one bound; upper tells which way
// is looser.
func (d *differ) compareBounds(o, n *bound, upper bool, loosened, tightened, inst string, ov, nv *view) {
	if o == nil && n == nil {
		return
	}
	op, np := ov.ptr, nv.ptr
	if o != nil {
		op = o.ptr
	}
	if n != nil {
		np = n.ptr
	}
	var looser bool
	switch {
	case o == nil:
		d.add(tightened, inst, op, np, "%s added", n)
		return
	case n == nil:
		d.add(loosened, inst, op, np, "%s dropped", o)
		return
	default:
		c := n.val.Cmp(o.val)
		if !upper {
			c = -c
		}
		switch {
		case c > 0:
			looser = true
		case c < 0:
			looser = false
		case o.excl == n.excl:
			return
		default:
			looser = o.excl && !n.excl
		}
	}
	rule := tightened
	if looser {
		rule = loosened
	}
	d.add(rule, inst, op, np, "%s became %s", o, n)
}

func (d *differ) compareMultipleOf(ov, nv *view, inst string) {
	o, n := ov.multipleOf, nv.multipleOf
	switch {
	case o == nil && n == nil:
	case o == nil:
		d.add(RuleRangeTightened, inst, ov.ptr, n.ptr, "%s added", n)
	case n == nil:
		d.add(RuleRangeLoosened, inst, o.ptr, nv.ptr, "%s dropped", o)
	case o.val.Cmp(n.val) != 0:
		q := new(big.Rat).Quo(n.val, o.val)
		rule := RuleRangeLoosened
		if q.IsInt() {
			rule = RuleRangeTightened
		}
		d.add(rule, inst, o.ptr, n.ptr, "%s became %s", o, n)
	}
}

// compareStrings compares the patterns or formats that apply.
func (d *differ) compareStrings(o, n []located, kw, added, removed, changed, inst string, ov, nv *view) {
	oldSet, newSet := map[string]located{}, map[string]located{}
	for _, x := range o {
		oldSet[x.text] = x
	}
	for _, x := range n {
		newSet[x.text] = x
	}
	var gone, fresh []located
	for _, x := range o {
		if _, ok := newSet[x.text]; !ok {
			gone = append(gone, x)
		}
	}
	for _, x := range n {
		if _, ok := oldSet[x.text]; !ok {
			fresh = append(fresh, x)
		}
	}
	switch {
	case len(gone) == 0 && len(fresh) == 0:
	case len(gone) == 0:
		for _, x := range fresh {
			d.add(added, inst, ov.ptr, x.ptr, "%s %q added", kw, x.text)
		}
	case len(fresh) == 0:
		for _, x := range gone {
			d.add(removed, inst, x.ptr, nv.ptr, "%s %q dropped", kw, x.text)
		}
	default:
		d.add(changed, inst, gone[0].ptr, fresh[0].ptr, "%s changed from %q to %q", kw, gone[0].text, fresh[0].text)
	}
}

func (d *differ) compareArrays(ov, nv *view, inst string, depth int) {
	d.compareBounds(ov.minItems, nv.minItems, false, RuleItemsLoosened, RuleItemsTightened, inst, ov, nv)
	d.compareBounds(ov.maxItems, nv.maxItems, true, RuleItemsLoosened, RuleItemsTightened, inst, ov, nv)
	switch {
	case ov.unique && !nv.unique:
		d.add(RuleItemsLoosened, inst, ov.uniquePtr, nv.ptr, "uniqueItems dropped: items may repeat")
	case !ov.unique && nv.unique:
		d.add(RuleItemsTightened, inst, ov.ptr, nv.uniquePtr, "uniqueItems added")
	}
	itemsOf := func(v *view) []member {
		if len(v.items) > 0 {
			return v.items
		}
		return []member{{ptr: v.ptr}}
	}
	for i := range max(len(ov.prefix), len(nv.prefix)) {
		o, n := itemsOf(ov), itemsOf(nv)
		if i < len(ov.prefix) {
			o = ov.prefix[i]
		}
		if i < len(nv.prefix) {
			n = nv.prefix[i]
		}
		d.compare(o, n, inst+"/"+strconv.Itoa(i), depth+1)
	}
	if len(ov.items) > 0 || len(nv.items) > 0 {
		d.compare(itemsOf(ov), itemsOf(nv), inst+"/*", depth+1)
	}
}

func (d *differ) compareObjects(ov, nv *view, inst string, depth int) {
	names := map[string]bool{}
	for k := range ov.props {
		names[k] = true
	}
	for k := range nv.props {
		names[k] = true
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		op, inOld := ov.props[name]
		np, inNew := nv.props[name]
		child := inst + "/" + jsonpointer.EscapeToken(name)
		switch {
		case inOld && inNew:
			d.compare(op, np, child, depth+1)
		case inOld:
			newPtr := orPtr(nv.propsPtr, nv.ptr)
			switch {
			case ov.required[name] != "":
				d.add(RulePropertyRemoved, child, op[0].ptr, newPtr, "the required property is no longer defined: responses may omit it")
			case nv.closure != objClosed:
				d.add(RulePropertyRemoved, child, op[0].ptr, newPtr, "the property is no longer defined and its object is open: the member may arrive with any value")
			default:
				d.add(RuleOptionalPropertyRemoved, child, op[0].ptr, newPtr, "the optional property is no longer defined: the closed object can no longer carry it")
			}
		default:
			req := "an optional"
			if nv.required[name] != "" {
				req = "a required"
			}
			oldPtr := orPtr(ov.propsPtr, ov.ptr)
			if ov.closure == objClosed {
				d.add(RulePropertyAdded, child, oldPtr, np[0].ptr, "%s property was added to a closed object: responses may carry a member the old schema refused", req)
			} else {
				d.add(RulePropertyAddedOpen, child, oldPtr, np[0].ptr, "%s property is now defined in its open object", req)
			}
		}
	}
	reqNames := map[string]bool{}
	for k := range ov.required {
		reqNames[k] = true
	}
	for k := range nv.required {
		reqNames[k] = true
	}
	for _, name := range slices.Sorted(maps.Keys(reqNames)) {
		or, nr := ov.required[name], nv.required[name]
		_, inOld := ov.props[name]
		_, inNew := nv.props[name]
		if (or != "") == (nr != "") || inOld != inNew {
			continue
		}
		child := inst + "/" + jsonpointer.EscapeToken(name)
		if or != "" {
			d.add(RuleBecameOptional, child, or, orPtr(nv.reqPtr, nv.ptr), "the property is no longer required: responses may omit it")
		} else {
			d.add(RuleBecameRequired, child, orPtr(ov.reqPtr, ov.ptr), nr, "the property became required")
		}
	}
	op, np := orPtr(ov.closurePtr, ov.ptr), orPtr(nv.closurePtr, nv.ptr)
	closureText := []string{"open", "constrained by a schema", "closed"}
	switch {
	case nv.closure < ov.closure:
		d.add(RuleObjectOpened, inst, op, np, "unknown members are no longer refused (the object went from %s to %s)", closureText[ov.closure], closureText[nv.closure])
	case nv.closure > ov.closure:
		d.add(RuleObjectClosed, inst, op, np, "unknown members are now refused or constrained (the object went from %s to %s)", closureText[ov.closure], closureText[nv.closure])
	case ov.closure == objConstrained:
		d.compare(ov.additional, nv.additional, inst+"/*", depth+1)
	}
	d.compareBounds(ov.minProps, nv.minProps, false, RuleMembersLoosened, RuleMembersTightened, inst, ov, nv)
	d.compareBounds(ov.maxProps, nv.maxProps, true, RuleMembersLoosened, RuleMembersTightened, inst, ov, nv)
}

// otherKeywords fingerprints the keywords of s that diff does not classify,
// so that a change in them is still reported.
func otherKeywords(s *jsonschema.Schema) map[string]string {
	out := map[string]string{}
	fp := func(x *jsonschema.Schema) string { return fingerprint(x, 0, map[*jsonschema.Schema]bool{}) }
	one := func(k string, x *jsonschema.Schema) {
		if x != nil {
			out[k] = fp(x)
		}
	}
	one("not", s.Not)
	one("if", s.If)
	one("then", s.Then)
	one("else", s.Else)
	one("propertyNames", s.PropertyNames)
	one("contains", s.Contains)
	one("unevaluatedItems", s.UnevaluatedItems)
	if s.AdditionalItems != nil {
		out["additionalItems"] = fingerprintAny(s.AdditionalItems)
	}
	if s.MinContains != nil {
		out["minContains"] = strconv.Itoa(*s.MinContains)
	}
	if s.MaxContains != nil {
		out["maxContains"] = strconv.Itoa(*s.MaxContains)
	}
	if len(s.PatternProperties) > 0 {
		var parts []string
		for re, x := range s.PatternProperties {
			parts = append(parts, re.String()+"="+fp(x))
		}
		sort.Strings(parts)
		out["patternProperties"] = strings.Join(parts, ",")
	}
	if len(s.DependentRequired) > 0 {
		var parts []string
		for k, v := range s.DependentRequired {
			parts = append(parts, k+"="+strings.Join(v, "+"))
		}
		sort.Strings(parts)
		out["dependentRequired"] = strings.Join(parts, ",")
	}
	if len(s.DependentSchemas) > 0 {
		var parts []string
		for k, x := range s.DependentSchemas {
			parts = append(parts, k+"="+fp(x))
		}
		sort.Strings(parts)
		out["dependentSchemas"] = strings.Join(parts, ",")
	}
	if len(s.Dependencies) > 0 {
		var parts []string
		for k, x := range s.Dependencies {
			parts = append(parts, k+"="+fingerprintAny(x))
		}
		sort.Strings(parts)
		out["dependencies"] = strings.Join(parts, ",")
	}
	return out
}

func fingerprintAny(x any) string {
	switch x := x.(type) {
	case *jsonschema.Schema:
		return fingerprint(x, 0, map[*jsonschema.Schema]bool{})
	case []*jsonschema.Schema:
		var parts []string
		for _, s := range x {
			parts = append(parts, fingerprint(s, 0, map[*jsonschema.Schema]bool{}))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case []string:
		return strings.Join(x, "+")
	}
	return fmt.Sprint(x)
}

// fingerprint is a structural text of a compiled schema's constraints
// (annotations left out), bounded in depth and safe on cycles.
func fingerprint(s *jsonschema.Schema, depth int, onStack map[*jsonschema.Schema]bool) string {
	if s == nil {
		return "_"
	}
	if s.Bool != nil {
		return strconv.FormatBool(*s.Bool)
	}
	if depth > 12 {
		return "…"
	}
	if onStack[s] {
		return "@cycle"
	}
	onStack[s] = true
	defer delete(onStack, s)
	var parts []string
	put := func(k, v string) { parts = append(parts, k+"="+v) }
	sub := func(x *jsonschema.Schema) string { return fingerprint(x, depth+1, onStack) }
	if s.Types != nil {
		put("type", s.Types.String())
	}
	if s.Enum != nil {
		put("enum", schemawalk.Canonical(s.Enum.Values))
	}
	if s.Const != nil {
		put("const", schemawalk.Canonical(*s.Const))
	}
	for k, p := range map[string]*int{"minLength": s.MinLength, "maxLength": s.MaxLength, "minItems": s.MinItems, "maxItems": s.MaxItems, "minProperties": s.MinProperties, "maxProperties": s.MaxProperties, "minContains": s.MinContains, "maxContains": s.MaxContains} {
		if p != nil {
			put(k, strconv.Itoa(*p))
		}
	}
	for k, r := range map[string]*big.Rat{"minimum": s.Minimum, "maximum": s.Maximum, "exclusiveMinimum": s.ExclusiveMinimum, "exclusiveMaximum": s.ExclusiveMaximum, "multipleOf": s.MultipleOf} {
		if r != nil {
			put(k, r.RatString())
		}
	}
	if s.Pattern != nil {
		put("pattern", s.Pattern.String())
	}
	if s.Format != nil {
		put("format", s.Format.Name)
	}
	if s.UniqueItems {
		put("uniqueItems", "true")
	}
	if len(s.Required) > 0 {
		r := slices.Clone(s.Required)
		sort.Strings(r)
		put("required", strings.Join(r, "+"))
	}
	for k, x := range s.Properties {
		put("properties/"+k, sub(x))
	}
	for re, x := range s.PatternProperties {
		put("patternProperties/"+re.String(), sub(x))
	}
	if s.AdditionalProperties != nil {
		if x, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
			put("additionalProperties", sub(x))
		} else {
			put("additionalProperties", fmt.Sprint(s.AdditionalProperties))
		}
	}
	for k, x := range map[string]*jsonschema.Schema{"$ref": s.Ref, "not": s.Not, "if": s.If, "then": s.Then, "else": s.Else, "propertyNames": s.PropertyNames, "contains": s.Contains, "items": s.Items2020, "unevaluatedItems": s.UnevaluatedItems, "unevaluatedProperties": s.UnevaluatedProperties} {
		if x != nil {
			put(k, sub(x))
		}
	}
	for k, xs := range map[string][]*jsonschema.Schema{"allOf": s.AllOf, "anyOf": s.AnyOf, "oneOf": s.OneOf, "prefixItems": s.PrefixItems} {
		for i, x := range xs {
			put(k+"/"+strconv.Itoa(i), sub(x))
		}
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, ";") + "}"
}

// UpstreamSchema returns the schema of upstream version v of c as the
// contract compiled it when it loaded (no second compile), for Compare;
// false for a version c does not have.
func UpstreamSchema(c *gate.Contract, v string) (*Schema, bool) {
	uv, ok := introspect.Manifest(c).UpstreamVersions[v]
	if !ok {
		return nil, false
	}
	return contractSchema(c, uv.Schema, introspect.Schemas(c)[v]), true
}
