package mem

import (
	"slices"
	"sync"
)

// Arena recycles the mapped backings (mapMin and up) of memories that
// have been released, so that the next simulation of a sweep writes into
// pages already faulted in instead of mapping, faulting and unmapping its
// own: a functional main job faulted in and gave back about 10 GB of node
// memory, 3.4 µs a page on the reference VM, 40 % of its CPU time.
// Memories opt in with UseArena. A backing comes back from Release with
// its scratch range and everything after it given back to the system
// (they read as zeros); the bytes before it, the data a workload filled,
// are zeroed when the backing is handed out again, so a recycled
// allocation reads as zeros like a fresh one. Safe for concurrent use
// (the memories of a partitioned run back their allocations on several
// goroutines).
type Arena struct {
	mu     sync.Mutex
	free   []block
	closed bool
	handed int // backings handed out again by get (read by tests)
}

// block is a recycled backing: b, of which only [0, dirty) may hold
// bytes other than zero (a page multiple).
type block struct {
	b     []byte
	dirty int
}

// NewArena returns an empty arena.
func NewArena() *Arena { return new(Arena) }

// UseArena makes m take its mapped backings from a and give them back to
// it on Release. Call it before the first access to any allocation.
func (m *Memory) UseArena(a *Arena) {
	m.maps.mu.Lock()
	m.maps.arena = a
	m.maps.mu.Unlock()
}

// get returns a recycled backing of at least n bytes, the smallest,
// whose first n bytes read as zeros, or nil, and how many of its first
// bytes are faulted in. Where none is large enough
// it unmaps an idle one for the mapping the caller makes instead, so that
// the idle backings and the new ones together hold no more than the
// arena did. [lo, hi) is the part of the n bytes the caller will not
// fault in ahead (an allocation's Scratch range): dirty pages wholly
// inside it are given back rather than cleared. [wLo, wHi) is a range the
// caller writes whole before it reads any of it: its bytes are left as
// they are (empty: none).
func (a *Arena) get(n, lo, hi, wLo, wHi int) (b []byte, populated int) {
	a.mu.Lock()
	best := -1
	for i, bl := range a.free {
		if len(bl.b) >= n && (best < 0 || len(bl.b) < len(a.free[best].b)) {
			best = i
		}
	}
	if best < 0 {
		var drop []byte
		if k := len(a.free) - 1; k >= 0 {
			drop = a.free[k].b
			a.free = a.free[:k]
		}
		a.mu.Unlock()
		if drop != nil {
			unmapAnon(drop)
		}
		return nil, 0
	}
	bl := a.free[best]
	a.free = slices.Delete(a.free, best, best+1)
	a.handed++
	a.mu.Unlock()
	if hi <= lo {
		lo, hi = n, n
	}
	pLo := (lo + pageSize - 1) &^ (pageSize - 1) // the scratch range's whole pages
	pHi := hi &^ (pageSize - 1)
	if pHi <= pLo {
		pLo, pHi = n, n
	}
	clr := func(from, to int) { // clears the dirty bytes of [from, to)
		to = min(to, bl.dirty)
		if from < to {
			clear(bl.b[from:to])
		}
	}
	zero := func(from, to int) { // clr, but for [wLo, wHi)
		if wHi <= wLo || to <= wLo || from >= wHi {
			clr(from, to)
			return
		}
		clr(from, wLo)
		clr(wHi, to)
	}
	zero(0, pLo)
	if d := min(pHi, bl.dirty); d > pLo {
		discard(bl.b[pLo:d])
	}
	zero(pHi, n)
	if bl.dirty > n { // the bytes past the allocation: given back
		from := (n + pageSize - 1) &^ (pageSize - 1)
		if from < bl.dirty {
			discard(bl.b[from:bl.dirty])
		}
		if from > n { // the part of the last page past n
			clear(bl.b[n:min(from, bl.dirty)])
		}
	}
	// The pages before the scratch range that held bytes are faulted in
	// (and cleared above); the caller need not populate them again.
	return bl.b, min(bl.dirty, pLo) &^ (pageSize - 1)
}

// put takes back a backing with [0, dirty) possibly holding bytes; the
// rest must read as zeros. After Close it unmaps it.
func (a *Arena) put(b []byte, dirty int) {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		unmapAnon(b)
		return
	}
	a.free = append(a.free, block{b: b, dirty: dirty})
	a.mu.Unlock()
}

// Trim unmaps idle backings, largest dirty part first, until the bytes
// they may hold total at most keep: what the next simulation is expected
// to use, so that the arena does not hold memory beside it that it will
// not take.
func (a *Arena) Trim(keep float64) {
	a.mu.Lock()
	slices.SortFunc(a.free, func(x, y block) int { return y.dirty - x.dirty })
	held := 0.0
	for _, bl := range a.free {
		held += float64(bl.dirty)
	}
	var drop []block
	for len(a.free) > 0 && held > keep {
		bl := a.free[0]
		a.free = a.free[1:]
		held -= float64(bl.dirty)
		drop = append(drop, bl)
	}
	a.mu.Unlock()
	for _, bl := range drop {
		unmapAnon(bl.b)
	}
}

// Close unmaps every idle backing; backings released later are unmapped
// at once.
func (a *Arena) Close() {
	a.mu.Lock()
	free := a.free
	a.free, a.closed = nil, true
	a.mu.Unlock()
	for _, bl := range free {
		unmapAnon(bl.b)
	}
}

// Idle returns how many released backings the arena holds.
func (a *Arena) Idle() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.free)
}
