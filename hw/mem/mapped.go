package mem

import (
	"math/bits"
	"sync"
)

// mapMin is the size from which an allocation's bytes are mapped outside
// the Go heap (a functional run's data buffers, megabytes per node): the
// garbage collector neither counts them towards its next cycle, which
// would let the heap grow to twice the node memories, nor keeps them after
// the simulation (Memory.Release unmaps them at once).
const mapMin = 1 << 20

// populateMin is the backing size from which buffers are populated: the
// workloads' data buffers, used whole; not smaller ones that may be used
// in part (an MPI overflow buffer is 1 MiB, of which an unexpected message
// or two touches a few pages), whose untouched pages stay unbacked.
const populateMin = 4 << 20

// mappings are the mapped backings of one memory.
type mappings struct {
	mu    sync.Mutex // Release and the cleanup of an unreachable memory may race
	list  [][]byte   // whole backings (a recycled one may be longer than its allocation)
	arena *Arena     // where backings come from and go back to (UseArena); nil: the system
	// dirty is, per backing in list, where the bytes that Release keeps
	// end: it gives the pages from there on back to the system.
	dirty []int
	// slots are the mapped slot buffers (slots.go), unmapped on release.
	slots [][]byte
}

// getSlot returns n zero bytes mapped outside the Go heap to cut slot
// buffers from, or nil where the system refuses.
func (p *mappings) getSlot(n int) []byte {
	b := mapAnon((n + pageSize - 1) &^ (pageSize - 1))
	if b == nil {
		return nil
	}
	p.mu.Lock()
	p.slots = append(p.slots, b)
	p.mu.Unlock()
	return b[:n:n]
}

// arenaSize is the length of a new mapping for n bytes that will go back
// to an arena: n rounded up to a sixteenth of its power of two (at most
// 6.25 % of address space more, never touched, so no more resident
// memory), so that the next simulation's allocation a few pages larger
// fits in it. Why: the strategies of a sweep lay their buffers out a few
// pages apart (a 64-node GPU-TN node needs 8 KiB more than GHN_APU's),
// and a backing too short by a page was unmapped and a new one mapped and
// faulted in: in the main job the 64-node GPU-TN point after GHN_APU's
// faulted in its 512 MiB of node memory afresh (131,000 page faults, a
// third of the job's).
func arenaSize(n int) int {
	grain := pageSize
	if n > 0 {
		grain = max(grain, (1<<(bits.Len(uint(n))-1))/16)
	}
	return (n + grain - 1) / grain * grain
}

// get returns n zero bytes mapped outside the Go heap, recycled from the
// arena when there is one, or nil where the system refuses (the caller
// then allocates on the heap), and how many of its first bytes are
// already faulted in (a recycled backing's). [lo, hi) is the allocation's Scratch range
// (empty: none); [wLo, wHi) the bytes the caller writes before it reads
// them (empty: none), which a recycled backing leaves uncleared.
func (p *mappings) get(n, lo, hi, wLo, wHi int) (_ []byte, populated int) {
	p.mu.Lock()
	a := p.arena
	p.mu.Unlock()
	var b []byte
	if a != nil {
		b, populated = a.get(n, lo, hi, wLo, wHi)
	}
	if b == nil {
		size := n
		if a != nil {
			size = arenaSize(n)
		}
		b, populated = mapAnon(size), 0
	}
	if b == nil {
		return nil, 0
	}
	// What Release keeps (the arena clears it on reuse rather than fault
	// it in again): the bytes before the Scratch range, or a whole
	// allocation that back populates; the rest it gives back.
	dirty := 0
	switch {
	case hi > lo:
		dirty = lo &^ (pageSize - 1)
	case n >= populateMin:
		dirty = min(len(b), (n+pageSize-1)&^(pageSize-1)) // a longer backing's tail is never touched
	}
	p.mu.Lock()
	p.list = append(p.list, b)
	p.dirty = append(p.dirty, dirty)
	p.mu.Unlock()
	return b[:n:n], populated
}

// release gives every backing back: to the arena, with the pages past
// its dirty part given back to the system, or unmapped.
func (p *mappings) release() {
	p.mu.Lock()
	list, dirty, a, slots := p.list, p.dirty, p.arena, p.slots
	p.list, p.dirty, p.slots = nil, nil, nil
	p.mu.Unlock()
	for _, b := range slots {
		unmapAnon(b)
	}
	for i, b := range list {
		if a == nil {
			unmapAnon(b)
			continue
		}
		if dirty[i] < len(b) {
			discard(b[dirty[i]:])
		}
		a.put(b, dirty[i])
	}
}
