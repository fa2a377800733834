package nic

import (
	"fmt"
	"math"

	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/net"
	"github.com/gpunetsim/gpunetsim/sim"
)

// Receive implements net.Endpoint: the inbound engine parses packets in
// arrival order; a request header packet is matched now, costing
// MatchCost per list entry traversed, and every later packet of any
// message waits behind it (one inbound pipeline).
func (n *NIC) Receive(np net.Packet) {
	pk, ok := np.(*Packet)
	if !ok {
		panic(fmt.Sprintf("%s: received a %T, not a *nic.Packet", n.name, np))
	}
	n.stats.PacketsRx++
	n.stats.BytesRx += pk.Len
	if n.xtqWaits(pk) {
		return // an XTQ task header found the hold buffer full (xtq_hold.go)
	}
	n.ingress(pk)
}

// ingress parses pk: a request header is matched now, and the packet is
// delivered once the inbound pipeline is free.
func (n *NIC) ingress(pk *Packet) {
	var cost sim.Time
	header := pk.Kind == KindRequest && pk.Index == 0
	if header {
		cost = sim.Time(n.match(pk)) * n.spec.MatchCost
	}
	t := max(n.e.Now(), n.inFree) + cost
	n.inFree = t
	pk.rx = n
	n.e.AtH(t, (*pktDeliver)(pk), 0)
	if m := n.in[msgKey(pk.Src, pk.Msg)]; header && m != nil && m.hold && m.me == nil {
		n.xtqRelease(m) // a refused task holds nothing
	}
}

// pktDeliver is a packet as the event that leaves the inbound pipeline.
type pktDeliver Packet

// Handle delivers the packet.
func (p *pktDeliver) Handle(uint64) { p.rx.deliver((*Packet)(p)) }

// pktLand is a put packet as the event that makes its posted DMA write
// visible (dmaWriteH).
type pktLand Packet

// Handle lands the payload (as a reply's) and retires the packet.
func (p *pktLand) Handle(uint64) {
	(*pktReplyLand)(p).store()
	n, m := p.rx, p.in
	n.retire((*Packet)(p))
	n.packetDone(m)
}

