package shard

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// randomItems returns n items with distinct keys and sizes up to maxSize
// (some 0, some negative), from seed.
func randomItems(seed uint64, n int, maxSize int64) []Item {
	r := rand.New(rand.NewPCG(seed, 17))
	items := make([]Item, n)
	for i := range items {
		size := r.Int64N(maxSize + 1)
		switch r.IntN(10) {
		case 0:
			size = 0
		case 1:
			size = -size
		}
		items[i] = Item{Key: fmt.Sprintf("tool%d/v%d/accepted/f%d.json", r.IntN(3), r.IntN(4), i), Size: size}
	}
	return items
}

// TestAssignProperties checks, over random item sets and shard counts,
// that Assign places every item in exactly one shard in 1..n, that the
// placement is deterministic and depends on the items, not their order,
// and that no shard's weight (sizes, negative as 0, plus one per item)
// exceeds another's by more than the heaviest item's.
func TestAssignProperties(t *testing.T) {
	for seed := range uint64(40) {
		n := int(seed%7) + 1
		items := randomItems(seed, int(seed*13%200), 1<<int(seed%20))
		got := Assign(items, n)
		if len(got) != len(items) {
			t.Fatalf("seed %d: %d shards for %d items", seed, len(got), len(items))
		}
		again := Assign(items, n)
		load := make([]int64, n)
		var heaviest int64
		for i, k := range got {
			if k < 1 || k > n {
				t.Fatalf("seed %d: item %d in shard %d of %d", seed, i, k, n)
			}
			if again[i] != k {
				t.Fatalf("seed %d: item %d in shard %d, then %d", seed, i, k, again[i])
			}
			w := max(items[i].Size, 0) + 1
			load[k-1] += w
			heaviest = max(heaviest, w)
		}
		lo, hi := load[0], load[0]
		for _, l := range load {
			lo, hi = min(lo, l), max(hi, l)
		}
		if len(items) > 0 && hi-lo > heaviest {
			t.Errorf("seed %d, n %d: loads %v differ by %d, more than the heaviest item %d", seed, n, load, hi-lo, heaviest)
		}

		// Order independence: a shuffled copy places each key alike.
		r := rand.New(rand.NewPCG(seed, 99))
		perm := r.Perm(len(items))
		shuffled := make([]Item, len(items))
		for i, p := range perm {
			shuffled[i] = items[p]
		}
		for i, k := range Assign(shuffled, n) {
			if want := got[perm[i]]; k != want {
				t.Fatalf("seed %d: %s in shard %d shuffled, %d in order", seed, shuffled[i].Key, k, want)
			}
		}

		// Select over all shards is a partition of the indices.
		seen := make([]int, len(items))
		for k := 1; k <= n; k++ {
			for _, i := range (Shard{Index: k, Count: n}).Select(items) {
				seen[i]++
			}
		}
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("seed %d: item %d selected by %d shards", seed, i, c)
			}
		}
	}
}

// TestAssignEqualSizesByCount: items of one size spread by count, so
// shards differ by at most one item.
func TestAssignEqualSizesByCount(t *testing.T) {
	items := make([]Item, 103)
	for i := range items {
		items[i] = Item{Key: fmt.Sprint("k", i), Size: 0}
	}
	count := make([]int, 5)
	for _, k := range Assign(items, 5) {
		count[k-1]++
	}
	for _, c := range count {
		if c < 20 || c > 21 {
			t.Fatalf("counts %v; want 20 or 21 each", count)
		}
	}
}

func TestParse(t *testing.T) {
	for _, ok := range []string{"1/1", "2/5", "1024/1024"} {
		s, err := Parse(ok)
		if err != nil || s.String() != ok {
			t.Errorf("Parse(%q) = %v, %v", ok, s, err)
		}
	}
	for _, bad := range []string{"0/3", "4/3", "1/0", "1/1025", "01/3", "1/3/", "+1/3", "a/b", "3", " 1/3", "-1/3"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
	if s, err := Parse(""); err != nil || !s.IsZero() || !s.ReportsContract() {
		t.Errorf("Parse(\"\") = %v, %v; want the zero Shard", s, err)
	}
	if (Shard{Index: 2, Count: 3}).ReportsContract() || !(Shard{Index: 1, Count: 3}).ReportsContract() {
		t.Error("ReportsContract: want shard 1 only")
	}
}

// TestAssignNormalisesKeys: a key spelt in NFD places like its NFC
// spelling, so a macOS checkout and a Linux one split alike.
func TestAssignNormalisesKeys(t *testing.T) {
	var nfc, nfd []Item
	for i := range 40 {
		nfc = append(nfc, Item{Key: fmt.Sprintf("t/v1/accepted/caf\u00e9%d.json", i), Size: 100})
		nfd = append(nfd, Item{Key: fmt.Sprintf("t/v1/accepted/cafe\u0301%d.json", i), Size: 100})
	}
	for i := range 10 {
		plain := Item{Key: fmt.Sprintf("t/v1/accepted/plain%d.json", i), Size: 100}
		nfc, nfd = append(nfc, plain), append(nfd, plain)
	}
	for n := 2; n <= 5; n++ {
		a, b := Assign(nfc, n), Assign(nfd, n)
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("n %d: %s in shard %d, its NFD spelling in %d", n, nfc[i].Key, a[i], b[i])
			}
		}
	}
	// Both spellings in one set: still a deterministic partition.
	both := append(slices.Clone(nfc[:5]), nfd[:5]...)
	rev := slices.Clone(both)
	slices.Reverse(rev)
	a, b := Assign(both, 3), Assign(rev, 3)
	for i := range a {
		if a[i] != b[len(b)-1-i] {
			t.Fatalf("%q in shard %d, reversed in %d", both[i].Key, a[i], b[len(b)-1-i])
		}
	}
}

