package redact

import (
	"math"
	"slices"
	"strings"
)

// Secrets by shape and entropy: token formats in words, PEM blocks, URL
// userinfo, and random words after a secret word.

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
	for _, m := range pemBegin().FindAllStringIndex(s, -1) {
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
			for _, m := range tokenRE().FindAllStringIndex(word, -1) {
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
				if random && !hashLabel().MatchString(s[max(0, off-24):off]) {
					add(off, extendWord(s, off+len(part)), kindEntropy, "")
				}
			}
		}
		if window > 0 {
			window--
		}
		if len(word) <= 40 && r.secretWord(word) && (!weakKey(word) || slices.Contains(keyQualifiers, strings.ToLower(prevWord))) {
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
	if w == "" || slices.Contains(weakTriggers, strings.ToLower(w)) {
		return false
	}
	if !r.hasNameHint(w) {
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
