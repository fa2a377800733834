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
// memory pipeline as far as a load of its own memory that misses the L2
// does: the L2 lookup it passes through (gpu.l2_cycles, half on the way
// out to the host interface and half on the way back to the core). Over
// PCIe a non-posted read (one round trip through the root complex, the
// host memory's access included) takes the place of the access past the
// L2 (gpu.mem_latency: the GPU's own memory, which this load never
// reaches). Over NVLink-C2C, whose crossings leave out the far memory's
// own access, the load pays that access as a GPU word load of host memory
// beyond the link does (farLoad: gpu.mem_latency) on top of the link's
// round trip. It returns when the host side read the value (the
// completion leaving it: a poller sees what the word held then) and when
// the data is back in the core, and does not wait itself (a step may call
// it). On an on-chip link the host memory is the GPU's own and there is no
// second pipeline to cross.
func (w *WG) HostLoad(l *pcie.Link, at sim.Time, n unit.Bytes) (sampled, done sim.Time) {
	var half, far sim.Duration
	if !l.OnChip() {
		half = w.g.spec.Cycles(w.g.spec.L2Cycles) / 2
	}
	if l.ChipToChip() {
		far = w.g.spec.MemLatency
	}
	back := l.Read(pcie.Up, max(at, w.Now())+half+far, n, false)
	return back - l.Spec().Latency - l.HostWriteLatency(), back + half
}
