package runner

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/introspect"
	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/jsonpointer"
)

// MinLeakToken is the shortest raw token, in bytes, the leak check looks
// for: shorter ones ("ok", "id", 1) occur by chance.
const MinLeakToken = 4

// Leak is one raw-body token found in the agent output where it may not be.
type Leak struct {
	// Token is the decoded raw token (a member name, string or number).
	Token string
	// Pointer is its RFC 6901 location in the raw body (for a member name,
	// the member's location).
	Pointer string
	// OutputPointer is where it shows up in the agent output.
	OutputPointer string
}

func (l Leak) String() string {
	return fmt.Sprintf("raw token %q at %s appears in the agent output at %s", l.Token, l.Pointer, l.OutputPointer)
}

// LeakCheck proves that no rejected byte reaches the agent output of an
// admitted response (DESIGN.md, "Suites and what they prove"). Every
// member name, string and number token of at least MinLeakToken bytes in
// the raw body that lies outside every projected path is forbidden. The
// agent output may hold a forbidden token only
//   - as a name or constant the envelope or the agent-facing schema define
//     (Constants: "outcome", "success", the agent field names, enum values…),
//     or the tool name and request id in their envelope members;
//   - inside data.<field> when that value equals what the field's projection
//     pointer selects in the raw body (a value copied from a projected path).
//
// Tokens are compared decoded, so an escaped spelling cannot hide a copy; an
// output string that contains a forbidden token as a substring leaks too.
type LeakCheck struct {
	Tool       string
	RequestID  string
	Projection []gate.ProjectionField
	// Constants are the names and constants the agent-facing schema and the
	// envelope define.
	Constants map[string]bool
	// Embedded, when set, is the location in the raw body of a string that
	// holds the checked value as JSON text (an MCP text result,
	// /content/<i>/text): Find parses that text and checks its tokens in
	// place of the string, and Projection's pointers go on into it. A string
	// there that is not JSON is an error.
	Embedded jsonpointer.Pointer
	// Untrusted are the agent fields whose strings the gate wraps as
	// {"untrusted_text": "<the string>"} (gate.Contract.UntrustedFields):
	// such a field's value is compared with its projection unwrapped.
	Untrusted []string
}

// envelopeNames are the member names and constants of both envelopes.
var envelopeNames = []string{"tool", "request_id", "outcome", "success", "failure", "data", "error", "code", "retryable"}

// Find returns the leaks of output against raw, in output order. Both must
// be JSON; raw is the already admitted body.
func (lc *LeakCheck) Find(raw, output []byte) ([]Leak, error) {
	rawValue, err := strictjson.Parse(raw, strictjson.Limits{MaxDepth: 10000, MaxNumberLength: 1 << 20, MaxStringLength: len(raw) + 1})
	if err != nil {
		return nil, fmt.Errorf("raw body: %w", err)
	}
	if lc.Embedded != nil {
		if rawValue, err = embed(rawValue, lc.Embedded); err != nil {
			return nil, fmt.Errorf("raw body: %w", err)
		}
	}
	outValue, err := strictjson.Parse(output, strictjson.Limits{MaxDepth: 10000, MaxNumberLength: 1 << 20, MaxStringLength: len(output) + 1})
	if err != nil {
		return nil, fmt.Errorf("agent output: %w", err)
	}
	forbidden := map[string]string{}
	lc.collect(rawValue, nil, forbidden)
	if len(forbidden) == 0 {
		return nil, nil
	}
	var leaks []Leak
	check := func(tok, at string) {
		if lc.Constants[tok] {
			return
		}
		for f, ptr := range forbidden {
			if strings.Contains(tok, f) {
				leaks = append(leaks, Leak{Token: f, Pointer: ptr, OutputPointer: at})
			}
		}
	}
	env, ok := outValue.(map[string]any)
	if !ok {
		walkTokens(outValue, "", check)
		return sortLeaks(leaks), nil
	}
	for _, k := range sortedKeys(env) {
		at := "/" + jsonpointer.EscapeToken(k)
		if !isEnvelopeName(k) {
			check(k, at)
		}
		switch v := env[k]; {
		case k == "tool" && v == lc.Tool, k == "request_id" && v == lc.RequestID,
			k == "outcome" && (v == "success" || v == "failure"):
		case k == "data":
			lc.checkData(rawValue, v, at, check)
		default:
			walkTokens(v, at, check)
		}
	}
	return sortLeaks(leaks), nil
}

// embed returns raw with the string at ptr replaced by its parsed JSON
// text (a copy along the path; raw itself is not changed).
func embed(raw any, ptr jsonpointer.Pointer) (any, error) {
	if len(ptr) == 0 {
		s, ok := raw.(string)
		if !ok {
			return nil, errors.New("the embedded JSON text is not a string")
		}
		return strictjson.Parse([]byte(s), strictjson.Limits{MaxDepth: 10000, MaxNumberLength: 1 << 20, MaxStringLength: len(s) + 1})
	}
	switch x := raw.(type) {
	case map[string]any:
		child, ok := x[ptr[0]]
		if !ok {
			return nil, fmt.Errorf("no %s for the embedded JSON text", ptr)
		}
		v, err := embed(child, ptr[1:])
		if err != nil {
			return nil, err
		}
		out := maps.Clone(x)
		out[ptr[0]] = v
		return out, nil
	case []any:
		i, err := strconv.Atoi(ptr[0])
		if err != nil || i < 0 || i >= len(x) {
			return nil, fmt.Errorf("no element %q for the embedded JSON text", ptr[0])
		}
		v, err := embed(x[i], ptr[1:])
		if err != nil {
			return nil, err
		}
		out := slices.Clone(x)
		out[i] = v
		return out, nil
	}
	return nil, fmt.Errorf("no %s for the embedded JSON text", ptr)
}

