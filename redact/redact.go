// Package redact is airlock's one secret policy: what counts as a secret in
// a header, a URL, a command line, free text and a JSON body, and how it is
// replaced. The gate's audit record (the upstream source) and the recorder
// (headers, URLs, argv, bodies written into fixtures) both use it, so a
// value the recorder redacts never appears in an audit record either.
//
// A name is secret by its words (see Redactor.Names), a value by its shape
// (SecretValue: bearer tokens, API keys, JWTs, PEM private keys); a secret
// is replaced by Placeholder (or, in a JSON body, a placeholder of the same
// JSON type) and every other byte is kept.
package redact

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/airlockdev/airlock/jsonpointer"
)

// Placeholder is the string that replaces a redacted secret.
const Placeholder = "REDACTED"

// DefaultSecretNames are the words that make a member name, header name,
// query parameter or command-line flag look secret (see Redactor.Secret).
var DefaultSecretNames = []string{
	"token", "secret", "password", "passwd", "passphrase", "key", "apikey",
	"credential", "auth", "authorization", "cookie", "session", "sessionid", "signature", "sig",
}

// Where a redaction happened (Redaction.Where).
const (
	RedactedHeader         = "header"
	RedactedResponseHeader = "response_header"
	RedactedQuery          = "query"
	RedactedUserinfo       = "userinfo"
	RedactedArgv           = "argv"
	RedactedArguments      = "arguments"
	RedactedBody           = "body"
)

// Redaction says what was replaced (for airlock record: before anything
// reached disk).
type Redaction struct {
	// Where is one of the Redacted* constants.
	Where string `yaml:"where"`
	// Name is the header or query parameter name.
	Name string `yaml:"name"`
	// Index is the command-line argument's index in argv.
	Index *int `yaml:"index"`
	// Pointer is the RFC 6901 location of a body or MCP arguments value.
	Pointer string `yaml:"pointer"`
	// Inner is the location inside a string value that holds a JSON
	// document (an MCP text content block, say) when the secret was there.
	Inner string `yaml:"inner"`
}

// String renders r for people: "header Authorization", "body /data/token".
func (r Redaction) String() string {
	s := r.Where
	switch {
	case r.Name != "":
		s += " " + r.Name
	case r.Index != nil:
		s += " " + strconv.Itoa(*r.Index)
	case r.Where == RedactedBody || r.Where == RedactedArguments:
		p := r.Pointer
		if p == "" {
			p = `""`
		}
		s += " " + p
	}
	if r.Inner != "" {
		s += " (inside it: " + r.Inner + ")"
	}
	return s
}

// Redactor decides what is secret and replaces it. The zero value uses
// DefaultSecretNames and no pointers.
type Redactor struct {
	// Names are the secret words; nil means DefaultSecretNames. A name is
	// secret when one of its words (split at non-letters and digits and at
	// camelCase humps, compared case-insensitively) or the whole name with
	// separators removed equals one of them, or one of them plus "s":
	// "api_key", "X-Api-Key", "accessToken", "API_TOKEN", "credentials" are
	// secret with the defaults; "monkey", "author" and "keyboard" are not.
	Names []string
	// Pointers are explicit body locations to redact whatever their names;
	// a "*" token matches any single token.
	Pointers []jsonpointer.Pointer
	// Headers are extra header names (case-insensitive) to redact.
	Headers []string
}

// alwaysSecretHeaders are redacted whatever Names says.
var alwaysSecretHeaders = []string{"authorization", "proxy-authorization", "cookie", "set-cookie"}

// secretValues are well-known credential formats, redacted wherever they
// appear as a whole string, whatever their member name.
var secretValues = []*regexp.Regexp{
	regexp.MustCompile(`(?i)^(bearer|basic|token)\s+\S{8,}$`),
	regexp.MustCompile(`^(sk|rk)[-_][A-Za-z0-9_-]{8,}$`),
	regexp.MustCompile(`^(gh[pousr]_|github_pat_)[A-Za-z0-9_]{20,}$`),
	regexp.MustCompile(`^glpat-[A-Za-z0-9_-]{20,}$`),
	regexp.MustCompile(`^xox[abposr]-[A-Za-z0-9-]{10,}$`),
	regexp.MustCompile(`^(AKIA|ASIA)[0-9A-Z]{16}$`),
	regexp.MustCompile(`^eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*$`),
	regexp.MustCompile(`^-----BEGIN [A-Z ]*PRIVATE KEY-----`),
}

