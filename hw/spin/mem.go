package spin

import (
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// nicMem is the NIC memory (the SC'19 paper): one FIFO byte server at the
// aggregate bandwidth, a fixed access latency, and at most `channels`
// accesses in flight (an access waits for the one `channels` places before
// it to finish). The inbound engine (packet writes), the HPUs (descriptor
// and checkpoint traffic) and the DMA engine (payload reads) share it.
type nicMem struct {
	srv   *mem.Server
	lat   sim.Duration
	ring  []sim.Time // finish times of the last `channels` accesses
	next  int
	bytes uint64
}

func newNICMem(s Spec) *nicMem {
	return &nicMem{srv: mem.NewServer(s.MemBandwidth.BytesPerSecond()), lat: s.Cycles(s.MemLatency),
		ring: make([]sim.Time, s.Channels())}
}

// access moves n bytes starting no earlier than now and returns when they
// are done. Calls must come in non-decreasing now (they do: callers run
// at the current simulated time); finish times are then non-decreasing.
func (m *nicMem) access(now sim.Time, n unit.Bytes) sim.Time {
	start := max(now, m.ring[m.next])
	done := m.srv.Reserve(start, uint64(n)) + m.lat
	m.ring[m.next] = done
	m.next = (m.next + 1) % len(m.ring)
	m.bytes += uint64(n)
	return done
}

// memory is where the sPIN side's bytes live and how they move: the flat
// NIC memory of preset spin (the SC'19 paper, nicMem) or the PULP
// accelerator's L1/L2 scratchpads and cluster DMAs (§12.2, pulpMem). hpu is
// the physical HPU on whose behalf the access happens (-1: the NIC's own
// engines); addresses are NIC addresses (packet slots, then context
// memory).
type memory interface {
	// packetIn writes an arriving packet into the packet buffer.
	packetIn(now sim.Time, addr uint64, n unit.Bytes) sim.Time
	// stage makes a packet visible to the HPU that will run its handler.
	stage(now sim.Time, hpu int, addr uint64, n unit.Bytes) sim.Time
	// local is a handler's access to its HPU-local state.
	local(now sim.Time, hpu int, n unit.Bytes) sim.Time
	// shared is a handler's access to its context's shared structures.
	shared(now sim.Time, hpu int, addr uint64, n unit.Bytes) sim.Time
	// sharedEach is count shared accesses of n bytes each by a loop that
	// issues one per iteration: the time the memory adds to the loop in
	// all (queueing and transfer), latencies excluded.
	sharedEach(now sim.Time, hpu int, addr uint64, n unit.Bytes, count int) sim.Duration
	// sharedLatency is a shared access's base latency, without queueing.
	sharedLatency() sim.Duration
	// bring makes the context object at addr resident where hpu works on
	// it in place (a checkpoint, a segment).
	bring(now sim.Time, hpu int, addr uint64, n unit.Bytes) sim.Time
	// dmaRead reads a DMA write's source: hpu's local copy of the
	// payload, or (hpu < 0) the packet buffer at addr.
	dmaRead(now sim.Time, hpu int, addr uint64, n unit.Bytes) sim.Time
	// moved is the bytes moved so far.
	moved() uint64
}

// The flat NIC memory serves every access the same way: one memory, used
// in place, so staging and bringing cost nothing.
func (m *nicMem) packetIn(now sim.Time, _ uint64, n unit.Bytes) sim.Time { return m.access(now, n) }
func (m *nicMem) stage(now sim.Time, _ int, _ uint64, _ unit.Bytes) sim.Time {
	return now
}
func (m *nicMem) local(now sim.Time, _ int, n unit.Bytes) sim.Time { return m.access(now, n) }
func (m *nicMem) shared(now sim.Time, _ int, _ uint64, n unit.Bytes) sim.Time {
	return m.access(now, n)
}
func (m *nicMem) sharedLatency() sim.Duration { return m.lat }

// sharedEach queues the loop's bytes at the NIC memory together, now.
func (m *nicMem) sharedEach(now sim.Time, _ int, _ uint64, n unit.Bytes, count int) sim.Duration {
	return max(0, m.access(now, n*unit.Bytes(count))-m.lat-now)
}
func (m *nicMem) bring(now sim.Time, _ int, _ uint64, _ unit.Bytes) sim.Time { return now }
func (m *nicMem) dmaRead(now sim.Time, _ int, _ uint64, n unit.Bytes) sim.Time {
	return m.access(now, n)
}
func (m *nicMem) moved() uint64 { return m.bytes }
