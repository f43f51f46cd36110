package redact

import (
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
)

// Secrets by name: the value after a secret-looking name and a separator,
// URL parameters, authentication schemes and cookies.

// scanPairs finds the value after each secret name and separator.
func (r *Redactor) scanPairs(s string, add func(int, int, string, string)) {
	// covered is the end of the last value taken: a name inside it is
	// part of that value, which keeps the scan linear in len(s) however
	// many names repeat ("password=password=…", "Cookie: Cookie: …").
	covered := 0
	hasURL := strings.Contains(s, "://")
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '=' && c != ':' {
			continue
		}
		sepEnd := i + 1
		if c == '=' && sepEnd < len(s) && s[sepEnd] == '>' || c == ':' && sepEnd < len(s) && s[sepEnd] == '=' {
			sepEnd++ // "=>", ":="
		}
		if c == '=' && i > 0 && s[i-1] == ':' {
			continue // the "=" of ":=", judged at its ":"
		}
		if c == '=' {
			r.param(s, i, add)
		}
		if c == '=' && (sepEnd < len(s) && s[sepEnd] == '=' || i > 0 && strings.IndexByte("=!<>", s[i-1]) >= 0) {
			continue // a comparison: ==, ===, !=, <=, >=
		}
		nameStart, name, ok := nameBefore(s, i)
		if !ok || nameStart < covered {
			continue
		}
		if c == ':' && (prevByte(s, nameStart) == '/' || prevByte(s, nameStart) == '"' && sepEnd < len(s) && s[sepEnd] != ' ' && s[sepEnd] != '"') {
			// A path ("auth/jwt.go:88", "/oauth/token:") or a colon inside
			// a quoted string ("token:refresh").
			continue
		}
		if c == ':' && strings.HasPrefix(s[sepEnd:], "//") {
			continue // a URL's scheme
		}
		if c == ':' && nameStart >= 3 && s[nameStart-3:nameStart] == "://" {
			continue // a URL's user name: userinfo's to judge
		}
		vstart := sepEnd
		for vstart < len(s) && (s[vstart] == ' ' || s[vstart] == '\t') {
			vstart++
		}
		if c == ':' && (strings.EqualFold(name, "cookie") || strings.EqualFold(name, "set-cookie")) {
			covered = r.cookies(s, vstart, strings.EqualFold(name, "set-cookie"), add)
			continue
		}
		if !r.Secret(name) {
			continue
		}
		if q := prevByte(s, nameStart); (q == '"' || q == '\'') && vstart < len(s) && s[vstart] == q {
			continue // "Password: " — a name and colon inside a string
		}
		if vstart < len(s) && (s[vstart] == '!' || s[vstart] == '&') {
			// A YAML tag or anchor ("!!str", "&pw"): the value follows it.
			if sp := strings.IndexAny(s[vstart:min(len(s), vstart+128)], " \t\n"); sp > 0 && s[vstart+sp] != '\n' {
				vstart += sp + 1
			}
		}
		if c == ':' && (vstart >= len(s) || s[vstart] == '\n' || s[vstart] == '\r') {
			// "password:" and the value on the next, deeper line.
			nl := vstart
			if nl < len(s) && s[nl] == '\r' {
				nl++
			}
			if nl < len(s) && s[nl] == '\n' && nl+1 < len(s) && (s[nl+1] == ' ' || s[nl+1] == '\t') {
				k := nl + 1
				for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
					k++
				}
				if line := firstLine(s[k:min(len(s), k+1024)]); !strings.HasPrefix(line, "-") && !strings.Contains(line, ": ") && !strings.HasSuffix(strings.TrimRight(line, " \t"), ":") {
					vstart = k
				}
			}
		}
		start, end := value(s, vstart)
		if start == vstart && lineStart(s, nameStart) && r.strong(name) {
			// NAME=value at the start of a line (.env, a header line):
			// the value is the rest of the line, whatever it holds
			// ("Xy9&kLm2 pQ", "t=1492774577,v1=5257…"), less a comment,
			// unless the rest holds more pairs or code.
			lineEnd := vstart + len(firstLine(s[vstart:]))
			rest := s[end:lineEnd]
			if i := strings.Index(rest, " #"); i >= 0 {
				rest = rest[:i]
			}
			header := c == ':' && strings.Contains(name, "-")
			if header && !strings.ContainsAny(rest, "\"'`(") || !strings.ContainsAny(rest, "=\"'`(") && !strings.Contains(rest, ": ") {
				end += len(rest)
				for end > start && strings.IndexByte(" \t\r", s[end-1]) >= 0 {
					end--
				}
			}
		}
		covered = end
		if strings.IndexByte("?&#", prevByte(s, nameStart)) >= 0 || prevByte(s, nameStart) == ';' && hasURL {
			// A URL parameter: its value also ends at "#" and "?".
			if i := strings.IndexAny(s[start:end], "#?"); i >= 0 {
				end = start + i
			}
		}
		v := s[start:end]
		if a, b, ok := schemeCredential(s, start); ok {
			// "Authorization: Bearer …": the scheme stays.
			add(a, b, kindName, name)
			covered = max(covered, b)
			continue
		}
		switch strings.ToLower(v) {
		case "", "null", "nil", "none", "true", "false", "undefined", "[]", "{}":
			continue
		}
		if start == vstart && blockIndicator(v) {
			continue // a YAML block scalar: scanLines takes its lines
		}
		if placeholderValue(v) {
			continue
		}
		unquoted := start == vstart
		if l := strings.ToLower(name); (l == "authorization" || l == "proxy-authorization") && !r.weakValue(v) {
			continue // "Authorization: role-based." is prose; credentials come with a scheme
		}
		if !r.holds(name, v) {
			// "key: value", "session: expired", key="ApiKey": a weak
			// name takes only a value that could be a credential; no
			// name makes a placeholder, version or expression secret.
			continue
		}
		if c == ':' && unquoted && prose(s, v, end) {
			// "Bad credentials: token ghp_…": a word of prose, not a value.
			continue
		}
		if p, ok := passArg(v); ok {
			// openssl's "pass:SECRET"; "env:VAR" and "file:PATH" hold none.
			if p >= 0 {
				add(start+p, end, kindName, name)
			}
			continue
		}
		add(start, end, kindName, name)
	}
}