// TestSetDigest: the digest of a set depends on its items (keys byte for
// byte, sizes) and the shard count, not on their order.
func TestSetDigest(t *testing.T) {
	items := randomItems(7, 50, 1000)
	d := SetDigest(items, 3)
	if !ValidSet(d) {
		t.Fatalf("SetDigest = %q; want %d hex digits", d, SetLen)
	}
	rev := slices.Clone(items)
	slices.Reverse(rev)
	if got := SetDigest(rev, 3); got != d {
		t.Errorf("reversed items: %s, want %s", got, d)
	}
	changed := func(what string, items []Item, n int) {
		t.Helper()
		if got := SetDigest(items, n); got == d {
			t.Errorf("%s: digest unchanged (%s)", what, got)
		}
	}
	changed("another count", items, 4)
	changed("one item fewer", items[1:], 3)
	bigger := slices.Clone(items)
	bigger[3].Size = max(bigger[3].Size, 0) + 1
	changed("one size changed", bigger, 3)
	renamed := slices.Clone(items)
	renamed[0].Key += "x"
	changed("one key changed", renamed, 3)
	// Keys that only a separator could tell apart.
	if SetDigest([]Item{{Key: "ab"}, {Key: "c"}}, 2) == SetDigest([]Item{{Key: "a"}, {Key: "bc"}}, 2) {
		t.Error("ab,c and a,bc: one digest")
	}
	nfc := []Item{{Key: "t/v1/accepted/caf\u00e9.json", Size: 5}}
	nfd := []Item{{Key: "t/v1/accepted/cafe\u0301.json", Size: 5}}
	if SetDigest(nfc, 2) == SetDigest(nfd, 2) {
		t.Error("NFC and NFD spellings: one digest; want the checkouts told apart")
	}
	s := Shard{Index: 2, Count: 3}.Of(items)
	if s.Set != d || s.Index != 2 || s.Count != 3 {
		t.Errorf("Of = %+v; want set %s", s, d)
	}
	if z := (Shard{}).Of(items); !z.IsZero() || z.Set != "" {
		t.Errorf("zero Shard.Of = %+v; want zero", z)
	}
	for _, bad := range []string{"", d[:SetLen-1], strings.ToUpper(d), d + "0", strings.Repeat("g", SetLen)} {
		if ValidSet(bad) && bad != d {
			t.Errorf("ValidSet(%q) = true", bad)
		}
	}
}

// TestVariant checks that a variant changes the set digest (to another
// valid one, the same in every shard), and that "", the zero Shard and a
// Shard without a set are left as they are.
func TestVariant(t *testing.T) {
	items := randomItems(3, 20, 100)
	s1 := Shard{Index: 1, Count: 2}.Of(items)
	s2 := Shard{Index: 2, Count: 2}.Of(items)
	if got := s1.Variant(""); got != s1 {
		t.Errorf("Variant(\"\") = %+v, want %+v", got, s1)
	}
	m1, m2 := s1.Variant("+mutate"), s2.Variant("+mutate")
	if m1.Set == s1.Set || !ValidSet(m1.Set) || m1.Set != m2.Set || m1.Index != 1 || m1.Count != 2 {
		t.Errorf("Variant(+mutate) = %+v and %+v from %+v", m1, m2, s1)
	}
	if p := s1.Variant("parse"); p.Set == m1.Set || p.Set == s1.Set {
		t.Errorf("Variant(parse) = %+v, want a set of its own", p)
	}
	if z := (Shard{}).Variant("+mutate"); !z.IsZero() || z.Set != "" {
		t.Errorf("zero Shard's Variant = %+v", z)
	}
	if n := (Shard{Index: 1, Count: 2}).Variant("+mutate"); n.Set != "" {
		t.Errorf("Variant without a set = %+v", n)
	}
}
