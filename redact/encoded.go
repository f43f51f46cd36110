package redact

import (
	"encoding/base64"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Encoded secrets: a token behind percent, \u or HTML escapes, and base64
// that decodes to text holding one.

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
