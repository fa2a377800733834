package stream

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/hw/peer"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/sim"
)

// Stream is an in-order queue of GPU work owned by one host thread.
type Stream struct {
	t   *cpu.Thread
	g   *gpu.GPU
	nic *nic.NIC
	sw  cost.Spec
	ops int

	writeIndex mem.Addr // the queue's write index, 0 until the first packet
	readIndex  mem.Addr // the queue's read index the CP advances, 0 until the first packet

	lastTrigger sim.Time
	lastCopy    sim.Time // when the CP last handed peer copies to the copy engines

	// The operations enqueued and not yet run, in order, as small values:
	// a GDS host enqueues its whole schedule ahead of the CP (thousands of
	// operations per node at a thousand nodes), so an operation is a few
	// words, not a closure. The ones that carry a function or a list keep
	// it in payloads, in the same order.
	pending  sim.FIFO[op]
	payloads sim.FIFO[any]
	progNext int    // the next operation of the Program at the head of pending
	submit   func() // the doorbell reaching the CP: one GPU queue entry for the next operation
	runNext  gpu.Op // the CP runs the pending head

	// Completion signals come from a pool, as in a GPU runtime: a kernel's
	// word goes back once the host has seen it (Wait) and the next launch
	// resets it, so a host that launches and waits for a kernel per step
	// (HDN: 2(n−1) steps per node) holds a few words, not one allocation
	// and one watched line per kernel.
	freeSignals sim.FreeList[mem.Addr]
	signalRun   map[mem.Addr]signalUse

	peer *peer.Port // the GPU's copy engines to the other GPUs of its node (nil: none)
}

// signalUse is the run that last used a pooled signal word, and whether
// the host has seen it (the word is back in the pool).
type signalUse struct {
	run  *gpu.Run
	seen bool
}

// opKind is what a queued operation does when the CP reaches it.
type opKind uint8

const (
	opDispatch   opKind = iota // payload gpu.Op: a kernel dispatch made at enqueue (Launch)
	opTrigger                  // ring the doorbell of deferred command v
	opTriggers                 // payload []nic.DeferredID
	opWaitCond                 // payload func(uint64) bool on the word at a
	opMarker                   // store v at a
	opProgram                  // payload Program: its operations, one per CP queue entry
	opPeerCopy                 // payload peerCopy: a copy engine moves bytes to a peer GPU
	opPeerCopies               // payload []PeerCopy: the copy engines move a batch at once
)

// PeerCopy is one copy of a CopyPeers batch: n bytes from Src here to Dst
// on the GPU at endpoint PE.
type PeerCopy struct {
	PE       int
	Dst, Src mem.Addr
	N        uint64
}

// peerCopy is a CopyPeer operation's arguments.
type peerCopy struct {
	pe       int
	dst, src mem.Addr
	n        uint64
}

// op is one queued operation; what names a wait in deadlock reports.
type op struct {
	a    mem.Addr
	v    uint64
	what string
	kind opKind
}

// LastNicTrigger returns when the CP last finished ringing NIC doorbells
// for a NicTrigger operation (zero if never).
func (s *Stream) LastNicTrigger() sim.Time { return s.lastTrigger }

// LastPeerCopy returns when the CP last handed a CopyPeer or CopyPeers
// operation to the copy engines (zero if never).
func (s *Stream) LastPeerCopy() sim.Time { return s.lastCopy }

// New returns a stream on g driven by host thread t; n is the NIC whose
// pre-posted commands NicTrigger operations activate (may be nil).
func New(t *cpu.Thread, g *gpu.GPU, n *nic.NIC, sw cost.Spec) *Stream {
	s := &Stream{t: t, g: g, nic: n, sw: sw}
	s.runNext = s.run
	s.submit = func() { g.Submit(s.runNext) }
	return s
}

// GPU returns the device the stream feeds.
func (s *Stream) GPU() *gpu.GPU { return s.g }

// enqueue queues o (with payload p when o's kind has one) and charges
// the host for building its packet and ringing the doorbell.
func (s *Stream) enqueue(instr int, o op, p any) {
	s.pending.Push(o)
	if p != nil {
		s.payloads.Push(p)
	}
	s.charge(instr)
}

