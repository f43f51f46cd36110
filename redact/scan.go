package redact

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/airlockdev/airlock/jsonpointer"
)

// Kinds of finding, which decide how a redaction is reported.
const (
	kindName     = "name"     // after a secret name and a separator
	kindParam    = "param"    // a URL query, fragment or path parameter
	kindCookie   = "cookie"   // a cookie value
	kindUserinfo = "userinfo" // URL userinfo
	kindShape    = "shape"    // a published token format, a webhook path
	kindScheme   = "scheme"   // after an HTTP authentication scheme
	kindPEM      = "pem"      // a private-key block
	kindFlag     = "flag"     // a command-line credential flag's value
	kindEntropy  = "entropy"  // a random word near a secret word
)

// finding is one secret found in a string: the bytes [start, end) are
// replaced; name is the secret's name or shape, for reports.
type finding struct {
	start, end int
	kind, name string
}

// maxScan is the most bytes of one string the scanner reads: a longer
// string is scanned in overlapping windows of this size, so memory stays
// bounded by the string (plus the findings).
const maxScan = 1 << 20

var (
	// pathSecretRE finds a URL path segment and the one after it.
	pathSecretRE = lazyRegexp(`/([A-Za-z_][A-Za-z0-9_.-]{0,63})/([A-Za-z0-9._~-]{8,})`)
	// authorityRE finds a URL's authority (after "scheme://").
	authorityRE = lazyRegexp(`[A-Za-z][A-Za-z0-9+.-]{0,31}:(?:\\?/){2}([^\s/?#<>"'\x60\\]+)`)
	// xmlRE finds an XML element's text content (attributes allowed, the
	// content plain or a CDATA section).
	xmlRE = lazyRegexp(`<([A-Za-z_][A-Za-z0-9_.:-]{0,63})(?:\s[^<>]{0,200})?>(?:<!\[CDATA\[)?([^<\]]{1,1000})(?:\]\]>)?</`)
	// pairJSONRE finds a name and a value given as sibling members:
	// {"name": "DB_PASSWORD", "value": "…"} (Kubernetes env, HAR headers,
	// AWS tags and parameters), in either order of the two names' case.
	pairJSONRE = lazyRegexp(`"(?:[Nn]ame|[Kk]ey|ParameterKey|ParameterName|OptionName|[Vv]ariable)"\s*:\s*"([^"\\\n]{1,128})"\s*,\s*(?:"[Tt]ype"\s*:\s*"[^"\n]{0,64}"\s*,\s*)?"(?:[Vv]alue|ParameterValue|OptionValue)"\s*:\s*"((?:[^"\\\n]|\\.)*)"`)
	// pairYAMLRE finds the same in YAML, as Kubernetes env lists write it:
	// "- name: DB_PASSWORD" and "value: …" on the next line.
	pairYAMLRE = lazyRegexp(`(?m)\bname:[ \t]*["']?([A-Za-z_][A-Za-z0-9_.-]{0,127})["']?[ \t]*\r?\n[ \t]*(?:-[ \t]+)?value:[ \t]*("[^"\r\n]*"|'[^'\r\n]*'|[^\s#][^\r\n#]*)`)
	// pairXMLRE finds a name element and its value element:
	// <name>fs.s3a.secret.key</name><value>…</value> (Hadoop, Spring).
	pairXMLRE = lazyRegexp(`<name>\s*([A-Za-z_][A-Za-z0-9_.-]{0,127})\s*</name>\s*<value>([^<]{1,1000})</value>`)
	// digestRE finds the response of Digest credentials.
	digestRE = lazyRegexp(`(?i)\bdigest\s[^\r\n]{0,1000}?\bresponse="([^"\r\n]{1,256})"`)
	// quotedAfterRE finds a quoted value right after a password word or
	// as the second member of an auth tuple.
	quotedAfterRE = lazyRegexp(`(?i)\b(?:password|passwd|passphrase)\s+(?:is\s+)?["']([^"'\n]{4,128})["']|\bauth\s*=\s*\(\s*["'][^"'\n]{1,128}["']\s*,\s*["']([^"'\n]{1,128})["']`)
	// keyedRE finds a value assigned to a quoted name inside brackets or a
	// call: $config['db_password'] = '…', os.environ["API_KEY"] = "…",
	// define('DB_PASSWORD', '…'), System.setProperty("db.password", "…").
	keyedRE = lazyRegexp(`[\[(]\s*["']([A-Za-z_][A-Za-z0-9_.-]{0,127})["']\s*(?:\]\s*:?=|,)\s*(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)')`)
	// pairAttrRE finds the same as XML attributes: <add key="ApiKey"
	// value="…"/>, <property name="db.password" value="…"/>.
	pairAttrRE = lazyRegexp(`\b(?:name|key)\s*=\s*"([^"\n]{1,128})"[^<>]{0,200}?\bvalue\s*=\s*"([^"\n]*)"`)
	// attrElementRE finds an element named by its key attribute:
	// <entry key="password">…</entry>.
	attrElementRE = lazyRegexp(`<[A-Za-z_][A-Za-z0-9_.:-]{0,63}\s+(?:key|name)\s*=\s*"([^"\n]{1,128})"[^<>]{0,200}>([^<]{1,1000})</`)
	// userFlagRE finds curl's and similar tools' "user:password" flags,
	// the value separate, after "=", or attached ("-uuser:pass").
	userFlagRE = lazyRegexp(`(?:^|[\s'"])(?:(?:-u|-U|--user|--proxy-user|--basic-auth|--auth|--creds|--credentials)(?:=|[ \t]+|["']\s*,\s*["'])|-u)('[^'\n]*'|"[^"\n]*"|[^\s'"-][^\s'"]*)`)
	// flagRE finds a long or short flag and a separate value.
	flagRE = lazyRegexp(`(?:^|[\s'"])--?([A-Za-z][A-Za-z0-9_.-]{0,63})(?:[ \t]+|["']\s*,\s*["'])('[^'\n]*'|"[^"\n]*"|[^\s'"-][^\s'"]*)`)
	// mysqlPassRE finds the MySQL clients' attached password, "-pPASS".
	mysqlPassRE = lazyRegexp(`(?:^|[\s'"])-p([^\s'"-][^\s'"]*|'[^'\n]*'|"[^"\n]*")`)
	// sshpassRE finds "sshpass -p PASS".
	sshpassRE = lazyRegexp(`\bsshpass\b[^\n]*?[ \t]-p[ \t]*('[^'\n]*'|"[^"\n]*"|\S+)`)
	// mysqlClient names the programs whose -p takes an attached password.
	mysqlClient = lazyRegexp(`\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mysqlsh|mysqlpump|mariadb|mariadb-dump|mariadb-admin)\b`)
	// hashLabel ends the text before a digest that is named as one.
	hashLabel = lazyRegexp(`(?i)(?:sha1|sha256|sha384|sha512|sha-1|sha-256|md5|h1|etag|digest|hash|checksum|commit|fingerprint|integrity|id|ids|identifier|trace|traceparent|request|build|ref|deployment|run|job|customer|user|account)["']?\s*[:=#@-]?\s*["']?$`)
)

