package mpi

import (
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/hw/peer"
)

// IPC is the run's registry of rendezvous send buffers in GPU memory that
// the other GPUs of the sender's node may copy from: what a GPU-aware MPI
// exchanges as CUDA or HIP IPC handles in its rendezvous header (Open
// MPI's smcuda BTL, UCX's cuda_ipc transport). One IPC serves every rank
// of a run.
type IPC struct {
	sends map[ipcKey]*ipcSend
	comms map[int]*Comm
}

type ipcKey struct {
	rank   int
	cookie uint64
}

type ipcSend struct {
	c *Comm
	r *Request
}

// NewIPC returns an empty registry.
func NewIPC() *IPC { return &IPC{sends: map[ipcKey]*ipcSend{}, comms: map[int]*Comm{}} }

// UseIPC lets the rank move rendezvous messages between GPU buffers of
// two GPUs of one node by a copy engine over the node's GPU fabric
// instead of the NIC's Get: the receiver, on matching the rendezvous
// header, has its GPU's copy engine pull the data from the sender's
// buffer, and both requests complete when the copy has landed (the
// sender's as its completion message arrives). Matching, the header and
// eager messages still take the NIC path. p is the rank's GPU's peer
// port (nil with one GPU per node: nothing changes).
func (c *Comm) UseIPC(p *peer.Port, reg *IPC) {
	if p == nil || reg == nil || !c.spec.IPC {
		return
	}
	c.peer, c.ipc = p, reg
	reg.comms[c.rank] = c
}

// ipcReaches reports whether send r to dst takes the copy path: its
// buffer is GPU memory and dst a GPU of this node. Such a message above
// the eager limit is sent as a zero-byte rendezvous header whatever the
// long protocol.
func (c *Comm) ipcReaches(r *Request, dst int) bool {
	return c.ipc != nil && c.peer.Reaches(dst) && c.mem.PoolOf(r.buf) == mem.GPU
}

// exposeIPC registers rendezvous send r (its cookie c.cookie) for the
// copy path when ipcReaches.
func (c *Comm) exposeIPC(r *Request, dst int) {
	switch {
	case c.ipcReaches(r, dst):
		c.ipc.sends[ipcKey{c.rank, c.cookie}] = &ipcSend{c: c, r: r}
	case c.shmReaches(dst): // the receiver's core copies from it (shm.go)
		c.shm.sends[ipcKey{c.rank, c.cookie}] = &ipcSend{c: c, r: r}
	}
}

// copyIPC starts the copy of rendezvous receive r, whose header ev has
// matched, when its sender exposed the buffer for it; it reports whether
// it did (else the NIC's Get moves the data).
func (c *Comm) copyIPC(r *Request, ev nic.Event) bool {
	if c.ipc == nil || c.mem.PoolOf(r.buf) != mem.GPU {
		return false
	}
	key := ipcKey{ev.Initiator, (ev.HdrData >> lenBits) & cookieMask}
	s, ok := c.ipc.sends[key]
	if !ok || s.c.mem.PoolOf(s.r.buf) != mem.GPU {
		return false
	}
	delete(c.ipc.sends, key)
	c.stats.IPCCopies++
	c.peer.Copy(ev.Initiator, c.rank, r.buf, s.r.buf, r.got, func() {
		r.done = true
		c.finish()
		s.c.nic.MEUnlink(s.r.entry)
		s.r.done = true
		s.c.finish()
	})
	return true
}

// finish records a request completed outside the event queue and wakes
// the rank's progress, which would otherwise wait for an event.
func (c *Comm) finish() {
	c.finished++
	c.eq.Signal().Notify()
}

// takeFinished reports (once) whether a request completed outside the
// event queue since the last call.
func (c *Comm) takeFinished() bool {
	if c.finished == 0 {
		return false
	}
	c.finished = 0
	return true
}
