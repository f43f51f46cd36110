package gate_test

// Conformance specs: the strict parser against JSONTestSuite and the schema
// stage's compiler configuration against JSON-Schema-Test-Suite draft 2020-12.
// The corpora live outside the repository (see DESIGN.md and
// conformance/README.md beside it); AIRLOCK_CONFORMANCE overrides where.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/strictjson"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/conformance"
)

// conformanceCorpus returns the directory of one corpus, or a message
// saying why it cannot be used (conformance.Corpus).
func conformanceCorpus(name string) (string, string) { return conformance.Corpus(name) }

// conformanceMissing fails the running spec under CI (a CI job must not
// pass by silently skipping its conformance run) and skips it elsewhere.
func conformanceMissing(msg string) {
	if conformance.Required() {
		Fail("CI=true but " + msg)
	}
	Skip(msg)
}

// confParse runs gate.Parse with the default limits on a goroutine of its
// own, so that a panic fails the file's spec with a message and a hang fails
// it after a timeout instead of stalling the suite. A refusal is returned as
// the *strictjson.Error, checked to carry a byte offset inside the body.
func confParse(body []byte) (any, *strictjson.Error) {
	GinkgoHelper()
	type result struct {
		v        any
		err      error
		panicked any
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{panicked: p}
			}
		}()
		v, err := strictjson.Parse(body, strictjson.Limits{})
		done <- result{v: v, err: err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		Fail("gate.Parse did not return within 10s")
	}
	Expect(r.panicked).To(BeNil(), "gate.Parse panicked")
	if r.err == nil {
		return r.v, nil
	}
	var pe *strictjson.Error
	Expect(errors.As(r.err, &pe)).To(BeTrue(), "gate.Parse returned %T, not a *strictjson.Error: %v", r.err, r.err)
	Expect(r.v).To(BeNil(), "a refusal must not return a value")
	Expect(pe.Offset).To(And(BeNumerically(">=", 0), BeNumerically("<=", len(body))), "offset of %v", pe)
	return nil, pe
}

// confOutcome is the stated result of parsing one file: refused with reason,
// or admitted (reason "") as value (compared exactly when not nil, so numbers
// must be the json.Number of the token's own digits).
type confOutcome struct {
	reason string
	value  any
}

func confAdmitted(v any) confOutcome        { return confOutcome{value: v} }
func confRefused(reason string) confOutcome { return confOutcome{reason: reason} }

func (o confOutcome) check(body []byte) {
	GinkgoHelper()
	v, pe := confParse(body)
	if o.reason == "" {
		Expect(pe).To(BeNil(), "want admitted")
		if o.value != nil {
			Expect(v).To(Equal(o.value))
		}
		return
	}
	Expect(pe).NotTo(BeNil(), "want refused with %s, got admitted as %#v", o.reason, v)
	Expect(pe.Reason).To(Equal(o.reason), "%v", pe)
}

// conformanceIPolicy states the result of every i_ file of
// JSONTestSuite/test_parsing, following the policy table of
// conformance/README.md (strict agent boundary). A file of the corpus missing
// here, or an entry naming no file, fails the suite.
var conformanceIPolicy = map[string]confOutcome{
	// Numbers: exact text kept, but a token past 128 bytes, or one that
	// overflows or underflows binary64, never reaches the validator.
	"i_number_double_huge_neg_exp.json":   confRefused(gate.ReasonNumber), // 123.456e-789 underflows
	"i_number_huge_exp.json":              confRefused(gate.ReasonNumber), // 0.4e006699…: a 135-byte token
	"i_number_neg_int_huge_exp.json":      confRefused(gate.ReasonNumber), // -1e+9999 overflows
	"i_number_pos_double_huge_exp.json":   confRefused(gate.ReasonNumber), // 1.5e+9999 overflows
	"i_number_real_neg_overflow.json":     confRefused(gate.ReasonNumber), // -123123e100000 overflows
	"i_number_real_pos_overflow.json":     confRefused(gate.ReasonNumber), // 123123e100000 overflows
	"i_number_real_underflow.json":        confRefused(gate.ReasonNumber), // 123e-10000000 underflows
	"i_number_too_big_neg_int.json":       confAdmitted([]any{json.Number("-123123123123123123123123123123")}),
	"i_number_too_big_pos_int.json":       confAdmitted([]any{json.Number("100000000000000000000")}),
	"i_number_very_big_negative_int.json": confAdmitted([]any{json.Number("-237462374673276894279832749832423479823246327846")}),

	// Escaped lone or mispaired surrogates: never replaced by U+FFFD.
	"i_object_key_lone_2nd_surrogate.json":                confRefused(gate.ReasonLoneSurrogate),
	"i_string_1st_surrogate_but_2nd_missing.json":         confRefused(gate.ReasonLoneSurrogate),
	"i_string_1st_valid_surrogate_2nd_invalid.json":       confRefused(gate.ReasonLoneSurrogate),
	"i_string_incomplete_surrogate_and_escape_valid.json": confRefused(gate.ReasonLoneSurrogate),
	"i_string_incomplete_surrogate_pair.json":             confRefused(gate.ReasonLoneSurrogate),
	"i_string_incomplete_surrogates_escape_valid.json":    confRefused(gate.ReasonLoneSurrogate),
	"i_string_invalid_lonely_surrogate.json":              confRefused(gate.ReasonLoneSurrogate),
	"i_string_invalid_surrogate.json":                     confRefused(gate.ReasonLoneSurrogate),
	"i_string_inverted_surrogates_U+1D11E.json":           confRefused(gate.ReasonLoneSurrogate),
	"i_string_lone_second_surrogate.json":                 confRefused(gate.ReasonLoneSurrogate),

	// Bytes that are not well-formed UTF-8 (a surrogate encoded in UTF-8
	// included).
	"i_string_UTF-8_invalid_sequence.json":         confRefused(gate.ReasonInvalidUTF8),
	"i_string_UTF8_surrogate_U+D800.json":          confRefused(gate.ReasonInvalidUTF8),
	"i_string_invalid_utf-8.json":                  confRefused(gate.ReasonInvalidUTF8),
	"i_string_iso_latin_1.json":                    confRefused(gate.ReasonInvalidUTF8),
	"i_string_lone_utf8_continuation_byte.json":    confRefused(gate.ReasonInvalidUTF8),
	"i_string_not_in_unicode_range.json":           confRefused(gate.ReasonInvalidUTF8),
	"i_string_overlong_sequence_2_bytes.json":      confRefused(gate.ReasonInvalidUTF8),
	"i_string_overlong_sequence_6_bytes.json":      confRefused(gate.ReasonInvalidUTF8),
	"i_string_overlong_sequence_6_bytes_null.json": confRefused(gate.ReasonInvalidUTF8),
	"i_string_truncated-utf-8.json":                confRefused(gate.ReasonInvalidUTF8),

	// UTF-16. With a BOM the BOM check fires first. Without one the NUL
	// bytes are well-formed UTF-8 but no JSON token, so the grammar refuses
	// them: there is no more specific reason code for "UTF-16 body".
	"i_string_UTF-16LE_with_BOM.json": confRefused(gate.ReasonBOM),
	"i_string_utf16BE_no_BOM.json":    confRefused(gate.ReasonSyntax),
	"i_string_utf16LE_no_BOM.json":    confRefused(gate.ReasonSyntax),

	// Structure: a UTF-8 BOM, and nesting past the default cap of 64.
	"i_structure_UTF-8_BOM_empty_object.json": confRefused(gate.ReasonBOM),
	"i_structure_500_nested_arrays.json":      confRefused(gate.ReasonDepth),
}

