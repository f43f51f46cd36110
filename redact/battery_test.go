package redact_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/internal/planted"
	"github.com/airlockdev/airlock/redact"
)

// The planted-secret battery (testdata/planted.yaml, see its README): every
// entry rendered with its own seeded values and run through the API that
// handles its place. Survivors are reported together, with a count, so the
// figure reads at a glance.

// plantedSeed renders the battery; AIRLOCK_PLANTED_SEED renders it with other
// values.
func plantedSeed() uint64 {
	if s := os.Getenv("AIRLOCK_PLANTED_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		Expect(err).NotTo(HaveOccurred(), "AIRLOCK_PLANTED_SEED")
		return n
	}
	return 13
}

var loadBattery = sync.OnceValues(func() ([]planted.Rendered, error) {
	es, err := planted.Load("testdata/planted.yaml")
	if err != nil {
		return nil, err
	}
	return planted.Render(es, plantedSeed())
})

func battery() []planted.Rendered {
	rs, err := loadBattery()
	Expect(err).NotTo(HaveOccurred())
	return rs
}

// jsonString is s as a JSON string, with <, > and & as they are.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	Expect(enc.Encode(s)).To(Succeed())
	return strings.TrimSuffix(b.String(), "\n")
}

// innocuous member names a body entry is planted under, in turn.
var innocuous = []string{"message", "detail", "description", "log", "error", "note"}

// unescaped adds the percent-decoded form of each haystack, so a secret that
// only changed its spelling still counts as surviving.
func unescaped(hs ...string) []string {
	out := slices.Clone(hs)
	for _, h := range hs {
		if u, err := url.PathUnescape(h); err == nil && u != h {
			out = append(out, u)
		}
	}
	return out
}

// outcome is what one entry's trip through the redactor gave.
type outcome struct {
	r         planted.Rendered
	api       string // the API (or APIs) the entry went through
	output    string // what came back, for the report
	haystacks []string
	context   string // "" when the context survived, else why not
}

// guarded runs f, turning a panic into an output that says so.
func guarded(f func() string) (out string) {
	defer func() {
		if p := recover(); p != nil {
			out = fmt.Sprintf("PANIC: %v", p)
		}
	}()
	return f()
}

func cutHeader(text string) (string, string) {
	name, value, ok := strings.Cut(text, ": ")
	Expect(ok).To(BeTrue(), "%q is no Name: value line", text)
	return name, value
}

// argvContext checks that the words before the secret survive: every whole
// word unchanged, and a word the secret starts inside (-p«…», --user=u:«…»)
// keeps its beginning.
func argvContext(before string, out []string) string {
	words := planted.Split(before)
	// The secret starts inside the last word when a character put in its
	// place would join that word (white space inside quotes does not end it).
	partial := len(words) > 0 && len(planted.Split(before+"\x00")) == len(words)
	for i, w := range words {
		if i >= len(out) {
			return fmt.Sprintf("word %d (%q) is gone", i, w)
		}
		if partial && i == len(words)-1 {
			alt := userinfoUser.ReplaceAllString(w, "${1}"+redact.Placeholder+":")
			if !strings.HasPrefix(out[i], w) && !strings.HasPrefix(out[i], alt) {
				return fmt.Sprintf("word %d lost its beginning %q", i, w)
			}
		} else if out[i] != w {
			return fmt.Sprintf("word %d %q became %q", i, w, out[i])
		}
	}
	return ""
}

// userinfoUser is the user of a URL's userinfo at the end of the text
// before a password: redacting the user too is allowed.
var userinfoUser = regexp.MustCompile(`(://)[^/:@\s]*:$`)

func prefixContext(before, got string) string {
	if strings.HasPrefix(got, before) {
		return ""
	}
	if alt := userinfoUser.ReplaceAllString(before, "${1}"+redact.Placeholder+":"); alt != before && strings.HasPrefix(got, alt) {
		return ""
	}
	return fmt.Sprintf("the text before the secret (%q) did not survive", before)
}