// match binds a header packet's message to an ME (§2.2) and returns the
// number of list entries traversed.
func (n *NIC) match(pk *Packet) int {
	h := pk.Hdr
	if h == nil {
		panic(fmt.Sprintf("%s: header packet of message %d from node %d has no header", n.name, pk.Msg, pk.Src))
	}
	m, ok := n.inMsgFree.Get() // a record targetLanded was done with (releaseIn)
	if !ok {
		m = new(inMsg)
	}
	*m = inMsg{src: pk.Src, msg: pk.Msg, hdr: h, start: n.e.Now(), npk: n.packets(h.Length)}
	if tx := pk.tx; tx != nil && tx.owner != nil && tx == &tx.owner.tx {
		m.issued = tx.owner
	}
	if h.Op == CmdGet {
		// A get request is its header packet alone (tx.go); Length is what
		// the reply carries. Counting the reply's packets here left the
		// binding in n.in forever (found by the invariant check).
		m.npk = 1
	}
	if h.Streaming {
		m.npk = math.MaxInt // until the completion packet (streamEnd)
	}
	key := msgKey(pk.Src, pk.Msg)
	if n.in[key] != nil {
		panic(fmt.Sprintf("%s: message %d from node %d already bound", n.name, pk.Msg, pk.Src))
	}
	n.in[key] = m
	if h.Task != nil && h.Task.Xtq {
		n.xtqHold(m)
		m.cmd = new([gpu.AQLPacketSize]byte)
	}
	if h.PT < 0 || h.PT >= len(n.pts) {
		m.fail = FailUndelivered
		n.stats.Drops++
		return 0
	}
	p := n.pts[h.PT]
	if !p.enabled {
		m.fail = FailPTDisabled
		n.stats.Drops++
		return 0
	}
	traversed := 0
	var me *MEntry
	for _, l := range [2][]*MEntry{p.prio, p.over} {
		for _, e := range l {
			traversed++
			if n.admits(e, pk.Src, h) {
				me = e
				break
			}
		}
		if me != nil {
			break
		}
	}
	if n.xtqReject(m, p, me) {
		return traversed
	}
	if me == nil || p.flowCtl && p.eq != nil && p.eq.full() {
		n.stats.Drops++
		m.fail = FailDropped
		if p.flowCtl {
			p.enabled = false
			m.fail = FailPTDisabled
			n.postEvent(p.eq, n.targetEvent(EventPTDisabled, nil, pk.Src, h, 0, 0, FailPTDisabled)) // behind earlier writes
		}
		return traversed
	}
	n.stats.Matches++
	m.me = me
	off := h.RemoteOffset
	if me.me.Options&MEManageLocal != 0 {
		off = me.offset
	}
	if off <= me.me.Length {
		m.mlength = min(h.Length, me.me.Length-off)
	}
	m.dest = me.me.Start + mem.Addr(off)
	if h.Streaming {
		// The length is unknown until the completion packet: packets are
		// clipped to the room in the ME until then (streamEnd).
		m.mlength = me.me.Length - min(off, me.me.Length)
	}
	if me.me.Options&MEManageLocal != 0 {
		me.offset += m.mlength
	}
	switch {
	case me.me.Options&MEUseOnce != 0:
		m.unlink = true
	case me.me.Options&MEManageLocal != 0 && me.me.Length-me.offset < me.me.MinFree:
		m.unlink = true
	}
	if m.unlink {
		n.unlink(me)
	}
	if me.list == Overflow {
		m.over = true
		n.stats.Unexpected++
		m.rec = &unexpRec{src: pk.Src, hdr: h, mlength: m.mlength, start: m.dest}
		p.unexp = append(p.unexp, m.rec)
	}
	if h.Op == CmdFetchAtomic || h.Op == CmdSwap {
		m.old = make([]byte, m.mlength)
	}
	return traversed
}

// packets returns the number of packets of an l-byte message.
func (n *NIC) packets(l uint64) int {
	mp := uint64(n.maxPayload)
	return int(max(1, (l+mp-1)/mp))
}

// deliver processes a packet after the inbound pipeline.
func (n *NIC) deliver(pk *Packet) {
	if isRC(pk.Kind) {
		n.rcDeliver(pk)
		return
	}
	switch pk.Kind {
	case KindAck:
		n.onAck(pk)
		n.retire(pk)
		return
	case KindReply:
		n.onReply(pk)
		return
	}
	if n.rxStalled { // a sPIN context refused an earlier packet: wait behind it
		n.rxHeld = append(n.rxHeld, pk)
		return
	}
	key := msgKey(pk.Src, pk.Msg)
	m := n.in[key]
	if m == nil {
		// A payload packet overtook its header (out-of-order fabric):
		// hold it until the header is matched.
		if pk.Index == 0 {
			panic(fmt.Sprintf("%s: header of message %d from node %d has no binding", n.name, pk.Msg, pk.Src))
		}
		n.stats.Overtaken++
		n.early[key] = append(n.early[key], pk)
		return
	}
	if m.hdr.Streaming && pk.Last {
		n.streamEnd(m, pk)
	}
	if m.me != nil && m.me.me.Ctx != nil && m.hdr.Op == CmdPut && !n.offerCtx(m, pk) {
		return
	}
	m.seen++
	done := m.seen == m.npk
	if done {
		delete(n.in, key)
	}
	if pk.Index == 0 {
		if held := n.early[key]; held != nil {
			delete(n.early, key)
			defer func() {
				for _, q := range held {
					n.deliver(q)
				}
			}()
		}
	}
	h := m.hdr
	if m.me == nil {
		if done {
			// Responses leave in message order: after earlier deliveries.
			n.afterWrites(func() { n.respond(m, nil) })
		}
		return
	}
	if h.Op == CmdGet {
		n.targetGet(m)
		n.retire(pk) // a get request is its header packet alone
		return
	}
	if m.ctx != nil {
		return // the execution context owns the packet and completes the message
	}
	// Clip the packet to the manipulated length.
	lo, hi := pk.Offset, min(pk.Offset+pk.Len, m.mlength)
	if hi > lo {
		a, ln := m.dest+mem.Addr(lo), hi-lo
		m.pending++
		if h.Op == CmdPut {
			if m.cmd != nil {
				m.keepCommand(pk, lo, hi)
			}
			pk.in, pk.land, pk.landLen = m, a, ln
			n.dmaWriteH(a, ln, (*pktLand)(pk))
		} else {
			n.deliverAtomic(m, pk, a, lo, hi)
		}
	}
	if done {
		m.lastSeen = true
		landed := max(n.e.Now(), n.upVis) // (before the completion writes)
		if m.unissued == 0 {
			n.targetIssued(m)
		}
		if m.pending == 0 {
			n.e.At(landed, func() { n.targetLanded(m) })
		}
	}
}

