// Package planted loads and renders the planted-secret battery
// (redact/testdata/planted.yaml): realistic lines in which the secret parts
// are marked «…» and spelt as generator templates, so that no literal secret
// is committed. Rendering is deterministic: entry i of seed s always gives the
// same values, and every entry gets values of its own.
//
// Only tests import it.
package planted

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Places an entry can be planted in.
const (
	Body           = "body"            // a JSON string value under an innocuous member name
	BodyName       = "body_name"       // "member: value", a value under a secret-looking member name
	TextContent    = "text_content"    // the text of an MCP text content block
	RequestHeader  = "request_header"  // "Name: value"
	ResponseHeader = "response_header" // "Name: value"
	URL            = "url"             // a URL
	Argv           = "argv"            // a whole command line (Split splits it)
	Source         = "source"          // an audit record's source
	Clean          = "clean"           // no secret: must come back unchanged
)

// Places lists the places with planted secrets, in report order.
var Places = []string{Body, BodyName, TextContent, RequestHeader, ResponseHeader, URL, Argv, Source}

// Entry is one line of the battery as written.
type Entry struct {
	Place string `yaml:"place"`
	Text  string `yaml:"text"`
	Note  string `yaml:"note"`
}

// Rendered is an entry with its templates expanded.
type Rendered struct {
	Entry
	Index int
	// Value is the text without the «» marks.
	Value string
	// Secrets are the marked parts, as rendered.
	Secrets []string
	// Fragments are the generated values inside the marked parts (a PEM body
	// line by line) of 8 characters or more: none of them may survive.
	Fragments []string
	// Before is the text before the first mark.
	Before string
}

// Load reads the battery.
func Load(path string) ([]Entry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var es []Entry
	if err := yaml.Unmarshal(b, &es); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i, e := range es {
		if e.Place == "" || e.Text == "" || e.Note == "" {
			return nil, fmt.Errorf("%s: entry %d needs place, text and note", path, i)
		}
		known := e.Place == Clean
		for _, p := range Places {
			known = known || p == e.Place
		}
		if !known {
			return nil, fmt.Errorf("%s: entry %d: unknown place %q", path, i, e.Place)
		}
		marks := strings.Count(e.Text, "«")
		if marks != strings.Count(e.Text, "»") || (marks == 0) != (e.Place == Clean) {
			return nil, fmt.Errorf("%s: entry %d (%s): a planted entry marks its secrets «…», a clean one none", path, i, e.Note)
		}
	}
	return es, nil
}

var template = regexp.MustCompile(`\{([a-z0-9]+)(?::([^{}]*))?\}`)

