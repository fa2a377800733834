package nic

import (
	"slices"

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
	// holds the i-th oldest line. The bytes are one pointer-free block
	// (the collector does not scan it), grown to Lines slots as used.
	// runs[r0:] index them, oldest first: lines come in runs of
	// consecutive addresses (a payload's packet, 32 lines of 2 KiB, a WQE
	// fetch), and a run's lines sit in consecutive slots, so a handful of
	// runs stand for up to Lines lines, and an insertion or eviction is
	// an end of a run moving.
	runs    []ppbRun
	r0      int
	bytes   [][mem.LineSize]byte
	head, n int
	// zero marks, one bit per slot, the slots whose bytes are zeros not
	// yet written (lines a payload-free read brought in): a data read
	// that hits one clears its bytes first.
	zero []uint64
	// arrivals are the times the flushes' control writes reached the
	// PPB, in order, back to the oldest one that may still be in
	// progress: a NIC read reaching the PPB waits for a flush in progress
	// there (FlushLatency after its arrival).
	arrivals []sim.Time
	// The flushes under way, each the mark (sim.Mark) of the instant it
	// empties the PPB, oldest first, and spare marks. A flush's end only
	// empties the PPB, which nobody sees until a NIC read reaches it: an
	// event per flush (a closure each) became a mark, and every use of
	// the PPB first empties it for the flushes whose instant the run has
	// passed (settle) — as the event did, in the same order with every
	// read.
	flushing, spare []*sim.Mark
	flushEvents     bool // each flush's end an event, as before the marks (tests compare)
	stats           PPBStats
}

// settle empties the PPB for each flush whose end the run has passed.
func (p *PPB) settle() {
	if len(p.flushing) == 0 {
		return
	}
	k := 0
	for _, m := range p.flushing {
		if m.Pending() {
			p.flushing[k] = m
			k++
			continue
		}
		p.empty()
		p.stats.Flushes++
		p.spare = append(p.spare, m)
	}
	clear(p.flushing[k:])
	p.flushing = p.flushing[:k]
}

// ppbRun is n cached lines from address start, in slots slot, slot+1, …
// (mod Lines).
type ppbRun struct {
	start   mem.Addr
	slot, n int
}

// lookup returns line l's slot.
func (p *PPB) lookup(l mem.Addr) (int, bool) {
	for k := len(p.runs) - 1; k >= p.r0; k-- {
		r := &p.runs[k]
		if d := uint64(l - r.start); d < uint64(r.n)*mem.LineSize {
			return (r.slot + int(d/mem.LineSize)) % p.Lines, true
		}
	}
	return 0, false
}

// empty drops every line (a flush).
func (p *PPB) empty() {
	p.runs, p.r0 = p.runs[:0], 0
	p.head, p.n = 0, 0
}

// PPBStats count the PPB's activity.
type PPBStats struct {
	Hits, Misses, StaleHits, Flushes uint64
}

// SetPPB puts p on the NIC's path to GPU memory (nil removes it).
func (n *NIC) SetPPB(p *PPB) {
	n.vs().ppb = p
}

// PPBStats returns the PPB counters (zero without a PPB).
func (n *NIC) PPBStats() PPBStats {
	if p := n.vs().ppb; p != nil {
		p.settle()
		return p.stats
	}
	return PPBStats{}
}

// FlushPPBAt flushes the PPB when the control-register write arrives at
// time at (the caller's posted MMIO write) and returns when the flush is
// done. The flush is an ordering point of the block the NIC reads GPU
// memory through: a NIC read that reaches it while the flush is in
// progress is served after the flush (gate); the NIC itself knows
// nothing of it, so doorbells are not held.
func (n *NIC) FlushPPBAt(at sim.Time) sim.Time {
	p := n.vs().ppb
	if p == nil {
		return at
	}
	done := at + p.FlushLatency
	// Drop flushes that are over before now (no read issued from now
	// on reaches the PPB before now).
	now := n.e.Now()
	k := 0
	for k < len(p.arrivals) && p.arrivals[k]+p.FlushLatency < now {
		k++
	}
	p.arrivals = append(p.arrivals[:0], p.arrivals[k:]...)
	i := len(p.arrivals)
	for i > 0 && p.arrivals[i-1] > at { // writes over one link come in order; others may not
		i--
	}
	p.arrivals = slices.Insert(p.arrivals, i, at)
	if p.flushEvents {
		n.e.At(done, func() {
			p.empty()
			p.stats.Flushes++
		})
		return done
	}
	var m *sim.Mark
	if k := len(p.spare); k > 0 {
		m, p.spare = p.spare[k-1], p.spare[:k-1]
	} else {
		m = new(sim.Mark)
	}
	n.e.SetMark(m, done) // the key its event had: done, numbered now
	p.flushing = append(p.flushing, m)
	return done
}