// conformanceStatedAccepts lists the files conformance/README.md keeps
// accepted but wants pinned: well-formed but unusual code points ("\u0000",
// U+2028/U+2029, invisible characters, noncharacters). Each decodes to one
// string (the array's only element, or the object's only member name) whose
// runes are given here: no normalisation, no replacement, no stripping.
var conformanceStatedAccepts = map[string][]rune{
	"y_string_null_escape.json":                     {0x0000},
	"y_object_escaped_null_in_key.json":             {'f', 'o', 'o', 0x0000, 'b', 'a', 'r'},
	"y_string_u+2028_line_sep.json":                 {0x2028},
	"y_string_u+2029_par_sep.json":                  {0x2029},
	"y_string_unicode_U+200B_ZERO_WIDTH_SPACE.json": {0x200B},
	"y_string_unicode_U+2064_invisible_plus.json":   {0x2064},
	"y_string_escaped_noncharacter.json":            {0xFFFF},
	"y_string_unicode_U+FDD0_nonchar.json":          {0xFDD0},
	"y_string_unicode_U+FFFE_nonchar.json":          {0xFFFE},
	"y_string_unicode_U+1FFFE_nonchar.json":         {0x1FFFE},
	"y_string_unicode_U+10FFFE_nonchar.json":        {0x10FFFE},
	"y_string_nonCharacterInUTF-8_U+FFFF.json":      {0xFFFF},
	"y_string_nonCharacterInUTF-8_U+10FFFF.json":    {0x10FFFF},
	"y_string_last_surrogates_1_and_2.json":         {0x10FFFF},
}

// conformanceStatedPatterns are the names and patterns conformance/README.md
// uses for those files; every match must have an entry above.
var conformanceStatedPatterns = []string{
	"y_string_null_escape.json", "y_object_escaped_null_in_key.json",
	"y_string_u+2028_line_sep.json", "y_string_u+2029_par_sep.json",
	"y_string_unicode_U+200B_*", "y_string_unicode_U+2064_*",
	"y_string_escaped_noncharacter.json", "*_nonchar.json",
	"y_string_nonCharacterInUTF-8_*", "y_string_last_surrogates_1_and_2.json",
}

// conformanceTransform records what the parse stage makes of each
// JSONTestSuite/test_transform file: numbers keep their digits (no int64 or
// float64 rounding, "1E6" stays "1E6"), member names are not normalised (NFC
// and NFD spellings are two members), repeated names and invalid code points
// are refused.
var conformanceTransform = map[string]confOutcome{
	"number_-9223372036854775808.json":         confAdmitted([]any{json.Number("-9223372036854775808")}),
	"number_-9223372036854775809.json":         confAdmitted([]any{json.Number("-9223372036854775809")}),
	"number_1.0.json":                          confAdmitted([]any{json.Number("1.0")}),
	"number_1.000000000000000005.json":         confAdmitted([]any{json.Number("1.000000000000000005")}),
	"number_1000000000000000.json":             confAdmitted([]any{json.Number("1000000000000000")}),
	"number_10000000000000000999.json":         confAdmitted([]any{json.Number("10000000000000000999")}),
	"number_1e-999.json":                       confRefused(gate.ReasonNumber), // underflows binary64
	"number_1e6.json":                          confAdmitted([]any{json.Number("1E6")}),
	"number_9223372036854775807.json":          confAdmitted([]any{json.Number("9223372036854775807")}),
	"number_9223372036854775808.json":          confAdmitted([]any{json.Number("9223372036854775808")}),
	"object_key_nfc_nfd.json":                  confAdmitted(map[string]any{"\u00e9": "NFC", "e\u0301": "NFD"}),
	"object_key_nfd_nfc.json":                  confAdmitted(map[string]any{"e\u0301": "NFD", "\u00e9": "NFC"}),
	"object_same_key_different_values.json":    confRefused(gate.ReasonDuplicate),
	"object_same_key_same_value.json":          confRefused(gate.ReasonDuplicate),
	"object_same_key_unclear_values.json":      confRefused(gate.ReasonDuplicate),
	"string_1_escaped_invalid_codepoint.json":  confRefused(gate.ReasonLoneSurrogate),
	"string_1_invalid_codepoint.json":          confRefused(gate.ReasonInvalidUTF8),
	"string_2_escaped_invalid_codepoints.json": confRefused(gate.ReasonLoneSurrogate),
	"string_2_invalid_codepoints.json":         confRefused(gate.ReasonInvalidUTF8),
	"string_3_escaped_invalid_codepoints.json": confRefused(gate.ReasonLoneSurrogate),
	"string_3_invalid_codepoints.json":         confRefused(gate.ReasonInvalidUTF8),
	"string_with_escaped_NULL.json":            confAdmitted([]any{"A\x00B"}),
}

