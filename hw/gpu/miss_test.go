package gpu

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// An access that memory serves pays the L2 lookup and then the access past
// the L2 (gpu.mem_latency), so a miss costs exactly an L2 hit plus
// mem_latency and never less than a hit. testSpec has the xtq preset's
// numbers: a 100-cycle L2 at 1 GHz (100 ns) and 80 ns past it, where a
// miss charged mem_latency alone (80 ns) was cheaper than a hit. Every
// kind of access that can hit or miss is measured twice on one line:
// cold (a miss) and warm (a hit).
func TestL2MissCostsHitPlusMemory(t *testing.T) {
	for _, c := range []struct {
		name   string
		mode   string
		access func(g *GPU, wg *WG, a mem.Addr) sim.Duration // one access of the word at a, and its time
	}{
		{"Load64", "dgpu", func(_ *GPU, wg *WG, a mem.Addr) sim.Duration {
			wg.Acquire(Device) // drop the L1 copy: the warm load is served by the L2
			t0 := wg.Now()
			wg.Load64(a)
			return wg.Now() - t0
		}},
		{"AtomicAdd64", "dgpu", func(_ *GPU, wg *WG, a mem.Addr) sim.Duration {
			t0 := wg.Now()
			wg.AtomicAdd64(a, 1)
			return wg.Now() - t0
		}},
		{"AtomicAddLanes", "dgpu", func(_ *GPU, wg *WG, a mem.Addr) sim.Duration {
			t0 := wg.Now()
			wg.AtomicAddLanes([]mem.Addr{a, a + 8}, 1)
			return wg.Now() - t0
		}},
		{"StreamLines", "dgpu", func(_ *GPU, wg *WG, a mem.Addr) sim.Duration {
			t0 := wg.Now()
			wg.StreamLines(a, mem.LineSize)
			return wg.Now() - t0
		}},
		{"StreamLines apu", "apu", func(_ *GPU, wg *WG, a mem.Addr) sim.Duration {
			t0 := wg.Now()
			wg.StreamLines(a, mem.LineSize)
			return wg.Now() - t0
		}},
		{"CPReadLine", "dgpu", func(g *GPU, wg *WG, a mem.Addr) sim.Duration {
			_, _, lat := g.CPReadLine(wg.Proc, mem.Line(a))
			wg.Sleep(lat)
			return lat
		}},
		{"CPRMW", "dgpu", func(g *GPU, wg *WG, a mem.Addr) sim.Duration {
			t0 := wg.Now()
			g.CPRMW(wg.Proc, a, func(v uint64) uint64 { return v + 1 })
			return wg.Now() - t0
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var recorded []sim.Duration
			e, g := newGPU(c.mode)
			g.UseL2(L2Spec{Size: 64 * unit.KiB, Ways: 8})
			a := g.Mem().AllocData(mem.GPU, 64, "word")
			op, _ := g.DispatchOp(Kernel{Name: "k", WGs: 1, WGSize: 64, Body: func(wg *WG) {
				recorded = append(recorded, c.access(g, wg, a), c.access(g, wg, a))
			}})
			g.Submit(op)
			if err := e.Run(); err != nil {
				t.Fatal(err)
			}
			sp := g.Spec()
			hit := sp.Cycles(sp.L2Cycles)
			if len(recorded) != 2 {
				t.Fatalf("recorded %d accesses, want 2", len(recorded))
			}
			miss, warm := recorded[0], recorded[1]
			if c.name == "CPRMW" {
				// Read half, then the write half's L2 store (a hit either way).
				miss, warm = miss-hit, warm-hit
			}
			if warm != hit {
				t.Errorf("warm access %v, want the L2 hit %v", warm, hit)
			}
			if want := hit + sp.MemLatency; miss != want || miss <= warm {
				t.Errorf("cold access %v, want the L2 lookup %v + mem_latency %v = %v (more than the hit %v)", miss, hit, sp.MemLatency, want, warm)
			}
		})
	}
}

