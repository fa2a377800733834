package gpu

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/gpunetsim/gpunetsim/hw/mem"
)

// TestLineMapMatchesMap checks the caches' line index against a Go map
// under random puts (new lines and overwrites), deletes (present and
// absent lines, so backward shifts cross the table's wrap) and resets
// (both the per-line and the whole-table form).
func TestLineMapMatchesMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var x lineMap
		want := map[mem.Addr]*cline{}
		var order []mem.Addr // every line put since the last reset, as cache.order
		span := rapid.IntRange(1, 400).Draw(t, "lines")
		for range rapid.IntRange(0, 600).Draw(t, "steps") {
			l := mem.Addr(rapid.IntRange(1, span).Draw(t, "line")) * mem.LineSize
			switch rapid.IntRange(0, 20).Draw(t, "op") {
			default:
				cl := new(cline)
				x.put(l, cl)
				want[l] = cl
				order = append(order, l)
			case 10, 11, 12, 13, 14, 15, 16, 17, 18:
				x.del(l)
				delete(want, l)
			case 19, 20:
				x.reset(order)
				clear(want)
				order = order[:0]
			}
			if x.n != len(want) {
				t.Fatalf("%d entries, want %d", x.n, len(want))
			}
			for k := 1; k <= span; k++ {
				a := mem.Addr(k) * mem.LineSize
				if got := x.get(a); got != want[a] {
					t.Fatalf("get(%#x) = %p, want %p", a, got, want[a])
				}
			}
		}
		seen := 0
		for i, e := range x.ents {
			if e.l != 0 {
				seen++
				if e.cl != want[e.l] {
					t.Fatalf("slot %d: line %#x holds %p, want %p", i, e.l, e.cl, want[e.l])
				}
			}
		}
		if seen != len(want) {
			t.Fatalf("%d slots used, want %d", seen, len(want))
		}
	})
}
