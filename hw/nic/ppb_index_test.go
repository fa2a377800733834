package nic

import (
	"math/rand/v2"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
)

// TestLineIndexMatchesMap: the PPB's line index answers as a map does
// over random puts, deletions (with backward shifts across the table's
// wrap) and resets, on addresses that collide in small tables.
func TestLineIndexMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var x lineIndex
	want := map[mem.Addr]int32{}
	for step := range 50_000 {
		l := mem.Addr(1+r.IntN(300)) * mem.LineSize
		switch op := r.IntN(10); {
		case op < 5:
			if _, ok := want[l]; !ok {
				v := int32(r.IntN(1 << 20))
				x.put(l, v)
				want[l] = v
			}
		case op < 9:
			x.del(l)
			delete(want, l)
		default:
			if r.IntN(100) == 0 {
				x.reset()
				clear(want)
			}
		}
		for k := mem.Addr(1); k <= 300; k++ {
			a := k * mem.LineSize
			v, ok := x.get(a)
			w, wok := want[a]
			if ok != wok || v != w {
				t.Fatalf("step %d: get(%#x) = %d, %v; want %d, %v", step, a, v, ok, w, wok)
			}
		}
		if x.n != len(want) {
			t.Fatalf("step %d: %d entries, want %d", step, x.n, len(want))
		}
	}
}
