package importer

import (
	"net/url"
	"strings"
)

// The format checks Infer applies to every string of a location: a format
// is written only when every sample's string passes, and each check is
// narrower than the checker airlock asserts for that format, so the
// inferred schema admits every sample.

// isUUID: 8-4-4-4-12 hexadecimal digits (RFC 9562 §4's string form).
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
			continue
		}
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// isEmail is deliberately narrower than every email checker airlock has:
// a dot-atom local part of letters, digits and !#$%&'*+-/=?^_`{|}~ (no
// leading, trailing or doubled dot, 1–64 bytes), "@", a host name of at
// least two dot-separated labels of letters, digits and hyphens (1–63
// bytes, no hyphen at either end), at most 254 bytes in all. What it
// accepts every checker accepts, so a format it infers never refuses a
// sample.
func isEmail(s string) bool {
	if len(s) > 254 {
		return false
	}
	local, host, ok := strings.Cut(s, "@")
	if !ok || len(local) == 0 || len(local) > 64 || strings.Contains(host, "@") {
		return false
	}
	for _, part := range strings.Split(local, ".") {
		if part == "" {
			return false
		}
		for i := 0; i < len(part); i++ {
			c := part[i]
			if !(alnum(c) || strings.IndexByte("!#$%&'*+-/=?^_`{|}~", c) >= 0) {
				return false
			}
		}
	}
	return isHostName(host, 2)
}

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }

// isHostName: at least minLabels labels of 1–63 letters, digits and
// hyphens, no hyphen at either end, at most 253 bytes.
func isHostName(h string, minLabels int) bool {
	if len(h) == 0 || len(h) > 253 {
		return false
	}
	labels := strings.Split(h, ".")
	if len(labels) < minLabels {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			if !alnum(l[i]) && l[i] != '-' {
				return false
			}
		}
	}
	return true
}

// isURI is deliberately narrow too: an http or https URL with a host name
// (no user info, no port beyond digits, no IP literal), of printable ASCII
// without spaces, backslashes or quotes, that Go's net/url parses.
func isURI(s string) bool {
	if len(s) > 2048 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= 0x20 || c >= 0x7f || strings.IndexByte("\\\"<>{}|^`", c) >= 0 {
			return false
		}
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || u.Opaque != "" {
		return false
	}
	host := u.Hostname()
	if !isHostName(host, 1) {
		return false
	}
	if p := u.Port(); p != "" {
		for i := 0; i < len(p); i++ {
			if p[i] < '0' || p[i] > '9' {
				return false
			}
		}
	}
	return true
}
