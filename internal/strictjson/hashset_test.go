package strictjson

import "testing"

// TestHashSet checks the set of hashes of folded names where two hashes
// share their high half, which a parse meets about once in 2^32 pairs.
func TestHashSet(t *testing.T) {
	s := hashSet{m: map[uint32]uint32{}}
	const a, b, c = 0x12345678_00000001, 0x12345678_00000002, 0x9abcdef0_00000001
	s.add(a)
	if !s.has(a) || s.has(b) || s.has(c) {
		t.Fatalf("after a: has(a) %v, has(b) %v, has(c) %v", s.has(a), s.has(b), s.has(c))
	}
	s.add(b)
	s.add(b)
	if !s.has(a) || !s.has(b) || s.has(c) || len(s.more) != 1 {
		t.Fatalf("after b: has(a) %v, has(b) %v, has(c) %v, %d more", s.has(a), s.has(b), s.has(c), len(s.more))
	}
	s.add(c)
	if !s.has(c) || len(s.m) != 2 {
		t.Fatalf("after c: has(c) %v, %d in m", s.has(c), len(s.m))
	}
}
