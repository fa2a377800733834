package nic

import (
	"github.com/gpunetsim/gpunetsim/hw/gpu"
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
// (the dissertation (Portals 4)).
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
	Kind     Kind     // (the three small fields together: a message allocates its packets at once)
	Last     bool     // completion packet
	Fail     FailType // acks and replies
	Msg      uint64   // message id, unique per initiator (replies and acks carry the initiator's id)
	Index    int      // packet index in the message; 0 is the header packet
	Offset   uint64   // byte offset in the message
	Len      uint64   // payload bytes
	Hdr      *Header
	Data     []byte // payload; nil when payload-free or empty
	// DataAt is where Data starts in the payload: bytes [0, DataAt) are
	// payload-free (zeros). Only the flow model sets it, for a message
	// whose leading link-sized pieces have no bytes (a payload-free
	// buffer's megabytes before its trailing control words), so that such
	// a message carries its control words, not a buffer of its length.
	DataAt uint64
	// sparse, in the flow model while the packet is on the wire, holds a
	// payload of mostly zeros as its nonzero runs (Data nil until the
	// receiving NIC makes it whole: gatherPieces, materialize).
	sparse  *sparsePayload
	MLength uint64 // acks and replies: bytes the target manipulated

	notBefore sim.Time // flow model: the flow cannot complete earlier (net.Paced)

	// Event state, so a packet is its own send, delivery and landing event
	// (no closure per packet).
	tx      *txMsg   // the message it belongs to (sendPackets)
	dmaK    int      // DMA read requests it retires when sent
	rx      *NIC     // the NIC delivering it (Receive)
	in      *inMsg   // put landing: the target message
	land    mem.Addr // landing: where its payload is written
	landLen uint64   // landing: bytes written
	// snap, when set, holds Data's bytes still in the sender's memory
	// (srcSnapshot): the landing copies them from there, every other
	// reader of Data calls ready first.
	snap *mem.Snapshot
	// ctrl, when set, is the pooled buffer Data lives in (ctrlPayload);
	// the landing gives it back.
	ctrl *ctrlBuf
}

// ready puts the payload's bytes into Data if they are still only in the
// sender's memory (snap) or only as nonzero runs (sparse).
func (p *Packet) ready() {
	if p.sparse != nil {
		p.rx.materialize(p)
	}
	if p.snap != nil {
		p.snap.Materialize()
	}
}

// Detach implements net.Detacher: a packet crossing to another partition
// takes its payload bytes along (the sender's memory is not the other
// partition's to read).
func (p *Packet) Detach() {
	if p.snap != nil {
		p.snap.Release() // on the sender's engine, whose memory it is
		p.snap = nil
	}
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
	unissued int     // atomic packets whose result write is not issued yet
	// cmd, for an XTQ task, is the NIC's copy of the command packet,
	// taken from the arriving packets (keepCommand); nil otherwise.
	cmd *[gpu.AQLPacketSize]byte
	// issued is the initiator's record of the message (its header packet's
	// issuedMsg), nil when it has none: its ack's packets' record is the
	// record's own (respondRecycling, recycle.go).
	issued *issuedMsg
}

func msgKey(src int, msg uint64) uint64 { return uint64(src)<<48 | msg }

// txMsg is what the packets of one outgoing message share: where the
// payload comes from and what to do after the last packet left.
type txMsg struct {
	n     *NIC
	src   payloadSrc
	kind  Kind
	hdr   *Header
	start sim.Time
	fin   func()
	// The message's packets, and how many of them were retired at the
	// destination (recycle.go).
	pkts    []Packet
	retired int
	// cmd, when set, is the put or atomic whose initiator side (the SEND
	// event, counter and completion flag) runs after the last packet
	// left, as fin would (NIC.issue: no closure per message).
	cmd *Command
	// ackOf, set on a verbs ack, is the target's record whose rcOut holds
	// this txMsg: free for reuse once the ack's packet retires at the
	// initiator (recycleIn).
	ackOf *rcIn
	// owner, set on the records an issuedMsg holds (its message's and its
	// ack's), is that issuedMsg (recycle.go).
	owner *issuedMsg
}

// issuedMsg is what NIC.issue allocates for a message: its packets'
// shared record, its header and its command in one object instead of
// three (a GPU-TN ring issues a put per step and slice; at 256 nodes
// these were a third of the run's allocation).
//
// The ack of a put the target completed through targetLanded is sent
// with ack, in the same object: the ack's retirement at the initiator is
// the record's last use, and the initiator keeps it for its next message
// (recycle.go).
type issuedMsg struct {
	tx  txMsg
	hdr Header
	cmd Command
	ack txMsg
}

