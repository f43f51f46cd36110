package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/redact"
	"github.com/airlockdev/airlock/semantic"
)

// The constants of Infer's rules (docs/infer.md says why each is what it
// is).
const (
	// EnumMaxValues is the most distinct values a string location may show
	// and still be inferred as an enum.
	EnumMaxValues = 8
	// EnumMinSamplesPerValue is how many values a location must have shown
	// per distinct value for an enum: with 3 distinct values, at least 9
	// strings. Fewer samples than that say too little about the set: every
	// value seen once or twice is as likely an identifier or a free text as
	// a closed list.
	EnumMinSamplesPerValue = 3
	// StringLengthFactor and StringLengthFloor widen the longest string
	// seen at a location (code points) into its maxLength:
	// max(StringLengthFactor × longest, StringLengthFloor).
	StringLengthFactor = 2
	StringLengthFloor  = 64
	// ItemsFactor and ItemsFloor widen the longest array seen into its
	// maxItems: max(ItemsFactor × longest, ItemsFloor); an array location
	// that was empty in every sample gets maxItems 0.
	ItemsFactor = 2
	ItemsFloor  = 64
	// MaxBoundLength is the longest number text a widened minimum or
	// maximum may have; a longer bound is left out (the range stays open
	// on that side, never narrower than a sample).
	MaxBoundLength = 64
	// DefaultMaxSamples bounds the samples one inference reads.
	DefaultMaxSamples = 10000
	// DefaultMaxMembers bounds the distinct member names one object
	// location may show: more is a map keyed by data, which infer cannot
	// close member by member.
	DefaultMaxMembers = 256
)

// TokenPunctuation are the punctuation characters a token string may hold
// (besides ASCII letters and digits): a location whose every string is
// made of these, letters and digits only gets a pattern of the groups
// seen (a-z, A-Z, 0-9, each punctuation character seen), such as
// ^[a-z0-9_]*$.
const TokenPunctuation = "-_.:/+@~=#"

// ControlPattern is the pattern of a string location that is not a token
// and showed no control character (C0 but TAB and LF, DEL, C1) and no
// bidirectional formatting character (U+200E, U+200F, U+061C,
// U+202A–U+202E, U+2066–U+2069): it refuses them, and nothing else.
const ControlPattern = `^[^\x00-\x08\x0b-\x1f\x7f-\x9f\x{061c}\x{200e}\x{200f}\x{202a}-\x{202e}\x{2066}-\x{2069}]*$`

