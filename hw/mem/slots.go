package mem

// Slot buffers. The receive slots of a ring allreduce (ScratchSlots) are
// written once, read once and consumed, and every node's range of them
// is as large as its vector: a functional 64-node run lands 8 MiB per node
// in them. Backed by the allocation's own pages, each slot's pages were
// faulted in when its payload landed and given back (MADV_DONTNEED) when
// it was consumed, a fault and a zeroed page per 4 KiB landed: in the
// main job about a third of its CPU time went to those faults, their
// madvise calls and the TLB flushes (docs/speed.md). So while a region's
// accesses stay inside single slots, each live slot's bytes live in a
// buffer of their own, taken when the slot is first reached and put back
// on a free list when it is consumed, for the next slot: the same few
// buffers per node take every step's payload, already faulted in and
// mostly in the cache. Addresses, and so everything simulated, are those
// of the allocation; only where the simulator keeps the bytes changes.
//
// An access through Bytes (or a Snapshot) that spans two slots, or a
// slot and bytes outside the range, needs the range contiguous: the live
// slots' bytes move into the allocation's pages then and the range
// behaves as a plain Scratch range from there on (flatten). Read and
// Write go piece by piece instead (a GPU cache line that straddles two
// slots).

// slotChunk is the size of the mappings (outside the Go heap, unmapped
// when the memory is released) that slot buffers are cut from, one after
// the other, or one slot's where slots are larger: on the Go heap, a
// device-shmem ring's 16 KiB slots at 64 nodes, up to 32 of them per node
// in flight, and the collector's headroom for them held tens of MB at the
// main job's peak; one mapping per buffer would be thousands of them.
const slotChunk = 1 << 20

// slotted reports whether r's scratch range keeps its slots in buffers.
func (r *region) slotted() bool { return r.scratchSlot > 0 && !r.flat && r.data != nil }

// slotOf returns the slot of r's scratch range that holds [off, off+n),
// -1 when the range lies wholly outside the scratch range, or -2 when it
// overlaps the scratch range without lying inside one slot.
func (r *region) slotOf(off, n int) int {
	if off >= r.scratchHi || off+n <= r.scratchLo && (n > 0 || off < r.scratchLo) {
		return -1
	}
	if off < r.scratchLo {
		return -2
	}
	k := (off - r.scratchLo) / r.scratchSlot
	if off+n > min(r.scratchLo+(k+1)*r.scratchSlot, r.scratchHi) {
		return -2
	}
	return k
}

// slotStart returns the offset of slot k in r's data.
func (r *region) slotStart(k int) int { return r.scratchLo + k*r.scratchSlot }

// slotLen returns the length of slot k (the last may be cut by the range's end).
func (r *region) slotLen(k int) int { return min(r.scratchSlot, r.scratchHi-r.slotStart(k)) }

// slotBuf returns slot k's buffer, taking one on first use: a fresh one
// (zeros) or a consumed slot's, whose earlier bytes slotW marks stale.
func (r *region) slotBuf(k int) []byte {
	if r.slotBufs == nil {
		n := (r.scratchHi - r.scratchLo + r.scratchSlot - 1) / r.scratchSlot
		r.slotBufs, r.slotW = make([][]byte, n), make([]int32, n)
	}
	if b := r.slotBufs[k]; b != nil {
		return b
	}
	var b []byte
	if last := len(r.slotFree) - 1; last >= 0 {
		b = r.slotFree[last]
		r.slotFree[last] = nil
		r.slotFree = r.slotFree[:last]
		r.slotW[k] = 0 // an earlier slot's bytes: cleared as they are reached
	} else {
		if len(r.slotChunk) < r.scratchSlot && r.maps != nil {
			r.slotChunk = r.maps.getSlot(max(slotChunk, r.scratchSlot))
		}
		if len(r.slotChunk) >= r.scratchSlot {
			b, r.slotChunk = r.slotChunk[:r.scratchSlot:r.scratchSlot], r.slotChunk[r.scratchSlot:]
		} else { // the system refused a mapping
			b = make([]byte, r.scratchSlot)
		}
		r.slotW[k] = int32(len(b)) // zeros
	}
	r.slotBufs[k] = b
	return b
}

// slotBytes returns [off, off+n) of slot k (slotOf(off, n) == k), its
// buffer taken if needed and its stale bytes cleared.
func (r *region) slotBytes(k, off, n int) []byte {
	b := r.slotBuf(k)
	if w := int(r.slotW[k]); w < len(b) {
		clear(b[w:])
		r.slotW[k] = int32(len(b))
	}
	o := off - r.slotStart(k)
	return b[o : o+n : o+n]
}

