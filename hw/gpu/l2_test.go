package gpu

import (
	"math/rand/v2"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// A queue line written with store_locked survives a streaming work-group
// that sweeps four times the L2; written with a plain store it is evicted,
// so the CP's later read misses. The CP read unlocks the line.
func TestLockedLinesSurviveStreamingEviction(t *testing.T) {
	for _, locked := range []bool{false, true} {
		e, g := newGPU("dgpu")
		g.UseL2(L2Spec{Size: 8 * unit.KiB, Ways: 4})
		m := g.Mem()
		slot := m.AllocData(mem.GPU, 64, "slot")
		big := m.Alloc(mem.GPU, 32<<10, "stream")
		var hit bool
		var got uint64
		op, _ := g.DispatchOp(Kernel{Name: "k", WGs: 1, WGSize: 64, Body: func(wg *WG) {
			wg.StoreTracked(slot, 5, locked)
			wg.StreamLines(big, 32<<10)
			var data [mem.LineSize]byte
			var lat sim.Duration
			data, hit, lat = g.CPReadLine(wg.Proc, slot)
			wg.Sleep(lat)
			got = uint64(data[0])
		}})
		g.Submit(op)
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		st := g.L2Stats()
		if hit != locked {
			t.Errorf("locked=%v: CP hit=%v, want %v", locked, hit, locked)
		}
		if got != 5 {
			t.Errorf("locked=%v: CP read %d, want 5 (an eviction must write the dirty line back)", locked, got)
		}
		if locked && (st.Unlocks != 1 || st.Locked != 0 || st.LockHold <= 0) {
			t.Errorf("locked: unlocks %d locked %d hold %v, want one released lock with a positive hold", st.Unlocks, st.Locked, st.LockHold)
		}
		if st.Evictions == 0 {
			t.Errorf("locked=%v: streaming evicted nothing", locked)
		}
	}
}

// With every way of a set locked, a new fill bypasses the L2 instead of
// evicting a locked line.
func TestAllWaysLockedBypasses(t *testing.T) {
	e, g := newGPU("dgpu")
	g.UseL2(L2Spec{Size: 2 * unit.KiB, Ways: 2}) // 16 sets
	m := g.Mem()
	buf := m.AllocData(mem.GPU, 4<<10, "buf")
	stride := mem.Addr(16 * mem.LineSize) // same set
	base := (buf + stride - 1) &^ (stride - 1)
	op, _ := g.DispatchOp(Kernel{Name: "k", WGs: 1, WGSize: 64, Body: func(wg *WG) {
		wg.StoreTracked(base, 1, true)
		wg.StoreTracked(base+stride, 2, true)
		wg.StoreTracked(base+2*stride, 3, false)
	}})
	g.Submit(op)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if st := g.L2Stats(); st.Bypasses != 1 || st.Locked != 2 || st.Evictions != 0 {
		t.Fatalf("stats %+v: want one bypass, two locked lines, no eviction", st)
	}
}

// A CP RMW holds its line LOCKED: a second CP RMW of the same word waits
// for it, and the two increments both land.
func TestCPRMWIsAtomic(t *testing.T) {
	e, g := newGPU("dgpu")
	g.UseL2(L2Spec{Size: 8 * unit.KiB, Ways: 4})
	w := g.Mem().AllocData(mem.GPU, 8, "mutex")
	for range 2 {
		e.Spawn("cp", func(p *sim.Proc) { g.CPRMW(p, w, func(o uint64) uint64 { return o + 1 }) })
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	g.l2.writeBack(g.Mem())
	if v := g.Mem().Load64(w); v != 2 || g.L2Stats().RMWWait != 1 {
		t.Fatalf("word %d after two RMWs, waits %d; want 2 and one wait", v, g.L2Stats().RMWWait)
	}
}

// A store made while another work-group's system acquire is writing the
// L2 back must survive the invalidation (dGPU): work-group 0 dirties 1000
// lines, so its acquire's write-back takes 640 ns; work-group 1 stores in
// that window and leaves the line for the kernel-end release.
func TestStoreDuringSystemAcquireSurvives(t *testing.T) {
	e, g := newGPU("dgpu")
	m := g.Mem()
	a := m.AllocData(mem.GPU, 1000*64, "a")
	b := m.AllocData(mem.GPU, 64, "b")
	op, _ := g.DispatchOp(Kernel{Name: "k", WGs: 2, WGSize: 64, Body: func(wg *WG) {
		if wg.ID == 0 {
			for i := range 1000 {
				wg.Store64(a+mem.Addr(64*i), 1)
			}
			wg.Acquire(System)
			return
		}
		wg.Sleep(12290 * sim.Nanosecond) // 1000 stores of 12 ns, then the acquire writes back until ≈ 12.66 µs
		wg.Store64(b, 7)
	}})
	g.Submit(op)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if v := m.Load64(b); v != 7 {
		t.Fatalf("store during another's system acquire lost: memory holds %d, want 7", v)
	}
}

// Hit-rate accounting is per requester: a work-group's streaming misses
// and its queue stores count for the CU only, and the CP's rate is its
// own accesses': a miss (the line was never filled), then a hit.
func TestCPHitRateCountsOnlyCPAccesses(t *testing.T) {
	e, g := newGPU("dgpu")
	g.UseL2(L2Spec{Size: 8 * unit.KiB, Ways: 4})
	m := g.Mem()
	q := m.AllocData(mem.GPU, 64, "q")
	big := m.Alloc(mem.GPU, 4<<10, "stream")
	op, _ := g.DispatchOp(Kernel{Name: "k", WGs: 1, WGSize: 64, Body: func(wg *WG) {
		wg.StreamLines(big, 4<<10) // 64 CU misses
		_, _, lat := g.CPReadLine(wg.Proc, q)
		wg.Sleep(lat)
		_, _, lat = g.CPReadLine(wg.Proc, q)
		wg.Sleep(lat)
		wg.StoreTracked(q, 1, false) // a CU hit on the CP's line
	}})
	g.Submit(op)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	st := g.L2Stats()
	if st.Hits[CP] != 1 || st.Misses[CP] != 1 || st.HitRate(CP) != 0.5 {
		t.Errorf("CP hits %d misses %d rate %v; want 1, 1, 0.5", st.Hits[CP], st.Misses[CP], st.HitRate(CP))
	}
	if st.Misses[CU] != 64 || st.Hits[CU] != 1 {
		t.Errorf("CU hits %d misses %d; want 1 and 64", st.Hits[CU], st.Misses[CU])
	}
}

// Hold time = the CP's first access to a locked line − the locking store:
// a work-group's later access does not release it, the CP's first read
// does (hold exactly the gap), and a second CP read adds nothing. The
// mean and max are over the released lines.
func TestLockHoldIsFirstCPAccessMinusLockingStore(t *testing.T) {
	e, g := newGPU("dgpu")
	g.UseL2(L2Spec{Size: 8 * unit.KiB, Ways: 4})
	m := g.Mem()
	a := m.AllocData(mem.GPU, 128, "slots")
	b := a + mem.LineSize
	var holdA, holdB sim.Duration
	op, _ := g.DispatchOp(Kernel{Name: "k", WGs: 1, WGSize: 64, Body: func(wg *WG) {
		wg.StoreTracked(a, 1, true)
		t0 := wg.Now() // the line is locked when the store is done
		wg.StoreTracked(b, 2, true)
		t1 := wg.Now()
		wg.Sleep(100 * sim.Nanosecond)
		wg.StoreTracked(a+8, 3, true) // the line is already locked: the lock time stays
		if g.L2Stats().Unlocks != 0 {
			t.Error("a work-group access released a lock")
		}
		wg.Sleep(200 * sim.Nanosecond)
		holdA = wg.Now() - t0
		g.CPReadLine(wg.Proc, a)
		wg.Sleep(400 * sim.Nanosecond)
		holdB = wg.Now() - t1
		g.CPStore64(wg.Proc, b, 9)
		g.CPReadLine(wg.Proc, a)
	}})
	g.Submit(op)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	st := g.L2Stats()
	if holdB <= holdA || holdA < 300*sim.Nanosecond {
		t.Fatalf("set-up: holds %v and %v", holdA, holdB)
	}
	if st.Unlocks != 2 || st.LockHold != holdA+holdB || st.LockHoldMax != holdB || st.Locked != 0 || st.MaxLocked != 2 {
		t.Errorf("unlocks %d, summed hold %v, max %v, locked %d (max %d); want 2, %v, %v, 0 (2)", st.Unlocks, st.LockHold, st.LockHoldMax, st.Locked, st.MaxLocked, holdA+holdB, holdB)
	}
}

// The per-line record of the CP's accesses (RecordCPLines) counts the CP's
// reads, stores and RMWs of each line as hit or miss and, apart, the
// accesses that found the line store_locked; a work-group's accesses are
// not in it, and without RecordCPLines there is no record.
func TestCPLinesCountsTheCPsAccessesPerLine(t *testing.T) {
	for _, record := range []bool{false, true} {
		e, g := newGPU("dgpu")
		g.UseL2(L2Spec{Size: 8 * unit.KiB, Ways: 4})
		if record {
			g.RecordCPLines()
		}
		m := g.Mem()
		a := m.AllocData(mem.GPU, 128, "slots")
		b := a + mem.LineSize
		op, _ := g.DispatchOp(Kernel{Name: "k", WGs: 1, WGSize: 64, Body: func(wg *WG) {
			_, _, lat := g.CPReadLine(wg.Proc, a) // miss
			wg.Sleep(lat)
			wg.StoreTracked(a, 1, true) // a CU hit that locks a
			wg.StoreTracked(b, 2, false)
			_, _, lat = g.CPReadLine(wg.Proc, a) // hit, found locked
			wg.Sleep(lat)
			_, lat = g.CPStore64(wg.Proc, a, 3) // hit, no longer locked
			wg.Sleep(lat)
			g.CPRMW(wg.Proc, b, func(v uint64) uint64 { return v + 1 }) // read half a hit, write half a hit
		}})
		g.Submit(op)
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		got := g.CPLines()
		if !record {
			if got != nil {
				t.Errorf("no RecordCPLines: CPLines = %v, want nil", got)
			}
			continue
		}
		want := map[mem.Addr]CPLineCount{a: {Hits: 2, Misses: 1, Locked: 1}, b: {Hits: 2}}
		if len(got) != len(want) {
			t.Fatalf("CPLines has %d lines, want %d", len(got), len(want))
		}
		for l, w := range want {
			if c := got[l]; c == nil || *c != w {
				t.Errorf("line %#x: %+v, want %+v", uint64(l), c, w)
			}
		}
		st := g.L2Stats()
		if sum := got[a].Hits + got[a].Misses + got[b].Hits + got[b].Misses; sum != st.Hits[CP]+st.Misses[CP] {
			t.Errorf("per-line accesses %d, CP accesses %d", sum, st.Hits[CP]+st.Misses[CP])
		}
	}
}

// nicShared (sorted, merged ranges, binary search) answers as a linear
// scan of the ranges as shared: overlapping, adjacent, unaligned and
// out-of-order ranges, shared before and after the first question.
func TestNICSharedMatchesLinearScan(t *testing.T) {
	_, g := newGPU("dgpu")
	g.UseL2(L2Spec{Size: 8 * unit.KiB, Ways: 4})
	r := rand.New(rand.NewPCG(1, 2))
	var ranges [][2]mem.Addr
	linear := func(l mem.Addr) bool {
		for _, x := range ranges {
			if l+mem.LineSize > x[0] && l < x[1] {
				return true
			}
		}
		return false
	}
	for round := range 4 {
		for range 50 {
			a := mem.Addr(r.IntN(1 << 16))
			n := uint64(1 + r.IntN(300))
			g.ShareWithNIC(a, n)
			ranges = append(ranges, [2]mem.Addr{a, a + mem.Addr(n)})
		}
		for l := mem.Addr(0); l < 1<<16+512; l += mem.LineSize {
			if got, want := g.nicShared(l), linear(l); got != want {
				t.Fatalf("round %d: line %#x shared = %v, want %v", round, uint64(l), got, want)
			}
		}
	}
}

// The tag array is made in blocks as its sets are first filled: a
// work-group streaming 64 KiB through a 50 MiB L2 makes the blocks of
// those 1,024 lines' sets (16 blocks of 64 sets), not the 819,200 ways of
// the whole array (19.7 MB, which every GPU of a large run held), and a
// second pass over the same lines hits in them.
func TestL2TagBlocksMadeAsUsed(t *testing.T) {
	e, g := newGPU("dgpu")
	g.UseL2(L2Spec{Size: 50 * unit.MiB, Ways: 16})
	m := g.Mem()
	buf := m.Alloc(mem.GPU, 64<<10, "stream")
	op, _ := g.DispatchOp(Kernel{Name: "k", WGs: 1, WGSize: 64, Body: func(wg *WG) {
		wg.StreamLines(buf, 64<<10)
		wg.StreamLines(buf, 64<<10)
	}})
	g.Submit(op)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	made := 0
	for i, b := range g.tags.keys {
		if b != nil {
			made++
			if g.tags.lines[i] == nil {
				t.Fatalf("block %d has keys but no states", i)
			}
			// Each streamed line fills one way of its own set: the
			// block holds that way of each set, not all 16.
			if n := len(b); n != l2PageSets || g.tags.blockWays[i] != 1 {
				t.Errorf("block %d holds %d ways of %d sets (%d per set), want one way per set", i, n, l2PageSets, g.tags.blockWays[i])
			}
		}
	}
	if want := (64 << 10) / mem.LineSize / l2PageSets; made != want {
		t.Errorf("%d tag blocks made of %d, want %d (the streamed lines' sets)", made, len(g.tags.keys), want)
	}
	if st := g.L2Stats(); st.Misses[CU] == 0 || st.Hits[CU] == 0 {
		t.Errorf("stats %+v: want the first pass to miss and the second to hit", st)
	}
}