// SecretValue reports whether s, trimmed, has the shape of a well-known
// credential (a bearer token, an "sk-…" API key, a GitHub, GitLab or Slack
// token, an AWS access key id, a JWT, a PEM private key).
func SecretValue(s string) bool {
	s = strings.TrimSpace(s)
	if len(s) < 12 {
		return false
	}
	for _, re := range secretValues {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// Secret reports whether a member, header, parameter or flag name looks
// secret (see Names).
func (r *Redactor) Secret(name string) bool {
	names := r.Names
	if names == nil {
		names = DefaultSecretNames
	}
	match := func(w string) bool {
		for _, n := range names {
			n = strings.ToLower(n)
			if w == n || w == n+"s" {
				return true
			}
		}
		return false
	}
	words := nameWords(name)
	for _, w := range words {
		if match(w) {
			return true
		}
	}
	return len(words) > 1 && match(strings.Join(words, ""))
}

// nameWords splits a name into lower-case words at every character that is
// not a letter or digit and at camelCase humps ("APIToken" → api, token).
func nameWords(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(name)
	for i, c := range rs {
		if !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			flush()
			continue
		}
		if unicode.IsUpper(c) && len(cur) > 0 {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
			}
		}
		cur = append(cur, c)
	}
	flush()
	return words
}

func (r *Redactor) secretHeader(name string) bool {
	l := strings.ToLower(name)
	if slices.Contains(alwaysSecretHeaders, l) {
		return true
	}
	for _, h := range r.Headers {
		if strings.EqualFold(h, name) {
			return true
		}
	}
	return r.Secret(name)
}

// Header returns h as one value per name (several values joined with ", "),
// secret headers replaced: "Authorization: Bearer REDACTED" keeps its
// scheme, any other secret header becomes "REDACTED". where is
// RedactedHeader or RedactedResponseHeader.
func (r *Redactor) Header(h http.Header, where string) (map[string]string, []Redaction) {
	if len(h) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(h))
	var found []Redaction
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := strings.Join(h[k], ", ")
		secret := r.secretHeader(k)
		if !secret {
			for _, one := range h[k] {
				secret = secret || SecretValue(one)
			}
		}
		if secret {
			l := strings.ToLower(k)
			scheme, _, hasScheme := strings.Cut(strings.TrimSpace(v), " ")
			if (l == "authorization" || l == "proxy-authorization") && hasScheme && len(scheme) <= 16 {
				v = scheme + " " + Placeholder
			} else {
				v = Placeholder
			}
			found = append(found, Redaction{Where: where, Name: k})
		}
		out[k] = v
	}
	return out, found
}

