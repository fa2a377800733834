package nic

import (
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
		pk.Data, pk.DataAt = n.gatherPieces(&src, mp, l)
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
func (n *NIC) gatherPieces(src *payloadSrc, mp, l uint64) (out []byte, at uint64) {
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
		if out == nil {
			at = off
			out = n.fab.GetBuf(int(l - at)) // zeroed: payload-free pieces read as zeros
		}
		copy(out[off-at:], b)
		n.fab.PutBuf(b)
	}
	if out == nil && zeros {
		return []byte{}, l
	}
	return out, at
}
