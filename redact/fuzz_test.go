package redact_test

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/airlockdev/airlock/redact"
)

// plants are credential lines a secret r is planted into: each returns
// the line and the part of it that must not survive, wherever the line
// stands in a text.
var plants = []func(r string) (line, secret string){
	func(r string) (string, string) { return "ghp_" + r[:36], r[:36] },
	func(r string) (string, string) { return "sk-proj-" + r, r },
	func(r string) (string, string) { u := strings.ToUpper(r[:16]); return "AKIA" + u, u },
	func(r string) (string, string) {
		p := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"` + r + `"}`))
		return "eyJhbGciOiJIUzI1NiJ9." + p + ".c2ln", p
	},
	func(r string) (string, string) { return "password=" + r, r },
	func(r string) (string, string) { return `"api_key": "` + r + `"`, r },
	func(r string) (string, string) { return "Authorization: Bearer " + r, r },
	func(r string) (string, string) { return "postgres://admin:" + r + "@db.example.test:5432/app", r },
	func(r string) (string, string) { return "curl -u ana:" + r + " https://api.example.test", r },
	func(r string) (string, string) { return "mysql -u root -p" + r + " app", r },
	func(r string) (string, string) { return "--token " + r, r },
	func(r string) (string, string) { return "https://api.example.test/cb;jsessionid=" + r + "?page=2", r },
	func(r string) (string, string) { return "Cookie: theme=dark; PHPSESSID=" + r, r },
	func(r string) (string, string) {
		return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + r + "\n" + r[:20] + "\n-----END OPENSSH PRIVATE KEY-----", r
	},
	func(r string) (string, string) { return "the api key is " + r + " for acme", r },
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// secretFor draws the random part of a planted secret: 40 base62
// characters with at least one digit and one letter.
func secretFor(seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, 40)
	for i := range b {
		b[i] = base62[rng.IntN(len(base62))]
	}
	b[0], b[1] = '7', 'q'
	return string(b)
}

// FuzzText plants a secret in one of the credential lines above, between a
// fuzzed prefix and suffix (on lines of their own or separated by a space),
// and checks that Text and Body remove it, that Text is idempotent, and
// that Body's output of a JSON document is still JSON.
func FuzzText(f *testing.F) {
	f.Add("", "", uint8(0), uint64(1), false)
	f.Add("error: ", " (retry later)", uint8(4), uint64(2), false)
	f.Add(`{"message": "`, `"}`, uint8(5), uint64(3), false)
	f.Add("-----BEGIN RSA PRIVATE KEY-----", "", uint8(6), uint64(4), true)
	f.Add("token: ", "\nDone.", uint8(8), uint64(5), true)
	f.Add("x=\"", "'", uint8(12), uint64(6), false)
	f.Add("<password>", "</password>", uint8(14), uint64(7), false)
	f.Add("Set-Cookie: a=1; ", "; Path=/", uint8(13), uint64(8), false)
	f.Fuzz(func(t *testing.T, prefix, suffix string, kind uint8, seed uint64, lines bool) {
		if len(prefix)+len(suffix) > 4096 {
			return
		}
		line, secret := plants[int(kind)%len(plants)](secretFor(seed))
		if strings.Contains(prefix+suffix, secret[:12]) {
			return
		}
		sep := " "
		if lines {
			sep = "\n"
		}
		s := prefix + sep + line + sep + suffix
		r := &redact.Redactor{}
		out := r.Text(s)
		if strings.Contains(out, secret[:12]) {
			t.Fatalf("the secret survives Text:\n in: %q\nout: %q", s, out)
		}
		if again := r.Text(out); again != out {
			t.Fatalf("Text is not idempotent:\n once: %q\ntwice: %q", out, again)
		}
		doc, err := jsontext.AppendQuote([]byte(`{"message":`), s)
		if err != nil {
			return // invalid UTF-8: not a JSON string
		}
		doc = append(doc, '}')
		red, _, complete := r.Body(doc)
		if !complete {
			t.Fatalf("a JSON document is reported not complete: %q", doc)
		}
		if !jsontext.Value(red).IsValid() {
			t.Fatalf("Body's output is not JSON: %q", red)
		}
		if strings.Contains(string(red), secret[:12]) {
			t.Fatalf("the secret survives Body:\n in: %q\nout: %q", doc, red)
		}
	})
}