// plant runs one rendered entry through the redactor.
func plant(r planted.Rendered) outcome {
	red := &redact.Redactor{}
	o := outcome{r: r}
	switch r.Place {
	case planted.Body, planted.TextContent:
		var doc string
		var value func(any) (string, bool)
		if r.Place == planted.Body {
			member := innocuous[r.Index%len(innocuous)]
			doc = `{"id":"evt-1042","` + member + `":` + jsonString(r.Value) + `,"level":"warn"}`
			value = func(v any) (string, bool) {
				m, _ := v.(map[string]any)
				s, ok := m[member].(string)
				return s, ok
			}
			o.api = "Body (JSON string under " + member + ")"
		} else {
			doc = `{"content":[{"type":"text","text":` + jsonString(r.Value) + `}],"isError":false}`
			value = func(v any) (string, bool) {
				m, _ := v.(map[string]any)
				c, _ := m["content"].([]any)
				if len(c) == 0 {
					return "", false
				}
				b, _ := c[0].(map[string]any)
				s, ok := b["text"].(string)
				return s, ok
			}
			o.api = "Body (MCP text content)"
		}
		o.output = guarded(func() string { out, _, _ := red.Body([]byte(doc)); return string(out) })
		o.haystacks = []string{o.output}
		var v any
		if err := json.Unmarshal([]byte(o.output), &v); err != nil {
			o.context = "the output is no longer JSON: " + err.Error()
		} else if s, ok := value(v); !ok {
			o.context = "the string is gone"
		} else {
			o.haystacks = append(o.haystacks, s)
			o.context = prefixContext(r.Before, s)
		}
	case planted.BodyName:
		name, value := cutHeader(r.Value)
		doc := `{"user":"ana",` + jsonString(name) + `:` + jsonString(value) + `}`
		o.api = "Body (under " + name + ")"
		o.output = guarded(func() string { out, _, _ := red.Body([]byte(doc)); return string(out) })
		o.haystacks = []string{o.output}
		var m map[string]any
		if err := json.Unmarshal([]byte(o.output), &m); err != nil {
			o.context = "the output is no longer JSON: " + err.Error()
		} else if _, ok := m[name]; !ok {
			o.context = "the member " + name + " is gone"
		} else if s, ok := m[name].(string); ok {
			o.haystacks = append(o.haystacks, s)
		}
	case planted.RequestHeader, planted.ResponseHeader:
		name, value := cutHeader(r.Value)
		where := string(redact.RedactedHeader)
		if r.Place == planted.ResponseHeader {
			where = string(redact.RedactedResponseHeader)
		}
		h := http.Header{}
		h.Add(name, value)
		h.Add("Accept", "application/json")
		o.api = "Header (" + where + ")"
		var got string
		var found bool
		o.output = guarded(func() string {
			out, _ := red.Header(h, where)
			var b strings.Builder
			for k, v := range out {
				fmt.Fprintf(&b, "%s: %s\n", k, v)
				if strings.EqualFold(k, name) {
					got, found = v, true
				}
			}
			return b.String()
		})
		o.haystacks = unescaped(o.output)
		_, beforeValue := cutHeader(r.Before + "\x00")
		beforeValue = strings.TrimSuffix(beforeValue, "\x00")
		if !found {
			o.context = "the header is gone"
		} else {
			o.context = prefixContext(beforeValue, got)
		}
	case planted.URL:
		o.api = "URL and Text"
		var u, t string
		o.output = guarded(func() string {
			u, _ = red.URL(r.Value)
			t = red.Text(r.Value)
			return "URL: " + u + "\nText: " + t
		})
		o.haystacks = unescaped(o.output, u, t)
		if c := prefixContext(r.Before, u); c != "" {
			o.context = "URL: " + c
		} else if c := prefixContext(r.Before, t); c != "" {
			o.context = "Text: " + c
		}
	case planted.Argv:
		argv := planted.Split(r.Value)
		o.api = "Argv"
		var out []string
		o.output = guarded(func() string {
			out, _ = red.Argv(slices.Clone(argv))
			q := make([]string, len(out))
			for i, a := range out {
				q[i] = strconv.Quote(a)
			}
			return strings.Join(q, " ")
		})
		o.haystacks = unescaped(append([]string{o.output}, out...)...)
		o.context = argvContext(r.Before, out)
	case planted.Source:
		o.api = "Source"
		o.output = guarded(func() string { return red.Source(r.Value) })
		o.haystacks = unescaped(o.output)
		o.context = prefixContext(r.Before, o.output)
	default:
		Fail("unknown place " + r.Place)
	}
	if strings.HasPrefix(o.output, "PANIC: ") {
		o.haystacks = append(o.haystacks, r.Value) // a panic keeps nothing safe
	}
	return o
}

// figures counts entries per place, in the battery's order of places.
func figures(n map[string]int, of map[string]int) string {
	var b strings.Builder
	for _, p := range planted.Places {
		if of[p] > 0 {
			fmt.Fprintf(&b, "  %-16s %3d of %3d\n", p, n[p], of[p])
		}
	}
	return b.String()
}