func isControl(r rune) bool {
	return r < 0x20 && r != '\t' && r != '\n' || r >= 0x7f && r <= 0x9f || r == 0x061c || r == 0x200e || r == 0x200f ||
		r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// tokenPattern is the pattern of the alphabet a token location showed.
func (n *node) tokenPattern() string {
	var b strings.Builder
	b.WriteString("^[")
	if n.lower {
		b.WriteString("a-z")
	}
	if n.upper {
		b.WriteString("A-Z")
	}
	if n.digit {
		b.WriteString("0-9")
	}
	p := []rune(n.punct)
	slices.Sort(p)
	for _, r := range p {
		if r == '-' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteString("]*$")
	return b.String()
}

// InferOptions tune Infer; a zero field takes its default.
type InferOptions struct {
	// Names name the samples in errors and evidence (file paths), in the
	// samples' order; a missing name is "sample <i>".
	Names []string
	// MCP says the samples are MCP CallToolResults: the schema is inferred
	// over structuredContent when every result has it, else over the JSON
	// text of the one text block. When false, a set of samples that are
	// all CallToolResults (an object with a content array and no member
	// but content, structuredContent, isError and _meta) is taken as MCP
	// too.
	MCP bool
	// MaxSamples bounds the samples (DefaultMaxSamples); more is an error.
	MaxSamples int
	// MaxDepth bounds nesting as the parse stage does
	// (strictjson.DefaultMaxDepth); deeper is an error naming the sample.
	MaxDepth int
	// MaxMembers bounds the distinct member names of one object location
	// (DefaultMaxMembers).
	MaxMembers int
	// Redactor judges which values are secrets (nil: the default policy):
	// a location whose values include one gets no enum, so no secret a
	// sample held is written into the schema.
	Redactor *redact.Redactor
}

// Evidence is what Infer saw.
type Evidence struct {
	// Samples is the number of samples inferred over.
	Samples int
	// Protocol is "" or "mcp"; Result, for MCP, "structured" or "text".
	Protocol, Result string
	// Skipped are the samples left out, with why (an MCP isError result).
	Skipped []string
	// Locations are every location seen, in document order of first
	// sight: its pointer ("*" for array items), how many values it held
	// and what was inferred.
	Locations []LocationEvidence
}

// LocationEvidence is one location's evidence.
type LocationEvidence struct {
	Pointer string
	// Values is how many values the location held over all samples; for a
	// member, Of is how many objects held the member's parent (Values of
	// Of: required when equal).
	Values, Of int
	// Types are the JSON Schema types seen.
	Types []string
	// Decision says what was inferred beyond the type ("enum of 3 values",
	// "maxLength 64 (longest 12)", "format date-time", "range [0, 20]
	// (seen 3..10)").
	Decision string
}

// node accumulates what the samples hold at one location.
type node struct {
	ptr                                 string
	count                               int
	nulls, bools, ints, nums, strs, arr int
	objs                                int
	// strings
	distinct map[string]int
	overflow bool
	maxLen   int
	empty    bool // an empty string was seen
	// the alphabet: notToken once a string holds a character outside
	// TokenPunctuation and ASCII letters and digits; the groups seen.
	notToken            bool
	lower, upper, digit bool
	punct               string
	hasControl          bool // a character ControlPattern refuses was seen
	notDate             bool
	notUUID             bool
	notEmail            bool
	notURI              bool
	// numbers
	lo, hi *big.Rat
	// objects: members in order of first sight
	names   []string
	members map[string]*node
	// arrays
	items    *node
	maxItems int
}

func newNode(ptr string) *node { return &node{ptr: ptr} }

type inferrer struct {
	opts  InferOptions
	order []*node
}

// Infer returns a closed JSON Schema 2020-12 that admits every sample
// (each a JSON document, read with the strict parser: a sample that is
// not strict JSON is an error naming it), and the evidence. The rules,
// with their constants, are in docs/infer.md: types per location
// (integer when every number is an integer, 1.0 included, as JSON Schema
// 2020-12 counts it), required members present in every object of their
// location, objects closed (additionalProperties false), array items
// merged over every element, string enums (EnumMaxValues,
// EnumMinSamplesPerValue) or widened lengths, widened numeric ranges,
// formats only when every value matches, null and other mixed types as a
// type list. Nothing in it is narrower than a sample.
func Infer(samples [][]byte, opts InferOptions) (map[string]any, *Evidence, error) {
	if opts.MaxSamples <= 0 {
		opts.MaxSamples = DefaultMaxSamples
	}
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = strictjson.DefaultMaxDepth
	}
	if opts.MaxMembers <= 0 {
		opts.MaxMembers = DefaultMaxMembers
	}
	if len(samples) == 0 {
		return nil, nil, errors.New("no samples to infer from")
	}
	if len(samples) > opts.MaxSamples {
		return nil, nil, fmt.Errorf("%d samples, more than the %d one inference reads; pass fewer files", len(samples), opts.MaxSamples)
	}
	name := func(i int) string {
		if i < len(opts.Names) && opts.Names[i] != "" {
			return opts.Names[i]
		}
		return fmt.Sprintf("sample %d", i+1)
	}
	lim := strictjson.Limits{MaxDepth: opts.MaxDepth}
	values := make([]any, len(samples))
	for i, b := range samples {
		v, err := strictjson.Parse(b, lim)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: not strict JSON: %w", name(i), err)
		}
		values[i] = v
	}
	ev := &Evidence{}
	if opts.MCP || allMCP(values) {
		ev.Protocol = "mcp"
		var err error
		values, err = unwrapResults(values, lim, name, ev)
		if err != nil {
			return nil, nil, err
		}
		if len(values) == 0 {
			return nil, nil, errors.New("every MCP result is an error result (isError true); nothing to infer from")
		}
	}
	ev.Samples = len(values)
	in := &inferrer{opts: opts}
	root := newNode("")
	in.order = append(in.order, root)
	for i, v := range values {
		if err := in.add(root, v, 0); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name(i), err)
		}
	}
	ev.Locations = make([]LocationEvidence, 0, len(in.order))
	schema := in.schema(root, nil, ev)
	schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	sortLocations(in.order, ev)
	return schema, ev, nil
}