// scan finds every secret in s, in no particular order (overlaps allowed).
func (r *Redactor) scan(s string) []finding {
	if len(s) <= maxScan {
		return r.scanWindow(s, 0, 0)
	}
	// Windows overlap by 64 KiB so a secret across a boundary is whole
	// in one of them.
	var out []finding
	const overlap = 64 << 10
	for at := 0; at < len(s); at += maxScan - overlap {
		end := min(at+maxScan, len(s))
		out = append(out, r.scanWindow(s[at:end], at, 0)...)
		if end == len(s) {
			break
		}
	}
	return out
}

func (r *Redactor) scanWindow(s string, base, depth int) []finding {
	var out []finding
	add := func(start, end int, kind, name string) {
		if end <= start || placeholder(s[start:end]) {
			return
		}
		if kind != kindShape && kind != kindPEM && notSecret(s[start:end]) {
			return // "$DB_PASS", "${TOKEN}", "<token>", "VALUE"
		}
		out = append(out, finding{base + start, base + end, kind, name})
	}
	r.scanPEM(s, add)
	// One pass over the words: token formats in long words, the
	// credentials after an authentication scheme, random words after a
	// secret word.
	r.scanWords(s, add)
	if strings.Contains(s, "/") {
		// A path segment after a secret-named one: /token/<value>,
		// /api_key/<value>.
		for _, m := range pathSecretRE().FindAllStringSubmatchIndex(s, -1) {
			if r.Secret(s[m[2]:m[3]]) && r.weakValue(s[m[4]:m[5]]) {
				add(m[4], m[5], kindParam, s[m[2]:m[3]])
			}
		}
	}
	if strings.Contains(s, "/services/") || strings.Contains(s, "/api/webhooks/") {
		for _, m := range webhookPaths().FindAllStringSubmatchIndex(s, -1) {
			if m[2] >= 0 {
				add(m[2], m[3], kindShape, "webhook")
			} else {
				add(m[4], m[5], kindShape, "webhook")
			}
		}
	}
	if strings.Contains(s, "://") || strings.Contains(s, `:\/\/`) {
		for _, m := range authorityRE().FindAllStringSubmatchIndex(s, -1) {
			r.userinfo(s, m[2], m[3], add)
		}
	}
	if strings.ContainsAny(s, "=:") {
		r.scanPairs(s, add)
	}
	if strings.Contains(s, "alue") {
		// {"name": "DB_PASSWORD", "value": "…"}, <add key="ApiKey" value="…"/>:
		// a pair whose value is named by a sibling.
		for _, re := range []*regexp.Regexp{pairJSONRE(), pairAttrRE(), pairYAMLRE(), pairXMLRE()} {
			for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
				if name := s[m[2]:m[3]]; r.Secret(name) {
					if a, b := unquoted(s, m[4], m[5]); r.holds(name, strings.TrimSpace(s[a:b])) {
						add(a, a+len(strings.TrimRight(s[a:b], " \t")), kindName, name)
					}
				}
			}
		}
	}
	if strings.ContainsAny(s, "\"'") {
		// `with password "Xy9#kLm2!pQ"`, `auth=("alice", "Al1c3Pw!")`.
		for _, m := range quotedAfterRE().FindAllStringSubmatchIndex(s, -1) {
			a, b := m[2], m[3]
			if a < 0 {
				a, b = m[4], m[5]
			}
			if !notSecret(s[a:b]) && (credentialLike(s[a:b], false) || r.weakValue(s[a:b])) {
				add(a, b, kindName, "password")
			}
		}
	}
	if strings.Contains(s, "Digest ") || strings.Contains(s, "digest ") {
		// RFC 7616: the response (and cnonce) of Digest credentials.
		for _, m := range digestRE().FindAllStringSubmatchIndex(s, -1) {
			add(m[2], m[3], kindScheme, "digest")
		}
	}
	if strings.ContainsAny(s, "[(") {
		for _, m := range keyedRE().FindAllStringSubmatchIndex(s, -1) {
			name := s[m[2]:m[3]]
			a, b := m[4], m[5]
			if a < 0 {
				a, b = m[6], m[7]
			}
			if r.Secret(name) && r.holds(name, s[a:b]) {
				add(a, b, kindName, name)
			}
		}
	}
	if strings.Contains(s, "</") {
		for _, m := range attrElementRE().FindAllStringSubmatchIndex(s, -1) {
			if name := s[m[2]:m[3]]; r.Secret(name) && r.holds(name, s[m[4]:m[5]]) {
				add(m[4], m[5], kindName, name)
			}
		}
		for _, m := range xmlRE().FindAllStringSubmatchIndex(s, -1) {
			if r.Secret(s[m[2]:m[3]]) && r.holds(s[m[2]:m[3]], s[m[4]:m[5]]) {
				add(m[4], m[5], kindName, s[m[2]:m[3]])
			}
		}
	}
	if hasFlag(s) {
		r.scanFlags(s, add)
	}
	r.scanLines(s, add)
	if depth == 0 {
		r.scanEncoded(s, add)
	}
	return out
}

