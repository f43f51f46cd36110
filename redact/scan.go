package redact

import (
	"encoding/base64"
	"math"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

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
	pathSecretRE = regexp.MustCompile(`/([A-Za-z_][A-Za-z0-9_.-]{0,63})/([A-Za-z0-9._~-]{8,})`)
	// authorityRE finds a URL's authority (after "scheme://").
	authorityRE = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]{0,31}:(?:\\?/){2}([^\s/?#<>"'\x60\\]+)`)
	// schemeRE finds an HTTP authentication scheme and its credentials.
	schemeRE = regexp.MustCompile(`(?i)\b(bearer|basic|digest|negotiate|token|bot|apikey|api-key)[ \t]+([A-Za-z0-9._~+/=-]{8,})`)
	// xmlRE finds an XML element's text content (attributes allowed, the
	// content plain or a CDATA section).
	xmlRE = regexp.MustCompile(`<([A-Za-z_][A-Za-z0-9_.:-]{0,63})(?:\s[^<>]{0,200})?>(?:<!\[CDATA\[)?([^<\]]{1,1000})(?:\]\]>)?</`)
	// pairJSONRE finds a name and a value given as sibling members:
	// {"name": "DB_PASSWORD", "value": "…"} (Kubernetes env, HAR headers,
	// AWS tags and parameters), in either order of the two names' case.
	pairJSONRE = regexp.MustCompile(`"(?:[Nn]ame|[Kk]ey|ParameterKey|ParameterName|OptionName|[Vv]ariable)"\s*:\s*"([^"\\\n]{1,128})"\s*,\s*(?:"[Tt]ype"\s*:\s*"[^"\n]{0,64}"\s*,\s*)?"(?:[Vv]alue|ParameterValue|OptionValue)"\s*:\s*"((?:[^"\\\n]|\\.)*)"`)
	// pairYAMLRE finds the same in YAML, as Kubernetes env lists write it:
	// "- name: DB_PASSWORD" and "value: …" on the next line.
	pairYAMLRE = regexp.MustCompile(`(?m)\bname:[ \t]*["']?([A-Za-z_][A-Za-z0-9_.-]{0,127})["']?[ \t]*\r?\n[ \t]*(?:-[ \t]+)?value:[ \t]*("[^"\r\n]*"|'[^'\r\n]*'|[^\s#][^\r\n#]*)`)
	// pairXMLRE finds a name element and its value element:
	// <name>fs.s3a.secret.key</name><value>…</value> (Hadoop, Spring).
	pairXMLRE = regexp.MustCompile(`<name>\s*([A-Za-z_][A-Za-z0-9_.-]{0,127})\s*</name>\s*<value>([^<]{1,1000})</value>`)
	// quotedAfterRE finds a quoted value right after a password word or
	// as the second member of an auth tuple.
	quotedAfterRE = regexp.MustCompile(`(?i)\b(?:password|passwd|passphrase)\s+(?:is\s+)?["']([^"'\n]{4,128})["']|\bauth\s*=\s*\(\s*["'][^"'\n]{1,128}["']\s*,\s*["']([^"'\n]{1,128})["']`)
	// keyedRE finds a value assigned to a quoted name inside brackets or a
	// call: $config['db_password'] = '…', os.environ["API_KEY"] = "…",
	// define('DB_PASSWORD', '…'), System.setProperty("db.password", "…").
	keyedRE = regexp.MustCompile(`[\[(]\s*["']([A-Za-z_][A-Za-z0-9_.-]{0,127})["']\s*(?:\]\s*:?=|,)\s*(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)')`)
	// pairAttrRE finds the same as XML attributes: <add key="ApiKey"
	// value="…"/>, <property name="db.password" value="…"/>.
	pairAttrRE = regexp.MustCompile(`\b(?:name|key)\s*=\s*"([^"\n]{1,128})"[^<>]{0,200}?\bvalue\s*=\s*"([^"\n]*)"`)
	// attrElementRE finds an element named by its key attribute:
	// <entry key="password">…</entry>.
	attrElementRE = regexp.MustCompile(`<[A-Za-z_][A-Za-z0-9_.:-]{0,63}\s+(?:key|name)\s*=\s*"([^"\n]{1,128})"[^<>]{0,200}>([^<]{1,1000})</`)
	// userFlagRE finds curl's and similar tools' "user:password" flags,
	// the value separate, after "=", or attached ("-uuser:pass").
	userFlagRE = regexp.MustCompile(`(?:^|[\s'"])(?:(?:-u|-U|--user|--proxy-user|--basic-auth|--auth|--creds|--credentials)(?:=|[ \t]+|["']\s*,\s*["'])|-u)('[^'\n]*'|"[^"\n]*"|[^\s'"-][^\s'"]*)`)
	// flagRE finds a long or short flag and a separate value.
	flagRE = regexp.MustCompile(`(?:^|[\s'"])--?([A-Za-z][A-Za-z0-9_.-]{0,63})(?:[ \t]+|["']\s*,\s*["'])('[^'\n]*'|"[^"\n]*"|[^\s'"-][^\s'"]*)`)
	// mysqlPassRE finds the MySQL clients' attached password, "-pPASS".
	mysqlPassRE = regexp.MustCompile(`(?:^|[\s'"])-p([^\s'"-][^\s'"]*|'[^'\n]*'|"[^"\n]*")`)
	// sshpassRE finds "sshpass -p PASS".
	sshpassRE = regexp.MustCompile(`\bsshpass\b[^\n]*?[ \t]-p[ \t]*('[^'\n]*'|"[^"\n]*"|\S+)`)
	// mysqlClient names the programs whose -p takes an attached password.
	mysqlClient = regexp.MustCompile(`\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mysqlsh|mysqlpump|mariadb|mariadb-dump|mariadb-admin)\b`)
	// hashLabel ends the text before a digest that is named as one.
	hashLabel = regexp.MustCompile(`(?i)(?:sha1|sha256|sha384|sha512|sha-1|sha-256|md5|h1|etag|digest|hash|checksum|commit|fingerprint|integrity|id|ids|identifier|trace|traceparent|request|build|ref|deployment|run|job|customer|user|account)["']?\s*[:=#@-]?\s*["']?$`)
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
		for _, m := range pathSecretRE.FindAllStringSubmatchIndex(s, -1) {
			if r.Secret(s[m[2]:m[3]]) && r.weakValue(s[m[4]:m[5]]) {
				add(m[4], m[5], kindParam, s[m[2]:m[3]])
			}
		}
	}
	if strings.Contains(s, "/services/") || strings.Contains(s, "/api/webhooks/") {
		for _, m := range webhookPaths.FindAllStringSubmatchIndex(s, -1) {
			if m[2] >= 0 {
				add(m[2], m[3], kindShape, "webhook")
			} else {
				add(m[4], m[5], kindShape, "webhook")
			}
		}
	}
	if strings.Contains(s, "://") || strings.Contains(s, `:\/\/`) {
		for _, m := range authorityRE.FindAllStringSubmatchIndex(s, -1) {
			r.userinfo(s, m[2], m[3], add)
		}
	}
	if strings.ContainsAny(s, "=:") {
		r.scanPairs(s, add)
	}
	if strings.Contains(s, "alue") {
		// {"name": "DB_PASSWORD", "value": "…"}, <add key="ApiKey" value="…"/>:
		// a pair whose value is named by a sibling.
		for _, re := range []*regexp.Regexp{pairJSONRE, pairAttrRE, pairYAMLRE, pairXMLRE} {
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
		for _, m := range quotedAfterRE.FindAllStringSubmatchIndex(s, -1) {
			a, b := m[2], m[3]
			if a < 0 {
				a, b = m[4], m[5]
			}
			if !notSecret(s[a:b]) && (credentialLike(s[a:b], false) || r.weakValue(s[a:b])) {
				add(a, b, kindName, "password")
			}
		}
	}
	if strings.ContainsAny(s, "[(") {
		for _, m := range keyedRE.FindAllStringSubmatchIndex(s, -1) {
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
		for _, m := range attrElementRE.FindAllStringSubmatchIndex(s, -1) {
			if name := s[m[2]:m[3]]; r.Secret(name) && r.holds(name, s[m[4]:m[5]]) {
				add(m[4], m[5], kindName, name)
			}
		}
		for _, m := range xmlRE.FindAllStringSubmatchIndex(s, -1) {
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

// scanEncoded finds secrets that are encoded: a word with percent escapes
// (%67hp_…), JSON or JavaScript \u escapes, or HTML character references
// (&#x67;) is decoded, and a word of 24 or more base64 characters that
// decodes to text is decoded; when the decoded form holds a secret, the
// whole encoded word is replaced. One level: what is decoded is not
// decoded again.
func (r *Redactor) scanEncoded(s string, add func(int, int, string, string)) {
	hasEscape := strings.Contains(s, "%") || strings.Contains(s, `\u`) || strings.Contains(s, "&#") || strings.Contains(s, "&quot;")
	var blocks [][]int // base64 blocks, decoded whole: their words are not decoded again
	if strings.Count(s, "\n") >= 1 && len(s) >= 48 {
		// Base64 wrapped onto lines (RFC 2045's 76, the contents APIs'
		// 60): each run of two or more such lines is decoded as one.
		blocks = base64Blocks(s)
		for _, m := range blocks {
			joined := strings.NewReplacer("\r", "", "\n", "", " ", "", "\t", "").Replace(s[m[0]:m[1]])
			if dec, ok := base64Text(joined); ok && len(r.scanWindow(dec, 0, 1)) > 0 {
				end := m[1]
				for end > m[0] && strings.IndexByte("\r\n \t", s[end-1]) >= 0 {
					end--
				}
				add(m[0], end, kindShape, "(base64)")
			}
		}
	}
	for i := 0; i < len(s); {
		if strings.IndexByte(" \t\r\n\"'<>", s[i]) >= 0 {
			i++
			continue
		}
		j := i
		for j < len(s) && strings.IndexByte(" \t\r\n\"'<>", s[j]) < 0 {
			j++
		}
		word := s[i:j]
		if len(word) >= 12 {
			if hasEscape {
				// What the plain scan finds is redacted first, so a URL
				// with escapes keeps its other parameters.
				red := apply(word, merge(r.scanWindow(word, 0, 1)))
				if dec := unescapeWord(red); dec != red && len(r.scanWindow(dec, 0, 1)) > 0 {
					add(i, j, kindShape, "(encoded)")
				}
			}
			for len(blocks) > 0 && blocks[0][1] <= i {
				blocks = blocks[1:]
			}
			inBlock := len(blocks) > 0 && blocks[0][0] <= i
			if dec, ok := base64Text(word); ok && !inBlock && len(r.scanWindow(dec, 0, 1)) > 0 {
				add(i, j, kindShape, "(base64)")
			}
		}
		i = j
	}
}

// base64Blocks finds runs of two or more lines that are base64 alone (16
// to 120 characters, the last at least 4 and maybe padded), as [start,
// end) ranges, in one pass.
func base64Blocks(s string) [][]int {
	var out [][]int
	start, lines, prevFull := -1, 0, false
	flush := func(end int) {
		if lines >= 2 {
			out = append(out, []int{start, end})
		}
		start, lines, prevFull = -1, 0, false
	}
	for at := 0; at <= len(s); {
		end := strings.IndexByte(s[at:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += at
		}
		line := strings.TrimRight(strings.TrimLeft(s[at:end], " \t"), " \t\r")
		n, pad := len(line), len(line)-len(strings.TrimRight(line, "="))
		ok := n >= 4 && n <= 120 && pad <= 2 && isBase64Line(line[:n-pad])
		switch {
		case ok && n-pad >= 16 && (start < 0 || prevFull):
			if start < 0 {
				start = at
			}
			lines++
			prevFull = pad == 0
		case ok && start >= 0 && prevFull:
			lines++
			flush(end)
		default:
			flush(at)
		}
		at = end + 1
	}
	flush(len(s))
	return out
}

func isBase64Line(l string) bool {
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/') {
			return false
		}
	}
	return true
}

// unescapeWord decodes percent escapes, \uXXXX escapes and HTML numeric
// character references in w, keeping anything that does not decode.
func unescapeWord(w string) string {
	var b strings.Builder
	for i := 0; i < len(w); {
		switch {
		case w[i] == '%' && i+2 < len(w) && isHexByte(w[i+1]) && isHexByte(w[i+2]):
			v, _ := strconv.ParseUint(w[i+1:i+3], 16, 8)
			b.WriteByte(byte(v))
			i += 3
		case w[i] == '\\' && i+6 <= len(w) && w[i+1] == 'u' && isHexString(w[i+2:i+6]):
			v, _ := strconv.ParseUint(w[i+2:i+6], 16, 32)
			b.WriteRune(rune(v))
			i += 6
		case w[i] == '&' && namedEntity(w[i:]) != "":
			e := namedEntity(w[i:])
			b.WriteString(entities[e])
			i += len(e)
		case w[i] == '&' && i+3 < len(w) && w[i+1] == '#':
			end := strings.IndexByte(w[i:min(len(w), i+12)], ';')
			if end < 0 || end > 10 {
				b.WriteByte(w[i])
				i++
				continue
			}
			ref := w[i+2 : i+end]
			base := 10
			if ref != "" && (ref[0] == 'x' || ref[0] == 'X') {
				ref, base = ref[1:], 16
			}
			v, err := strconv.ParseUint(ref, base, 32)
			if err != nil {
				b.WriteByte(w[i])
				i++
				continue
			}
			b.WriteRune(rune(v))
			i += end + 1
		default:
			b.WriteByte(w[i])
			i++
		}
	}
	return b.String()
}

// entities are the HTML named character references JSON in attributes
// is written with.
var entities = map[string]string{"&quot;": `"`, "&amp;": "&", "&apos;": "'", "&lt;": "<", "&gt;": ">", "&#39;": "'"}

// namedEntity returns the named reference w starts with, or "".
func namedEntity(w string) string {
	for e := range entities {
		if strings.HasPrefix(w, e) {
			return e
		}
	}
	return ""
}

func isHexByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isHexString(s string) bool {
	if len(s) != 4 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isHexByte(s[i]) {
			return false
		}
	}
	return true
}

// base64Text decodes w when it is 24 or more base64 characters (standard
// or URL alphabet, padded or not) that decode to printable UTF-8 text.
func base64Text(w string) (string, bool) {
	if len(w) < 24 || len(w) > 1<<20 {
		return "", false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_' || c == '=') {
			return "", false
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		dec, err := enc.DecodeString(w)
		if err != nil {
			continue
		}
		if !utf8.Valid(dec) {
			return "", false
		}
		printable := 0
		for _, c := range string(dec) {
			if unicode.IsPrint(c) || c == '\n' || c == '\t' || c == '\r' {
				printable++
			}
		}
		if printable*10 < utf8.RuneCount(dec)*9 {
			return "", false
		}
		return string(dec), true
	}
	return "", false
}

// placeholder reports whether v is Placeholder, alone or followed by
// punctuation only (what an earlier redaction left).
func placeholder(v string) bool {
	rest, ok := strings.CutPrefix(v, Placeholder)
	if !ok {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80 {
			return false
		}
	}
	return true
}

// bounded reports whether s[start:end] is a whole word: no letter or
// digit just before or after it.
func bounded(s string, start, end int) bool {
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
	return (start == 0 || !alnum(s[start-1])) && (end == len(s) || !alnum(s[end]))
}

// scanPEM finds the body of every private-key block: from after its BEGIN
// line to its END line (or the end of s when the block is cut short).
func (r *Redactor) scanPEM(s string, add func(int, int, string, string)) {
	if !strings.Contains(s, "-----BEGIN ") {
		return
	}
	covered := 0
	for _, m := range pemBegin.FindAllStringIndex(s, -1) {
		if m[0] < covered {
			continue
		}
		start := m[1]
		end := len(s)
		if i := strings.Index(s[start:], "-----END "); i >= 0 {
			end = start + i
		}
		covered = end
		for start < end && strings.IndexByte(" \t\r\n", s[start]) >= 0 {
			start++
		}
		for end > start && strings.IndexByte(" \t\r\n", s[end-1]) >= 0 {
			end--
		}
		// A JSON- or shell-escaped newline ("\n") is left out at both ends.
		for strings.HasPrefix(s[start:end], `\n`) {
			start += 2
		}
		for strings.HasSuffix(s[start:end], `\n`) {
			end -= 2
		}
		add(start, end, kindPEM, "private key")
	}
}

// userinfo finds the secret in a URL authority s[a:b]: the password, or a
// user name that is itself a credential (a token used as the user).
func (r *Redactor) userinfo(s string, a, b int, add func(int, int, string, string)) {
	at := strings.LastIndexByte(s[a:b], '@')
	if at < 0 {
		return
	}
	info := s[a : a+at]
	if i := strings.IndexByte(info, ':'); i >= 0 {
		add(a+i+1, a+at, kindUserinfo, "")
		if SecretValue(info[:i]) {
			add(a, a+i, kindUserinfo, "")
		}
		return
	}
	if credentialLike(info, false) && len(info) >= 16 || SecretValue(info) {
		add(a, a+at, kindUserinfo, "")
	}
}

// scanPairs finds the value after each secret name and separator.
func (r *Redactor) scanPairs(s string, add func(int, int, string, string)) {
	// covered is the end of the last value taken: a name inside it is
	// part of that value, which keeps the scan linear in len(s) however
	// many names repeat ("password=password=…", "Cookie: Cookie: …").
	covered := 0
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
		if strings.IndexByte("?&#", prevByte(s, nameStart)) >= 0 || prevByte(s, nameStart) == ';' && strings.Contains(s, "://") {
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
		// An escaped quote: JSON inside a JSON string or a shell word,
		// \"password\": \"…\".
		k := j - 3
		for k >= 1 && j-3-k <= 64 && (isNameByte(s[k]) || s[k] == ' ') {
			k--
		}
		if k < 1 || s[k] != '"' || s[k-1] != '\\' || k+1 >= j-2 || !firstNameByte(s[k+1]) {
			return 0, "", false
		}
		return k - 1, s[k+1 : j-2], true
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
	if !contains(schemeWords, scheme) {
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
	j := strings.LastIndexByte(s[:i], '\n') + 1
	before := strings.TrimLeft(s[j:i], " \t")
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
	if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\'') {
		// An escaped quote opens the value: it ends at the next escaped
		// quote of the same kind on the line.
		end := strings.Index(s[i+2:], s[i:i+2])
		if nl := strings.IndexByte(s[i+2:], '\n'); end < 0 || nl >= 0 && nl < end {
			end = nl
		}
		if end < 0 {
			end = len(s) - i - 2
		}
		return i + 2, i + 2 + end
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

// splitKeep splits s at sep into [start, end) ranges offset by base.
func splitKeep(s string, sep byte, base int) [][2]int {
	var out [][2]int
	at := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == sep {
			out = append(out, [2]int{base + at, base + i})
			at = i + 1
		}
	}
	return out
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

// scanFlags finds credentials given to command-line flags.
func (r *Redactor) scanFlags(s string, add func(int, int, string, string)) {
	for _, m := range userFlagRE.FindAllStringSubmatchIndex(s, -1) {
		a, b := unquoted(s, m[2], m[3])
		if strings.Contains(s[a:b], "://") {
			continue // a URL: its userinfo is judged as a URL's
		}
		if i := strings.IndexByte(s[a:b], ':'); i >= 0 {
			add(a+i+1, b, kindFlag, "user")
		}
	}
	for _, m := range flagRE.FindAllStringSubmatchIndex(s, -1) {
		flag := s[m[2]:m[3]]
		if r.Secret(flag) || programFlag(s, flag) {
			a, b := unquoted(s, m[4], m[5])
			if notSecret(s[a:b]) || !programFlag(s, flag) && !r.holds(flag, s[a:b]) {
				continue
			}
			if p, ok := passArg(s[a:b]); ok {
				if p < 0 {
					continue
				}
				a += p
			}
			add(a, b, kindFlag, flag)
		}
	}
	if mysqlClient.MatchString(s) {
		for _, m := range mysqlPassRE.FindAllStringSubmatchIndex(s, -1) {
			a, b := unquoted(s, m[2], m[3])
			add(a, b, kindFlag, "p")
		}
	} else {
		for _, m := range mysqlPassRE.FindAllStringSubmatchIndex(s, -1) {
			if a, b := unquoted(s, m[2], m[3]); credentialLike(s[a:b], false) {
				add(a, b, kindFlag, "p")
			}
		}
	}
	if strings.Contains(s, "sshpass") {
		for _, m := range sshpassRE.FindAllStringSubmatchIndex(s, -1) {
			a, b := unquoted(s, m[2], m[3])
			add(a, b, kindFlag, "p")
		}
	}
}

var (
	// sqlPassRE finds SQL's quoted passwords: IDENTIFIED BY '…',
	// PASSWORD '…'.
	sqlPassRE = regexp.MustCompile(`(?i)\b(?:identified\s+by|password)\s+'([^'\n]{1,256})'`)
	// directiveRE finds a secret set by a configuration directive with
	// spaces: SetEnv NAME value, ENV NAME value, export NAME value,
	// proxy_set_header NAME value;
	directiveRE = regexp.MustCompile(`(?m)^[ \t]*(?:SetEnv|ENV|env|setenv|set|proxy_set_header|add_header|RequestHeader\s+set|Header\s+set)[ \t]+([A-Za-z_][A-Za-z0-9_.-]{0,127})[ \t]+("[^"\n]*"|'[^'\n]*'|[^\s;]+)`)
	// lineNameRE finds a line that is a name, spaces and one value (a
	// .properties or .pgpass-like setting: "db.password  s3cr3t").
	lineNameRE = regexp.MustCompile(`(?m)^[ \t]*([A-Za-z_][A-Za-z0-9_.-]{0,127})[ \t]+([^\s=:]\S*)[ \t]*;?[ \t]*$`)
	// netrcRE finds the password of a .netrc entry.
	netrcRE = regexp.MustCompile(`\b(?:machine|default)\b[^\n]{0,200}?(?:\r?\n[ \t]+[^\n]{0,200}?){0,4}\bpassword[ \t]+(\S+)`)
	// blockScalarRE finds a YAML block scalar after a name: "password: |".
	blockScalarRE = regexp.MustCompile(`(?m)^([ \t]*)([A-Za-z_"'][A-Za-z0-9_.$ "'-]{0,127}):[ \t]*[|>][+-]?[0-9]?[ \t]*\r?\n`)
)

// scanLines finds secrets in configuration-file lines: SQL passwords,
// directives, "name value" lines, .netrc entries, YAML block scalars and
// TOML multi-line strings under secret names.
func (r *Redactor) scanLines(s string, add func(int, int, string, string)) {
	if strings.Contains(s, "'") {
		for _, m := range sqlPassRE.FindAllStringSubmatchIndex(s, -1) {
			add(m[2], m[3], kindName, "password")
		}
	}
	// Directives and "name value" lines are judged line by line, and
	// only on lines where a secret name may be.
	for at := 0; at < len(s); {
		end := strings.IndexByte(s[at:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += at
		}
		line := s[at:end]
		if len(line) <= 4096 && r.hasNameHint(line) {
			lineAdd := func(a, b int, kind, name string) { add(at+a, at+b, kind, name) }
			for _, m := range directiveRE.FindAllStringSubmatchIndex(line, -1) {
				if name := line[m[2]:m[3]]; r.Secret(name) {
					if a, b := unquoted(line, m[4], m[5]); r.holds(name, line[a:b]) {
						lineAdd(a, b, kindName, name)
					}
				}
			}
			for _, m := range lineNameRE.FindAllStringSubmatchIndex(line, -1) {
				if name := line[m[2]:m[3]]; r.Secret(name) && r.strong(name) && len(nameWords(name)) > 1 && !notSecret(line[m[4]:m[5]]) {
					lineAdd(m[4], m[5], kindName, name)
				}
			}
		}
		at = end + 1
	}
	if strings.Contains(s, "machine") || strings.Contains(s, "default") {
		for _, m := range netrcRE.FindAllStringSubmatchIndex(s, -1) {
			add(m[2], m[3], kindName, "password")
		}
	}
	if strings.ContainsAny(s, "|>") {
		covered := 0
		for _, m := range blockScalarRE.FindAllStringSubmatchIndex(s, -1) {
			name := strings.Trim(s[m[4]:m[5]], `"' `)
			if m[0] < covered || !r.Secret(name) {
				continue
			}
			// The block is every following line indented deeper than
			// the name (blank lines included).
			indent := m[3] - m[2]
			end := m[1]
			for end < len(s) {
				nl := strings.IndexByte(s[end:], '\n')
				line := s[end:]
				if nl >= 0 {
					line = s[end : end+nl]
				}
				trimmed := strings.TrimRight(strings.TrimLeft(line, " \t"), "\r")
				if trimmed != "" && len(line)-len(trimmed) <= indent {
					break
				}
				if nl < 0 {
					end = len(s)
					break
				}
				end += nl + 1
			}
			start := m[1]
			for start < end && (s[start] == ' ' || s[start] == '\t') {
				start++
			}
			for end > start && strings.IndexByte(" \t\r\n", s[end-1]) >= 0 {
				end--
			}
			covered = end
			add(start, end, kindName, name)
		}
	}
}

// programFlags are short flags that take a secret with one program only:
// redis-cli's -a, twine's -p, sshpass's -p, htpasswd -b's password.
var programFlags = map[string][]string{
	"redis-cli":  {"a"},
	"twine":      {"p"},
	"sshpass":    {"p"},
	"keytool":    {"storepass", "keypass", "srcstorepass", "deststorepass"},
	"smbclient":  {"U"},
	"docker":     {"p"},
	"podman":     {"p"},
	"mongosh":    {"p"},
	"mongo":      {"p"},
	"ldapsearch": {"w"},
	"ldapmodify": {"w"},
	"ldapadd":    {"w"},
	"ldapdelete": {"w"},
	"az":         {"p"},
	"sqlcmd":     {"P"},
	"zip":        {"P"},
	"unzip":      {"P"},
	"openssl":    {"k", "passin", "passout"},
	"ldapwhoami": {"w"},
	"jarsigner":  {"storepass", "keypass"},
	"ssh-keygen": {"N", "P"},
	"psexec":     {"p"},
	"http":       {"a"},
	"https":      {"a"},
	"gh":         {"body", "b"},
	"mysqladmin": {"p"},
}

// programFlag reports whether flag takes a secret with a program named in s.
func programFlag(s, flag string) bool {
	for prog, flags := range programFlags {
		if slices.Contains(flags, flag) && strings.Contains(s, prog) {
			return true
		}
	}
	return false
}

// weakTriggers are secret words that prose uses for other things ("auth
// failed for AC…", "session 42"): they do not open the entropy window.
var weakTriggers = []string{"auth", "authorization", "session", "sessions", "sid", "sig", "signature", "cookie", "cookies"}

// scanWords reads s word by word (runs of letters, digits and
// _ . + / = : ~ -): a word of 16 or more bytes is searched for the token
// formats; a scheme word ("Bearer", "Basic", …) is followed by its
// credentials; and a random-looking word among the six words after a
// secret-looking word ("the password for user deploy is 9fQ…", "token
// 9fQ…") is a secret too (the entropy rule; "auth", "session", "sig" and
// "cookie", common in prose, do not open the window).
func (r *Redactor) scanWords(s string, add func(int, int, string, string)) {
	window := 0
	password := false // the window was opened by a password word
	prevWord := ""
	for i := 0; i < len(s); {
		if !isWordByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		word := s[i:j]
		if len(word) >= 16 && mayToken(word) {
			for _, m := range tokenRE.FindAllStringIndex(word, -1) {
				a, b := i+m[0], i+m[1]
				if !bounded(s, a, b) {
					continue
				}
				label := tokenLabel(s[a:b])
				if strings.HasPrefix(s[a:b], "bot") {
					a += len("bot") // the path segment "bot<token>" keeps its prefix
				}
				add(a, b, kindShape, label)
			}
		}
		// A scheme in free text: Bearer and Basic in any case; Token and
		// Bot (Django REST, chat APIs) only capitalised, since "the token
		// 0x…" is prose.
		if len(word) <= 10 && (strings.EqualFold(word, "bearer") || strings.EqualFold(word, "basic") || word == "Token" || word == "Bot" || word == "Digest") {
			if a, b, ok := schemeCredential(s, i); ok {
				add(a, b, kindScheme, strings.ToLower(word))
			}
		}
		// The entropy rule looks at the word without the ":" and "="
		// that join it to its neighbours.
		if window > 0 {
			at := i
			for _, part := range strings.FieldsFunc(word, func(c rune) bool { return c == ':' || c == '=' }) {
				off := at + strings.Index(s[at:j], part)
				at = off + len(part)
				random := highEntropy(part)
				// After "password" (and its kin), a human password will
				// do: 8 or more characters mixing letters and digits.
				if !random && password && credentialLike(part, false) && !pathLike(part) && !placeholderValue(part) {
					random = true
				}
				if random && !hashLabel.MatchString(s[max(0, off-24):off]) {
					add(off, extendWord(s, off+len(part)), kindEntropy, "")
				}
			}
		}
		if window > 0 {
			window--
		}
		if len(word) <= 40 && r.secretWord(word) && (!weakKey(word) || contains(keyQualifiers, strings.ToLower(prevWord))) {
			password = passwordWord(word)
			window = 3
			if password {
				window = 6
			}
		}
		prevWord = word
		// The window does not cross a line.
		if k := strings.IndexByte(s[j:min(len(s), j+64)], '\n'); k >= 0 && window > 0 {
			if nextWord := nextWordStart(s, j); nextWord < 0 || nextWord > j+k {
				window = 0
			}
		}
		i = j
	}
}

// nextWordStart returns where the next word of scanWords after s[j]
// starts, or -1.
func nextWordStart(s string, j int) int {
	for k := j; k < len(s); k++ {
		if isWordByte(s[k]) {
			return k
		}
	}
	return -1
}

// extendWord extends a secret that ends at s[end] over the symbols a
// password may hold ("Summer2024!?#", "Tr0ub4dor&3"), up to white space,
// a quote, a backslash, a bracket, a comma or a semicolon, leaving a
// closing "." or ":" of the sentence before white space or the end.
func extendWord(s string, end int) int {
	e := end
	for e < len(s) && strings.IndexByte(" \t\r\n\"'`<>\\[]{}(),;", s[e]) < 0 && e-end < 64 {
		e++
	}
	if e > end && strings.IndexByte(".,;:)]}", s[e-1]) >= 0 && (e == len(s) || strings.IndexByte(" \t\r\n\"'`", s[e]) >= 0) {
		e--
	}
	return e
}

// weakKey reports whether a word is "key" or "keys" alone: it opens the
// entropy window only after a qualifier ("api key", "secret key"), not
// after "public", "cache" or "sort".
func weakKey(w string) bool {
	words := nameWords(w)
	return len(words) == 1 && (words[0] == "key" || words[0] == "keys")
}

// passwordWord reports whether a word names a password: its last word is
// password, passwd, pwd or passphrase.
func passwordWord(w string) bool {
	words := nameWords(w)
	if len(words) == 0 {
		return false
	}
	switch last := words[len(words)-1]; last {
	case "password", "passwd", "pwd", "passphrase", "passwords":
		return true
	default:
		return strings.HasSuffix(last, "password")
	}
}

// pathLike reports whether a word is a path, module or host name.
func pathLike(w string) bool {
	return strings.Contains(w, "/") || strings.Count(w, ".") >= 1 && !strings.ContainsAny(w, "+=")
}

// isWordByte reports whether c is part of a word for scanWords.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_.+/=:~-", c) >= 0
}

// secretWord reports whether a word of prose opens the entropy window.
func (r *Redactor) secretWord(w string) bool {
	w = strings.Trim(w, ".:=,-")
	if w == "" || contains(weakTriggers, strings.ToLower(w)) {
		return false
	}
	if r.Names == nil && !mayName(w) {
		return false
	}
	return r.Secret(w)
}

// nameHints are lower-case fragments every default secret name contains
// one of; a word without any is not looked at further.
var nameHints = []string{"tok", "secret", "pass", "pwd", "key", "cred", "auth", "cookie", "sess", "sid", "sig", "jwt", "bearer", "otp", "sas"}

// hasNameHint reports whether s may hold a secret name anywhere (any of
// nameHints, ASCII case-insensitively; always true with configured Names).
func (r *Redactor) hasNameHint(s string) bool {
	if r.Names != nil {
		return true
	}
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if c < 'a' || c > 'z' {
			continue
		}
		for _, h := range nameHints {
			if len(s)-i >= len(h) && strings.EqualFold(s[i:i+len(h)], h) {
				return true
			}
		}
	}
	return false
}

// mayName is a cheap test that a word could be a default secret name.
func mayName(w string) bool {
	var buf [40]byte
	n := copy(buf[:], w)
	for i := 0; i < n; i++ {
		if c := buf[i]; c >= 'A' && c <= 'Z' {
			buf[i] = c + 'a' - 'A'
		}
	}
	l := string(buf[:n])
	for _, h := range nameHints {
		if strings.Contains(l, h) {
			return true
		}
	}
	return false
}

// hasFlag reports whether s holds something like a command-line flag: a
// "-" at its start or after white space or a quote.
func hasFlag(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '-' && (i == 0 || strings.IndexByte(" \t\n'\"", s[i-1]) >= 0) {
			return true
		}
	}
	return false
}

// entropy is the Shannon entropy, in bits per character, of a string of n
// characters with the given character counts.
func entropy(counts []int, n int) float64 {
	var h float64
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / float64(n)
			h -= p * math.Log2(p)
		}
	}
	return h
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
var quotedRE = regexp.MustCompile(`'[^'\n]*'|"(?:[^"\\\n]|\\.)*"`)

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
			return quotedRE.ReplaceAllStringFunc(msg, func(q string) string {
				return q[:1] + Placeholder + q[len(q)-1:]
			})
		}
		return msg
	}
	if len(v) < 4 || !(secretAt || r.Text(v) != v || maybeCredential(v)) {
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
