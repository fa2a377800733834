package nic

import (
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Kind tells request, ack and reply packets apart.
type Kind uint8

// Packet kinds.
const (
	KindRequest Kind = iota // put/get/atomic data or get request
	KindAck                 // zero-payload ack of a put or atomic
	KindReply               // get or fetch reply data
)

// Header is the Portals header carried by a message's header packet
// (nic.md §1).
type Header struct {
	Op           Op
	Initiator    int
	PT           int
	MatchBits    uint64
	RemoteOffset uint64
	Length       uint64 // message length in bytes (rlength)
	HdrData      uint64
	Ack          AckType
	AtomicOp     AtomicOp
	AtomicType   AtomicType
	Operand      uint64
	RC           *RCHeader   // verbs messages (verbs_rx.go)
	Task         *TaskHeader // gather put or XTQ message (xtq.go); nil otherwise
	// Streaming marks a streaming put (sput.go): Length is unknown at the
	// header; the completion packet's header copy carries the final one.
	Streaming bool
}

// Packet is one network packet of a message. It implements net.Packet.
type Packet struct {
	Src, Dst int
	Kind     Kind
	Msg      uint64 // message id, unique per initiator (replies and acks carry the initiator's id)
	Index    int    // packet index in the message; 0 is the header packet
	Offset   uint64 // byte offset in the message
	Len      uint64 // payload bytes
	Last     bool   // completion packet
	Hdr      *Header
	Data     []byte   // payload; nil when payload-free or empty
	Fail     FailType // acks and replies
	MLength  uint64   // acks and replies: bytes the target manipulated

	notBefore sim.Time // flow model: the flow cannot complete earlier (net.Paced)
}

// Route implements net.Packet.
func (p *Packet) Route() (src, dst int) { return p.Src, p.Dst }

// PayloadBytes implements net.Packet.
func (p *Packet) PayloadBytes() unit.Bytes { return unit.Bytes(p.Len) }

// outMsg is an initiator message awaiting an ack or a reply.
type outMsg struct {
	cmd   Command
	start sim.Time
	seen  int // reply packets processed
}

// inMsg is a target message bound to an ME (nil: dropped) until its
// completion packet (§2.2).
type inMsg struct {
	src      int
	msg      uint64
	hdr      *Header
	me       *MEntry
	fail     FailType
	dest     mem.Addr // where message offset 0 lands
	mlength  uint64
	over     bool      // matched on the overflow list
	rec      *unexpRec // its unexpected-list record
	unlink   bool      // this message unlinked the ME
	old      []byte    // fetch: old target values
	start    sim.Time
	pending  int     // packets whose DMA has not landed
	lastSeen bool    // every packet processed
	seen     int     // packets processed
	npk      int     // packets in the message
	ctx      *CtxMsg // bound to an ME with a sPIN execution context
	hold     bool    // XTQ: occupies a slot of the NIC's hold buffer
}

func msgKey(src int, msg uint64) uint64 { return uint64(src)<<48 | msg }

// sendPackets sends a message of length l to dst as packets of at most
// maxPayload (a zero-length message is one empty packet). Packet k's
// payload comes from fetch(off, len), which returns when the data is on the
// NIC and the bytes; packets go to the fabric at that time, in order.
// fin runs once the last packet has been handed to the fabric.
func (n *NIC) sendPackets(dst int, kind Kind, msg uint64, hdr *Header, l uint64, fail FailType, mlength uint64,
	fetch func(off, ln uint64) (sim.Time, func() []byte, func()), fin func()) {
	if n.flowPiece > 0 {
		n.sendFlowMessage(dst, kind, msg, hdr, l, fail, mlength, fetch, fin)
		return
	}
	mp := uint64(n.maxPayload)
	np := max(1, (l+mp-1)/mp)
	start := n.e.Now()
	for k := range np {
		off := k * mp
		ln := min(mp, l-off)
		pk := &Packet{Src: n.id, Dst: dst, Kind: kind, Msg: msg, Index: int(k), Offset: off, Len: ln,
			Last: k == np-1, Fail: fail, MLength: mlength}
		if k == 0 {
			pk.Hdr = hdr
		}
		ready, data, done := fetch(off, ln)
		n.e.At(ready, func() {
			if done != nil {
				done()
			}
			if data != nil {
				pk.Data = data()
			}
			n.stats.PacketsTx++
			n.stats.BytesTx += ln
			n.fab.Send(pk)
			if pk.Last {
				n.spanOp("tx ", kindName(kind, hdr), start)
				if fin != nil {
					fin()
				}
			}
		})
	}
}

func kindName(k Kind, h *Header) string {
	switch k {
	case KindAck:
		return "ack"
	case KindReply:
		return "reply"
	}
	if h != nil {
		return h.Op.String()
	}
	return "data"
}

// fromMemory returns a fetch function reading the payload from memory at
// base by DMA.
func (n *NIC) fromMemory(base mem.Addr) func(off, ln uint64) (sim.Time, func() []byte, func()) {
	return func(off, ln uint64) (sim.Time, func() []byte, func()) {
		ready, k := n.dmaRead(base+mem.Addr(off), ln)
		a := base + mem.Addr(off)
		return ready, func() []byte {
				if ln == 0 {
					return nil
				}
				if b := n.mem.Bytes(a, int(ln)); b != nil {
					buf := n.fab.GetBuf(int(ln))
					copy(buf, b)
					return buf
				}
				if n.mem.HasData(a, int(ln)) { // control words inside a payload-free buffer
					buf := n.fab.GetBuf(int(ln))
					n.mem.Read(a, buf)
					return buf
				}
				return nil
			}, func() {
				n.dmaEnd(k)
			}
	}
}

// fromBuffer returns a fetch function for data already on the NIC.
func (n *NIC) fromBuffer(buf []byte) func(off, ln uint64) (sim.Time, func() []byte, func()) {
	return func(off, ln uint64) (sim.Time, func() []byte, func()) {
		if buf == nil || ln == 0 {
			return n.e.Now(), nil, nil
		}
		return n.e.Now(), func() []byte { return buf[off : off+ln] }, nil
	}
}
