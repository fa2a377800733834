package spin

import (
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Host models of the baseline (ddt.host_model).
const (
	// HostSim executes the host's unpack, pack and checkpoint creation on
	// the simulated host core (cpu.Walk): the datatype engine's regions,
	// their instructions and the cache and DRAM behaviour of their real
	// addresses, on cold caches.
	HostSim = "sim"
	// HostAffine is the earlier closed form, regions·ddt.host_region +
	// m/ddt.host_copy_cold, kept for comparison only.
	HostAffine = "affine"
)

// Traffic is the memory traffic of one receive, read from the counters
// of the simulated memory system over the receive (RTR to the last byte
// placed, plus the eventual write-back of what the host left dirty in its
// caches).
type Traffic struct {
	PCIeUp   uint64 // bytes the NIC's PCIe link carried towards the host (DMA writes, with TLP headers)
	PCIeDown uint64 // bytes it carried towards the NIC (structure copies, reads)
	// DMAWrite is the host DRAM bytes the NIC's writes cost: every write
	// touches whole 64 B bursts (a partial line is one masked burst); no
	// direct cache placement, as the documents assume.
	DMAWrite uint64
	DRAM     uint64 // bytes the node's DRAM server moved: the DMA writes plus the host's reads and write-backs
	// Host holds the host unpack's per-level counters (zero when the NIC
	// placed the data).
	Host   cpu.WalkStats
	NICMem uint64 // bytes through NIC memory
}

// Host connects the endpoint to its node's host: the core that runs the
// baseline's unpack (spec) and the node's DRAM server, which counts the
// traffic of the host and of the NIC's DMA writes. Without it, traffic
// is not counted and the baseline uses the affine model.
func (e *Endpoint) Host(spec cpu.Spec, dram *mem.Server) {
	e.host, e.dram = spec, dram
	e.env.Host = spec
	if e.sp != nil {
		e.sp.OnHostWrite(func(t sim.Time, a mem.Addr, n unit.Bytes) { e.dmaWrite(t, a, uint64(n)) })
	}
}

// dmaWrite charges a device write of n bytes at a to the node's DRAM.
func (e *Endpoint) dmaWrite(t sim.Time, a mem.Addr, n uint64) {
	if e.dram == nil || n == 0 {
		return
	}
	lo, hi := uint64(a)/mem.LineSize, (uint64(a)+n-1)/mem.LineSize
	b := (hi - lo + 1) * mem.LineSize
	e.dram.Reserve(t, b)
	e.dmaBytes += b
}

// useSim reports whether the host runs on the simulated core.
func useSim(cs Costs, spec cpu.Spec) bool { return cs.HostModel != HostAffine && spec.Freq > 0 }

// walkUnpack executes the unpack of plan's message from the packed bytes
// at src into the buffer at origin on a cold core starting at now, and
// returns the walk.
func walkUnpack(spec cpu.Spec, cs Costs, plan *Plan, origin, src mem.Addr, now sim.Time, dram *mem.Server) *cpu.Walk {
	w := cpu.NewWalk(spec, now, dram)
	off := mem.Addr(0)
	for _, b := range plan.Blocks {
		w.Copy(origin+mem.Addr(b.Off), src+off, b.Len, cs.HostRegionInstr)
		off += mem.Addr(b.Len)
	}
	return w
}

// HostPackTime executes the pack of plan's message from the buffer at origin
// into a packed buffer at dst on spec's core, cold caches, and returns
// its duration and counters (with the eventual write-back of the lines
// it left dirty).
func HostPackTime(spec cpu.Spec, cs Costs, plan *Plan, origin, dst mem.Addr) (sim.Duration, cpu.WalkStats) {
	w := cpu.NewWalk(spec, 0, nil)
	off := mem.Addr(0)
	for _, b := range plan.Blocks {
		w.Copy(dst+off, origin+mem.Addr(b.Off), b.Len, cs.HostRegionInstr)
		off += mem.Addr(b.Len)
	}
	d := w.End()
	w.Flush()
	return d, w.Stats()
}

// HostUnpackTime executes the unpack of plan's message on spec's core, cold
// caches (warm: a second pass after a first one), and returns its
// duration and counters (cold: with the eventual write-back of the lines
// it left dirty).
func HostUnpackTime(spec cpu.Spec, cs Costs, plan *Plan, origin, src mem.Addr, warm bool) (sim.Duration, cpu.WalkStats) {
	w := walkUnpack(spec, cs, plan, origin, src, 0, nil)
	if !warm {
		d := w.End()
		w.Flush()
		return d, w.Stats()
	}
	t := w.End()
	w.Warm(t)
	off := mem.Addr(0)
	for _, b := range plan.Blocks {
		w.Copy(origin+mem.Addr(b.Off), src+off, b.Len, cs.HostRegionInstr)
		off += mem.Addr(b.Len)
	}
	return w.End() - t, w.Stats()
}

// hostCreate is the host's checkpoint creation for plan (RO-CP, RW-CP):
// the datatype engine processes the message without copying (its
// bookkeeping instructions per region) and stores each checkpoint, on
// the simulated core with cold caches, or under the affine model one
// ddt.host_region per region.
func hostCreate(env Env, plan *Plan, checkpoints int) sim.Duration {
	cs := env.Costs
	if !useSim(cs, env.Host) {
		return sim.Duration(plan.Regions) * cs.HostRegion
	}
	const staging = mem.Addr(1 << 40) // where the host builds the checkpoints (any line-aligned buffer)
	w := cpu.NewWalk(env.Host, 0, nil)
	per := max(plan.Regions/max(checkpoints, 1), 1)
	k := 0
	for i := range plan.Regions {
		w.Instr(cs.HostRegionInstr)
		if i%per == 0 && k < checkpoints {
			w.Write(staging+mem.Addr(k)*mem.Addr(cs.Checkpoint), int(cs.Checkpoint))
			k++
		}
	}
	for ; k < checkpoints; k++ {
		w.Write(staging+mem.Addr(k)*mem.Addr(cs.Checkpoint), int(cs.Checkpoint))
	}
	return w.End()
}