// conformanceFolded lists the files of JSONTestSuite (test_parsing and
// test_transform) that RFC 8259 admits and the gate refuses with
// parse.member_fold_collision: none in the corpus as copied.
var conformanceFolded = map[string]string{}

// confList returns the sorted names of the regular files in dir.
func confList(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names, nil
}

// confEntries makes one table entry per file whose name starts with prefix,
// described by the file name and located at the file itself.
func confEntries(dir string, names []string, prefix string) []TableEntry {
	var es []TableEntry
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			p := filepath.Join(dir, n)
			es = append(es, Entry(n, types.CodeLocation{FileName: p, LineNumber: 1}, p))
		}
	}
	return es
}

// confMapDiff returns the names in the corpus (with prefix) that table lacks,
// and the table's keys that name no file of the corpus.
func confMapDiff[V any](names []string, prefix string, table map[string]V) (missing, stale []string) {
	for _, n := range names {
		if _, ok := table[n]; !ok && strings.HasPrefix(n, prefix) {
			missing = append(missing, n)
		}
	}
	for k := range table {
		if !slices.Contains(names, k) {
			stale = append(stale, k)
		}
	}
	slices.Sort(stale)
	return missing, stale
}

func confRead(p string) []byte {
	GinkgoHelper()
	body, err := os.ReadFile(p) // raw bytes: never decoded as text
	Expect(err).NotTo(HaveOccurred())
	return body
}

var _ = Describe("JSONTestSuite", Label("conformance"), func() {
	corpus, missing := conformanceCorpus("JSONTestSuite")
	if missing != "" {
		It("finds the corpus", func() { conformanceMissing(missing) })
		return
	}
	parsing := filepath.Join(corpus, "test_parsing")
	transform := filepath.Join(corpus, "test_transform")
	parsingNames, perr := confList(parsing)
	transformNames, terr := confList(transform)
	if perr != nil || terr != nil {
		It("finds the corpus", func() { conformanceMissing(fmt.Sprintf("%v %v", perr, terr)) })
		return
	}

	It("has y_, n_, i_ and test_transform files", func() {
		for _, prefix := range []string{"y_", "n_", "i_"} {
			Expect(confEntries(parsing, parsingNames, prefix)).NotTo(BeEmpty(), "no %s files in %s", prefix, parsing)
		}
		Expect(transformNames).NotTo(BeEmpty(), "no files in %s", transform)
	})

	DescribeTable("test_parsing y_ files are admitted (duplicate member names refused)",
		func(p string) {
			want := confAdmitted(nil)
			if strings.HasPrefix(filepath.Base(p), "y_object_duplicated_key") {
				want = confRefused(gate.ReasonDuplicate) // I-JSON, RFC 7493 §2.3
			}
			want.check(confRead(p))
		},
		confEntries(parsing, parsingNames, "y_"),
	)

	DescribeTable("test_parsing n_ files are refused with a parse reason",
		func(p string) {
			body := confRead(p)
			v, pe := confParse(body)
			Expect(pe).NotTo(BeNil(), "admitted as %#v", v)
			Expect(gate.StageOf(pe.Reason)).To(Equal(gate.StageParse), "reason %q is not a registered parse.* code", pe.Reason)
		},
		confEntries(parsing, parsingNames, "n_"),
	)

	DescribeTable("test_parsing i_ files follow the stated policy",
		func(p string) {
			want, ok := conformanceIPolicy[filepath.Base(p)]
			if !ok {
				Fail("no stated expectation in conformanceIPolicy for " + filepath.Base(p))
			}
			want.check(confRead(p))
		},
		confEntries(parsing, parsingNames, "i_"),
	)

	It("states an expectation for every i_ file and for no other file", func() {
		missing, stale := confMapDiff(parsingNames, "i_", conformanceIPolicy)
		Expect(missing).To(BeEmpty(), "i_ files without an entry in conformanceIPolicy")
		Expect(stale).To(BeEmpty(), "conformanceIPolicy entries naming no file of %s", parsing)
		for name := range conformanceIPolicy {
			Expect(name).To(HavePrefix("i_"))
		}
	})

	DescribeTable("accepted strings with a stated expectation decode to exactly their runes",
		func(p string) {
			v, pe := confParse(confRead(p))
			Expect(pe).To(BeNil(), "want admitted")
			var s string
			switch v := v.(type) {
			case []any:
				Expect(v).To(HaveLen(1))
				Expect(v[0]).To(BeAssignableToTypeOf(""))
				s = v[0].(string)
			case map[string]any:
				Expect(v).To(HaveLen(1))
				for name, member := range v {
					s = name
					Expect(member).To(Equal(json.Number("42")))
				}
			default:
				Fail(fmt.Sprintf("unexpected value %#v", v))
			}
			Expect([]rune(s)).To(Equal(conformanceStatedAccepts[filepath.Base(p)]), "decoded %+q", s)
		},
		func() []TableEntry {
			var stated []string
			for _, n := range parsingNames {
				if _, ok := conformanceStatedAccepts[n]; ok {
					stated = append(stated, n)
				}
			}
			return confEntries(parsing, stated, "")
		}(),
	)

	It("pins every file conformance/README.md names as accepted with a stated expectation", func() {
		for _, pat := range conformanceStatedPatterns {
			var matched []string
			for _, n := range parsingNames {
				if ok, _ := path.Match(pat, n); ok {
					matched = append(matched, n)
				}
			}
			Expect(matched).NotTo(BeEmpty(), "no file matches %q", pat)
			for _, n := range matched {
				Expect(conformanceStatedAccepts).To(HaveKey(n), "%s (matching %q) has no stated runes", n, pat)
			}
		}
		_, stale := confMapDiff(parsingNames, "y_", conformanceStatedAccepts)
		Expect(stale).To(BeEmpty(), "conformanceStatedAccepts entries naming no file")
	})

	DescribeTable("test_transform files parse as recorded",
		func(p string) {
			want, ok := conformanceTransform[filepath.Base(p)]
			if !ok {
				Fail("no recorded result in conformanceTransform for " + filepath.Base(p))
			}
			want.check(confRead(p))
		},
		confEntries(transform, transformNames, ""),
	)

	// The parse stage also refuses member names equal under simple case
	// folding (parse.member_fold_collision), a policy beyond RFC 8259: the
	// runs above use strictjson's defaults, which stay plain RFC 8259 +
	// I-JSON. No file of the corpus has two names of one object equal under
	// folding (the NFC/NFD pair of test_transform differs under simple
	// folding), so the gate's policy changes no outcome; a corpus update
	// that adds one fails here and must be stated in conformanceFolded.
	DescribeTable("the gate's case-folding policy changes no outcome but the stated ones",
		func(p string) {
			body := confRead(p)
			_, plain := strictjson.Parse(body, strictjson.Limits{})
			_, folded := strictjson.Parse(body, strictjson.Limits{FoldCollisions: true})
			if want, ok := conformanceFolded[filepath.Base(p)]; ok {
				Expect(plain).To(BeNil())
				var pe *strictjson.Error
				Expect(errors.As(folded, &pe)).To(BeTrue(), "want %s, got %v", want, folded)
				Expect(pe.Reason).To(Equal(want))
				return
			}
			Expect(fmt.Sprint(folded)).To(Equal(fmt.Sprint(plain)))
		},
		append(confEntries(parsing, parsingNames, ""), confEntries(transform, transformNames, "")...),
	)

	It("records a result for every test_transform file and for no other file", func() {
		missing, stale := confMapDiff(transformNames, "", conformanceTransform)
		Expect(missing).To(BeEmpty(), "test_transform files without an entry in conformanceTransform")
		Expect(stale).To(BeEmpty(), "conformanceTransform entries naming no file of %s", transform)
	})
})

