package nic

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/mem"
)

// issue starts cmd on the outbound engine now.
func (n *NIC) issue(cmd Command) {
	n.stats.Commands++
	switch cmd.Op {
	case CmdCTInc:
		cmd.CT.Inc(cmd.CTValue)
		return
	case CmdCTSet:
		cmd.CT.Set(cmd.CTValue)
		return
	}
	n.lastIssue = n.e.Now()
	n.nextMsg++
	id := n.nextMsg
	im, ok := n.issuedFree.Get() // a record whose ack retired here (recycleIssued)
	if !ok {
		im = new(issuedMsg)
	}
	// The header and the ack's record here; the message's record and the
	// command are written whole below (a put's path) or cleared where they
	// are not used. The whole record as one literal cleared its 592 bytes
	// before most of them were written again: 0.6 % of GPU-TN's
	// instructions.
	im.hdr = Header{Op: cmd.Op, Initiator: n.id, PT: cmd.PT, MatchBits: cmd.MatchBits, RemoteOffset: cmd.RemoteOffset,
		Length: cmd.Length, HdrData: cmd.HdrData, Ack: cmd.Ack, AtomicOp: cmd.AtomicOp, AtomicType: cmd.AtomicType,
		Operand: cmd.Operand}
	im.ack = txMsg{}
	hdr := &im.hdr
	if cmd.Op == CmdGet {
		im.tx, im.cmd = txMsg{}, Command{}
		n.out[id] = &outMsg{cmd: cmd, start: n.e.Now()}
		n.sendPackets(cmd.Target, KindRequest, id, hdr, 0, FailOK, 0, n.fromBuffer(nil), nil)
		return
	}
	awaits := cmd.Op == CmdFetchAtomic || cmd.Op == CmdSwap || cmd.Ack != NoAckReq
	if awaits {
		o, ok := n.outFree.Get()
		if !ok {
			o = new(outMsg)
		}
		*o = outMsg{cmd: cmd, start: n.e.Now()}
		n.out[id] = o
	}
	src := cmd.MD.Start + mem.Addr(cmd.LocalOffset)
	if n.flowPiece > 0 {
		im.tx, im.cmd = txMsg{}, Command{}
		n.issueFlow(cmd, id, hdr, src)
		return
	}
	im.cmd = cmd
	im.tx = txMsg{n: n, src: n.fromMemory(src), kind: KindRequest, hdr: hdr, start: n.e.Now(), cmd: &im.cmd, owner: im}
	n.sendTx(&im.tx, cmd.Target, id, cmd.Length, FailOK, 0)
}

// issueFlow sends cmd's message in the flow model (sendFlowMessage), which
// takes what runs after the last byte left as a function.
func (n *NIC) issueFlow(cmd Command, id uint64, hdr *Header, src mem.Addr) {
	n.sendPackets(cmd.Target, KindRequest, id, hdr, cmd.Length, FailOK, 0, n.fromMemory(src), func() {
		n.initiatorSend(cmd)
	})
}

// initiatorSend reports that the last payload byte has left the local
// buffer: SEND event and count, and the completion flag of puts/atomics.
func (n *NIC) initiatorSend(cmd Command) {
	md := cmd.MD
	if md.Options&(MDEventSendDisable|MDEventSuccessDisable) == 0 {
		n.postEvent(md.EQ, n.initiatorEvent(EventSend, cmd, cmd.Length, FailOK))
	}
	if md.Options&MDEventCTSend != 0 {
		md.CT.count(md.Options&MDEventCTBytes != 0, cmd.Length, FailOK)
	}
	if cmd.Op == CmdPut || cmd.Op == CmdAtomic {
		n.setFlag(cmd.CompletionFlag)
	}
}

func (n *NIC) initiatorEvent(typ EventType, cmd Command, mlength uint64, fail FailType) Event {
	return Event{Type: typ, Initiator: n.id, PT: cmd.PT, MatchBits: cmd.MatchBits, RLength: cmd.Length,
		MLength: mlength, RemoteOffset: cmd.RemoteOffset, Start: cmd.MD.Start + mem.Addr(cmd.LocalOffset),
		UserPtr: cmd.UserPtr, HdrData: cmd.HdrData, NIFail: fail, AtomicOp: cmd.AtomicOp, AtomicType: cmd.AtomicType}
}

