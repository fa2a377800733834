package spin

import (
	"github.com/gpunetsim/gpunetsim/hw/pulp"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// pulpMem is the PULP accelerator as the sPIN side's memory (the dissertation
// §12.2): packets land in L2; a handler's packet is DMAed into the L1 of
// its core's cluster before it runs; context structures (dataloops, master
// checkpoints) stay in L2; objects worked on in place (checkpoints,
// segments) move to the L1 of the cluster that runs their handler on first
// use and follow it when another cluster takes over; DMA writes leave from
// L1 through the cluster DMA and the output port.
type pulpMem struct {
	a     *pulp.Accel
	where map[uint64]resident // object address → where it is and when it got there
	bytes uint64
}

func newPulpMem(s Spec) (*pulpMem, error) {
	a, err := pulp.New(s.PULP, s.HPUFreq, s.HPUs)
	if err != nil {
		return nil, err
	}
	return &pulpMem{a: a, where: map[uint64]resident{}}, nil
}

func (m *pulpMem) packetIn(now sim.Time, addr uint64, n unit.Bytes) sim.Time {
	m.bytes += uint64(n)
	return m.a.PacketIn(now, addr, n)
}

func (m *pulpMem) stage(now sim.Time, hpu int, addr uint64, n unit.Bytes) sim.Time {
	m.bytes += uint64(n)
	return m.a.Stage(now, hpu, addr, n)
}

func (m *pulpMem) local(now sim.Time, hpu int, n unit.Bytes) sim.Time {
	m.bytes += uint64(n)
	return m.a.L1Access(now, hpu, n)
}

func (m *pulpMem) shared(now sim.Time, hpu int, addr uint64, n unit.Bytes) sim.Time {
	m.bytes += uint64(n)
	return m.a.L2Access(now, hpu, addr, n)
}

func (m *pulpMem) sharedEach(now sim.Time, hpu int, addr uint64, n unit.Bytes, count int) sim.Duration {
	m.bytes += uint64(n) * uint64(count)
	return m.a.L2Reads(now, hpu, addr, n, count)
}

func (m *pulpMem) sharedLatency() sim.Duration { return m.a.L2Latency() }

// resident is an object in the L1 of core's cluster from time ready on.
type resident struct {
	core  int
	ready sim.Time
}

func (m *pulpMem) bring(now sim.Time, hpu int, addr uint64, n unit.Bytes) sim.Time {
	r, ok := m.where[addr]
	if ok && m.a.Cluster(r.core) == m.a.Cluster(hpu) {
		return max(now, r.ready)
	}
	m.bytes += uint64(n)
	var done sim.Time
	if !ok {
		done = m.a.Stage(now, hpu, addr, n)
	} else {
		done = m.a.Move(max(now, r.ready), r.core, hpu, n)
	}
	m.where[addr] = resident{core: hpu, ready: done}
	return done
}

func (m *pulpMem) dmaRead(now sim.Time, hpu int, addr uint64, n unit.Bytes) sim.Time {
	m.bytes += uint64(n)
	if hpu < 0 {
		return m.a.OutFromL2(now, addr, n)
	}
	return m.a.Out(now, hpu, n)
}

func (m *pulpMem) moved() uint64 { return m.bytes }
