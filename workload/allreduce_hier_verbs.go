package workload

import (
	"fmt"
	"slices"

	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// The device-verbs hierarchical allreduce (GNN_GPURDMA): one persistent
// kernel of CommWGs work-groups per GPU, work-group w running the
// one-sided schedule (hierSchedule: the same three phases, slots and
// trailing flags as GDS and GPU-TN) on slice w of the vector. A send
// stages its data and flag, releases them at system scope (the NIC reads
// memory) and posts an RDMA write of slot and flag into the receiver's
// slot on its work-group's QP to that peer (WQE build, fence, doorbell:
// dvRank.write); a receive polls its slot's flag with system-scope
// acquires and adds or copies the data. Between GPUs of one node the
// writes take the NIC's path: GPU-initiated verbs have no peer-store
// transport.

// hierVerbs is one rank's device-verbs run.
type hierVerbs struct {
	a           AllreduceHier
	nd          *strategy.Node
	dv          *dvRank
	sl          hierSlots // one work-group's slots
	W           int
	vec         mem.Addr
	elems       int
	G, N        int
	t1, t2, end sim.Time
}

// hierVerbsPeers is the ranks rank r writes to (and is written by): the
// other GPUs of its node and its two ring neighbours on its rail, its
// parents and children in the rail's two trees, or its rhd partners.
func hierVerbsPeers(inter string, r, G, N int) []int {
	node, l := r/G, r%G
	var out []int
	for m := range G {
		if m != l {
			out = append(out, node*G+m)
		}
	}
	if N > 1 && inter == HierRHD {
		for _, p := range rhdPeers(node, N) {
			if !slices.Contains(out, p*G+l) {
				out = append(out, p*G+l)
			}
		}
		return out
	}
	if N > 1 && inter == HierTree {
		for t := range 2 {
			up, down := dbtree(N, node, t)
			for _, p := range []int{up, down[0], down[1]} {
				if p >= 0 && !slices.Contains(out, p*G+l) {
					out = append(out, p*G+l)
				}
			}
		}
		return out
	}
	if N > 1 {
		right, left := ((node+1)%N)*G+l, ((node+N-1)%N)*G+l
		out = append(out, right)
		if left != right {
			out = append(out, left)
		}
	}
	return out
}

// prepareVerbs builds (once per run, through dvw) every rank's segment —
// W work-groups' staging slots, then their receive slots — and the QPs
// between the ranks that talk, and marks the flags as control words.
func (a AllreduceHier) prepareVerbs(nd *strategy.Node, dvw *dvWorld, vec mem.Addr, elems, G, N int) (*hierVerbs, error) {
	W := a.commWGs(elems)
	sl := newHierSlots(a.Inter, (elems+W-1)/W, G, N)
	half := uint64(W) * max(8, sl.bytes())
	w, err := dvw.get(nd, func(int) uint64 { return 2 * half }, func(r int) []int { return hierVerbsPeers(a.Inter, r, G, N) })
	if err != nil {
		return nil, err
	}
	dv, err := newDVRank(nd, w, W, hierVerbsPeers(a.Inter, nd.Rank, G, N))
	if err != nil {
		return nil, err
	}
	h := &hierVerbs{a: a, nd: nd, dv: dv, sl: sl, W: W, vec: vec, elems: elems, G: G, N: N}
	node, l := nd.Rank/G, nd.Rank%G
	for wid := range W {
		for _, op := range h.schedule(wid, node, l) {
			if op.send {
				nd.Mem.MarkControl(sl.flag(h.stage(wid), op.slot, op.nb), 8)
			} else {
				nd.Mem.MarkControl(sl.flag(h.recv(wid), op.slot, op.nb), 8)
			}
		}
	}
	return h, nil
}

// stage and recv are work-group wid's staging and receive slots.
func (h *hierVerbs) stage(wid int) mem.Addr {
	return h.dv.seg + mem.Addr(uint64(wid)*max(8, h.sl.bytes()))
}
func (h *hierVerbs) recv(wid int) mem.Addr {
	return h.dv.seg + mem.Addr(uint64(h.W+wid)*max(8, h.sl.bytes()))
}

// schedule is work-group wid's part: the one-sided schedule on its slice.
func (h *hierVerbs) schedule(wid, node, l int) []hierOp {
	lo, hi := span(h.elems, wid, h.W)
	return hierSchedule(h.a.Inter, h.vec+mem.Addr(lo*4), hi-lo, h.G, h.N, node, l)
}

// run launches the persistent kernel and waits for it; the QPs are
// drained after every work-group's last write (a grid barrier), outside
// the measured time.
func (h *hierVerbs) run() error {
	nd, mm := h.nd, h.nd.Mem
	node, l := nd.Rank/h.G, nd.Rank%h.G
	cnt := mm.AllocData(mem.GPU, 8, "allreduce_hier.count")
	errs := make([]error, h.W)
	k := gpu.Kernel{Name: "allreduce_hier.verbs", WGs: h.W, WGSize: h.a.WGSize, Body: func(wg *gpu.WG) {
		stage, recv := h.stage(wg.ID), h.recv(wg.ID)
		cur := 0
		var t1, t2 sim.Time
		mark := func(upto int) {
			for ; cur < upto; cur++ {
				if cur == 0 {
					t1 = wg.Now()
				} else {
					t2 = wg.Now()
				}
			}
		}
		for _, op := range h.schedule(wg.ID, node, l) {
			mark(op.phase)
			if op.send {
				if d, s := mm.Bytes(h.sl.at(stage, op.slot), int(op.nb)), mm.Bytes(op.at, int(op.nb)); d != nil && s != nil {
					copy(d, s)
				}
				wg.VALU(2)
				wg.StreamOut(2*op.nb, op.nb) // the staging copy's writes
				wg.Store64(h.sl.flag(stage, op.slot, op.nb), 1)
				wg.Release(gpu.System) // the NIC reads the slot from memory
				// The receiver's slots of this work-group follow its
				// staging slots in its segment, at the same place as ours.
				dst := uint64(recv-h.dv.seg) + h.sl.off[op.rslot]
				if errs[wg.ID] = h.dv.write(wg, h.sl.at(stage, op.slot), op.to, dst, pad8(op.nb)+8); errs[wg.ID] != nil {
					return
				}
				continue
			}
			wg.PollUntil(h.sl.flag(recv, op.slot, op.nb), true, "allreduce_hier slot arrival", func(v uint64) bool { return v == 1 })
			src := h.sl.at(recv, op.slot)
			if op.add {
				addInto(mm, op.at, src, op.nb)
			} else if d, s := mm.Bytes(op.at, int(op.nb)), mm.Bytes(src, int(op.nb)); d != nil && s != nil {
				copy(d, s)
			}
			wg.VALU(2)
			wg.StreamOut(traffic(op), op.nb) // the addition's or copy's output
		}
		mark(2)
		h.t1, h.t2, h.end = max(h.t1, t1), max(h.t2, t2), max(h.end, wg.Now())
		wg.Release(gpu.Device)
		wg.AtomicAdd64(cnt, 1)
		wg.PollUntil(cnt, true, "allreduce_hier work-groups done", func(v uint64) bool { return v >= uint64(h.W) })
		if err := h.dv.drain(wg); err != nil {
			errs[wg.ID] = fmt.Errorf("allreduce_hier drain: %w", err)
		}
	}}
	nd.Stream.Wait(nd.Stream.Launch(k))
	return firstErr(errs)
}
