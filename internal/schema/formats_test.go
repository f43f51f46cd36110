package schema_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/airlockdev/airlock/internal/schema"
)

func checker(t *testing.T, format, name string) schema.Checker {
	t.Helper()
	c, ok := schema.LookupChecker(format, name)
	if !ok {
		t.Fatalf("no checker %s for %s", name, format)
	}
	return c
}

// Each named checker accepts exactly what its Accepts text says; the rows
// name the clause they test.
func TestCheckers(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	rows := []struct {
		format, checker, value string
		ok                     bool
	}{
		// mailbox: what real APIs send.
		{"email", "mailbox", "12345+ci[bot]@users.noreply.example.com", true},
		{"email", "mailbox", "41898282+github-actions[bot]@users.noreply.github.com", true},
		{"email", "mailbox", "first.last@example.com", true},
		{"email", "mailbox", "taro..y.@example.jp", true}, // dots anywhere
		{"email", "mailbox", ".x@example.com", true},
		{"email", "mailbox", "noreply@localhost", true}, // one label is a host name
		{"email", "mailbox", "o'brien+tag/x=y{z}|~^`@example.com", true},
		{"email", "mailbox", long(64) + "@example.com", true},
		{"email", "mailbox", long(65) + "@example.com", false},                                  // local part past 64 bytes
		{"email", "mailbox", "a@" + strings.Repeat(long(63)+".", 3) + long(60), true},           // 252-byte domain, 254 in all
		{"email", "mailbox", long(1) + "@" + strings.Repeat(long(63)+".", 3) + long(62), false}, // 254-byte domain
		{"email", "mailbox", long(64) + "@" + strings.Repeat(long(60)+".", 3) + long(6), true},  // 254 bytes
		{"email", "mailbox", long(64) + "@" + strings.Repeat(long(60)+".", 3) + long(7), false}, // 255 bytes
		{"email", "mailbox", `"john doe"@example.com`, false},                                   // no quoting
		{"email", "mailbox", "john doe@example.com", false},
		{"email", "mailbox", "a@[192.0.2.1]", false}, // no address literals
		{"email", "mailbox", "user@bücher.example", false},
		{"email", "mailbox", "ü@example.com", false},
		{"email", "mailbox", "a@b@example.com", false},
		{"email", "mailbox", "@example.com", false},
		{"email", "mailbox", "user@", false},
		{"email", "mailbox", "user", false},
		{"email", "mailbox", "user@example.com.", false}, // trailing dot
		{"email", "mailbox", "user@-example.com", false},
		{"email", "mailbox", "user@exa_mple.com", false},
		{"email", "mailbox", "user@" + long(64) + ".com", false},
		{"email", "mailbox", "a(comment)@example.com", false},
		{"email", "mailbox", "a,b@example.com", false},
		{"email", "mailbox", "a\\b@example.com", false},

		// rfc5322: RFC 5322 §3.4.1 addr-spec, no CFWS or obsolete syntax.
		{"email", "rfc5322", "first.last@example.com", true},
		{"email", "rfc5322", `"john doe"@example.com`, true},
		{"email", "rfc5322", `"a\"b\\c"@example.com`, true}, // quoted-pairs
		{"email", "rfc5322", `"a@b"@example.com`, true},
		{"email", "rfc5322", `""@example.com`, true},
		{"email", "rfc5322", "a@[192.0.2.1]", true},
		{"email", "rfc5322", "a@[IPv6:2001:db8::1]", true},
		{"email", "rfc5322", "a@b", true},
		{"email", "rfc5322", "a@under_score.example", true}, // atext, not a host name
		{"email", "rfc5322", long(300) + "@example.com", true},
		{"email", "rfc5322", "12345+ci[bot]@users.noreply.example.com", false},
		{"email", "rfc5322", "a..b@example.com", false},
		{"email", "rfc5322", ".a@example.com", false},
		{"email", "rfc5322", "a.@example.com", false},
		{"email", "rfc5322", "a@example..com", false},
		{"email", "rfc5322", "a@", false},
		{"email", "rfc5322", "@example.com", false},
		{"email", "rfc5322", "a", false},
		{"email", "rfc5322", `"unclosed@example.com`, false},
		{"email", "rfc5322", `"a"b@example.com`, false},
		{"email", "rfc5322", "\"a\nb\"@example.com", false},
		{"email", "rfc5322", `"a\`, false},
		{"email", "rfc5322", "\"ü\"@example.com", false},
		{"email", "rfc5322", "a@[1.2.3.4", false},
		{"email", "rfc5322", "a@[a[b]", false},
		{"email", "rfc5322", "a@[a b]", false},
		{"email", "rfc5322", "a (x)@example.com", false},
		{"email", "rfc5322", "a@b@example.com", false},

		// uri-reference on format uri: the validator's uri-reference.
		{"uri", "uri-reference", "", true},
		{"uri", "uri-reference", "www.example.com", true},
		{"uri", "uri-reference", "/about", true},
		{"uri", "uri-reference", "https://example.com/a?b#c", true},
		{"uri", "uri-reference", "http://[::1]:80/", true},
		{"uri", "uri-reference", `a\b`, false},
		{"uri", "uri-reference", "http://exa mple.com", false},
		{"uri", "uri-reference", "http://[::1/", false},
	}
	for _, r := range rows {
		err := checker(t, r.format, r.checker).Validate(r.value)
		if (err == nil) != r.ok {
			t.Errorf("%s: %s(%q) = %v, want ok=%v", r.format, r.checker, r.value, err, r.ok)
		}
	}
	// Values that are not strings pass (JSON Schema Validation 2020-12 §7.1).
	for _, c := range schema.Checkers() {
		if err := c.Validate(float64(1)); err != nil {
			t.Errorf("%s: a number: %v", c.Name, err)
		}
	}
}

func TestParseFormatPolicy(t *testing.T) {
	p, _, err := schema.ParseFormatPolicy(map[string]string{"default": "annotate", "email": "mailbox", "date-time": "assert"})
	if err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]string{"email": "mailbox", "date-time": "assert", "uri": "annotate", "uuid": "annotate"} {
		if got := p.Of(f); got != want {
			t.Errorf("Of(%s) = %s, want %s", f, got, want)
		}
	}
	if got := p.Annotated(); slices.Contains(got, "email") || slices.Contains(got, "date-time") || !slices.Contains(got, "uri") {
		t.Errorf("Annotated() = %v", got)
	}
	if a := p.Asserting(); len(a.Annotated()) != 0 || a.Of("email") != "mailbox" || a.Of("uri") != "assert" {
		t.Errorf("Asserting() = %+v", a)
	}
	if got := (schema.FormatPolicy{}).Of("email"); got != "assert" {
		t.Errorf("the zero policy: Of(email) = %s", got)
	}

	for _, bad := range []struct {
		m   map[string]string
		key string
		msg string
	}{
		{map[string]string{"default": "mailbox"}, "default", "default must be assert or annotate"},
		{map[string]string{"emial": "annotate"}, "emial", `"emial" is not a format the validator checks`},
		{map[string]string{"regex": "annotate"}, "regex", `"regex" is not a format`},
		{map[string]string{"int64": "assert"}, "int64", `"int64" is not a format`},
		{map[string]string{"email": "uri-reference"}, "email", "have: assert, annotate, mailbox, rfc5322"},
		{map[string]string{"uri": "lenient"}, "uri", "have: assert, annotate, uri-reference"},
		{map[string]string{"uri": ""}, "uri", `"" is not a policy`},
	} {
		_, key, err := schema.ParseFormatPolicy(bad.m)
		if err == nil || key != bad.key || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("%v: key %q, err %v; want key %q and %q", bad.m, key, err, bad.key, bad.msg)
		}
	}
}

// Every checker judges a format a policy may name.
func TestCheckerFormatsArePolicyFormats(t *testing.T) {
	for _, c := range schema.Checkers() {
		if !slices.Contains(schema.PolicyFormats(), c.Format) || c.Accepts == "" {
			t.Errorf("checker %s: format %s not in PolicyFormats, or no Accepts text", c.Name, c.Format)
		}
	}
}