// URL returns raw with its userinfo (user and password) and the values of
// secret query and fragment parameters (a secret name, or a value that
// looks like a credential) replaced by Placeholder, keeping every other
// byte and the order; an absolute URL per RFC 3986. A string that does not
// parse as an absolute URL is redacted by Text instead, and reported as one
// Redaction{Where: RedactedQuery, Name: "(unparsed URL)"} when Text changed
// it.
func (r *Redactor) URL(raw string) (string, []Redaction) {
	u, err := url.Parse(raw)
	if err == nil && u.Scheme == "" && u.Host == "" && (u.RawQuery != "" || strings.Contains(u.Fragment, "=")) {
		// A relative reference ("/cb?access_token=…#token=…", as a
		// Location header may be): its query and fragment pairs are
		// redacted like an absolute URL's; nothing else of it changes.
		path, rest, _ := strings.Cut(raw, "?")
		if u.RawQuery == "" {
			path, rest, _ = strings.Cut(raw, "#")
			frag, f := r.params(rest)
			return path + "#" + frag, f
		}
		query, frag, hasFrag := strings.Cut(rest, "#")
		q, found := r.params(query)
		out := path + "?" + q
		if hasFrag {
			fr, f := r.params(frag)
			found = append(found, f...)
			out += "#" + fr
		}
		return out, found
	}
	if err != nil || u.Scheme == "" || u.Host == "" {
		red := r.Text(raw)
		if red != raw {
			return red, []Redaction{{Where: RedactedQuery, Name: "(unparsed URL)"}}
		}
		return red, nil
	}
	var found []Redaction
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(Placeholder, Placeholder)
		} else {
			u.User = url.User(Placeholder)
		}
		found = append(found, Redaction{Where: RedactedUserinfo})
	}
	var q []Redaction
	u.RawQuery, q = r.params(u.RawQuery)
	found = append(found, q...)
	if strings.Contains(u.Fragment, "=") {
		frag, f := r.params(u.EscapedFragment())
		if len(f) > 0 {
			u.Fragment, u.RawFragment = "", ""
			if unesc, err := url.PathUnescape(frag); err == nil {
				u.Fragment = unesc
			}
			u.RawFragment = frag
			found = append(found, f...)
		}
	}
	return u.String(), found
}

// params redacts the values of secret "name=value" pairs of a query or
// fragment, keeping every other byte and the order.
func (r *Redactor) params(raw string) (string, []Redaction) {
	if raw == "" {
		return raw, nil
	}
	var found []Redaction
	pairs := strings.Split(raw, "&")
	for i, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			continue
		}
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			val = v
		}
		if (r.Secret(name) || SecretValue(val)) && val != Placeholder {
			pairs[i] = k + "=" + Placeholder
			found = append(found, Redaction{Where: RedactedQuery, Name: name})
		}
	}
	return strings.Join(pairs, "&"), found
}

