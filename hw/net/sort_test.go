package net

import (
	"cmp"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestSortBySerialMatchesComparisonSort draws flows with distinct serials
// (in any order, up to a few hundred: both the comparison sort and the
// radix sort above radixMin) and checks sortBySerial gives the order of a
// comparison by serial, reusing its scratch across calls as reschedule
// does.
func TestSortBySerialMatchesComparisonSort(t *testing.T) {
	var keys []uint64
	var tmp []*flow
	rapid.Check(t, func(t *rapid.T) {
		f := &Fabric{fl: &flowState{}}
		n := rapid.IntRange(0, 4*radixMin).Draw(t, "flows")
		// Serials up to 2^k for a drawn k: one to five radix passes.
		top := uint64(1) << rapid.UintRange(uint(max(1, bitsFor(n))), 39).Draw(t, "bits")
		seen := map[uint64]bool{}
		fls := make([]*flow, 0, n)
		for len(fls) < n {
			s := rapid.Uint64Range(1, top).Draw(t, "serial")
			if seen[s] {
				continue
			}
			seen[s] = true
			fls = append(fls, &flow{f: f, serial: s})
			f.fl.sent = max(f.fl.sent, s)
		}
		want := slices.Clone(fls)
		slices.SortFunc(want, func(a, b *flow) int { return cmp.Compare(a.serial, b.serial) })
		sortBySerial(fls, &keys, &tmp)
		for i := range fls {
			if fls[i] != want[i] {
				t.Fatalf("position %d of %d: serial %d, want %d", i, n, fls[i].serial, want[i].serial)
			}
		}
	})
}

// bitsFor returns the bits needed to write n distinct serials.
func bitsFor(n int) int {
	b := 0
	for 1<<b < n+1 {
		b++
	}
	return b
}
