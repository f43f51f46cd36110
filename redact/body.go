package redact

import (
	"bytes"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/airlockdev/airlock/jsonpointer"
)

// maxEmbeddedDepth is how deep Body looks into strings that hold JSON
// documents: one level (an MCP text block), not a document in a document.
const maxEmbeddedDepth = 1

// TextPart is the Redaction.Name of secrets found in the part of a body
// that is not JSON (Body).
const TextPart = "(text)"

// Body redacts a JSON body: a value under a secret member name (Secret) or
// at one of Pointers becomes a placeholder of the same type ("REDACTED",
// 0, false, {} or []; null stays null); inside every other string, what
// Text finds is replaced and the string re-quoted. A string holding a JSON
// object or array (an MCP text content block) is redacted the same way
// inside, member names included, and re-quoted.
//
// Every byte outside the replaced values is kept, so a body without
// secrets comes back identical; duplicate member names and invalid UTF-8
// do not stop it. complete is false when the body is not (all) JSON: the
// values up to the first syntax error are redacted as JSON and the rest,
// or a body that is not JSON at all (an HTML page, banners around the
// value), is redacted as text by Text; one Redaction with Name TextPart
// reports replacements there. Memory is bounded by a small
// multiple of len(body).
func (r *Redactor) Body(body []byte) (out []byte, found []Redaction, complete bool) {
	return r.body(body, 0)
}

type edit struct {
	start, end int64
	repl       []byte
}

type bodyWalk struct {
	r *Redactor
	// secretCtx counts the secret-named objects and arrays the walk is
	// inside.
	secretCtx int
	depth     int
	edits     []edit
	found     []Redaction
	ends      []int64 // ends[i]: where the value of found[i] ends in the body
}

// placeholder replaces the string at body[start:end] with "REDACTED" and
// reports it at pointer.
func (w *bodyWalk) placeholder(start, end int64, pointer string) {
	w.edits = append(w.edits, edit{start, end, []byte(`"` + Placeholder + `"`)})
	w.report(Redaction{Where: RedactedBody, Pointer: pointer}, end)
}

func (w *bodyWalk) report(r Redaction, end int64) {
	w.found = append(w.found, r)
	w.ends = append(w.ends, end)
}