// isNameByte reports whether c may be in a bare name: letters, digits and
// _ . $ -.
func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '$' || c == '-'
}

// nameBefore finds the name before the separator at s[sep] (white space
// between them allowed): a bare name (a letter, _, $ or @, then letters,
// digits and _ . $ -, at most 128 bytes, not inside a longer word) or a
// quoted one ("…" or '…', at most 64 bytes, the same characters and
// spaces). start is where the name (or its opening quote) begins.
func nameBefore(s string, sep int) (start int, name string, ok bool) {
	j := sep
	for j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') {
		j--
	}
	if j == 0 {
		return 0, "", false
	}
	if j >= 2 && s[j-1] == '"' && s[j-2] == '\\' {
		// An escaped quote, once or more: JSON inside a JSON string or a
		// shell word, \"password\": \"…\", \\\"password\\\": ….
		bs := 0
		for j-2-bs >= 0 && s[j-2-bs] == '\\' && bs < 8 {
			bs++
		}
		k := j - 2 - bs
		for k >= 0 && j-2-bs-k <= 64 && (isNameByte(s[k]) || s[k] == ' ') {
			k--
		}
		open := k - bs // where the opening quote's backslashes start
		if k < 0 || s[k] != '"' || open < 0 || strings.Repeat("\\", bs) != s[open:k] || k+1 >= j-1-bs || !firstNameByte(s[k+1]) {
			return 0, "", false
		}
		return open, s[k+1 : j-1-bs], true
	}
	if q := s[j-1]; q == '"' || q == '\'' {
		k := j - 2
		for k >= 0 && j-2-k <= 64 && (isNameByte(s[k]) || s[k] == ' ' || s[k] == '@') {
			k--
		}
		if k < 0 || s[k] != q || k+1 >= j-1 || !firstNameByte(s[k+1]) {
			return 0, "", false
		}
		return k, s[k+1 : j-1], true
	}
	k := j
	for k > 0 && j-k < 128 && isNameByte(s[k-1]) {
		k--
	}
	if k > 0 && j-k >= 128 && isNameByte(s[k-1]) {
		return 0, "", false // longer than a name
	}
	for k < j && (s[k] == '-' || s[k] == '.') {
		k++ // "--password=": the dashes are the flag's
	}
	if k > 0 && s[k-1] == '@' {
		k--
	}
	if k == j || !firstNameByte(s[k]) {
		return 0, "", false
	}
	return k, s[k:j], true
}

func firstNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$' || c == '@'
}