// sortLocations keeps the evidence in document order of first sight.
func sortLocations(order []*node, ev *Evidence) {
	pos := map[string]int{}
	for i, n := range order {
		pos[n.ptr] = i
	}
	sort.SliceStable(ev.Locations, func(i, j int) bool { return pos[ev.Locations[i].Pointer] < pos[ev.Locations[j].Pointer] })
}

// allMCP reports whether every value looks like an MCP CallToolResult.
func allMCP(values []any) bool {
	for _, v := range values {
		if !isCallToolResult(v) {
			return false
		}
	}
	return len(values) > 0
}

func isCallToolResult(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	if _, ok := m["content"].([]any); !ok {
		return false
	}
	for k := range m {
		switch k {
		case "content", "structuredContent", "isError", "_meta":
		default:
			return false
		}
	}
	return true
}

// unwrapResults takes the checked value out of each CallToolResult:
// structuredContent when every (successful) result has it, else the JSON
// text of the one text block.
func unwrapResults(values []any, lim strictjson.Limits, name func(int) string, ev *Evidence) ([]any, error) {
	type res struct {
		i int
		m map[string]any
	}
	var ok []res
	structured := true
	for i, v := range values {
		m, isObj := v.(map[string]any)
		if !isObj || !isCallToolResult(v) {
			return nil, fmt.Errorf("%s: the fixture is an MCP recording but its body is not a CallToolResult", name(i))
		}
		if e, _ := m["isError"].(bool); e {
			ev.Skipped = append(ev.Skipped, name(i)+": an MCP error result (isError true)")
			continue
		}
		if _, has := m["structuredContent"]; !has {
			structured = false
		}
		ok = append(ok, res{i, m})
	}
	out := make([]any, 0, len(ok))
	if structured {
		ev.Result = "structured"
		for _, r := range ok {
			out = append(out, r.m["structuredContent"])
		}
		return out, nil
	}
	ev.Result = "text"
	for _, r := range ok {
		var text *string
		content, _ := r.m["content"].([]any)
		for _, b := range content {
			bm, _ := b.(map[string]any)
			if bm["type"] == "text" {
				if text != nil {
					return nil, fmt.Errorf("%s: not every result has structuredContent, and this one has more than one text block: infer needs one JSON value per result", name(r.i))
				}
				s, isStr := bm["text"].(string)
				if !isStr {
					return nil, fmt.Errorf("%s: a text block whose text is not a string", name(r.i))
				}
				text = &s
			}
		}
		if text == nil {
			return nil, fmt.Errorf("%s: not every result has structuredContent, and this one has no text block", name(r.i))
		}
		v, err := strictjson.Parse([]byte(*text), lim)
		if err != nil {
			return nil, fmt.Errorf("%s: the text block is not strict JSON: %w", name(r.i), err)
		}
		out = append(out, v)
	}
	return out, nil
}

// add merges one value into n.
func (in *inferrer) add(n *node, v any, depth int) error {
	if depth > in.opts.MaxDepth {
		return fmt.Errorf("at %s: nested past %d levels", orRoot(n.ptr), in.opts.MaxDepth)
	}
	n.count++
	switch x := v.(type) {
	case nil:
		n.nulls++
	case bool:
		n.bools++
	case string:
		n.strs++
		n.addString(x)
	case json.Number:
		r, ok := new(big.Rat).SetString(string(x))
		if !ok {
			return fmt.Errorf("at %s: number %q", orRoot(n.ptr), string(x))
		}
		if r.IsInt() {
			n.ints++
		} else {
			n.nums++
		}
		if n.lo == nil || r.Cmp(n.lo) < 0 {
			n.lo = r
		}
		if n.hi == nil || r.Cmp(n.hi) > 0 {
			n.hi = r
		}
	case map[string]any:
		n.objs++
		if n.members == nil {
			n.members = map[string]*node{}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			c, ok := n.members[k]
			if !ok {
				if len(n.names) >= in.opts.MaxMembers {
					return fmt.Errorf("at %s: more than %d distinct member names, a map keyed by data: infer cannot close it member by member; write that part of the schema by hand (additionalProperties with a schema)", orRoot(n.ptr), in.opts.MaxMembers)
				}
				c = newNode(n.ptr + "/" + jsonpointer.EscapeToken(k))
				n.members[k] = c
				n.names = append(n.names, k)
				in.order = append(in.order, c)
			}
			if err := in.add(c, x[k], depth+1); err != nil {
				return err
			}
		}
	case []any:
		n.arr++
		if len(x) > n.maxItems {
			n.maxItems = len(x)
		}
		if len(x) > 0 && n.items == nil {
			n.items = newNode(n.ptr + "/*")
			in.order = append(in.order, n.items)
		}
		for _, e := range x {
			if err := in.add(n.items, e, depth+1); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("at %s: a value of Go type %T", orRoot(n.ptr), v)
	}
	return nil
}

func (n *node) addString(s string) {
	if l := utf8.RuneCountInString(s); l > n.maxLen {
		n.maxLen = l
	}
	n.empty = n.empty || s == ""
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z':
			n.lower = true
		case r >= 'A' && r <= 'Z':
			n.upper = true
		case r >= '0' && r <= '9':
			n.digit = true
		case r < 0x80 && strings.ContainsRune(TokenPunctuation, r):
			if !strings.ContainsRune(n.punct, r) {
				n.punct += string(r)
			}
		default:
			n.notToken = true
			if isControl(r) {
				n.hasControl = true
			}
		}
	}
	if !n.overflow {
		if n.distinct == nil {
			n.distinct = map[string]int{}
		}
		n.distinct[s]++
		if len(n.distinct) > EnumMaxValues {
			n.overflow, n.distinct = true, nil
		}
	}
	if !n.notDate {
		_, err := semantic.ParseTimestamp(s)
		n.notDate = err != nil
	}
	n.notUUID = n.notUUID || !isUUID(s)
	n.notEmail = n.notEmail || !isEmail(s)
	n.notURI = n.notURI || !isURI(s)
}

