package stream

import (
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/sim"
)

// WaitPollInterval is how often the CP re-reads the word of a wait-value
// operation ([DEFAULT] 100 ns, gpu-networking.md §5).
const WaitPollInterval = 100 * sim.Nanosecond

// Stream is an in-order queue of GPU work owned by one host thread.
type Stream struct {
	t   *cpu.Thread
	g   *gpu.GPU
	nic *nic.NIC
	sw  cost.Spec
	ops int

	writeIndex mem.Addr // the queue's write index, 0 until the first packet

	lastTrigger sim.Time
}

// LastNicTrigger returns when the CP last finished ringing NIC doorbells
// for a NicTrigger operation (zero if never).
func (s *Stream) LastNicTrigger() sim.Time { return s.lastTrigger }

// New returns a stream on g driven by host thread t; n is the NIC whose
// pre-posted commands NicTrigger operations activate (may be nil).
func New(t *cpu.Thread, g *gpu.GPU, n *nic.NIC, sw cost.Spec) *Stream {
	return &Stream{t: t, g: g, nic: n, sw: sw}
}

// GPU returns the device the stream feeds.
func (s *Stream) GPU() *gpu.GPU { return s.g }

// enqueue charges the host for building a packet and ringing the queue
// doorbell, and hands op to the CP when the doorbell lands.
func (s *Stream) enqueue(instr int, op gpu.Op) {
	defer s.t.Span("stream enqueue", s.t.Now())
	s.t.Instr(instr)
	if s.writeIndex == 0 {
		s.writeIndex = s.g.Mem().AllocData(mem.Host, 8, "aql.write_index")
	}
	s.t.RMW(s.writeIndex, 1)
	s.ops++
	g := s.g
	s.t.Engine().After(s.g.Spec().MemLatency, func() { g.Submit(op) })
}

// Launch enqueues kernel k and returns its Run (timeline and completion
// signal). The host does not wait.
func (s *Stream) Launch(k gpu.Kernel) *gpu.Run {
	op, run := s.g.DispatchOp(k)
	s.enqueue(s.sw.KernelLaunch, op)
	return run
}

// Wait blocks the host thread until run's completion signal is seen.
func (s *Stream) Wait(run *gpu.Run) {
	defer s.t.Span("wait kernel", s.t.Now())
	s.waitWord(run.Signal, "completion of kernel "+run.Kernel.Name)
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
	n := s.nic
	s.enqueue(s.sw.AQLBuild, func(cp *sim.Proc) {
		for _, id := range ids {
			n.ActivateDoorbell(cp, id)
		}
		s.lastTrigger = cp.Now()
	})
}

// WaitValue enqueues a GDS wait: the CP polls the word at a every
// WaitPollInterval until cond holds, before starting later operations.
func (s *Stream) WaitValue(a mem.Addr, what string, cond func(uint64) bool) {
	m := s.g.Mem()
	lat := s.g.Spec().MemLatency
	s.enqueue(s.sw.AQLBuild, func(cp *sim.Proc) {
		start := cp.Now()
		cp.Sleep(lat)
		if cond(m.Load64(a)) {
			return
		}
		cp.WaitUntil(m.Watch(a), what, func() bool { return cond(m.Load64(a)) })
		// The change is seen at the next poll tick.
		ticks := (cp.Now() - start + WaitPollInterval - 1) / WaitPollInterval
		cp.SleepUntil(start + ticks*WaitPollInterval + lat)
	})
}

// Marker enqueues an operation that sets the word at a to v when the
// stream reaches it, for the host to synchronize on everything before it.
func (s *Stream) Marker(a mem.Addr, v uint64) {
	m := s.g.Mem()
	s.enqueue(s.sw.AQLBuild, func(cp *sim.Proc) { m.Store64(a, v) })
}

// Synchronize blocks the host thread until every operation enqueued so far
// has completed (a marker operation at the end of the queue).
func (s *Stream) Synchronize() {
	m := s.g.Mem()
	word := m.AllocData(mem.Host, 8, "stream.sync")
	s.Marker(word, 1)
	s.waitWord(word, "stream synchronize")
}
