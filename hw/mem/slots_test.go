package mem

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"
)

// A slotted scratch range reads and writes as plain memory does, whatever
// mix of accesses reaches it: inside one slot (the slot's buffer), across
// slots and the range's ends (Read and Write piece by piece; Bytes and
// Snapshot move the slots back into the pages), snapshots taken of a slot
// and landed in another, and slots consumed (never reached again, as the
// contract of ScratchSlots says). The reference is the same allocation
// without a scratch range.
func TestSlotBuffersReadAsPlainMemory(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		const size = 3 << 20 // mapped outside the heap, as a node's vector and slots are
		slot := rapid.SampledFrom([]int{4096, 5000, 8200, 1 << 16}).Draw(t, "slot")
		lo := rapid.IntRange(0, 3*pageSize).Draw(t, "lo")
		slots := rapid.IntRange(1, 12).Draw(t, "slots")
		m, ref := New("m", true), New("ref", true)
		a, ra := m.Alloc(Host, size, "buf"), ref.Alloc(Host, size, "buf")
		m.ScratchSlots(a+Addr(lo), slots*slot-rapid.IntRange(0, slot/2).Draw(t, "cut"), slot)
		r, _ := m.find(a, 0)
		dead := map[int]bool{}
		slotAt := func(off int) int { // the slot holding byte off, or -1
			if off < r.scratchLo || off >= r.scratchHi {
				return -1
			}
			return (off - r.scratchLo) / slot
		}
		live := func(off, n int) bool { // no byte of [off, off+n) in a consumed slot
			for k := range dead {
				s, e := r.slotStart(k), r.slotStart(k)+r.slotLen(k)
				if off < e && s < off+n {
					return false
				}
			}
			return true
		}
		span := func(label string) (int, int) { // mostly inside one slot
			if k := rapid.IntRange(-1, slots-1).Draw(t, label+"slot"); k >= 0 && rapid.IntRange(0, 3).Draw(t, label+"across") > 0 {
				s := lo + k*slot
				off := s + rapid.IntRange(0, slot-1).Draw(t, label+"in")
				return off, rapid.IntRange(1, max(1, s+slot-off)).Draw(t, label+"n")
			}
			off := rapid.IntRange(0, lo+slots*slot).Draw(t, label+"off")
			return off, rapid.IntRange(1, 2*slot).Draw(t, label+"n")
		}
		type snap struct {
			s    *Snapshot
			want []byte
		}
		var snaps []snap
		for range rapid.IntRange(1, 80).Draw(t, "ops") {
			off, n := span("")
			if !live(off, n) {
				continue
			}
			switch rapid.IntRange(0, 8).Draw(t, "op") {
			case 0: // Write
				src := rapid.SliceOfN(rapid.Byte(), n, n).Draw(t, "src")
				m.Write(a+Addr(off), src)
				ref.Write(ra+Addr(off), src)
			case 1: // through Bytes, as a reduction writes
				for _, b := range [][]byte{m.Bytes(a+Addr(off), n), ref.Bytes(ra+Addr(off), n)} {
					for i := range b {
						b[i] += byte(i) | 1
					}
				}
			case 2: // a word
				if n >= 8 {
					v := rapid.Uint64().Draw(t, "v")
					m.Store64(a+Addr(off), v)
					ref.Store64(ra+Addr(off), v)
				}
			case 3: // Read, Load64 and Bytes agree with the reference
				got, want := make([]byte, n), make([]byte, n)
				m.Read(a+Addr(off), got)
				ref.Read(ra+Addr(off), want)
				if !bytes.Equal(got, want) {
					t.Fatalf("Read [%d, +%d) = %v, want %v", off, n, got, want)
				}
				if n >= 8 && m.Load64(a+Addr(off)) != ref.Load64(ra+Addr(off)) {
					t.Fatalf("Load64 at %d differs", off)
				}
			case 4: // a snapshot of the range (a NIC's payload read)
				want := bytes.Clone(ref.Bytes(ra+Addr(off), n))
				snaps = append(snaps, snap{m.Snapshot(a+Addr(off), make([]byte, n)), want})
			case 5: // a snapshot lands at the range (cut to it)
				if len(snaps) > 0 {
					i := rapid.IntRange(0, len(snaps)-1).Draw(t, "which")
					s := snaps[i]
					snaps = append(snaps[:i], snaps[i+1:]...)
					k := min(n, len(s.want))
					s.s.CopyTo(m.Bytes(a+Addr(off), k))
					copy(ref.Bytes(ra+Addr(off), k), s.want[:k])
				}
			case 6: // consume a slot, once its snapshots are what they were
				if k := slotAt(off); k >= 0 {
					m.Consume(a+Addr(r.slotStart(k)), r.slotLen(k))
					dead[k] = true
				}
			case 8: // a landing through BytesToWrite, every byte written
				src := rapid.SliceOfN(rapid.Byte(), n, n).Draw(t, "landed")
				copy(m.BytesToWrite(a+Addr(off), n), src)
				ref.Write(ra+Addr(off), src)
			case 7: // a snapshot materialised (a packet crossing partitions)
				if len(snaps) > 0 {
					s := snaps[rapid.IntRange(0, len(snaps)-1).Draw(t, "which")]
					s.s.Materialize()
				}
			}
		}
		for _, s := range snaps {
			got := make([]byte, len(s.want))
			s.s.CopyTo(got)
			if !bytes.Equal(got, s.want) {
				t.Fatalf("a snapshot yields %v, want %v", got, s.want)
			}
		}
		for off := 0; off < size; off += slot / 3 {
			n := min(slot/3, size-off)
			if live(off, n) && !bytes.Equal(m.Bytes(a+Addr(off), n), ref.Bytes(ra+Addr(off), n)) {
				t.Fatalf("bytes [%d, +%d) differ at the end", off, n)
			}
		}
	})
}

