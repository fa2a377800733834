package nic

import (
	"encoding/binary"

	"github.com/gpunetsim/gpunetsim/hw/mem"
)

// Scatter/gather lists (ibv_sge lists). A send WQE with WQESGL takes its
// local buffer from a list of SGEs instead of (LocalAddr, LKey): LocalAddr
// points to the list, the count is in the first 4 inline bytes, Length is
// the total. A receive WQE with NumSGE > 0 scatters the message over its
// list. The NIC reads a list by DMA after the WQE (the extra 64 B blocks a
// multi-segment WQE occupies on real HCAs), checks its count against
// nic.verbs_max_sge, every entry's key and the total, and then gathers the
// payload from, or scatters it over, the entries in order.

// SGESize is the size of one scatter/gather entry in memory.
const SGESize = 16

// SGE is one scatter/gather entry: 0 address, 8 length, 12 lkey.
type SGE struct {
	Addr   mem.Addr
	Length uint32
	LKey   uint32
}

// Encode writes the entry's 16 bytes into b.
func (s SGE) Encode(b []byte) {
	binary.LittleEndian.PutUint64(b, uint64(s.Addr))
	binary.LittleEndian.PutUint32(b[8:], s.Length)
	binary.LittleEndian.PutUint32(b[12:], s.LKey)
}

// DecodeSGE parses 16 bytes as an entry.
func DecodeSGE(b []byte) SGE {
	return SGE{Addr: mem.Addr(binary.LittleEndian.Uint64(b)), Length: binary.LittleEndian.Uint32(b[8:]),
		LKey: binary.LittleEndian.Uint32(b[12:])}
}

// SetSGL makes w gather from (or, for a read, scatter into) the n-entry
// list at list.
func (w *WQE) SetSGL(list mem.Addr, n int) {
	w.Flags |= WQESGL
	w.LocalAddr = list
	binary.LittleEndian.PutUint32(w.Inline[:4], uint32(n))
}

// sgeCount returns the list length of a WQESGL WQE.
func (w WQE) sgeCount() int { return int(binary.LittleEndian.Uint32(w.Inline[:4])) }

// fetchSGL reads the n-entry list at a by DMA and checks it: the count
// against the limit, each entry's key for access need, and the total
// against want (exact, or at least want when atLeast). ok runs with the
// list, or bad with the completion status.
func (n *NIC) fetchSGL(a mem.Addr, cnt int, need Access, want uint64, atLeast bool, ok func([]SGE), bad func(WCStatus)) {
	if cnt < 1 || cnt > n.spec.VerbsMaxSGE {
		n.e.After(0, func() { bad(WCLocLenErr) })
		return
	}
	done, k := n.dmaRead(a, uint64(cnt)*SGESize)
	n.e.At(done, func() {
		n.dmaEnd(k)
		buf := make([]byte, cnt*SGESize)
		n.vread(a, buf)
		list := make([]SGE, cnt)
		total := uint64(0)
		for i := range list {
			list[i] = DecodeSGE(buf[i*SGESize:])
			total += uint64(list[i].Length)
		}
		for _, s := range list {
			if s.Length > 0 && !n.vs().mrs[s.LKey].covers(s.Addr, uint64(s.Length), need) {
				bad(WCLocProtErr)
				return
			}
		}
		if total < want || !atLeast && total != want {
			bad(WCLocLenErr)
			return
		}
		ok(list)
	})
}

// sgePiece is the part of a message byte range that falls in one entry.
type sgePiece struct {
	addr mem.Addr
	off  uint64 // offset within the range
	len  uint64
}

// sgePieces maps message bytes [off, off+ln) onto the list.
func sgePieces(list []SGE, off, ln uint64) []sgePiece {
	var out []sgePiece
	base := uint64(0)
	for _, s := range list {
		l := uint64(s.Length)
		lo, hi := max(off, base), min(off+ln, base+l)
		if lo < hi {
			out = append(out, sgePiece{addr: s.Addr + mem.Addr(lo-base), off: lo - off, len: hi - lo})
		}
		base += l
	}
	return out
}

// fromSGL returns the source that gathers packet payloads from the list's
// entries: one DMA read per piece, the payload assembled in order.
func (n *NIC) fromSGL(list []SGE) payloadSrc { return payloadSrc{kind: srcSGL, list: list} }

// scatter lands data (nil in payload-free runs) for message bytes
// [off, off+ln) over the list, one posted write per piece; done runs once
// per piece when it is visible. It returns the number of pieces.
func (n *NIC) scatter(list []SGE, off, ln uint64, data []byte, done func()) int {
	ps := sgePieces(list, off, ln)
	for _, p := range ps {
		var d []byte
		if data != nil {
			d = append([]byte(nil), data[p.off:p.off+p.len]...)
		}
		n.rcWrite(p.addr, d, p.len, done)
	}
	return len(ps)
}
