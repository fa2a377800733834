package nic

import (
	"slices"
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
	"pgregory.net/rapid"
)

// The read tags' ring gives the earliest free time of the multiset it
// holds after any sequence of replacements, in order or not (a read
// through the PPB's gate, or of host memory after one of GPU memory, can
// finish before earlier ones).
func TestReadTagsEarliestIsMultisetMin(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 9).Draw(t, "tags")
		r := readTags{t: make([]sim.Time, n)}
		ref := make([]sim.Time, n)
		for i := range rapid.IntRange(0, 60).Draw(t, "reads") {
			if got, want := r.earliest(), slices.Min(ref); got != want {
				t.Fatalf("read %d: earliest %v, want %v (ring %v head %d, multiset %v)", i, got, want, r.t, r.head, ref)
			}
			d := r.earliest() + sim.Time(rapid.Int64Range(0, 40).Draw(t, "after"))
			ref[slices.Index(ref, slices.Min(ref))] = d
			r.replace(d)
		}
		got := slices.Concat(r.t[r.head:], r.t[:r.head])
		slices.Sort(ref)
		if !slices.Equal(got, ref) {
			t.Fatalf("ring from head %v, want the sorted multiset %v", got, ref)
		}
	})
}
