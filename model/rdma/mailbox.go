package rdma

import (
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
)

// Mailbox is a receive buffer posted on a portal table of its own with an
// event queue: a put into it raises a PUT event the owning host thread
// polls. It is the thin RDMA layer of the XTQ chapter's remote-task-spawn
// microbenchmark (RdmaPostBuffer, then an event loop): a Portals put
// matched against a posted entry, no MPI matching path.
type Mailbox struct {
	ep *Endpoint
	pt int
	eq *nic.EQ
}

// NewMailbox returns an empty mailbox of the endpoint. Every node must
// create its mailboxes in the same order, so that a mailbox's portal
// index (PT) is the same on every node.
func (ep *Endpoint) NewMailbox() *Mailbox {
	m := ep.nic.Memory()
	spec := ep.nic.Spec()
	ring := m.AllocData(mem.Host, uint64(spec.EQSize)*uint64(spec.EventSize), "rdma.mailbox.eq")
	eq := ep.nic.NewEQ(0, ring)
	return &Mailbox{ep: ep, pt: ep.nic.PTAlloc(eq, false), eq: eq}
}

// PT returns the portal index a sender names to reach the mailbox.
func (mb *Mailbox) PT() int { return mb.pt }

// Post posts [buf, buf+length) to receive one message.
func (mb *Mailbox) Post(buf mem.Addr, length uint64) {
	mb.ep.t.Instr(mb.ep.sw.PortalsPost)
	mb.ep.nic.MEAppend(mb.pt, nic.ME{Start: buf, Length: length, MatchID: nic.AnyID, IgnoreBits: ^uint64(0),
		Options: nic.MEOpPut}, nic.Priority)
}

// Send puts length bytes at src into the mailbox of index pt on node
// target: a Portals put command and its doorbell.
func (ep *Endpoint) Send(target, pt int, src mem.Addr, length uint64) {
	defer ep.t.Span("rdma send", ep.t.Now())
	ep.t.Instr(ep.sw.PortalsPost)
	ep.nic.Doorbell(ep.t.Proc, nic.Command{Op: nic.CmdPut, MD: &nic.MD{Start: src, Length: length,
		Options: nic.MDEventSendDisable | nic.MDEventSuccessDisable}, Length: length, Target: target, PT: pt, Ack: nic.NoAckReq})
}

// Wait polls the mailbox's events until a message arrives and returns its
// PUT event: the poll that sees the new event misses in the cache (a
// memory access), then the event is dequeued and dispatched.
func (mb *Mailbox) Wait(what string) nic.Event {
	t := mb.ep.t
	defer t.Span("wait "+what, t.Now())
	for {
		if ev, ok := mb.eq.Get(); ok {
			t.Instr(mb.ep.sw.EventDispatch)
			if ev.Type == nic.EventPut {
				return ev
			}
			continue
		}
		t.WaitUntil(mb.eq.Signal(), what, func() bool { return mb.eq.Len() > 0 })
		t.Sleep(t.CPU().Spec().MissLatency())
	}
}