// charge is the host building one packet (instr instructions), reserving
// its slot (the write index's read-modify-write, then the room check's load
// of the read index the CP advances: a miss, after the locked add, which no
// later load passes), storing the packet (a host store, visible after the
// host's miss latency and after the thread's earlier stores, as HSA's
// HostEnqueue stores it; not the GPU's memory latency, which no host store
// pays) and ringing the doorbell: an uncached store that leaves the core
// once the packet's store is visible and reaches the CP the GPU's
// host-doorbell latency later (on an APU node an on-chip MMIO store,
// soc.mmio_latency), giving it one queue entry: the next pending
// operation.
func (s *Stream) charge(instr int) {
	defer s.t.Span("stream enqueue", s.t.Now())
	s.t.Instr(instr)
	if s.writeIndex == 0 {
		s.writeIndex = s.g.Mem().AllocData(mem.Host, 8, "aql.write_index")
	}
	s.t.RMW(s.writeIndex, 1)
	if s.readIndex == 0 {
		s.readIndex = s.g.Mem().AllocData(mem.Host, 8, "aql.read_index")
	}
	s.t.Load(s.readIndex)
	s.ops++
	s.t.StoreMiss(nil)
	s.t.StoreUncached(s.g.HostDoorbell(), s.submit)
}

// run is the CP reaching the oldest pending operation: the doorbells of
// the operations reach the CP in enqueue order and it serves its queue in
// order, so the head is the operation this queue entry stands for.
func (s *Stream) run(cp *sim.Proc) {
	if s.pending.Front().kind == opProgram {
		s.runProgramOp(cp)
		return
	}
	o := s.pending.Pop()
	switch o.kind {
	case opDispatch:
		s.payloads.Pop().(gpu.Op)(cp)
	case opTrigger:
		s.nic.ActivateDoorbell(cp, nic.DeferredID(o.v))
		s.lastTrigger = cp.Now()
	case opTriggers:
		for _, id := range s.payloads.Pop().([]nic.DeferredID) {
			s.nic.ActivateDoorbell(cp, id)
		}
		s.lastTrigger = cp.Now()
	case opWaitCond:
		s.waitValue(cp, o.a, o.what, s.payloads.Pop().(func(uint64) bool))
	case opMarker:
		s.g.Mem().Store64(o.a, o.v)
	case opPeerCopy:
		c := s.payloads.Pop().(peerCopy)
		landed := false
		var sig sim.Signal
		s.lastCopy = cp.Now()
		s.peer.Copy(s.peer.Self(), c.pe, c.dst, c.src, c.n, func() { landed = true; sig.Notify() })
		cp.WaitUntil(&sig, fmt.Sprintf("peer copy to GPU %d", c.pe), func() bool { return landed })
	case opPeerCopies:
		cs := s.payloads.Pop().([]PeerCopy)
		left := len(cs)
		var sig sim.Signal
		s.lastCopy = cp.Now()
		for _, c := range cs {
			s.peer.Copy(s.peer.Self(), c.PE, c.Dst, c.Src, c.N, func() { left--; sig.Notify() })
		}
		cp.WaitUntil(&sig, fmt.Sprintf("batch of %d peer copies", len(cs)), func() bool { return left == 0 })
	}
}

// UsePeer gives the stream its GPU's copy engines to the other GPUs of
// its node (p nil: none, with one GPU per node).
func (s *Stream) UsePeer(p *peer.Port) { s.peer = p }

// ReachesPeer reports whether CopyPeer can reach the GPU at endpoint pe.
func (s *Stream) ReachesPeer(pe int) bool { return s.peer != nil && s.peer.Reaches(pe) }

// CopyPeer enqueues a peer copy (cudaMemcpyPeerAsync on the stream): when
// it reaches the head, the CP hands it to one of the GPU's copy engines,
// which moves n bytes from src here to dst on the GPU at endpoint pe over
// the node's GPU fabric; later operations start once it has landed.
func (s *Stream) CopyPeer(pe int, dst, src mem.Addr, n uint64) {
	if !s.ReachesPeer(pe) {
		panic(fmt.Sprintf("stream on %s: CopyPeer to endpoint %d, not a GPU of this node", s.g.Name(), pe))
	}
	s.enqueue(s.sw.AQLBuild, op{kind: opPeerCopy}, peerCopy{pe: pe, dst: dst, src: src, n: n})
}

// CopyPeers enqueues a batch of peer copies as one stream operation
// (cudaMemcpyBatchAsync, CUDA 12.8): when it reaches the head, the CP
// hands every copy to the GPU's copy engines at once (each engine takes
// its copies in FIFO order, so node.copy_engines of them move at a time),
// and later operations start once all have landed. Copies to several
// peers then overlap, as CopyPeer calls in one stream do not.
func (s *Stream) CopyPeers(cs []PeerCopy) {
	if len(cs) == 0 {
		return
	}
	for _, c := range cs {
		if !s.ReachesPeer(c.PE) {
			panic(fmt.Sprintf("stream on %s: CopyPeers to endpoint %d, not a GPU of this node", s.g.Name(), c.PE))
		}
	}
	s.enqueue(s.sw.AQLBuild, op{kind: opPeerCopies}, cs)
}

