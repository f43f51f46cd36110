package redact

import (
	"regexp"
	"strings"
	"sync"
)

// tokenFormat is one published credential format, matched anywhere in a
// string; the whole match is the secret.
type tokenFormat struct {
	label string
	re    string
}

// tokenFormats are the credential formats redacted under any name and in
// any text. Each comes from its issuer's published format (a fixed prefix
// and the length and alphabet of the random part); lengths are lower
// bounds where issuers have grown them.
var tokenFormats = []tokenFormat{
	{"aws access key id", `(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}`},
	{"openai or anthropic key", `sk-(?:proj-|svcacct-|admin-|ant-(?:api|admin|oat)\d\d-)?[A-Za-z0-9_-]{20,}`},
	{"stripe key", `(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}`},
	{"stripe webhook secret", `whsec_[A-Za-z0-9+/=]{24,}`},
	{"api key", `(?:sk|rk)[-_][A-Za-z0-9_-]{16,}`},
	{"github token", `(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}`},
	{"github token", `github_pat_[A-Za-z0-9_]{40,}`},
	{"gitlab token", `gl(?:pat|dt|ft|rt|soat|cbt|imt|ptt|oas|agent|ffct)-[A-Za-z0-9_-]{20,}`},
	{"gitlab runner token", `GR1348941[A-Za-z0-9_-]{20,}`},
	{"slack token", `xox[abposrec]-[A-Za-z0-9-]{10,}`},
	{"slack app token", `xapp-\d-[A-Z0-9]+-\d+-[A-Za-z0-9]+`},
	{"google api key", `AIza[0-9A-Za-z_-]{35}`},
	{"google oauth token", `ya29\.[0-9A-Za-z_-]{20,}`},
	{"google oauth client secret", `GOCSPX-[A-Za-z0-9_-]{20,}`},
	{"npm token", `npm_[A-Za-z0-9]{36}`},
	{"pypi token", `pypi-[A-Za-z0-9_-]{50,}`},
	{"sendgrid key", `SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}`},
	{"twilio key", `SK[0-9a-fA-F]{32}`},
	{"mailgun key", `key-[0-9a-zA-Z]{32}`},
	{"shopify token", `shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}`},
	{"hugging face token", `hf_[A-Za-z0-9]{30,}`},
	{"digitalocean token", `do[opr]_v1_[a-f0-9]{64}`},
	{"databricks token", `dapi[a-f0-9]{32}(?:-\d+)?`},
	{"vault token", `hv[sbr]\.[A-Za-z0-9_-]{24,}`},
	{"doppler token", `dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}`},
	{"linear key", `lin_(?:api|oauth)_[A-Za-z0-9]{32,}`},
	{"postman key", `PMAK-[a-f0-9]{24}-[a-f0-9]{34}`},
	{"grafana token", `gl(?:c|sa)_[A-Za-z0-9+/_=]{32,}`},
	{"new relic key", `NRAK-[A-Z0-9]{27}`},
	{"atlassian token", `ATATT3[A-Za-z0-9_=-]{60,}`},
	{"telegram bot token", `(?:bot)?\d{8,10}:[A-Za-z0-9_-]{35}`},
	{"square token", `(?:sq0atp|sq0csp|EAAA)[A-Za-z0-9_-]{22,}`},
	{"age secret key", `AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}`},
	{"firebase server key", `AAAA[A-Za-z0-9_-]{7}:[A-Za-z0-9_-]{100,}`},
	{"heroku key", `HRKU-[A-Za-z0-9_-]{20,}`},
	{"jwt", `eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)?`},
	{"jwe", `eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`},
}

// tokenRE matches any of tokenFormats (without capture groups, so the
// regexp engine need not track them); tokenREs()[i] matches exactly
// tokenFormats[i], to name a match. Both are compiled at their first use,
// tokenREs only once a token has been found.
var tokenRE = sync.OnceValue(func() *regexp.Regexp {
	parts := make([]string, len(tokenFormats))
	for i, f := range tokenFormats {
		parts[i] = "(?:" + f.re + ")"
	}
	return regexp.MustCompile(strings.Join(parts, "|"))
})

var tokenREs = sync.OnceValue(func() []*regexp.Regexp {
	each := make([]*regexp.Regexp, len(tokenFormats))
	for i, f := range tokenFormats {
		each[i] = regexp.MustCompile("^(?:" + f.re + ")$")
	}
	return each
})

// lazyRegexp returns expr's regular expression compiled at the first call
// (once: every call returns the same *regexp.Regexp), so that a program
// that never redacts compiles none of the package's expressions. An expr
// that does not compile panics, as regexp.MustCompile does, at every call;
// TestRegexpsCompileLazily compiles each one.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// tokenHints are literals one of which every token format contains; a
// word with none of them is not searched with tokenRE.
var tokenHints = []string{
	"AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "APKA",
	"sk-", "sk_", "rk-", "rk_", "pk_", "whsec_", "gh", "github_pat_", "gl", "GR1348941", "xox", "xapp-",
	"AIza", "ya29.", "GOCSPX-", "npm_", "pypi-", "SG.", "SK", "key-", "shp", "hf_", "_v1_", "dapi",
	"hv", "dp.", "lin_", "PMAK-", "NRAK-", "ATATT3", "sq0", "EAAA", "AGE-SECRET-KEY-", "AAAA",
	"HRKU-", "eyJ",
}

