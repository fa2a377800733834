package gpu

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// TestKernelEndWaitsForItsStores: a kernel's completion signal is its
// system-scope release, so every store of its work-groups has landed in
// memory when the signal is written. A store leaving an APU's CU lands
// after the L2's cycles and the memory latency; with a slow clock (10 MHz:
// 100 L2 cycles are 10 us) that is longer than the teardown, and the
// signal came first: a GDS put triggered by the completion read the
// buffer before the kernel's flag landed, and the target waited forever
// (gpunetsim run latency --set gpu.freq=50MHz).
func TestKernelEndWaitsForItsStores(t *testing.T) {
	for _, teardown := range []sim.Duration{1500 * sim.Nanosecond, 0} {
		spec := testSpec("apu")
		spec.Freq, spec.Teardown = 10e6, teardown
		e := sim.New(1)
		m := mem.New("node[0].mem", true)
		g := New(e, "node[0].gpu", spec, m, mem.NewServer(100e9))
		flag := m.AllocData(mem.GPU, 8, "flag")
		op, run := g.DispatchOp(Kernel{Name: "store", WGs: 1, WGSize: 64, Body: func(wg *WG) {
			wg.Store64(flag, 7)
		}})
		g.Submit(op)
		var atSignal uint64
		done := false
		e.Spawn("host", func(p *sim.Proc) {
			run.WaitDone(p)
			atSignal, done = m.Load64(flag), true
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if !done || atSignal != 7 {
			t.Errorf("teardown %v: at the completion signal (%v) the kernel's store holds %d, want 7 (landed)", teardown, run.Done, atSignal)
		}
	}
}

// TestAQLKernelEndWaitsForItsStores: the same release for a kernel the
// command processor takes from a user-mode AQL queue (an HSA or XTQ task):
// the packet's completion signal is decremented only once the work-groups'
// stores have landed, as the direct launch's is. The queue's packet
// processor skipped that wait, so a host that saw the signal of a kernel
// whose last act is a store read the value from before it.
func TestAQLKernelEndWaitsForItsStores(t *testing.T) {
	for _, teardown := range []sim.Duration{1500 * sim.Nanosecond, 0} {
		spec := testSpec("apu")
		spec.Freq, spec.Teardown, spec.Launch = 10e6, teardown, 0
		e := sim.New(1)
		m := mem.New("node[0].mem", true)
		g := New(e, "node[0].gpu", spec, m, mem.NewServer(100e9))
		q, err := g.NewAQLQueue("q", 4)
		if err != nil {
			t.Fatal(err)
		}
		flag := m.AllocData(mem.Host, 8, "flag")
		obj := g.LoadKernel(KernelCode{Name: "store", Body: func(wg *WG, _ mem.Addr) { wg.Store64(flag, 7) }})
		sig := g.NewSignal("s", 1)
		put(e, q, 0, AQLPacket{Header: DispatchHeader, WGSize: 64, Grid: 64, KernelObject: obj, Signal: sig}, 0, sim.Microsecond)
		m.Store64(q.WriteIndex(), 1)
		var atSignal uint64
		done := false
		e.Spawn("host", func(p *sim.Proc) {
			p.WaitUntil(m.Watch(sig), "the completion signal", func() bool { return m.Load64(sig) == 0 })
			atSignal, done = m.Load64(flag), true
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if !done || atSignal != 7 {
			t.Errorf("teardown %v: when the AQL packet's signal reached 0 the kernel's store held %d, want 7 (landed)", teardown, atSignal)
		}
	}
}
