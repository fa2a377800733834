package gpu

import (
	"fmt"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// A store after some of the work-group's time (StoreAfter) is Sleep
// followed by Store64: four work-groups storing into an L2-uncacheable
// page and a cached one at equal times (every landing ties with three
// others), with callback events at the instants a skipped issue would
// have run and, scheduled between the issue and the end of d, at the
// landings, land every word at the same time and in the same order, end
// at the same times, and make one event fewer per uncached store (the
// issue's, kept as a mark), none fewer per cached one.
func TestStoreAfterMatchesSleepStore(t *testing.T) {
	const stores, d = 5, 40 * sim.Nanosecond
	type out struct {
		landed []string
		ends   []sim.Time
		events uint64
	}
	run := func(after bool) out {
		var o out
		e, g := newGPU("dgpu")
		unc := g.Mem().AllocData(mem.GPU, 4096, "wqe")
		g.SetUncached(unc, 4096)
		cached := g.Mem().AllocData(mem.GPU, 4096, "data")
		g.Mem().OnTouch(func(a mem.Addr, n int) { o.landed = append(o.landed, fmt.Sprintf("%v %#x", e.Now(), uint64(a))) })
		o.ends = make([]sim.Time, 4)
		op, _ := g.DispatchOp(Kernel{Name: "k", WGs: 4, WGSize: 64, Body: func(wg *WG) {
			base := unc + mem.Addr(512*wg.ID)
			if wg.ID >= 2 {
				base = cached + mem.Addr(512*wg.ID)
			}
			for k := range stores {
				a := base + mem.Addr(8*k)
				// Another agent's event between the issue and the end of d
				// schedules one at the store's L1 end, which schedules a
				// tick at the landing: the tick goes first exactly when the
				// L1 wait's end was queued at the end of d, not before.
				t0, l1 := wg.Now(), wg.GPU().Spec().Cycles(wg.GPU().Spec().L1Cycles)
				e.At(t0+d/2, func() {
					e.At(t0+d+l1, func() {
						e.At(e.Now()+wg.GPU().MissLatency(), func() { o.landed = append(o.landed, fmt.Sprintf("%v tick %d", e.Now(), wg.ID)) })
					})
				})
				if after {
					wg.StoreAfter(d, a, uint64(k+1))
				} else {
					wg.Sleep(d)
					wg.Store64(a, uint64(k+1))
				}
			}
			wg.Release(System)
			o.ends[wg.ID] = wg.Now()
		}})
		g.Submit(op)
		// Callback events at the instants the issues would run.
		for k := range 40 {
			t := sim.Time(k) * d / 4
			e.At(t, func() { o.landed = append(o.landed, fmt.Sprintf("%v tick", e.Now())) })
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		o.events = e.Events()
		return o
	}
	a, b := run(false), run(true)
	if fmt.Sprint(a.landed, a.ends) != fmt.Sprint(b.landed, b.ends) {
		t.Errorf("Sleep+Store64:\n%v %v\nStoreAfter:\n%v %v", a.landed, a.ends, b.landed, b.ends)
	}
	if len(a.landed) < 40+4*stores {
		t.Fatalf("only %d landings and ticks", len(a.landed))
	}
	if want := a.events - 2*stores; b.events != want {
		t.Errorf("StoreAfter made %d events, want %d (Sleep+Store64's %d less one per uncached store)", b.events, want, a.events)
	}
}