func (lc *LeakCheck) checkData(raw, data any, at string, check func(tok, at string)) {
	obj, ok := data.(map[string]any)
	if !ok {
		walkTokens(data, at, check)
		return
	}
	for _, field := range sortedKeys(obj) {
		fat := at + "/" + jsonpointer.EscapeToken(field)
		check(field, fat)
		if lc.copied(raw, field, obj[field]) {
			continue
		}
		walkTokens(obj[field], fat, check)
	}
}

// copied reports whether v equals what field's projection selects in raw.
func (lc *LeakCheck) copied(raw any, field string, v any) bool {
	for _, f := range lc.Projection {
		if f.Field == field {
			src, ok := f.Pointer.Expand(raw)
			if ok && slices.Contains(lc.Untrusted, field) {
				v = unwrapUntrusted(v)
			}
			return ok && reflect.DeepEqual(src, v)
		}
	}
	return false
}

// unwrapUntrusted undoes the gate's untrusted_text wrapping: every object
// whose only member is "untrusted_text" with a string value becomes that
// string. The gate wraps every string, so no other object has that shape.
func unwrapUntrusted(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if s, ok := x[gate.UntrustedTextKey].(string); ok && len(x) == 1 {
			return s
		}
		out := make(map[string]any, len(x))
		for k, el := range x {
			out[k] = unwrapUntrusted(el)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, el := range x {
			out[i] = unwrapUntrusted(el)
		}
		return out
	}
	return v
}

// collect gathers the raw tokens outside every projected path.
func (lc *LeakCheck) collect(v any, path []string, out map[string]string) {
	if lc.projected(path) {
		return
	}
	add := func(tok string, p []string) {
		if len(tok) >= MinLeakToken {
			if _, seen := out[tok]; !seen {
				out[tok] = jsonpointer.Pointer(p).String()
			}
		}
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			p := append(path[:len(path):len(path)], k)
			add(k, p)
			lc.collect(x[k], p, out)
		}
	case []any:
		for i, el := range x {
			lc.collect(el, append(path[:len(path):len(path)], fmt.Sprint(i)), out)
		}
	case string:
		add(x, path)
	case json.Number:
		add(string(x), path)
	}
}

// projected reports whether path lies at or under a projection pointer
// ("*" matches any array index).
func (lc *LeakCheck) projected(path []string) bool {
	for _, f := range lc.Projection {
		if len(path) < len(f.Pointer) {
			continue
		}
		match := true
		for i, t := range f.Pointer {
			if t != path[i] && (t != "*" || !isIndex(path[i])) {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// walkTokens calls fn for every member name, string and number in v.
func walkTokens(v any, at string, fn func(tok, at string)) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			kat := at + "/" + jsonpointer.EscapeToken(k)
			fn(k, kat)
			walkTokens(x[k], kat, fn)
		}
	case []any:
		for i, el := range x {
			walkTokens(el, fmt.Sprintf("%s/%d", at, i), fn)
		}
	case string:
		fn(x, at)
	case json.Number:
		fn(string(x), at)
	}
}

func isEnvelopeName(k string) bool { return slices.Contains(envelopeNames, k) }

// SchemaConstants returns every member name and string in a parsed JSON
// Schema document (property names, enum values, consts, …) plus the
// envelope's names: what an agent output may contain without having copied
// it.
func SchemaConstants(doc any) map[string]bool {
	out := map[string]bool{}
	for _, n := range envelopeNames {
		out[n] = true
	}
	for _, c := range gate.ErrorCodes {
		out[string(c)] = true
	}
	walkTokens(doc, "", func(tok, _ string) { out[tok] = true })
	return out
}

// sortLeaks orders leaks by output location, then token, for stable reports.
func sortLeaks(l []Leak) []Leak {
	slices.SortFunc(l, func(a, b Leak) int {
		return cmp.Or(strings.Compare(a.OutputPointer, b.OutputPointer), strings.Compare(a.Token, b.Token))
	})
	return l
}

func sortedKeys(m map[string]any) []string {
	keys := slices.Collect(maps.Keys(m))
	slices.Sort(keys)
	return keys
}

// DetailCheck proves that the detail of a failure envelope (v.Detail)
// carries nothing but the matched error contract's projection, as the
// no-leak proof does for an admitted response's data: every member is a
// detail field of the error shape v.UpstreamError of upstream version
// version, and its value equals what the field's pointer selects in the
// error value the gate matched (introspect.ErrorValue; the load check has
// made each such value an enum or const of the error schema). nil when v
// has no detail.
func DetailCheck(c *gate.Contract, version string, v *gate.Verdict) error {
	if v.Detail == nil {
		return nil
	}
	uv := introspect.Manifest(c).UpstreamVersions[version]
	found := -1
	for i := range uv.Errors {
		if uv.Errors[i].Name == v.UpstreamError {
			found = i
		}
	}
	if found < 0 {
		return fmt.Errorf("detail without a matched error shape of %s (upstream_error %q)", version, v.UpstreamError)
	}
	spec := uv.Errors[found]
	value, ok := introspect.ErrorValue(v)
	if !ok {
		return errors.New("detail without an error value")
	}
	for _, field := range slices.Sorted(maps.Keys(v.Detail)) {
		ptr, declared := spec.Detail[field]
		if !declared {
			return fmt.Errorf("detail member %q is not a detail field of error %s", field, spec.Name)
		}
		p, err := jsonpointer.Parse(ptr)
		if err != nil {
			return err
		}
		want, ok := p.Lookup(value)
		if !ok || !reflect.DeepEqual(want, v.Detail[field]) {
			return fmt.Errorf("detail member %q is not the value at %s of the error value", field, ptr)
		}
	}
	return nil
}
