package shmem

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/peer"
	"github.com/gpunetsim/gpunetsim/sim"
)

// peerChannel serves a context's operations on PEs of other GPUs of the
// caller's node by the work-group's own loads, stores and atomics over
// the node's GPU fabric (NVSHMEM's P2P transport, ROC_SHMEM's IPC
// transport: the peer's symmetric heap is mapped into this GPU's address
// space), and hands every other operation to the backend. A put reads its
// source through this GPU's L2 and memory (the loads of the copy loop)
// and returns once the stores are issued; quiet and fence wait until
// every peer store and atomic has landed, then complete the backend's
// operations too.
type peerChannel struct {
	inner   Channel
	d       *Device
	wg      *gpu.WG
	port    *peer.Port
	pending int        // peer stores and atomics not yet landed
	landed  sim.Signal // notified as each lands
}

func (c *peerChannel) Close() { c.inner.Close() }

func (c *peerChannel) Submit(r *Request) error {
	if r.Op == OpFence || r.Op == OpQuiet {
		c.drain()
		return c.inner.Submit(r)
	}
	if !c.port.Reaches(r.PE) {
		return c.inner.Submit(r)
	}
	target := c.d.rt.team.devs[r.PE]
	if target == nil {
		return fmt.Errorf("%w: PE %d has no device", ErrFailed, r.PE)
	}
	c.d.stats.Peer++
	sym := r.Dst
	if r.Op == OpGet {
		sym = r.Src
	}
	remote, ok := c.d.heap.translate(sym, r.Len, target)
	if !ok {
		return fmt.Errorf("%w: PE %d has no such symmetric object", ErrFailed, r.PE)
	}
	switch r.Op {
	case OpPut:
		// The copy loop's loads see the work-group's own earlier stores;
		// here they are read from memory, so those stores are released
		// first (a system-scope release, as the queued backends' post).
		c.wg.Release(gpu.System)
		c.wg.StreamLines(r.Src, r.Len)
		c.pending++
		c.port.Write(r.PE, remote, r.Src, r.Len, c.land)
	case OpP:
		c.pending++
		c.port.WriteWord(r.PE, remote, r.Value, int(r.Len), c.land)
	case OpGet:
		done := false
		c.port.Read(r.PE, r.Dst, remote, r.Len, func() { done = true; c.landed.Notify() })
		c.wg.WaitUntil(&c.landed, fmt.Sprintf("peer get from PE %d", r.PE), func() bool { return done })
		c.wg.Acquire(gpu.System) // the loaded bytes, not stale cached lines, are what the work-group reads next
	default: // atomics
		done := false
		apply := func(old uint64) uint64 { return applyAMO(r.Op, old, r.Value, r.Cond) }
		c.pending++
		c.port.Atomic(r.PE, remote, int(r.Len), apply, func(old uint64) {
			r.Result, done = old, true
			c.land()
		})
		if r.Op.fetches() {
			c.wg.WaitUntil(&c.landed, fmt.Sprintf("peer atomic on PE %d", r.PE), func() bool { return done })
		}
	}
	return nil
}

// land counts a peer store or atomic as landed.
func (c *peerChannel) land() {
	c.pending--
	c.landed.Notify()
}

// drain waits until every peer store and atomic of the context landed.
func (c *peerChannel) drain() {
	c.wg.WaitUntil(&c.landed, "peer quiet", func() bool { return c.pending == 0 })
}
