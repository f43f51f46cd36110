package redact

import (
	"slices"
	"strings"
)

// Command-line credential flags, and configuration-file lines (SQL,
// directives, "name value" lines, .netrc, YAML block scalars).

// scanFlags finds credentials given to command-line flags.
func (r *Redactor) scanFlags(s string, add func(int, int, string, string)) {
	progs := programsIn(s)
	for _, m := range userFlagRE().FindAllStringSubmatchIndex(s, -1) {
		a, b := unquoted(s, m[2], m[3])
		if strings.Contains(s[a:b], "://") {
			continue // a URL: its userinfo is judged as a URL's
		}
		if i := strings.IndexByte(s[a:b], ':'); i >= 0 {
			add(a+i+1, b, kindFlag, "user")
		}
	}
	for _, m := range flagRE().FindAllStringSubmatchIndex(s, -1) {
		flag := s[m[2]:m[3]]
		if r.Secret(flag) || progs.takes(flag) {
			a, b := unquoted(s, m[4], m[5])
			if notSecret(s[a:b]) || !progs.takes(flag) && !r.holds(flag, s[a:b]) {
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
	if mysqlClient().MatchString(s) {
		for _, m := range mysqlPassRE().FindAllStringSubmatchIndex(s, -1) {
			a, b := unquoted(s, m[2], m[3])
			add(a, b, kindFlag, "p")
		}
	} else {
		for _, m := range mysqlPassRE().FindAllStringSubmatchIndex(s, -1) {
			if a, b := unquoted(s, m[2], m[3]); credentialLike(s[a:b], false) {
				add(a, b, kindFlag, "p")
			}
		}
	}
	if strings.Contains(s, "sshpass") {
		for _, m := range sshpassRE().FindAllStringSubmatchIndex(s, -1) {
			a, b := unquoted(s, m[2], m[3])
			add(a, b, kindFlag, "p")
		}
	}
}

var (
	// sqlPassRE finds SQL's quoted passwords: IDENTIFIED BY '…',
	// PASSWORD '…'.
	sqlPassRE = lazyRegexp(`(?i)\b(?:identified\s+by|password)\s+'([^'\n]{1,256})'`)
	// directiveRE finds a secret set by a configuration directive with
	// spaces: SetEnv NAME value, ENV NAME value, export NAME value,
	// proxy_set_header NAME value;
	directiveRE = lazyRegexp(`(?m)^[ \t]*(?:SetEnv|ENV|env|setenv|set|proxy_set_header|add_header|RequestHeader\s+set|Header\s+set)[ \t]+([A-Za-z_][A-Za-z0-9_.-]{0,127})[ \t]+("[^"\n]*"|'[^'\n]*'|[^\s;]+)`)
	// lineNameRE finds a line that is a name, spaces and one value (a
	// .properties or .pgpass-like setting: "db.password  s3cr3t").
	lineNameRE = lazyRegexp(`(?m)^[ \t]*([A-Za-z_][A-Za-z0-9_.-]{0,127})[ \t]+([^\s=:]\S*)[ \t]*;?[ \t]*$`)
	// netrcRE finds the password of a .netrc entry.
	netrcRE = lazyRegexp(`\b(?:machine|default)\b[^\n]{0,200}?(?:\r?\n[ \t]+[^\n]{0,200}?){0,4}\bpassword[ \t]+(\S+)`)
	// blockScalarRE finds a YAML block scalar after a name: "password: |".
	blockScalarRE = lazyRegexp(`(?m)^([ \t]*)([A-Za-z_"'][A-Za-z0-9_.$ "'-]{0,127}):[ \t]*[|>][+-]?[0-9]?[ \t]*\r?\n`)
)

// scanLines finds secrets in configuration-file lines: SQL passwords,
// directives, "name value" lines, .netrc entries, YAML block scalars and
// TOML multi-line strings under secret names.
func (r *Redactor) scanLines(s string, add func(int, int, string, string)) {
	if strings.Contains(s, "'") {
		for _, m := range sqlPassRE().FindAllStringSubmatchIndex(s, -1) {
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
			for _, m := range directiveRE().FindAllStringSubmatchIndex(line, -1) {
				if name := line[m[2]:m[3]]; r.Secret(name) {
					if a, b := unquoted(line, m[4], m[5]); r.holds(name, line[a:b]) {
						lineAdd(a, b, kindName, name)
					}
				}
			}
			for _, m := range lineNameRE().FindAllStringSubmatchIndex(line, -1) {
				if name := line[m[2]:m[3]]; r.Secret(name) && r.strong(name) && len(nameWords(name)) > 1 && !notSecret(line[m[4]:m[5]]) {
					lineAdd(m[4], m[5], kindName, name)
				}
			}
		}
		at = end + 1
	}
	if strings.Contains(s, "machine") || strings.Contains(s, "default") {
		for _, m := range netrcRE().FindAllStringSubmatchIndex(s, -1) {
			add(m[2], m[3], kindName, "password")
		}
	}
	if strings.ContainsAny(s, "|>") {
		covered := 0
		for _, m := range blockScalarRE().FindAllStringSubmatchIndex(s, -1) {
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
	return programsIn(s).takes(flag)
}

// programs are the programs of programFlags a text names.
type programs []string

// programsIn finds the programs of programFlags that s names, once per
// text (each a substring search).
func programsIn(s string) programs {
	var out programs
	for prog := range programFlags {
		if strings.Contains(s, prog) {
			out = append(out, prog)
		}
	}
	return out
}

// takes reports whether one of the programs takes a secret after flag.
func (ps programs) takes(flag string) bool {
	for _, prog := range ps {
		if slices.Contains(programFlags[prog], flag) {
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
