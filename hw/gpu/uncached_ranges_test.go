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

// Uncached memoises whole pages and lines (inside one range or outside all): with
// ranges spanning pages, queries interleaved with SetUncached (which must
// drop the memo) and repeated (memo hits), every answer is the scan's.
func TestUncachedPageMemoMatchesScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := &GPU{}
		var all [][2]mem.Addr
		scan := func(a mem.Addr) bool { return inRanges(all, a) }
		const span = 1 << 18 // 64 memo pages: collisions in the table too
		for range rapid.IntRange(1, 60).Draw(t, "ops") {
			if rapid.IntRange(0, 3).Draw(t, "kind") == 0 {
				a := mem.Addr(rapid.IntRange(0, span).Draw(t, "a"))
				n := uint64(rapid.IntRange(0, 3<<uncachedPage).Draw(t, "n"))
				g.SetUncached(a, n)
				all = append(all, [2]mem.Addr{a, a + mem.Addr(n)})
				continue
			}
			page := mem.Addr(rapid.IntRange(0, span>>uncachedPage).Draw(t, "page")) << uncachedPage
			off := mem.Addr(rapid.IntRange(0, 4095).Draw(t, "off"))
			// Each offset twice or more: page and line memo hits, and a
			// line's first and last byte.
			for _, off := range []mem.Addr{0, 1, 4095, off, 0, off, off | (mem.LineSize - 1), off &^ (mem.LineSize - 1), off} {
				if a := page + off; g.Uncached(a) != scan(a) {
					t.Fatalf("Uncached(%#x) = %v, want %v (ranges %v)", a, !scan(a), scan(a), all)
				}
			}
		}
	})
}

// A work-group's span memo (WG.uncached) answers as the scan does, with
// queries that revisit spans (memo hits), more spans than it holds
// (replacement) and SetUncached between them (which voids it).
func TestUncachedSpanMemoMatchesScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := &GPU{}
		w := &WG{g: g}
		var all [][2]mem.Addr
		scan := func(a mem.Addr) bool { return inRanges(all, a) }
		for range rapid.IntRange(1, 80).Draw(t, "ops") {
			if rapid.IntRange(0, 5).Draw(t, "kind") == 0 {
				a := mem.Addr(rapid.IntRange(0, 5000).Draw(t, "a"))
				n := uint64(rapid.IntRange(0, 400).Draw(t, "n"))
				g.SetUncached(a, n)
				all = append(all, [2]mem.Addr{a, a + mem.Addr(n)})
				continue
			}
			a := mem.Addr(rapid.IntRange(0, 5500).Draw(t, "q"))
			for _, b := range []mem.Addr{a, a + 1, max(a, 1) - 1, a} {
				if w.uncached(b) != scan(b) {
					t.Fatalf("uncached(%d) = %v, want %v (ranges %v)", b, !scan(b), scan(b), all)
				}
			}
		}
	})
}

// inRanges is the reference answer to Uncached: whether a lies in one of
// the half-open ranges, by a plain scan.
func inRanges(all [][2]mem.Addr, a mem.Addr) bool {
	for _, r := range all {
		if a >= r[0] && a < r[1] {
			return true
		}
	}
	return false
}
