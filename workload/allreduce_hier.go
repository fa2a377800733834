package workload

import (
	"fmt"
	"math"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

// AllreduceHier is the hierarchical allreduce of today's multi-GPU nodes
// (present-day workloads): float32 SUM over every GPU of a cluster of
// nodes of G GPUs, in three phases.
//
//  1. Intra-node reduce-scatter over the GPU fabric: the vector is cut
//     into G chunks; GPU l of a node receives chunk l from each of the
//     node's other GPUs (direct exchange) and reduces them into its own.
//  2. Inter-node allreduce per rail: the GPUs with the same local index l
//     (one per node, all on rail l) allreduce chunk l, by a ring
//     (reduce-scatter, then allgather, 2(N−1) steps) or a double binary
//     tree (Inter).
//  3. Intra-node allgather over the GPU fabric: GPU l sends its reduced
//     chunk to the node's other GPUs.
//
// With G = 1 phases 1 and 3 are empty and it is the ring allreduce.
// Messages are MPI Isend/Irecv on the host, reductions on the host's cores
// (CPU) or as a reduction kernel at the kernel boundary (HDN); or puts
// with trailing flags into per-step slots: pre-posted and rung by the
// stream (GDS), registered and fired by a persistent kernel's stores
// (GPU-TN), or issued through the device runtime (device shmem).
type AllreduceHier struct {
	Size   unit.Bytes // the vector, per GPU
	WGSize int        // work-items per work-group of the reduction kernels
	// CommWGs is the work-groups (SMs) of the GPU-initiated persistent
	// kernels (device shmem, device verbs): work-group w runs the three
	// phases on slice w of the vector with slots of its own, as NCCL's
	// channels split a collective; 0 means 1.
	CommWGs int
	// Inter is the inter-node algorithm per rail: HierRing ("" too) or
	// HierTree (NCCL's double binary tree).
	Inter string
	// flat runs every rank as a node of its own (no intra-node phases,
	// whatever node.gpus): the allreduce workload's one-sided rhd.
	flat bool
}

// AllreduceHierResult is one run.
type AllreduceHierResult struct {
	Impl     string
	Ranks    int
	Time     sim.Time    // every rank released together to the last rank's end
	Phases   [3]sim.Time // rank 0's time in each phase
	Finish   []sim.Time  // per rank, from the release
	Verified bool
}

// AllreduceHierDef is the hierarchical allreduce's registry entry.
func AllreduceHierDef() Def {
	na := spinNotApplicable("the hierarchical allreduce reduces on host or GPU cores; the sPIN strategies provide " +
		"receive-side datatype handlers on the NIC, and reductions inside handlers are not modelled")
	for _, d := range strategy.Registry() {
		switch {
		case d.Caps.Has(strategy.NICTasks):
			na[d.Strategy] = "no present-day form: no NIC in service enqueues kernels on the GPU (remote tasks have no production equivalent), and the hierarchical allreduce is a present-day workload; the ring allreduce workload runs XTQ's remote-task allreduce on the source documents' machine"
		}
	}
	return Def{
		Name:     "allreduce_hier",
		Summary:  "hierarchical float32 SUM allreduce: intra-node reduce-scatter over the GPU fabric, per-rail inter-node ring or double binary tree (allreduce_hier.inter), intra-node allgather",
		Baseline: strategy.CPU,
		// The matrix needs a machine whose NIC runs every family the
		// workload implements (GPU-TN's triggered operations and the
		// GPU-initiated verbs; no present-day NIC has both): the seed
		// preset. The experiment runs on the present-day presets, and
		// run matrix --set matrix.hardware=run --preset NAME checks them.
		Preset: "gputn",
		Impls: []Impl{
			{Name: "triggered", Needs: strategy.Triggers | strategy.Stream | strategy.OneSided},
			{Name: "stream-triggered", Needs: strategy.StreamTriggered | strategy.OneSided},
			{Name: "device-shmem", Needs: strategy.DeviceShmem | strategy.Stream},
			{Name: "device-verbs", Needs: strategy.DeviceVerbs | strategy.Stream},
			{Name: "kernel-boundary", Needs: strategy.TwoSided | strategy.Stream},
			{Name: "host", Needs: strategy.TwoSided | strategy.HostCompute},
		},
		NotApplicable: na,
		Small: func(s strategy.Def, hw cluster.Spec, cfg strategy.Config, seed uint64, functional bool) (Cell, error) {
			ranks := 2 * max(1, hw.Node.GPUs) // two nodes
			c, err := newCluster(hw, ranks, seed, functional)
			if err != nil {
				return Cell{}, err
			}
			defer c.Engine.Close()
			r, err := AllreduceHier{Size: 64 * unit.KiB, WGSize: 256}.Run(c, s.Strategy, cfg)
			return Cell{Impl: r.Impl, Nodes: ranks, Time: r.Time, Events: c.Engine.Events(), Verified: r.Verified}, err
		},
	}
}

// hierValue is rank r's input element j: a multiple of 1/8 in [0, 15/8],
// so every partial sum of up to millions of ranks is exact in float32 and
// the result does not depend on the summation order.
func hierValue(r, j int) float32 { return float32((r*7+j*3)%16) / 8 }

// span is the element range [lo, hi) of part k of n parts of [0, elems).
func span(elems, k, n int) (lo, hi int) {
	return int(int64(elems) * int64(k) / int64(n)), int(int64(elems) * int64(k+1) / int64(n))
}

// Run runs the hierarchical allreduce under s on every rank of c.
func (a AllreduceHier) Run(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config) (AllreduceHierResult, error) {
	if a.Size < 4 || a.Size%4 != 0 {
		return AllreduceHierResult{}, fmt.Errorf("allreduce_hier size %v: must be a positive multiple of 4 bytes (float32)", a.Size)
	}
	if a.WGSize < 1 || a.WGSize > 1024 {
		return AllreduceHierResult{}, fmt.Errorf("allreduce_hier wg_size = %d: must be in [1, 1024]", a.WGSize)
	}
	if err := checkInter(a.Inter); err != nil {
		return AllreduceHierResult{}, err
	}
	G := max(1, c.Spec.Node.GPUs)
	if a.flat {
		G = 1
	}
	P := len(c.Nodes)
	if P%G != 0 || P < 1 {
		return AllreduceHierResult{}, fmt.Errorf("allreduce_hier on %d ranks: must be a multiple of node.gpus = %d", P, G)
	}
	N := P / G
	im, _, err := AllreduceHierDef().implFor(s)
	if err != nil {
		return AllreduceHierResult{}, err
	}
	elems := int(a.Size / 4)
	vb := pad8(uint64(elems) * 4)
	bases := make([]mem.Addr, P)
	ends := make([]sim.Time, P)
	var (
		start    sim.Time
		phases   [3]sim.Time
		ready    int
		readySig sim.Signal
		// recvs[r] is rank r's receive region, where GDS's peer copies
		// from the other GPUs of its node land (set before the start
		// barrier; a node's GPUs run on one engine).
		recvs = make([]mem.Addr, P)
	)
	e := c.Engine
	var dvw dvWorld
	g := strategy.Spawn(c, s, cfg, func(nd *strategy.Node) error {
		r := nd.Rank
		node, l := r/G, r%G
		// The vector, then scratch for the G−1 chunks phase 1 receives
		// (each at most elems/G+1 elements), one ring piece or the tree's
		// four halves of a chunk from its children.
		halfB := pad8(uint64((elems/G+1)/2+1) * 4)
		sb := max(vb, uint64(G)*pad8(uint64(elems/G+1)*4))
		var rhdOff []uint64 // the rhd's receive slots in scratch (rhdScratch)
		switch a.Inter {
		case HierTree:
			sb = max(sb, 4*halfB)
		case HierRHD:
			rhdOff = rhdScratch(elems/G+1, N)
			sb = max(sb, rhdOff[len(rhdOff)-1])
		}
		base := nd.Mem.Alloc(nd.Pool, vb+sb, "allreduce_hier")
		bases[r] = base
		vec, scratch := base, base+mem.Addr(vb)
		if b := nd.Mem.Bytes(vec, elems*4); b != nil {
			v := f32(b)
			for j := range v {
				v[j] = hierValue(r, j)
			}
		}
		var rk reduceKernels
		reduce := func(dst, src mem.Addr, nb uint64) {
			if nb == 0 {
				return
			}
			if nd.Stream == nil {
				addInto(nd.Mem, dst, src, nb)
				nd.Host.Compute(3*nb, max(1, nd.Threads))
				return
			}
			nd.Stream.Wait(nd.Stream.Launch(rk.kernel("allreduce_hier.reduce", dst, src, nb, baiduWGs, a.WGSize, nil)))
		}
		var reqs []*mpi.Request
		send := func(at mem.Addr, nb uint64, to, tag int) error {
			if nb == 0 {
				return nil
			}
			q, err := nd.MPI.Isend(at, nb, to, tag)
			reqs = append(reqs, q)
			return err
		}
		recv := func(at mem.Addr, nb uint64, from, tag int) error {
			if nb == 0 {
				return nil
			}
			q, err := nd.MPI.Irecv(at, nb, from, tag)
			reqs = append(reqs, q)
			return err
		}
		waitAll := func() {
			for _, q := range reqs {
				nd.MPI.Wait(q)
			}
			reqs = reqs[:0]
		}
		off := func(lo int) mem.Addr { return mem.Addr(lo * 4) }
		var os *hierOneSided
		if im.Name == "triggered" || im.Name == "stream-triggered" {
			os = a.prepareOneSided(nd, vec, elems, G, N, im.Name == "stream-triggered", recvs)
		}
		var hv *hierVerbs
		if im.Name == "device-verbs" {
			var err error
			if hv, err = a.prepareVerbs(nd, &dvw, vec, elems, G, N); err != nil {
				return err
			}
		}
		// Zero-cost barrier outside the measurement: every rank starts
		// together.
		ready++
		readySig.Notify()
		nd.Host.Proc.WaitUntil(&readySig, "allreduce_hier start", func() bool { return ready == P })
		t0 := nd.Host.Now()
		if r == 0 {
			start = t0
		}
		if os != nil {
			if im.Name == "triggered" {
				os.triggered()
			} else {
				os.gds()
			}
			t1, t2, end := os.t1, os.t2, os.end
			if G == 1 {
				t1, t2 = t0, end
			}
			ends[r] = end
			if r == 0 {
				phases = [3]sim.Time{t1 - t0, t2 - t1, end - t2}
			}
			return nil
		}
		if hv != nil {
			err := hv.run()
			t1, t2, end := hv.t1, hv.t2, hv.end
			if G == 1 { // no intra-node phases: the kernel's launch counts to the ring
				t1, t2 = t0, end
			}
			ends[r] = end
			if r == 0 {
				phases = [3]sim.Time{t1 - t0, t2 - t1, end - t2}
			}
			return err
		}
		if im.Name == "device-shmem" {
			t1, t2, end, err := a.shmemHier(nd, vec, elems, G, N)
			if G == 1 { // no intra-node phases: the kernel's launch counts to the ring
				t1, t2 = t0, end
			}
			ends[r] = end
			if r == 0 {
				phases = [3]sim.Time{t1 - t0, t2 - t1, end - t2}
			}
			return err
		}
		// Phase 1: intra-node reduce-scatter.
		clo, chi := span(elems, l, G)
		cb := uint64(chi-clo) * 4
		slot := 0
		var slots []mem.Addr
		for m := range G {
			if m == l {
				continue
			}
			mlo, mhi := span(elems, m, G)
			if err := send(vec+off(mlo), uint64(mhi-mlo)*4, node*G+m, 1); err != nil {
				return err
			}
			at := scratch + mem.Addr(uint64(slot)*cb)
			slots = append(slots, at)
			slot++
			if err := recv(at, cb, node*G+m, 1); err != nil {
				return err
			}
		}
		waitAll()
		for _, at := range slots {
			reduce(vec+off(clo), at, cb)
		}
		t1 := nd.Host.Now()
		// Phase 2: ring or tree over the N GPUs of rail l on chunk [clo, chi).
		if N > 1 && a.Inter != HierRing && a.Inter != "" {
			slotAt := func(k int) mem.Addr { return scratch + mem.Addr(uint64(k)*halfB) }
			if a.Inter == HierRHD {
				slotAt = func(k int) mem.Addr { return scratch + mem.Addr(rhdOff[k]) }
			}
			if err := hierTreeMPI(nd, interSchedule(a.Inter, vec, clo, chi, node, N), P, G, l, slotAt, reduce); err != nil {
				return err
			}
		} else if N > 1 {
			right, left := ((node+1)%N)*G+l, ((node+N-1)%N)*G+l
			for st := range 2 * (N - 1) {
				sa, sn, ra, rn := hierRingStep(vec, clo, chi, node, N, st)
				tag := 2*P + st // reduce-scatter
				if st >= N-1 {
					tag = 4*P + st - (N - 1) // allgather
				}
				dst := ra
				if st < N-1 {
					dst = scratch
				}
				if err := recv(dst, rn, left, tag); err != nil {
					return err
				}
				if err := send(sa, sn, right, tag); err != nil {
					return err
				}
				waitAll()
				if st < N-1 {
					reduce(ra, scratch, rn)
				}
			}
		}
		t2 := nd.Host.Now()
		// Phase 3: intra-node allgather.
		for m := range G {
			if m == l {
				continue
			}
			mlo, mhi := span(elems, m, G)
			if err := send(vec+off(clo), cb, node*G+m, 3); err != nil {
				return err
			}
			if err := recv(vec+off(mlo), uint64(mhi-mlo)*4, node*G+m, 3); err != nil {
				return err
			}
		}
		waitAll()
		ends[r] = nd.Host.Now()
		if r == 0 {
			phases = [3]sim.Time{t1 - t0, t2 - t1, ends[r] - t2}
		}
		return nil
	})
	if err := e.Run(); err != nil {
		return AllreduceHierResult{}, err
	}
	if err := g.Err(); err != nil {
		return AllreduceHierResult{}, err
	}
	res := AllreduceHierResult{Impl: im.Name, Ranks: P, Phases: phases, Finish: make([]sim.Time, P)}
	for r, t := range ends {
		res.Finish[r] = t - start
		res.Time = max(res.Time, t-start)
	}
	if c.Nodes[0].Mem.Functional() {
		ref := make([]float32, elems)
		for j := range ref {
			var sum float64
			for r := range P {
				sum += float64(hierValue(r, j))
			}
			ref[j] = float32(sum)
		}
		for r := range P {
			got := f32(c.Nodes[r].Mem.Bytes(bases[r], elems*4))
			for j := range ref {
				if math.Float32bits(got[j]) != math.Float32bits(ref[j]) {
					return res, fmt.Errorf("%s allreduce_hier: rank %d element %d = %v, serial sum %v", s, r, j, got[j], ref[j])
				}
			}
		}
		res.Verified = true
	}
	return res, nil
}

// shmemHier is the device-shmem hierarchical allreduce: one persistent
// kernel of one work-group per GPU runs the three phases with puts through
// the device runtime (peer stores inside the node where the runtime has
// them, the NIC across the rails). Every put goes from a staging slot that
// holds the data and, after it, a flag word the receiver waits on (the
// trailing-flag protocol); each (phase, step, source) has its own receive
// slot, so no slot is reused. It returns the device times at which phases
// 1 and 2 and the whole operation ended.
func (a AllreduceHier) shmemHier(nd *strategy.Node, vec mem.Addr, elems, G, N int) (t1, t2, end sim.Time, err error) {
	r := nd.Rank
	node, l := r/G, r%G
	W := a.commWGs(elems)
	dev, err := shmemDevice(nd, W)
	if err != nil {
		return 0, 0, 0, err
	}
	// Each work-group's slice has at most ceil(elems/W) elements.
	ss := newShmemSlots(a.Inter, (elems+W-1)/W, G, N)
	region := uint64(W) * ss.size()        // every work-group's slots
	recv, err := dev.MallocPayload(region) // every rank the same size: symmetric
	if err == nil {
		var stage mem.Addr
		if stage, err = dev.MallocPayload(region); err == nil {
			defer dev.Finalize()
			return a.shmemPhases(nd, dev, vec, recv, stage, ss, elems, G, N, node, l)
		}
	}
	dev.Finalize()
	return 0, 0, 0, err
}

// shmemSlots is the device-shmem slot layout of one work-group: the
// one-sided layout's (hierSlots: each slot sized for its step — a chunk
// in phases 1 and 3, a ring piece, half a chunk or an rhd part in phase
// 2 — the flag right after the data), and a put carries the data and the
// flag. (A put used to carry a whole chunk-sized slot in the ring and the
// tree, so a ring piece of 1/N of the chunk moved the whole chunk.)
type shmemSlots struct {
	sl hierSlots
}

func newShmemSlots(inter string, elems, G, N int) shmemSlots {
	return shmemSlots{sl: newHierSlots(inter, elems, G, N)}
}

// size is one work-group's slots.
func (s shmemSlots) size() uint64 { return max(8, s.sl.bytes()) }

// at is slot k of the slots at base.
func (s shmemSlots) at(base mem.Addr, k int) mem.Addr { return s.sl.at(base, k) }

// flag is the flag word of slot k holding nb bytes.
func (s shmemSlots) flag(base mem.Addr, k int, nb uint64) mem.Addr { return s.sl.flag(base, k, nb) }

// putLen is the bytes a put of nb bytes of data moves, its flag included.
func (s shmemSlots) putLen(nb uint64) uint64 { return pad8(nb) + 8 }

func (a AllreduceHier) shmemPhases(nd *strategy.Node, dev *shmem.Device, vec0, recv0, stage0 mem.Addr, ss shmemSlots, elems0, G, N, node, l int) (t1, t2, end sim.Time, kerr error) {
	mm := nd.Mem
	W := a.commWGs(elems0)
	for w := range W {
		lo, hi := span(elems0, w, W)
		rb, sb := recv0+mem.Addr(uint64(w)*ss.size()), stage0+mem.Addr(uint64(w)*ss.size())
		for _, op := range hierSchedule(a.Inter, vec0+mem.Addr(lo*4), hi-lo, G, N, node, l) {
			if op.send {
				mm.MarkControl(ss.flag(sb, op.slot, op.nb), 8)
			} else {
				mm.MarkControl(ss.flag(rb, op.slot, op.nb), 8)
			}
		}
	}
	slot := ss.at
	off := func(lo int) mem.Addr { return mem.Addr(lo * 4) }
	// idx is the position of local GPU m among the node's other GPUs of l.
	idx := func(m, of int) int {
		if m < of {
			return m
		}
		return m - 1
	}
	errs := make([]error, W)
	k := gpu.Kernel{Name: "allreduce_hier.shmem", WGs: W, WGSize: a.WGSize, Body: func(wg *gpu.WG) {
		// Work-group w's slice of the vector and its own slots.
		lo, hi := span(elems0, wg.ID, W)
		vec, elems := vec0+mem.Addr(lo*4), hi-lo
		recv := recv0 + mem.Addr(uint64(wg.ID)*ss.size())
		stage := stage0 + mem.Addr(uint64(wg.ID)*ss.size())
		clo, chi := span(elems, l, G)
		var t1w, t2w sim.Time
		ctx, err := dev.CtxCreate(wg)
		if err != nil {
			errs[wg.ID] = err
			return
		}
		// put copies nb bytes at src into staging slot k, sets its flag
		// and puts both into slot rk of rank to.
		put := func(k, rk int, src mem.Addr, nb uint64, to int) error {
			if d, sb := mm.Bytes(slot(stage, k), int(nb)), mm.Bytes(src, int(nb)); d != nil && sb != nil {
				copy(d, sb)
			}
			wg.VALU(2)
			wg.StreamOut(2*nb, nb) // the staging copy's writes
			wg.Store64(ss.flag(stage, k, nb), 1)
			return ctx.PutmemNBI(slot(recv, rk), slot(stage, k), ss.putLen(nb), to)
		}
		wait := func(k int, nb uint64) error {
			_, err := ctx.WaitUntil(ss.flag(recv, k, nb), 8, shmem.CmpGE, 1)
			return err
		}
		add := func(dst mem.Addr, k int, nb uint64) {
			addInto(mm, dst, slot(recv, k), nb)
			wg.VALU(2)
			wg.StreamOut(3*nb, nb) // two reads and the sum written
		}
		cp := func(dst mem.Addr, k int, nb uint64) {
			if d, sb := mm.Bytes(dst, int(nb)), mm.Bytes(slot(recv, k), int(nb)); d != nil && sb != nil {
				copy(d, sb)
			}
			wg.StreamOut(2*nb, nb) // the copy's writes
		}
		run := func() error {
			// Phase 1: chunk m to GPU m of the node, into its slot for l.
			for m := range G {
				if m == l {
					continue
				}
				mlo, mhi := span(elems, m, G)
				if err := put(idx(m, l), idx(l, m), vec+off(mlo), uint64(mhi-mlo)*4, node*G+m); err != nil {
					return err
				}
			}
			cb := uint64(chi-clo) * 4
			for m := range G {
				if m == l {
					continue
				}
				if err := wait(idx(m, l), cb); err != nil {
					return err
				}
				add(vec+off(clo), idx(m, l), cb)
			}
			t1w = wg.Now()
			// Phase 2: ring, tree or rhd over rail l on chunk [clo, chi).
			base := G - 1 // phase 2's slots follow phase 1's
			for _, st := range interSchedule(a.Inter, vec, clo, chi, node, N) {
				switch {
				case st.send:
					if err := put(base+st.slot, base+st.rslot, st.at, st.nb, st.peer*G+l); err != nil {
						return err
					}
				case st.add:
					if err := wait(base+st.slot, st.nb); err != nil {
						return err
					}
					add(st.at, base+st.slot, st.nb)
				default:
					if err := wait(base+st.slot, st.nb); err != nil {
						return err
					}
					cp(st.at, base+st.slot, st.nb)
				}
			}
			t2w = wg.Now()
			// Phase 3: the reduced chunk to every other GPU of the node.
			p3 := G - 1 + interSlots(a.Inter, N)
			for m := range G {
				if m == l {
					continue
				}
				if err := put(p3+idx(m, l), p3+idx(l, m), vec+off(clo), cb, node*G+m); err != nil {
					return err
				}
			}
			for m := range G {
				if m == l {
					continue
				}
				mlo, mhi := span(elems, m, G)
				if err := wait(p3+idx(m, l), uint64(mhi-mlo)*4); err != nil {
					return err
				}
				cp(vec+off(mlo), p3+idx(m, l), uint64(mhi-mlo)*4)
			}
			return ctx.Quiet()
		}
		if errs[wg.ID] = run(); errs[wg.ID] != nil {
			return
		}
		// The phases end with the last work-group's.
		t1, t2, end = max(t1, t1w), max(t2, t2w), max(end, wg.Now())
		errs[wg.ID] = ctx.Destroy()
	}}
	if err := dev.Cooperative(k); err != nil {
		return 0, 0, 0, err
	}
	nd.Stream.Wait(nd.Stream.Launch(k))
	return t1, t2, end, firstErr(errs)
}

// commWGs is the work-groups of the GPU-initiated persistent kernels for a
// vector of elems elements: CommWGs (at least 1), at most one per element.
func (a AllreduceHier) commWGs(elems int) int {
	return max(1, min(a.CommWGs, elems))
}

// hierRingStep returns the piece of chunk [clo, chi) of the float32 vector
// at vec that a rail's node sends and the piece it receives at step st of
// the ring over N nodes: reduce-scatter for the first N-1 steps, then
// allgather.
func hierRingStep(vec mem.Addr, clo, chi, node, N, st int) (sa mem.Addr, sn uint64, ra mem.Addr, rn uint64) {
	send, recv := node-st, node-st-1
	if st >= N-1 {
		j := st - N + 1
		send, recv = node+1-j, node-j
	}
	piece := func(k int) (mem.Addr, uint64) {
		lo, hi := span(chi-clo, ((k%N)+N)%N, N)
		return vec + mem.Addr((clo+lo)*4), uint64(hi-lo) * 4
	}
	sa, sn = piece(send)
	ra, rn = piece(recv)
	return sa, sn, ra, rn
}

// hierTreeMPI runs the rank's tree or rhd schedule with MPI on rail l
// (ranks node×G+l of P, tags from 6P): the reduction, then the broadcast
// (the rhd is all one part), each with its receives posted first (the
// ones to be added into scratch slots at slotAt, the others straight into
// the vector), its sends started in schedule order after the receives they
// follow, and all its sends completed before the next part reuses the
// halves. reduce adds a slot into the vector. The rhd's receives never
// overlap: an added part and a part copied in place are disjoint from
// every part sent before them that may still be in flight.
func hierTreeMPI(nd *strategy.Node, steps []interStep, P, G, l int, slotAt func(int) mem.Addr, reduce func(dst, src mem.Addr, nb uint64)) error {
	tag := func(slot int) int { return 6*P + slot }
	rq := make([]*mpi.Request, len(steps))
	for _, bcast := range [2]bool{false, true} {
		for i, st := range steps {
			if st.bcast != bcast || st.send || st.nb == 0 {
				continue
			}
			dst := st.at
			if st.add {
				dst = slotAt(st.slot)
			}
			q, err := nd.MPI.Irecv(dst, st.nb, st.peer*G+l, tag(st.slot))
			if err != nil {
				return err
			}
			rq[i] = q
		}
		var sends []*mpi.Request
		for i, st := range steps {
			if st.bcast != bcast || st.nb == 0 {
				continue
			}
			if st.send {
				q, err := nd.MPI.Isend(st.at, st.nb, st.peer*G+l, tag(st.rslot))
				if err != nil {
					return err
				}
				sends = append(sends, q)
				continue
			}
			nd.MPI.Wait(rq[i])
			if st.add {
				reduce(st.at, slotAt(st.slot), st.nb)
			}
		}
		nd.MPI.Waitall(sends...)
	}
	return nil
}

// rhdScratch is the offsets of the rhd's receive slots in the two-sided
// implementations' scratch for a chunk of at most elems elements on N
// nodes; the last entry is their total.
func rhdScratch(elems, N int) []uint64 {
	off := []uint64{0}
	for k := range rhdSlots(N) {
		off = append(off, off[k]+pad8(uint64(rhdSlotElems(elems, N, k))*4))
	}
	return off
}