// sendPackets sends a message of length l to dst as packets of at most
// maxPayload (a zero-length message is one empty packet). Packet k's
// payload is read from src by DMA issued now; packets go to the fabric when
// their data is on the NIC, in order. fin runs once the last packet has
// been handed to the fabric. The message's packets are one array, often a
// recycled one (recycle.go), and each packet is its own send event
// (pktSend): no closures per packet.
func (n *NIC) sendPackets(dst int, kind Kind, msg uint64, hdr *Header, l uint64, fail FailType, mlength uint64,
	src payloadSrc, fin func()) {
	if n.flowPiece > 0 {
		n.sendFlowMessage(dst, kind, msg, hdr, l, fail, mlength, src, fin)
		return
	}
	n.sendTx(&txMsg{n: n, src: src, kind: kind, hdr: hdr, start: n.e.Now(), fin: fin}, dst, msg, l, fail, mlength)
}

// sendPacketsIn is sendPackets with the message's packets' record at
// tx (part of a longer-lived record: no allocation of its own).
func (n *NIC) sendPacketsIn(tx *txMsg, dst int, kind Kind, msg uint64, hdr *Header, l uint64, fail FailType,
	mlength uint64, src payloadSrc, fin func()) {
	if n.flowPiece > 0 {
		n.sendFlowMessage(dst, kind, msg, hdr, l, fail, mlength, src, fin)
		return
	}
	*tx = txMsg{n: n, src: src, kind: kind, hdr: hdr, start: n.e.Now(), fin: fin}
	n.sendTx(tx, dst, msg, l, fail, mlength)
}

// sendTx is sendPackets of the message whose record tx holds the NIC, the
// source, the kind, the header, the start and what runs after the last
// packet (fin or cmd); it makes the packets.
func (n *NIC) sendTx(tx *txMsg, dst int, msg uint64, l uint64, fail FailType, mlength uint64) {
	kind, hdr := tx.kind, tx.hdr
	mp := uint64(n.maxPayload)
	np := max(1, (l+mp-1)/mp)
	pkts := n.packetArray(int(np))
	tx.pkts = pkts
	for k := range np {
		off := k * mp
		ln := min(mp, l-off)
		pk := &pkts[k]
		*pk = Packet{Src: n.id, Dst: dst, Kind: kind, Msg: msg, Index: int(k), Offset: off, Len: ln,
			Last: k == np-1, Fail: fail, MLength: mlength, tx: tx}
		if k == 0 {
			pk.Hdr = hdr
		}
		var ready sim.Time
		ready, pk.dmaK = n.srcRead(&tx.src, off, ln)
		n.sends.AtH(n.e, ready, (*pktSend)(pk), 0)
	}
}

// pktSend is a packet as the event that hands it to the fabric once its
// payload is on the NIC.
type pktSend Packet

