package gpu

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"pgregory.net/rapid"
)

// Uncached keeps its ranges sorted and merged for a binary search; it must
// answer as a scan of every range SetUncached was given would.
func TestUncachedMatchesScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := &GPU{}
		var all [][2]mem.Addr
		for range rapid.IntRange(0, 40).Draw(t, "ranges") {
			a := mem.Addr(rapid.IntRange(0, 4000).Draw(t, "a"))
			n := uint64(rapid.IntRange(0, 300).Draw(t, "n"))
			g.SetUncached(a, n)
			all = append(all, [2]mem.Addr{a, a + mem.Addr(n)})
		}
		for i := 1; i < len(g.uncached); i++ {
			if g.uncached[i-1][1] >= g.uncached[i][0] {
				t.Fatalf("ranges %v not sorted and disjoint", g.uncached)
			}
		}
		for a := mem.Addr(0); a < 4400; a++ {
			want := false
			for _, r := range all {
				want = want || a >= r[0] && a < r[1]
			}
			if got := g.Uncached(a); got != want {
				t.Fatalf("Uncached(%d) = %v, want %v (ranges %v)", a, got, want, all)
			}
		}
	})
}
