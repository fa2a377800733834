package gpu

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// A GPU load that memory serves reads the word when its request reaches
// memory (the sample point: the L2 lookup and half of gpu.mem_latency,
// 100 + 40 ns here), not when the data is back (180 ns): another agent's
// write landing just before the sample point is seen by this load, one
// landing after it (even 1 ps after, or 1 ps before the data is back) is
// not, and the next load sees it. For every path a poller uses: the
// system-scope atomic load, a load after a system acquire (a cache miss,
// on an APU and on a dGPU) and a load of an L2-uncacheable page. The
// load's own time is unchanged.
func TestGPULoadReadsMemoryAtItsSamplePoint(t *testing.T) {
	const sample, full = 140 * sim.Nanosecond, 180 * sim.Nanosecond
	type load func(wg *WG, a mem.Addr) uint64
	atomic := func(wg *WG, a mem.Addr) uint64 { return wg.AtomicLoad64(a) }
	acquired := func(wg *WG, a mem.Addr) uint64 {
		wg.Acquire(System)
		return wg.Load64(a)
	}
	for _, c := range []struct {
		name     string
		mode     string
		uncached bool
		load     load
	}{
		{"apu atomic", "apu", false, atomic},
		{"dgpu atomic", "dgpu", false, atomic},
		{"apu acquire+load", "apu", false, acquired},
		{"dgpu acquire+load", "dgpu", false, acquired},
		{"dgpu uncached page", "dgpu", true, func(wg *WG, a mem.Addr) uint64 { return wg.Load64(a) }},
	} {
		for _, w := range []struct {
			at         sim.Duration // the write's landing, after the load's issue
			this, next uint64       // what this load and the next return
		}{
			{1, 1, 1},
			{sample - 1, 1, 1},
			{sample, 1, 1},
			{sample + 1, 0, 1},
			{full - 1, 0, 1},
		} {
			e, g := newGPU(c.mode)
			m := g.Mem()
			a := m.AllocData(mem.GPU, 64, "flag")
			if c.uncached {
				g.SetUncached(a, 64)
			}
			var this, next uint64
			var took sim.Duration
			op, _ := g.DispatchOp(Kernel{Name: "poll", WGs: 1, WGSize: 64, Body: func(wg *WG) {
				if c.name == "apu acquire+load" || c.name == "dgpu acquire+load" {
					wg.Acquire(System) // the acquire's own time before the issue
				}
				issue := wg.Now()
				if c.name == "apu acquire+load" || c.name == "dgpu acquire+load" {
					issue += g.Spec().Cycles(g.Spec().L1InvCycles)
					if c.mode == "dgpu" {
						issue += g.Spec().Cycles(g.Spec().L2InvCycles)
					}
				}
				e.At(issue+w.at, func() { m.Store64(a, 1) })
				this = c.load(wg, a)
				took = wg.Now() - issue
				next = c.load(wg, a)
			}})
			g.Submit(op)
			if err := e.Run(); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if this != w.this || next != w.next {
				t.Errorf("%s, write %v after issue: loads returned %d then %d, want %d then %d",
					c.name, w.at, this, next, w.this, w.next)
			}
			if took != full {
				t.Errorf("%s: the load took %v, want %v", c.name, took, full)
			}
		}
	}
}