// slotBytesToWrite is slotBytes for a caller that writes the whole range
// before it reads any of it (BytesToWrite): of a recycled buffer's stale
// bytes, only those before the range are cleared; a slot landed packet
// by packet, in order, is never cleared.
func (r *region) slotBytesToWrite(k, off, n int) []byte {
	b := r.slotBuf(k)
	o := off - r.slotStart(k)
	if w := int(r.slotW[k]); w < len(b) {
		if o > w {
			clear(b[w:o])
		}
		r.slotW[k] = int32(max(w, o+n))
	}
	return b[o : o+n : o+n]
}

// src returns the bytes [off, off+n) of dense region r as they are held
// now, for a read that may not move them (a snapshot's source):
// the slot's buffer or the data.
func (r *region) src(off, n int) []byte {
	if r.slotted() {
		if k := r.slotOf(off, n); k >= 0 {
			return r.slotBytes(k, off, n)
		}
	}
	return r.data[off : off+n : off+n]
}

// flatten moves the live slots' bytes into r's data and ends its slot
// buffers: from now on the scratch range is a plain one (Scratch), its
// pages faulted in when written and given back when consumed.
func (r *region) flatten() {
	for k, b := range r.slotBufs {
		if b != nil {
			copy(r.data[r.slotStart(k):r.slotStart(k)+r.slotLen(k)], r.slotBytes(k, r.slotStart(k), r.slotLen(k)))
		}
	}
	r.slotBufs, r.slotW, r.slotFree, r.slotChunk, r.flat = nil, nil, nil, nil, true
}

// consumeSlotBuf ends live slot k of r (Consume of a slotted range): its
// buffer goes on the free list for the next slot; the slot reads as zeros
// if it is reached again.
func (m *Memory) consumeSlotBuf(r *region, k int) {
	if r.slotDead == nil {
		r.slotDead = make([]uint64, (r.scratchHi-r.scratchLo+r.scratchSlot-1)/r.scratchSlot/64+1)
	}
	if r.slotDead[k/64]&(1<<(k%64)) != 0 {
		return
	}
	r.slotDead[k/64] |= 1 << (k % 64)
	lo := r.slotStart(k)
	if len(r.snaps) > 0 { // a snapshot of the slot takes its bytes first
		r.materialize(lo, lo+r.slotLen(k))
	}
	if r.slotBufs != nil {
		if b := r.slotBufs[k]; b != nil {
			r.slotBufs[k] = nil
			r.slotFree = append(r.slotFree, b)
		}
	}
	m.consumed += uint64(r.slotLen(k))
}

// readPieces copies [off, off+len(dst)) of slotted region r into dst
// piece by piece: slots from their buffers (zeros where none), the rest
// from the data.
func (r *region) readPieces(off int, dst []byte) {
	for len(dst) > 0 {
		n, b := r.piece(off, len(dst), false)
		if b == nil {
			clear(dst[:n])
		} else {
			copy(dst[:n], b)
		}
		off, dst = off+n, dst[n:]
	}
}

// writePieces copies src into [off, off+len(src)) of slotted region r
// piece by piece.
func (r *region) writePieces(off int, src []byte) {
	for len(src) > 0 {
		n, b := r.piece(off, len(src), true)
		copy(b, src[:n])
		off, src = off+n, src[n:]
	}
}

// piece returns the first piece of [off, off+n) of slotted region r that
// lies in one slot or wholly outside the range, its length and its bytes.
// For a read (!take) a slot's piece ends where its buffer's bytes do,
// and the bytes of a slot without a buffer, or past them, are nil
// (zeros).
func (r *region) piece(off, n int, take bool) (int, []byte) {
	k := -1
	switch {
	case off < r.scratchLo:
		n = min(n, r.scratchLo-off)
	case off >= r.scratchHi:
	default:
		k = (off - r.scratchLo) / r.scratchSlot
		n = min(n, r.slotStart(k)+r.slotLen(k)-off)
	}
	if len(r.snaps) > 0 { // as bytes: the caller may write
		r.materialize(off, off+n)
	}
	switch {
	case k < 0:
		return n, r.data[off : off+n : off+n]
	case take:
		return n, r.slotBytes(k, off, n)
	case r.slotBufs == nil || r.slotBufs[k] == nil:
		return n, nil
	}
	// A read: the bytes the buffer holds for the slot, or none (zeros)
	// past them, without clearing a recycled buffer's stale ones.
	o, w := off-r.slotStart(k), int(r.slotW[k])
	if o >= w {
		return n, nil
	}
	n = min(n, w-o)
	return n, r.slotBufs[k][o : o+n : o+n]
}
