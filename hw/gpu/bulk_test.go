package gpu

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// passes streams an array n times in one work-group and returns each
// pass's duration and the GPU's bulk counters.
func passes(t *testing.T, mode string, size uint64, uncached bool, n int) ([]sim.Duration, Stats) {
	t.Helper()
	e, g := newGPU(mode)
	g.UseL2(L2Spec{Size: 64 * unit.KiB, Ways: 8})
	buf := g.Mem().Alloc(mem.GPU, size, "array")
	if uncached {
		g.SetUncached(buf, size)
	}
	var d []sim.Duration
	op, _ := g.DispatchOp(Kernel{Name: "k", WGs: 1, WGSize: 64, Body: func(wg *WG) {
		for range n {
			t0 := wg.Now()
			wg.StreamLines(buf, size)
			d = append(d, wg.Now()-t0)
		}
	}})
	g.Submit(op)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	return d, g.Stats()
}

// Reuse that fits in the L2 is served by it on cacheable pages (the second
// pass is faster than the first and takes no memory lines), not on
// L2-uncacheable ones (every pass costs the first pass's time); an array
// four times the L2 gets no reuse either way (LRU sweep).
func TestBulkStreamL2Reuse(t *testing.T) {
	for _, mode := range []string{"dgpu", "apu"} {
		fit, st := passes(t, mode, 32<<10, false, 2)
		if fit[1] >= fit[0] {
			t.Errorf("%s cacheable, fits: second pass %v, first %v: want the L2 to serve the reuse", mode, fit[1], fit[0])
		}
		if st.BulkHits != 512 || st.BulkMisses != 512 {
			t.Errorf("%s cacheable: bulk hits %d misses %d, want 512 and 512", mode, st.BulkHits, st.BulkMisses)
		}
		off, st := passes(t, mode, 32<<10, true, 2)
		if off[1] != off[0] || off[0] != fit[0] {
			t.Errorf("%s uncached: passes %v, want both equal to the cold cacheable pass %v", mode, off, fit[0])
		}
		if st.BulkHits != 0 || st.BulkUncached != 1024 {
			t.Errorf("%s uncached: bulk hits %d uncached %d, want 0 and 1024", mode, st.BulkHits, st.BulkUncached)
		}
		big, _ := passes(t, mode, 256<<10, false, 2)
		if big[1] != big[0] {
			t.Errorf("%s cacheable, 4× the L2: passes %v, want equal (no reuse survives an LRU sweep)", mode, big)
		}
	}
}

// A gather returns the words a load would, coalesces lanes by line and
// costs the L2 latency when every line hits, the L2 lookup and the memory
// latency past it when one misses or the page is uncacheable.
func TestLoadLanes(t *testing.T) {
	for _, uncached := range []bool{false, true} {
		e, g := newGPU("dgpu")
		g.UseL2(L2Spec{Size: 64 * unit.KiB, Ways: 8})
		m := g.Mem()
		buf := m.AllocData(mem.GPU, 1024, "x")
		if uncached {
			g.SetUncached(buf, 1024)
		}
		for i := range 128 {
			m.Store64(buf+mem.Addr(8*i), uint64(1000+i))
		}
		addrs := []mem.Addr{buf + 8*3, buf + 8*100, buf + 8*5, buf + 8*101}
		out := make([]uint64, len(addrs))
		var cold, warm sim.Duration
		op, _ := g.DispatchOp(Kernel{Name: "k", WGs: 1, WGSize: 64, Body: func(wg *WG) {
			t0 := wg.Now()
			wg.LoadLanes(addrs, out)
			cold = wg.Now() - t0
			t0 = wg.Now()
			wg.LoadLanes(addrs, out)
			warm = wg.Now() - t0
		}})
		g.Submit(op)
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		for i, a := range addrs {
			if want := uint64(1000 + (a-buf)/8); out[i] != want {
				t.Errorf("uncached=%v: lane %d read %d, want %d", uncached, i, out[i], want)
			}
		}
		sp := g.Spec()
		wantWarm := sp.Cycles(sp.L2Cycles)
		if uncached {
			wantWarm = sp.MissLatency()
		}
		if cold != sp.MissLatency() || warm != wantWarm {
			t.Errorf("uncached=%v: cold %v warm %v, want %v and %v", uncached, cold, warm, sp.MissLatency(), wantWarm)
		}
		if st := g.Stats(); st.BulkHits+st.BulkMisses != 4 {
			t.Errorf("uncached=%v: %d line accesses, want 4 (two lines per gather)", uncached, st.BulkHits+st.BulkMisses)
		}
	}
}

// Device-scope atomics from two work-groups add up, and a device-scope
// poller sees the final count without a system acquire (dGPU: the count
// lives in a dirty L2 line, not in memory).
func TestAtomicAdd64AndPollDevice(t *testing.T) {
	for _, uncached := range []bool{false, true} {
		e, g := newGPU("dgpu")
		g.UseL2(L2Spec{Size: 64 * unit.KiB, Ways: 8})
		m := g.Mem()
		ctr := m.AllocData(mem.GPU, 64, "counter")
		if uncached {
			g.SetUncached(ctr, 64)
		}
		m.Store64(ctr, 2)
		var seen uint64
		op, _ := g.DispatchOp(Kernel{Name: "k", WGs: 3, WGSize: 64, Body: func(wg *WG) {
			if wg.ID == 0 {
				seen = wg.PollDevice(ctr, "counter", func(v uint64) bool { return v == 0 })
				return
			}
			wg.Sleep(sim.Duration(wg.ID) * sim.Microsecond)
			wg.AtomicAdd64(ctr, ^uint64(0))
		}})
		g.Submit(op)
		if err := e.Run(); err != nil {
			t.Fatalf("uncached=%v: %v", uncached, err)
		}
		if seen != 0 || g.CoherentLoad64(ctr) != 0 {
			t.Errorf("uncached=%v: poller saw %d, counter %d, want 0", uncached, seen, g.CoherentLoad64(ctr))
		}
		if inMem := m.Load64(ctr); uncached && inMem != 0 {
			t.Errorf("uncached: memory holds %d, want 0 (uncacheable atomics act at memory)", inMem)
		}
	}
}

// Independent ranges issued together overlap their latencies: two cold
// ranges cost one memory latency together, two apart.
func TestStreamRangesOverlap(t *testing.T) {
	e, g := newGPU("dgpu")
	g.UseL2(L2Spec{Size: 64 * unit.KiB, Ways: 8})
	a := g.Mem().Alloc(mem.GPU, 4096, "a")
	b := g.Mem().Alloc(mem.GPU, 4096, "b")
	var together, apart sim.Duration
	op, _ := g.DispatchOp(Kernel{Name: "k", WGs: 1, WGSize: 64, Body: func(wg *WG) {
		t0 := wg.Now()
		wg.StreamRanges(Range{a, 64}, Range{b, 64})
		together = wg.Now() - t0
		t0 = wg.Now()
		wg.StreamLines(a+1024, 64)
		wg.StreamLines(b+1024, 64)
		apart = wg.Now() - t0
	}})
	g.Submit(op)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if lat := g.Spec().MissLatency(); together != lat || apart != 2*lat {
		t.Errorf("together %v, apart %v: want %v and %v", together, apart, lat, 2*lat)
	}
}