// gate returns when a NIC read request reaching the PPB at a is served:
// after the latest flush that arrived there no later than a, if that
// flush is still in progress, else at a.
func (p *PPB) gate(a sim.Time) sim.Time {
	for i := len(p.arrivals) - 1; i >= 0; i-- {
		if f := p.arrivals[i]; f <= a {
			return max(a, f+p.FlushLatency)
		}
	}
	return a
}

// vread reads [a, a+len(dst)) as the NIC sees it: through the PPB for GPU
// memory, from memory otherwise.
func (n *NIC) vread(a mem.Addr, dst []byte) {
	p := n.vs().ppb
	if p == nil || len(dst) == 0 || n.mem.PoolOf(a) != mem.GPU {
		n.mem.Read(a, dst)
		return
	}
	p.settle()
	if !n.mem.HasData(a, len(dst)) {
		n.vreadZeros(a, len(dst))
		clear(dst)
		return
	}
	n.vreadData(p, a, dst)
}

// vreadData is vread of GPU memory that holds data (HasData), the PPB
// settled. In a payload-free range dst holds memory's bytes of the range
// once its control words are read, so a line wholly inside it is not
// read from memory again: a miss fills the PPB's slot from dst, a hit is
// checked for staleness against it (checkPPBWith), as the line's own
// Memory.Read would have found.
func (n *NIC) vreadData(p *PPB, a mem.Addr, dst []byte) {
	end := a + mem.Addr(len(dst))
	l0, l1 := mem.Line(a), end
	known := false // dst holds memory's bytes of [a, end)
	if n.mem.Bytes(a, len(dst)) == nil {
		known = true
		// A payload-free range with control lines (a ring's stamp in a
		// slice): only the lines from the first control line to the
		// last can hold anything but zeros (a line without control words
		// never held any), so those before and after are read as
		// vreadZeros reads them, in their order.
		clear(dst)
		lo, hi := n.mem.ReadControlInto(a, dst)
		if lo == hi {
			p.readZeros(l0, end)
			return
		}
		if first := mem.Line(a + mem.Addr(lo)); first > l0 {
			p.readZeros(l0, first)
			l0 = first
		}
		l1 = a + mem.Addr(hi) // the last control line's end, or end
	}
	for l := l0; l < l1; l += mem.LineSize {
		var line *[mem.LineSize]byte
		whole := known && l >= a && l+mem.LineSize <= end
		if i, ok := p.lookup(l); ok {
			line = p.slotBytes(i)
			p.stats.Hits++
			if whole {
				n.checkPPBWith(l, line, (*[mem.LineSize]byte)(dst[l-a:]))
			} else {
				n.checkPPB(l, line)
			}
		} else {
			line = &p.bytes[p.insert(l)]
			p.stats.Misses++
			if whole {
				copy(line[:], dst[l-a:])
			} else {
				n.mem.Read(l, line[:])
			}
		}
		lo, hi := max(l, a), min(l+mem.LineSize, end)
		copy(dst[lo-a:hi-a], line[lo-l:hi-l])
	}
	if l1 < end {
		p.readZeros(l1, end)
	}
}

// readZeros is the PPB's bookkeeping of a read of the zero lines from l
// to end: a hit per line it holds, a miss and an insertion per other
// line. A read of at least Lines lines of which it holds none (a
// payload-free payload, the common case) leaves it holding the last
// Lines of them, oldest first, whatever it held before: that is done at
// once, not line by line with an eviction each.
func (p *PPB) readZeros(l, end mem.Addr) {
	// Leading lines it holds are hits (a packet that starts inside the
	// line the one before it ended in), which leave the PPB as it is.
	for ; l < end; l += mem.LineSize {
		if _, ok := p.lookup(l); !ok {
			break
		}
		p.stats.Hits++
	}
	if l >= end {
		return
	}
	lines := int((end - l + mem.LineSize - 1) / mem.LineSize)
	if !p.holdsAny(l, end) {
		p.stats.Misses += uint64(lines)
		if lines >= p.Lines {
			p.fillZeros(l + mem.Addr(lines-p.Lines)*mem.LineSize)
		} else {
			p.insertZeros(l, lines)
		}
		return
	}
	for ; l < end; l += mem.LineSize {
		if _, ok := p.lookup(l); ok {
			p.stats.Hits++
		} else {
			p.markZero(p.insert(l))
			p.stats.Misses++
		}
	}
}

