package nic

import (
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// PPB is the read cache of the PCIe-path IP block through which the NIC
// reads GPU memory (the GIO slides, GIO): lines the NIC read stay in it,
// and GPU writes to memory do not update them, so a later NIC read of a
// line the GPU rewrote returns the old bytes until the PPB is flushed (an
// MMIO write to its control register, then FlushLatency). Verbs reads of
// GPU memory (WQE fetches and payloads) go through it when it is set.
type PPB struct {
	Lines        int // capacity in 64 B lines, FIFO replacement
	FlushLatency sim.Duration
	// The cached lines, in a ring in FIFO order: slot (head+i) mod Lines
	// holds the i-th oldest line, at address at[slot]; index maps a
	// line's address to its slot. The bytes are one pointer-free block
	// (the collector does not scan it), grown to Lines slots as used.
	index     map[mem.Addr]int32
	at        []mem.Addr
	bytes     [][mem.LineSize]byte
	head, n   int
	flushDone sim.Time // the latest flush completes then; doorbells behind it wait
	stats     PPBStats
}

// PPBStats count the PPB's activity.
type PPBStats struct {
	Hits, Misses, StaleHits, Flushes uint64
}

// SetPPB puts p on the NIC's path to GPU memory (nil removes it).
func (n *NIC) SetPPB(p *PPB) {
	if p != nil {
		p.index = map[mem.Addr]int32{}
	}
	n.vs().ppb = p
}

// PPBStats returns the PPB counters (zero without a PPB).
func (n *NIC) PPBStats() PPBStats {
	if p := n.vs().ppb; p != nil {
		return p.stats
	}
	return PPBStats{}
}

// FlushPPBAt flushes the PPB when the control-register write arrives at
// time at (the caller's posted MMIO write) and returns when the flush is
// done.
func (n *NIC) FlushPPBAt(at sim.Time) sim.Time {
	p := n.vs().ppb
	if p == nil {
		return at
	}
	done := at + p.FlushLatency
	p.flushDone = max(p.flushDone, done)
	n.e.At(done, func() {
		clear(p.index)
		p.head, p.n = 0, 0
		p.stats.Flushes++
	})
	return done
}

// vread reads [a, a+len(dst)) as the NIC sees it: through the PPB for GPU
// memory, from memory otherwise.
func (n *NIC) vread(a mem.Addr, dst []byte) {
	p := n.vs().ppb
	if p == nil || len(dst) == 0 || n.mem.PoolOf(a) != mem.GPU {
		n.mem.Read(a, dst)
		return
	}
	end := a + mem.Addr(len(dst))
	if !n.mem.HasData(a, len(dst)) {
		// Payload-free bytes without control words: every line reads as
		// zeros, now and whenever it was cached (a line that ever held
		// data would make HasData true), so the PPB's bookkeeping is all
		// there is to do: same hits, misses and evictions, no stale hit.
		for l := mem.Line(a); l < end; l += mem.LineSize {
			if _, ok := p.index[l]; ok {
				p.stats.Hits++
			} else {
				*p.insert(l) = [mem.LineSize]byte{}
				p.stats.Misses++
			}
		}
		clear(dst)
		return
	}
	for l := mem.Line(a); l < end; l += mem.LineSize {
		var line *[mem.LineSize]byte
		if i, ok := p.index[l]; ok {
			line = &p.bytes[i]
			p.stats.Hits++
			n.checkPPB(l, line)
		} else {
			line = p.insert(l)
			p.stats.Misses++
			n.mem.Read(l, line[:])
		}
		lo, hi := max(l, a), min(l+mem.LineSize, end)
		copy(dst[lo-a:hi-a], line[lo-l:hi-l])
	}
}

// insert gives line l a slot, evicting the oldest line when the PPB is
// full, and returns the slot's bytes (to be filled).
func (p *PPB) insert(l mem.Addr) *[mem.LineSize]byte {
	var i int
	if p.n < p.Lines {
		i = (p.head + p.n) % p.Lines
		p.n++
		for len(p.bytes) <= i {
			p.bytes = append(p.bytes, [mem.LineSize]byte{})
			p.at = append(p.at, 0)
		}
	} else {
		i = p.head
		delete(p.index, p.at[i])
		p.head = (p.head + 1) % p.Lines
	}
	p.at[i] = l
	p.index[l] = int32(i)
	return &p.bytes[i]
}

// checkPPB reports a PPB hit on a line whose bytes memory no longer holds.
func (n *NIC) checkPPB(l mem.Addr, line *[mem.LineSize]byte) {
	var cur [mem.LineSize]byte
	n.mem.Read(l, cur[:])
	if cur == *line {
		return
	}
	n.vs().ppb.stats.StaleHits++
	if c := n.mem.Checker(); c != nil {
		c.Report(mem.Hazard{At: n.e.Now(), Agent: n.name + " (PPB)", Addr: l,
			What: "NIC read of GPU memory returned stale bytes from the PCIe-path cache",
			Fix:  "flush the PPB (MMIO write to its control register) before ringing the doorbell (GIO)"})
	}
}

// fromMemoryPPB is fromMemory reading through the PPB.
func (n *NIC) fromMemoryPPB(base mem.Addr) payloadSrc {
	return payloadSrc{kind: srcMemoryPPB, base: base}
}
