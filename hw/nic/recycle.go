package nic

import "fmt"

// Packet arrays are recycled: a message's packets are one array, and the
// arrays were three quarters of what a packet-level run allocates (about
// 85 MB per 64-node allreduce), so the garbage collector ran often and
// its write barriers slowed every event while it did.
//
// A packet is retired where it is certainly used for the last time: a put
// packet after its payload landed, a reply packet after its payload
// landed, an ack after the initiator handled it, a get request after the
// target started the reply. When every packet of a message was retired,
// the NIC retiring the last one keeps the array for a later message of the
// same packet count. A packet that takes any other way (dropped, clipped
// to nothing, held by a sPIN context, an atomic, a verbs message, the flow
// model) is never retired, and its message's array is left to the garbage
// collector: recycling is only ever skipped, never early. The retiring NIC
// is the destination, so in a partitioned run the array changes owner
// with the last packet, which another partition no longer touches.

// maxRecycledPackets bounds the packet count of recycled arrays (larger
// messages are rarer; their arrays are left to the garbage collector).
const maxRecycledPackets = 256

// maxRecycledArrays bounds the arrays kept per packet count: a node that
// receives more messages of a size than it sends (a many-to-one pattern)
// would otherwise keep every array it retired.
const maxRecycledArrays = 64

// maxRecycledIssued bounds the unacknowledged puts' records a NIC keeps
// (respondRecycling).
const maxRecycledIssued = 64

// poisoned is what a retired packet becomes in tests (NIC.poisonRetired):
// values no live packet has, so that a use after retirement fails loudly.
func poisoned() Packet {
	return Packet{Src: -1, Dst: -1, Index: -1, Offset: 1 << 62, Len: 1 << 62, MLength: 1 << 62, Msg: 1 << 62}
}

// packetArray returns np packets: a recycled array (cleared when it was
// retired) or a new one.
func (n *NIC) packetArray(np int) []Packet {
	if np < len(n.pktFree) {
		if l := n.pktFree[np]; len(l) > 0 {
			a := l[len(l)-1]
			l[len(l)-1] = nil
			n.pktFree[np] = l[:len(l)-1]
			return a
		}
	}
	return make([]Packet, np)
}

// retire notes that pk is not used again. The last of its message's
// packets to be retired hands the message's array to n.
func (n *NIC) retire(pk *Packet) {
	tx := pk.tx
	if tx == nil || tx.pkts == nil {
		return
	}
	tx.retired++
	if tx.retired < len(tx.pkts) {
		if tx.retired <= 0 {
			panic(fmt.Sprintf("%s: a packet of message %d retired after its record was released", n.name, pk.Msg))
		}
		return
	}
	a := tx.pkts
	tx.pkts = nil
	n.keepArray(a)
	if o := tx.owner; o != nil && tx == &o.ack {
		n.recycleIssued(o)
	}
}

// keepArray keeps a, a message's packet array whose every packet was
// retired, for a later message of as many packets.
func (n *NIC) keepArray(a []Packet) {
	if n.poisonRetired {
		for i := range a {
			a[i] = poisoned()
		}
		return
	}
	clear(a) // drop the references the packets hold
	np := len(a)
	if np >= maxRecycledPackets {
		return
	}
	if n.pktFree == nil {
		n.pktFree = make([][][]Packet, maxRecycledPackets)
	}
	if len(n.pktFree[np]) < maxRecycledArrays {
		n.pktFree[np] = append(n.pktFree[np], a)
	}
}