// A ring's receive slots, each landed, read and consumed in turn, take
// their bytes from a buffer or two that go round, fault none of the
// allocation's pages in and read as zeros until they land; an access
// through Bytes that spans two slots moves the live ones into the pages
// with their bytes.
func TestSlotBuffersGoRound(t *testing.T) {
	m := New("m", true)
	const slot, slots = 128 << 10, 63
	a := m.Alloc(Host, slots*slot+(1<<20), "ring")
	recv := a + 1<<20
	m.ScratchSlots(recv, slots*slot, slot)
	payload := bytes.Repeat([]byte{3}, slot)
	const pkt = 4096
	for k := range slots {
		s := recv + Addr(k*slot)
		if m.Load64(s+slot-8) != 0 {
			t.Fatalf("slot %d reads a stale sequence word before it lands", k)
		}
		// Packets land in order, each written whole (BytesToWrite); the
		// sequence word is polled between them and reads zero until its
		// packet lands.
		for o := 0; o < slot; o += pkt {
			copy(m.BytesToWrite(s+Addr(o), pkt), payload[o:o+pkt])
			if o+pkt < slot && m.Load64(s+slot-8) != 0 {
				t.Fatalf("slot %d: the sequence word reads a stale value after %d bytes landed", k, o+pkt)
			}
		}
		if k+1 < slots {
			copy(m.BytesToWrite(s+slot, 8), "nextslot") // the next slot's first packet
		}
		if !bytes.Equal(m.Bytes(s, slot)[8:], payload[8:]) {
			t.Fatalf("slot %d does not hold its payload", k)
		}
		m.Consume(s, slot)
	}
	r, _ := m.find(a, 0)
	if !r.slotted() || len(r.slotFree) > 2 {
		t.Fatalf("slotted %v with %d free buffers: the slots did not share a buffer or two", r.slotted(), len(r.slotFree))
	}
	if got, want := m.Consumed(), uint64(slots*slot); got != want {
		t.Errorf("Consumed = %d, want %d", got, want)
	}
	// Two live slots, then an access spanning them.
	m = New("m2", true)
	a = m.Alloc(Host, slots*slot, "ring")
	m.ScratchSlots(a, slots*slot, slot)
	m.Store64(a+slot-8, 1)
	m.Store64(a+slot, 2)
	r, _ = m.find(a, 0)
	if !r.slotted() {
		t.Fatal("a fresh slotted range does not keep its slots in buffers")
	}
	b := m.Bytes(a+slot-8, 16)
	if r.slotted() || leUint64(b) != 1 || leUint64(b[8:]) != 2 {
		t.Fatalf("spanning Bytes: slotted %v, words %d %d, want the pages with 1 and 2", r.slotted(), leUint64(b), leUint64(b[8:]))
	}
	// A range backed before it is made slotted keeps its bytes in its pages.
	m.ScratchSlots(a, slots*slot, slot)
	if r.slotted() || m.Load64(a+slot-8) != 1 {
		t.Fatal("a range backed before ScratchSlots lost its bytes to slot buffers")
	}
}

// A consumed slot's buffer, taken by the next slot, reads as zeros there
// wherever that slot has not been written: around a landing in its middle
// (BytesToWrite), through Read, Load64 and Bytes.
func TestSlotBufferRecycledReadsZeros(t *testing.T) {
	m := New("m", true)
	const slot = 8192
	a := m.Alloc(Host, 4*slot, "ring") // on the Go heap: the buffers go round there too
	m.ScratchSlots(a, 4*slot, slot)
	copy(m.BytesToWrite(a, slot), bytes.Repeat([]byte{0xff}, slot))
	m.Consume(a, slot)
	b := a + slot // takes slot 0's buffer
	copy(m.BytesToWrite(b+100, 50), bytes.Repeat([]byte{1}, 50))
	if m.Load64(b+slot-8) != 0 || m.Load64(b+8) != 0 {
		t.Fatal("Load64 reads an earlier slot's bytes")
	}
	got := make([]byte, slot)
	m.Read(b, got)
	for i, v := range got {
		if want := byte(0); i >= 100 && i < 150 && v != 1 || (i < 100 || i >= 150) && v != want {
			t.Fatalf("Read: byte %d = %d", i, v)
		}
	}
	copy(m.BytesToWrite(b+1000, 8), "landing!") // past a gap of stale bytes
	for i, v := range m.Bytes(b, slot) {
		if (i >= 100 && i < 150) != (v == 1) && (i < 1000 || i >= 1008) {
			t.Fatalf("Bytes: byte %d = %d", i, v)
		}
	}
}
