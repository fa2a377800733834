package rdma

import (
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/model/cost"
)

// Endpoint is one node's one-sided interface, driven by host thread T.
type Endpoint struct {
	t   *cpu.Thread
	nic *nic.NIC
	sw  cost.Spec
	pt  int
}

// New returns the endpoint of thread t on NIC n with a fresh portal table
// for exposed regions. Every node must create its endpoints in the same
// order so the portal table indices agree.
func New(t *cpu.Thread, n *nic.NIC, sw cost.Spec) *Endpoint {
	return &Endpoint{t: t, nic: n, sw: sw, pt: n.PTAlloc(nil, false)}
}

// PT returns the portal table index remote puts must name.
func (ep *Endpoint) PT() int { return ep.pt }

// Expose makes [base, base+length) writable and readable by remote puts and
// gets that give an offset into it.
func (ep *Endpoint) Expose(base mem.Addr, length uint64) {
	ep.t.Instr(ep.sw.PortalsPost)
	ep.nic.MEAppend(ep.pt, nic.ME{Start: base, Length: length, MatchID: nic.AnyID, IgnoreBits: ^uint64(0),
		Options: nic.MEOpPut | nic.MEOpGet | nic.MEEventDisable}, nic.Priority)
}

// Deferred names a put posted with Prepost.
type Deferred = nic.DeferredID

// Put describes a one-sided put into a peer's exposed region.
type Put struct {
	Src          mem.Addr
	Length       uint64
	Target       int
	RemoteOffset uint64
}

func (ep *Endpoint) command(p Put) nic.Command {
	return nic.Command{Op: nic.CmdPut, MD: &nic.MD{Start: p.Src, Length: p.Length}, Length: p.Length,
		Target: p.Target, PT: ep.pt, RemoteOffset: p.RemoteOffset, Ack: nic.NoAckReq}
}

// Put builds the command and rings the NIC doorbell now.
func (ep *Endpoint) Put(p Put) {
	ep.t.Instr(ep.sw.PortalsPost)
	ep.nic.Doorbell(ep.t.Proc, ep.command(p))
}

// Prepost builds the command and posts it to the NIC without activating it
// (GDS); the GPU's CP activates it later with a stream NIC trigger.
func (ep *Endpoint) Prepost(p Put) Deferred {
	defer ep.t.Span("prepost put", ep.t.Now())
	ep.t.Instr(ep.sw.PortalsPost)
	return ep.nic.PostDeferred(ep.t.Proc, ep.command(p))
}

// PrepostBlock preposts count puts, put(0) … put(count−1), as count
// Prepost calls would (the host is charged for each in turn), and returns
// the id of put(0); put(i) has id first+i. The NIC keeps put rather than
// count descriptors (nic.PostDeferredBlock), so put must return the same
// put for the same i every time.
func (ep *Endpoint) PrepostBlock(count int, put func(i int) Put) Deferred {
	for range count {
		start := ep.t.Now()
		ep.t.Instr(ep.sw.PortalsPost)
		ep.t.Span("prepost put", start)
	}
	return ep.nic.PostDeferredBlock(ep.t.Proc, count, func(i int) nic.Command { return ep.command(put(i)) })
}