func (r *Redactor) body(body []byte, depth int) ([]byte, []Redaction, bool) {
	w := &bodyWalk{r: r, depth: depth}
	d := jsontext.NewDecoder(bytes.NewReader(body), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	complete := true
	// good is where the text scan of a body that is not all JSON starts:
	// the start of the last whole top-level value read (0 when none), so
	// a value that turns out to be a name ("password" in "password":"…"
	// as a body of its own, a key before banners) is scanned with what
	// follows it.
	var good, lastStart int64
	for {
		if d.PeekKind() == 0 {
			if _, err := d.ReadToken(); err != io.EOF {
				complete = false
			}
			break
		}
		start := d.InputOffset()
		var err error
		if w.pointerMatch(nil) {
			err = w.replace(d, nil)
		} else {
			err = w.walk(d, nil)
		}
		if err != nil {
			complete = false
			break
		}
		lastStart = start
	}
	good = lastStart
	if !complete {
		// The rest, from the start of the last whole top-level value, is
		// searched as text; edits inside it are dropped for the text's
		// own.
		kept := w.edits[:0]
		for _, e := range w.edits {
			if e.end <= good {
				kept = append(kept, e)
			}
		}
		w.edits = kept
		var keptFound []Redaction
		for i, f := range w.found {
			if w.ends[i] <= good {
				keptFound = append(keptFound, f)
			}
		}
		w.found = keptFound
		rest := string(body[good:])
		if red, fs := r.text(rest); len(fs) > 0 {
			w.edits = append(w.edits, edit{good, int64(len(body)), []byte(red)})
			w.found = append(w.found, Redaction{Where: RedactedBody, Name: TextPart})
		}
	}
	if len(w.edits) == 0 {
		return body, nil, complete
	}
	// Edits come in document order except a pair object's value, placed
	// when its object closed.
	sort.SliceStable(w.edits, func(i, j int) bool { return w.edits[i].start < w.edits[j].start })
	out := make([]byte, 0, len(body))
	var at int64
	for _, e := range w.edits {
		out = append(out, body[at:e.start]...)
		out = append(out, e.repl...)
		at = e.end
	}
	out = append(out, body[at:]...)
	return out, w.found, complete
}

func (w *bodyWalk) pointerMatch(path []string) bool { return w.r.pointerMatch(path) }

// pointerMatch reports whether path is one of Pointers ("*" matching any
// one token).
func (r *Redactor) pointerMatch(path []string) bool {
	for _, p := range r.Pointers {
		if len(p) != len(path) {
			continue
		}
		ok := true
		for i, t := range p {
			if t != "*" && t != path[i] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func pointerString(path []string) string { return jsonpointer.Pointer(path).String() }

// Paths share one growing stack: a member's path is its parent's with one
// token appended in place, which siblings then overwrite, so a body nested
// N deep costs O(N) memory, not O(N²). A Redaction copies the path into
// its Pointer when it is made.

// member redacts the value at p whole when its name is a secret's or a
// pointer of the policy selects it, and walks into it otherwise.
func (w *bodyWalk) member(d *jsontext.Decoder, p []string, secretName bool) error {
	if w.pointerMatch(p) {
		return w.replace(d, p)
	}
	if secretName {
		switch d.PeekKind() {
		case '{', '[':
			// An object or array under a secret name keeps its shape:
			// its members are judged by their own names, and every
			// string in it that could be a credential is replaced
			// ("credentials": {"username": …, "password": …}, "token":
			// {"value": …, "expires_in": …}, a list of secrets' names
			// and dates).
			w.secretCtx++
			err := w.walk(d, p)
			w.secretCtx--
			return err
		}
		return w.replace(d, p)
	}
	return w.walk(d, p)
}

// weak reads the value of a member with a weak secret name ("key",
// "signature", "cookie"): a string that holds a secret by weakValue is
// replaced whole; anything else is walked as under any name.
func (w *bodyWalk) weak(d *jsontext.Decoder, path []string) error {
	if d.PeekKind() != '"' || w.pointerMatch(path) {
		return w.member(d, path, false)
	}
	start, end, text, ok, err := readString(d)
	if err != nil || !ok {
		return err
	}
	if w.r.weakValue(string(text)) {
		w.placeholder(start, end, pointerString(path))
		return nil
	}
	w.str(path, start, end, text)
	return nil
}

// walk reads one value at path, redacting inside it.
func (w *bodyWalk) walk(d *jsontext.Decoder, path []string) error {
	switch d.PeekKind() {
	case '{':
		if _, err := d.ReadToken(); err != nil {
			return err
		}
		// A pair object names its value with a sibling member:
		// {"name": "DB_PASSWORD", "value": "…"} (Kubernetes env, HAR
		// headers, AWS tags and parameters). The value is replaced when
		// the name or key is secret, whichever comes first.
		secretSibling := false
		valueAt := -1 // index in w.edits of the value's edit, or -1
		var valueStart, valueEnd int64 = -1, -1
		var valuePath string
		for d.PeekKind() != '}' {
			tok, err := d.ReadToken()
			if err != nil {
				return err
			}
			name := tok.String()
			p := append(path, name)
			if lname := pairRole(name); d.PeekKind() == '"' && lname != "" {
				start, end, text, ok, err := readString(d)
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
				if lname == "value" {
					if secretSibling {
						w.placeholder(start, end, pointerString(p))
						continue
					}
					valueStart, valueEnd, valuePath, valueAt = start, end, pointerString(p), len(w.edits)
					w.str(p, start, end, text)
					continue
				}
				if w.r.Secret(string(text)) && len(text) <= 256 {
					secretSibling = true
				}
				if lname == "key" && w.r.weakValue(string(text)) {
					w.placeholder(start, end, pointerString(p))
					continue
				}
				w.str(p, start, end, text)
				continue
			}
			switch {
			case !w.r.Secret(name):
				err = w.member(d, p, false)
			case w.r.strong(name):
				err = w.member(d, p, true)
			default:
				err = w.weak(d, p)
			}
			if err != nil {
				return err
			}
		}
		if secretSibling && valueStart >= 0 {
			// The value came first: its edit (if Text made one) gives
			// way to the placeholder.
			if valueAt < len(w.edits) && w.edits[valueAt].start == valueStart {
				w.edits = append(w.edits[:valueAt], w.edits[valueAt+1:]...)
			}
			w.placeholder(valueStart, valueEnd, valuePath)
		}
		_, err := d.ReadToken()
		return err
	case '[':
		if _, err := d.ReadToken(); err != nil {
			return err
		}
		for i := 0; d.PeekKind() != ']'; i++ {
			p := append(path, strconv.Itoa(i))
			if err := w.member(d, p, false); err != nil {
				return err
			}
		}
		_, err := d.ReadToken()
		return err
	case '"':
		start, end, text, ok, err := readString(d)
		if err != nil || !ok {
			return err
		}
		w.str(path, start, end, text)
		return nil
	default:
		_, err := d.ReadValue()
		return err
	}
}

// readString reads the string value next in d: its bytes' range in the
// body and its unquoted text; ok is false when it does not unquote
// (invalid UTF-8 kept as it came).
func readString(d *jsontext.Decoder) (start, end int64, text []byte, ok bool, err error) {
	val, err := d.ReadValue()
	if err != nil {
		return 0, 0, nil, false, err
	}
	end = d.InputOffset()
	start = end - int64(len(val))
	text, uerr := jsontext.AppendUnquote(nil, val)
	return start, end, text, uerr == nil, nil
}

// str redacts one string value (unquoted text) at body[start:end].
func (w *bodyWalk) str(path []string, start, end int64, text []byte) {
	if w.secretCtx > 0 && !notSecret(string(text)) && w.r.weakValue(string(text)) {
		w.placeholder(start, end, pointerString(path))
		return
	}
	if w.depth < maxEmbeddedDepth {
		if t := bytes.TrimLeft(text, " \t\r\n"); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
			inner, found, _ := w.r.body(text, w.depth+1)
			if len(found) > 0 {
				w.requote(start, end, inner)
				for _, f := range found {
					w.report(Redaction{Where: RedactedBody, Pointer: pointerString(path), Inner: innerName(f)}, end)
				}
			}
			return
		}
	}
	red, fs := w.r.text(string(text))
	if len(fs) == 0 {
		return
	}
	w.requote(start, end, []byte(red))
	w.report(Redaction{Where: RedactedBody, Pointer: pointerString(path)}, end)
}

// pairRole says what a member of a pair object is: "name" for the member
// that names the value (name, key, ParameterKey, ParameterName,
// OptionName, variable), "value" for the value (value, ParameterValue,
// OptionValue), "" for neither.
func pairRole(member string) string {
	switch strings.ToLower(member) {
	case "name", "parameterkey", "parametername", "optionname", "variable":
		return "name"
	case "key":
		return "key"
	case "value", "parametervalue", "optionvalue":
		return "value"
	}
	return ""
}

// innerName is how a redaction inside an embedded document is named.
func innerName(f Redaction) string {
	if f.Name == TextPart {
		return TextPart
	}
	if f.Pointer == "" {
		return `""`
	}
	return f.Pointer
}

// requote replaces body[start:end] with text quoted as a JSON string.
func (w *bodyWalk) requote(start, end int64, text []byte) {
	q, err := jsontext.AppendQuote(nil, text)
	if err != nil {
		// Invalid UTF-8 inside: drop the whole string rather than keep a secret.
		q = []byte(`"` + Placeholder + `"`)
	}
	w.edits = append(w.edits, edit{start, end, q})
}

// replace reads the value at path and swaps it for its placeholder.
func (w *bodyWalk) replace(d *jsontext.Decoder, path []string) error {
	kind := d.PeekKind()
	val, err := d.ReadValue()
	if err != nil {
		return err
	}
	end := d.InputOffset()
	start := end - int64(len(val))
	var repl string
	explicit := w.pointerMatch(path)
	switch kind {
	case '"':
		if text, err := jsontext.AppendUnquote(nil, val); err == nil && notSecret(string(text)) && !explicit {
			// "", a placeholder, a version range: nothing to hide.
			return nil
		}
		repl = `"` + Placeholder + `"`
	case '0':
		if len(path) > 0 && strings.HasSuffix(strings.ToLower(path[len(path)-1]), "tokens") && !explicit {
			return nil // a count of tokens ("tokens": 128000)
		}
		repl = "0"
	case 't', 'f':
		if !explicit {
			return nil // one bit ("has_password": true) is not a secret
		}
		repl = "false"
	case '{':
		repl = "{}"
	case '[':
		repl = "[]"
	default: // null carries nothing
		return nil
	}
	if string(val) == repl {
		return nil
	}
	w.edits = append(w.edits, edit{start, end, []byte(repl)})
	w.report(Redaction{Where: RedactedBody, Pointer: pointerString(path)}, end)
	return nil
}

// Context redacts a request context (key → JSON value, as a fixture's
// sidecar keeps it): a value under a secret key becomes a placeholder of
// the same type (as in Body; under a weak key only when it could be a
// credential), and any other string what Text leaves of it. The input is
// not modified; one Redaction per key changed, sorted by key.
func (r *Redactor) Context(c map[string]any) (map[string]any, []Redaction) {
	if len(c) == 0 {
		return c, nil
	}
	out := make(map[string]any, len(c))
	var found []Redaction
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := c[k]
		nv, changed := v, false
		str, isString := v.(string)
		switch {
		case r.Secret(k) && (r.strong(k) || isString && r.weakValue(str)):
			switch v.(type) {
			case string:
				nv = Placeholder
			case bool:
				nv = false
			case map[string]any:
				nv = map[string]any{}
			case []any:
				nv = []any{}
			case nil:
			default:
				nv = 0
			}
			changed = v != nil && !(isString && str == Placeholder)
		case isString:
			red := r.Text(str)
			nv, changed = red, red != str
		}
		out[k] = nv
		if changed {
			found = append(found, Redaction{Where: RedactedContext, Name: k})
		}
	}
	return out, found
}