// Launch enqueues kernel k and returns its Run (timeline and completion
// signal). The host does not wait.
func (s *Stream) Launch(k gpu.Kernel) *gpu.Run {
	sig := s.signal()
	dispatch, run := s.g.DispatchOpSignal(k, sig)
	s.signalRun[sig] = signalUse{run: run}
	s.enqueue(s.sw.KernelLaunch, op{kind: opDispatch}, dispatch)
	return run
}

// signal takes a completion signal word from the pool, reset to 0 (the
// store is part of the launch's sw.kernel_launch), or allocates one.
func (s *Stream) signal() mem.Addr {
	m := s.g.Mem()
	if a, ok := s.freeSignals.Get(); ok {
		m.Store64(a, 0)
		return a
	}
	if s.signalRun == nil {
		s.signalRun = map[mem.Addr]signalUse{}
	}
	return m.AllocData(mem.GPU, 8, "stream.signal")
}

// Wait blocks the host thread until run's completion signal is seen. The
// signal word of a run this stream launched then goes back to its pool:
// waiting again for the same run is fine until the next launch reuses it,
// and a bug (a panic) after.
func (s *Stream) Wait(run *gpu.Run) {
	defer s.t.Span("wait kernel", s.t.Now())
	u, pooled := s.signalRun[run.Signal]
	if pooled && u.run != run {
		panic(fmt.Sprintf("stream on %s: Wait for kernel %s, already waited for, whose signal a later launch reuses", s.g.Name(), run.Kernel.Name))
	}
	s.waitWord(run.Signal, "completion of kernel "+run.Kernel.Name)
	if pooled && !u.seen {
		s.signalRun[run.Signal] = signalUse{run: run, seen: true}
		s.freeSignals.Put(run.Signal)
	}
}

// waitWord waits for the word at a to become non-zero as sw.kernel_wait
// says: spinning on it or blocked until it is written.
func (s *Stream) waitWord(a mem.Addr, what string) {
	nonZero := func(v uint64) bool { return v != 0 }
	if s.sw.KernelWait == cost.WaitBlock {
		s.t.BlockWord(a, what, nonZero)
		return
	}
	s.t.WaitWord(a, what, nonZero)
}

// NicTrigger enqueues a GDS NIC trigger: when it reaches the head, the CP
// performs a system-scope release and rings the doorbell of the command the
// host pre-posted as id.
func (s *Stream) NicTrigger(ids ...nic.DeferredID) {
	if len(ids) == 1 {
		s.enqueue(s.sw.AQLBuild, op{kind: opTrigger, v: uint64(ids[0])}, nil)
		return
	}
	s.enqueue(s.sw.AQLBuild, op{kind: opTriggers}, ids)
}

// WaitValue enqueues a GDS wait: the CP polls the word at a every
// gpu.cp_wait_poll until cond holds, before starting later operations.
func (s *Stream) WaitValue(a mem.Addr, what string, cond func(uint64) bool) {
	s.enqueue(s.sw.AQLBuild, op{kind: opWaitCond, a: a, what: what}, cond)
}

// waitValue is a wait operation on the CP: a read of the word after the
// memory latency, then, until cond holds, a re-read at every poll tick.
func (s *Stream) waitValue(cp *sim.Proc, a mem.Addr, what string, cond func(uint64) bool) {
	m := s.g.Mem()
	lat, poll := s.g.DMALatency(), s.g.Spec().WaitPoll
	start := cp.Now()
	cp.Sleep(lat)
	if cond(m.Load64(a)) {
		return
	}
	cp.WaitUntil(m.Watch(a), what, func() bool { return cond(m.Load64(a)) })
	// The change is seen at the next poll tick.
	ticks := (cp.Now() - start + poll - 1) / poll
	cp.SleepUntil(start + ticks*poll + lat)
}

// Marker enqueues an operation that sets the word at a to v when the
// stream reaches it, for the host to synchronize on everything before it.
func (s *Stream) Marker(a mem.Addr, v uint64) {
	s.enqueue(s.sw.AQLBuild, op{kind: opMarker, a: a, v: v}, nil)
}

// Synchronize blocks the host thread until every operation enqueued so far
// has completed (a marker operation at the end of the queue).
func (s *Stream) Synchronize() {
	m := s.g.Mem()
	word := m.AllocData(mem.Host, 8, "stream.sync")
	s.Marker(word, 1)
	s.waitWord(word, "stream synchronize")
}
