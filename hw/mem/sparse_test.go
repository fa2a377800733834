package mem

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"
)

// A large AllocData allocation (of a payload-free or a functional
// memory) is backed page by page (region.pages) until an access spans
// pages or is snapshotted; whatever the accesses, it must read back what
// a functional memory's dense allocation (Alloc) does, and back only the
// pages touched while it stays sparse.
func TestSparseRegionMatchesDense(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		size := rapid.IntRange(sparseMin, 4*sparseMin).Draw(t, "size")
		sp, de := New("sparse", rapid.Bool().Draw(t, "functional")), New("dense", true)
		as, ad := sp.AllocData(GPU, uint64(size), "q"), de.Alloc(GPU, uint64(size), "q")
		if r, _ := de.find(ad, 0); r.sparse {
			t.Fatal("a functional memory's Alloc is sparse")
		}
		ops := rapid.IntRange(1, 60).Draw(t, "ops")
		for i := range ops {
			off := rapid.IntRange(0, size-1).Draw(t, "off")
			n := rapid.IntRange(0, min(size-off, 3<<pageShift)).Draw(t, "n")
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0, 1:
				b := bytes.Repeat([]byte{byte(i + 1)}, n)
				sp.Write(as+Addr(off), b)
				de.Write(ad+Addr(off), b)
			case 2:
				gs, gd := make([]byte, n), make([]byte, n)
				sp.Read(as+Addr(off), gs)
				de.Read(ad+Addr(off), gd)
				if !bytes.Equal(gs, gd) {
					t.Fatalf("read [%d, +%d): sparse %v, dense %v", off, n, gs, gd)
				}
			case 3:
				if sp.Bytes(as+Addr(off), n) == nil {
					t.Fatalf("Bytes(%d, %d) of a data allocation is nil", off, n)
				}
			}
		}
		gs, gd := make([]byte, size), make([]byte, size)
		sp.Read(as, gs)
		de.Read(ad, gd)
		if !bytes.Equal(gs, gd) {
			t.Fatal("whole allocation differs after the accesses")
		}
	})
}

// Slot-sized accesses to a large queue back only their pages, in a
// payload-free and in a functional memory.
func TestSparseRegionBacksTouchedPages(t *testing.T) {
	for _, functional := range []bool{false, true} {
		m := New("m", functional)
		a := m.AllocData(GPU, 1<<20, "cq")
		for k := range 100 {
			m.Store64(a+Addr(64*k), uint64(k))
		}
		r, _ := m.find(a, 0)
		backed := 0
		for _, c := range r.pages {
			if c == nil {
				continue
			}
			for _, p := range c {
				if p != nil {
					backed++
				}
			}
		}
		if r.data != nil || backed != 2 {
			t.Fatalf("functional %v: 100 slots of 64 B: dense=%v, %d pages backed, want 2", functional, r.data != nil, backed)
		}
		if m.Load64(a+64*99) != 99 {
			t.Fatal("slot 99 lost its value")
		}
		m.Bytes(a+4000, 200) // spans two pages: the region becomes dense
		if r.data == nil || m.Load64(a+64*99) != 99 || m.Load64(a+64*5) != 5 {
			t.Fatal("densifying lost the pages' bytes")
		}
	}
}

// A large functional allocation is mapped outside the Go heap; Release
// returns it, after which it reads as payload-free.
func TestReleaseUnmaps(t *testing.T) {
	m := New("m", true)
	a := m.Alloc(GPU, 2*mapMin, "big")
	m.Store64(a+8, 7)
	if m.Load64(a+8) != 7 || len(m.maps.list) != 1 {
		t.Fatalf("big allocation: value %d, %d mappings, want 7 and 1", m.Load64(a+8), len(m.maps.list))
	}
	m.Release()
	if m.Bytes(a, 8) != nil || len(m.maps.list) != 0 || m.Load64(a+8) != 0 {
		t.Fatal("after Release the allocation still has bytes or mappings")
	}
}
