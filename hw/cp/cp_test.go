package cp

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

func newCP(t *testing.T, cores int) (*sim.Engine, *CP, *gpu.GPU) {
	t.Helper()
	e := sim.New(1)
	m := mem.New("m", true)
	gs := gpu.Spec{Mode: "dgpu", CUs: 1, SIMDs: 4, WavesPerSIMD: 4, WaveSize: 64, Freq: 1e9, LDSPerCU: 64 * unit.KiB,
		MaxWGSize: 1024, DispatchCycles: 1, L1Lines: 8, L1Cycles: 10, L2Cycles: 100, MemLatency: 200 * sim.Nanosecond,
		MemBandwidth: 100e9, ScalarCycles: 4}
	g := gpu.New(e, "gpu", gs, m, mem.NewServer(100e9))
	g.UseL2(gpu.L2Spec{Size: 64 * unit.KiB, Ways: 16})
	s := DefaultSpec()
	s.Cores = cores
	return e, New(e, "cp", s, g), g
}

// Without the acquire marker the CP's L1 keeps returning the value it
// first read; after the marker it reads the new value from the L2.
func TestL1IsStaleUntilAcquire(t *testing.T) {
	e, c, g := newCP(t, 1)
	a := g.Mem().AllocData(mem.GPU, 8, "w")
	var first, stale, fresh uint64
	var firstHit bool
	c.Spawn("t", func(th *Thread) {
		first = th.Load64(a) // L2 miss, then L1 fill
		firstHit = g.L2Stats().Hits[gpu.CP] > 0
		g.CPStore64(th.Proc, a, 9) // another agent's device-scope store at the L2
		stale = th.Load64(a)
		th.Acquire()
		fresh = th.Load64(a)
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if first != 0 || stale != 0 || fresh != 9 || firstHit {
		t.Fatalf("first %d (hit %v), without acquire %d, after acquire %d; want 0 (miss), 0, 9", first, firstHit, stale, fresh)
	}
	if n := c.cores; n.Cores() != 1 {
		t.Fatal("cores")
	}
}

// Instructions cost instr / (IPC × f): 800 at IPC 0.8 and 2 GHz = 500 ns;
// three such threads on two cores take longer than on three.
func TestInstructionsAndSlicing(t *testing.T) {
	for _, tc := range []struct {
		cores int
		min   sim.Time
	}{{3, 100 * sim.Microsecond}, {2, 150 * sim.Microsecond}} {
		e, c, _ := newCP(t, tc.cores)
		var end sim.Time
		for range 3 {
			c.Spawn("t", func(th *Thread) {
				for range 200 {
					th.Instr(800)
				}
				end = max(end, th.Now())
			})
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if end < tc.min || (tc.cores == 3 && end != 100*sim.Microsecond) {
			t.Errorf("%d cores: last thread done at %v, want ≥ %v", tc.cores, end, tc.min)
		}
	}
}