// param finds a URL parameter "name=value" whose "=" is at s[eq] and whose
// name follows "?", "&", ";" or "#", and adds its value when the name (URL
// unescaped: "tok+en", "pass%5Fword") is secret.
func (r *Redactor) param(s string, eq int, add func(int, int, string, string)) {
	k := eq
	for k > 0 && eq-k < 128 && strings.IndexByte("=&;#?\"'<> \t\r\n", s[k-1]) < 0 {
		k--
	}
	if k == 0 || k == eq || strings.IndexByte("?&;#", s[k-1]) < 0 {
		return
	}
	name := s[k:eq]
	if n, err := url.QueryUnescape(name); err == nil {
		name = n
	}
	// An OAuth authorization code (RFC 6749 §4.1.2) is a credential in a
	// URL parameter, though "code" names ordinary things elsewhere.
	code := r.Names == nil && strings.EqualFold(name, "code")
	if !r.Secret(name) && !code {
		return
	}
	end := eq + 1
	for end < len(s) && strings.IndexByte("&;#?\"'<>)] \t\r\n", s[end]) < 0 {
		end++
	}
	if notSecret(s[eq+1 : end]) {
		return
	}
	add(eq+1, end, kindParam, name)
}

// schemeWords are the HTTP authentication schemes (and the words used
// like them) whose credentials follow a space.
var schemeWords = []string{"bearer", "basic", "digest", "negotiate", "token", "bot", "apikey", "api-key"}

// schemeCredential finds "Scheme credentials" at s[i:]: a scheme word,
// spaces or tabs, and a token68-like run of at least 8 characters that
// could be a credential; it returns the credentials' range.
func schemeCredential(s string, i int) (start, end int, ok bool) {
	w := i
	for w < len(s) && w-i <= 10 && (isNameByte(s[w])) {
		w++
	}
	if w == i || w >= len(s) || (s[w] != ' ' && s[w] != '\t') {
		return 0, 0, false
	}
	scheme := strings.ToLower(s[i:w])
	if !slices.Contains(schemeWords, scheme) {
		return 0, 0, false
	}
	a := w
	for a < len(s) && (s[a] == ' ' || s[a] == '\t') {
		a++
	}
	b := a
	for b < len(s) && isToken68(s[b]) {
		b++
	}
	if b-a < 8 {
		return 0, 0, false
	}
	if scheme == "basic" {
		// RFC 7617: base64 of "user-id:password".
		if dec, err := base64.StdEncoding.DecodeString(s[a:b]); err == nil && strings.Contains(string(dec), ":") {
			return a, b, true
		}
	}
	if !credentialLike(s[a:b], scheme == "bearer" || scheme == "basic") {
		return 0, 0, false
	}
	return a, b, true
}

func isToken68(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._~+/=-", c) >= 0
}

// blockIndicator reports whether v is a YAML block scalar's header: "|",
// ">", with a chomping indicator or an indentation digit.
func blockIndicator(v string) bool {
	if v == "" || v[0] != '|' && v[0] != '>' {
		return false
	}
	return len(strings.Trim(v[1:], "+-0123456789")) == 0 && len(v) <= 3
}

// placeholderValue reports whether v stands for a value in documentation
// rather than being one: "VALUE", "JSON", "YOUR_TOKEN", "…", "...",
// "<token>", "${TOKEN}", "$TOKEN", "%TOKEN%", "{{ token }}", "***".
func placeholderValue(v string) bool {
	switch {
	case v == "…" || v == "..." || strings.Trim(v, "*x") == "" && len(v) >= 3:
		return true
	case len(v) >= 2 && (v[0] == '<' && v[len(v)-1] == '>' || strings.HasPrefix(v, "${") ||
		strings.HasPrefix(v, "{{") || v[0] == '%' && v[len(v)-1] == '%'):
		return true
	case len(v) >= 2 && v[0] == '$' && strings.Trim(v[1:], "ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789") == "":
		return true
	}
	if len(v) > 24 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !(c >= 'A' && c <= 'Z' || c == '_') {
			return false
		}
	}
	return len(v) >= 3
}

// lineStart reports whether the name at s[i] starts its line, after
// indentation, "export " or "- ".
func lineStart(s string, i int) bool {
	// Look back at most 32 bytes: the scan stays linear however long the
	// line.
	lo := max(0, i-32)
	j := strings.LastIndexByte(s[lo:i], '\n')
	if j < 0 && lo > 0 {
		return false
	}
	before := strings.TrimLeft(s[lo+j+1:i], " \t")
	return before == "" || before == "export " || before == "- " || before == "set "
}

// firstLine returns s up to its first line break.
func firstLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}