// Render expands every entry with its own generator, seeded by seed and the
// entry's index.
func Render(es []Entry, seed uint64) ([]Rendered, error) {
	out := make([]Rendered, 0, len(es))
	for i, e := range es {
		r, err := render(e, i, rand.New(rand.NewPCG(seed, uint64(i)+1)))
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func render(e Entry, i int, rng *rand.Rand) (Rendered, error) {
	r := Rendered{Entry: e, Index: i}
	var value strings.Builder
	rest := e.Text
	inSecret := false
	for rest != "" {
		var part string
		next := "«"
		if inSecret {
			next = "»"
		}
		j := strings.Index(rest, next)
		if j < 0 {
			part, rest = rest, ""
		} else {
			part, rest = rest[:j], rest[j+len(next):]
		}
		var frags []string
		var gerr error
		expanded := template.ReplaceAllStringFunc(part, func(m string) string {
			sub := template.FindStringSubmatch(m)
			v, fr, err := generate(sub[1], sub[2], rng)
			if err != nil {
				gerr = fmt.Errorf("entry %d (%s): %s: %w", i, e.Note, m, err)
			}
			frags = append(frags, fr...)
			return v
		})
		if gerr != nil {
			return r, gerr
		}
		if inSecret {
			if len(frags) == 0 {
				return r, fmt.Errorf("entry %d (%s): the secret «%s» has no generated part: no literal secret may be committed", i, e.Note, part)
			}
			r.Secrets = append(r.Secrets, expanded)
			for _, f := range frags {
				if len(f) >= 8 {
					r.Fragments = append(r.Fragments, f)
				}
			}
		} else if len(r.Secrets) == 0 {
			r.Before = value.String() + expanded
		}
		value.WriteString(expanded)
		if j >= 0 {
			inSecret = !inSecret
		}
	}
	r.Value = value.String()
	return r, nil
}

const (
	lower  = "abcdefghijklmnopqrstuvwxyz"
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	digits = "0123456789"
	b62    = digits + upper + lower
	b64    = upper + lower + digits + "+/"
	b64url = upper + lower + digits + "-_"
	hex    = "0123456789abcdef"
)

func pick(rng *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

// generate expands one template; the fragments are what must not survive.
func generate(kind, arg string, rng *rand.Rand) (string, []string, error) {
	n := 0
	switch kind {
	case "b62", "alnum", "hex", "b64", "b64url", "digits", "lower", "upper":
		var err error
		if n, err = strconv.Atoi(arg); err != nil || n <= 0 || n > 4096 {
			return "", nil, fmt.Errorf("needs a length")
		}
	}
	var v string
	switch kind {
	case "b62", "alnum":
		v = pick(rng, b62, n)
	case "hex":
		v = pick(rng, hex, n)
	case "b64":
		// Standard base64 of random bytes, padded as an encoder would.
		raw := make([]byte, n*3/4)
		for i := range raw {
			raw[i] = byte(rng.IntN(256))
		}
		v = base64.StdEncoding.EncodeToString(raw)
	case "b64url":
		v = pick(rng, b64url, n)
	case "digits":
		v = pick(rng, digits[1:], 1) + pick(rng, digits, n-1)
	case "lower":
		v = pick(rng, lower, n)
	case "upper":
		v = pick(rng, upper, n)
	case "uuid":
		h := pick(rng, hex, 32)
		v = h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:]
	case "jwt":
		// header {"alg":"HS256","typ":"JWT"}, a payload with a random subject
		// and issue time, a random 32-byte signature.
		hdr := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
		payload := fmt.Sprintf(`{"sub":"%s","name":"%s","iat":%d}`, pick(rng, digits, 10), pick(rng, lower, 8), 1700000000+rng.IntN(90000000))
		p := base64.RawURLEncoding.EncodeToString([]byte(payload))
		sig := pick(rng, b64url, 43)
		return hdr + "." + p + "." + sig, []string{p, sig}, nil
	case "basic":
		// {basic:user}: base64 of user:<random password>.
		if arg == "" {
			return "", nil, fmt.Errorf("needs a user")
		}
		pw := pick(rng, b62, 18)
		v = base64.StdEncoding.EncodeToString([]byte(arg + ":" + pw))
		return v, []string{v, pw}, nil
	case "b64env":
		// {b64env:NAME}: base64 of a .env file whose NAME line holds a
		// random password; the secret is the whole encoded file.
		if arg == "" {
			return "", nil, fmt.Errorf("needs a variable name")
		}
		pw := pick(rng, b62, 18)
		v = base64.StdEncoding.EncodeToString([]byte("HOST=db.example.test\n" + arg + "=" + pw + "\nPORT=5432\n"))
		return v, []string{v}, nil
	case "pem":
		// {pem:LINES}: a PEM body of LINES lines of 64 base64 characters
		// and a shorter last one, joined by \n.
		lines, err := strconv.Atoi(arg)
		if err != nil || lines < 1 || lines > 100 {
			return "", nil, fmt.Errorf("needs a line count")
		}
		var ls []string
		for range lines {
			ls = append(ls, pick(rng, b64[:64], 64))
		}
		ls = append(ls, pick(rng, b64[:64], 28)+"==")
		return strings.Join(ls, "\n"), ls, nil
	default:
		return "", nil, fmt.Errorf("unknown generator %q", kind)
	}
	return v, []string{v}, nil
}

// Split splits a command line like a simple shell: words at unquoted white
// space; single quotes keep everything; double quotes keep everything but a
// backslash before " \ $ or `; a backslash outside quotes keeps the next
// character. An unterminated quote runs to the end.
func Split(line string) []string {
	var out []string
	var cur strings.Builder
	inWord := false
	quote := byte(0)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case quote == '"':
			if c == '"' {
				quote = 0
			} else if c == '\\' && i+1 < len(line) && strings.IndexByte("\"\\$`", line[i+1]) >= 0 {
				i++
				cur.WriteByte(line[i])
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}

// Survives reports the secrets and fragments of r found in any of the
// haystacks.
func (r Rendered) Survives(haystacks ...string) []string {
	var found []string
	seen := map[string]bool{}
	for _, h := range haystacks {
		for _, s := range append(append([]string{}, r.Secrets...), r.Fragments...) {
			if !seen[s] && len(s) >= 8 && strings.Contains(h, s) {
				seen[s] = true
				found = append(found, s)
			}
		}
	}
	return found
}
