package nic

import (
	"encoding/binary"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// flowMessagePayload is the packet payload limit in the flow model: a
// message is one packet, whatever its size.
const flowMessagePayload = unit.Bytes(1) << 40

// UseFlows switches the NIC to the flow network model (network.model =
// flow): every message goes to the fabric as one packet that the fabric
// moves as a flow. DMA reads still happen per link-sized piece, with the
// same PCIe reservations as in the packet model: the message enters the
// fabric when its first piece is on the NIC, and its flow cannot complete
// before the last piece is (net.Paced). On arrival the whole message is
// written by one posted DMA write issued as if it had started streaming the
// PCIe time of all but one piece earlier (ingestLead): in the packet model
// the pieces are written while later ones are still on the wire, so the
// data becomes visible when a packet-by-packet write of the last piece
// would have (later if the PCIe link is busy). Call before the first
// command.
func (n *NIC) UseFlows() {
	n.flowPiece = n.maxPayload
	n.maxPayload = flowMessagePayload
}

// NotBefore implements net.Paced: the earliest time the packet's flow may
// complete (0: no constraint).
func (p *Packet) NotBefore() sim.Time { return p.notBefore }

// ingestLead is, in the flow model, the PCIe write time of all but the last
// link-sized piece of a b-byte message: how much of its DMA write the
// packet model overlaps with the wire.
func (n *NIC) ingestLead(b unit.Bytes) sim.Duration {
	if n.flowPiece == 0 || b <= n.flowPiece {
		return 0
	}
	return sim.Duration(float64(b-n.flowPiece)*n.link.Spec().Bandwidth.PerByte() + 0.5)
}

// c2cLead is ingestLead for the C2C hop (UseC2C) of a write into GPU
// memory: its crossing of all but the last piece streamed with the
// message too.
func (n *NIC) c2cLead(l uint64) sim.Duration {
	b := unit.Bytes(l)
	if n.flowPiece == 0 || b <= n.flowPiece {
		return 0
	}
	return sim.Duration(float64(b-n.flowPiece)*n.c2c.Spec().Bandwidth.PerByte() + 0.5)
}

// sendFlowMessage is sendPackets in the flow model: the pieces' DMA reads
// are issued as in the packet model, but one packet carries the message.
func (n *NIC) sendFlowMessage(dst int, kind Kind, msg uint64, hdr *Header, l uint64, fail FailType, mlength uint64,
	src payloadSrc, fin func()) {
	mp := uint64(n.flowPiece)
	np := max(1, (l+mp-1)/mp)
	start := n.e.Now()
	var first, last sim.Time
	dmaK := 0
	for k := range np {
		off := k * mp
		ready, kk := n.srcRead(&src, off, min(mp, l-off))
		if k == 0 {
			first, last = ready, ready
		}
		last = max(last, ready)
		dmaK += kk
	}
	pk := &Packet{Src: n.id, Dst: dst, Kind: kind, Msg: msg, Index: 0, Offset: 0, Len: l, Last: true,
		Hdr: hdr, Fail: fail, MLength: mlength, notBefore: last + n.fab.Serialization(unit.Bytes(min(mp, l)))}
	n.e.At(first, func() {
		pk.Data, pk.DataAt, pk.sparse = n.gatherPieces(&src, mp, l)
		n.stats.PacketsTx++
		n.stats.BytesTx += l
		n.fab.Send(pk)
	})
	n.e.At(last, func() {
		n.dmaEnd(dmaK)
		n.spanOp("tx ", kindName(kind, hdr), start)
		if fin != nil {
			fin()
		}
	})
}

// gatherPieces joins the bytes of the message's link-sized pieces into one
// payload (nil when every piece is payload-free) that starts at the first
// piece with bytes (at: Packet.DataAt). A read through GIO's PCIe peer
// buffer yields zeros for payload-free bytes where a plain read yields
// nothing; in a message of several pieces such a piece is left out as
// well (its buffer bookkeeping done), and a message of nothing else is
// the empty payload at its end (zeros throughout, as before).
//
// A payload that is mostly zeros (a payload-free message whose pieces hold
// a few control words: MoE's per-entry headers and trailing flag) travels
// as its nonzero runs (sp, with out nil) and is made whole again by the
// receiving NIC before anything reads it (materialize): in the
// flow model an all-to-all has every message on the wire at once, and each
// held a buffer of its length (10 GB at EP 64 for GDS's ~2 MB puts).
func (n *NIC) gatherPieces(src *payloadSrc, mp, l uint64) (out []byte, at uint64, sp *sparsePayload) {
	zeros := false
	for off := uint64(0); off < l; off += mp {
		ln := min(mp, l-off)
		if a := src.base + mem.Addr(off); src.kind == srcMemoryPPB && l > mp && !n.mem.HasData(a, int(ln)) {
			if n.vs().ppb != nil && n.mem.PoolOf(a) == mem.GPU {
				n.vreadZeros(a, int(ln))
			}
			zeros = true
			continue
		}
		b := n.srcData(src, off, ln)
		if b == nil {
			continue
		}
		if out == nil && sp == nil {
			at = off
			if l-at > mp {
				sp = &sparsePayload{}
			} else {
				out = n.fab.GetBuf(int(l - at))
				clear(out)
			}
		}
		if sp != nil {
			sp.add(off, b)
			if uint64(len(sp.bytes)) > (l-at)/4 { // mostly bytes: whole is smaller
				out = n.fab.GetBuf(int(l - at))
				clear(out)
				sp.spread(out, at)
				sp = nil
			}
		} else {
			copy(out[off-at:], b)
		}
		n.fab.PutBuf(b)
	}
	if out == nil && sp == nil && zeros {
		return []byte{}, l, nil
	}
	return out, at, sp
}

// sparsePayload is a flow-model payload of mostly zeros as its nonzero
// runs: run i is lens[i] bytes of bytes (after the earlier runs') at
// offset offs[i] of the message, everything else zeros.
type sparsePayload struct {
	offs  []uint64
	lens  []uint64
	bytes []byte
}

// add appends the nonzero runs of b, which starts at offset off, found a
// word at a time; a run may hold zero bytes of its words.
func (sp *sparsePayload) add(off uint64, b []byte) {
	const w = 8
	i := 0
	for i < len(b) {
		for i+w <= len(b) && binary.LittleEndian.Uint64(b[i:]) == 0 {
			i += w
		}
		if i+w > len(b) { // the last partial word
			for i < len(b) && b[i] == 0 {
				i++
			}
			if i == len(b) {
				return
			}
		}
		j := i
		for j < len(b) {
			if j+w <= len(b) {
				if binary.LittleEndian.Uint64(b[j:]) == 0 {
					break
				}
				j += w
				continue
			}
			j = len(b)
		}
		sp.offs = append(sp.offs, off+uint64(i))
		sp.lens = append(sp.lens, uint64(j-i))
		sp.bytes = append(sp.bytes, b[i:j]...)
		i = j
	}
}

// spread writes the runs into out, a zeroed buffer of the message from
// offset at on.
func (sp *sparsePayload) spread(out []byte, at uint64) {
	k := uint64(0)
	for i, o := range sp.offs {
		copy(out[o-at:o-at+sp.lens[i]], sp.bytes[k:k+sp.lens[i]])
		k += sp.lens[i]
	}
}

// materialize makes a sparse flow-model payload whole (Data from DataAt
// on, as gatherPieces would have gathered it) at the receiving NIC for
// the readers of Data that want it whole (denseData, Packet.ready); the
// landings write the runs as they are (storeSparse). Not on arrival: an
// all-to-all's messages end at about the same time and wait in the
// inbound pipeline, and whole they held 1.7 GB at EP 64; and clearing
// the whole buffers was 40 % of a GDS run's CPU.
func (n *NIC) materialize(pk *Packet) {
	sp := pk.sparse
	if sp == nil {
		return
	}
	pk.sparse = nil
	out := n.fab.GetBuf(int(pk.Len - pk.DataAt))
	clear(out)
	sp.spread(out, pk.DataAt)
	pk.Data = out
}