// prose reports whether v, an unquoted value after "name:", is a word of a
// sentence rather than a value: letters only, and more text follows on the
// same line.
func prose(s, v string, end int) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	rest := s[end:min(len(s), end+256)] // bounded: a long line costs no more
	if i := strings.IndexAny(rest, "\r\n"); i >= 0 {
		rest = rest[:i]
	}
	return strings.TrimSpace(strings.Trim(rest, ".,;)")) != ""
}

// passArg recognises OpenSSL's pass phrase arguments: "pass:SECRET" (the
// secret starts at p), and "env:VAR", "file:PATH", "fd:N", "stdin" (no
// secret: p is -1).
func passArg(v string) (p int, ok bool) {
	switch {
	case strings.HasPrefix(v, "pass:"):
		return len("pass:"), true
	case strings.HasPrefix(v, "env:"), strings.HasPrefix(v, "file:"), strings.HasPrefix(v, "fd:"), v == "stdin":
		return -1, true
	}
	return 0, false
}

// value returns the value that starts at s[i:]: inside quotes when quoted
// (to the closing quote on the same line), else up to white space or one
// of , ; & " ' < > ) ] } `.
func value(s string, i int) (int, int) {
	if i >= len(s) {
		return i, i
	}
	if strings.HasPrefix(s[i:], `"""`) || strings.HasPrefix(s[i:], "'''") {
		// A TOML multi-line string: to the closing triple quote.
		end := strings.Index(s[i+3:], s[i:i+3])
		if end < 0 {
			end = len(s) - i - 3
		}
		return i + 3, i + 3 + end
	}
	if s[i] == '\\' {
		// Escaped quotes open the value (\" or \\\" and so on): it ends
		// at the next same run of backslashes and quote on the line.
		bs := 0
		for i+bs < len(s) && s[i+bs] == '\\' && bs < 8 {
			bs++
		}
		if i+bs < len(s) && (s[i+bs] == '"' || s[i+bs] == '\'') {
			opener := s[i : i+bs+1]
			end := strings.Index(s[i+bs+1:], opener)
			if end < 0 {
				end = len(firstLine(s[i+bs+1:]))
			} else if nl := strings.IndexAny(s[i+bs+1:i+bs+1+end], "\r\n"); nl >= 0 {
				end = nl
			}
			return i + bs + 1, i + bs + 1 + end
		}
	}
	if q := s[i]; q == '"' || q == '\'' {
		for j := i + 1; j < len(s); j++ {
			switch s[j] {
			case '\\':
				j++
			case '\n':
				return i + 1, j
			case q:
				return i + 1, j
			}
		}
		return i + 1, len(s)
	}
	j := i
	for j < len(s) && strings.IndexByte(" \t\r\n,;&\"'<>)]}`", s[j]) < 0 {
		j++
	}
	return i, j
}

// cookies finds cookie values after "Cookie:" (every one) or
// "Set-Cookie:" (the first; the rest are attributes), to the end of the
// line.
func (r *Redactor) cookies(s string, i int, set bool, add func(int, int, string, string)) (end int) {
	// RFC 6265 §4.2.1: cookie-pair *( "; " cookie-pair ); a value holds
	// no white space, DQUOTE (except around it), comma, semicolon or
	// backslash, so the list ends at the first byte that breaks the
	// grammar — a closing quote, a space before the next argument.
	at := i
	for {
		for at < len(s) && s[at] == ' ' {
			at++
		}
		n := at
		for n < len(s) && strings.IndexByte("=; \t\r\n\"',", s[n]) < 0 {
			n++
		}
		if n == at || n >= len(s) || s[n] != '=' {
			return at
		}
		name := s[at:n]
		v := n + 1
		quoted := v < len(s) && s[v] == '"'
		if quoted {
			v++
		}
		e := v
		for e < len(s) && strings.IndexByte("; \t\r\n\"',\\", s[e]) < 0 {
			e++
		}
		add(v, e, kindCookie, name)
		if quoted && e < len(s) && s[e] == '"' {
			e++
		}
		if set || e >= len(s) || s[e] != ';' {
			return e
		}
		at = e + 1
	}
}

func prevByte(s string, i int) byte {
	if i == 0 {
		return 0
	}
	return s[i-1]
}

// unquoted returns the range inside the quotes of s[a:b], if quoted.
func unquoted(s string, a, b int) (int, int) {
	if b-a >= 2 && (s[a] == '\'' || s[a] == '"') && s[b-1] == s[a] {
		return a + 1, b - 1
	}
	return a, b
}
