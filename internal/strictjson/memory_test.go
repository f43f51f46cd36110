package strictjson_test

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/internal/strictjson"
	"github.com/airlockdev/airlock/internal/testbody"
)

// decodeStd is body as encoding/json decodes it with UseNumber: the values
// Parse must return.
func decodeStd(body []byte) any {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	Expect(dec.Decode(&v)).To(Succeed())
	return v
}

// repeated is a top-level array of el(0), el(1), … of about size bytes.
func repeated(size int, el func(i int) string) []byte {
	b := []byte("[")
	for i := 0; len(b) < size; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, el(i)...)
	}
	return append(b, ']')
}

// manyMembers is an object of about size bytes of members "0":0, "1":0, ….
func manyMembers(size int) []byte {
	b := repeated(size, func(i int) string { return strconv.Quote(strconv.Itoa(i)) + ":0" })
	b[0], b[len(b)-1] = '{', '}'
	return b
}

var _ = Describe("the values of a parse", func() {
	It("stay as they are while later parses run", func() {
		first := testbody.List(8 << 10)
		v, err := strictjson.Parse(first, strictjson.Limits{FoldCollisions: true})
		Expect(err).NotTo(HaveOccurred())
		for range 3 {
			_, err := strictjson.Parse(wideBody(8<<10), strictjson.Limits{FoldCollisions: true})
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(v).To(Equal(decodeStd(first)))
	})

	It("do not share room: appending to an array leaves the next one alone", func() {
		v, err := strictjson.Parse([]byte(`[[1,2],[3,4]]`), strictjson.Limits{})
		Expect(err).NotTo(HaveOccurred())
		outer := v.([]any)
		a := outer[0].([]any)
		_ = append(a, "x")
		Expect(outer[1]).To(Equal([]any{json.Number("3"), json.Number("4")}))
	})
})

// The bound of Parse's doc comment, on API pages and on the shapes that
// cost the most per byte. A spec runs alone, so the allocation counters
// count the parse.
var _ = Describe("the memory a parse allocates", func() {
	const size = 128 << 10
	DescribeTable("is at most 72 bytes per body byte and 64 KiB",
		func(body []byte) {
			lim := strictjson.Limits{FoldCollisions: true}
			_, err := strictjson.Parse(body, lim)
			Expect(err).NotTo(HaveOccurred())
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = strictjson.Parse(body, lim)
			runtime.ReadMemStats(&after)
			Expect(err).NotTo(HaveOccurred())
			Expect(after.TotalAlloc - before.TotalAlloc).To(BeNumerically("<=", 72*len(body)+64<<10))
		},
		Entry("a list page", testbody.List(size)),
		Entry("a page with a wide object", wideBody(size)),
		Entry("one-member objects", repeated(size, func(int) string { return `{"":0}` })),
		Entry("nested one-member objects", repeated(size, func(int) string { return `{"":{"":{"":{"":{"":{}}}}}}` })),
		Entry("empty objects", repeated(size, func(int) string { return `{}` })),
		Entry("nested arrays", repeated(size, func(int) string { return `[[[[[[]]]]]]` })),
		Entry("zeros", repeated(size, func(int) string { return `0` })),
		Entry("distinct numbers", repeated(size, strconv.Itoa)),
		Entry("distinct strings", repeated(size, func(i int) string { return strconv.Quote(strconv.Itoa(i)) })),
		Entry("an object of many members", manyMembers(size)),
		Entry("an object of many members in capitals", bytes.ToUpper(manyMembers(size))),

		Entry("a scalar", []byte(`0`)),
		Entry("a string", []byte(strconv.Quote(string(bytes.Repeat([]byte("ab"), 30000))))),
	)
})

// A large object's map is made for the members counted ahead of the
// parse; names that do not make members count for no more than valid
// ones would.
var _ = Describe("the members counted ahead of a large object", func() {
	DescribeTable("cost no more than those of a valid object of the body's size",
		func(tail string) {
			body := []byte(`{"a":0,"b":0,"c":0,"d":0,"e":0,"f":0,"g":0,"h":0,"i":0,"j":0,"k":0,"l":0,"m":0,"n":0,"o":0,"p":0,` + strings.Repeat(tail, 64<<10))
			_, err := strictjson.Parse(body, strictjson.Limits{FoldCollisions: true})
			Expect(err).To(HaveOccurred())
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = strictjson.Parse(body, strictjson.Limits{FoldCollisions: true})
			runtime.ReadMemStats(&after)
			Expect(err).To(HaveOccurred())
			Expect(after.TotalAlloc - before.TotalAlloc).To(BeNumerically("<=", 12*len(body)+64<<10))
		},
		Entry("names without values", `"":`),
		Entry("commas", `,`),
		Entry("a repeated name", `"a":0,`),
	)
})
