// Package shard splits a run over N runners: which shard a report covers
// (Shard, written "K/N" with K 1-based), a deterministic partition of
// items by a stable hash of their keys, balanced by size (Assign), and the
// digest of the partitioned set (SetDigest) that tells shards of one run
// from shards of different checkouts.
package shard

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// MaxCount is the largest shard count accepted: more runners than this
// is a typo, not a plan.
const MaxCount = 1024

// Shard is shard Index of Count (Index 1-based) of the set of items whose
// digest is Set. The zero Shard is an unsharded run: every item, and every
// contract-level entry.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
	// Set is SetDigest of every item partitioned and Count (SetLen
	// lower-case hex digits), the same in each shard of one run: what
	// airlock merge compares so that shards of two checkouts, whose
	// partitions may differ, are not joined. Of fills it; "" when not
	// known (Parse, the zero Shard).
	Set string `json:"set,omitempty"`
}

// Parse reads "K/N" (decimal, 1 ≤ K ≤ N ≤ MaxCount); "" is the zero Shard.
// Any other text is an error that says what is wanted.
func Parse(s string) (Shard, error) {
	if s == "" {
		return Shard{}, nil
	}
	k, n, ok := strings.Cut(s, "/")
	ki, err1 := strconv.Atoi(k)
	ni, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || k != strconv.Itoa(ki) || n != strconv.Itoa(ni) {
		return Shard{}, fmt.Errorf("shard %q: want K/N, two decimal numbers such as 2/5", s)
	}
	if ni < 1 || ni > MaxCount || ki < 1 || ki > ni {
		return Shard{}, fmt.Errorf("shard %q: want 1 ≤ K ≤ N ≤ %d", s, MaxCount)
	}
	return Shard{Index: ki, Count: ni}, nil
}

// String is "K/N", or "" for the zero Shard.
func (s Shard) String() string {
	if s.IsZero() {
		return ""
	}
	return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count)
}

// IsZero reports whether s is an unsharded run.
func (s Shard) IsZero() bool { return s.Count == 0 }

// ReportsContract reports whether the entries that belong to no fixture
// (a broken contract, lint findings, a stale baseline entry) are reported
// by this shard: the unsharded run and shard 1 only, so that a merged
// report holds each once.
func (s Shard) ReportsContract() bool { return s.IsZero() || s.Index == 1 }

// Item is one thing to place: Key names it stably (the same in every
// runner, such as tool/upstream-version/kind/name) and Size weighs it
// (bytes; negative counts as 0).
type Item struct {
	Key  string
	Size int64
}

// Assign places every item in one of n shards and returns each item's
// shard, 1-based, in items' order. The partition depends only on the
// multiset of (Key, Size): items are taken largest first (ties by the
// FNV-1a hash of the key in Unicode Normalization Form C, UAX #15, then
// that normalised key, then the key's own bytes), and each goes to the
// shard with the least size so far (ties: the lowest index), the
// longest-processing-time rule, so no shard exceeds the mean by more than
// the largest item. A key spelt in NFC on one runner and in NFD on another
// (file names as macOS and Linux checkouts give them) is placed alike.
// Time O(len(items) × (log len(items) + n)); n < 1 is treated as 1.
func Assign(items []Item, n int) []int {
	if n < 1 {
		n = 1
	}
	order := make([]int, len(items))
	hashes := make([]uint64, len(items))
	keys := make([]string, len(items))
	for i, it := range items {
		order[i] = i
		keys[i] = norm.NFC.String(it.Key)
		h := fnv.New64a()
		h.Write([]byte(keys[i]))
		hashes[i] = h.Sum64()
	}
	size := func(i int) int64 { return max(items[i].Size, 0) }
	slices.SortFunc(order, func(a, b int) int {
		if sa, sb := size(a), size(b); sa != sb {
			if sa > sb {
				return -1
			}
			return 1
		}
		if hashes[a] != hashes[b] {
			if hashes[a] < hashes[b] {
				return -1
			}
			return 1
		}
		if c := strings.Compare(keys[a], keys[b]); c != 0 {
			return c
		}
		return strings.Compare(items[a].Key, items[b].Key)
	})
	load := make([]int64, n)
	count := make([]int, n)
	out := make([]int, len(items))
	for _, i := range order {
		best := 0
		for s := 1; s < n; s++ {
			// Least size; an empty item (size 0) goes where fewest items are.
			if load[s] < load[best] || load[s] == load[best] && count[s] < count[best] {
				best = s
			}
		}
		load[best] += size(i) + 1
		count[best]++
		out[i] = best + 1
	}
	return out
}

