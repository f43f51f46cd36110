package redact

import (
	"net/url"
	"regexp"
	"strings"
)

// urlInText finds URL-looking words in free text: a scheme, "://", and
// everything up to the next white space.
var urlInText = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://\S+`)

// userinfo finds the userinfo of a URL-like string: what lies between "://"
// and an "@" before the first "/", "?" or "#".
var userinfo = regexp.MustCompile(`(://)[^/?#@\s]*(@)`)

// param finds "name=value" pairs after "?", "&", ";" or "#".
var param = regexp.MustCompile(`([?&;#])([^=&;#\s]*)=([^&;#\s]*)`)

// Source redacts the description of where a response came from, as the
// gate's audit record holds it: an absolute URL is redacted by URL, anything
// else (a command line, a file path, a URL that does not parse) by Text.
// Source does not sanitise: a caller that stores or prints the result
// escapes control characters itself.
func (r *Redactor) Source(src string) string {
	if u, err := url.Parse(src); err == nil && u.Scheme != "" && u.Host != "" {
		red, _ := r.URL(src)
		return red
	}
	return r.Text(src)
}

// Text redacts secrets in free text (an error message, a command line): a
// word that parses as an absolute URL is redacted by URL; in a word that
// looks like a URL but does not parse, the userinfo becomes Placeholder
// (both user and password, as URL does) and so does the value of every
// "name=value" pair after "?", "&", ";" or "#" whose name is secret
// (Secret) or whose value looks like a credential (SecretValue). Any other
// word that looks like a credential on its own (SecretValue) becomes
// Placeholder too.
func (r *Redactor) Text(s string) string {
	s = urlInText.ReplaceAllStringFunc(s, func(w string) string {
		if u, err := url.Parse(w); err == nil && u.Scheme != "" && u.Host != "" {
			red, _ := r.URL(w)
			return red
		}
		return r.unparsed(w)
	})
	words := strings.Fields(s)
	for _, w := range words {
		if SecretValue(w) {
			s = strings.ReplaceAll(s, w, Placeholder)
		}
	}
	return s
}

// unparsed redacts a URL-like word that url.Parse refuses, by pattern.
func (r *Redactor) unparsed(w string) string {
	w = userinfo.ReplaceAllStringFunc(w, func(m string) string {
		if m == "://@" {
			return m
		}
		if strings.Contains(m, ":") && strings.Count(m, ":") > 1 {
			return "://" + Placeholder + ":" + Placeholder + "@"
		}
		return "://" + Placeholder + "@"
	})
	return param.ReplaceAllStringFunc(w, func(m string) string {
		sub := param.FindStringSubmatch(m)
		name, val := sub[2], sub[3]
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if v, err := url.QueryUnescape(val); err == nil {
			val = v
		}
		if (r.Secret(name) || SecretValue(val)) && val != Placeholder {
			return sub[1] + sub[2] + "=" + Placeholder
		}
		return m
	})
}
