package nic

import "github.com/gpunetsim/gpunetsim/sim"

// hostOp is what a host command does on the NIC once it has arrived
// (hostPost).
type hostOp interface{ exec() }

// issueOp is the action of a command the host or the NIC itself posts
// (Doorbell, Execute): issue it. The NIC reuses them (opFree): a closure
// over the command per message was a tenth of what a two-sided run
// allocated.
type issueOp struct {
	n   *NIC
	cmd Command
}

// issueOpOf returns an issueOp for cmd.
func (n *NIC) issueOpOf(cmd Command) *issueOp {
	o, ok := n.opFree.Get()
	if !ok {
		o = &issueOp{n: n}
	}
	o.cmd = cmd
	return o
}

// exec issues the command, the op reused from then on.
func (o *issueOp) exec() {
	n, cmd := o.n, o.cmd
	o.cmd = Command{}
	n.opFree.Put(o)
	n.issue(cmd)
}

// Handle is exec as an event (Execute).
func (o *issueOp) Handle(uint64) { o.exec() }

// funcOp is a host command's action as a function.
type funcOp func()

func (f funcOp) exec() { f() }

// hostCmd is a host command between its doorbell and its execution: the
// event at the doorbell's visibility (Handle(cmdVisible)) and the one
// CmdLatency after the descriptor fetch (Handle(cmdExec)). The NIC reuses
// them (cmdFree), so a command costs no allocation of its own: a GPU-TN
// ring registers 2(n−1) triggered puts per slice and node.
type hostCmd struct {
	n     *NIC
	what  string
	fetch bool
	start sim.Time
	k     int // DMA requests of the fetch
	op    hostOp
}

// The two events of a hostCmd.
const (
	cmdVisible = iota
	cmdExec
)

// hostPost models a host command: the MMIO doorbell (or the whole
// descriptor with InlineCmd) as a posted write over the NIC's link; p
// sleeps until its side is done. When the write is visible the NIC fetches
// the CmdSize descriptor by a DMA read (unless InlineCmd or !fetch), waits
// CmdLatency, then runs fn.
func (n *NIC) hostPost(p *sim.Proc, what string, fetch bool, fn func()) {
	n.hostPostOp(p, what, fetch, funcOp(fn))
}

// hostPostOp is hostPost running op.
func (n *NIC) hostPostOp(p *sim.Proc, what string, fetch bool, op hostOp) {
	size := doorbellSize
	if n.spec.InlineCmd {
		size = n.spec.CmdSize
	}
	sf, vis := n.link.PostedWrite(pcieDown, p.Now(), size)
	c, ok := n.cmdFree.Get()
	if !ok {
		c = &hostCmd{n: n}
	}
	c.what, c.fetch, c.op = what, fetch, op
	n.e.AtH(vis, c, cmdVisible)
	p.SleepUntil(sf)
}

// Handle runs the command's visibility (fetch and CmdLatency) or its
// execution.
func (c *hostCmd) Handle(ev uint64) {
	n := c.n
	if ev == cmdVisible {
		c.start = n.e.Now()
		t := c.start
		c.k = 0
		if c.fetch && !n.spec.InlineCmd {
			t = n.link.Read(pcieUp, c.start, n.spec.CmdSize, false)
			c.k = 1
			n.dmaBegin(1)
		}
		n.e.AtH(t+n.spec.CmdLatency, c, cmdExec)
		return
	}
	n.dmaEnd(c.k)
	n.span(c.what, c.start, n.e.Now())
	op := c.op
	c.op = nil
	n.cmdFree.Put(c)
	op.exec()
}