// SetLen is the length of a set digest (SetDigest, Shard.Set) in hex
// digits: 128 bits of SHA-256.
const SetLen = 32

// SetDigest is the digest of a partition's input: the first 128 bits of
// the SHA-256 (FIPS 180-4) of n and every item's (Key, Size), in lower-case
// hex (SetLen digits). Items are taken sorted by their keys' bytes, then
// size (negative as 0), so the digest depends on the multiset of items and
// n, not their order. Keys are taken byte for byte, not normalised: two
// checkouts that spell a name differently (NFC and NFD), that differ in a
// body's size (CRLF line endings, another commit) or in the selection
// hold different sets, and their shards are not reports of one run.
// Time O(len(items) × log len(items)), memory O(len(items)).
func SetDigest(items []Item, n int) string {
	sorted := slices.Clone(items)
	for i := range sorted {
		sorted[i].Size = max(sorted[i].Size, 0)
	}
	slices.SortFunc(sorted, func(a, b Item) int {
		if c := strings.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		return cmp.Compare(a.Size, b.Size)
	})
	h := sha256.New()
	var buf []byte
	buf = append(buf, "airlock shard set 1\n"...)
	buf = binary.AppendUvarint(buf, uint64(max(n, 0)))
	buf = binary.AppendUvarint(buf, uint64(len(sorted)))
	h.Write(buf)
	for _, it := range sorted {
		buf = binary.AppendUvarint(buf[:0], uint64(len(it.Key)))
		buf = append(buf, it.Key...)
		buf = binary.AppendUvarint(buf, uint64(it.Size))
		h.Write(buf)
	}
	return hex.EncodeToString(h.Sum(nil))[:SetLen]
}

// ValidSet reports whether set is a set digest as SetDigest writes it:
// SetLen lower-case hex digits.
func ValidSet(set string) bool {
	if len(set) != SetLen {
		return false
	}
	for _, c := range []byte(set) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Of returns s with Set filled for items, the whole selection s
// partitions (SetDigest(items, s.Count)); the zero Shard stays zero.
func (s Shard) Of(items []Item) Shard {
	if s.IsZero() {
		return s
	}
	s.Set = SetDigest(items, s.Count)
	return s
}

// Variant returns s with v mixed into Set: the first SetLen hex digits
// of the SHA-256 (FIPS 180-4) of "airlock shard variant 1\n", Set, "\n"
// and v. v names what the shards check of their fixtures (airlock run
// writes the selected suites and "+mutate" for --mutate), so that shards
// of one fixture set run with different checks record different sets
// and airlock merge refuses to join them. The zero Shard, a Shard
// without a Set, and v == "" (every suite, no variant) are returned
// unchanged, so that a plain run's Set stays SetDigest's.
func (s Shard) Variant(v string) Shard {
	if s.IsZero() || s.Set == "" || v == "" {
		return s
	}
	sum := sha256.Sum256([]byte("airlock shard variant 1\n" + s.Set + "\n" + v))
	s.Set = hex.EncodeToString(sum[:])[:SetLen]
	return s
}

// Select returns the indices of items that fall in s (all of them for the
// zero Shard), in order.
func (s Shard) Select(items []Item) []int {
	var out []int
	if s.IsZero() {
		for i := range items {
			out = append(out, i)
		}
		return out
	}
	for i, k := range Assign(items, s.Count) {
		if k == s.Index {
			out = append(out, i)
		}
	}
	return out
}
