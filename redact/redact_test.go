package redact_test

import (
	"net/http"
	"runtime"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/redact"
)

func ptrs(ps ...string) []jsonpointer.Pointer {
	out := make([]jsonpointer.Pointer, len(ps))
	for i, p := range ps {
		var err error
		out[i], err = jsonpointer.Parse(p)
		Expect(err).NotTo(HaveOccurred())
	}
	return out
}

func bodyPointers(found []redact.Redaction) []string {
	var out []string
	for _, f := range found {
		s := f.Pointer
		if f.Inner != "" {
			s += " " + f.Inner
		}
		out = append(out, s)
	}
	return out
}

var _ = Describe("redaction", func() {
	DescribeTable("secret-looking names, word by word",
		func(name string, secret bool) {
			Expect((&redact.Redactor{}).Secret(name)).To(Equal(secret))
		},
		Entry(nil, "token", true),
		Entry(nil, "api_key", true),
		Entry(nil, "X-Api-Key", true),
		Entry(nil, "apiKey", true),
		Entry(nil, "apikey", true),
		Entry(nil, "accessToken", true),
		Entry(nil, "APIToken", true),
		Entry(nil, "API_TOKEN", true),
		Entry(nil, "client_secret", true),
		Entry(nil, "Password", true),
		Entry(nil, "credentials", true),
		Entry(nil, "Set-Cookie", true),
		Entry(nil, "session_id", true),
		Entry(nil, "sessionid", true),
		Entry(nil, "X-Amz-Signature", true),
		Entry(nil, "monkey", false),
		Entry(nil, "author", false),
		Entry(nil, "keyboard", false),
		Entry(nil, "tokenizer", false),
		Entry(nil, "secretary", false),
		Entry(nil, "state", false),
		Entry(nil, "HOME", false),
	)

	It("takes a configured list of words instead of the defaults", func() {
		r := &redact.Redactor{Names: []string{"pin"}}
		Expect(r.Secret("card_pin")).To(BeTrue())
		Expect(r.Secret("api_key")).To(BeFalse())
	})

	Describe("bodies", func() {
		It("returns a body without secrets byte for byte, duplicates, spacing and escapes included", func() {
			body := []byte("{ \"a\" : 1.50e+3,\n \"a\":\"\\u00e9\", \"list\": [true, null, {\"x\": \"y\"}] }  ")
			out, found, complete := (&redact.Redactor{}).Body(body)
			Expect(out).To(Equal(body))
			Expect(found).To(BeEmpty())
			Expect(complete).To(BeTrue())
		})

		It("replaces values under secret names by a placeholder of the same type and keeps every other byte", func() {
			body := []byte(`{"user": "ana", "api_key": "abc123", "pin_attempts": 3, "token_count": 7,` +
				` "auth": {"user": "x", "password": "p"}, "keys": ["k1", "k2"], "secret_ok": true, "session": null,` +
				` "dup": 1, "password": "one", "password": "two", "nested": [{"refresh_token": "r"}]}`)
			out, found, complete := (&redact.Redactor{}).Body(body)
			Expect(complete).To(BeTrue())
			Expect(string(out)).To(Equal(`{"user": "ana", "api_key": "REDACTED", "pin_attempts": 3, "token_count": 7,` +
				` "auth": {"user": "x", "password": "REDACTED"}, "keys": ["k1", "k2"], "secret_ok": true, "session": null,` +
				` "dup": 1, "password": "REDACTED", "password": "REDACTED", "nested": [{"refresh_token": "REDACTED"}]}`))
			Expect(bodyPointers(found)).To(Equal([]string{"/api_key", "/auth/password", "/password", "/password", "/nested/0/refresh_token"}))
			for _, f := range found {
				Expect(f.Where).To(Equal(redact.RedactedBody))
			}
		})

		It("sees a secret name however it is escaped", func() {
			out, found, _ := (&redact.Redactor{}).Body([]byte(`{"\u0074oken":"t0ps3cr3t"}`))
			Expect(string(out)).To(Equal(`{"\u0074oken":"REDACTED"}`))
			Expect(bodyPointers(found)).To(Equal([]string{"/token"}))
		})

		It("redacts explicit JSON Pointers, with * for any token, whatever the names", func() {
			r := &redact.Redactor{Pointers: ptrs("/data/ssn", "/rows/*/card")}
			out, found, _ := r.Body([]byte(`{"data":{"ssn":"123-45-6789","name":"é"},"rows":[{"card":4111},{"card":"x"},{"other":1}]}`))
			Expect(string(out)).To(Equal(`{"data":{"ssn":"REDACTED","name":"é"},"rows":[{"card":0},{"card":"REDACTED"},{"other":1}]}`))
			Expect(bodyPointers(found)).To(Equal([]string{"/data/ssn", "/rows/0/card", "/rows/1/card"}))
		})

		It("redacts strings shaped like credentials under any name", func() {
			out, found, _ := (&redact.Redactor{}).Body([]byte(`{"note":"sk-live-0123456789abcdef","hint":"ghp_0123456789abcdefghijABCDEFGHIJ","jwt":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig","plain":"hello world, nothing here"}`))
			Expect(string(out)).To(Equal(`{"note":"REDACTED","hint":"REDACTED","jwt":"REDACTED","plain":"hello world, nothing here"}`))
			Expect(found).To(HaveLen(3))
		})

		It("looks inside strings that hold a JSON document, such as an MCP text content block", func() {
			body := []byte(`{"content":[{"type":"text","text":"{\n  \"HOME\": \"/root\",\n  \"API_TOKEN\": \"sk-test-123456789012\"\n}"}]}`)
			out, found, complete := (&redact.Redactor{}).Body(body)
			Expect(complete).To(BeTrue())
			Expect(string(out)).To(Equal(`{"content":[{"type":"text","text":"{\n  \"HOME\": \"/root\",\n  \"API_TOKEN\": \"REDACTED\"\n}"}]}`))
			Expect(found).To(Equal([]redact.Redaction{{Where: redact.RedactedBody, Pointer: "/content/0/text", Inner: "/API_TOKEN"}}))
		})

		It("redacts a truncated body as text and says it is not complete", func() {
			out, found, complete := (&redact.Redactor{}).Body([]byte(`{"token":"abc","more":{"secret":"s`))
			Expect(complete).To(BeFalse())
			Expect(string(out)).To(Equal(`{"token":"REDACTED","more":{"secret":"REDACTED`))
			Expect(found).To(Equal([]redact.Redaction{{Where: redact.RedactedBody, Name: redact.TextPart}}))
		})

		It("searches the last whole value before a break, and the rest, as text", func() {
			out, found, complete := (&redact.Redactor{}).Body([]byte("{\"api_key\":\"k1\"}\nDone. session=abc123 exported\n"))
			Expect(complete).To(BeFalse())
			Expect(string(out)).To(Equal("{\"api_key\":\"REDACTED\"}\nDone. session=REDACTED exported\n"))
			Expect(found).To(Equal([]redact.Redaction{{Where: redact.RedactedBody, Name: redact.TextPart}}))
			// A body that is a name and its value, "password":"…": the
			// first string is a whole JSON value, the name of what follows.
			out, _, _ = (&redact.Redactor{}).Body([]byte(`"password":"hunter2"`))
			Expect(string(out)).To(Equal(`"password":"REDACTED"`))
			out, _, _ = (&redact.Redactor{}).Body([]byte(`{"a":1} {"ok":true} "DB_PASSWORD"="hunter2"`))
			Expect(string(out)).To(Equal(`{"a":1} {"ok":true} "DB_PASSWORD"="REDACTED"`))
		})

		It("searches a body that is not JSON as text, and keeps one without secrets as it is", func() {
			html := []byte("<html><body>token=abc</body></html>")
			out, found, complete := (&redact.Redactor{}).Body(html)
			Expect(string(out)).To(Equal("<html><body>token=REDACTED</body></html>"))
			Expect(found).To(HaveLen(1))
			Expect(complete).To(BeFalse())
			plain := []byte("<html><body>page 2 of 7</body></html>")
			out, found, _ = (&redact.Redactor{}).Body(plain)
			Expect(out).To(Equal(plain))
			Expect(found).To(BeEmpty())
		})

		It("redacts secrets inside longer strings, keeping the rest of the string", func() {
			body := []byte(`{"error":"invalid api key sk-proj-4fQ9xLm2Vb7Kc1Zp8RtY3wNe for org acme","note":"connect with postgres://admin:Pw9xQ2@db.internal:5432/app"}`)
			out, found, _ := (&redact.Redactor{}).Body(body)
			Expect(string(out)).To(Equal(`{"error":"invalid api key REDACTED for org acme","note":"connect with postgres://admin:REDACTED@db.internal:5432/app"}`))
			Expect(bodyPointers(found)).To(Equal([]string{"/error", "/note"}))
		})
	})

	It("redacts secret headers, keeping an Authorization scheme and harmless headers", func() {
		h := http.Header{}
		h.Set("Authorization", "Bearer abc.def")
		h.Set("Cookie", "sid=1")
		h.Add("Set-Cookie", "a=1")
		h.Add("Set-Cookie", "b=2")
		h.Set("X-Api-Key", "k")
		h.Set("X-Custom", "Bearer 0123456789abcdef")
		h.Set("Link", `<https://api.example/items?page=2&access_token=t0k3nV4lu3>; rel="next"`)
		h.Set("X-Request-Id", "r-1")
		h.Set("Content-Type", "application/json")
		got, found := (&redact.Redactor{Headers: []string{"X-Tenant"}}).Header(h, redact.RedactedResponseHeader)
		Expect(got).To(Equal(map[string]string{
			"Authorization": "Bearer REDACTED", "Cookie": "sid=REDACTED", "Set-Cookie": "a=REDACTED, b=REDACTED",
			"X-Api-Key": "REDACTED", "X-Custom": "Bearer REDACTED", "X-Request-Id": "r-1", "Content-Type": "application/json",
			"Link": `<https://api.example/items?page=2&access_token=REDACTED>; rel="next"`,
		}))
		Expect(found).To(HaveLen(6))
		Expect(found[0]).To(Equal(redact.Redaction{Where: redact.RedactedResponseHeader, Name: "Authorization"}))
		h.Set("X-Tenant", "acme")
		got, _ = (&redact.Redactor{Headers: []string{"x-tenant"}}).Header(h, redact.RedactedHeader)
		Expect(got["X-Tenant"]).To(Equal("REDACTED"))
	})

	It("redacts URL credentials and secret query and fragment parameters, keeping the rest in order", func() {
		got, found := (&redact.Redactor{}).URL("https://bot:hunter2@api.example/v1/x?b=2&api_key=K%2F1&a=1&sig=zz#access_token=t&state=s")
		Expect(got).To(Equal("https://bot:REDACTED@api.example/v1/x?b=2&api_key=REDACTED&a=1&sig=REDACTED#access_token=REDACTED&state=s"))
		Expect(found).To(Equal([]redact.Redaction{
			{Where: redact.RedactedUserinfo}, {Where: redact.RedactedQuery, Name: "api_key"},
			{Where: redact.RedactedQuery, Name: "sig"}, {Where: redact.RedactedQuery, Name: "access_token"},
		}))
		got, found = (&redact.Redactor{}).URL("https://ghp_0123456789abcdefghij0123@github.com/o/r")
		Expect(got).To(Equal("https://REDACTED@github.com/o/r"))
		Expect(found).To(HaveLen(1))
		got, found = (&redact.Redactor{}).URL("http://127.0.0.1:8080/status?id=7")
		Expect(got).To(Equal("http://127.0.0.1:8080/status?id=7"))
		Expect(found).To(BeEmpty())
		// A relative reference, as a Location header may send it.
		got, found = (&redact.Redactor{}).URL("/cb?access_token=SECRETTOKEN4&api_key=K4&page=2#token=FRAG4&x=1")
		Expect(got).To(Equal("/cb?access_token=REDACTED&api_key=REDACTED&page=2#token=REDACTED&x=1"))
		Expect(found).To(HaveLen(3))
		got, found = (&redact.Redactor{}).URL("next#session=abc")
		Expect(got).To(Equal("next#session=REDACTED"))
		Expect(found).To(HaveLen(1))
		got, found = (&redact.Redactor{}).URL("/plain/path?page=2")
		Expect(got).To(Equal("/plain/path?page=2"))
		Expect(found).To(BeEmpty())
	})

	It("redacts secret command-line arguments by index", func() {
		argv := []string{"fetch", "--token=abc", "--password", "p4ss", "--verbose", "API_KEY=k", "-H", "Authorization: Bearer x",
			"https://h/x?secret=s", "sk-live-0123456789abcdef", "--id", "7"}
		got, found := (&redact.Redactor{}).Argv(argv)
		Expect(got).To(Equal([]string{"fetch", "--token=REDACTED", "--password", "REDACTED", "--verbose", "API_KEY=REDACTED", "-H", "Authorization: Bearer REDACTED",
			"https://h/x?secret=REDACTED", "REDACTED", "--id", "7"}))
		var idx []int
		for _, f := range found {
			Expect(f.Where).To(Equal(redact.RedactedArgv))
			idx = append(idx, *f.Index)
		}
		Expect(idx).To(Equal([]int{1, 3, 5, 7, 8, 9}))
		Expect(argv[1]).To(Equal("--token=abc"), "the caller's argv is not changed")
	})

	DescribeTable("Source: the upstream source as the audit record keeps it",
		func(src, want string) { Expect((&redact.Redactor{}).Source(src)).To(Equal(want)) },
		Entry("a password", "https://bob:hunter2@host/x", "https://bob:REDACTED@host/x"),
		Entry("a user without password is a name", "https://bob@host/x", "https://bob@host/x"),
		Entry("a token as the user", "https://x7Kq2mVb9Lp4Rt8Wz3Nc@host/x", "https://REDACTED@host/x"),
		Entry("token parameters, in order", "https://host/x?token=t1&q=ok", "https://host/x?token=REDACTED&q=ok"),
		Entry("any parameter that looks secret", "https://host/x?api_key=k&X-Amz-Signature=s&sessionid=i&client_secret=c&password=p&auth=a&Credential=cr",
			"https://host/x?api_key=REDACTED&X-Amz-Signature=REDACTED&sessionid=REDACTED&client_secret=REDACTED&password=REDACTED&auth=REDACTED&Credential=REDACTED"),
		Entry("a cookie parameter", "https://host/x?cookie=abc123&page=2", "https://host/x?cookie=REDACTED&page=2"),
		Entry("repeated token parameters", "https://host/x?token=a&token=b", "https://host/x?token=REDACTED&token=REDACTED"),
		Entry("no secrets leaves the URL as is", "https://host/x?page=2&b=1", "https://host/x?page=2&b=1"),
		Entry("a command", "review-cli --change CR-1", "review-cli --change CR-1"),
		Entry("a file", "/var/cache/review.json", "/var/cache/review.json"),
		Entry("a URL that does not parse (bad escape)", "https://bob:hunter2@host/x%zz?access_token=abc",
			"https://bob:REDACTED@host/x%zz?access_token=REDACTED"),
		Entry("a URL that does not parse (control character)", "https://bob:hunter2@host/x?token=abc\n",
			"https://bob:REDACTED@host/x?token=REDACTED\n"),
		Entry("a token with a bad escape", "https://host/x?token=abc%zz", "https://host/x?token=REDACTED"),
		Entry("a token before a semicolon", "https://host/x?token=abc;page=1", "https://host/x?token=REDACTED;page=1"),
		Entry("a URL inside a command", "curl -s https://bob:hunter2@host/x?api_key=abc", "curl -s https://bob:REDACTED@host/x?api_key=REDACTED"),
		Entry("a URL inside a command that does not parse", "curl -s https://bob:hunter2@host/%zz?api_key=abc -o f",
			"curl -s https://bob:REDACTED@host/%zz?api_key=REDACTED -o f"),
		Entry("a token in the fragment", "https://host/cb#access_token=abc&state=1", "https://host/cb#access_token=REDACTED&state=1"),
		Entry("a port is not a password", "https://host:8443/x@y?page=1", "https://host:8443/x@y?page=1"),
		Entry("names spelt apart or escaped", "https://host/x?pass_word=pw1&tok+en=t1&pass%5Fword=pw2&page=2",
			"https://host/x?pass_word=REDACTED&tok+en=REDACTED&pass%5Fword=REDACTED&page=2"),
		Entry("a curl command line", "command: curl -s -u ana:pw0rd9 --header 'X-Api-Key: k3y9' https://host/x",
			"command: curl -s -u ana:REDACTED --header 'X-Api-Key: REDACTED' https://host/x"),
		Entry("a credential-shaped word in a message", "login failed for ghp_0123456789abcdefghij0123 at host", "login failed for REDACTED at host"),
	)

	It("Source agrees with URL on every absolute URL", func() {
		r := &redact.Redactor{}
		for _, u := range []string{
			"https://host/x?cookie=abc123", "https://bot:pw@h/x?b=2&api_key=K%2F1#access_token=t&state=s",
			"http://127.0.0.1:8080/status?id=7", "https://h/x?mytokenid=1&secretary=2",
		} {
			viaURL, _ := r.URL(u)
			Expect(r.Source(u)).To(Equal(viaURL), u)
		}
	})

	DescribeTable("Message: a validator's message about a value",
		func(msg, loc string, instance any, want string) {
			Expect((&redact.Redactor{}).Message(msg, loc, instance)).To(Equal(want))
		},
		Entry("a credential-like value under an ordinary name is masked where quoted",
			"'x7Kq2mVb9Lp4' does not match pattern '^CR-[0-9]+$'", "/data/change_id", "x7Kq2mVb9Lp4",
			"'REDACTED' does not match pattern '^CR-[0-9]+$'"),
		Entry("any quoted value under a secret name is masked",
			`value "hunter" is not one of ["a", "b"]`, "/data/password", "hunter",
			`value "REDACTED" is not one of ["a", "b"]`),
		Entry("an ordinary word stays, so messages stay useful",
			"'pending' is not one of 'approved', 'rejected'", "/data/decision", "pending",
			"'pending' is not one of 'approved', 'rejected'"),
		Entry("a short value under a secret name is masked where quoted",
			"'ab' does not match pattern '^x$'", "/password", "ab", "'REDACTED' does not match pattern '^x$'"),
		Entry("an email address stays", "'12345+bot[x]@users.example' is not valid email", "/email", "12345+bot[x]@users.example",
			"'12345+bot[x]@users.example' is not valid email"),
		Entry("a token format is masked by its shape wherever it is", "got ghp_0123456789abcdefghij0123456789abcd", "", nil,
			"got REDACTED"),
	)

	DescribeTable("Argv: every common credential flag form",
		func(argv []string, want []string) {
			got, _ := (&redact.Redactor{}).Argv(argv)
			Expect(got).To(Equal(want))
		},
		Entry("curl -u", []string{"curl", "-u", "ana:s3cr3tpw", "https://h"}, []string{"curl", "-u", "ana:REDACTED", "https://h"}),
		Entry("curl --user=", []string{"curl", "--user=ana:s3cr3tpw"}, []string{"curl", "--user=ana:REDACTED"}),
		Entry("curl -u attached", []string{"curl", "-uana:s3cr3tpw"}, []string{"curl", "-uana:REDACTED"}),
		Entry("mysql -p attached", []string{"mysql", "-u", "root", "-ppw", "app"}, []string{"mysql", "-u", "root", "-pREDACTED", "app"}),
		Entry("mkdir -p is not a password", []string{"mkdir", "-p", "a/b"}, []string{"mkdir", "-p", "a/b"}),
		Entry("a port is not a password", []string{"ssh", "-p2222", "h"}, []string{"ssh", "-p2222", "h"}),
		Entry("--header= keeps the header name", []string{"curl", "--header=X-Api-Key: k3y-v4lue"}, []string{"curl", "--header=X-Api-Key: REDACTED"}),
		Entry("-H Authorization keeps the scheme", []string{"curl", "-H", "Authorization: Basic YW5hOnB3"}, []string{"curl", "-H", "Authorization: Basic REDACTED"}),
		Entry("a key file is not a key", []string{"ssh-keygen", "--key-file", "./id.pem"}, []string{"ssh-keygen", "--key-file", "./id.pem"}),
		Entry("redis-cli -a", []string{"redis-cli", "-a", "pw0rdpw0rd", "ping"}, []string{"redis-cli", "-a", "REDACTED", "ping"}),
		Entry("openssl pass:", []string{"openssl", "enc", "-pass", "pass:pw0rd"}, []string{"openssl", "enc", "-pass", "pass:REDACTED"}),
		Entry("openssl env: holds no secret", []string{"openssl", "enc", "-pass", "env:PW"}, []string{"openssl", "enc", "-pass", "env:PW"}),
		Entry("a value after a secret-named word", []string{"aws", "configure", "set", "aws_secret_access_key", "wJalrXUtnFEMIK7MDENGbPxRfiCY9xAMPLEKEY"},
			[]string{"aws", "configure", "set", "aws_secret_access_key", "REDACTED"}),
		Entry("a human password after a secret-named word", []string{"aws", "configure", "set", "aws_secret_access_key", "hunter2"},
			[]string{"aws", "configure", "set", "aws_secret_access_key", "REDACTED"}),
		Entry("docker login -p", []string{"docker", "login", "-u", "bob", "-p", "Winter2024pass"}, []string{"docker", "login", "-u", "bob", "-p", "REDACTED"}),
	)

	DescribeTable("names: the words that make a name secret, and those that describe one",
		func(name string, secret bool) {
			Expect((&redact.Redactor{}).Secret(name)).To(Equal(secret))
		},
		Entry(nil, "PHPSESSID", true),
		Entry(nil, "JSESSIONID", true),
		Entry(nil, "connect.sid", true),
		Entry(nil, "pwd", true),
		Entry(nil, "X-Tenant-Pass", true),
		Entry(nil, "pass_word", true),
		Entry(nil, "PGPASSWORD", true),
		Entry(nil, "DATABASE_PASSWORD", true),
		Entry(nil, "id_token", true),
		Entry(nil, "token_type", false),
		Entry(nil, "key_id", false),
		Entry(nil, "max_tokens", false),
		Entry(nil, "authSource", false),
		Entry(nil, "passenger", false),
	)

	DescribeTable("Text: secrets in configuration and code formats, only the secret replaced",
		func(in, want string) { Expect((&redact.Redactor{}).Text(in)).To(Equal(want)) },
		Entry("JSON inside a JSON string", `event={"body":"{\"password\":\"Summer2025pw\"}"}`, `event={"body":"{\"password\":\"REDACTED\"}"}`),
		Entry("Go's :=", `password := "Winter2024pass"`, `password := "REDACTED"`),
		Entry("an element named by its key", `<entry key="password">Winter2024pass</entry>`, `<entry key="password">REDACTED</entry>`),
		Entry("a key and value attribute pair", `<add key="ApiKey" value="Winter2024pass"/>`, `<add key="ApiKey" value="REDACTED"/>`),
		Entry("a CDATA section", `<password><![CDATA[Winter2024pass]]></password>`, `<password><![CDATA[REDACTED]]></password>`),
		Entry("a name and value pair in JSON text", `{"Key":"api_token","Value":"Winter2024pass"}`, `{"Key":"api_token","Value":"REDACTED"}`),
		Entry("a YAML block scalar", "password: |\n  Winter2024pass\n  more\nnext: 1", "password: |\n  REDACTED\nnext: 1"),
		Entry("a YAML tag", "password: !!str Winter2024pass", "password: !!str REDACTED"),
		Entry("a YAML anchor", "password: &pw Winter2024pass", "password: &pw REDACTED"),
		Entry("a TOML multi-line string", "password = \"\"\"\nWinter2024pass\n\"\"\"", "password = \"\"\"REDACTED\"\"\""),
		Entry("a properties line with spaces", "db.password  Winter2024pass", "db.password  REDACTED"),
		Entry("a .netrc entry", "machine h login bob password Winter2024pass", "machine h login bob password REDACTED"),
		Entry("Apache SetEnv", "SetEnv DB_PASSWORD Winter2024pass", "SetEnv DB_PASSWORD REDACTED"),
		Entry("a Dockerfile ENV", "ENV DB_PASSWORD Winter2024pass", "ENV DB_PASSWORD REDACTED"),
		Entry("nginx proxy_set_header", "proxy_set_header X-Api-Key Winter2024pass;", "proxy_set_header X-Api-Key REDACTED;"),
		Entry("SQL IDENTIFIED BY", "CREATE USER bob IDENTIFIED BY 'Winter2024pass';", "CREATE USER bob IDENTIFIED BY 'REDACTED';"),
		Entry("docker login -p", "docker login -u bob -p Winter2024pass", "docker login -u bob -p REDACTED"),
		Entry("a URL parameter inside Markdown keeps the parenthesis", "[link](https://x/?token=abc) ok", "[link](https://x/?token=REDACTED) ok"),
		Entry("documentation placeholders stay", "docker run -e KEY=VALUE -e API_TOKEN=${API_TOKEN}; access_token=… password=<your password>",
			"docker run -e KEY=VALUE -e API_TOKEN=${API_TOKEN}; access_token=… password=<your password>"),
		Entry("a weak name with an ordinary value stays", "key: README.md, key=README.md", "key: README.md, key=README.md"),
		Entry("a module path after a secret word stays", "token refresh: bump golang.org/x/oauth2 v0.35.0", "token refresh: bump golang.org/x/oauth2 v0.35.0"),
		Entry("prose stays", "Set a password for the user", "Set a password for the user"),
		Entry("a human password after the word password", "password is Winter2024passB", "password is REDACTED"),
		Entry("a path after the word password stays", "password policy: see docs/security/PasswordPolicy2024.md",
			"password policy: see docs/security/PasswordPolicy2024.md"),
		Entry("a short user name after the word password stays", "password reset for user42 failed", "password reset for user42 failed"),
		Entry("a token with a percent escape", "token %67hp_0123456789abcdefghij0123456789abcd end", "token REDACTED end"),
		Entry("a token with a \\u escape", `x \u0067hp_0123456789abcdefghij0123456789abcd y`, "x REDACTED y"),
		Entry("a token with an HTML character reference", "&#x67;hp_0123456789abcdefghij0123456789abcd", "REDACTED"),
		Entry("a .env file in base64", `{"encoding":"base64","content":"REJfSE9TVD1kYgpEQl9QQVNTV09SRD1XaW50ZXIyMDI0cGFzcwo="}`,
			`{"encoding":"base64","content":"REDACTED"}`),
		Entry("userinfo with escaped slashes", `see https:\/\/bob:Winter2024pass@host\/x`, `see https:\/\/bob:REDACTED@host\/x`),
		Entry("a base64 image stays", "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
			"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="),
		Entry("an OAuth code in a redirect", "https://app.example.test/cb?code=SplxlOBeZQQYbYS6WxSbIA&state=xyz", "https://app.example.test/cb?code=REDACTED&state=xyz"),
		Entry("a token in a path segment", "GET /v1/token/a8f9c0d2e1b7c3d4/refresh", "GET /v1/token/REDACTED/refresh"),
		Entry("a URL with escapes and no secret stays", "https://example.test/search?q=hello%20world&page=2", "https://example.test/search?q=hello%20world&page=2"),
	)

	It("Body: pair objects, weak names and the values they hold", func() {
		r := &redact.Redactor{}
		out, _, _ := r.Body([]byte(`{"env":[{"name":"DB_PASSWORD","value":"Winter2024pass"},{"value":"Summer2025pw","name":"API_TOKEN"},{"name":"HOME","value":"/root"}]}`))
		Expect(string(out)).To(Equal(`{"env":[{"name":"DB_PASSWORD","value":"REDACTED"},{"value":"REDACTED","name":"API_TOKEN"},{"name":"HOME","value":"/root"}]}`))
		out, _, _ = r.Body([]byte(`{"Name":"/prod/db/password","Type":"SecureString","Value":"Winter2024pass"}`))
		Expect(string(out)).To(Equal(`{"Name":"/prod/db/password","Type":"SecureString","Value":"REDACTED"}`))
		npm := `{"key":"README.md","cookie":{"version":"0.7.1"},"pass_rate":0.97,"keys":["a","b"],"public_key":"ssh-ed25519 AAAAC3Nza","path-key":"^3.1.0","X-Cache-Key":"abc","key_2":"a8f9c0d2e1b7"}`
		out, found, _ := r.Body([]byte(npm))
		Expect(string(out)).To(Equal(strings.Replace(npm, `"a8f9c0d2e1b7"`, `"REDACTED"`, 1)))
		Expect(bodyPointers(found)).To(Equal([]string{"/key_2"}))
	})

	It("Context: secret keys and secrets inside string values, the input untouched", func() {
		in := map[string]any{"api_key": "x7Kq2mVb9Lp4", "change_id": "CR-1042", "note": "password is hunter2 ok", "pin_code": 1234,
			"session": map[string]any{"a": 1}, "key": "README.md"}
		out, found := (&redact.Redactor{}).Context(in)
		Expect(out).To(Equal(map[string]any{"api_key": "REDACTED", "change_id": "CR-1042", "note": "password is hunter2 ok", "pin_code": 1234,
			"session": map[string]any{"a": 1}, "key": "README.md"}))
		Expect(found).To(Equal([]redact.Redaction{{Where: redact.RedactedContext, Name: "api_key"}}))
		Expect(in["api_key"]).To(Equal("x7Kq2mVb9Lp4"))
		out, _ = (&redact.Redactor{}).Context(map[string]any{"db_password": 42, "msg": "token=ghp_0123456789abcdefghij0123456789abcd"})
		Expect(out).To(Equal(map[string]any{"db_password": 0, "msg": "token=REDACTED"}))
	})

	It("Body: a nested document costs memory linear in its depth", func() {
		// Each level's path used to be a fresh copy: 5000 levels took
		// about 100 MB; one shared stack takes well under 10.
		deep := []byte(`{"a":` + strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5001))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		out, _, complete := (&redact.Redactor{}).Body(deep)
		runtime.ReadMemStats(&after)
		Expect(complete).To(BeTrue())
		Expect(out).To(Equal(deep))
		Expect(after.TotalAlloc - before.TotalAlloc).To(BeNumerically("<", 10<<20))
	})

	DescribeTable("Text: the second hostile review's cases",
		func(in, want string) { Expect((&redact.Redactor{}).Text(in)).To(Equal(want)) },
		Entry("a secret word between two others does not cancel the name",
			"AUTH_DB_PASSWORD=9fQxL2mR7vT4kW8zAb3cD5eF and keyStorePassword=Summer2024! INPUT_TOKEN=abc123def456",
			"AUTH_DB_PASSWORD=REDACTED and keyStorePassword=REDACTED INPUT_TOKEN=REDACTED"),
		Entry("a Kubernetes env list in YAML", "- name: DB_PASSWORD\n  value: hunter2\n- name: HOME\n  value: /root",
			"- name: DB_PASSWORD\n  value: REDACTED\n- name: HOME\n  value: /root"),
		Entry("the same with CRLF and quotes", "- name: DB_PASSWORD\r\n  value: \"hunter2\"\r\n", "- name: DB_PASSWORD\r\n  value: \"REDACTED\"\r\n"),
		Entry("a CloudFormation parameter pair", `{"ParameterKey":"DBPassword","ParameterValue":"hunter2"}`, `{"ParameterKey":"DBPassword","ParameterValue":"REDACTED"}`),
		Entry("short Basic credentials", "Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic REDACTED"),
		Entry("names in brackets and calls",
			`$config['db_password'] = 'hunter2'; define('DB_PASSWORD', 'Summer2024!?#'); System.setProperty("db.password", "hunter2")`,
			`$config['db_password'] = 'REDACTED'; define('DB_PASSWORD', 'REDACTED'); System.setProperty("db.password", "REDACTED")`),
		Entry("a password's trailing symbols", "password was reset to Tr0ub4dor&3 today", "password was reset to REDACTED today"),
		Entry("a YAML block scalar with CRLF", "password: |\r\n  line1Secret\r\n  line2Secret\r\nnext: 1", "password: |\r\n  REDACTED\r\nnext: 1"),
		Entry("a .netrc entry over lines with CRLF", "machine h\r\n  login bob\r\n  password hunter2\r\n", "machine h\r\n  login bob\r\n  password REDACTED\r\n"),
		Entry("a YAML value on the next line", "password:\n  hunter2\nother: 1", "password:\n  REDACTED\nother: 1"),
		Entry("JSON in an HTML attribute", `data-config="{&quot;apiKey&quot;:&quot;Summer2024abc&quot;}"`, `data-config="REDACTED"`),
		Entry("an exec-form command line", `["curl","-u","bob:Summer2024xy","https://x"]`, `["curl","-u","bob:REDACTED","https://x"]`),
		Entry("a Cookie header inside a quoted argument ends at its quote", `curl -H "Cookie: sid=abc123" https://api.example.com/x -o out.json`,
			`curl -H "Cookie: sid=REDACTED" https://api.example.com/x -o out.json`),
		Entry("a path parameter keeps the query after it", "https://x/a;jsessionid=ABC123def456?x=1", "https://x/a;jsessionid=REDACTED?x=1"),
		Entry("a user name before a token keeps the host", "https://x-access-token:hunter2@github.com/o/r.git", "https://x-access-token:REDACTED@github.com/o/r.git"),
		Entry("a URL after -u is judged as a URL", "redis-cli -u redis://:Summer2024!@h:6379 ping", "redis-cli -u redis://:REDACTED@h:6379 ping"),
		Entry("structures and versions under secret-looking names stay",
			`"secrets":[{"name":"default-token-x7k2p"}],"jsonwebtoken":"^9.0.2","PyJWT==2.8.0"`,
			`"secrets":[{"name":"default-token-x7k2p"}],"jsonwebtoken":"^9.0.2","PyJWT==2.8.0"`),
		Entry("an S3 key and ETag stay", "<Key>photos/2024/cat.jpg</Key><ETag>&quot;9b2c6a1f0e2d4c8b9a7f6e5d4c3b2a19&quot;</ETag>",
			"<Key>photos/2024/cat.jpg</Key><ETag>&quot;9b2c6a1f0e2d4c8b9a7f6e5d4c3b2a19&quot;</ETag>"),
		Entry("a public key stays", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n-----END PUBLIC KEY-----",
			"-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n-----END PUBLIC KEY-----"),
		Entry("code that reads a secret stays", `password = os.environ["DB_PASSWORD"]; const token = req.headers.authorization.split(" ")[1];`,
			`password = os.environ["DB_PASSWORD"]; const token = req.headers.authorization.split(" ")[1];`),
		Entry("shell expansions stay", `mysql -p"$MYSQL_PASSWORD" --password "$DOCKER_PASS" app:${DB_PASS}@db`,
			`mysql -p"$MYSQL_PASSWORD" --password "$DOCKER_PASS" app:${DB_PASS}@db`),
		Entry("a bare scheme stays", "Authorization: Bearer", "Authorization: Bearer"),
		Entry("a .env file in base64 wrapped at 60 columns", "content:\nQVBQX05BTUU9c2hvcApBUFBfRU5WPXByb2R1Y3Rpb24KREJfSE9TVD1kYi5l\neGFtcGxlLnRlc3QKREJfUEFTU1dPUkQ9WGs5bVBxMnZMN3dSdDRodW50ZXIy\nCkZPTz1iYXIK\n", "content:\nREDACTED\n"),
		Entry("an address after the word token stays", "the token 0x52908400098527886E0F7030069857D2E4169EE7 moved",
			"the token 0x52908400098527886E0F7030069857D2E4169EE7 moved"),
	)

	It("Body and Argv: the second hostile review's cases", func() {
		r := &redact.Redactor{}
		out, _, _ := r.Body([]byte(`{"ParameterKey":"DBPassword","ParameterValue":"hunter2"}`))
		Expect(string(out)).To(Equal(`{"ParameterKey":"DBPassword","ParameterValue":"REDACTED"}`))
		kept := `{"automountServiceAccountToken":true,"password":"","tokens":128000,"jsonwebtoken":"^9.0.2","has_password":true,"password_set":false}`
		out, found, _ := r.Body([]byte(kept))
		Expect(string(out)).To(Equal(kept))
		Expect(found).To(BeEmpty())
		argv, _ := r.Argv([]string{"curl", "-H", "Cookie: sid=abc123", "https://api.example.com/x", "-o", "out.json"})
		Expect(argv).To(Equal([]string{"curl", "-H", "Cookie: sid=REDACTED", "https://api.example.com/x", "-o", "out.json"}))
		argv, _ = r.Argv([]string{"go", "test", "-run", "TestToken", "./..."})
		Expect(argv).To(Equal([]string{"go", "test", "-run", "TestToken", "./..."}))
		h, _ := r.Header(http.Header{"Idempotency-Key": {"6f1c9a2e-3b4d-4e5f-8a7b-9c0d1e2f3a4b"}}, redact.RedactedHeader)
		Expect(h["Idempotency-Key"]).To(Equal("6f1c9a2e-3b4d-4e5f-8a7b-9c0d1e2f3a4b"))
	})

	DescribeTable("Text: the third review's cases",
		func(in, want string) { Expect((&redact.Redactor{}).Text(in)).To(Equal(want)) },
		Entry("ids on the next line after a secret word stay", "session_expires_at=1767225600\ntraceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
			"session_expires_at=1767225600\ntraceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
		Entry("a labelled id after a secret word stays", "Token refreshed. Request ID: Xk29fLq83mZ0pR7tYw", "Token refreshed. Request ID: Xk29fLq83mZ0pR7tYw"),
		Entry("comparisons stay", "if (password === confirmPassword) { login(token != null) }", "if (password === confirmPassword) { login(token != null) }"),
		Entry("a colon inside a prompt string stays", `password = getpass.getpass("Password: ")`, `password = getpass.getpass("Password: ")`),
		Entry("code keywords stay", "const token = await getToken();", "const token = await getToken();"),
		Entry("YAML path keys stay", "paths:\n  /oauth/token:\n    post:\n      summary: x", "paths:\n  /oauth/token:\n    post:\n      summary: x"),
		Entry("references stay", "password = var.db_password\napiKey := cfg.APIKey\nsecret: process.env.NEXTAUTH_SECRET",
			"password = var.db_password\napiKey := cfg.APIKey\nsecret: process.env.NEXTAUTH_SECRET"),
		Entry("permission levels and paths stay", "permissions:\n  id-token: write\nreplace github.com/acme/tokens => ../tokens\nkey: server.key",
			"permissions:\n  id-token: write\nreplace github.com/acme/tokens => ../tokens\nkey: server.key"),
		Entry("a JWT issuer stays", "JWT_ISSUER: https://auth.example.com/", "JWT_ISSUER: https://auth.example.com/"),
		Entry("a source location stays", "caller=auth/jwt.go:88 msg=ok", "caller=auth/jwt.go:88 msg=ok"),
		Entry("documentation placeholders stay", "export API_KEY=your-key-here; sk_test_...", "export API_KEY=your-key-here; sk_test_..."),
		Entry("prose after Authorization stays", "Authorization: role-based.", "Authorization: role-based."),
		Entry("a .env value holds & ; and spaces", "DB_PASSWORD=Xy9&kLm2!pQ\nSMTP_PASS=Redis Pass 2024!\n", "DB_PASSWORD=REDACTED\nSMTP_PASS=REDACTED\n"),
		Entry("a header line's value is the rest of the line", "Stripe-Signature: t=1492774577,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd",
			"Stripe-Signature: REDACTED"),
		Entry("an ADO.NET connection string", "Server=x;Password=Az#Pa55;Encrypt=true", "Server=x;Password=REDACTED;Encrypt=true"),
		Entry("a quoted password in an error", `authentication failed for user "app" with password "Xy9#kLm2!pQ"`,
			`authentication failed for user "app" with password "REDACTED"`),
		Entry("an auth tuple", `requests.get(url, auth=("alice", "Al1c3Pw!"))`, `requests.get(url, auth=("alice", "REDACTED"))`),
		Entry("JSON escaped twice", `{\\"API_TOKEN\\":\\"abc123def456\\"}`, `{\\"API_TOKEN\\":\\"REDACTED\\"}`),
		Entry("a Digest response", `Authorization: Digest username="u", realm="r", nonce="abc", response="6629fae49393a05397450978507c4ef1"`,
			`Authorization: Digest username="u", realm="r", nonce="abc", response="REDACTED"`),
	)

	It("Body and Argv: the third review's cases", func() {
		r := &redact.Redactor{}
		kept := `{"total_count":2,"secrets":[{"name":"GH_TOKEN","created_at":"2024-01-01T00:00:00Z"}],` +
			`"node_modules/jsonwebtoken":{"version":"9.0.2","integrity":"sha512-GcaP8Hfq4D2lXWkqnhGOQ2vCYzyEkGSfRLdPX1EJSXxmbSEYZ2Bd3iPAeqXo6bWOsdtGBz8MyCv7Ja1DBvCBYA=="},` +
			`"token":{"expiresIn":3600,"type":"bearer"},"tokens":[{"text":"Hello","logprob":-0.1}]}`
		out, found, _ := r.Body([]byte(kept))
		Expect(string(out)).To(Equal(kept))
		Expect(found).To(BeEmpty())
		out, _, _ = r.Body([]byte(`{"credentials":{"username":"alice","password":"Xy9kLm2pQ"},"token":{"value":"a8f9c0d2e1b7c3d4","expires_in":60}}`))
		Expect(string(out)).To(Equal(`{"credentials":{"username":"alice","password":"REDACTED"},"token":{"value":"REDACTED","expires_in":60}}`))
		argv, _ := r.Argv([]string{"docker", "run", "-e", "AWS_SECRET_ACCESS_KEY", "img"})
		Expect(argv).To(Equal([]string{"docker", "run", "-e", "AWS_SECRET_ACCESS_KEY", "img"}))
		argv, _ = r.Argv([]string{"openssl", "req", "-key", "server.key", "--from-file=password=./pw.txt"})
		Expect(argv).To(Equal([]string{"openssl", "req", "-key", "server.key", "--from-file=password=./pw.txt"}))
	})
})
