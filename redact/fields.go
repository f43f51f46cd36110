package redact

import (
	"net/http"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// alwaysSecretHeaders are redacted whatever Names says.
var alwaysSecretHeaders = []string{"authorization", "proxy-authorization", "cookie", "set-cookie"}

// nonSecretHeaders carry a secret-looking word but no secret: keys that
// are random by design and public.
var nonSecretHeaders = []string{"idempotency-key", "sec-websocket-key", "sec-websocket-accept", "x-cache-key", "etag"}

func nonSecretHeader(name string) bool {
	return slices.Contains(nonSecretHeaders, strings.ToLower(name))
}

// extraHeader reports whether name is one of Headers.
func (r *Redactor) extraHeader(name string) bool {
	for _, h := range r.Headers {
		if strings.EqualFold(h, name) {
			return true
		}
	}
	return false
}

func (r *Redactor) secretHeader(name string) bool {
	l := strings.ToLower(name)
	if slices.Contains(alwaysSecretHeaders, l) {
		return true
	}
	return r.extraHeader(name) || r.Secret(name)
}

// HeaderValue redacts one field value of header name: the credentials of
// Authorization and Proxy-Authorization (the scheme is kept: "Bearer
// REDACTED"), every cookie value of Cookie and the value of Set-Cookie's
// cookie (names and attributes kept), the whole value of any other header
// whose name looks secret (Secret, or Redactor.Headers), and otherwise
// what Text finds in it (a URL's secret parameters in Location, Link or
// Refresh, a token in a custom header). changed says whether anything was
// replaced.
func (r *Redactor) HeaderValue(name, v string) (out string, changed bool) {
	l := strings.ToLower(name)
	switch {
	case l == "authorization" || l == "proxy-authorization":
		t := strings.TrimLeft(v, " \t")
		scheme, cred, ok := strings.Cut(t, " ")
		if ok && len(scheme) <= 16 && strings.TrimSpace(cred) != "" && !strings.ContainsAny(scheme, "=,\"") {
			out = v[:len(v)-len(t)] + scheme + " " + Placeholder
		} else {
			out = Placeholder
		}
	case l == "cookie" || l == "set-cookie":
		var fs []finding
		r.cookies(v, 0, l == "set-cookie", func(a, b int, kind, name string) {
			if b > a && v[a:b] != Placeholder && !notSecret(v[a:b]) {
				fs = append(fs, finding{a, b, kind, name})
			}
		})
		if !strings.Contains(v, "=") {
			fs = []finding{{0, len(v), kindCookie, ""}}
		}
		out = apply(v, fs)
	case r.extraHeader(name) || r.secretHeader(name) && !nonSecretHeader(name) && r.holds(name, v):
		out = Placeholder
	default:
		out = r.Text(v)
	}
	if strings.TrimSpace(v) == "" || v == Placeholder {
		return v, false
	}
	return out, out != v
}

// Header returns h as one value per name (several values joined with ", "),
// each redacted by HeaderValue; one Redaction per name changed, sorted by
// name. where is RedactedHeader or RedactedResponseHeader.
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
		vals := make([]string, len(h[k]))
		changed := false
		for i, v := range h[k] {
			var c bool
			vals[i], c = r.HeaderValue(k, v)
			changed = changed || c
		}
		out[k] = strings.Join(vals, ", ")
		if changed {
			found = append(found, Redaction{Where: where, Name: k})
		}
	}
	return out, found
}

// URL returns raw (an absolute URL or a relative reference, RFC 3986) with
// its secrets replaced by Placeholder, as Text finds them: the password of
// the userinfo (or a user name that is itself a credential), the values of
// query, fragment and path parameters with a secret name whatever the
// separator ("&", ";", "#"), and token-shaped values anywhere; every other
// byte is kept, in order. Each replacement is reported: userinfo as
// Redaction{Where: RedactedUserinfo}, the rest as RedactedQuery with the
// parameter's name (or the token's shape).
func (r *Redactor) URL(raw string) (string, []Redaction) {
	out, fs := r.text(raw)
	var found []Redaction
	for _, f := range fs {
		if f.kind == kindUserinfo {
			if len(found) == 0 || found[len(found)-1].Where != RedactedUserinfo {
				found = append(found, Redaction{Where: RedactedUserinfo})
			}
			continue
		}
		found = append(found, Redaction{Where: RedactedQuery, Name: findingName(f)})
	}
	return out, found
}

// findingName is how a finding is named in a report; never the secret.
func findingName(f finding) string {
	switch {
	case f.name != "" && len(f.name) <= 128:
		return f.name
	case f.kind == kindEntropy:
		return "(random value)"
	}
	return "(" + f.kind + ")"
}

// userFlags take "user:password"; the password is redacted.
var userFlags = []string{"-u", "-U", "--user", "--proxy-user", "--basic-auth", "--creds", "--credentials"}

// headerFlags take a "Name: value" header.
var headerFlags = []string{"-H", "--header", "--proxy-header"}