// ---- JSON-Schema-Test-Suite, draft 2020-12 ----

// conformanceSchemaLimits decode the suite's own files and remotes: generous
// caps, but still the strict parser, so numbers are exact json.Number text.
var conformanceSchemaLimits = strictjson.Limits{MaxDepth: 1000, MaxNumberLength: 1 << 16, MaxStringLength: 1 << 24}

// Why a case of JSON-Schema-Test-Suite draft 2020-12 fails under
// gate.NewSchemaCompiler (format assertion on, jsonschema v6.0.3, Go RE2
// regexps, semantic.ParseTimestamp for date-time).
const (
	confWhyAnnotationOnly              = "the folder treats format as an annotation; the gate asserts format on purpose, so the invalid value is refused"
	confWhyRE2NoControlEscape          = "Go RE2 has no ECMA-262 \\c control escape: the pattern fails format regex in the metaschema, so the group's schema does not compile"
	confWhyRE2Whitespace               = "Go RE2 \\s is ASCII [\\t\\n\\f\\r ]; ECMA-262 \\s also covers \\v, U+00A0, U+FEFF, line terminators and Zs (and \\S the reverse)"
	confWhyDurationGrammar             = "jsonschema's duration checker lets units be skipped (P1Y2D, PT1H2S), which the RFC 3339 Appendix A grammar forbids"
	confWhyRegexFormatRE2Accepts       = "format regex compiles with Go RE2, which accepts this non-ECMA-262 syntax (\\a, (?P<name>), inline flags)"
	confWhyRegexFormatRE2Refuses       = "format regex compiles with Go RE2, which refuses this ECMA-262 syntax (\\k<name>, lookbehind, [] and [^], \\cA)"
	confWhyEmailEmptyLocalPart         = "jsonschema's email checker accepts an empty local part"
	confWhyHostnameTrailingDot         = "jsonschema's hostname checker strips one trailing dot (fully qualified form) before checking"
	confWhyHostnameNoIDNA              = "jsonschema's hostname checker does not decode xn-- A-labels, so Punycode and IDNA 2008 rules (RFC 5890-5893) go unchecked"
	confWhyNoIDNChecker                = "jsonschema v6.0.3 ships no idn-hostname or idn-email checker: the value is accepted unchecked"
	confWhyIPv4PlusSign                = "jsonschema's ipv4 checker reads octets with strconv.Atoi, which accepts a leading '+'"
	confWhyIPvFuture                   = "Go net/url refuses an IPvFuture host literal ([V1.fe]), which RFC 3987/3986 allow"
	confWhyNetURLLenient               = "uri and uri-reference are checked with Go net/url, which accepts characters RFC 3986 requires to be percent-encoded (or a second '@')"
	confWhyURITemplateRefusesOperators = "jsonschema's uri-template checker parses the template as a URL, so RFC 6570 operators that are URL delimiters (#, /, ?) or a ':' in the first segment break it"
	confWhyURITemplateNoGrammar        = "jsonschema's uri-template checker only balances braces; it does not check the RFC 6570 expression grammar"
)

// confKnownDifference is one case of the suite that fails under the gate's
// compiler configuration, and why. A failing case missing here fails the
// suite, and so does a listed case that passes (or no longer exists).
type confKnownDifference struct {
	file, group, test, why string
}

