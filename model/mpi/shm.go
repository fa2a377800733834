package mpi

import (
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/hw/peer"
)

// UseSHM lets the rank exchange every message with the other ranks of its
// node through shared host memory instead of the NIC (mpi.shm), as Open
// MPI's sm (vader) BTL and UCX's shared-memory transports do:
//
//   - a message up to mpi.eager_max is copied by the sender's core into a
//     shared cell (the send is then complete) and announced by a flag
//     store; the receiver's library matches it against its posted
//     receives and unexpected list (the same lists and rules as the NIC's
//     matching, nic.NIC.LocalPut) on its next progress and its core copies
//     it out of the cell;
//   - a larger message sends a zero-byte header the same way; on matching
//     it, the receiver copies the data straight from the sender's buffer —
//     by its core (single copy, as CMA or XPMEM) for host buffers, by its
//     GPU's copy engine for two GPU buffers (mpi.ipc) — and a flag store
//     completes the send.
//
// p is the rank's GPU's peer port, which says which ranks share the node;
// reg the run's registry of the node's ranks and exposed buffers (shared
// with UseIPC). Nothing changes with one GPU per node.
func (c *Comm) UseSHM(p *peer.Port, reg *IPC) {
	if p == nil || reg == nil || !c.spec.SHM {
		return
	}
	c.peer, c.shm = p, reg
	reg.comms[c.rank] = c
	// The cells this rank's core copies into (sends) and out of
	// (receives): one each, reused, so the cache model sees them warm
	// as a FIFO's few cells are.
	c.shmCell = c.mem.AllocData(mem.Host, uint64(max(c.spec.EagerMax, 64)), "mpi.shm.cell")
}

// shmReaches reports whether messages to or from rank peer go through
// shared memory.
func (c *Comm) shmReaches(peer int) bool { return c.shm != nil && c.peer.Reaches(peer) }

// shmCopyIn is the sender's copy of an eager send's n bytes into its cell.
func (c *Comm) shmCopyIn(r *Request, n uint64) []cpu.Access {
	return []cpu.Access{{Addr: r.buf, Len: n}, {Addr: c.shmCell, Len: n, Write: true}}
}

// shmDeliver announces send r (its command cmd) to rank dst once its flag
// store is visible: the receiver's library then matches it. An eager send
// is complete once copied; a rendezvous header's send completes when the
// receiver has copied the data (copySHM).
func (c *Comm) shmDeliver(r *Request, cmd nic.Command, dst int) {
	var data []byte
	if cmd.Length > 0 {
		if b := c.mem.Bytes(r.buf, int(cmd.Length)); b != nil {
			data = append([]byte(nil), b...)
		}
	}
	if cmd.HdrData&rndvFlag == 0 {
		r.done = true // eager: the data is in the cell
	}
	to := c.shm.comms[dst]
	vis := c.t.StoreMiss(nil)
	rank := c.rank
	c.t.Engine().At(vis, func() {
		if !to.nic.LocalPut(rank, data, cmd) {
			panic("mpi: shared-memory message found no entry (an overflow buffer is always posted)")
		}
	})
}

// local reports whether event ev came through shared memory.
func (c *Comm) local(ev nic.Event) bool { return c.shmReaches(ev.Initiator) }

// shmSource returns the exposed send matching rendezvous header ev that
// the receiver's core copies from (nil: not a shared-memory rendezvous),
// removing it from the registry.
func (c *Comm) shmSource(ev nic.Event) *ipcSend {
	if !c.local(ev) {
		return nil
	}
	key := ipcKey{ev.Initiator, (ev.HdrData >> lenBits) & cookieMask}
	s, ok := c.shm.sends[key]
	if !ok {
		return nil
	}
	delete(c.shm.sends, key)
	return s
}

// shmCopy copies receive r's data from the sender's buffer of s (the
// functional bytes; the caller charges the core's copy, shmCopyAccess).
func (c *Comm) shmCopy(r *Request, s *ipcSend) {
	if src := s.c.mem.Bytes(s.r.buf, int(r.got)); src != nil {
		if dst := c.mem.Bytes(r.buf, int(r.got)); dst != nil {
			copy(dst, src)
		}
	}
	c.mem.Touch(r.buf, int(r.got))
	c.stats.SHMCopies++
}

// shmCopyAccess is the receiver's single copy of r.got bytes: the
// sender's buffer read (through the node's shared memory), its own
// written.
func (c *Comm) shmCopyAccess(r *Request) []cpu.Access {
	return []cpu.Access{{Addr: r.buf, Len: r.got}, {Addr: r.buf, Len: r.got, Write: true}}
}

// shmDone completes receive r and, once the receiver's completion flag
// store is visible to it, the send of s.
func (c *Comm) shmDone(r *Request, s *ipcSend) {
	r.done = true
	vis := c.t.StoreMiss(nil)
	c.t.Engine().At(vis, func() {
		s.c.nic.MEUnlink(s.r.entry)
		s.r.done = true
		s.c.finish()
	})
}

// copyOutAccess is the receiver's copy of an eager message of n bytes out
// of its shared cell into r's buffer.
func (c *Comm) copyOutAccess(r *Request, n uint64) []cpu.Access {
	return []cpu.Access{{Addr: c.shmCell, Len: n}, {Addr: r.buf, Len: n, Write: true}}
}
