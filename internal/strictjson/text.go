package strictjson

import "strings"

// text holds the bytes of the strings and numbers one parse returns (and
// of folded member names): each is copied into the current chunk, and the
// strings cut from a chunk share it, so a parse allocates a chunk now and
// then instead of a buffer per string. A string the result keeps keeps its
// whole chunk alive. A chunk is no larger than the input left to read
// when it is made, unless one string needs more; a string that does not fit
// in what is left of a chunk goes to the next, and that rest is not used.
//
// A chunk is a strings.Builder: a string taken from it never changes, as
// the Builder only appends, and a new chunk is a new Builder.
type text struct {
	chunk strings.Builder
	next  int // the size of the next chunk, unless rest or a string bounds it
}

// The first chunk of a parse is of minChunk bytes, each next one twice the
// last, up to maxChunk (a longer string gets a chunk of its own size).
const (
	minChunk = 512
	maxChunk = 16 << 10
)

// add returns b as a string in the current chunk, starting a new one when
// b does not fit; rest is how many input bytes are left from b's token on,
// which bounds the text still to come.
func (t *text) add(b []byte, rest int64) string {
	if len(b) == 0 {
		return ""
	}
	if t.chunk.Cap()-t.chunk.Len() < len(b) {
		t.next = min(max(2*t.next, minChunk), maxChunk)
		t.chunk = strings.Builder{}
		t.chunk.Grow(max(len(b), int(min(rest, int64(t.next)))))
	}
	t.chunk.Write(b)
	s := t.chunk.String()
	return s[len(s)-len(b):]
}
