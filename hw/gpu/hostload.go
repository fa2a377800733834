package gpu

import (
	"github.com/gpunetsim/gpunetsim/hw/pcie"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// HostLoad is the timing of an uncached load of n bytes of host memory
// that the work-group issues at at (now, or later when it must first wait
// for something) across the link l between a discrete GPU and its host: a
// CQ poll, a fence's flushing read. The load goes through the GPU's own
// memory pipeline as a load of its own memory does (gpu.mem_latency, half
// on the way out to the host interface and half on the way back to the
// core), with a non-posted read over l in place of the GPU's DRAM access;
// a load of host memory beyond NVLink-C2C is accounted the same way
// (farLoad). It returns when the host side read the value (the completion
// leaving it: a poller sees what the word held then) and when the data is
// back in the core, and does not wait itself (a step may call it). On an
// on-chip link the host memory is the GPU's own and there is no second
// pipeline to cross.
func (w *WG) HostLoad(l *pcie.Link, at sim.Time, n unit.Bytes) (sampled, done sim.Time) {
	var half sim.Duration
	if !l.OnChip() {
		half = w.g.spec.MemLatency / 2
	}
	back := l.Read(pcie.Up, max(at, w.Now())+half, n, false)
	return back - l.Spec().Latency - l.HostWriteLatency(), back + half
}
