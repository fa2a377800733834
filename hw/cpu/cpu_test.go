package cpu

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

func spec() Spec {
	return Spec{Cores: 8, Freq: 4e9, IPC: 2, StreamBPC: 16, DRAMLatency: 80 * sim.Nanosecond,
		DRAMBandwidth: 100e9, CacheHit: 500, ComputeModel: ModelMLP, L1DMisses: 4, L2Misses: 20,
		LineSize: 64, PrefetchDepth: 16, TimeSlice: sim.Millisecond, ContextSwitch: 2 * sim.Microsecond,
		WakeLatency: 5 * sim.Microsecond, Cache: HaswellCache()}
}

func flatSpec() Spec {
	s := spec()
	s.ComputeModel = ModelFlat
	return s
}

func run(t *testing.T, body func(th *Thread)) sim.Time {
	t.Helper()
	return runSpec(t, flatSpec(), body)
}

func runSpec(t *testing.T, sp Spec, body func(th *Thread)) sim.Time {
	t.Helper()
	e := sim.New(1)
	m := mem.New("m", true)
	c := New(e, "cpu", sp, m, mem.NewServer(float64(sp.DRAMBandwidth)))
	var end sim.Time
	c.Spawn("t", func(th *Thread) { body(th); end = th.Now() })
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	return end
}

func TestInstructionCost(t *testing.T) {
	// 400 instructions at IPC 2 and 4 GHz = 50 ns.
	if got := run(t, func(th *Thread) { th.Instr(400) }); got != 50*sim.Nanosecond {
		t.Fatalf("400 instructions took %v, want 50ns", got)
	}
}

func TestFlatComputeIsCoreOrDRAMBound(t *testing.T) {
	// One core: 64 KiB at 16 B/cycle at 4 GHz = 1024 ns (DRAM would take 655 ns).
	if got := run(t, func(th *Thread) { th.Compute(64<<10, 1) }); got != 1024*sim.Nanosecond {
		t.Errorf("one core: %v, want 1.024us", got)
	}
	// Eight cores would take 128 ns, but DRAM at 100 GB/s caps it at 655.36 ns.
	if got := run(t, func(th *Thread) { th.Compute(64<<10, 8) }); got != 655360 {
		t.Errorf("eight cores: %v, want the DRAM bound 655.36ns", got)
	}
}

func TestWaitWordPaysAMissAfterTheWrite(t *testing.T) {
	e := sim.New(1)
	m := mem.New("m", true)
	c := New(e, "cpu", spec(), m, mem.NewServer(100e9))
	flag := m.AllocData(mem.Host, 8, "flag")
	var seen sim.Time
	c.Spawn("poller", func(th *Thread) {
		th.WaitWord(flag, "flag", func(v uint64) bool { return v == 3 })
		seen = th.Now()
	})
	e.At(sim.Microsecond, func() { m.Store64(flag, 3) })
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if seen != sim.Microsecond+80*sim.Nanosecond {
		t.Fatalf("detected at %v, want 1.08us", seen)
	}
}

// A core's miss reaches memory through the level that missed: on the
// documents' presets the system directory that holds the L3
// (cpu.cache.l3_path), then DRAM, as the NIC's coherent access through the
// same directory pays its lookup and then the memory; it costs more than
// an L3 hit, whose path it shares. Where the L3's latency is a load-to-use
// total (l3_path = 0) the DRAM latency is the whole miss. A poll that sees
// a write, a locked RMW, a store's visibility and a cold stream all pay it.
func TestMissPaysTheWayThroughTheDirectory(t *testing.T) {
	for _, c := range []struct {
		name  string
		cache CacheSpec
		want  sim.Duration
	}{
		{"directory L3 (documents' presets)", CorePairCache(), 95 * sim.Nanosecond},
		{"load-to-use L3", HaswellCache(), 80 * sim.Nanosecond},
	} {
		s := spec()
		s.Cache = c.cache
		if got := s.MissLatency(); got != c.want {
			t.Errorf("%s: miss %v, want %v", c.name, got, c.want)
		}
		if l3 := s.levelLatency(L3); s.levelLatency(DRAM) <= l3 {
			t.Errorf("%s: a DRAM miss %v is not slower than an L3 hit %v", c.name, s.levelLatency(DRAM), l3)
		}
		e := sim.New(1)
		cp := newTestCPU(e, s)
		flag := cp.mem.AllocData(mem.Host, 8, "flag")
		word := cp.mem.AllocData(mem.Host, 8, "word")
		var seen, rmw, vis sim.Time
		cp.Spawn("poller", func(th *Thread) {
			th.WaitWord(flag, "flag", func(v uint64) bool { return v == 1 })
			seen = th.Now()
			th.RMW(word, 1)
			rmw = th.Now() - seen
			vis = th.StoreMiss(nil) - th.Now()
		})
		e.At(sim.Microsecond, func() { cp.mem.Store64(flag, 1) })
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if seen != sim.Microsecond+c.want || rmw != c.want || vis != c.want {
			t.Errorf("%s: poll saw the write %v after it, RMW %v, store visible after %v; want %v each", c.name, seen-sim.Microsecond, rmw, vis, c.want)
		}
	}
}

func newTestCPU(e *sim.Engine, s Spec) *CPU {
	return New(e, "cpu", s, mem.New("m", true), mem.NewServer(float64(s.DRAMBandwidth)))
}

// TestStoresDrainInOrder checks the x86 store-buffer rules behind the
// host's AQL enqueue: a store does not stall the thread, a locked RMW
// waits for the thread's earlier stores before its own miss, and an
// uncached store (a doorbell) leaves only once every earlier store is
// visible and arrives its own latency later.
func TestStoresDrainInOrder(t *testing.T) {
	const lat = 80 * sim.Nanosecond
	var afterStore, afterRMW, bell, seen sim.Time
	e := sim.New(1)
	m := mem.New("m", true)
	sp := flatSpec()
	c := New(e, "cpu", sp, m, mem.NewServer(float64(sp.DRAMBandwidth)))
	a, b := m.AllocData(mem.Host, 64, "a"), m.AllocData(mem.Host, 64, "b")
	c.Spawn("t", func(th *Thread) {
		th.Store(a, 7)
		afterStore = th.Now()
		th.RMW(b, 1)
		afterRMW = th.Now()
		th.Store(a, 8)
		bell = th.StoreUncached(50*sim.Nanosecond, func() { seen = e.Now() })
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if afterStore != 0 {
		t.Errorf("a store stalled the thread until %v, want 0 (it retires into the store buffer)", afterStore)
	}
	if afterRMW != 2*lat {
		t.Errorf("locked RMW after a store ended at %v, want %v (the store's miss drains first, then the RMW's)", afterRMW, 2*lat)
	}
	if want := afterRMW + lat + 50*sim.Nanosecond; bell != want || seen != want {
		t.Errorf("doorbell at %v (seen %v), want %v: the earlier store's miss, then the MMIO latency", bell, seen, want)
	}
	if m.Load64(a) != 8 || m.Load64(b) != 1 {
		t.Errorf("memory a=%d b=%d, want 8 and 1", m.Load64(a), m.Load64(b))
	}
	// Without the drain (the RMW alone) it would be one miss.
	if got := run(t, func(th *Thread) { th.RMW(th.CPU().Mem().AllocData(mem.Host, 8, "c"), 1) }); got != lat {
		t.Errorf("RMW alone took %v, want %v", got, lat)
	}
}
