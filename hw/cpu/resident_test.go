package cpu

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// pairSpec is the documents' host: 16 requests per core, CorePair caches.
func pairSpec() Spec {
	s := spec()
	s.L1DMisses, s.L2Misses, s.Cache = 16, 16, CorePairCache()
	return s
}

// copyTimes runs copies of n bytes src → dst by the threads pinned to
// cores, one after the other, with between(i) before copy i, and returns
// each copy's duration.
func copyTimes(t *testing.T, n uint64, cores []int, between func(i int, m *mem.Memory, src, dst mem.Addr)) []sim.Duration {
	t.Helper()
	sp := pairSpec()
	e := sim.New(1)
	m := mem.New("m", true)
	c := New(e, "cpu", sp, m, mem.NewServer(float64(sp.DRAMBandwidth)))
	src, dst := m.Alloc(mem.Host, n, "src"), m.Alloc(mem.Host, n, "dst")
	d := make([]sim.Duration, len(cores))
	// Each copy's thread starts the next one's when it is done (no thread
	// waits on the core of another's copy).
	var start func(i int)
	start = func(i int) {
		if _, err := c.SpawnOn(cores[i], "copy", func(th *Thread) {
			between(i, m, src, dst)
			t0 := th.Now()
			th.ComputeOn(1, Access{Addr: src, Len: n}, Access{Addr: dst, Len: n, Write: true})
			d[i] = th.Now() - t0
			if i+1 < len(cores) {
				start(i + 1)
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	start(0)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	return d
}

func nothing(int, *mem.Memory, mem.Addr, mem.Addr) {}

// A copy over lines nothing holds streams from DRAM at 16 requests in
// flight, exactly as Compute does; run again by the same core it is served
// from the L1D; by the other core of the pair from the shared L2; by a core
// of another pair at the L3's latency (the directory lookup included).
func TestComputeOnServesFromTheLevelHoldingTheData(t *testing.T) {
	const n = 4 << 10
	sp := pairSpec()
	lines := float64(2 * n / 64)
	out := float64(sp.Outstanding())
	cold := sp.MissLatency() * sim.Duration(lines/out)
	issue := sp.Freq.Cycles(2 * n / sp.StreamBPC)
	d := copyTimes(t, n, []int{0, 0}, nothing)
	if d[0] != cold {
		t.Errorf("cold copy of %d B: %v, want %v (%v lines / %v in flight × the miss: directory, then DRAM)", n, d[0], cold, lines, out)
	}
	if want := max(issue, sp.levelLatency(L1)); d[1] != want {
		t.Errorf("second copy on the same core: %v, want %v (L1D hits, issue-bound)", d[1], want)
	}
	pair := copyTimes(t, n, []int{0, 1}, nothing)
	if want := max(issue, sim.Duration(lines/out*float64(sp.levelLatency(L2)))); pair[1] != want {
		t.Errorf("copy on core 1 after core 0's: %v, want %v (the pair's shared L2)", pair[1], want)
	}
	other := copyTimes(t, n, []int{0, 2}, nothing)
	l3 := sim.Duration(lines / out * float64(sp.levelLatency(L3)))
	if want := max(issue, l3); other[1] != want || other[1] <= pair[1] || other[1] >= cold {
		t.Errorf("copy on core 2 after core 0's: %v, want %v (the L3, between the L2's %v and DRAM's %v)", other[1], want, pair[1], cold)
	}
}

// Another agent's write to the source (a NIC's DMA: Memory.Write, Touch)
// takes its lines out of the caches, so the next copy reads them from DRAM
// again; the destination, untouched, still hits.
func TestWriteByAnotherAgentInvalidates(t *testing.T) {
	const n = 4 << 10
	sp := pairSpec()
	d := copyTimes(t, n, []int{0, 0}, func(i int, m *mem.Memory, src, _ mem.Addr) {
		if i == 1 {
			m.Write(src, make([]byte, n))
		}
	})
	warm := copyTimes(t, n, []int{0, 0}, nothing)
	half := sp.MissLatency() * sim.Duration(float64(n/64)/float64(sp.Outstanding()))
	if d[1] <= warm[1] || d[1] >= d[0] {
		t.Errorf("copy after the source was written: %v, want between the warm copy's %v and the cold one's %v", d[1], warm[1], d[0])
	}
	if d[1] < half {
		t.Errorf("copy after the source was written: %v, want at least the source's %v from DRAM", d[1], half)
	}
}

// What the caches cannot hold comes from DRAM: a second pass over more than
// the L3 and every L2 together is as slow as the first.
func TestBeyondTheCachesIsDRAM(t *testing.T) {
	sp := pairSpec()
	n := uint64(sp.Cache.L3Size + 8*sp.Cache.L2Size) // src and dst together twice the capacity
	d := copyTimes(t, n, []int{0, 0}, nothing)
	if d[1] != d[0] {
		t.Errorf("second pass over 2 × %v: %v, want the cold pass's %v", unit.Bytes(n), d[1], d[0])
	}
}

// A multi-threaded region's ranges sit in several cores' caches: the next
// region finds them in the L3 at best.
func TestTeamRegionIsServedFromL3(t *testing.T) {
	sp := pairSpec()
	r := newResidency(sp)
	r.touch(teamCore, 0x10000, 0x10000+64<<10)
	var b [nLevels]uint64
	r.levels(0, 0x10000, 0x10000+64<<10, &b)
	if b != [nLevels]uint64{L3: 64 << 10} {
		t.Errorf("levels of a team-touched range for core 0: %v, want all at L3", b)
	}
	r.invalidate(0x10000+100, 8) // one line
	b = [nLevels]uint64{}
	r.levels(0, 0x10000, 0x10000+64<<10, &b)
	if b != [nLevels]uint64{L3: 64<<10 - 64, DRAM: 64} {
		t.Errorf("after a write of one line: %v, want that line from DRAM", b)
	}
}