// types returns the JSON Schema types n held, in a fixed order.
func (n *node) types() []string {
	var t []string
	if n.objs > 0 {
		t = append(t, "object")
	}
	if n.arr > 0 {
		t = append(t, "array")
	}
	if n.strs > 0 {
		t = append(t, "string")
	}
	if n.nums > 0 {
		t = append(t, "number")
	} else if n.ints > 0 {
		t = append(t, "integer")
	}
	if n.bools > 0 {
		t = append(t, "boolean")
	}
	if n.nulls > 0 {
		t = append(t, "null")
	}
	return t
}

// anySecret reports whether the redactor takes a secret out of one of the
// values.
func (in *inferrer) anySecret(values map[string]int) bool {
	r := in.opts.Redactor
	if r == nil {
		r = &redact.Redactor{}
	}
	for v := range values {
		if r.Text(v) != v {
			return true
		}
	}
	return false
}

// schema writes n's schema and its evidence (of: the parent object count,
// for a member).
func (in *inferrer) schema(n *node, parentObjs *int, ev *Evidence) map[string]any {
	out := map[string]any{}
	ts := n.types()
	le := LocationEvidence{Pointer: n.ptr, Values: n.count, Types: ts}
	if parentObjs != nil {
		le.Of = *parentObjs
	}
	var decisions []string
	if len(ts) == 1 {
		out["type"] = ts[0]
	} else {
		list := make([]any, len(ts))
		for i, t := range ts {
			list[i] = t
		}
		out["type"] = list
	}
	if n.strs > 0 {
		nonNull := 0
		for _, t := range ts {
			if t != "null" {
				nonNull++
			}
		}
		distinct := len(n.distinct)
		if !n.overflow && distinct > 0 && n.strs >= EnumMinSamplesPerValue*distinct && nonNull == 1 && !in.anySecret(n.distinct) {
			vals := make([]string, 0, distinct)
			for s := range n.distinct {
				vals = append(vals, s)
			}
			sort.Strings(vals)
			enum := make([]any, 0, distinct+1)
			for _, s := range vals {
				enum = append(enum, s)
			}
			if n.nulls > 0 {
				enum = append(enum, nil)
			}
			out["enum"] = enum
			decisions = append(decisions, fmt.Sprintf("enum of %d values (%d strings seen)", distinct, n.strs))
		} else {
			ml := max(StringLengthFactor*n.maxLen, StringLengthFloor)
			out["maxLength"] = ml
			if !n.empty {
				// No sample was empty: "" is not a value of this
				// location, and minLength 1 refuses only it.
				out["minLength"] = 1
				decisions = append(decisions, fmt.Sprintf("minLength 1, maxLength %d (longest %d)", ml, n.maxLen))
			} else {
				decisions = append(decisions, fmt.Sprintf("maxLength %d (longest %d; empty seen)", ml, n.maxLen))
			}
			switch {
			case !n.notDate:
				out["format"] = "date-time"
			case !n.notUUID:
				out["format"] = "uuid"
			case !n.notEmail:
				out["format"] = "email"
			case !n.notURI:
				out["format"] = "uri"
			}
			if f, ok := out["format"].(string); ok {
				decisions = append(decisions, "format "+f)
			} else if !n.notToken && (n.lower || n.upper || n.digit || n.punct != "") {
				out["pattern"] = n.tokenPattern()
				decisions = append(decisions, "pattern "+n.tokenPattern())
			} else if !n.hasControl {
				out["pattern"] = ControlPattern
				decisions = append(decisions, "pattern: no control or bidi character")
			}
		}
	}
	if n.ints+n.nums > 0 {
		d := in.bounds(n, out)
		decisions = append(decisions, d)
	}
	if n.objs > 0 {
		props := map[string]any{}
		var req []any
		names := slices.Clone(n.names)
		sort.Strings(names)
		for _, k := range names {
			c := n.members[k]
			cs := in.schema(c, &n.objs, ev)
			cs["$comment"] = fmt.Sprintf("inferred: in %d of %d objects", c.count, n.objs)
			props[k] = cs
			if c.count == n.objs {
				req = append(req, k)
			}
		}
		out["properties"] = props
		out["additionalProperties"] = false
		if len(req) > 0 {
			out["required"] = req
		}
	}
	if n.arr > 0 {
		if n.items == nil {
			out["maxItems"] = 0
			decisions = append(decisions, "always empty: maxItems 0")
		} else {
			out["items"] = in.schema(n.items, nil, ev)
			mi := max(ItemsFactor*n.maxItems, ItemsFloor)
			out["maxItems"] = mi
			decisions = append(decisions, fmt.Sprintf("maxItems %d (longest %d)", mi, n.maxItems))
		}
	}
	le.Decision = strings.Join(decisions, "; ")
	ev.Locations = append(ev.Locations, le)
	return out
}