// conformanceSchemaDifferences: file is relative to tests/draft2020-12.
var conformanceSchemaDifferences = []confKnownDifference{
	{"format.json", "email format", "invalid email string is only an annotation by default", confWhyAnnotationOnly},
	{"format.json", "regex format", "invalid regex string is only an annotation by default", confWhyAnnotationOnly},
	{"format.json", "ipv4 format", "invalid ipv4 string is only an annotation by default", confWhyAnnotationOnly},
	{"format.json", "ipv6 format", "invalid ipv6 string is only an annotation by default", confWhyAnnotationOnly},
	{"format.json", "hostname format", "invalid hostname string is only an annotation by default", confWhyAnnotationOnly},
	{"format.json", "date format", "invalid date string is only an annotation by default", confWhyAnnotationOnly},
	{"format.json", "date-time format", "invalid date-time string is only an annotation by default", confWhyAnnotationOnly},
	{"format.json", "time format", "invalid time string is only an annotation by default", confWhyAnnotationOnly},
	{"format.json", "json-pointer format", "invalid json-pointer string is only an annotation by default", confWhyAnnotationOnly},
	{"format.json", "relative-json-pointer format", "invalid relative-json-pointer string is only an annotation by default", confWhyAnnotationOnly},
	{"format.json", "iri format", "invalid iri string is only an annotation by default", confWhyAnnotationOnly},
	{"format.json", "iri-reference format", "invalid iri-reference string is only an annotation by default", confWhyAnnotationOnly},
	{"format.json", "uri format", "invalid uri string is only an annotation by default", confWhyAnnotationOnly},
	{"format.json", "uri-reference format", "invalid uri-reference string is only an annotation by default", confWhyAnnotationOnly},
	{"format.json", "uri-template format", "invalid uri-template string is only an annotation by default", confWhyAnnotationOnly},
	{"format.json", "uuid format", "invalid uuid string is only an annotation by default", confWhyAnnotationOnly},
	{"format.json", "duration format", "invalid duration string is only an annotation by default", confWhyAnnotationOnly},
	{"optional/ecmascript-regex.json", "ECMA 262 regex escapes control codes with \\c and upper letter", "does not match", confWhyRE2NoControlEscape},
	{"optional/ecmascript-regex.json", "ECMA 262 regex escapes control codes with \\c and upper letter", "matches", confWhyRE2NoControlEscape},
	{"optional/ecmascript-regex.json", "ECMA 262 regex escapes control codes with \\c and lower letter", "does not match", confWhyRE2NoControlEscape},
	{"optional/ecmascript-regex.json", "ECMA 262 regex escapes control codes with \\c and lower letter", "matches", confWhyRE2NoControlEscape},
	{"optional/ecmascript-regex.json", "ECMA 262 \\s matches whitespace", "Line tabulation matches", confWhyRE2Whitespace},
	{"optional/ecmascript-regex.json", "ECMA 262 \\s matches whitespace", "latin-1 non-breaking-space matches", confWhyRE2Whitespace},
	{"optional/ecmascript-regex.json", "ECMA 262 \\s matches whitespace", "zero-width whitespace matches", confWhyRE2Whitespace},
	{"optional/ecmascript-regex.json", "ECMA 262 \\s matches whitespace", "paragraph separator matches (line terminator)", confWhyRE2Whitespace},
	{"optional/ecmascript-regex.json", "ECMA 262 \\s matches whitespace", "EM SPACE matches (Space_Separator)", confWhyRE2Whitespace},
	{"optional/ecmascript-regex.json", "ECMA 262 \\S matches everything but whitespace", "Line tabulation does not match", confWhyRE2Whitespace},
	{"optional/ecmascript-regex.json", "ECMA 262 \\S matches everything but whitespace", "latin-1 non-breaking-space does not match", confWhyRE2Whitespace},
	{"optional/ecmascript-regex.json", "ECMA 262 \\S matches everything but whitespace", "zero-width whitespace does not match", confWhyRE2Whitespace},
	{"optional/ecmascript-regex.json", "ECMA 262 \\S matches everything but whitespace", "paragraph separator does not match (line terminator)", confWhyRE2Whitespace},
	{"optional/ecmascript-regex.json", "ECMA 262 \\S matches everything but whitespace", "EM SPACE does not match (Space_Separator)", confWhyRE2Whitespace},
	{"optional/format/duration.json", "validation of duration strings", "years and days cannot appear without months", confWhyDurationGrammar},
	{"optional/format/duration.json", "validation of duration strings", "hours and seconds cannot appear without minutes", confWhyDurationGrammar},
	{"optional/format/ecmascript-regex.json", "\\a is not an ECMA 262 control escape", "when used as a pattern", confWhyRegexFormatRE2Accepts},
	{"optional/format/ecmascript-regex.json", "Python-specific regular expression syntax is not valid ECMA 262", "Python named group (?P<name>...) is not ECMA 262", confWhyRegexFormatRE2Accepts},
	{"optional/format/ecmascript-regex.json", "global inline flag groups are not valid ECMA 262", "a single global inline flag (?i)", confWhyRegexFormatRE2Accepts},
	{"optional/format/ecmascript-regex.json", "global inline flag groups are not valid ECMA 262", "multiple global inline flags (?ims)", confWhyRegexFormatRE2Accepts},
	{"optional/format/ecmascript-regex.json", "ECMA 262 named groups and backreferences are valid", "an ECMA 262 named backreference \\k<name>", confWhyRegexFormatRE2Refuses},
	{"optional/format/ecmascript-regex.json", "ECMA 262 lookbehind is valid, including variable width", "a variable-width lookbehind (ES2018)", confWhyRegexFormatRE2Refuses},
	{"optional/format/ecmascript-regex.json", "ECMA 262 character classes and escapes", "an empty character class is valid ECMA 262", confWhyRegexFormatRE2Refuses},
	{"optional/format/ecmascript-regex.json", "ECMA 262 character classes and escapes", "a negated empty character class is valid ECMA 262", confWhyRegexFormatRE2Refuses},
	{"optional/format/ecmascript-regex.json", "ECMA 262 character classes and escapes", "a control escape \\cA is valid ECMA 262", confWhyRegexFormatRE2Refuses},
	{"optional/format/email.json", "validation of e-mail addresses", "local part is required", confWhyEmailEmptyLocalPart},
	{"optional/format/hostname.json", "validation of host names", "trailing dot", confWhyHostnameTrailingDot},
	{"optional/format/hostname.json", "validation of A-label (punycode) host names", "invalid Punycode", confWhyHostnameNoIDNA},
	{"optional/format/hostname.json", "validation of A-label (punycode) host names", "contains illegal char U+302E Hangul single dot tone mark", confWhyHostnameNoIDNA},
	{"optional/format/hostname.json", "validation of A-label (punycode) host names", "Begins with a Spacing Combining Mark", confWhyHostnameNoIDNA},
	{"optional/format/hostname.json", "validation of A-label (punycode) host names", "Begins with a Nonspacing Mark", confWhyHostnameNoIDNA},
	{"optional/format/hostname.json", "validation of A-label (punycode) host names", "Begins with an Enclosing Mark", confWhyHostnameNoIDNA},
	{"optional/format/hostname.json", "validation of A-label (punycode) host names", "Exceptions that are DISALLOWED, right-to-left chars", confWhyHostnameNoIDNA},
	{"optional/format/hostname.json", "validation of A-label (punycode) host names", "Exceptions that are DISALLOWED, left-to-right chars", confWhyHostnameNoIDNA},
	{"optional/format/hostname.json", "validation of A-label (punycode) host names", "MIDDLE DOT with no preceding 'l'", confWhyHostnameNoIDNA},
	{"optional/format/hostname.json", "validation of A-label (punycode) host names", "MIDDLE DOT with nothing preceding", confWhyHostnameNoIDNA},
	{"optional/format/hostname.json", "validation of A-label (punycode) host names", "MIDDLE DOT with no following 'l'", confWhyHostnameNoIDNA},
	{"optional/format/hostname.json", "validation of A-label (punycode) host names", "MIDDLE DOT with nothing following", confWhyHostnameNoIDNA},
	{"optional/format/hostname.json", "validation of A-label (punycode) host names", "Greek KERAIA not followed by Greek", confWhyHostnameNoIDNA},
	{"optional/format/hostname.json", "validation of A-label (punycode) host names", "Greek KERAIA not followed by anything", confWhyHostnameNoIDNA},
	{"optional/format/hostname.json", "validation of A-label (punycode) host names", "Hebrew GERESH not preceded by Hebrew", confWhyHostnameNoIDNA},
	{"optional/format/hostname.json", "validation of A-label (punycode) host names", "Hebrew GERESH not preceded by anything", confWhyHostnameNoIDNA},
	{"optional/format/hostname.json", "validation of A-label (punycode) host names", "Hebrew GERSHAYIM not preceded by Hebrew", confWhyHostnameNoIDNA},
	{"optional/format/hostname.json", "validation of A-label (punycode) host names", "Hebrew GERSHAYIM not preceded by anything", confWhyHostnameNoIDNA},
	{"optional/format/hostname.json", "validation of A-label (punycode) host names", "KATAKANA MIDDLE DOT with no Hiragana, Katakana, or Han", confWhyHostnameNoIDNA},
	{"optional/format/hostname.json", "validation of A-label (punycode) host names", "KATAKANA MIDDLE DOT with no other characters", confWhyHostnameNoIDNA},
	{"optional/format/hostname.json", "validation of A-label (punycode) host names", "Arabic-Indic digits mixed with Extended Arabic-Indic digits", confWhyHostnameNoIDNA},
	{"optional/format/hostname.json", "validation of A-label (punycode) host names", "ZERO WIDTH JOINER not preceded by Virama", confWhyHostnameNoIDNA},
	{"optional/format/hostname.json", "validation of A-label (punycode) host names", "ZERO WIDTH JOINER not preceded by anything", confWhyHostnameNoIDNA},
	{"optional/format/hostname.json", "validation of A-label (punycode) host names", "contains \"--\" in the 3rd and 4th position", confWhyHostnameNoIDNA},
	{"optional/format/idn-email.json", "validation of an internationalized e-mail addresses", "an invalid e-mail/idn e-mail address", confWhyNoIDNChecker},
	{"optional/format/idn-email.json", "validation of an internationalized e-mail addresses", "a fullwidth commercial at is not a local-part separator", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "illegal first char U+302E Hangul single dot tone mark", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "contains illegal char U+302E Hangul single dot tone mark", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "a single label of 64 characters is too long", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "invalid label, correct Punycode", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "invalid Punycode", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "U-label contains \"--\" in the 3rd and 4th position", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "U-label starts with a dash", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "U-label ends with a dash", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "U-label starts and ends with a dash", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "Begins with a Spacing Combining Mark", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "Begins with a Nonspacing Mark", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "Begins with an Enclosing Mark", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "Exceptions that are DISALLOWED, right-to-left chars", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "Exceptions that are DISALLOWED, left-to-right chars", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "MIDDLE DOT with no preceding 'l'", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "MIDDLE DOT with nothing preceding", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "MIDDLE DOT with no following 'l'", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "MIDDLE DOT with nothing following", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "Greek KERAIA not followed by Greek", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "Greek KERAIA not followed by anything", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "Hebrew GERESH not preceded by Hebrew", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "Hebrew GERESH not preceded by anything", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "Hebrew GERSHAYIM not preceded by Hebrew", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "Hebrew GERSHAYIM not preceded by anything", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "KATAKANA MIDDLE DOT with no Hiragana, Katakana, or Han", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "KATAKANA MIDDLE DOT with no other characters", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "Arabic-Indic digits mixed with Extended Arabic-Indic digits", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "ZERO WIDTH JOINER not preceded by Virama", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "ZERO WIDTH JOINER not preceded by anything", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "empty string", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "zero width non-joiner must pass at every occurrence", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "Bidi domain name with a digit-first label is invalid", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "label starting with a digit before a right-to-left letter is invalid", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "left-to-right label containing a right-to-left letter is invalid", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "right-to-left label mixing both digit types is invalid", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "A-label that decodes to a disallowed code point is invalid", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "A-label that decodes to a Bidi rule violation is invalid", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "a U-label whose A-label form is longer than 63 octets is invalid", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "empty label between two dots is invalid", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "a name longer than 253 characters is invalid", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "A-label that decodes to only ASCII is invalid", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of internationalized host names", "non-canonical Punycode that does not re-encode to itself is invalid", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of separators in internationalized host names", "single dot", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of separators in internationalized host names", "single ideographic full stop", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of separators in internationalized host names", "single fullwidth full stop", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of separators in internationalized host names", "single halfwidth ideographic full stop", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of separators in internationalized host names", "leading dot", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of separators in internationalized host names", "leading ideographic full stop", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of separators in internationalized host names", "leading fullwidth full stop", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of separators in internationalized host names", "leading halfwidth ideographic full stop", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of separators in internationalized host names", "trailing dot", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of separators in internationalized host names", "trailing ideographic full stop", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of separators in internationalized host names", "trailing fullwidth full stop", confWhyNoIDNChecker},
	{"optional/format/idn-hostname.json", "validation of separators in internationalized host names", "trailing halfwidth ideographic full stop", confWhyNoIDNChecker},
	{"optional/format/ipv4.json", "validation of IP addresses", "plus sign is invalid", confWhyIPv4PlusSign},
	{"optional/format/iri.json", "validation of IRIs", "an IPvFuture host with an uppercase version letter is valid", confWhyIPvFuture},
	{"optional/format/uri-reference.json", "validation of URI References", "unescaped non US-ASCII characters", confWhyNetURLLenient},
	{"optional/format/uri-reference.json", "validation of URI References", "a double quote in a path", confWhyNetURLLenient},
	{"optional/format/uri-reference.json", "validation of URI References", "square brackets outside an authority", confWhyNetURLLenient},
	{"optional/format/uri-reference.json", "validation of URI References", "more than one at-sign in the authority", confWhyNetURLLenient},
	{"optional/format/uri-template.json", "format: uri-template", "an empty expression is invalid", confWhyURITemplateNoGrammar},
	{"optional/format/uri-template.json", "format: uri-template", "an empty varspec inside the variable list is invalid", confWhyURITemplateNoGrammar},
	{"optional/format/uri-template.json", "format: uri-template", "fragment expansion operator", confWhyURITemplateRefusesOperators},
	{"optional/format/uri-template.json", "format: uri-template", "path segment expansion operator", confWhyURITemplateRefusesOperators},
	{"optional/format/uri-template.json", "format: uri-template", "form style query expansion operator", confWhyURITemplateRefusesOperators},
	{"optional/format/uri-template.json", "format: uri-template", "a double dot in a variable name is invalid", confWhyURITemplateNoGrammar},
	{"optional/format/uri-template.json", "format: uri-template", "a four-digit prefix max-length is valid", confWhyURITemplateRefusesOperators},
	{"optional/format/uri-template.json", "format: uri-template", "a space in a literal is invalid", confWhyURITemplateNoGrammar},
	{"optional/format/uri-template.json", "format: uri-template", "a trailing comma in the variable list is invalid", confWhyURITemplateNoGrammar},
	{"optional/format/uri-template.json", "format: uri-template", "a default value in a varspec is invalid", confWhyURITemplateNoGrammar},
	{"optional/format/uri-template.json", "format: uri-template", "an operator in place of the first varspec is invalid", confWhyURITemplateNoGrammar},
	{"optional/format/uri.json", "validation of URIs", "unescaped non US-ASCII characters", confWhyNetURLLenient},
	{"optional/format/uri.json", "validation of URIs", "invalid backslash character", confWhyNetURLLenient},
	{"optional/format/uri.json", "validation of URIs", "invalid \" character", confWhyNetURLLenient},
	{"optional/format/uri.json", "validation of URIs", "invalid <> characters", confWhyNetURLLenient},
	{"optional/format/uri.json", "validation of URIs", "invalid {} characters", confWhyNetURLLenient},
	{"optional/format/uri.json", "validation of URIs", "invalid ^ character", confWhyNetURLLenient},
	{"optional/format/uri.json", "validation of URIs", "invalid ` character", confWhyNetURLLenient},
	{"optional/format/uri.json", "validation of URIs", "invalid SPACE character", confWhyNetURLLenient},
	{"optional/format/uri.json", "validation of URIs", "invalid | character", confWhyNetURLLenient},
	{"optional/format/uri.json", "validation of URIs", "square brackets are not allowed in a path segment", confWhyNetURLLenient},
}

