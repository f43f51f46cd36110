package validator

import (
	"hash/maphash"

	"github.com/airlockdev/airlock/internal/strictjson"
)

// equalAt is JSON Schema's instance equality (JSON Schema Core 2020-12
// §4.2.2) between the value at i and x, a value of the schema (const,
// enum): same type, numbers equal by mathematical value (1 and 1.0),
// strings by code points, arrays item by item, objects member by member.
func equalAt(t *strictjson.Tape, i int32, x any) bool {
	nd := &t.Nodes[i]
	switch y := x.(type) {
	case nil:
		return nd.Kind == strictjson.KindNull
	case bool:
		return nd.Kind == strictjson.KindTrue && y || nd.Kind == strictjson.KindFalse && !y
	case string:
		return nd.Kind == strictjson.KindString && t.Text(i) == y
	case []any:
		if nd.Kind != strictjson.KindArray || int(nd.Len) != len(y) {
			return false
		}
		k := 0
		for j := i + 1; j < nd.End; j = t.Nodes[j].End {
			if !equalAt(t, j, y[k]) {
				return false
			}
			k++
		}
		return true
	case map[string]any:
		if nd.Kind != strictjson.KindObject || int(nd.Len) != len(y) {
			return false
		}
		for j := i + 1; j < nd.End; j = t.Nodes[j].End {
			v, ok := y[t.Name(j)]
			if !ok || !equalAt(t, j, v) {
				return false
			}
		}
		return true
	}
	if nd.Kind != strictjson.KindNumber {
		return false
	}
	s, ok := numberText(x)
	return ok && sameNumber(t.Text(i), s)
}

// sameNumber reports whether two number texts have the same value.
func sameNumber(a, b string) bool {
	if a == b {
		return true
	}
	da, ok1 := parseDec(a)
	db, ok2 := parseDec(b)
	return ok1 && ok2 && cmpDec(&da, &db) == 0
}

// inListAt reports whether the value at i equals one of list.
func inListAt(t *strictjson.Tape, i int32, list []any) bool {
	for _, x := range list {
		if equalAt(t, i, x) {
			return true
		}
	}
	return false
}

// equalNodes is equalAt between two values of one tape.
func equalNodes(t *strictjson.Tape, a, b int32) bool {
	na, nb := &t.Nodes[a], &t.Nodes[b]
	if na.Kind != nb.Kind {
		return false
	}
	switch na.Kind {
	case strictjson.KindString:
		return t.Text(a) == t.Text(b)
	case strictjson.KindNumber:
		return sameNumber(t.Text(a), t.Text(b))
	case strictjson.KindArray:
		if na.Len != nb.Len {
			return false
		}
		for x, y := a+1, b+1; x < na.End; x, y = t.Nodes[x].End, t.Nodes[y].End {
			if !equalNodes(t, x, y) {
				return false
			}
		}
		return true
	case strictjson.KindObject:
		if na.Len != nb.Len {
			return false
		}
		for x := a + 1; x < na.End; x = t.Nodes[x].End {
			y, ok := t.Member(b, t.Name(x))
			if !ok || !equalNodes(t, x, y) {
				return false
			}
		}
		return true
	}
	return true // null, true, false: the kind is the value
}

// hashSeed is fixed per process: the hash only groups candidates for
// equalNodes, never decides.
var hashSeed = maphash.MakeSeed()

// hashAt writes a hash of the value at i that equal values share (numbers
// by their normalised digits and point, objects independent of member
// order).
func hashAt(h *maphash.Hash, t *strictjson.Tape, i int32) {
	nd := &t.Nodes[i]
	h.WriteByte(byte(nd.Kind))
	switch nd.Kind {
	case strictjson.KindString:
		writeLen(h, len(t.Text(i)))
		h.WriteString(t.Text(i))
	case strictjson.KindArray:
		for j := i + 1; j < nd.End; j = t.Nodes[j].End {
			hashAt(h, t, j)
		}
		h.WriteByte(']')
	case strictjson.KindObject:
		// Order-independent: the sum of each member's own hash.
		var sum uint64
		for j := i + 1; j < nd.End; j = t.Nodes[j].End {
			var m maphash.Hash
			m.SetSeed(hashSeed)
			writeLen(&m, len(t.Name(j)))
			m.WriteString(t.Name(j))
			hashAt(&m, t, j)
			sum += m.Sum64()
		}
		var b [8]byte
		for k := range b {
			b[k] = byte(sum >> (8 * k))
		}
		h.Write(b[:])
	case strictjson.KindNumber:
		d, ok := parseDec(t.Text(i))
		if !ok {
			writeLen(h, len(t.Text(i)))
			h.WriteString(t.Text(i))
			return
		}
		if d.isZero() {
			return
		}
		if d.neg {
			h.WriteByte('-')
		}
		for k := 1; k <= d.n; k++ {
			h.WriteByte('0' + d.digit(k))
		}
		var b [8]byte
		for k := range b {
			b[k] = byte(uint64(d.point) >> (8 * k))
		}
		h.Write(b[:])
	}
}

// duplicatesAt returns the indexes a < b of the first pair of equal
// items (by b) of the array at i, or -1, -1: pairwise for short arrays, by
// hash for longer ones, so that the work is linear in the array's size.
func duplicatesAt(t *strictjson.Tape, i int32) (int, int) {
	nd := &t.Nodes[i]
	if nd.Len <= 16 {
		var items [16]int32
		n := 0
		for j := i + 1; j < nd.End; j = t.Nodes[j].End {
			for k := 0; k < n; k++ {
				if equalNodes(t, items[k], j) {
					return k, n
				}
			}
			items[n] = j
			n++
		}
		return -1, -1
	}
	type seen struct{ node, index int32 }
	byHash := make(map[uint64][]seen, nd.Len)
	var h maphash.Hash
	h.SetSeed(hashSeed)
	k := int32(0)
	for j := i + 1; j < nd.End; j, k = t.Nodes[j].End, k+1 {
		h.Reset()
		hashAt(&h, t, j)
		sum := h.Sum64()
		for _, s := range byHash[sum] {
			if equalNodes(t, s.node, j) {
				return int(s.index), int(k)
			}
		}
		byHash[sum] = append(byHash[sum], seen{j, k})
	}
	return -1, -1
}

// writeLen writes n before a string, so that concatenations of different
// strings ("a","b" and "asb"'s pieces) never hash alike by construction.
func writeLen(h *maphash.Hash, n int) {
	var b [8]byte
	for k := range b {
		b[k] = byte(uint64(n) >> (8 * k))
	}
	h.Write(b[:])
}
