// Package redact is airlock's one secret policy: what counts as a secret in
// a header, a URL, a command line, free text and a JSON body, and how it is
// replaced. The gate's audit record (the upstream source and messages) and
// the recorder (headers, URLs, argv, bodies written into fixtures) both use
// it, so a value the recorder redacts never appears in an audit record
// either.
//
// Every entry point ends in one scanner (Redactor.Text), which finds
// secrets anywhere inside a string:
//
//   - by name: the value after a secret-looking name and "=", ":" or "=>"
//     ("API_TOKEN=…", "X-Api-Key: …", `"password": "…"`, "pwd=…"), the
//     value of a secret query, fragment or path parameter after "?", "&",
//     ";" or "#", every cookie value after "Cookie:", the first after
//     "Set-Cookie:", and the content of a secret-named XML element;
//   - by shape: the published formats of tokenFormats (cloud keys, "sk-"
//     keys, GitHub, GitLab, Slack, Stripe, npm, PyPI, Google, SendGrid,
//     Twilio, Hugging Face, Vault, … tokens; JWTs), the credential after an
//     HTTP authentication scheme ("Bearer …", "Basic …"), URL userinfo, the
//     body of a PEM private-key block;
//   - on the command line: "-u user:pass", "--user user:pass" (the
//     password), "-pPASS" of the MySQL clients, "--password PASS" and any
//     other secret-named flag with its value attached or next;
//   - in configuration and code: name/value pair objects and attributes,
//     YAML block scalars, TOML multi-line strings, .netrc entries,
//     directives, SQL passwords, names in brackets and calls;
//   - encoded: a word that holds a secret once its percent, \u or HTML
//     escapes are decoded, base64 that decodes to text holding one;
//   - by entropy: a random-looking word of 16 or more characters among the
//     three words after a secret-looking word on its line ("api key is
//     9fQ…"), or six after a password word, where a human password will
//     do ("the password for user deploy is Summer2024!").
//
// A name is judged by its last word ("AUTH_DB_PASSWORD" holds a secret,
// "token_type" describes one); weak words ("key", "session", "cookie")
// hold one only when the value could be a credential; and some values are
// never secrets (placeholders, references, paths, versions, code).
//
// Only the secret part is replaced, by Placeholder (in a JSON body, a
// value under a secret member name becomes a placeholder of the same JSON
// type); every other byte is kept, so a string without secrets comes back
// identical. Ids, hashes, timestamps and UUIDs are not secrets: the
// entropy rule skips UUIDs, hex digests and labelled hashes.
package redact

import (
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/airlockdev/airlock/jsonpointer"
)

// Placeholder is the string that replaces a redacted secret.
const Placeholder = "REDACTED"

// DefaultSecretNames are the words that make a member name, header name,
// query parameter, cookie or command-line flag look secret (see
// Redactor.Secret).
var DefaultSecretNames = []string{
	"token", "secret", "password", "passwd", "passphrase", "pass", "pwd", "key", "apikey",
	"credential", "creds", "auth", "authorization", "cookie", "session", "sess", "sessionid",
	"sid", "signature", "sig", "jwt", "bearer", "otp", "privatekey", "accountkey", "sas",
}

// secretSuffixes make a one-word name secret when it ends with one of them
// ("PGPASSWORD", "csrftoken", "PHPSESSID", "JSESSIONID", "xapikey").
var secretSuffixes = []string{
	"password", "passwd", "passphrase", "secret", "token", "apikey", "sessionid", "sessid", "credentials", "credential",
}

// questionWords start names that hold a yes or no about a secret:
// "has_password", "is_secret", "requires_token".
var questionWords = []string{"has", "is", "are", "can", "should", "must", "require", "requires", "required", "needs", "allow", "allows", "use", "uses", "enable", "enabled", "no", "with", "without", "show", "hide", "supports"}

// usageWords, last in a name or before "tokens", make it count or describe
// secrets: "token_count", "pass_rate", "max_tokens", "prompt_tokens".
var usageWords = []string{
	"count", "counts", "total", "max", "min", "used", "usage", "remaining", "prompt", "completion",
	"input", "output", "cached", "reasoning", "limit", "limits", "public", "pub", "rate", "ratio", "percent",
}