// insertZeros is insert and markZero of the k < Lines consecutive lines
// from l, none of them held, at once: the k oldest lines beyond the room
// left are evicted together, and the lines take the next k slots in FIFO
// order as one run (a payload-free packet's 32 lines, without a slot
// search and eviction each). The lines, their slots and the zero marks
// end as the line-by-line insertions leave them (the runs may be cut
// differently, which no lookup sees).
func (p *PPB) insertZeros(l mem.Addr, k int) {
	if len(p.zero) < (p.Lines+63)/64 {
		p.zero = make([]uint64, (p.Lines+63)/64)
	}
	if ev := p.n + k - p.Lines; ev > 0 { // evict the ev oldest lines
		p.head = (p.head + ev) % p.Lines
		p.n -= ev
		for ev > 0 {
			r := &p.runs[p.r0]
			d := min(ev, r.n)
			r.start += mem.Addr(d) * mem.LineSize
			r.slot = (r.slot + d) % p.Lines
			r.n -= d
			ev -= d
			if r.n == 0 {
				p.r0++
			}
		}
		if p.r0 == len(p.runs) {
			p.runs, p.r0 = p.runs[:0], 0
		} else if p.r0 >= 16 && 2*p.r0 >= len(p.runs) {
			p.runs = append(p.runs[:0], p.runs[p.r0:]...)
			p.r0 = 0
		}
	}
	i := (p.head + p.n) % p.Lines
	p.n += k
	if need := min(p.Lines, i+k); len(p.bytes) < need {
		// Slots fill in order from 0, so every slot before i exists.
		p.bytes = append(p.bytes, make([][mem.LineSize]byte, need-len(p.bytes))...)
	}
	if r := len(p.runs) - 1; r >= p.r0 && p.runs[r].start+mem.Addr(p.runs[r].n)*mem.LineSize == l {
		p.runs[r].n += k
	} else {
		p.runs = append(p.runs, ppbRun{start: l, slot: i, n: k})
	}
	if e := i + k; e <= p.Lines {
		p.markZeros(i, e)
	} else { // the slots wrap around the ring
		p.markZeros(i, p.Lines)
		p.markZeros(0, e-p.Lines)
	}
}

// markZeros is markZero of slots [i, e), a word of marks at a time (a
// payload-free packet's 32 lines were 32 divisions and read-modify-writes).
func (p *PPB) markZeros(i, e int) {
	for i < e {
		w, b := i/64, i%64
		n := min(64-b, e-i)
		p.zero[w] |= (^uint64(0) >> (64 - n)) << b
		i += n
	}
}

// fillZeros leaves the PPB holding the Lines lines from l in slots 0, 1,
// … as one run, every slot marked zero: what empty and then insert and
// markZero of each line in turn leave, in one step instead of Lines (the
// flow model reads whole messages of lines, 64 a piece).
func (p *PPB) fillZeros(l mem.Addr) {
	for len(p.bytes) < p.Lines {
		p.bytes = append(p.bytes, [mem.LineSize]byte{})
	}
	if len(p.zero) < (p.Lines+63)/64 {
		p.zero = make([]uint64, (p.Lines+63)/64)
	}
	p.runs, p.r0 = append(p.runs[:0], ppbRun{start: l, slot: 0, n: p.Lines}), 0
	p.head, p.n = 0, p.Lines
	full := p.Lines / 64
	for w := range full {
		p.zero[w] = ^uint64(0)
	}
	if r := p.Lines % 64; r > 0 {
		p.zero[full] |= 1<<r - 1
	}
}

// holdsAny reports whether the PPB holds a line in [l, end).
func (p *PPB) holdsAny(l, end mem.Addr) bool {
	for _, r := range p.runs[p.r0:] {
		if r.start < end && l < r.start+mem.Addr(r.n)*mem.LineSize {
			return true
		}
	}
	return false
}

