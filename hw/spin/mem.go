package spin

import (
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// nicMem is the NIC memory (nic.md §5.3): one FIFO byte server at the
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
