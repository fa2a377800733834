package gpu

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// A work-group starts once its first instruction line is in its CU
// group's instruction cache (Spec.ICacheCUs): the first work-group of a
// kernel no group has run misses through the L2 to memory (what a data
// load's L1 miss costs: the L2's 100 cycles, the directory's 15 and
// memory's 80 ns at 1 GHz, without the missing cache's own 12 cycles on
// top), the first one on another group, dispatched 10 ns later, waits for
// that miss to bring the line into the L2, and every later work-group of
// a group hits (12 cycles), in a second launch too. Without an
// instruction cache (icache_cus = 0) nothing is waited for.
func TestFirstInstructionFetch(t *testing.T) {
	starts := func(icache int) []sim.Time {
		spec := testSpec("apu")
		spec.Launch, spec.Teardown, spec.DispatchCycles = 0, 0, 10
		spec.ICacheCUs, spec.ICacheCycles = icache, 12
		e := sim.New(1)
		g := New(e, "node[0].gpu", spec, mem.New("node[0].mem", true), mem.NewServer(100e9))
		g.UseDirectory(15 * sim.Nanosecond)
		var at []sim.Time
		k := Kernel{Name: "copy", WGs: 2, WGSize: 64, Body: func(wg *WG) { at = append(at, wg.Now()) }}
		for range 2 {
			op, _ := g.DispatchOp(k)
			g.Submit(op)
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		return at
	}
	base, got := starts(0), starts(1)
	if len(base) != 4 || len(got) != 4 {
		t.Fatalf("work-groups run: %d and %d, want 4", len(base), len(got))
	}
	// The second launch starts after the first's last work-group, later
	// by what that one waited.
	shift := got[1] - base[1]
	want := []sim.Duration{
		195 * sim.Nanosecond,      // group 0's miss, to memory (100 + 15 + 80)
		185 * sim.Nanosecond,      // group 1, 10 ns later: behind group 0's miss (an L2 hit, 100, once it is in)
		shift + 12*sim.Nanosecond, // second launch: hits
		shift + 12*sim.Nanosecond,
	}
	for i := range want {
		if d := got[i] - base[i]; d != want[i] {
			t.Errorf("work-group %d started %v after its start without an instruction cache, want %v", i, d, want[i])
		}
	}
}