// onAck handles an ack packet at the initiator.
func (n *NIC) onAck(pk *Packet) {
	o := n.out[pk.Msg]
	if o == nil {
		panic(fmt.Sprintf("%s: ack for unknown message %d from node %d", n.name, pk.Msg, pk.Src))
	}
	delete(n.out, pk.Msg)
	cmd := o.cmd
	md := cmd.MD
	if cmd.Ack != CTAckReq && (pk.Fail != FailOK || md.Options&MDEventSuccessDisable == 0) {
		n.postEvent(md.EQ, n.initiatorEvent(EventAck, cmd, pk.MLength, pk.Fail))
	}
	if md.Options&MDEventCTAck != 0 || cmd.Ack == CTAckReq {
		md.CT.count(md.Options&MDEventCTBytes != 0, pk.MLength, pk.Fail)
	}
	n.span("ack", o.start, n.e.Now())
	// Nothing else holds o (a reply's, which a closure may keep, is never
	// reused): every acknowledged send of MPI's long-eager protocol
	// allocated one.
	*o = outMsg{}
	n.outFree.Put(o)
}

// onReply handles a reply packet at the initiator: its payload is written
// into the MD (get) or ResultMD (fetch/swap); the completion packet, once
// visible, raises REPLY.
func (n *NIC) onReply(pk *Packet) {
	o := n.out[pk.Msg]
	if o == nil {
		panic(fmt.Sprintf("%s: reply for unknown message %d from node %d", n.name, pk.Msg, pk.Src))
	}
	cmd := o.cmd
	md, off := cmd.MD, cmd.LocalOffset
	if cmd.Op != CmdGet {
		md, off = cmd.ResultMD, cmd.ResultOffset
	}
	if pk.Len > 0 {
		pk.land, pk.landLen = md.Start+mem.Addr(off+pk.Offset), pk.Len
		n.dmaWriteH(pk.land, pk.Len, (*pktReplyLand)(pk))
	}
	o.seen++
	if o.seen < n.packets(pk.MLength) {
		return
	}
	delete(n.out, pk.Msg)
	n.replyComplete(o, pk, md, off)
}

// replyComplete raises REPLY once the last reply packet's write is issued:
// the event, count and completion flag are written behind the payload on
// the same ordered path (postTargetEvents), so they are visible no earlier
// than it. (A function of its own so that onReply's locals stay off the
// heap for the other packets.)
func (n *NIC) replyComplete(o *outMsg, pk *Packet, md *MD, off uint64) {
	mlength, fail := pk.MLength, pk.Fail
	cmd := o.cmd
	if ct := md.CT; md.Options&MDEventCTReply != 0 && ct != nil {
		ct.count(md.Options&MDEventCTBytes != 0, mlength, fail)
	}
	if md.Options&MDEventSuccessDisable == 0 || fail != FailOK {
		ev := n.initiatorEvent(EventReply, cmd, mlength, fail)
		ev.Start = md.Start + mem.Addr(off)
		n.postEvent(md.EQ, ev)
	}
	n.setFlag(cmd.CompletionFlag)
	n.span("reply", o.start, n.e.Now()) // (until REPLY is issued)
}

// pktReplyLand is a reply packet as the event that makes its posted DMA
// write visible (dmaWriteH).
type pktReplyLand Packet

// Handle stores the payload, recycles its buffer and retires the packet.
func (p *pktReplyLand) Handle(uint64) {
	p.store()
	p.rx.retire((*Packet)(p))
}

// store stores the payload and recycles its buffer.
func (p *pktReplyLand) store() {
	n := p.rx
	n.dmaEnd(1)
	if s := p.snap; s != nil {
		p.snap = nil
		if dst := n.mem.BytesToWrite(p.land, int(p.landLen)); dst != nil {
			s.CopyTo(dst) // one copy, from the sender's memory or the buffer
			n.mem.Touch(p.land, int(p.landLen))
			n.fab.PutBuf(p.Data)
			return
		}
		s.Materialize()
	}
	if sp := p.sparse; sp != nil { // the runs as they are (flow model)
		p.sparse = nil
		n.storeSparse(p.land, sp, p.landLen)
		return
	}
	n.storeDataAt(p.land, p.Data, p.DataAt, p.landLen)
	if cb := p.ctrl; cb != nil {
		p.ctrl = nil
		n.ctrlFree.Put(cb)
		return
	}
	n.fab.PutBuf(p.Data)
}
