package nic

import (
	"fmt"
	"sort"

	"github.com/gpunetsim/gpunetsim/sim"
)

// deferredCmds holds the GDS commands posted but not yet activated: single
// commands by id, and blocks of consecutive ids whose commands a function
// of the index makes (PostDeferredBlock). A block keeps one bit per command
// instead of the command: a GDS ring allreduce pre-posts 2(n−1) puts per
// node, about 300 KB of descriptors per node at a thousand nodes.
type deferredCmds struct {
	single map[DeferredID]Command
	blocks []deferredBlock // by first id, ascending
	next   DeferredID      // the last id issued
}

// deferredBlock is count commands with ids first, first+1, …; command i is
// cmd(i). live has a set bit for every command not yet activated.
type deferredBlock struct {
	first DeferredID
	count int
	cmd   func(i int) Command
	live  []uint64
	left  int
}

// PostDeferred stores cmd on the NIC without activating it (GDS: the CPU
// prepares the descriptor; its host cost is the caller's) and returns its
// id for ActivateDoorbell. It costs p nothing.
func (n *NIC) PostDeferred(p *sim.Proc, cmd Command) DeferredID {
	n.check(cmd)
	d := &n.deferred
	if d.single == nil {
		d.single = map[DeferredID]Command{}
	}
	d.next++
	d.single[d.next] = cmd
	return d.next
}

// PostDeferredBlock stores count commands without activating them, with
// consecutive ids from the one returned: id first+i is cmd(i). It is
// count PostDeferred calls (every command is checked now, p is charged
// nothing) for a schedule whose descriptors follow from their index, such
// as a GDS ring's put per step: the NIC keeps cmd and a bit per command,
// and makes command i again when it is activated, so cmd must return the
// same command for the same i every time.
func (n *NIC) PostDeferredBlock(p *sim.Proc, count int, cmd func(i int) Command) DeferredID {
	if count < 1 {
		panic(fmt.Sprintf("%s: PostDeferredBlock of %d commands", n.name, count))
	}
	for i := range count {
		n.check(cmd(i))
	}
	d := &n.deferred
	b := deferredBlock{first: d.next + 1, count: count, cmd: cmd, live: make([]uint64, (count+63)/64), left: count}
	for i := range count {
		b.live[i/64] |= 1 << (i % 64)
	}
	d.blocks = append(d.blocks, b)
	d.next += DeferredID(count)
	return b.first
}

// ActivateDoorbell activates a deferred command from p (the GPU command
// processor's MMIO doorbell): a posted 8 B write over the NIC's link (p
// sleeps until its side is done), then CmdLatency and execution, no fetch.
// Each id activates once; an unknown id panics. Only the NIC's link is
// charged: in dGPU mode the GPU side of the path is the caller's.
func (n *NIC) ActivateDoorbell(p *sim.Proc, id DeferredID) {
	cmd, ok := n.deferred.take(id)
	if !ok {
		panic(fmt.Sprintf("%s: ActivateDoorbell(%d): no such deferred command", n.name, id))
	}
	n.hostPost(p, "activate", false, func() { n.issue(cmd) })
}

// take removes id's command and returns it (false: none posted or already
// activated). A block whose commands are all activated is dropped.
func (d *deferredCmds) take(id DeferredID) (Command, bool) {
	if cmd, ok := d.single[id]; ok {
		delete(d.single, id)
		return cmd, true
	}
	k := sort.Search(len(d.blocks), func(k int) bool { return d.blocks[k].first > id }) - 1
	if k < 0 {
		return Command{}, false
	}
	b := &d.blocks[k]
	i := int(id - b.first)
	if i >= b.count || b.live[i/64]&(1<<(i%64)) == 0 {
		return Command{}, false
	}
	b.live[i/64] &^= 1 << (i % 64)
	cmd := b.cmd(i)
	if b.left--; b.left == 0 {
		d.blocks = append(d.blocks[:k], d.blocks[k+1:]...)
	}
	return cmd, true
}
