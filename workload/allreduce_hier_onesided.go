package workload

import (
	"slices"

	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/gputn"
	"github.com/gpunetsim/gpunetsim/model/rdma"
	"github.com/gpunetsim/gpunetsim/model/stream"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// The one-sided hierarchical allreduce of the strategies whose host
// pre-posts puts that the GPU side sets off: GDS (the stream's command
// processor rings pre-posted puts) and GPU-TN (a kernel's store fires a
// registered triggered put). Each rank's part is a fixed schedule of sends
// and receives (hierSchedule, the same three phases as the two-sided and
// device-shmem implementations). A send copies its data into a staging slot
// of its own and sets the slot's flag word, which follows the data, and
// the put carries data and flag into the receiver's slot for that (phase,
// step, source): no slot is reused, so every flag goes from 0 to 1 once and
// the NIC's in-order DMA makes it say the data landed. A receive waits for
// its slot's flag and adds the data into the vector (reduce-scatter) or
// copies it there (allgather).

// hierOp is one send or receive of a rank's schedule.
type hierOp struct {
	send  bool
	slot  int      // send: the staging slot; receive: the receive slot
	rslot int      // send: the receiver's slot
	to    int      // send: the receiving rank
	at    mem.Addr // send: the data; receive: where it goes in the vector
	nb    uint64
	add   bool // receive: add into the vector (else copy)
	phase int  // 0: intra-node reduce-scatter, 1: per-rail ring or tree, 2: intra-node allgather
	wg    int  // the work-group whose slice and slots it is (GPU-TN's comm_wgs split; else 0)
}

// hierSlots is the slot layout of the one-sided schedule, the same on
// every rank: the G−1 phase-1 slots (a chunk each), the inter-node
// phase's slots (a ring piece, half a chunk or, for the rhd, its step's
// part each), the G−1 phase-3
// slots.
type hierSlots struct {
	off []uint64 // slot k's offset; off[len] is the region's size
}

func newHierSlots(inter string, elems, G, N int) hierSlots {
	chunk := pad8(uint64(elems/G+1)*4) + 8
	piece := pad8(uint64((elems/G+1)/max(1, N)+1)*4) + 8
	if inter == HierTree { // a half of the chunk
		piece = pad8(uint64((elems/G+1)/2+1)*4) + 8
	}
	var s hierSlots
	s.off = append(s.off, 0)
	add := func(n int, size uint64) {
		for range n {
			s.off = append(s.off, s.off[len(s.off)-1]+size)
		}
	}
	add(G-1, chunk)
	if inter == HierRHD {
		// Parts from the whole chunk down to one block, each slot whole
		// cache lines: a flag's line (a control line of a payload-free
		// buffer, which keeps bytes) never reaches into the next slot's
		// data, so a flow-model message of a slot carries the bytes of
		// its flag's line only (nic.Packet.DataAt), not its megabytes.
		for k := range interSlots(inter, N) {
			add(1, (pad8(uint64(rhdSlotElems(elems/G+1, N, k))*4)+8+63)&^63)
		}
	} else {
		add(interSlots(inter, N), piece)
	}
	add(G-1, chunk)
	return s
}

func (s hierSlots) bytes() uint64 { return s.off[len(s.off)-1] }

// at is slot k of the region at base; flag is its flag word after nb
// bytes of data.
func (s hierSlots) at(base mem.Addr, k int) mem.Addr { return base + mem.Addr(s.off[k]) }
func (s hierSlots) flag(base mem.Addr, k int, nb uint64) mem.Addr {
	return s.at(base, k) + mem.Addr(pad8(nb))
}

// hierSchedule is the rank (node, l)'s sends and receives, in order.
func hierSchedule(inter string, vec mem.Addr, elems, G, N, node, l int) []hierOp {
	idx := func(m, of int) int { // m's position among the node's GPUs other than of
		if m < of {
			return m
		}
		return m - 1
	}
	off := func(lo int) mem.Addr { return mem.Addr(lo * 4) }
	clo, chi := span(elems, l, G)
	cb := uint64(chi-clo) * 4
	var ops []hierOp
	for m := range G {
		if m != l {
			mlo, mhi := span(elems, m, G)
			ops = append(ops, hierOp{send: true, slot: idx(m, l), rslot: idx(l, m), to: node*G + m, at: vec + off(mlo), nb: uint64(mhi-mlo) * 4})
		}
	}
	for m := range G {
		if m != l {
			ops = append(ops, hierOp{slot: idx(m, l), at: vec + off(clo), nb: cb, add: true})
		}
	}
	base := G - 1
	for _, st := range interSchedule(inter, vec, clo, chi, node, N) {
		if st.send {
			ops = append(ops, hierOp{send: true, slot: base + st.slot, rslot: base + st.rslot, to: st.peer*G + l, at: st.at, nb: st.nb, phase: 1})
		} else {
			ops = append(ops, hierOp{slot: base + st.slot, at: st.at, nb: st.nb, add: st.add, phase: 1})
		}
	}
	p3 := G - 1 + interSlots(inter, N)
	for m := range G {
		if m != l {
			ops = append(ops, hierOp{send: true, slot: p3 + idx(m, l), rslot: p3 + idx(l, m), to: node*G + m, at: vec + off(clo), nb: cb, phase: 2})
		}
	}
	for m := range G {
		if m != l {
			mlo, mhi := span(elems, m, G)
			ops = append(ops, hierOp{slot: p3 + idx(m, l), at: vec + off(mlo), nb: uint64(mhi-mlo) * 4, phase: 2})
		}
	}
	return ops
}

// hierOneSided is one rank's one-sided run: its schedule, receive and
// staging regions. GPU-TN's kernel splits the vector over W work-groups as
// the device-shmem and device-verbs kernels do (allreduce_hier.comm_wgs):
// work-group w runs the schedule of slice w, with its own slots at w ×
// stride in both regions and its own puts; GDS runs one schedule (W = 1).
type hierOneSided struct {
	a            AllreduceHier
	nd           *strategy.Node
	ops          []hierOp   // every work-group's, work-group by work-group
	wops         [][]hierOp // by work-group
	W            int
	stride       uint64 // one work-group's slots
	sl           hierSlots
	recv, stage  mem.Addr
	first        rdma.Deferred // GDS: the first pre-posted put
	nsend        int
	t1, t2, end  sim.Time
	done         mem.Addr   // GDS: the phase markers' words
	markersAfter []int      // GDS: phases whose end marker follows the next kernel
	recvs        []mem.Addr // GDS: every rank's receive region (peer copies land there)
}

// prepare allocates the regions, marks the flags as control words,
// exposes the receive region and, for GDS, pre-posts every put (before
// the measurement: the pattern is static).
func (a AllreduceHier) prepareOneSided(nd *strategy.Node, vec mem.Addr, elems, G, N int, streamTriggered bool, recvs []mem.Addr) *hierOneSided {
	node, l := nd.Rank/G, nd.Rank%G
	W := 1
	if !streamTriggered {
		W = a.commWGs(elems)
	}
	h := &hierOneSided{a: a, nd: nd, W: W, sl: newHierSlots(a.Inter, (elems+W-1)/W, G, N), recvs: recvs}
	h.stride = max(8, h.sl.bytes())
	for w := range W {
		lo, hi := span(elems, w, W)
		ops := hierSchedule(a.Inter, vec+mem.Addr(lo*4), hi-lo, G, N, node, l)
		for i := range ops {
			ops[i].wg = w
		}
		h.wops = append(h.wops, ops)
		h.ops = append(h.ops, ops...)
	}
	size := uint64(W) * h.stride
	h.recv = nd.Mem.Alloc(nd.Pool, size, "allreduce_hier.recv")
	recvs[nd.Rank] = h.recv
	h.stage = nd.Mem.Alloc(nd.Pool, size, "allreduce_hier.stage")
	var sends []hierOp
	for _, op := range h.ops {
		if op.send {
			nd.Mem.MarkControl(h.sl.flag(h.stageOf(op), op.slot, op.nb), 8)
			sends = append(sends, op)
		} else {
			nd.Mem.MarkControl(h.sl.flag(h.recvOf(op), op.slot, op.nb), 8)
		}
	}
	h.nsend = len(sends)
	nd.RDMA.Expose(h.recv, size)
	if streamTriggered {
		// Sends to a GPU of this node go by the copy engines (gds), so
		// only the others' puts are pre-posted.
		nicSends := slices.DeleteFunc(slices.Clone(sends), func(op hierOp) bool { return h.viaPeer(op) })
		if len(nicSends) > 0 {
			h.first = nd.RDMA.PrepostBlock(len(nicSends), func(i int) rdma.Put { return h.put(nicSends[i]) })
		}
	}
	return h
}

// stageOf and recvOf are the bases of op's work-group's staging and
// receive slots.
func (h *hierOneSided) stageOf(op hierOp) mem.Addr {
	return h.stage + mem.Addr(uint64(op.wg)*h.stride)
}
func (h *hierOneSided) recvOf(op hierOp) mem.Addr {
	return h.recv + mem.Addr(uint64(op.wg)*h.stride)
}

// viaPeer reports whether GDS moves send op by a copy engine over the
// node's GPU fabric (its receiver is a GPU of this node) instead of a put.
func (h *hierOneSided) viaPeer(op hierOp) bool { return h.nd.Stream.ReachesPeer(op.to) }

// peerCopy is send op as a peer copy: the put's bytes into the receiver's
// slot.
func (h *hierOneSided) peerCopy(op hierOp) stream.PeerCopy {
	p := h.put(op)
	return stream.PeerCopy{PE: op.to, Dst: h.recvs[op.to] + mem.Addr(p.RemoteOffset), Src: p.Src, N: p.Length}
}

// put is a send's put: data and flag from its staging slot into the
// receiver's slot.
func (h *hierOneSided) put(op hierOp) rdma.Put {
	// The receiver's slots of this work-group lie at the same place in
	// its region as ours in our staging region.
	return rdma.Put{Src: h.sl.at(h.stageOf(op), op.slot), Length: pad8(op.nb) + 8, Target: op.to, RemoteOffset: uint64(op.wg)*h.stride + h.sl.off[op.rslot]}
}

// stage copies a send's data into its staging slot and sets the slot's
// flag (functional part; the caller charges the traffic).
func (h *hierOneSided) stageData(op hierOp) {
	mm := h.nd.Mem
	if d, s := mm.Bytes(h.sl.at(h.stageOf(op), op.slot), int(op.nb)), mm.Bytes(op.at, int(op.nb)); d != nil && s != nil {
		copy(d, s)
	}
}

// apply adds or copies a received slot into the vector (functional part).
func (h *hierOneSided) apply(op hierOp) {
	mm := h.nd.Mem
	src := h.sl.at(h.recvOf(op), op.slot)
	if op.add {
		addInto(mm, op.at, src, op.nb)
		return
	}
	if d, s := mm.Bytes(op.at, int(op.nb)), mm.Bytes(src, int(op.nb)); d != nil && s != nil {
		copy(d, s)
	}
}

// traffic is the memory traffic of an operation on the GPU: a staging or
// allgather copy reads and writes, an addition reads two and writes one.
func traffic(op hierOp) uint64 {
	if op.add {
		return 3 * op.nb
	}
	return 2 * op.nb
}

// gds enqueues the whole schedule on the stream: consecutive sends share
// one staging kernel and one NIC trigger of their pre-posted puts; a
// receive is a stream wait on its slot's flag, and its addition or copy
// joins the next kernel (with the other receives that follow it and the
// staging of the sends after them: the ring's next piece is the one just
// reduced). Markers after the
// phases' last kernels time them; it returns the start-relative times
// through h.
func (h *hierOneSided) gds() {
	nd := h.nd
	h.done = nd.Mem.AllocData(mem.Host, 24, "allreduce_hier.done")
	var (
		work   []hierOp // the next kernel's operations
		ids    []rdma.Deferred
		copies []stream.PeerCopy // sends to GPUs of this node, as one batch of copies
		sends  int               // pre-posted puts rung so far
		cur    int
	)
	groups := map[int][]int{} // a marker's phase → the phases it ends
	flush := func() {
		if len(work) > 0 {
			ops := work
			var bytes, out uint64
			for _, op := range ops {
				bytes += traffic(op)
				out += op.nb // each op writes its nb bytes
			}
			wgs := max(1, min(int(bytes/uint64(4*h.a.WGSize)), nd.GPU.CUs))
			nd.Stream.Launch(gpu.Kernel{Name: "allreduce_hier.step", WGs: wgs, WGSize: h.a.WGSize, Body: func(wg *gpu.WG) {
				if wg.ID == 0 {
					for _, op := range ops {
						if op.send {
							h.stageData(op)
							nd.Mem.Store64(h.sl.flag(h.stage, op.slot, op.nb), 1)
						} else {
							h.apply(op)
						}
					}
				}
				wg.VALU(2)
				wg.StreamOut(bytes/uint64(wgs), out/uint64(wgs))
			}})
			work = nil
		}
		if n := len(h.markersAfter); n > 0 {
			// One marker ends every phase that ended here (an empty
			// phase ends with the one before it).
			last := h.markersAfter[n-1]
			groups[last] = slices.Clone(h.markersAfter)
			nd.Stream.Marker(h.done+mem.Addr(8*last), 1)
			h.markersAfter = h.markersAfter[:0]
		}
		if len(ids) > 0 {
			nd.Stream.NicTrigger(ids...)
			ids = nil
		}
		nd.Stream.CopyPeers(copies)
		copies = nil
	}
	for _, op := range h.ops {
		for ; cur < op.phase; cur++ {
			h.markersAfter = append(h.markersAfter, cur)
		}
		if op.send {
			work = append(work, op)
			if h.viaPeer(op) {
				copies = append(copies, h.peerCopy(op))
				continue
			}
			ids = append(ids, h.first+rdma.Deferred(sends))
			sends++
			continue
		}
		// Pending sends go off before the stream waits (a receive may
		// depend on them); pending additions wait for the next kernel, so
		// consecutive receives share one.
		if slices.ContainsFunc(work, func(o hierOp) bool { return o.send }) {
			flush()
		}
		nd.Stream.WaitValue(h.sl.flag(h.recv, op.slot, op.nb), "allreduce_hier slot arrival", func(v uint64) bool { return v == 1 })
		work = append(work, op)
	}
	for ; cur <= 2; cur++ {
		h.markersAfter = append(h.markersAfter, cur)
	}
	flush()
	m := nd.Mem
	times := []*sim.Time{&h.t1, &h.t2, &h.end}
	for p, ended := range groups {
		a := h.done + mem.Addr(8*p)
		probe := nd.Host.Proc.Engine().Spawn("allreduce_hier.probe", func(pr *sim.Proc) {
			pr.WaitUntil(m.Watch(a), "allreduce_hier phase done", func() bool { return m.Load64(a) != 0 })
			for _, q := range ended {
				*times[q] = pr.Now()
			}
		})
		probe.SetDaemon()
	}
	nd.Stream.Synchronize()
}

// triggered runs the schedule in one persistent work-group that stages
// each send, releases it at system scope and fires its triggered put with
// a store to the NIC's trigger address, and polls each receive's flag
// with system-scope acquires; the host registers the puts in schedule
// order while the kernel runs (relaxed synchronization). With more puts
// than the NIC's trigger entries (nic.trig_max_entries) the work-group
// fires a put only once the NIC counts its registration in effect.
func (h *hierOneSided) triggered() {
	nd := h.nd
	trig := nd.TN.TriggerAddr()
	var reg mem.Addr
	if limit := nd.TN.EntryLimit(); limit > 0 && h.nsend > limit {
		reg = nd.Mem.AllocData(nd.Pool, 8, "allreduce_hier.registered")
	}
	// The host registers the work-groups' puts round-robin, the k-th send
	// of every work-group before the (k+1)-th of any: registration i has
	// tag 1 + i, and tags[w][k] is work-group w's k-th send's.
	var sends []hierOp
	tags := make([][]uint64, h.W)
	for k := 0; ; k++ {
		more := false
		for w, ops := range h.wops {
			n := 0
			for _, op := range ops {
				if !op.send {
					continue
				}
				if n == k {
					sends = append(sends, op)
					tags[w] = append(tags[w], uint64(len(sends)))
					more = true
					break
				}
				n++
			}
		}
		if !more {
			break
		}
	}
	run := nd.Stream.Launch(gpu.Kernel{Name: "allreduce_hier.triggered", WGs: h.W, WGSize: h.a.WGSize, Body: func(wg *gpu.WG) {
		cur, k := 0, 0
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
		for _, op := range h.wops[wg.ID] {
			mark(op.phase)
			if op.send {
				h.stageData(op)
				wg.VALU(2)
				wg.StreamOut(2*op.nb, op.nb) // the staging copy's writes
				wg.Store64(h.sl.flag(h.stageOf(op), op.slot, op.nb), 1)
				wg.Release(gpu.System)
				tag := tags[wg.ID][k]
				if reg != 0 {
					wg.PollUntil(reg, true, "registration of its triggered put", func(v uint64) bool { return v >= tag })
				}
				gputn.Trigger(wg, trig, tag)
				k++
				continue
			}
			wg.PollUntil(h.sl.flag(h.recvOf(op), op.slot, op.nb), true, "allreduce_hier slot arrival", func(v uint64) bool { return v == 1 })
			h.apply(op)
			wg.VALU(2)
			wg.StreamOut(traffic(op), op.nb) // the addition's or copy's output
		}
		mark(2)
		h.t1, h.t2, h.end = max(h.t1, t1), max(h.t2, t2), max(h.end, wg.Now())
	}})
	if len(sends) > 0 {
		pt := nd.RDMA.PT()
		nd.TN.TrigPutBlockCounted(len(sends), func(k int) uint64 { return uint64(1 + k) }, func(k int) gputn.Put {
			p := h.put(sends[k])
			return gputn.Put{Src: p.Src, Length: p.Length, Target: p.Target, PT: pt, RemoteOffset: p.RemoteOffset}
		}, 1, reg)
	}
	nd.Stream.Wait(run)
}
