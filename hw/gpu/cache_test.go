package gpu

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
)

// Line copies leave a cache (eviction, clear) for reuse by later fills,
// except a copy a pending load still reads (wgPhases.readLater): reusing
// it would hand the load another line's bytes. A dropped copy is left to
// the collector, and each copy is reused once, even when its address is
// in the fill order twice.
func TestCacheReusesOnlyUnreferencedCopies(t *testing.T) {
	m := mem.New("m", true)
	a := m.Alloc(mem.Host, 8*mem.LineSize, "lines")
	line := func(i int) mem.Addr { return a + mem.Addr(i)*mem.LineSize }
	for i := range 8 {
		m.Store64(line(i), uint64(100+i))
	}
	c := newCache(4)
	var ph wgPhases
	pinned := c.fill(line(0), m, nil)
	ph.readLater(pinned)
	loose := c.fill(line(1), m, nil)
	dropped := c.fill(line(2), m, nil)
	c.lines.del(line(2))              // dropped (as GPU.dropLine does), then filled again:
	second := c.fill(line(2), m, nil) // line 2 is in the fill order twice
	c.clear()
	if c.free.Len() != 2 {
		t.Fatalf("%d copies free after the clear, want 2 (lines 1 and 2; 0 is pinned, 2's first copy dropped)", c.free.Len())
	}
	got := map[*cline]*cline{}
	copies := map[int]*cline{}
	for i := 3; i < 7; i++ { // four lines: the cache is full, nothing evicted
		cl := c.fill(line(i), m, nil)
		if cl == pinned || cl == dropped {
			t.Fatalf("line %d reused the copy a pending load reads or a dropped one", i)
		}
		if got[cl] != nil {
			t.Fatalf("line %d got a copy another live line holds", i)
		}
		got[cl], copies[i] = cl, cl
		if v := leUint64(cl.data[:]); v != uint64(100+i) {
			t.Fatalf("line %d reads %d, want %d", i, v, 100+i)
		}
	}
	if got[loose] == nil || got[second] == nil {
		t.Fatal("the unreferenced copies were not reused")
	}
	// Eviction: line 7 evicts line 3 and takes its copy; then line 0
	// evicts line 4, whose copy a pending load reads.
	ph.readLater(copies[4])
	if cl := c.fill(line(7), m, nil); cl != copies[3] {
		t.Fatal("line 7 did not take the copy of line 3, which it evicted")
	}
	if cl := c.fill(line(0), m, nil); cl == copies[4] {
		t.Fatal("line 0 took the evicted copy a pending load reads")
	}
	if v := leUint64(copies[4].data[:]); v != 104 {
		t.Fatalf("the pending load of line 4 reads %d, want 104", v)
	}
	if v := leUint64(pinned.data[:]); v != 100 {
		t.Fatalf("the pending load reads %d, want 100", v)
	}
}