// placeholder reports whether v is Placeholder, alone, followed by
// punctuation only, or followed by the rest of a URL (what an earlier
// redaction left).
func placeholder(v string) bool {
	rest, ok := strings.CutPrefix(v, Placeholder)
	if !ok {
		return false
	}
	if rest != "" && strings.IndexByte("?#&;", rest[0]) >= 0 {
		// What an earlier pass left of a URL parameter: the rest is the
		// URL's, not the value's (so a second pass changes nothing).
		return true
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80 {
			return false
		}
	}
	return true
}

// merge sorts findings and joins overlapping ones, keeping the first's
// kind and name.
func merge(fs []finding) []finding {
	if len(fs) < 2 {
		return fs
	}
	sort.SliceStable(fs, func(i, j int) bool {
		if fs[i].start != fs[j].start {
			return fs[i].start < fs[j].start
		}
		return fs[i].end > fs[j].end
	})
	out := fs[:1]
	for _, f := range fs[1:] {
		last := &out[len(out)-1]
		if f.start < last.end {
			last.end = max(last.end, f.end)
			continue
		}
		out = append(out, f)
	}
	return out
}

// apply replaces each finding's bytes with Placeholder.
func apply(s string, fs []finding) string {
	if len(fs) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	at := 0
	for _, f := range fs {
		b.WriteString(s[at:f.start])
		b.WriteString(Placeholder)
		at = f.end
	}
	b.WriteString(s[at:])
	return b.String()
}