// bounds sets minimum and maximum: with w = max(|lowest|, |highest|, 1),
// minimum is 0 when every value is ≥ 0, else lowest − w; maximum is
// highest + w. A bound whose text would pass MaxBoundLength is left out.
func (in *inferrer) bounds(n *node, out map[string]any) string {
	w := new(big.Rat).Abs(n.lo)
	if a := new(big.Rat).Abs(n.hi); a.Cmp(w) > 0 {
		w = a
	}
	if one := big.NewRat(1, 1); w.Cmp(one) < 0 {
		w = one
	}
	var lo *big.Rat
	if n.lo.Sign() >= 0 {
		lo = new(big.Rat)
	} else {
		lo = new(big.Rat).Sub(n.lo, w)
	}
	hi := new(big.Rat).Add(n.hi, w)
	los, lok := decimal(lo)
	his, hok := decimal(hi)
	seen := fmt.Sprintf("seen %s..%s", ratText(n.lo), ratText(n.hi))
	var parts []string
	if lok {
		out["minimum"] = json.Number(los)
		parts = append(parts, "minimum "+los)
	} else {
		parts = append(parts, "no minimum (too long)")
	}
	if hok {
		out["maximum"] = json.Number(his)
		parts = append(parts, "maximum "+his)
	} else {
		parts = append(parts, "no maximum (too long)")
	}
	return strings.Join(parts, ", ") + " (" + seen + ")"
}

func ratText(r *big.Rat) string {
	if s, ok := decimal(r); ok {
		return s
	}
	return r.FloatString(6)
}

// decimal writes r, a finite decimal, exactly without an exponent; ok is
// false when that takes more than MaxBoundLength characters.
func decimal(r *big.Rat) (string, bool) {
	if r.IsInt() {
		s := r.Num().String()
		return s, len(s) <= MaxBoundLength
	}
	// r came from decimal text: its denominator divides a power of ten.
	d := new(big.Int).Set(r.Denom())
	ten := big.NewInt(10)
	prec := 0
	for p := new(big.Int).Set(big.NewInt(1)); prec <= MaxBoundLength; prec++ {
		if new(big.Int).Mod(p, d).Sign() == 0 {
			break
		}
		p.Mul(p, ten)
	}
	if prec > MaxBoundLength {
		return "", false
	}
	s := r.FloatString(prec)
	return s, len(s) <= MaxBoundLength
}