// The message records of a Portals put are recycled too: per acknowledged
// put the initiator's issuedMsg (its header, command and packets' record)
// and the target's inMsg, 195 k objects and 46 MB in a 64-node GHN_APU
// allreduce, were left to the collector.
//
// The target's inMsg of a put ends in targetLanded: the message left in
// when its last packet was seen (deliver), every packet with a payload
// landed and was retired before its packetDone (pktLand), and the events
// and counts were posted (targetIssued, postTargetEvents: they copy what they need). What else
// could still lead to it is excluded by recyclable: an execution context
// (CtxMsg.in), an XTQ hold or task, a streaming put's end, an unexpected-
// list record (it keeps the header), an atomic's closures, the flow model.
// The ack it sends then carries values only.
//
// The initiator's issuedMsg is read by the target after the initiator is
// done with it: its header is the target inMsg's hdr, and its packets'
// record is what the target's retire counts. So the target hands it back
// with the ack: a recyclable message's ack is sent with the issuedMsg's
// own ack record (issuedMsg.ack, set in respondRecycling after the inMsg
// was released), and when the ack's packet retires at the initiator
// (deliver, after onAck) every use is over: the initiator's last one, the
// SEND of the message's last packet (pktSend), came before the target saw
// that packet; the target's, before it sent the ack; the ack's own, in
// onAck. Every request packet retired (tx.pkts nil: checked, else the
// record is left to the collector). In a split run the target's partition
// writes the ack record before the barrier that hands the ack to the
// initiator's, as it already wrote the packets' record in retire.
//
// A put that asks for no ack (NoAckReq: GPU-TN's triggered puts, one per
// step and slice, 33 M records in the 1,024-node ring) has no ack to carry
// its record back, and its record was left to the collector: a fresh,
// cold allocation per put. Its initiator is done with the record once the
// SEND of its last packet ran (pktSend: initiatorSend copies the command;
// nothing waits in out for it), which came before the target saw that
// packet, as above; the target is done in targetLanded. So there the
// target keeps it for its own next issue (its issuedFree): the record
// changes owner with the message, as a packet array does with its last
// packet, and in a split run the initiator's partition wrote it before
// the barrier that handed the packet over. At most maxRecycledIssued are
// kept per NIC (a node that receives more puts than it sends).
//
// Under poisonRetired (the NIC tests; every NIC in a nicpoison build) a
// released record is overwritten with impossible values and never reused:
// a later read of its header is a nil dereference or an impossible PT,
// length or source, a later retire of its packets panics above.

// recyclable reports whether m, whose targetIssued has posted its
// events, is referenced by nothing but its caller (see above).
func (n *NIC) recyclable(m *inMsg) bool {
	h := m.hdr
	return n.flowPiece == 0 && h.Op == CmdPut && h.Task == nil && !h.Streaming && m.fail == FailOK &&
		m.ctx == nil && m.rec == nil && !m.hold && m.me != nil && m.me.me.Ctx == nil
}

// respondRecycling is respond for a recyclable put: m is released, then
// the ack (if any) is sent with the initiator's issuedMsg's ack record
// when it has one (a new record otherwise, as respond sends it).
func (n *NIC) respondRecycling(m *inMsg) {
	src, msg, fail, mlength, ack, im := m.src, m.msg, m.fail, m.mlength, m.hdr.Ack, m.issued
	n.releaseIn(m)
	if ack == NoAckReq {
		if im != nil && n.issuedFree.Len() < maxRecycledIssued {
			n.recycleIssued(im) // the initiator is done with it (see above)
		}
		return
	}
	if im == nil {
		n.sendPackets(src, KindAck, msg, nil, 0, fail, mlength, n.fromBuffer(nil), nil)
		return
	}
	tx := &im.ack
	*tx = txMsg{n: n, src: n.fromBuffer(nil), kind: KindAck, start: n.e.Now(), owner: im}
	n.sendTx(tx, src, msg, 0, fail, mlength)
}

// releaseIn keeps m for a later match.
func (n *NIC) releaseIn(m *inMsg) {
	if n.poisonRetired {
		*m = inMsg{src: -1, msg: 1 << 62, fail: FailType(255), dest: 1 << 62, mlength: 1 << 62, pending: -1 << 30,
			seen: -1 << 30, npk: -1}
		return
	}
	*m = inMsg{}
	n.inMsgFree.Put(m)
}

// recycleIssued keeps o, whose ack's packet has just retired here, for a
// later issue (see above).
func (n *NIC) recycleIssued(o *issuedMsg) {
	if o.tx.pkts != nil {
		return // a request packet was never retired: left to the collector
	}
	if n.poisonRetired {
		*o = issuedMsg{hdr: Header{Op: Op(255), Initiator: -1, PT: -1, Length: 1 << 62, RemoteOffset: 1 << 62}}
		o.tx = txMsg{kind: Kind(255), retired: -1 << 40, pkts: []Packet{}}
		o.ack = o.tx
		return
	}
	// issue writes the whole record again.
	n.issuedFree.Put(o)
}
