package gpu

import (
	"slices"
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
	"pgregory.net/rapid"
)

// valuRef is VALU's SIMD accounting written plainly: count the waves per
// SIMD round-robin from firstSIMD, then occupy each SIMD that has any.
func valuRef(g *GPU, simds []sim.Time, now sim.Time, waves, first, n int) sim.Time {
	per := make([]int, len(simds))
	for i := range waves {
		per[(first+i)%len(simds)]++
	}
	end := now
	for s, k := range per {
		if k > 0 {
			simds[s] = max(now, simds[s]) + g.spec.Cycles(4*n*k)
			end = max(end, simds[s])
		}
	}
	return end
}

// VALU leaves every SIMD busy until the time the plain accounting gives,
// and the work-group wakes at the latest of them, for any wave count,
// first SIMD and earlier occupation.
func TestVALUMatchesPerSIMDCount(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		e, g := newGPU("apu")
		nS := len(g.cus[0].simdFree)
		waves := rapid.IntRange(1, nS*g.spec.WavesPerSIMD).Draw(t, "waves")
		first := rapid.IntRange(0, nS-1).Draw(t, "first SIMD")
		n := rapid.IntRange(1, 50).Draw(t, "instructions")
		busy := make([]sim.Time, nS)
		for i := range busy {
			busy[i] = sim.Time(rapid.IntRange(0, 400).Draw(t, "busy")) * sim.Nanosecond
		}
		start := 200 * sim.Nanosecond
		want := slices.Clone(busy)
		wantEnd := valuRef(g, want, start, waves, first, n)
		copy(g.cus[0].simdFree, busy)
		var woke sim.Time
		e.SpawnAt(start, "wg", func(p *sim.Proc) {
			w := &WG{Proc: p, g: g, cu: g.cus[0], waves: waves, firstSIMD: first}
			w.VALU(n)
			woke = p.Now()
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(g.cus[0].simdFree, want) || woke != wantEnd {
			t.Fatalf("SIMDs %v, woke %v; want %v, %v", g.cus[0].simdFree, woke, want, wantEnd)
		}
	})
}
