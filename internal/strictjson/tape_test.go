package strictjson_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/airlockdev/airlock/internal/conformance"
	"github.com/airlockdev/airlock/internal/strictjson"
)

// ParseTape must be Parse laid out differently: the same value (read back
// with Tape.Value), the same refusal (reason, offset, pointer, message,
// repeats), on every input. The inputs: the bodies below, every file of
// JSONTestSuite's test_parsing when the corpus is beside the repository
// (or under $AIRLOCK_CONFORMANCE), and FuzzTape's.

var tapeBodies = []string{
	`{}`, `[]`, `0`, `-1.5e3`, `"x"`, `null`, `true`, `false`,
	`{"a":1,"b":[true,false,null,"s",{"c":{}}],"d":{"e":[[],[1,[2]]]}}`,
	`[{"id":"ISS-1","labels":["a","b"]},{"id":"ISS-2","labels":[]}]`,
	`{"a":1,"a":2}`, `{"Role":1,"role":2}`, `{"a":[1,2,}`, `[1,2`, `{"a":"\ud800"}`,
	`1e1001`, `"\u00e9\n"`, `{"":{"":""}}`, ` [ 1 , 2 ] x`, "\xef\xbb\xbf{}",
	`[` + strings.Repeat(`{"k":0},`, 100) + `{}]`,
	`{` + strings.Repeat(`"k":0,`, 3) + `"k":1}`,
	strings.Repeat("[", 70) + strings.Repeat("]", 70),
	// The fast path's edges: each either laid out as Parse reads it or
	// left to the parser, which refuses it.
	`{"a":1,"\u0061":2}`, `{"\u00e9":1,"é":2}`, `{"Kelvin":1,"\u212aelvin":2}`, `{"a\/b":"\ud83d\ude00"}`,
	`["\ud83d"]`, `["\ud83dx"]`, `["\ud83d\u0041"]`, `["\udc00"]`, `["\u12"]`, `["\x"]`, "[\"a\x01\"]", "[\"\xff\"]",
	"[\"\xe2\x82\"]", `[-0,0.0e0,1E+2,-1.5e-300,1e-400,1e1000,1e1001]`, `[01]`, `[-]`, `[1.]`, `[1e]`, `[1,]`, `{,}`,
	`{"a" : 1 , "b" : [ ] , "c" : { } }`, `[truex]`, `[nul]`, `{"a":1}x`, `[1 2]`, `{"a":1,}`, `{"a"}`, `{1:2}`,
	"\t\n\r [ \"x\" ] \t", `"` + strings.Repeat("é", 40000) + `"`, strings.Repeat("[", 64) + strings.Repeat("]", 64),
	strings.Repeat("[", 65) + strings.Repeat("]", 65), `[` + strings.Repeat("9", 129) + `]`,
	// Objects past 16 members (their names are looked up in a map), with a
	// repeat and a fold collision after the switch.
	bigObject(40, ""), bigObject(40, `,"k3":1`), bigObject(40, `,"K7":1`), `[` + bigObject(20, "") + `,` + bigObject(30, `,"k29":0`) + `]`,
}

// bigObject is an object of n members k0…kn-1, then extra.
func bigObject(n int, extra string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":{"v":%d}`, i, i)
	}
	return b.String() + extra + "}"
}

func sameParse(t testing.TB, body []byte) {
	sameParseWithin(t, body, strictjson.Limits{FoldCollisions: true})
}

func sameParseWithin(t testing.TB, body []byte, lim strictjson.Limits) {
	v, err := strictjson.Parse(body, lim)
	tape, terr := strictjson.ParseTape(body, lim)
	if (err == nil) != (terr == nil) {
		t.Fatalf("%q: Parse error %v, ParseTape error %v", body, err, terr)
	}
	if err != nil {
		var a, b *strictjson.Error
		if !errors.As(err, &a) || !errors.As(terr, &b) || !reflect.DeepEqual(a, b) {
			t.Fatalf("%q: Parse refused %#v, ParseTape %#v", body, err, terr)
		}
		return
	}
	if got := tape.Value(0); !reflect.DeepEqual(got, v) {
		t.Fatalf("%q: the tape reads back %#v, Parse gave %#v", body, got, v)
	}
	if n := len(tape.Nodes); n == 0 || tape.Nodes[0].End != int32(n) {
		t.Fatalf("%q: the root's subtree ends at %d of %d nodes", body, tape.Nodes[0].End, n)
	}
}

func TestParseTapeAgreesWithParse(t *testing.T) {
	for _, b := range tapeBodies {
		sameParse(t, []byte(b))
	}
	dir, missing := conformance.Corpus("JSONTestSuite")
	files, _ := filepath.Glob(filepath.Join(dir, "test_parsing", "*.json"))
	if missing == "" && len(files) == 0 {
		missing = "no test_parsing files in " + dir
	}
	if missing != "" {
		if conformance.Required() {
			t.Fatal("CI=true but " + missing)
		}
		t.Logf("%s: only the built-in bodies ran", missing)
	}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sameParse(t, body)
	}
	t.Logf("%d bodies and %d JSONTestSuite files", len(tapeBodies), len(files))
}

func TestTapeOfReadsBack(t *testing.T) {
	v, err := strictjson.Parse([]byte(tapeBodies[8]), strictjson.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	tape, ok := strictjson.TapeOf(v)
	if !ok || !reflect.DeepEqual(tape.Value(0), v) {
		t.Fatalf("TapeOf does not read back: %v %#v", ok, tape)
	}
	if _, ok := strictjson.TapeOf(map[string]any{"x": struct{}{}}); ok {
		t.Fatal("TapeOf took a Go struct")
	}
	b, _ := tape.Member(0, "b")
	if e, ok := tape.Element(b, 3); !ok || tape.Text(e) != "s" {
		t.Fatalf("Member/Element: %d %v", e, ok)
	}
}

// FuzzTape holds the two parses to each other under the default limits
// with the fold check and under small limits drawn from the input (0: the
// default), the fold check on or off, as contracts set them.
func FuzzTape(f *testing.F) {
	for i, b := range tapeBodies {
		f.Add([]byte(b), uint8(0), uint8(0), uint8(0), true)
		f.Add([]byte(b), uint8(i%5+1), uint8(i%7+1), uint8(i%11+1), i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, body []byte, depth, number, str uint8, fold bool) {
		sameParse(t, body)
		sameParseWithin(t, body, strictjson.Limits{MaxDepth: int(depth % 12), MaxNumberLength: int(number % 12),
			MaxStringLength: int(str % 12), FoldCollisions: fold})
	})
}