var _ = Describe("the planted-secret battery", func() {
	It("holds enough entries in every place, all rendered without a literal secret", func() {
		rs := battery()
		per := map[string]int{}
		for _, r := range rs {
			per[r.Place]++
			if r.Place != planted.Clean {
				Expect(r.Fragments).NotTo(BeEmpty(), "%s: %s", r.Place, r.Note)
			}
		}
		Expect(len(rs) - per[planted.Clean]).To(BeNumerically(">=", 120))
		Expect(per[planted.Clean]).To(BeNumerically(">=", 30))
		for _, p := range planted.Places {
			Expect(per[p]).To(BeNumerically(">=", 12), p)
		}
	})

	It("lets no planted secret survive, in any place", func() {
		var report strings.Builder
		survived, total := 0, 0
		per, of := map[string]int{}, map[string]int{}
		for _, r := range battery() {
			if r.Place == planted.Clean {
				continue
			}
			o := plant(r)
			total += len(r.Secrets)
			of[r.Place] += len(r.Secrets)
			left := r.Survives(o.haystacks...)
			if len(left) == 0 {
				continue
			}
			// A secret survives when it, or any generated part of it, is
			// still there.
			n := 0
			for _, s := range r.Secrets {
				for _, l := range left {
					if strings.Contains(s, l) {
						n++
						break
					}
				}
			}
			survived += n
			per[r.Place] += n
			fmt.Fprintf(&report, "- [%s] %s (%s): %d of %d survive\n    in:  %q\n    out: %q\n",
				r.Place, r.Note, o.api, n, len(r.Secrets), r.Value, o.output)
		}
		if survived > 0 {
			Fail(fmt.Sprintf("%d of %d planted secrets survive\n%s\n%s", survived, total, figures(per, of), report.String()))
		}
	})

	It("keeps the context around each secret: the text before it survives", func() {
		var report strings.Builder
		lost, total := 0, 0
		per, of := map[string]int{}, map[string]int{}
		for _, r := range battery() {
			if r.Place == planted.Clean {
				continue
			}
			o := plant(r)
			total++
			of[r.Place]++
			if o.context == "" {
				continue
			}
			lost++
			per[r.Place]++
			fmt.Fprintf(&report, "- [%s] %s (%s): %s\n    in:  %q\n    out: %q\n", r.Place, r.Note, o.api, o.context, r.Value, o.output)
		}
		if lost > 0 {
			Fail(fmt.Sprintf("%d of %d planted entries lose their context\n%s\n%s", lost, total, figures(per, of), report.String()))
		}
	})

	It("returns every clean value byte for byte, reporting no redaction", func() {
		red := &redact.Redactor{}
		var report strings.Builder
		changed, total := 0, 0
		for _, r := range battery() {
			if r.Place != planted.Clean {
				continue
			}
			total++
			var diffs []string
			check := func(api, got, want string, found int) {
				if got != want || found > 0 {
					diffs = append(diffs, fmt.Sprintf("%s: %q (%d redactions)", api, got, found))
				}
			}
			doc := `{"message":` + jsonString(r.Value) + `}`
			out, found, complete := red.Body([]byte(doc))
			check("Body", string(out), doc, len(found))
			if !complete {
				diffs = append(diffs, "Body: not complete")
			}
			check("Text", red.Text(r.Value), r.Value, 0)
			check("Source", red.Source(r.Value), r.Value, 0)
			argv := planted.Split(r.Value)
			aout, afound := red.Argv(slices.Clone(argv))
			check("Argv", strings.Join(aout, "\x1f"), strings.Join(argv, "\x1f"), len(afound))
			for _, where := range []string{string(redact.RedactedHeader), string(redact.RedactedResponseHeader)} {
				h := http.Header{}
				h.Set("X-Note", r.Value)
				hout, hfound := red.Header(h, where)
				check("Header ("+where+")", hout["X-Note"], r.Value, len(hfound))
			}
			if strings.Contains(r.Value, "://") {
				u, ufound := red.URL(r.Value)
				check("URL", u, r.Value, len(ufound))
			}
			if len(diffs) > 0 {
				changed++
				fmt.Fprintf(&report, "- %s %q\n    %s\n", r.Note, r.Value, strings.Join(diffs, "\n    "))
			}
		}
		if changed > 0 {
			Fail(fmt.Sprintf("%d of %d clean values are changed\n%s", changed, total, report.String()))
		}
	})
})