// Accesses that bypass the L2 or find no L2 copy to hit still pass through
// its lookup: an APU load that misses the L1, a load of an L2-uncacheable
// page and a system-scope atomic load each cost l2_cycles + mem_latency,
// more than an L2 hit.
func TestMemoryAccessesPassTheL2Lookup(t *testing.T) {
	for _, c := range []struct {
		name     string
		mode     string
		uncached bool
		load     func(wg *WG, a mem.Addr)
	}{
		{"apu Load64", "apu", false, func(wg *WG, a mem.Addr) { wg.Load64(a) }},
		{"uncached Load64", "dgpu", true, func(wg *WG, a mem.Addr) { wg.Load64(a) }},
		{"AtomicLoad64", "dgpu", false, func(wg *WG, a mem.Addr) { wg.AtomicLoad64(a) }},
		{"apu Stream", "apu", false, func(wg *WG, _ mem.Addr) { wg.Stream(mem.LineSize) }},
		{"dgpu Stream", "dgpu", false, func(wg *WG, _ mem.Addr) { wg.Stream(mem.LineSize) }},
		{"LoadArgs", "apu", false, func(wg *WG, a mem.Addr) { wg.LoadArgs(a, 1) }},
	} {
		e, g := newGPU(c.mode)
		g.UseL2(L2Spec{Size: 64 * unit.KiB, Ways: 8})
		a := g.Mem().AllocData(mem.GPU, 64, "word")
		if c.uncached {
			g.SetUncached(a, 64)
		}
		var d sim.Duration
		op, _ := g.DispatchOp(Kernel{Name: "k", WGs: 1, WGSize: 64, Body: func(wg *WG) {
			t0 := wg.Now()
			c.load(wg, a)
			d = wg.Now() - t0
		}})
		g.Submit(op)
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		sp := g.Spec()
		if want := sp.Cycles(sp.L2Cycles) + sp.MemLatency; d != want || d != sp.MissLatency() {
			t.Errorf("%s: %v, want l2_cycles %v + mem_latency %v = %v", c.name, d, sp.Cycles(sp.L2Cycles), sp.MemLatency, want)
		}
	}
}

// On a node whose memory sits behind the coherent system directory (the
// documents' APU), an access past the L2 pays the directory's lookup
// before the memory access, as the NIC's and the host's accesses through
// the same directory do: a word load that misses, a system-scope atomic
// load and the packet processor's DMA read of a kernel's packet each take
// exactly the lookup longer than without it.
func TestDirectoryLookupBeforeMemory(t *testing.T) {
	const dir = 15 * sim.Nanosecond
	type times struct{ load, atomic, launch sim.Duration }
	run := func(withDir bool) times {
		e, g := newGPU("apu")
		if withDir {
			g.UseDirectory(dir)
		}
		a := g.Mem().AllocData(mem.Host, 8, "word")
		var got times
		op, r := g.DispatchOp(Kernel{Name: "k", WGs: 1, WGSize: 64, Body: func(wg *WG) {
			t0 := wg.Now()
			wg.Load64(a)
			got.load = wg.Now() - t0
			t0 = wg.Now()
			wg.AtomicLoad64(a)
			got.atomic = wg.Now() - t0
		}})
		g.Submit(op)
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		got.launch = r.BodyStart - r.LaunchStart
		return got
	}
	plain, behind := run(false), run(true)
	if behind.load-plain.load != dir || behind.atomic-plain.atomic != dir || behind.launch-plain.launch != dir {
		t.Errorf("behind the directory: load %v, atomic %v, launch %v; without: %v, %v, %v; want each %v longer",
			behind.load, behind.atomic, behind.launch, plain.load, plain.atomic, plain.launch, dir)
	}
	if s := testSpec("apu"); plain.load != s.MissLatency() {
		t.Errorf("a missing load without the directory: %v, want %v", plain.load, s.MissLatency())
	}
}
