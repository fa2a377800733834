package workload

import (
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/gputn"
	"github.com/gpunetsim/gpunetsim/model/rdma"
	"github.com/gpunetsim/gpunetsim/model/stream"
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
// Under GDS, a send between GPUs of one node (the ready word, a sender's
// slot) is a peer copy on the sender's stream over the node's GPU fabric
// (cudaMemcpyPeerAsync), not a NIC put.

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
func (rd Reduce) triggered(nd *strategy.Node, streamTriggered bool, bases *peerBases, result *mem.Addr, start, end *sim.Time) error {
	l := trigLayout{size: uint64(rd.Size), n: nd.Size}
	region := nd.Mem.AllocData(nd.Pool, l.bytes(), "reduce.slots")
	bases.put(nd.Rank, region)
	me := nd.Rank
	// viaPeer: under GDS, rank p is a GPU of this node.
	viaPeer := func(p int) bool { return streamTriggered && nd.Stream.ReachesPeer(p) }
	if me == 0 {
		vec := nd.Mem.Alloc(nd.Pool, l.size, "reduce.vector")
		fillF64(nd.Mem, vec, l.size, func(j int) float64 { return reduceInput(0, j) })
		*result = vec
		*start = nd.Host.Now()
		nd.RDMA.Expose(region, l.bytes())
		ready := nd.Mem.AllocData(mem.Host, 8, "reduce.ready")
		nd.Mem.Store64(ready, 1)
		var copies []stream.PeerCopy
		for p := 1; p < nd.Size; p++ {
			if viaPeer(p) {
				continue
			}
			nd.RDMA.Put(rdma.Put{Src: ready, Length: 8, Target: p, RemoteOffset: l.word(0)})
		}
		for p := 1; p < nd.Size; p++ {
			if viaPeer(p) {
				if copies == nil {
					// The copy engines read the ready word from GPU memory.
					ready = nd.Mem.AllocData(nd.Pool, 8, "reduce.ready")
					nd.Mem.Store64(ready, 1)
				}
				copies = append(copies, bases.copyOf(nd, rdma.Put{Src: ready, Length: 8, Target: p, RemoteOffset: l.word(0)}))
			}
		}
		if streamTriggered {
			nd.Stream.CopyPeers(copies)
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
		ids, copies := gdsSplit(nd, bases, []rdma.Put{put})
		nd.Stream.WaitValue(readyWord, "the root's ready word", func(v uint64) bool { return v == 1 })
		gdsSend(nd, ids, copies)
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

// triggered runs the Accumulate under GPU-TN (streamTriggered false) or
// GDS. Both nodes expose one slot per accumulate of an epoch (data, then
// a trailing sequence word the NIC writes last) and an ack word. Every
// send is pre-posted by the host: each accumulate's put of its data and
// sequence word into its epoch slot at the target, and each ack (the
// accumulate's number) back into the initiator's ack word. The initiator
// sets off each put — a trigger store of its kernel (GPU-TN), the CP after
// the previous operation (GDS) — and at the end of an epoch waits for the
// epoch's last ack (Win_unlock). The target applies each accumulate on the
// GPU as its sequence word arrives — the work-groups of a persistent
// kernel polling the words, their last one setting the ack off (GPU-TN),
// or a kernel per accumulate the CP starts after a stream wait, then the
// ack's trigger (GDS); between GPUs of one node GDS's puts and acks are
// peer copies on the stream instead. Time runs from the initiator's first lock to its
// last unlock.
func (a Accumulate) triggered(nd *strategy.Node, streamTriggered bool, bases *peerBases, ops []accOp, win uint64, window *mem.Addr, start, end *sim.Time) error {
	maxSize := a.maxSize()
	slotLen := maxSize + 8
	region := nd.Mem.AllocData(nd.Pool, uint64(a.PerEpoch)*slotLen+8, "accumulate.slots")
	bases.put(nd.Rank, region)
	// Under GDS, the other rank on this node's GPU fabric is reached by
	// peer copies on the stream instead of pre-posted puts.
	viaPeer := streamTriggered && nd.Stream.ReachesPeer(1-nd.Rank)
	ackWord := region + mem.Addr(uint64(a.PerEpoch)*slotLen)
	slot := func(op accOp) mem.Addr { return region + mem.Addr(uint64(op.k)*slotLen) }
	word := func(op accOp) mem.Addr { return slot(op) + mem.Addr(op.size) }
	nd.RDMA.Expose(region, uint64(a.PerEpoch)*slotLen+8)
	pt := nd.RDMA.PT()
	if nd.Rank == 0 {
		srcs := make([]mem.Addr, len(ops))
		for i, op := range ops {
			srcs[i] = nd.Mem.AllocData(nd.Pool, op.size+8, "acc.src")
			fillF64(nd.Mem, srcs[i], op.size, func(j int) float64 { return accValue(i, j) })
			nd.Mem.Store64(srcs[i]+mem.Addr(op.size), uint64(i+1))
		}
		put := func(i int) rdma.Put {
			return rdma.Put{Src: srcs[i], Length: ops[i].size + 8, Target: 1, RemoteOffset: uint64(slot(ops[i]) - region)}
		}
		acked := func(i int) func(uint64) bool { return func(v uint64) bool { return v >= uint64(i+1) } }
		*start = nd.Host.Now()
		if streamTriggered {
			var first rdma.Deferred
			if !viaPeer {
				first = nd.RDMA.PrepostBlock(len(ops), put)
			}
			for i, op := range ops {
				if viaPeer {
					nd.Stream.CopyPeers([]stream.PeerCopy{bases.copyOf(nd, put(i))})
				} else {
					nd.Stream.NicTrigger(first + rdma.Deferred(i))
				}
				if op.k == a.PerEpoch-1 {
					nd.Stream.WaitValue(ackWord, "the epoch's acks", acked(i))
				}
			}
			nd.Stream.Synchronize()
			*end = nd.Host.Now()
			return nil
		}
		trig := nd.TN.TriggerAddr()
		run := nd.Stream.Launch(gpu.Kernel{Name: "accumulate.send", WGs: 1, WGSize: a.WGSize, Body: func(wg *gpu.WG) {
			for i, op := range ops {
				wg.Release(gpu.System)
				gputn.Trigger(wg, trig, uint64(i+1))
				if op.k == a.PerEpoch-1 {
					wg.PollUntil(ackWord, true, "the epoch's acks", acked(i))
				}
			}
			*end = wg.Now()
		}})
		nd.TN.TrigPutBlock(len(ops), func(i int) uint64 { return uint64(i + 1) }, func(i int) gputn.Put {
			p := put(i)
			return gputn.Put{Src: p.Src, Length: p.Length, Target: 1, PT: pt, RemoteOffset: p.RemoteOffset}
		}, 1)
		nd.Stream.Wait(run)
		return nil
	}
	wnd := nd.Mem.Alloc(nd.Pool, win, "window")
	fillF64(nd.Mem, wnd, win, func(j int) float64 { return winInit(j) })
	*window = wnd
	acks := nd.Mem.AllocData(nd.Pool, uint64(len(ops))*8, "acc.acks") // ack i carries i+1
	for i := range ops {
		nd.Mem.Store64(acks+mem.Addr(8*i), uint64(i+1))
	}
	ack := func(i int) rdma.Put {
		return rdma.Put{Src: acks + mem.Addr(8*i), Length: 8, Target: 0, RemoteOffset: uint64(ackWord - region)}
	}
	arrived := func(i int) func(uint64) bool { return func(v uint64) bool { return v == uint64(i+1) } }
	if streamTriggered {
		var first rdma.Deferred
		if !viaPeer {
			first = nd.RDMA.PrepostBlock(len(ops), ack)
		}
		for i, op := range ops {
			nd.Stream.WaitValue(word(op), "accumulate arrival", arrived(i))
			nd.Stream.Launch(accKernel(nd, wnd+mem.Addr(op.off), slot(op), op.size, a.WGSize))
			if viaPeer {
				nd.Stream.CopyPeers([]stream.PeerCopy{bases.copyOf(nd, ack(i))})
			} else {
				nd.Stream.NicTrigger(first + rdma.Deferred(i))
			}
		}
		nd.Stream.Synchronize()
		return nil
	}
	trig := nd.TN.TriggerAddr()
	w := max(1, min(int((maxSize+16<<10-1)/(16<<10)), 2*nd.GPU.CUs))
	done := nd.Mem.AllocData(nd.Pool, 8, "acc.applied") // work-group slices applied, all accumulates
	run := nd.Stream.Launch(gpu.Kernel{Name: "accumulate.apply", WGs: w, WGSize: a.WGSize, Body: func(wg *gpu.WG) {
		for i, op := range ops {
			wg.PollUntil(word(op), true, "accumulate arrival", arrived(i))
			lo, hi := slice(wg.ID, wg.Groups(), op.size)
			addSlice(wg, wnd+mem.Addr(op.off+lo), slot(op)+mem.Addr(lo), hi-lo)
			wg.Release(gpu.Device)
			wg.AtomicAdd64(done, 1)
			if wg.ID == 0 { // the last slice applied sets the ack off
				all := uint64(wg.Groups() * (i + 1))
				wg.PollDevice(done, "accumulate applied", func(v uint64) bool { return v >= all })
				wg.Release(gpu.System)
				gputn.Trigger(wg, trig, uint64(1000+i))
			}
		}
	}})
	nd.TN.TrigPutBlock(len(ops), func(i int) uint64 { return uint64(1000 + i) }, func(i int) gputn.Put {
		p := ack(i)
		return gputn.Put{Src: p.Src, Length: 8, Target: 0, PT: pt, RemoteOffset: p.RemoteOffset}
	}, 1)
	nd.Stream.Wait(run)
	return nil
}