// confSchemaCase names one test of the suite.
type confSchemaCase struct {
	file, group, test string
}

func (c confSchemaCase) String() string {
	return fmt.Sprintf("%s / %q / %q", c.file, c.group, c.test)
}

// confSchemaRun is the result of one folder: counts, and each failing case
// with what happened.
type confSchemaRun struct {
	pass, fail int
	failures   map[confSchemaCase]string
}

// confRemotes serves the suite's remotes (conformance.Remotes).
func confRemotes(dir string) (schema.ConfinedLoader, error) {
	return conformance.Remotes(dir, conformanceSchemaLimits)
}

// confValidate runs Validate under recover, as the gate's schema stage does.
func confValidate(sch interface{ Validate(any) error }, v any) (panicked bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			panicked, err = true, fmt.Errorf("validator panic: %v", p)
		}
	}()
	return false, sch.Validate(v)
}

func confFirstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// confRunSchemaFolder runs every file directly in testsDir/folder: each
// group's schema is compiled once by its own gate.NewSchemaCompiler, and a
// group that does not compile fails each of its tests.
func confRunSchemaFolder(testsDir, folder string, loader schema.ConfinedLoader) confSchemaRun {
	GinkgoHelper()
	run := confSchemaRun{failures: map[confSchemaCase]string{}}
	seen := map[confSchemaCase]bool{}
	names, err := confList(filepath.Join(testsDir, filepath.FromSlash(folder)))
	Expect(err).NotTo(HaveOccurred())
	for _, name := range names {
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		file := path.Join(folder, name)
		doc, err := strictjson.Parse(confRead(filepath.Join(testsDir, filepath.FromSlash(file))), conformanceSchemaLimits)
		Expect(err).NotTo(HaveOccurred(), "%s does not pass the strict parser", file)
		groups, ok := doc.([]any)
		Expect(ok).To(BeTrue(), "%s is not an array of groups", file)
		for gi, g := range groups {
			group, ok := g.(map[string]any)
			Expect(ok).To(BeTrue(), "%s group %d is not an object", file, gi)
			desc, _ := group["description"].(string)
			tests, ok := group["tests"].([]any)
			Expect(ok).To(BeTrue(), "%s group %q has no tests array", file, desc)

			c := schema.NewCompiler(loader)
			url := fmt.Sprintf("http://airlock.invalid/draft2020-12/%s/group-%d.json", file, gi)
			var sch interface{ Validate(any) error }
			compileErr := c.AddResource(url, group["schema"])
			if compileErr == nil {
				s, err := c.Compile(url)
				if compileErr = err; err == nil {
					sch = s
				}
			}
			for _, t := range tests {
				test, ok := t.(map[string]any)
				Expect(ok).To(BeTrue(), "%s group %q: a test is not an object", file, desc)
				tdesc, _ := test["description"].(string)
				want, ok := test["valid"].(bool)
				Expect(ok).To(BeTrue(), "%s group %q test %q: no boolean valid", file, desc, tdesc)
				key := confSchemaCase{file, desc, tdesc}
				Expect(seen).NotTo(HaveKey(key), "%v appears twice: the known-differences table could not tell them apart", key)
				seen[key] = true

				var what string
				if compileErr != nil {
					what = "schema does not compile: " + confFirstLine(compileErr)
				} else if panicked, err := confValidate(sch, test["data"]); panicked {
					what = err.Error()
				} else if got := err == nil; got != want {
					what = fmt.Sprintf("valid=%v, want %v", got, want)
					if err != nil {
						what += ": " + confFirstLine(err)
					}
				}
				if what == "" {
					run.pass++
				} else {
					run.fail++
					run.failures[key] = what
				}
			}
		}
	}
	return run
}