// Argv returns a command line with secrets replaced: the value of
// "--name=value", "-name=value" and "NAME=value" arguments with a secret
// name, the argument after a secret "--name" flag, "Name: value" header
// arguments with a secret header name, URLs (see URL), and arguments that
// look like credentials (SecretValue).
func (r *Redactor) Argv(argv []string) ([]string, []Redaction) {
	out := slices.Clone(argv)
	var found []Redaction
	mark := func(i int) {
		idx := i
		found = append(found, Redaction{Where: RedactedArgv, Index: &idx})
	}
	secretFlag := false
	for i, a := range argv {
		prevSecret := secretFlag
		secretFlag = false
		switch {
		case prevSecret && !strings.HasPrefix(a, "-"):
			out[i] = Placeholder
			mark(i)
		case strings.HasPrefix(a, "-"):
			name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if r.Secret(name) {
				if hasValue {
					out[i] = a[:strings.IndexByte(a, '=')+1] + Placeholder
					mark(i)
				} else {
					secretFlag = true
				}
			}
		case strings.Contains(a, "://"):
			if red, f := r.URL(a); len(f) > 0 {
				out[i] = red
				mark(i)
			}
		case SecretValue(a):
			out[i] = Placeholder
			mark(i)
		default:
			if name, _, ok := strings.Cut(a, "="); ok && validEnvName(name) && r.Secret(name) {
				out[i] = name + "=" + Placeholder
				mark(i)
			} else if name, v, ok := strings.Cut(a, ":"); ok && !strings.ContainsAny(name, " \t") && name != "" && r.secretHeader(name) && strings.TrimSpace(v) != "" {
				out[i] = name + ": " + Placeholder
				mark(i)
			}
		}
	}
	return out, found
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c == '-' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// maxEmbeddedDepth is how deep Body looks into strings that hold JSON
// documents: one level (an MCP text block), not a document in a document.
const maxEmbeddedDepth = 1

// Body redacts a JSON body in place of its secret values: a value under a
// secret member name, at one of Pointers, or a string that looks like a
// credential becomes a placeholder of the same type ("REDACTED", 0, false,
// {} or []; null stays null). A string holding a JSON object or array (an
// MCP text content block) is redacted the same way inside and re-quoted.
//
// Every byte outside the replaced values is kept, so an unredacted body
// comes back identical; duplicate member names and invalid UTF-8 do not
// stop it. complete is false when the body is not (all) JSON: values up to
// the first syntax error are redacted and the rest is kept as it was.
func (r *Redactor) Body(body []byte) (out []byte, found []Redaction, complete bool) {
	return r.body(body, 0)
}

type edit struct {
	start, end int64
	repl       []byte
}

type bodyWalk struct {
	r     *Redactor
	depth int
	edits []edit
	found []Redaction
}

func (r *Redactor) body(body []byte, depth int) ([]byte, []Redaction, bool) {
	w := &bodyWalk{r: r, depth: depth}
	d := jsontext.NewDecoder(bytes.NewReader(body), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	complete := true
	for {
		if d.PeekKind() == 0 {
			if _, err := d.ReadToken(); err != io.EOF {
				complete = false
			}
			break
		}
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
	}
	if len(w.edits) == 0 {
		return body, nil, complete
	}
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

func (w *bodyWalk) pointerMatch(path []string) bool {
	for _, p := range w.r.Pointers {
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

// walk reads one value at path, redacting inside it.
// member redacts the value at p whole when its name is a secret's or a
// pointer of the policy selects it, and walks into it otherwise.
func (w *bodyWalk) member(d *jsontext.Decoder, p []string, secretName bool) error {
	if secretName || w.pointerMatch(p) {
		return w.replace(d, p)
	}
	return w.walk(d, p)
}

func (w *bodyWalk) walk(d *jsontext.Decoder, path []string) error {
	switch d.PeekKind() {
	case '{':
		if _, err := d.ReadToken(); err != nil {
			return err
		}
		for d.PeekKind() != '}' {
			tok, err := d.ReadToken()
			if err != nil {
				return err
			}
			p := append(path[:len(path):len(path)], tok.String())
			if err := w.member(d, p, w.r.Secret(tok.String())); err != nil {
				return err
			}
		}
		_, err := d.ReadToken()
		return err
	case '[':
		if _, err := d.ReadToken(); err != nil {
			return err
		}
		for i := 0; d.PeekKind() != ']'; i++ {
			p := append(path[:len(path):len(path)], strconv.Itoa(i))
			if err := w.member(d, p, false); err != nil {
				return err
			}
		}
		_, err := d.ReadToken()
		return err
	case '"':
		val, err := d.ReadValue()
		if err != nil {
			return err
		}
		end := d.InputOffset()
		start := end - int64(len(val))
		text, err := jsontext.AppendUnquote(nil, val)
		if err != nil {
			return nil
		}
		if SecretValue(string(text)) {
			w.add(start, end, []byte(`"`+Placeholder+`"`), Redaction{Where: RedactedBody, Pointer: pointerString(path)})
			return nil
		}
		if w.depth < maxEmbeddedDepth {
			if t := bytes.TrimLeft(text, " \t\r\n"); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
				inner, found, _ := w.r.body(text, w.depth+1)
				if len(found) > 0 {
					q, err := jsontext.AppendQuote(nil, inner)
					if err != nil {
						// Invalid UTF-8 inside: drop the whole string rather than keep a secret.
						q = []byte(`"` + Placeholder + `"`)
					}
					w.edits = append(w.edits, edit{start, end, q})
					for _, f := range found {
						w.found = append(w.found, Redaction{Where: RedactedBody, Pointer: pointerString(path), Inner: f.Pointer})
					}
				}
			}
		}
		return nil
	default:
		_, err := d.ReadValue()
		return err
	}
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
	switch kind {
	case '"':
		repl = `"` + Placeholder + `"`
	case '0':
		repl = "0"
	case 't', 'f':
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
	w.add(start, end, []byte(repl), Redaction{Where: RedactedBody, Pointer: pointerString(path)})
	return nil
}

func (w *bodyWalk) add(start, end int64, repl []byte, r Redaction) {
	w.edits = append(w.edits, edit{start, end, repl})
	w.found = append(w.found, r)
}