// markZero marks slot i's bytes as zeros (written when a data read hits
// it: slotBytes).
func (p *PPB) markZero(i int) { p.zero[i/64] |= 1 << (i % 64) }

// slotBytes returns slot i's bytes, zeroing them first if markZero left
// them to be.
func (p *PPB) slotBytes(i int) *[mem.LineSize]byte {
	if w, b := i/64, uint64(1)<<(i%64); p.zero[w]&b != 0 {
		p.bytes[i] = [mem.LineSize]byte{}
		p.zero[w] &^= b
	}
	return &p.bytes[i]
}

// insert gives line l (not held) a slot, evicting the oldest line when
// the PPB is full, and returns the slot (its bytes to be filled, or
// marked zero).
func (p *PPB) insert(l mem.Addr) int {
	if p.n == p.Lines { // evict the oldest line: the first run's first
		r := &p.runs[p.r0]
		r.start += mem.LineSize
		r.slot = (r.slot + 1) % p.Lines
		if r.n--; r.n == 0 {
			if p.r0++; p.r0 == len(p.runs) {
				p.runs, p.r0 = p.runs[:0], 0
			} else if p.r0 >= 16 && 2*p.r0 >= len(p.runs) {
				p.runs = append(p.runs[:0], p.runs[p.r0:]...)
				p.r0 = 0
			}
		}
		p.head = (p.head + 1) % p.Lines
		p.n--
	}
	i := (p.head + p.n) % p.Lines
	p.n++
	for len(p.bytes) <= i {
		p.bytes = append(p.bytes, [mem.LineSize]byte{})
	}
	if len(p.zero) < (p.Lines+63)/64 {
		p.zero = make([]uint64, (p.Lines+63)/64)
	}
	// The newest run goes on when l follows it (its next slot is the
	// tail, i, by FIFO order).
	if k := len(p.runs) - 1; k >= p.r0 && p.runs[k].start+mem.Addr(p.runs[k].n)*mem.LineSize == l {
		p.runs[k].n++
	} else {
		p.runs = append(p.runs, ppbRun{start: l, slot: i, n: 1})
	}
	p.zero[i/64] &^= 1 << (i % 64)
	return i
}

// checkPPB reports a PPB hit on a line whose bytes memory no longer holds.
func (n *NIC) checkPPB(l mem.Addr, line *[mem.LineSize]byte) {
	var cur [mem.LineSize]byte
	n.mem.Read(l, cur[:])
	n.checkPPBWith(l, line, &cur)
}

// checkPPBWith is checkPPB with memory's bytes of the line, cur, at hand.
func (n *NIC) checkPPBWith(l mem.Addr, line, cur *[mem.LineSize]byte) {
	if *cur == *line {
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

// ppbPayload is srcData of ln bytes at a through the PPB (srcMemoryPPB)
// with the pool and the data looked up once: when vread of them would
// read only zeros (GPU memory without bytes or control words there) it
// does the PPB's bookkeeping only and reports zeros, and the packet then
// carries the empty payload at its end (Packet.DataAt = Len, zeros
// throughout, as the flow model's does) instead of a pool buffer cleared
// per packet, its landing writing the zeros as before (storeDataAt);
// otherwise it reads them as vread does into a pool buffer. ok false, with
// nothing done, where there is no PPB in the way.
func (n *NIC) ppbPayload(a mem.Addr, ln uint64) (data []byte, zeros, ok bool) {
	p := n.vs().ppb
	if p == nil || n.mem.PoolOf(a) != mem.GPU {
		return nil, false, false
	}
	if !n.mem.HasData(a, int(ln)) {
		n.vreadZeros(a, int(ln))
		return nil, true, true
	}
	p.settle()
	buf := n.fab.GetBuf(int(ln))
	n.vreadData(p, a, buf)
	return buf, false, true
}

// vreadZeros is vread of n payload-free bytes without control words at a
// (HasData false): every line reads as zeros, now and whenever it was
// cached (a line that ever held data would make HasData true), so the
// PPB's bookkeeping is all there is to do: same hits, misses and
// evictions, no stale hit.
func (n *NIC) vreadZeros(a mem.Addr, ln int) {
	p := n.vs().ppb
	p.settle()
	p.readZeros(mem.Line(a), a+mem.Addr(ln))
}