// deliverAtomic applies an atomic packet: DMA read, then the
// read-modify-write is applied functionally when the posted write of the
// result lands.
func (n *NIC) deliverAtomic(m *inMsg, pk *Packet, a mem.Addr, lo, hi uint64) {
	h, ln := m.hdr, hi-lo
	ready, k := n.dmaRead(a, ln)
	m.unissued++
	n.e.At(ready, func() {
		n.dmaEnd(k)
		defer n.atomicIssued(m)
		n.dmaWriteTo(a, ln, func() {
			if dst := n.mem.Bytes(a, int(ln)); dst != nil {
				if m.old != nil {
					copy(m.old[lo:hi], dst)
				}
				if pk.Data != nil {
					pk.ready()
					applyAtomic(dst, pk.Data[:ln], h.AtomicOp, h.AtomicType, h.Operand)
				}
			}
			n.mem.Touch(a, int(ln))
			n.packetDone(m)
		})
	})
}

// atomicIssued counts the result write of one atomic packet of m as
// issued: the last one, after the completion packet, issues m's
// completion writes behind it.
func (n *NIC) atomicIssued(m *inMsg) {
	m.unissued--
	if m.unissued == 0 && m.lastSeen {
		n.targetIssued(m)
	}
}

// packetDone retires one landed packet of m and, after its completion
// packet, ends m once every byte of it is visible.
func (n *NIC) packetDone(m *inMsg) {
	m.pending--
	if m.pending == 0 && m.lastSeen {
		n.targetLanded(m)
	}
}

// keepCommand copies the bytes of put packet pk that fall in the XTQ
// command (message bytes [lo, hi) clipped to the command) into m.cmd: the
// NIC takes the command from the arriving packet, as it streams through
// to memory, not back from memory once it landed.
func (m *inMsg) keepCommand(pk *Packet, lo, hi uint64) {
	hi = min(hi, uint64(len(m.cmd)))
	if lo >= hi {
		return
	}
	pk.ready()
	for o := lo; o < hi; o++ {
		i := o - pk.Offset // the byte's place in the packet's payload
		if i >= pk.DataAt && i-pk.DataAt < uint64(len(pk.Data)) {
			m.cmd[o] = pk.Data[i-pk.DataAt]
		}
	}
}

// targetGet reads the bound ME's data and replies; GET event once the
// last reply packet has left.
func (n *NIC) targetGet(m *inMsg) {
	n.sendPackets(m.src, KindReply, m.msg, nil, m.mlength, FailOK, m.mlength, n.fromMemory(m.dest), func() {
		n.targetEvents(m, EventGet)
	})
}

// targetComplete completes a put or atomic whose every byte is visible
// (a sPIN context's message, CtxMsg.Complete): its completion writes are
// issued now and it ends.
func (n *NIC) targetComplete(m *inMsg) {
	m.cmd = nil // the context, not keepCommand, had the packets: read it back
	n.targetIssued(m)
	n.targetLanded(m)
}