// mayToken is a cheap test that a word could hold a token format: one of
// tokenHints, or eight digits before a ":" (a chat bot token).
func mayToken(w string) bool {
	for _, h := range tokenHints {
		if strings.Contains(w, h) {
			return true
		}
	}
	digits := 0
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == ':' && digits >= 8:
			return true
		default:
			digits = 0
		}
	}
	return false
}

// tokenLabel names the format of a token tokenRE matched.
func tokenLabel(tok string) string {
	for i, re := range tokenREs() {
		if re.MatchString(tok) {
			return tokenFormats[i].label
		}
	}
	return "token"
}

// webhookPaths are URL paths whose last segment is the secret.
var webhookPaths = lazyRegexp(`/services/T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/([A-Za-z0-9]{16,})|/api/webhooks/\d{10,}/([A-Za-z0-9_-]{40,})`)

// pemBegin starts a PEM private-key block (RFC 7468 labels: PRIVATE KEY,
// RSA/EC/DSA/OPENSSH/ENCRYPTED PRIVATE KEY; PGP PRIVATE KEY BLOCK).
var pemBegin = lazyRegexp(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----`)

// SecretValue reports whether s, trimmed, is a credential as a whole: one
// of the published token formats, or an HTTP credential ("Bearer …",
// "Basic …") or a PEM private key.
func SecretValue(s string) bool {
	s = strings.TrimSpace(s)
	if len(s) < 12 {
		return false
	}
	if loc := tokenRE().FindStringIndex(s); loc != nil && loc[0] == 0 && loc[1] == len(s) {
		return true
	}
	if pemBegin().MatchString(s) && strings.HasPrefix(s, "-----BEGIN") {
		return true
	}
	if _, end, ok := schemeCredential(s, 0); ok && end == len(s) {
		return true
	}
	return false
}

// credentialLike reports whether a word could be a credential rather than
// an ordinary word: at least 8 characters, and letters mixed with digits,
// or with symbols of a base64 or token alphabet, or both cases over a long
// word. lenient (after "Bearer" or "Basic") also takes any 20 characters.
func credentialLike(v string, lenient bool) bool {
	if len(v) < 8 || v == Placeholder {
		return false
	}
	lower, upper, digit, sym := classes(v)
	letter := lower || upper
	switch {
	case digit && letter:
		return true
	case sym && letter && len(v) >= 12:
		return true
	case lower && upper && len(v) >= 16:
		return true
	}
	return lenient && len(v) >= 20
}

// classes reports which kinds of ASCII byte v holds: lower-case letters,
// upper-case letters, digits, anything else.
func classes(v string) (lower, upper, digit, other bool) {
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= '0' && c <= '9':
			digit = true
		default:
			other = true
		}
	}
	return
}

// highEntropy reports whether a word looks random: 16 or more characters,
// letters and digits mixed, and a Shannon entropy of at least 3 bits per
// character; UUIDs, bare hex digests of 40 or 64 digits (git and SHA-256
// ids), paths and module names (a "/" and a "."), and ids of three or more
// parts joined by "-", "_" or "." are not.
func highEntropy(w string) bool {
	if len(w) < 16 || len(w) > 4096 {
		return false
	}
	if uuidRE().MatchString(w) || (len(w) == 40 || len(w) == 64) && isHex(w) || strings.HasPrefix(w, "0x") && isHex(w[2:]) || labelledHash().MatchString(w) {
		return false // a UUID, a digest, an address, "sha512-…", "h1:…"
	}
	if strings.Contains(w, "/") && strings.Contains(w, ".") || shortParts(w) {
		// A path, module or host ("golang.org/x/oauth2", "docs/a/b.md"),
		// or an id of short separated parts (GHSA-76c9-3jph-rj3q, a
		// timestamp).
		return false
	}
	var digit, letter bool
	var counts [256]int
	for i := 0; i < len(w); i++ {
		c := w[i]
		counts[c]++
		digit = digit || c >= '0' && c <= '9'
		letter = letter || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	if !digit || !letter {
		return false
	}
	return entropy(counts[:], len(w)) >= 3.0
}

// shortParts reports whether w is three or more parts joined by "-", "_"
// or ".", none longer than 12 characters.
func shortParts(w string) bool {
	parts := strings.FieldsFunc(w, func(c rune) bool { return c == '-' || c == '_' || c == '.' })
	if len(parts) < 3 {
		return false
	}
	for _, p := range parts {
		if len(p) > 12 {
			return false
		}
	}
	return true
}

// labelledHash matches a digest written with its algorithm: SRI
// integrity ("sha512-…"), Go sums ("h1:…"), "sha256:…".
var labelledHash = lazyRegexp(`^(?i:sha1|sha256|sha384|sha512|md5|h1)[-:]`)

var uuidRE = lazyRegexp(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func isHex(w string) bool {
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
