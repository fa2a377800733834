package mem

import (
	"runtime"
	"testing"
)

// firstInArena makes an arena and a first memory that uses it with one
// Host allocation x of size bytes, skipping the test where backings are
// not mapped (not Linux). The caller closes the arena.
func firstInArena(t *testing.T, size uint64) (*Arena, *Memory, Addr) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("backings are mapped on Linux only")
	}
	a := NewArena()
	first := New("first", true)
	first.UseArena(a)
	return a, first, first.Alloc(Host, size, "buf")
}

// writeAndRelease writes non-zero bytes over m's size bytes at x and
// releases m, returning where its backing starts (the bytes a memory that
// recycles it finds there).
func writeAndRelease(m *Memory, x Addr, size int) *byte {
	b := m.Bytes(x, size)
	for i := range b {
		b[i] = byte(i%251 + 1)
	}
	m.Release()
	return &b[0]
}

// A backing released into an arena is handed to the next memory that
// needs one as large, and reads as zeros there, whatever the first
// memory wrote and wherever either one's Scratch range lies; a smaller
// allocation takes it too, a larger one maps its own.
func TestArenaRecyclesZeroedBackings(t *testing.T) {
	const size = 8 << 20
	a, first, x := firstInArena(t, size)
	defer a.Close()
	first.ScratchSlots(x+size/2, size/2, 5000)
	was := writeAndRelease(first, x, size)
	for _, c := range []struct {
		name              string
		size, scratchFrom int
		reused            bool
	}{
		{"same size, scratch further in", size, size * 3 / 4, true},
		{"smaller, no scratch", size - 3*pageSize - 100, 0, true},
		{"larger", size + pageSize, 0, false},
	} {
		m := New(c.name, true)
		m.UseArena(a)
		before := handed(a)
		y := m.Alloc(Host, uint64(c.size), "buf")
		if c.scratchFrom > 0 {
			m.Scratch(y+Addr(c.scratchFrom), c.size-c.scratchFrom)
		}
		got := m.Bytes(y, c.size) // maps the backing (or takes one) at first touch
		checkBacking(t, c.name, handed(a) > before, got, was, c.reused, 7)
		m.Release()
	}
	// Trim keeps at most the bytes asked for: the backings hold 8 MiB
	// and a bit of written bytes each.
	a.Trim(0)
	a.mu.Lock()
	idle := len(a.free)
	a.mu.Unlock()
	if idle != 0 {
		t.Errorf("after Trim(0): %d idle backings, want 0", idle)
	}
}

// A backing mapped for an arena is long enough that the next memory's
// allocation a few pages larger (another strategy's layout of the same
// point) takes it instead of mapping and faulting in its own, and reads
// as zeros there; one larger than the rounding leaves maps its own.
func TestArenaBackingFitsASlightlyLargerAllocation(t *testing.T) {
	const size = 16654272 // a 64-node GHN_APU node's layout in the main job
	a, first, x := firstInArena(t, size)
	defer a.Close()
	was := writeAndRelease(first, x, size)
	for _, c := range []struct {
		name   string
		size   int
		reused bool
	}{
		{"8 KiB larger (GPU-TN's layout)", size + 8<<10, true},
		{"past the rounding", arenaSize(size) + pageSize, false},
	} {
		m := New(c.name, true)
		m.UseArena(a)
		before := handed(a)
		y := m.Alloc(Host, uint64(c.size), "buf")
		got := m.Bytes(y, c.size) // maps the backing (or takes one) at first touch
		checkBacking(t, c.name, handed(a) > before, got, was, c.reused, 9)
		m.Release()
	}
}

// checkBacking checks a new memory's bytes got: recycled exactly when
// reused (the arena handed a backing out again, and it is the one whose
// first byte was at was), all zeros, as a fresh backing reads; then
// writes fill over them, for the next memory that takes the backing.
// Whether a backing was recycled is the arena's count, not the address
// alone: a fresh mapping made after the arena unmapped its idle backing
// may be given the same address by the kernel.
func checkBacking(t *testing.T, name string, recycled bool, got []byte, was *byte, reused bool, fill byte) {
	t.Helper()
	if recycled != reused || (reused && &got[0] != was) {
		t.Errorf("%s: recycled=%v at the released backing's address=%v, want recycled=%v", name, recycled, &got[0] == was, reused)
	}
	for i, v := range got {
		if v != 0 {
			t.Fatalf("%s: byte %d = %d, want 0 (a recycled backing must read as a fresh one)", name, i, v)
		}
	}
	for i := range got {
		got[i] = fill
	}
}

// handed returns how many backings a has handed out again so far.
func handed(a *Arena) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.handed
}

// arenaSize rounds up by less than a sixteenth and to whole pages.
func TestArenaSizeRoundsUpALittle(t *testing.T) {
	for _, n := range []int{1, pageSize, mapMin, mapMin + 1, 16654272, 16662400, 16523136, 1<<30 + 7} {
		got := arenaSize(n)
		if got < n || got%pageSize != 0 || float64(got-n) > float64(n)/16+pageSize {
			t.Errorf("arenaSize(%d) = %d: want a page multiple in [n, n + n/16]", n, got)
		}
	}
	if arenaSize(16654272) != arenaSize(16662400) {
		t.Errorf("the main job's 64-node GHN_APU and GPU-TN layouts round to %d and %d, want one size", arenaSize(16654272), arenaSize(16662400))
	}
}

// An access through BytesToWrite that backs a region with a recycled
// backing leaves the range it writes as it was (the caller overwrites it)
// and clears the rest: the region outside that range reads as zeros.
func TestBytesToWriteBacksWithoutClearingItsRange(t *testing.T) {
	const size = 6 << 20
	a, first, x := firstInArena(t, size)
	defer a.Close()
	b := first.Bytes(x, size)
	for i := range b {
		b[i] = 0xAB
	}
	first.Release()
	m := New("m", true)
	m.UseArena(a)
	y := m.Alloc(Host, size, "buf")
	lo, n := 3*pageSize+5, 2<<20
	w := m.BytesToWrite(y+Addr(lo), n)
	if w[0] != 0xAB || w[n-1] != 0xAB {
		t.Errorf("the written range was cleared first (%#x, %#x): the fill's second pass is back", w[0], w[n-1])
	}
	for i := range w {
		w[i] = 1
	}
	got := m.Bytes(y, size)
	for i, v := range got {
		want := byte(0)
		if i >= lo && i < lo+n {
			want = 1
		}
		if v != want {
			t.Fatalf("byte %d = %#x, want %#x (outside the written range a recycled backing reads as zeros)", i, v, want)
		}
	}
}