// Handle ends the packet's DMA reads, takes its payload and sends it.
func (p *pktSend) Handle(uint64) {
	pk := (*Packet)(p)
	tx := pk.tx
	n := tx.n
	n.dmaEnd(pk.dmaK)
	pk.Data = n.srcSnapshot(pk)
	n.stats.PacketsTx++
	n.stats.BytesTx += pk.Len
	n.fab.Send(pk)
	if pk.Last {
		n.spanOp("tx ", kindName(tx.kind, tx.hdr), tx.start)
		if tx.fin != nil {
			tx.fin()
		} else if tx.cmd != nil {
			n.initiatorSend(*tx.cmd)
		}
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

// srcKind says where a message's payload comes from.
type srcKind uint8

const (
	srcBuffer    srcKind = iota // bytes already on the NIC (none when nil)
	srcMemory                   // DMA reads of memory
	srcMemoryPPB                // DMA reads of GPU memory through the PPB (verbs_ppb.go)
	srcTwo                      // gather put: [0, la) from base, the rest from base2 (xtq.go)
	srcSGL                      // verbs scatter-gather list (verbs_sge.go)
)

// payloadSrc is a message's payload source: a value, so packets need no
// fetch closures.
type payloadSrc struct {
	kind        srcKind
	buf         []byte
	base, base2 mem.Addr
	la          uint64
	list        []SGE
}

// fromMemory returns the source reading the payload from memory at base
// by DMA.
func (n *NIC) fromMemory(base mem.Addr) payloadSrc { return payloadSrc{kind: srcMemory, base: base} }

// fromBuffer returns the source for data already on the NIC (nil: none).
func (n *NIC) fromBuffer(buf []byte) payloadSrc { return payloadSrc{kind: srcBuffer, buf: buf} }

// srcRead issues now the DMA reads of bytes [off, off+ln) of s's payload
// and returns when they are on the NIC and the DMA requests to retire then
// (dmaEnd).
func (n *NIC) srcRead(s *payloadSrc, off, ln uint64) (sim.Time, int) {
	switch s.kind {
	case srcMemory, srcMemoryPPB:
		return n.dmaRead(s.base+mem.Addr(off), ln)
	case srcTwo:
		ready, k := n.e.Now(), 0
		for _, p := range s.parts(off, ln) {
			if p.len == 0 {
				continue
			}
			t, kk := n.dmaRead(p.src, p.len)
			ready, k = max(ready, t), k+kk
		}
		return ready, k
	case srcSGL:
		ready, k := n.e.Now(), 0
		for _, p := range sgePieces(s.list, off, ln) {
			t, kk := n.dmaRead(p.addr, p.len)
			ready, k = max(ready, t), k+kk
		}
		return ready, k
	}
	return n.e.Now(), 0
}

// srcSnapshot is srcData for packet pk of a message being sent, leaving
// the bytes of plain memory in place as a snapshot (pk.snap) when there
// are any: a Portals put's or reply's landing copies them straight from
// the sender's memory, unless something reached that range of it first.
// A payload-free range gives its control words at most, in a pooled
// buffer (ctrlPayload). Verbs packets, whose receive paths copy and
// recycle payloads in many places, copy at once.
func (n *NIC) srcSnapshot(pk *Packet) []byte {
	s := &pk.tx.src
	if s.kind == srcMemoryPPB && pk.Len > 0 {
		if data, zeros, ok := n.ppbPayload(s.base+mem.Addr(pk.Offset), pk.Len); zeros {
			pk.DataAt = pk.Len
			return []byte{}
		} else if ok {
			return data
		}
	}
	if s.kind != srcMemory || pk.Len == 0 || isRC(pk.Kind) || n.eagerPayloads {
		return n.srcData(s, pk.Offset, pk.Len)
	}
	if !n.mem.Functional() {
		a := s.base + mem.Addr(pk.Offset)
		if n.mem.Bytes(a, int(pk.Len)) == nil { // payload-free: control words at most
			return n.ctrlPayload(pk, a)
		}
		return n.srcData(s, pk.Offset, pk.Len)
	}
	buf := n.fab.GetBuf(int(pk.Len))
	if pk.snap = n.mem.Snapshot(s.base+mem.Addr(pk.Offset), buf); pk.snap == nil {
		n.fab.PutBuf(buf)
		return n.srcData(s, pk.Offset, pk.Len)
	}
	return buf
}

// srcData returns bytes [off, off+ln) of s's payload as the packet leaves:
// a pool buffer (fab.GetBuf) or a slice of s's buffer; nil when empty or
// payload-free.
func (n *NIC) srcData(s *payloadSrc, off, ln uint64) []byte {
	if ln == 0 {
		return nil
	}
	switch s.kind {
	case srcMemory:
		a := s.base + mem.Addr(off)
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
	case srcMemoryPPB:
		buf := n.fab.GetBuf(int(ln))
		n.vread(s.base+mem.Addr(off), buf)
		return buf
	case srcTwo:
		parts := s.parts(off, ln)
		has := false
		for _, p := range parts {
			has = has || p.len > 0 && n.mem.HasData(p.src, int(p.len))
		}
		if !has {
			return nil
		}
		buf := n.fab.GetBuf(int(ln))
		for _, p := range parts {
			if p.len > 0 {
				n.mem.Read(p.src, buf[p.at:p.at+p.len])
			}
		}
		return buf
	case srcSGL:
		buf := n.fab.GetBuf(int(ln))
		for _, p := range sgePieces(s.list, off, ln) {
			n.vread(p.addr, buf[p.off:p.off+p.len])
		}
		return buf
	}
	if s.buf == nil {
		return nil
	}
	return s.buf[off : off+ln]
}

// srcPart is one contiguous piece of a gather put's packet.
type srcPart struct {
	src     mem.Addr
	at, len uint64 // offset in the packet, bytes (0: unused)
}

// parts splits bytes [off, off+ln) of a srcTwo payload at la.
func (s *payloadSrc) parts(off, ln uint64) [2]srcPart {
	var ps [2]srcPart
	if off < s.la {
		ps[0] = srcPart{s.base + mem.Addr(off), 0, min(ln, s.la-off)}
	}
	if off+ln > s.la {
		lo := max(off, s.la)
		ps[1] = srcPart{s.base2 + mem.Addr(lo-s.la), lo - off, off + ln - lo}
	}
	return ps
}
