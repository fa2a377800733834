package workload

import (
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/gputn"
	"github.com/gpunetsim/gpunetsim/model/rdma"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// The Reduce on the strategies whose host pre-posts one-sided puts that
// the GPU side sets off (strategy.OneSided with Triggers or
// StreamTriggered): every node exposes the same layout, one slot per node
// of the vector and a trailing sequence word, which the NIC writes last
// (in-order DMA), so a slot's word says its data landed. The root posts
// its resources (exposes the slots) and puts a ready word into slot 0 of
// each sender (the zero-length resource-ready sync); a sender's put of its
// slot to the root goes off once the ready word is seen — by its kernel's
// trigger store (GPU-TN) or by the command processor after a stream wait
// (GDS); the root adds each arriving slot into its vector on the GPU —
// work-groups of a persistent kernel polling the words (GPU-TN), or a
// kernel per slot the CP starts after a stream wait on its word (GDS).

// trigLayout is the exposed region of the one-sided Reduce.
type trigLayout struct {
	size uint64 // vector bytes
	n    int
}

func (l trigLayout) slot(p int) uint64                     { return uint64(p) * (l.size + 8) }
func (l trigLayout) word(p int) uint64                     { return l.slot(p) + l.size }
func (l trigLayout) bytes() uint64                         { return uint64(l.n) * (l.size + 8) }
func (l trigLayout) at(base mem.Addr, off uint64) mem.Addr { return base + mem.Addr(off) }

// triggered runs the Reduce under GPU-TN (im = "triggered") or GDS
// ("stream-triggered"). Time runs from the root posting its resources to
// the root holding the sum.
func (rd Reduce) triggered(nd *strategy.Node, streamTriggered bool, result *mem.Addr, start, end *sim.Time) error {
	l := trigLayout{size: uint64(rd.Size), n: nd.Size}
	region := nd.Mem.AllocData(nd.Pool, l.bytes(), "reduce.slots")
	me := nd.Rank
	if me == 0 {
		vec := nd.Mem.Alloc(nd.Pool, l.size, "reduce.vector")
		fillF64(nd.Mem, vec, l.size, func(j int) float64 { return reduceInput(0, j) })
		*result = vec
		*start = nd.Host.Now()
		nd.RDMA.Expose(region, l.bytes())
		ready := nd.Mem.AllocData(mem.Host, 8, "reduce.ready")
		nd.Mem.Store64(ready, 1)
		for p := 1; p < nd.Size; p++ {
			nd.RDMA.Put(rdma.Put{Src: ready, Length: 8, Target: p, RemoteOffset: l.word(0)})
		}
		if streamTriggered {
			for p := 1; p < nd.Size; p++ {
				nd.Stream.WaitValue(l.at(region, l.word(p)), "reduce slot arrival", func(v uint64) bool { return v == 1 })
				nd.Stream.Launch(accKernel(nd, vec, l.at(region, l.slot(p)), l.size, rd.WGSize))
			}
			nd.Stream.Synchronize()
			*end = nd.Host.Now()
			return nil
		}
		w := max(1, min(int((l.size+16<<10-1)/(16<<10)), 2*nd.GPU.CUs))
		nd.Stream.Wait(nd.Stream.Launch(gpu.Kernel{Name: "reduce", WGs: w, WGSize: rd.WGSize, Body: func(wg *gpu.WG) {
			lo, hi := slice(wg.ID, wg.Groups(), l.size)
			for p := 1; p < l.n; p++ {
				wg.PollUntil(l.at(region, l.word(p)), true, "reduce slot arrival", func(v uint64) bool { return v == 1 })
				addSlice(wg, vec+mem.Addr(lo), l.at(region, l.slot(p)+lo), hi-lo)
			}
			wg.Release(gpu.System)
			*end = max(*end, wg.Now())
		}}))
		return nil
	}
	// A sender's vector is its own slot, with the sequence word the root
	// will see set.
	vec := l.at(region, l.slot(me))
	fillF64(nd.Mem, vec, l.size, func(j int) float64 { return reduceInput(me, j) })
	nd.Mem.Store64(l.at(region, l.word(me)), 1)
	nd.RDMA.Expose(region, l.bytes())
	put := rdma.Put{Src: vec, Length: l.size + 8, Target: 0, RemoteOffset: l.slot(me)}
	readyWord := l.at(region, l.word(0))
	if streamTriggered {
		id := nd.RDMA.Prepost(put)
		nd.Stream.WaitValue(readyWord, "the root's ready word", func(v uint64) bool { return v == 1 })
		nd.Stream.NicTrigger(id)
		nd.Stream.Synchronize()
		return nil
	}
	const tag = 1
	trig := nd.TN.TriggerAddr()
	run := nd.Stream.Launch(gpu.Kernel{Name: "reduce.send", WGs: 1, WGSize: rd.WGSize, Body: func(wg *gpu.WG) {
		wg.PollUntil(readyWord, true, "the root's ready word", func(v uint64) bool { return v == 1 })
		wg.Release(gpu.System)
		gputn.Trigger(wg, trig, tag)
	}})
	nd.TN.TrigPut(tag, gputn.Put{Src: put.Src, Length: put.Length, Target: 0, PT: nd.RDMA.PT(), RemoteOffset: put.RemoteOffset}, 1)
	nd.Stream.Wait(run)
	return nil
}
