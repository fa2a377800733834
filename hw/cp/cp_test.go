package cp

import (
	"fmt"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

func newCP(t *testing.T, cores int) (*sim.Engine, *CP, *gpu.GPU) {
	t.Helper()
	return newCPMode(t, cores, false)
}

// newCPMode is newCP on a dGPU's write-back L2, or (apu) on an APU's
// write-through L2 behind a coherent directory of 15 ns.
func newCPMode(t *testing.T, cores int, apu bool) (*sim.Engine, *CP, *gpu.GPU) {
	t.Helper()
	e := sim.New(1)
	m := mem.New("m", true)
	mode := "dgpu"
	if apu {
		mode = "apu"
	}
	gs := gpu.Spec{Mode: mode, CUs: 1, SIMDs: 4, WavesPerSIMD: 4, WaveSize: 64, Freq: 1e9, LDSPerCU: 64 * unit.KiB,
		MaxWGSize: 1024, DispatchCycles: 1, L1Lines: 8, L1Cycles: 10, L2Cycles: 100, MemLatency: 200 * sim.Nanosecond,
		MemBandwidth: 100e9, ScalarCycles: 4}
	g := gpu.New(e, "gpu", gs, m, mem.NewServer(100e9))
	g.UseL2(gpu.L2Spec{Size: 64 * unit.KiB, Ways: 16})
	if apu {
		g.UseDirectory(15 * sim.Nanosecond)
	}
	s := DefaultSpec()
	s.Cores, s.IPC, s.Oversubscribe = cores, 0.8, true
	return e, New(e, "cp", s, g, 0), g
}

// The CP's IPC comes from the host's instruction-count model: the host's
// 8-wide core at IPC 2 loses 1/2 − 1/8 = 0.375 cycles per instruction to
// stalls; the same software on the 2-wide CP runs at 1/(1/2 + 0.375) =
// 8/7, so 800 instructions at 2 GHz take 350 ns. A wider CP is faster.
func TestIPCFromWidthModel(t *testing.T) {
	host := cpu.Spec{IPC: 2, Width: 8}
	stall := host.StallCPI()
	if stall != 0.375 {
		t.Fatalf("host stall CPI %v, want 0.375", stall)
	}
	e, c, _ := newCP(t, 1)
	s := c.spec
	s.IPC = 0
	c = New(e, "cp2", s, c.g, stall)
	if got := c.IPC(); got < 1.1428 || got > 1.1429 {
		t.Fatalf("CP IPC %v, want 8/7", got)
	}
	var end sim.Time
	c.Spawn("t", func(th *Thread) { th.Instr(800); end = th.Now() })
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if end != 350*sim.Nanosecond {
		t.Fatalf("800 instructions took %v, want 350ns", end)
	}
	s.Width = 4
	if w4 := s.EffectiveIPC(stall); w4 <= c.IPC() {
		t.Fatalf("4-wide IPC %v not above 2-wide %v", w4, c.IPC())
	}
}

// One hardware context per service thread: provisioning 5 threads on the
// 2-core CP adds 3 cores and every thread gets a core of its own; with
// cp.oversubscribe the cores stay 2 and the threads share them.
func TestProvisionPlacesOneThreadPerCore(t *testing.T) {
	for _, over := range []bool{false, true} {
		e, c, _ := newCP(t, 2)
		c.spec.Oversubscribe = over
		added := c.Provision(5)
		var cores []int
		for range 5 {
			th := c.Spawn("t", func(th *Thread) { th.Instr(10) })
			_ = th
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		seen := map[int]int{}
		for _, th := range c.threads {
			cores = append(cores, th.Core())
			seen[th.Core()]++
		}
		if !over && (added != 3 || c.Cores() != 5 || len(seen) != 5) {
			t.Errorf("one per thread: added %d, cores %d, placement %v; want 3, 5, distinct", added, c.Cores(), cores)
		}
		if over && (added != 0 || c.Cores() != 2 || len(seen) != 2 || seen[0] != 3) {
			t.Errorf("oversubscribed: added %d, cores %d, placement %v; want 0, 2, 0 1 0 1 0", added, c.Cores(), cores)
		}
	}
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

// With cp.coherent_l1 the D-cache behaves as an x86 core's: repeated
// polls of an unchanged line (acquire marker included) hit the L1 and
// make no L2 access; after another agent's store the next read misses
// and returns the new value. Without it, every poll after the marker is
// an L2 access.
func TestCoherentL1Polls(t *testing.T) {
	for _, coherent := range []bool{false, true} {
		e, c, g := newCP(t, 1)
		c.spec.CoherentL1 = coherent
		a := g.Mem().AllocData(mem.GPU, 8, "w")
		var before, after uint64
		var got uint64
		c.Spawn("t", func(th *Thread) {
			for range 10 {
				th.Acquire()
				th.Load64(a)
			}
			st := g.L2Stats()
			before = st.Hits[gpu.CP] + st.Misses[gpu.CP]
			g.CPStore64(th.Proc, a, 7) // another agent's store at the L2
			th.Acquire()
			got = th.Load64(a)
			st = g.L2Stats()
			after = st.Hits[gpu.CP] + st.Misses[gpu.CP]
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if got != 7 {
			t.Errorf("coherent=%v: read %d after the store, want 7", coherent, got)
		}
		// The store itself is one CP L2 access; the read after it one more.
		if coherent && (before != 1 || after != before+2) {
			t.Errorf("coherent: %d L2 accesses for 10 polls, %d after the store; want 1 and 3", before, after)
		}
		if !coherent && (before != 10 || after != before+2) {
			t.Errorf("non-coherent: %d L2 accesses for 10 polls, %d after; want 10 and 12", before, after)
		}
	}
}

// The store buffer (x86 TSO): stores retire at once and reach the L2 one
// L2 access later, in order; the core stalls only when the buffer is full,
// and a lock-prefixed RMW and a system release drain it first. Without a
// buffer every store costs the core its L2 access. The GPU runs at 1 GHz
// with 100-cycle L2 hits (100 ns).
func TestStoreBuffer(t *testing.T) {
	cases := []struct {
		name  string
		depth int
		// body runs on the thread; want is the time it returns.
		body func(th *Thread, a mem.Addr)
		want sim.Time
	}{
		{"four stores, no buffer: four L2 accesses", 0, func(th *Thread, a mem.Addr) {
			for i := range 4 {
				th.Store64(a+mem.Addr(64*i), 1)
			}
		}, 400 * sim.Nanosecond},
		{"four stores, 32 entries: no stall", 32, func(th *Thread, a mem.Addr) {
			for i := range 4 {
				th.Store64(a+mem.Addr(64*i), 1)
			}
		}, 0},
		{"four stores, 2 entries: waits for the oldest twice", 2, func(th *Thread, a mem.Addr) {
			for i := range 4 {
				th.Store64(a+mem.Addr(64*i), 1)
			}
		}, 100 * sim.Nanosecond},
		{"store then RMW: the RMW drains the buffer, then its two L2 halves", 32, func(th *Thread, a mem.Addr) {
			th.Store64(a, 1)
			th.RMW(a+64, func(o uint64) uint64 { return o + 1 })
		}, 100*sim.Nanosecond + 300*sim.Nanosecond + 100*sim.Nanosecond}, // drain, read half (a miss: the L2 lookup, then 200 ns of memory), write half (a hit)
		{"store then load of another line: no wait", 32, func(th *Thread, a mem.Addr) {
			th.Store64(a, 1)
			th.Acquire()
			th.Load64(a + 64) // miss: the L2 lookup, then memory
		}, 300 * sim.Nanosecond},
		{"store then load of its line: waits for the store", 32, func(th *Thread, a mem.Addr) {
			th.Store64(a, 1)
			th.Acquire()
			th.Load64(a) // then an L2 hit: the store filled the line
		}, 200 * sim.Nanosecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, c, g := newCP(t, 1)
			c.spec.StoreBuffer = tc.depth
			a := g.Mem().AllocData(mem.GPU, 8*64, "x")
			var end sim.Time
			c.Spawn("t", func(th *Thread) { tc.body(th, a); end = th.Now() })
			if err := e.Run(); err != nil {
				t.Fatal(err)
			}
			if end != tc.want {
				t.Errorf("returned at %v, want %v", end, tc.want)
			}
			for _, th := range c.threads {
				if n := th.StoresInFlight(); n != 0 {
					t.Errorf("%d stores still buffered after the run", n)
				}
			}
		})
	}
}

// A buffered store becomes visible at the L2 (to the work-groups and the
// NIC's view through it) when it gets there, one L2 access after the
// core retired it, not before; stores reach it in program order.
func TestBufferedStoreVisibleAtArrival(t *testing.T) {
	e, c, g := newCP(t, 1)
	a := g.Mem().AllocData(mem.GPU, 64, "x")
	var seen []uint64
	c.Spawn("t", func(th *Thread) {
		th.Store64(a, 7)
		th.Store64(a, 8)
		seen = append(seen, g.CoherentLoad64(a)) // retired, not yet at the L2
	})
	for _, at := range []sim.Time{99 * sim.Nanosecond, 101 * sim.Nanosecond} {
		e.At(at, func() { seen = append(seen, g.CoherentLoad64(a)) })
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if want := []uint64{0, 0, 8}; len(seen) != 3 || seen[0] != want[0] || seen[1] != want[1] || seen[2] != want[2] {
		t.Fatalf("values seen at 0, 99 ns, 101 ns: %v, want %v", seen, want)
	}
}

// The acquire marker invalidates the CP's non-coherent L1 at the cost of
// a CU's L1 invalidate (gpu.l1_invalidate_cycles, 16 cycles = 16 ns at
// 1 GHz); a coherent L1 has nothing to drop and pays nothing.
func TestAcquireMarkerCost(t *testing.T) {
	for _, coherent := range []bool{false, true} {
		e := sim.New(1)
		m := mem.New("m", true)
		gs := gpu.Spec{Mode: "dgpu", CUs: 1, SIMDs: 4, WavesPerSIMD: 4, WaveSize: 64, Freq: 1e9, LDSPerCU: 64 * unit.KiB,
			MaxWGSize: 1024, DispatchCycles: 1, L1Lines: 8, L1Cycles: 10, L2Cycles: 100, L1InvCycles: 16,
			MemLatency: 200 * sim.Nanosecond, MemBandwidth: 100e9, ScalarCycles: 4}
		g := gpu.New(e, "gpu", gs, m, mem.NewServer(100e9))
		s := DefaultSpec()
		s.CoherentL1 = coherent
		c := New(e, "cp", s, g, 0.375)
		var end sim.Time
		c.Spawn("t", func(th *Thread) { th.Acquire(); end = th.Now() })
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		want := 16 * sim.Nanosecond
		if coherent {
			want = 0
		}
		if end != want {
			t.Errorf("coherent L1 %v: acquire took %v, want %v", coherent, end, want)
		}
	}
}

// One store rule for the CP and the work-groups on an APU: a CP store is
// done (visible to every reader, and what the release marker waits for)
// where a work-group's store to the same word is. The L2 writes through
// and the store is done past it, as a work-group's Store64 is: at the coherent directory's ack on a node behind one (the L2's
// 100 ns and the directory's 15 ns), else at its landing in memory (the
// L2 lookup and 200 ns of memory). Before, an APU-mode CP store was done at
// the L2 (buffered: 100 ns) or at once (unbuffered), ahead of the
// work-group's store issued with it. Each case runs with and without a
// store buffer: the buffered store retires at once and the release waits
// for it; the unbuffered one holds the core until it is done. (dGPU mode,
// where both stay in the write-back L2: TestBufferedStoreVisibleAtArrival.)
func TestCPStoreDoneAsAWorkGroupsStore(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode string
		dir  sim.Duration
		want sim.Time // when the store is done
	}{
		{"apu behind the directory: its ack", "apu", 15 * sim.Nanosecond, 115 * sim.Nanosecond},
		{"apu without a directory: in memory", "apu", 0, 300 * sim.Nanosecond},
	} {
		for _, depth := range []int{0, 32} {
			t.Run(fmt.Sprintf("%s/sb%d", tc.name, depth), func(t *testing.T) {
				e := sim.New(1)
				m := mem.New("m", true)
				gs := gpu.Spec{Mode: tc.mode, CUs: 1, SIMDs: 4, WavesPerSIMD: 4, WaveSize: 64, Freq: 1e9, LDSPerCU: 64 * unit.KiB,
					MaxWGSize: 1024, DispatchCycles: 1, L1Lines: 8, L1Cycles: 10, L2Cycles: 100, MemLatency: 200 * sim.Nanosecond,
					MemBandwidth: 100e9, ScalarCycles: 4}
				g := gpu.New(e, "gpu", gs, m, mem.NewServer(100e9))
				if tc.dir > 0 {
					g.UseDirectory(tc.dir)
				}
				s := DefaultSpec()
				s.Cores, s.IPC, s.StoreBuffer = 1, 0.8, depth
				c := New(e, "cp", s, g, 0)
				a := m.AllocData(mem.Host, 64, "flag")
				var released sim.Time
				c.Spawn("t", func(th *Thread) {
					th.Store64(a, 7)
					th.ReleaseSystem()
					released = th.Now()
				})
				var before, after uint64
				e.At(tc.want-sim.Nanosecond, func() { before = g.CoherentLoad64(a) })
				e.At(tc.want+sim.Nanosecond, func() { after = g.CoherentLoad64(a) })
				if err := e.Run(); err != nil {
					t.Fatal(err)
				}
				if before != 0 || after != 7 {
					t.Errorf("value %d 1 ns before %v and %d 1 ns after; want 0 then 7 (done there, not earlier)", before, tc.want, after)
				}
				if released != tc.want {
					t.Errorf("the release after the store returned at %v, want %v (when the store is done)", released, tc.want)
				}
			})
		}
	}
}