// targetIssued runs when the last payload write of a put or atomic has
// been issued (not when it is visible): the NIC issues the message's
// completion writes — its events and counts, or for an XTQ task the start
// of the enqueue procedure — right behind the payload's on the same
// ordered path (posted writes are not reordered: PCI Express Base
// Specification, transaction ordering rules), so a reader that sees one
// sees the payload, without the NIC waiting for the payload to land.
func (n *NIC) targetIssued(m *inMsg) {
	if t := m.hdr.Task; t != nil && t.Xtq {
		n.xtqTarget(m)
		return
	}
	typ := EventPut
	switch m.hdr.Op {
	case CmdAtomic:
		typ = EventAtomic
	case CmdFetchAtomic, CmdSwap:
		typ = EventFetchAtomic
	}
	n.postTargetEvents(m, typ)
}

// targetLanded runs when the last byte of a put or atomic is visible: the
// ack or reply leaves and the message's unexpected-list record completes.
func (n *NIC) targetLanded(m *inMsg) {
	n.lastLanded = n.e.Now()
	if t := m.hdr.Task; t != nil {
		n.xtq.stats.LastLanded = n.e.Now()
		if t.Xtq {
			return // the XTQ procedure acks after its doorbell (xtqWrite)
		}
	}
	n.targetDone(m)
	if n.recyclable(m) {
		n.respondRecycling(m) // the last use of m
		return
	}
	n.respond(m, m.old)
}

// targetEvents posts a completed message's target events and counts and
// ends it.
func (n *NIC) targetEvents(m *inMsg, typ EventType) {
	n.postTargetEvents(m, typ)
	n.targetDone(m)
}

// postTargetEvents issues a message's target events and counts, each a
// posted write ordered behind every write the NIC issued before
// (postEvent; a count changes when those are visible).
func (n *NIC) postTargetEvents(m *inMsg, typ EventType) {
	me := m.me
	o := me.me.Options
	eq := n.pts[me.pt].eq
	evOK := o&(MEEventDisable|MEEventSuccessDisable) == 0 && !(m.over && o&MEEventOverflowDisable != 0)
	if ct := me.me.CT; o&MEEventCTComm != 0 && ct != nil {
		ct.count(o&MEEventCTBytes != 0, m.mlength, FailOK)
	}
	if evOK {
		n.postEvent(eq, n.targetEvent(typ, me, m.src, m.hdr, m.mlength, m.dest, FailOK))
	}
	if m.unlink && o&(MEEventDisable|MEEventUnlinkDisable) == 0 {
		n.postEvent(eq, n.targetEvent(EventAutoUnlink, me, m.src, m.hdr, m.mlength, m.dest, FailOK))
	}
}

// targetDone completes a message's unexpected-list record once its bytes
// are visible and ends its span.
func (n *NIC) targetDone(m *inMsg) {
	if r := m.rec; r != nil {
		r.done = true
		if r.pendingME != nil {
			n.overflowEvent(r.pendingME, r)
		}
	}
	n.spanOp("rx ", m.hdr.Op.String(), m.start)
}

// respond sends the ack or reply of a completed or dropped message.
func (n *NIC) respond(m *inMsg, old []byte) {
	h := m.hdr
	switch h.Op {
	case CmdGet, CmdFetchAtomic, CmdSwap:
		if m.me == nil {
			n.sendPackets(m.src, KindReply, m.msg, nil, 0, m.fail, 0, n.fromBuffer(nil), nil)
			return
		}
		if h.Op != CmdGet {
			n.sendPackets(m.src, KindReply, m.msg, nil, m.mlength, FailOK, m.mlength, n.fromBuffer(old), nil)
		}
	default:
		if h.Ack != NoAckReq {
			n.sendPackets(m.src, KindAck, m.msg, nil, 0, m.fail, m.mlength, n.fromBuffer(nil), nil)
		}
	}
}
