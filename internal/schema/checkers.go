package schema

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The named checkers of the registry (see Checkers for what each accepts).
// Each runs in one pass over the string, in time linear in its length.

// isAtext reports whether c is RFC 5322 §3.2.3 atext: ALPHA, DIGIT or one of
// !#$%&'*+-/=?^_`{|}~.
func isAtext(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("!#$%&'*+-/=?^_`{|}~", c)
}

// checkMailbox is the "mailbox" checker of format email.
func checkMailbox(s string) error {
	if len(s) > 254 {
		return errors.New("more than 254 bytes")
	}
	local, domain, ok := strings.Cut(s, "@")
	switch {
	case !ok:
		return errors.New("missing @")
	case local == "":
		return errors.New("empty local part")
	case len(local) > 64:
		return errors.New("local part more than 64 bytes")
	}
	for _, c := range local {
		if !isAtext(c) && c != '.' && c != '[' && c != ']' {
			return fmt.Errorf("invalid character %q in the local part", c)
		}
	}
	if err := checkHostName(domain); err != nil {
		return fmt.Errorf("domain: %w", err)
	}
	return nil
}

// checkHostName accepts a DNS host name (RFC 1123 §2.1): dot-separated
// labels of 1–63 ASCII letters, digits and hyphens, none starting or ending
// with a hyphen, at most 253 bytes in all, no trailing dot.
func checkHostName(s string) error {
	if s == "" {
		return errors.New("empty")
	}
	if len(s) > 253 {
		return errors.New("more than 253 bytes")
	}
	for label := range strings.SplitSeq(s, ".") {
		switch {
		case label == "":
			return errors.New("empty label")
		case len(label) > 63:
			return errors.New("label more than 63 bytes")
		case label[0] == '-' || label[len(label)-1] == '-':
			return errors.New("label starts or ends with a hyphen")
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return fmt.Errorf("invalid character %q", c)
			}
		}
	}
	return nil
}

// checkAddrSpec is the "rfc5322" checker of format email: RFC 5322 §3.4.1
// addr-spec = local-part "@" domain, with local-part = dot-atom /
// quoted-string and domain = dot-atom / domain-literal, and without CFWS,
// folding (CRLF) or the obsolete forms of §4.4.
func checkAddrSpec(s string) error {
	var local, domain string
	if strings.HasPrefix(s, `"`) {
		end, err := quotedString(s)
		if err != nil {
			return err
		}
		local, domain = s[:end], s[end:]
		if !strings.HasPrefix(domain, "@") {
			return errors.New("the quoted local part is not followed by @")
		}
		domain = domain[1:]
	} else {
		var ok bool
		if local, domain, ok = strings.Cut(s, "@"); !ok {
			return errors.New("missing @")
		}
		if err := dotAtom(local); err != nil {
			return fmt.Errorf("local part: %w", err)
		}
	}
	if strings.HasPrefix(domain, "[") {
		lit, ok := strings.CutSuffix(domain[1:], "]")
		if !ok {
			return errors.New("domain literal without closing ]")
		}
		for _, c := range lit {
			// dtext = %d33-90 / %d94-126 (RFC 5322 §3.4.1)
			if c < 33 || c > 126 || c >= 91 && c <= 93 {
				return fmt.Errorf("invalid character %q in the domain literal", c)
			}
		}
		return nil
	}
	if err := dotAtom(domain); err != nil {
		return fmt.Errorf("domain: %w", err)
	}
	return nil
}

// dotAtom accepts RFC 5322 §3.2.3 dot-atom-text: 1*atext *("." 1*atext).
func dotAtom(s string) error {
	if s == "" {
		return errors.New("empty")
	}
	for atom := range strings.SplitSeq(s, ".") {
		if atom == "" {
			return errors.New("leading, trailing or consecutive dot")
		}
		for _, c := range atom {
			if !isAtext(c) {
				return fmt.Errorf("invalid character %q", c)
			}
		}
	}
	return nil
}

// quotedString scans the RFC 5322 §3.2.4 quoted-string at the start of s
// (which begins with a double quote) and returns the offset just past its
// closing quote. Inside: qtext (%d33, %d35-91, %d93-126), quoted-pairs
// ("\" followed by a visible character, space or tab), spaces and tabs.
func quotedString(s string) (int, error) {
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return i + 1, nil
		case c == '\\':
			if i+1 == len(s) || !(s[i+1] >= 32 && s[i+1] <= 126 || s[i+1] == '\t') {
				return 0, errors.New("a backslash in the quoted local part escapes no visible character, space or tab")
			}
			i++
		case c == ' ' || c == '\t' || c == 33 || c >= 35 && c <= 91 || c >= 93 && c <= 126:
		default:
			r, _ := utf8.DecodeRuneInString(s[i:])
			return 0, fmt.Errorf("invalid character %q in the quoted local part", r)
		}
	}
	return 0, errors.New("the quoted local part has no closing quote")
}

// validatorURIReference is the validator's own "uri-reference" checker,
// taken from a schema compiled with it (the library does not export it),
// at the first use of the checker rather than at start-up.
var validatorURIReference = sync.OnceValue(func() func(any) error {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	const url = "airlock:uri-reference.json"
	if err := c.AddResource(url, map[string]any{"format": "uri-reference"}); err != nil {
		panic(err)
	}
	return c.MustCompile(url).Format.Validate
})

// checkURIReference is the "uri-reference" checker of format uri.
func checkURIReference(s string) error { return validatorURIReference()(s) }
