package nic

import (
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/pcie"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// ExecContext is the hook a sPIN execution context (the SC'19 paper) plugs into
// a matching entry (ME.Ctx). The packets of a put bound to such an ME are
// handed to Arrive in inbound order instead of taking the plain DMA path;
// the context owns them from then on and ends the message with
// CtxMsg.Complete. An ME without a context is untouched by all of this.
type ExecContext interface {
	// Arrive offers one packet of message m. It returns false when the
	// context cannot take it now (its packet buffer is full): the inbound
	// engine then stalls, holding this packet and every later one in
	// arrival order, until the context calls NIC.Resume. Arrive must not
	// keep a packet it refused.
	Arrive(m *CtxMsg, pk CtxPacket) bool
}

// CtxPacket is one packet as the inbound engine hands it to a context.
type CtxPacket struct {
	Index  int    // packet index in the message (0: header packet)
	Offset uint64 // byte offset of the payload in the message stream
	Len    uint64 // payload bytes
	Data   []byte // payload bytes (nil in a payload-free run)
	Last   bool   // the completion packet (the last one sent)
}

// CtxMsg is a message bound to an ME with an execution context.
type CtxMsg struct {
	n  *NIC
	in *inMsg
	// State is the context's own per-message state; the NIC never reads it.
	State any
}

// Src is the initiator's node id.
func (c *CtxMsg) Src() int { return c.in.src }

// Host is the host address of message offset 0 (the ME's start plus the
// remote offset): where a plain put would have landed.
func (c *CtxMsg) Host() mem.Addr { return c.in.dest }

// Length is the message length the initiator sent.
func (c *CtxMsg) Length() uint64 { return c.in.hdr.Length }

// MLength is the manipulated length (clipped to the ME).
func (c *CtxMsg) MLength() uint64 { return c.in.mlength }

// Packets is the number of packets of the message.
func (c *CtxMsg) Packets() int { return c.in.npk }

// Header returns the message's Portals header.
func (c *CtxMsg) Header() Header { return *c.in.hdr }

// Complete ends the message: the target events (PUT, or PUT with fail as
// its ni_fail_type) go to the PT's EQ, written now behind every posted DMA
// write issued so far (so visible no earlier than they are); the ack, if
// requested, is sent once those writes are visible. The context calls it
// after its completion handler's last DMA was issued.
func (c *CtxMsg) Complete(fail FailType) {
	n, m := c.n, c.in
	if t := m.hdr.Task; fail == FailOK && (t == nil || !t.Xtq) {
		landed := max(n.e.Now(), n.upVis) // the handler's writes
		n.targetIssued(m)                 // behind them (targetIssued)
		n.e.At(landed, func() { n.targetLanded(m) })
		return
	}
	if fail == FailOK { // an XTQ task: its procedure reads the command back
		n.afterWrites(func() { n.targetComplete(m) })
		return
	}
	// A failure event reports no data of its own; it is written now, behind
	// the handler's writes as every posted write is, and the nack leaves
	// once they are visible.
	m.fail = fail
	landed := max(n.e.Now(), n.upVis)
	n.postEvent(n.pts[m.me.pt].eq, n.targetEvent(EventPut, m.me, m.src, m.hdr, m.mlength, m.dest, fail))
	n.e.At(landed, func() { n.respond(m, nil) })
}

// Resume restarts an inbound engine stalled by a context that refused a
// packet: held packets are delivered again in arrival order until one is
// refused again.
func (n *NIC) Resume() {
	if !n.rxStalled {
		return
	}
	held := n.rxHeld
	n.rxHeld, n.rxStalled = nil, false
	for i, pk := range held {
		n.deliver(pk)
		if n.rxStalled {
			n.rxHeld = append(n.rxHeld, held[i+1:]...)
			return
		}
	}
}

// Stalled reports whether the inbound engine is stalled by a full context.
func (n *NIC) Stalled() bool { return n.rxStalled }

// Link returns the NIC's PCIe attachment.
func (n *NIC) Link() *pcie.Link { return n.link }

// Engine returns the engine the NIC runs on.
func (n *NIC) Engine() *sim.Engine { return n.e }

// MaxPayload returns the largest packet payload.
func (n *NIC) MaxPayload() unit.Bytes { return n.maxPayload }

// PostWrite issues now a posted DMA write over the NIC's link that occupies
// wire bytes of link time (a sPIN DMA engine's TLP, overheads included),
// keeping visibility in issue order with every other NIC write, and calls
// fn when it is visible. It returns when the write has left the NIC.
func (n *NIC) PostWrite(wire unit.Bytes, fn func()) (left sim.Time) {
	left, vis := n.link.PostedWrite(pcieUp, n.e.Now(), wire)
	vis = max(vis, n.upVis)
	n.upVis = vis
	n.dmaBegin(1)
	n.e.At(vis, func() { n.dmaEnd(1); fn() })
	return left
}

// HostRead issues now a DMA read of l bytes of host memory (split into
// MaxReadReq requests) and calls fn when the data is on the NIC.
func (n *NIC) HostRead(a mem.Addr, l uint64, fn func()) {
	done, k := n.dmaRead(a, l)
	n.e.At(done, func() { n.dmaEnd(k); fn() })
}

// offerCtx hands a put packet to its ME's execution context; false means
// the inbound engine stalled on it.
func (n *NIC) offerCtx(m *inMsg, pk *Packet) bool {
	if m.ctx == nil {
		m.ctx = &CtxMsg{n: n, in: m}
	}
	pk.ready() // the context reads the payload from here on
	ok := m.me.me.Ctx.Arrive(m.ctx, CtxPacket{Index: pk.Index, Offset: pk.Offset, Len: pk.Len, Data: pk.Data, Last: pk.Last})
	if !ok {
		n.rxStalled = true
		n.rxHeld = append(n.rxHeld, pk)
	}
	return ok
}