// inertWords, last in a name, make it describe a secret rather than hold
// one: "token_type", "password_hint", "key_file", "auth_url",
// "auth_source", "session_ttl", "password_set" are not secret, while
// "database_password" and "AUTH_DB_PASSWORD" are.
var inertWords = []string{
	"type", "types", "kind", "hint", "hints", "file", "files", "path", "dir", "directory", "env", "stdin",
	"name", "names", "length", "len", "size", "url", "uri", "endpoint", "endpoints", "method", "methods",
	"mode", "format", "algorithm", "alg", "scheme", "policy", "location", "domain", "ttl", "expiry",
	"expires", "expiration", "expired", "lifetime", "timeout", "required", "enabled", "present", "provided", "status", "version", "helper", "store",
	"field", "label", "prefix", "last4", "fingerprint", "source", "mechanism", "provider", "server",
	"host", "realm", "database", "db", "service", "backend", "plugin", "strategy", "flow", "state",
	"scanning", "protection", "rotation", "rotated", "manager", "detection", "alert", "alerts", "rule", "rules",
	"reference", "ref", "refs", "metadata", "settings", "schedule", "changed", "updated", "created", "reset",
	"at", "in", "on", "by", "set", "requirements", "requirement", "strength", "complexity", "policies", "mask",
	"issuer", "audience", "scope", "scopes", "claims", "claim", "subject", "kid", "arn", "label", "placeholder",
}

// idOK lets "id" stay a secret-naming word with these: "session_id" and
// "sid" are secret although "key_id" and "token_id" are not.
var idOK = []string{"session", "sess", "jsession"}

// Where a redaction happened (Redaction.Where).
const (
	RedactedHeader         = "header"
	RedactedResponseHeader = "response_header"
	RedactedQuery          = "query"
	RedactedUserinfo       = "userinfo"
	RedactedArgv           = "argv"
	RedactedArguments      = "arguments"
	RedactedBody           = "body"
	// RedactedContext is a request context value (Name: its key).
	RedactedContext = "context"
)

