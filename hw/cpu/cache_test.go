package cpu

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// haswell is a Haswell desktop core as preset spin has it.
func haswell() Spec {
	s := spec()
	s.Freq, s.DRAMBandwidth, s.DRAMLatency = 3.4e9, 25.6e9, 68*sim.Nanosecond
	s.L1DMisses, s.L2Misses, s.Prefetch, s.PrefetchDepth = 10, 16, true, 20
	s.Cache = HaswellCache()
	return s
}

// stridedWalk copies n blocks of bl bytes from a packed source to a
// destination at stride, on cold caches, and returns the walk.
func stridedWalk(s Spec, n, bl, stride int, dram *mem.Server) *Walk {
	const src, dst = mem.Addr(1 << 32), mem.Addr(1 << 34)
	w := NewWalk(s, 0, dram)
	for i := range n {
		w.Copy(dst+mem.Addr(stride*i), src+mem.Addr(bl*i), bl, 4)
	}
	return w
}

// TestWalkBlockSizeNotLinearInRegions: a 1 MiB unpack in 4 B blocks has
// 512 times the regions of one in 2 KiB blocks, but its time is set by
// the lines the cache model moves, not by the region count.
func TestWalkBlockSizeNotLinearInRegions(t *testing.T) {
	const size = 1 << 20
	small := stridedWalk(haswell(), size/4, 4, 8, nil)
	large := stridedWalk(haswell(), size/2048, 2048, 4096, nil)
	ts, tl := small.End(), large.End()
	if r := float64(ts) / float64(tl); r < 1 || r > 4 {
		t.Errorf("4 B blocks %v vs 2 KiB blocks %v: ratio %.2f, want in [1, 4] (regions ratio is 512)", ts, tl, r)
	}
	if ss, sl := small.Stats(), large.Stats(); ss.Served[DRAM]+ss.Prefetched == 0 || ss.Served[L1] <= sl.Served[L1] {
		t.Errorf("4 B blocks served %v, 2 KiB %v: want DRAM lines and more L1 hits with small blocks", ss.Served, sl.Served)
	}
}

// TestWalkStrideThroughCache: 64 B blocks at a growing stride touch more
// lines and pages. At twice the block the prefetcher also brings the
// skipped lines (more DRAM bytes, more time); at a page per block it never
// sees an ascending pair in a page, so every destination line is a demand
// DRAM miss.
func TestWalkStrideThroughCache(t *testing.T) {
	const n = 8192
	dense, sparse, page := stridedWalk(haswell(), n, 64, 64, nil), stridedWalk(haswell(), n, 64, 128, nil), stridedWalk(haswell(), n, 64, 4096, nil)
	if sparse.End() <= dense.End() || sparse.Stats().DRAMRead <= dense.Stats().DRAMRead {
		t.Errorf("stride 128: %v and %d B from DRAM, stride 64: %v and %d B: want more of both at the larger stride",
			sparse.End(), sparse.Stats().DRAMRead, dense.End(), dense.Stats().DRAMRead)
	}
	if d, s := page.Stats().Served[DRAM], sparse.Stats().Served[DRAM]; d < n || s >= d {
		t.Errorf("demand DRAM touches: %d at a page stride (want ≥ %d), %d at stride 128 (want fewer)", d, n, s)
	}
	// Without the prefetcher the contiguous copy is slower.
	s := haswell()
	s.Prefetch = false
	if off := stridedWalk(s, n, 64, 64, nil).End(); off <= dense.End() {
		t.Errorf("contiguous copy without prefetcher %v, with %v: want slower without", off, dense.End())
	}
}

// TestWalkWarmHitsL2: a walk that fits L2, run again, is served by L1 and
// L2 and is faster than on cold caches.
func TestWalkWarmHitsL2(t *testing.T) {
	w := stridedWalk(haswell(), 1024, 32, 64, nil)
	cold := w.End()
	w.Warm(cold)
	before := w.Stats()
	for i := range 1024 {
		w.Copy(mem.Addr(1<<34)+mem.Addr(64*i), mem.Addr(1<<32)+mem.Addr(32*i), 32, 4)
	}
	after := w.Stats()
	if d := after.Served[DRAM] - before.Served[DRAM]; d != 0 {
		t.Errorf("warm pass: %d DRAM touches, want 0", d)
	}
	if warm := w.End() - cold; warm >= cold {
		t.Errorf("warm pass %v, cold %v: want faster warm", warm, cold)
	}
}

// TestWalkTrafficIsServerBytes: the DRAM bytes a walk reports are the
// bytes the node's DRAM server moved, including the final write-back.
func TestWalkTrafficIsServerBytes(t *testing.T) {
	s := haswell()
	srv := mem.NewServer(float64(s.DRAMBandwidth))
	srv.Reserve(0, 1000) // earlier traffic of the node
	w := stridedWalk(s, 1<<16, 16, 32, srv)
	w.Flush()
	st := w.Stats()
	if got := srv.Bytes() - 1000; got != st.DRAMRead+st.DRAMWrite || st.DRAMWrite == 0 {
		t.Errorf("server moved %d B, walk reports %d read + %d written", got, st.DRAMRead, st.DRAMWrite)
	}
	// Everything written reaches DRAM once: the destination span's lines.
	if want := uint64(1<<16) * 32; st.DRAMWrite != want {
		t.Errorf("DRAM writes %d B, want the %d B of destination lines", st.DRAMWrite, want)
	}
}

func TestCacheSpecValidate(t *testing.T) {
	if err := HaswellCache().Validate(); err != nil {
		t.Fatal(err)
	}
	c := HaswellCache()
	c.L2Ways, c.LoadPorts = 0, 99
	if err := c.Validate(); err == nil {
		t.Error("want errors for l2_ways = 0 and load_ports = 99")
	}
}

// TestWalkMissPaysTheWayThroughTheDirectory: a walk's DRAM miss pays the
// way to the last level it missed (cpu.cache.l3_path, the system
// directory's lookup on the documents' presets) before DRAM, as a word's
// miss (Spec.MissLatency) and a streaming touch do; with no path (the
// hit latency is load-to-use) nothing is added.
func TestWalkMissPaysTheWayThroughTheDirectory(t *testing.T) {
	cold := func(path sim.Time) sim.Time {
		s := spec()
		s.Prefetch = false
		s.Cache.L3Path = path
		w := NewWalk(s, 0, nil)
		w.Read(mem.Addr(1<<32), 8)
		return w.End()
	}
	const path = 15 * sim.Nanosecond
	if with, without := cold(path), cold(0); with-without != path {
		t.Errorf("one cold load: %v with a %v path to the L3, %v without: want the path added once", with, path, without)
	}
}
