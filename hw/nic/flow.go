package nic

import (
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
		pk.Data, pk.dataAt = n.gatherPieces(&src, mp, l)
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
// piece holding bytes, at offset at of the message: the pieces before it
// are payload-free, and the receiving NIC puts the zeros they read as back
// in front before anything uses the payload (Receive, materialize). Why: a
// payload-free message whose only bytes are its trailing flag (a put to a
// peer in MoE's throughput mode, ~2 MB at EP 128) carried a zeroed buffer
// of its whole length while on the wire, and in the flow model all of an
// all-to-all's messages are on the wire at once (6.8 GB at EP 128).
func (n *NIC) gatherPieces(src *payloadSrc, mp, l uint64) (data []byte, at uint64) {
	var out []byte
	for off := uint64(0); off < l; off += mp {
		b := n.srcData(src, off, min(mp, l-off))
		if b == nil {
			continue
		}
		if out == nil {
			at = off
			out = n.fab.GetBuf(int(l - at))
			clear(out) // payload-free pieces after the first read as zeros
		}
		copy(out[off-at:], b)
		n.fab.PutBuf(b)
	}
	return out, at
}

// materialize puts back the payload-free head of a flow-model payload
// (gatherPieces): afterwards Data covers the whole packet, zeros first, as
// every reader of Data expects.
func (n *NIC) materialize(pk *Packet) {
	if pk.dataAt == 0 || pk.Data == nil {
		return
	}
	full := n.fab.GetBuf(int(pk.dataAt) + len(pk.Data))
	clear(full[:pk.dataAt])
	copy(full[pk.dataAt:], pk.Data)
	n.fab.PutBuf(pk.Data)
	pk.Data, pk.dataAt = full, 0
}