// Argv returns a command line with its secrets replaced, one argument at a
// time: the value of a secret-named flag, attached ("--token=…",
// "-password=…") or the next argument ("--password …"); the password of
// "user:password" after -u, --user and --proxy-user (attached or next);
// the header after -H or --header ("Authorization: Bearer REDACTED",
// "X-Api-Key: REDACTED", by HeaderValue); the attached password of the
// MySQL clients' -p ("-pREDACTED"), and sshpass's -p; and whatever Text
// finds in any argument (NAME=value assignments, URLs, tokens). One
// Redaction per argument changed; argv is not modified.
func (r *Redactor) Argv(argv []string) ([]string, []Redaction) {
	out := slices.Clone(argv)
	var found []Redaction
	mysql := len(argv) > 0 && mysqlClient().MatchString(filepath.Base(argv[0]))
	sshpass := len(argv) > 0 && filepath.Base(argv[0]) == "sshpass"
	pending := "" // what the previous flag expects: "secret", "user", "header"
	for i, a := range argv {
		want := pending
		pending = ""
		v := a
		switch {
		case want == "positional" && !strings.HasPrefix(a, "-"):
			v = Placeholder
		case want == "secret" && !strings.HasPrefix(a, "-") && notSecret(a):
		case want == "secret" && !strings.HasPrefix(a, "-"):
			v = Placeholder
			if p, ok := passArg(a); ok {
				v = a
				if p >= 0 {
					v = a[:p] + Placeholder
				}
			}
		case want == "user":
			v = userPass(a)
		case want == "header":
			v = r.headerArg(a)
		case !strings.HasPrefix(a, "-") && i > 0 && configName(a) && r.strong(a) && i+1 < len(argv) && !passThrough(argv[i-1]):
			// "aws configure set aws_secret_access_key KEY": a
			// secret-named word of several words, then its value.
			pending = "positional"
		case strings.HasPrefix(a, "-") && len(a) > 1:
			name, val, hasValue := strings.Cut(a, "=")
			bare := strings.TrimLeft(name, "-")
			switch {
			case slices.Contains(userFlags, name):
				if hasValue {
					v = name + "=" + userPass(val)
				} else {
					pending = "user"
				}
			case slices.Contains(headerFlags, name):
				if hasValue {
					v = name + "=" + r.headerArg(val)
				} else {
					pending = "header"
				}
			case strings.HasPrefix(a, "-H") && len(a) > 2 && !strings.HasPrefix(a, "--"):
				v = "-H" + r.headerArg(a[2:])
			case strings.HasPrefix(a, "-u") && len(a) > 2 && !strings.HasPrefix(a, "--") && strings.Contains(a, ":"):
				v = "-u" + userPass(a[2:])
			case strings.HasPrefix(a, "-p") && len(a) > 2 && !strings.HasPrefix(a, "--") && (mysql || credentialLike(a[2:], false)):
				v = "-p" + Placeholder
			case a == "-p" && sshpass, programFlag(argv[0], bare):
				pending = "secret"
			case bare != "" && r.Secret(bare):
				if hasValue {
					if val != "" {
						v = name + "=" + Placeholder
					}
				} else {
					pending = "secret"
				}
			}
		}
		out[i] = v
	}
	// What Text finds in the command line as a whole (arguments joined
	// by spaces, so "--password PASS", "set aws_secret_access_key KEY"
	// and NAME=value are judged with their neighbours) is redacted in
	// each argument it touches.
	line := strings.Join(out, " ")
	starts := make([]int, len(out))
	at := 0
	for i, a := range out {
		starts[i] = at
		at += len(a) + 1
	}
	var perArg = make([][]finding, len(out))
	for _, f := range merge(r.scan(line)) {
		for i := range out {
			a, b := max(f.start, starts[i]), min(f.end, starts[i]+len(out[i]))
			if a < b {
				perArg[i] = append(perArg[i], finding{a - starts[i], b - starts[i], f.kind, f.name})
			}
		}
	}
	for i := range out {
		out[i] = apply(out[i], perArg[i])
		if out[i] != argv[i] {
			idx := i
			found = append(found, Redaction{Where: RedactedArgv, Index: &idx})
		}
	}
	return out, found
}

// passThrough reports whether a flag passes a variable by name only
// ("docker run -e AWS_SECRET_ACCESS_KEY image"): the next argument is
// not its value.
func passThrough(flag string) bool {
	switch flag {
	case "-e", "--env", "--build-arg", "--secret", "--env-file", "-v", "--var":
		return true
	}
	return false
}

// configName reports whether a is written like a configuration key or an
// environment variable, not a program's word: an identifier of several
// words joined by "_" or "." (aws_secret_access_key, API_TOKEN,
// db.password), or such a key at the end of an npm-style path
// (//registry.example/:_authToken).
func configName(a string) bool {
	if i := strings.LastIndexAny(a, ":/"); i >= 0 && strings.HasPrefix(a, "//") {
		a = strings.TrimLeft(a[i+1:], "_")
		return a != "" && isIdentifier(a)
	}
	return isIdentifier(a) && strings.ContainsAny(a, "_.") && len(nameWords(a)) > 1
}

// isIdentifier reports whether a is a bare name: letters, digits, "_",
// "." and "-", starting with a letter.
func isIdentifier(a string) bool {
	if a == "" || !(a[0] >= 'a' && a[0] <= 'z' || a[0] >= 'A' && a[0] <= 'Z') {
		return false
	}
	for i := 0; i < len(a); i++ {
		if !isNameByte(a[i]) {
			return false
		}
	}
	return true
}

// userPass redacts the password of "user:password".
func userPass(v string) string {
	if strings.Contains(v, "://") {
		return v // a URL: its userinfo is Text's
	}
	user, pass, ok := strings.Cut(v, ":")
	if !ok || pass == "" || pass == Placeholder {
		return v
	}
	return user + ":" + Placeholder
}

// headerArg redacts a "Name: value" header given on a command line.
func (r *Redactor) headerArg(a string) string {
	name, v, ok := strings.Cut(a, ":")
	if !ok || name == "" || strings.ContainsAny(name, " \t") {
		return r.Text(a)
	}
	red, changed := r.HeaderValue(name, strings.TrimLeft(v, " \t"))
	if !changed {
		return a
	}
	return name + ":" + v[:len(v)-len(strings.TrimLeft(v, " \t"))] + red
}