var _ = Describe("JSON-Schema-Test-Suite draft2020-12", Label("conformance"), func() {
	corpus, missing := conformanceCorpus("JSON-Schema-Test-Suite")
	if missing != "" {
		It("finds the corpus", func() { conformanceMissing(missing) })
		return
	}
	testsDir := filepath.Join(corpus, "tests", "draft2020-12")
	remotes := sync.OnceValues(func() (schema.ConfinedLoader, error) {
		return confRemotes(filepath.Join(corpus, "remotes"))
	})

	known := map[confSchemaCase]string{}
	for _, d := range conformanceSchemaDifferences {
		known[confSchemaCase{d.file, d.group, d.test}] = d.why
	}

	It("keeps a well-formed known-differences table", func() {
		Expect(known).To(HaveLen(len(conformanceSchemaDifferences)), "a case is listed twice")
		for c, why := range known {
			Expect(why).NotTo(BeEmpty(), "%v has no reason", c)
			Expect(why).NotTo(ContainSubstring("\n"), "%v: reasons are one line", c)
			Expect(path.Dir(c.file)).To(BeElementOf(".", "optional", "optional/format"), "%v: not in a folder the suite runs", c)
		}
	})

	for _, folder := range []struct{ dir, label string }{
		{"", "top level"},
		{"optional", "optional"},
		{"optional/format", "optional/format"},
	} {
		It("runs "+folder.label+" with only the known differences failing", func() {
			if _, err := os.Stat(filepath.Join(testsDir, filepath.FromSlash(folder.dir))); err != nil {
				conformanceMissing(err.Error())
			}
			loader, err := remotes()
			Expect(err).NotTo(HaveOccurred())
			run := confRunSchemaFolder(testsDir, folder.dir, loader)
			Expect(run.pass+run.fail).To(BeNumerically(">", 0), "no tests in %s", folder.label)

			var unlisted, fixed []string
			for c, what := range run.failures {
				if _, ok := known[c]; !ok {
					unlisted = append(unlisted, fmt.Sprintf("%v: %s", c, what))
				}
			}
			listed := 0
			for c := range known {
				if d := path.Dir(c.file); d == folder.dir || (d == "." && folder.dir == "") {
					listed++
					if _, ok := run.failures[c]; !ok {
						fixed = append(fixed, c.String())
					}
				}
			}
			slices.Sort(unlisted)
			slices.Sort(fixed)
			msg := fmt.Sprintf("JSON-Schema-Test-Suite draft2020-12 %-15s %4d passed, %3d failed (%d listed as known differences)",
				folder.label+":", run.pass, run.fail, listed)
			fmt.Println(msg)
			fmt.Fprintln(GinkgoWriter, msg)
			var problems []string
			if len(unlisted) > 0 {
				problems = append(problems, "failing cases missing from conformanceSchemaDifferences:\n  "+strings.Join(unlisted, "\n  "))
			}
			if len(fixed) > 0 {
				problems = append(problems, "known differences that now pass or no longer exist (remove them from conformanceSchemaDifferences):\n  "+strings.Join(fixed, "\n  "))
			}
			if len(problems) > 0 {
				Fail(strings.Join(problems, "\n"))
			}
		})
	}
})