// text redacts s and returns what it found (merged, in order).
func (r *Redactor) text(s string) (string, []finding) {
	fs := merge(r.scan(s))
	return apply(s, fs), fs
}

// Text redacts secrets anywhere in free text (an error message, a command
// line, a header value, a body string, a non-JSON body): see the package
// documentation for what is found. Every byte that is not part of a
// secret is kept; a string with no secret comes back identical.
func (r *Redactor) Text(s string) string {
	out, _ := r.text(s)
	return out
}

// Source redacts the description of where a response came from, as the
// gate's audit record holds it (a URL, a command line, a file path): Text.
// Source does not sanitise: a caller that stores or prints the result
// escapes control characters itself.
func (r *Redactor) Source(src string) string { return r.Text(src) }

// quotedRE finds a quoted value in a validator's or rule's message.
var quotedRE = lazyRegexp(`'[^'\n]*'|"(?:[^"\\\n]|\\.)*"`)

// Message redacts a message about the value at instanceLocation (an RFC
// 6901 JSON Pointer; instance is that value, nil when unknown): what Text
// finds, then the instance itself wherever the message quotes it, when it
// could be a secret: under a secret name (Secret) or one of Pointers, a
// string Text would change, or a word that looks like a credential (at
// least 8 characters mixing letters and digits, or random-looking). A
// validator quotes the value it refuses ("'9fQ…' does not match
// pattern …") without naming the member, so the member's name cannot
// protect it there.
func (r *Redactor) Message(msg, instanceLocation string, instance any) string {
	msg = r.Text(msg)
	secretAt := false
	if p, err := jsonpointer.Parse(instanceLocation); err == nil {
		for n := range p {
			secretAt = secretAt || r.Secret(p[n]) || r.pointerMatch(p[:n+1])
		}
	}
	v, ok := instance.(string)
	if !ok {
		if secretAt {
			// Not a string (or not known): every quoted string goes.
			return quotedRE().ReplaceAllStringFunc(msg, func(q string) string {
				return q[:1] + Placeholder + q[len(q)-1:]
			})
		}
		return msg
	}
	if !(secretAt || r.Text(v) != v || maybeCredential(v)) || v == "" {
		return msg
	}
	if len(v) < 4 {
		// Too short to replace wherever it appears: only where the
		// message quotes it.
		for _, q := range []string{"'" + v + "'", strconv.Quote(v)} {
			msg = strings.ReplaceAll(msg, q, q[:1]+Placeholder+q[len(q)-1:])
		}
		return msg
	}
	msg = strings.ReplaceAll(msg, v, Placeholder)
	if q := strconv.Quote(v); len(q) > 2 {
		msg = strings.ReplaceAll(msg, q[1:len(q)-1], Placeholder)
	}
	return msg
}

// maybeCredential reports whether a value quoted in a message could be a
// credential: one word (not a URL, which Text redacts, nor an email
// address) of at least 8
// characters mixing letters and digits, or of at least 16 characters, or a
// random-looking word.
func maybeCredential(v string) bool {
	if strings.ContainsAny(v, " \t\r\n@") || strings.Contains(v, "://") {
		return false
	}
	if len(v) >= 16 {
		return true
	}
	lower, upper, digit, _ := classes(v)
	return len(v) >= 8 && digit && (lower || upper) || highEntropy(v)
}
