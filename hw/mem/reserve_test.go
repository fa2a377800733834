package mem

import (
	"bytes"
	"testing"
)

// TestReserveDataMakesTheSameAllocation: a range reserved and made later
// (AllocDataAt) sits where AllocData would have put it, with every later
// allocation where it would have been, counts the same bytes, holds data,
// and leaves a lazy snapshot of a later region reading what it copied.
func TestReserveDataMakesTheSameAllocation(t *testing.T) {
	for _, functional := range []bool{true, false} {
		eager, lazy := New("eager", functional), New("lazy", functional)
		var want, got []Addr
		for i, size := range []uint64{100, 4096, 16, 1 << 17, 64} {
			want = append(want, eager.AllocData(GPU, size, "x"))
			if i%2 == 1 {
				got = append(got, lazy.ReserveData(size))
			} else {
				got = append(got, lazy.AllocData(GPU, size, "x"))
			}
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("functional=%v: allocation %d at %#x, want %#x", functional, i, got[i], want[i])
			}
		}
		// A snapshot of the last region, taken before the reserved ones
		// are made (which moves its index).
		lazy.Store64(got[4], 0x1122334455667788)
		buf := make([]byte, 8)
		s := lazy.Snapshot(got[4], buf)
		lazy.AllocDataAt(got[3], GPU, 1<<17, "x")
		lazy.AllocDataAt(got[1], GPU, 4096, "x")
		lazy.Store64(got[4], 0) // the snapshot keeps the old bytes
		if s != nil {
			s.Materialize()
			if want := []byte{0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}; !bytes.Equal(buf, want) {
				t.Errorf("functional=%v: snapshot read %x after the reserved regions were made, want %x", functional, buf, want)
			}
			s.Release()
		}
		if lazy.Allocated() != eager.Allocated() {
			t.Errorf("functional=%v: %d bytes allocated, want %d", functional, lazy.Allocated(), eager.Allocated())
		}
		for _, a := range []Addr{got[1], got[3] + 1<<16} {
			if !lazy.HasData(a, 8) {
				t.Errorf("functional=%v: reserved range at %#x holds no data once made", functional, a)
			}
			lazy.Store64(a, 7)
			if v := lazy.Load64(a); v != 7 {
				t.Errorf("functional=%v: load at %#x = %d, want 7", functional, a, v)
			}
		}
		if next := lazy.AllocData(GPU, 8, "y"); next != eager.AllocData(GPU, 8, "y") {
			t.Errorf("functional=%v: next allocation at %#x, want where the eager memory put it", functional, next)
		}
	}
}

// TestAllocDataAtRefusesAnOverlap: making an allocation over another is a
// bug (a range that was not reserved), not a silent overlap.
func TestAllocDataAtRefusesAnOverlap(t *testing.T) {
	m := New("m", false)
	a := m.AllocData(GPU, 256, "x")
	defer func() {
		if recover() == nil {
			t.Error("AllocDataAt over an allocation did not panic")
		}
	}()
	m.AllocDataAt(a+64, GPU, 64, "y")
}

// TestReserveSpanIsTheReserveDataCalls: one span over a run of
// reservations takes the addresses and counts the bytes of the calls, and
// each reservation made later sits where the eager memory put it.
func TestReserveSpanIsTheReserveDataCalls(t *testing.T) {
	sizes := []uint64{4096, 4096, 16, 100, 1 << 17}
	eager, span := New("eager", false), New("span", false)
	eager.AllocData(GPU, 8, "before")
	span.AllocData(GPU, 8, "before")
	var want []Addr
	total := uint64(0)
	for _, s := range sizes {
		want = append(want, eager.ReserveData(s))
		total += Gap(s)
	}
	base := span.ReserveSpan(total, len(sizes))
	at := base
	for i, s := range sizes {
		if at != want[i] {
			t.Fatalf("reservation %d at %#x by Gap, want %#x", i, at, want[i])
		}
		span.AllocDataAt(at, GPU, s, "x")
		at += Addr(Gap(s))
	}
	if span.Allocated() != eager.Allocated() {
		t.Errorf("%d bytes allocated, want %d", span.Allocated(), eager.Allocated())
	}
	if a, b := span.AllocData(GPU, 8, "after"), eager.AllocData(GPU, 8, "after"); a != b {
		t.Errorf("next allocation at %#x, want %#x", a, b)
	}
}