// Redaction says what was replaced (for airlock record: before anything
// reached disk).
type Redaction struct {
	// Where is one of the Redacted* constants.
	Where string `yaml:"where"`
	// Name is the header or query parameter name; for a URL secret found
	// by shape, the shape ("github token", "jwt", …).
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
// DefaultSecretNames and no pointers; it is safe for concurrent use.
type Redactor struct {
	// Names are the secret words; nil means DefaultSecretNames. A name is
	// secret when one of its words (split at non-letters and digits and at
	// camelCase humps, compared case-insensitively) or the whole name with
	// separators removed equals one of them, or one of them plus "s", or
	// is one word ending in a long secret word (secretSuffixes:
	// "PGPASSWORD", "csrftoken", "PHPSESSID"); unless another of its words
	// says it describes a secret rather than holds one (inertWords:
	// "token_type", "key_file", "max_tokens"). "api_key", "X-Api-Key",
	// "accessToken", "API_TOKEN", "credentials", "pwd", "X-Tenant-Pass"
	// and "connect.sid" are secret with the defaults; "monkey", "author",
	// "keyboard", "passenger" and "tokenizer" are not.
	Names []string
	// Pointers are explicit body locations to redact whatever their names;
	// a "*" token matches any single token.
	Pointers []jsonpointer.Pointer
	// Headers are extra header names (case-insensitive) to redact.
	Headers []string
}

// Secret reports whether a member, header, parameter, cookie or flag name
// looks secret (see Names).
func (r *Redactor) Secret(name string) bool {
	if len(name) > 256 {
		name = name[:256]
	}
	match := r.matchName
	words := nameWords(name)
	secret := false
	for _, w := range words {
		if match(w) {
			secret = true
			break
		}
	}
	if !secret && len(words) > 1 {
		secret = match(strings.Join(words, ""))
	}
	if !secret && r.Names == nil {
		for _, w := range words {
			secret = secret || hasSecretSuffix(w)
		}
	}
	if !secret {
		return false
	}
	// A name describes a secret rather than holds one when its last word
	// says what about it ("token_type", "key_file", "token_count",
	// "password_hint"), when it asks a yes-or-no question ("has_password",
	// "is_secret"), or when it counts tokens ("max_tokens"). A word in the
	// middle does not: "AUTH_DB_PASSWORD", "keyStorePassword" and
	// "PASSWORD_RESET_TOKEN" hold one.
	last := words[len(words)-1]
	if len(words) > 1 {
		if slices.Contains(inertWords, last) || slices.Contains(usageWords, last) {
			return false
		}
		if last == "id" || last == "ids" {
			// "key_id" names which key; "id_token" and "session_id" hold one.
			prev := words[len(words)-2]
			if !slices.Contains(idOK, prev) && !strings.HasSuffix(prev, "session") {
				return false
			}
		}
		if slices.Contains(questionWords, words[0]) {
			return false
		}
		if last == "tokens" && slices.Contains(usageWords, words[len(words)-2]) {
			return false
		}
		if last == "key" || last == "keys" {
			if prev := words[len(words)-2]; prev == "public" || prev == "pub" {
				return false
			}
		}
	}
	return true
}

// hasSecretSuffix reports whether one word ends in a long secret word.
func hasSecretSuffix(w string) bool {
	for _, s := range secretSuffixes {
		if len(w) > len(s) && strings.HasSuffix(w, s) {
			return true
		}
	}
	return false
}

// weakNames are secret words that also name ordinary things (a map key, a
// signature line, a session object, a cookie package, a pass count). A
// name whose only secret words are weak — "key", "X-Cache-Key", "path-key",
// "signature", "pass_rate" — holds a secret only when its value looks like
// a credential; unless a qualifier before the weak word makes it strong
// ("api_key", "access_key", "private_key", "client_secret").
var weakNames = []string{"key", "keys", "sig", "sigs", "signature", "signatures", "session", "sessions", "sess", "sid", "auth", "cookie", "cookies", "pass"}

// keyQualifiers make the weak word after them strong.
var keyQualifiers = []string{
	"api", "access", "private", "secret", "client", "master", "signing", "encryption", "auth", "session",
	"license", "app", "consumer", "shared", "storage", "account", "admin", "root", "service", "deploy",
	"webhook", "subscription", "primary", "secondary", "x", "hmac", "aws", "gcp", "azure", "stripe", "user",
}

// strong reports whether a secret name holds a secret whatever its value:
// a configured name (Names), a word that is not weak, or a weak word after
// a qualifier.
func (r *Redactor) strong(name string) bool {
	if r.Names != nil {
		return true
	}
	words := nameWords(name)
	for i, w := range words {
		if !slices.Contains(weakNames, w) && (r.matchName(w) || hasSecretSuffix(w)) {
			return true
		}
		if slices.Contains(weakNames, w) && i > 0 && slices.Contains(keyQualifiers, words[i-1]) {
			return true
		}
		if (w == "pass" || w == "auth" || w == "sid") && i == len(words)-1 && i > 0 {
			return true // DB_PASS, SMTP_PASS, REDIS_AUTH
		}
	}
	return len(words) > 1 && r.matchName(strings.Join(words, "")) && !slices.Contains(weakNames, strings.Join(words, ""))
}

// matchName reports whether one word is a secret word (Names, or one of
// them plus "s").
func (r *Redactor) matchName(w string) bool {
	names := r.Names
	if names == nil {
		names = DefaultSecretNames
	}
	for _, n := range names {
		if strings.EqualFold(w, n) || len(w) == len(n)+1 && w[len(w)-1] == 's' && strings.EqualFold(w[:len(n)], n) {
			return true
		}
	}
	return false
}

// holds reports whether a value v under the secret-looking name holds a
// secret: not a placeholder, a version, a type or an expression, and,
// under a weak name, a value that could be a credential (weakValue).
func (r *Redactor) holds(name, v string) bool {
	if notSecret(v) {
		return false
	}
	return r.strong(name) || r.weakValue(v)
}

// notSecret reports whether a value cannot be a secret whatever its name:
// empty, a documentation placeholder, a shell expansion, a version
// specification ("^9.0.2", "==2.8.0"), a bare authentication scheme, or
// code (a call, an index, a block).
func notSecret(v string) bool {
	t := strings.TrimSpace(v)
	switch {
	case t == "" || placeholderValue(t):
		return true
	case strings.HasPrefix(t, "$(") || strings.HasPrefix(t, "${") || strings.HasPrefix(t, "`"):
		return true
	case strings.HasPrefix(t, "[{") || strings.HasPrefix(t, "[\"") || t == "[" || t == "{":
		return true // the start of a structure written out, not a value
	case placeholderValue(strings.Trim(t, "[]()<>{}")) || strings.Trim(t, "[]()<>{}") == Placeholder:
		return true // "[REDACTED]", "<VALUE>"
	case refRE().MatchString(t) && len(t) <= 64 && !tokenRE().MatchString(t):
		return true // a reference: var.db_password, cfg.APIKey, process.env.SECRET
	case pathValueRE().MatchString(t) && !highEntropy(t):
		return true // a file: ./pw.txt, ../tokens, /etc/app/pw, server.key
	case slices.Contains(configWords, strings.ToLower(t)):
		return true // read, write, none, enabled, await…
	}
	if l := strings.ToLower(t); strings.Contains(l, "your-") || strings.Contains(l, "-here") || strings.Contains(l, "changeme") ||
		strings.Contains(l, "xxxx") || strings.Contains(t, "...") || strings.Contains(t, "…") {
		return true // a documentation placeholder: your-key-here, sk_test_..., ghp_xxxx
	}
	switch {
	case versionRE().MatchString(t):
		return true
	case slices.Contains(schemeWords, strings.ToLower(t)):
		return true
	case strings.ContainsAny(t, "([{") && !strings.ContainsAny(t, " \t") && codeRE().MatchString(t):
		return true
	}
	return false
}

var (
	// versionRE matches a version or a version range: 9.2, ^9.0.2,
	// ==2.8.0, >=1.4,<2, ~> 3.1, v1.2.3-rc.1.
	versionRE = lazyRegexp(`^(?:(?:[\^~<>=!]=?\s?|~>\s?)+v?\d+(?:\.\d+){0,3}|v?\d+(?:\.\d+){1,3})(?:[-+][0-9A-Za-z.-]+)?(?:,\s?(?:[<>=!~^]=?)\s?\d+(?:\.\d+){0,3})*$`)
	// codeRE matches an expression: a name followed by a call or an index,
	// os.environ["X"], req.headers.authorization.split(.
	codeRE = lazyRegexp(`^[A-Za-z_$][A-Za-z0-9_$.]*[\[(]`)
	// refRE matches a dotted reference to a variable or setting.
	refRE = lazyRegexp(`^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+;?$`)
	// pathValueRE matches a file path or a file name with a key or
	// configuration extension.
	pathValueRE = lazyRegexp(`^(?:\.{1,2}/|~/)[^\s]*$|^(?:/[\w.-]{1,64}){2,}/?$|^[\w.-]+\.(?:pem|key|crt|cer|csr|der|p12|pfx|jks|keystore|pub|asc|gpg|txt|json|ya?ml|env|conf|cfg|ini|toml|properties)$`)
)

// configWords are values that name a setting or a keyword, not a secret:
// GitHub's permission levels, switches, and the keywords of code.
var configWords = []string{
	"read", "write", "none", "enabled", "disabled", "required", "optional", "auto", "yes", "no", "on", "off",
	"await", "new", "function", "lambda", "async", "yield", "self", "this", "return", "const", "let", "var",
	"string", "int", "bool", "boolean", "number", "object", "array", "bytes", "str",
}

// weakValue reports whether v, under a weak name, holds a secret: one
// word of 6 or more characters mixing letters and digits, or of 10 or more
// letters of both cases, or that looks like a credential or random, or a
// secret Text finds.
func (r *Redactor) weakValue(v string) bool {
	if strings.ContainsAny(v, " \t\r\n") {
		return r.Text(v) != v
	}
	lower, upper, digit, other := classes(v)
	letter := lower || upper
	if r.Secret(v) && len(v) <= 64 || (len(v) == 40 || len(v) == 64) && isHex(v) || strings.ContainsAny(v, "/") && strings.Contains(v, ".") {
		// A secret *name* ("DBPassword", the value of a ParameterKey), a
		// digest, a path: not a secret value.
		return false
	}
	separated := strings.ContainsAny(v, "-_./:#")
	return len(v) >= 6 && digit && letter && !separated || len(v) >= 10 && lower && upper && !other ||
		credentialLike(v, false) && !separated || highEntropy(v) || r.Text(v) != v
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
