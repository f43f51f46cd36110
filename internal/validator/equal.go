package validator

import (
	"hash/maphash"
)

// equal is JSON Schema's instance equality (JSON Schema Core 2020-12
// §4.2.2): same type, numbers equal by mathematical value (1 and 1.0),
// strings by code points, arrays item by item, objects member by member.
func equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equal(xv, yv) {
				return false
			}
		}
		return true
	}
	as, ok := numberText(a)
	if !ok {
		return false
	}
	bs, ok := numberText(b)
	if !ok {
		return false
	}
	if as == bs {
		return true
	}
	da, ok1 := parseDec(as)
	db, ok2 := parseDec(bs)
	return ok1 && ok2 && cmpDec(&da, &db) == 0
}

// hashSeed is fixed per process: the hash only groups candidates for
// equal, never decides.
var hashSeed = maphash.MakeSeed()

// hashValue writes a hash of v that equal values share (numbers by their
// normalised digits and point, objects independent of member order).
func hashValue(h *maphash.Hash, v any) {
	switch x := v.(type) {
	case nil:
		h.WriteByte('n')
	case bool:
		if x {
			h.WriteByte('t')
		} else {
			h.WriteByte('f')
		}
	case string:
		h.WriteByte('s')
		h.WriteString(x)
	case []any:
		h.WriteByte('a')
		for _, e := range x {
			hashValue(h, e)
		}
		h.WriteByte(']')
	case map[string]any:
		// Order-independent: the sum of each member's own hash.
		var sum uint64
		for k, e := range x {
			var m maphash.Hash
			m.SetSeed(hashSeed)
			m.WriteString(k)
			hashValue(&m, e)
			sum += m.Sum64()
		}
		h.WriteByte('o')
		var b [8]byte
		for i := range b {
			b[i] = byte(sum >> (8 * i))
		}
		h.Write(b[:])
	default:
		s, ok := numberText(v)
		if !ok {
			h.WriteByte('?')
			return
		}
		d, ok := parseDec(s)
		if !ok {
			h.WriteString(s)
			return
		}
		h.WriteByte('#')
		if d.isZero() {
			return
		}
		if d.neg {
			h.WriteByte('-')
		}
		for i := 1; i <= d.n; i++ {
			h.WriteByte('0' + d.digit(i))
		}
		var b [8]byte
		for i := range b {
			b[i] = byte(uint64(d.point) >> (8 * i))
		}
		h.Write(b[:])
	}
}

// duplicates returns the indexes i < j of the first pair of equal items
// (by j), or -1, -1: pairwise for short arrays, by hash for longer ones, so
// that the work is linear in the array's size.
func duplicates(arr []any) (int, int) {
	if len(arr) <= 16 {
		for j := 1; j < len(arr); j++ {
			for i := 0; i < j; i++ {
				if equal(arr[i], arr[j]) {
					return i, j
				}
			}
		}
		return -1, -1
	}
	seen := make(map[uint64][]int, len(arr))
	var h maphash.Hash
	h.SetSeed(hashSeed)
	for j, item := range arr {
		h.Reset()
		hashValue(&h, item)
		k := h.Sum64()
		for _, i := range seen[k] {
			if equal(arr[i], item) {
				return i, j
			}
		}
		seen[k] = append(seen[k], j)
	}
	return -1, -1
}
