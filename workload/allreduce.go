package workload

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/gpi"
	"github.com/gpunetsim/gpunetsim/model/gputn"
	"github.com/gpunetsim/gpunetsim/model/nbc"
	"github.com/gpunetsim/gpunetsim/model/rdma"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/model/stream"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Allreduce is the strong-scaled float32 SUM allreduce of the dissertation
// §4.1 and §4.5: a ring reduce-scatter followed by a ring allgather.
type Allreduce struct {
	Size       unit.Bytes // vector bytes (float32 elements)
	WGs        int        // GPUTN: slices per chunk, one work-group each; 0 = auto (see Slices)
	MaxWGs     int        // GPUTN auto: at most this many slices (trigger entries, residency); 0 = 16
	WGSize     int        // work-items per work-group
	CPUThreads int        // CPU: threads of the host reduction
	Algorithm  string     // AlgRing ("" too) or AlgRHD
	// SyncPerRound: XTQ's resource-ready sync before every XtqPut round
	// (each target re-posts its receive buffer per step) instead of once
	// before the first, with every round's receive resources posted up
	// front.
	SyncPerRound bool
	// loopWGs runs the device rings' work-groups (device shmem, device
	// verbs) as their blocking loops instead of one state machine each:
	// the reference their step forms are tested against.
	loopWGs bool
	// reports, when not nil, receives each node's device-shmem report by
	// rank (tests compare service threads' counts).
	reports []shmem.Report
}

// AllreduceResult is what one run measured.
type AllreduceResult struct {
	Time     sim.Time   // until the last node holds the full result
	Finish   []sim.Time // per node
	Verified bool       // functional run checked against the serial sum
	Slices   int        // work-group slices per chunk (GPU-TN) or rings (device shmem), else 1
	// ServiceEnergy is the energy of the network service threads, summed
	// over the nodes, in joules (device-shmem strategies; the dissertation).
	ServiceEnergy float64
}

// Slices returns the GPU-TN work-groups per step on n nodes: WGs when set,
// else [DEFAULT] 16 at every node count and size, at most MaxWGs (the
// trigger entries and the resident work-groups). The GPU-TN chapter runs
// the whole collective in one kernel and triggers per work-group (the
// dissertation's §6.3.4) but gives no count; 16 is the most whose per-step
// triggered puts fit its 16 simultaneous trigger operations (§6.1.3). The
// one-per-16-KiB rule of the ComP-Net chapter has no basis in this one.
func (a Allreduce) Slices(n int) int {
	if a.WGs > 0 {
		return a.WGs
	}
	limit := a.MaxWGs
	if limit == 0 {
		limit = 16
	}
	return max(1, min(16, limit))
}

// Validate checks the parameters for n nodes.
func (a Allreduce) Validate(n int) error {
	elems := int64(a.Size / 4)
	switch {
	case a.Size <= 0 || a.Size%4 != 0:
		return fmt.Errorf("allreduce size %v: must be a positive multiple of 4 bytes", a.Size)
	case n < 2:
		return fmt.Errorf("allreduce on %d nodes: need at least 2", n)
	case elems < int64(n):
		return fmt.Errorf("allreduce of %d float32 on %d nodes: need at least one element per node", elems, n)
	case a.WGs < 0 || a.MaxWGs < 0 || a.WGSize < 1 || a.CPUThreads < 1:
		return fmt.Errorf("allreduce: wgs and max_wgs must be ≥ 0, wg_size and cpu_threads ≥ 1 (got %d, %d, %d, %d)", a.WGs, a.MaxWGs, a.WGSize, a.CPUThreads)
	case a.Algorithm != "" && a.Algorithm != AlgRing && a.Algorithm != AlgRHD:
		return fmt.Errorf("allreduce algorithm %q: must be %s or %s", a.Algorithm, AlgRing, AlgRHD)
	}
	return nil
}

// Run runs the allreduce on cluster c under strategy s. The engine must be
// fresh; Run drives it to completion.
func (a Allreduce) Run(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config) (AllreduceResult, error) {
	n := len(c.Nodes)
	if err := a.Validate(n); err != nil {
		return AllreduceResult{}, err
	}
	im, _, err := AllreduceDef().implFor(s)
	if err != nil {
		return AllreduceResult{}, err
	}
	if c.Group != nil && !partitionable(im.Name, s) {
		return AllreduceResult{}, partitionRefusal(c.Group.Partitions(), s, im.Name)
	}
	if c.Group != nil && a.Algorithm == AlgRHD && rhdOneSided(im.Name) {
		return AllreduceResult{}, fmt.Errorf("run.partitions = %d: the %s allreduce with algorithm rhd (one-sided, %s implementation) runs on one engine; use run.partitions=1", c.Group.Partitions(), s, im.Name)
	}
	if a.Algorithm == AlgRHD {
		return a.runRHD(c, s, cfg, im.Name)
	}
	w := 1 // one message per step: a whole chunk
	switch im.Name {
	case "triggered":
		w = a.Slices(n) // one triggered put per (step, work-group slice)
	case "device-shmem", "device-verbs":
		w = a.Rings(n, c.Spec.GPU.CUs) // one ring per work-group
	}
	lay := newRingLayout(int(a.Size/4), n, w)
	// The layout's name caches are made now: the nodes of a partitioned
	// run read the layout in parallel (cluster.NewPartitioned), so nothing
	// in it may be written during the run.
	lay.flagName(0)
	lay.stepName(0)
	res := AllreduceResult{Finish: make([]sim.Time, n), Slices: w}
	// Each node's service energy, summed in node order once the run is
	// over: the nodes of a partitioned run finish on several goroutines.
	energy := make([]float64, n)
	bases := make([]mem.Addr, n)
	var vr verbsRing
	g := strategy.Spawn(c, s, cfg, func(nd *strategy.Node) error {
		var dev *shmem.Device
		var gw *gpi.World
		var base mem.Addr
		var err error
		switch im.Name {
		case "device-shmem":
			if dev, base, err = a.shmemInit(nd, lay); err != nil {
				return err
			}
		case "device-verbs":
			if gw, err = vr.get(nd, lay); err != nil {
				return err
			}
			base = gw.SegmentAddr(0, nd.Rank)
		default:
			base = nd.Mem.Alloc(nd.Pool, lay.totalSize, "allreduce")
		}
		bases[nd.Rank] = base
		// The receive slots are read once, by the step's reduction, which
		// gives their pages back (Consume): a functional run holds the
		// slots in flight, not a vector's worth per node.
		nd.Mem.ScratchSlots(base+mem.Addr(lay.recvBase), int(lay.totalSize-lay.recvBase), int(lay.recvSlot))
		lay.fill(nd.Mem, base, nd.Rank)
		if !rhdRuns(im.Name) { // the two-sided ring matches messages; it reads no flags
			lay.markFlags(nd.Mem, base, nd.Rank)
		}
		switch im.Name {
		case "device-shmem":
			var rep shmem.Report
			rep, err = a.multiRing(nd, dev, lay, base)
			energy[nd.Rank] = rep.Energy.Total()
			if a.reports != nil {
				a.reports[nd.Rank] = rep
			}
		case "device-verbs":
			err = a.verbsRingRun(nd, gw, lay, base)
		case "host", "kernel-boundary":
			err = a.twoSided(nd, lay, base)
		case "stream-triggered":
			err = a.gds(nd, lay, base, bases)
		case "triggered":
			err = a.gputn(nd, lay, base)
		case "remote-tasks":
			err = a.remoteAllreduce(nd, lay, base)
		}
		res.Finish[nd.Rank] = nd.Host.Now()
		return err
	})
	if im.Name == "device-verbs" {
		// The GPI world spans every node: built now, not by the first
		// node's setup on its partition's engine while the others run.
		if d, ok := strategy.VerbsDomain(g.World); ok {
			vr.prebuild(d, lay)
		}
	}
	err = runTasks(c, g)
	for _, e := range energy {
		res.ServiceEnergy += e
	}
	if err != nil {
		return res, err
	}
	for _, t := range res.Finish {
		res.Time = max(res.Time, t)
	}
	if c.Nodes[0].Mem.Functional() {
		mems := make([]*mem.Memory, n)
		for i, nd := range c.Nodes {
			mems[i] = nd.Mem
		}
		if err := lay.verifyAll(mems, bases, lay.reference()); err != nil {
			return res, fmt.Errorf("%s allreduce on %d nodes: %w", s, n, err)
		}
		res.Verified = true
	}
	return res, nil
}

// fill writes node r's input into every subslot, and zeros into its
// padding and sequence word, so every byte of the data part: a node
// memory recycled from the sweep's point before is then not cleared
// first (Memory.BytesToWrite), one pass over the vector instead of two.
// Inputs repeat with period inputPeriod, so each subslot is a copy out of
// one pattern (memmove speed).
func (l *ringLayout) fill(m *mem.Memory, base mem.Addr, r int) {
	// The data part only: the receive slots are not reached before their
	// payloads land (Memory.ScratchSlots keeps them apart).
	all := m.BytesToWrite(base, int(l.recvBase))
	if all == nil {
		return
	}
	pat := newPattern(func(j int) float32 { return inputValue(r, j) })
	// Chunks on both cores: the copies are first touches of fresh pages.
	_ = forBlocks(l.n, l.totalSize, func(k int) error {
		for s := range l.w {
			off, nb := l.sub(k, s)
			elemOff, _ := l.slice(k, s)
			pat.copyTo(all[off:off+nb], l.chunkOff[k]+elemOff)
			clear(all[off+nb : off+pad8(nb)+8])
		}
		return nil
	})
}

// markFlags prepares the trailing-flag protocol (GDS, GPU-TN, device
// shmem, remote tasks): sequence words and step flags carry values even in
// payload-free runs, and the first chunk node r sends is stamped. The
// two-sided ring needs none of it; at a thousand nodes these 3n words per
// node would be most of its memory.
func (l *ringLayout) markFlags(m *mem.Memory, base mem.Addr, r int) {
	for k := range l.n {
		for s := range l.w {
			off, nb := l.sub(k, s)
			m.MarkControl(base+mem.Addr(off+pad8(nb)), 8)
		}
	}
	for st := range l.n - 1 {
		for s := range l.w {
			m.MarkControl(l.flagAddr(base, r, st, s), 8)
		}
	}
	for s := range l.w {
		off, nb := l.sub(r, s)
		m.Store64(base+mem.Addr(off+pad8(nb)), 1)
	}
}

// reference returns the serial float32 sum over nodes as a pattern: the
// sum of element j depends only on j mod inputPeriod, and every partial
// sum is exact (multiples of 1/8 far below 2^24/8), so the pattern is the
// exact result whatever the summation order.
func (l *ringLayout) reference() *pattern {
	return newPattern(func(j int) float32 {
		var sum float32
		for r := range l.n {
			sum += inputValue(r, j)
		}
		return sum
	})
}

// verifyAll verifies every node's result (verify) on all cores and
// returns the error of the first node, in rank order, that differs.
func (l *ringLayout) verifyAll(mems []*mem.Memory, bases []mem.Addr, ref *pattern) error {
	return forBlocks(len(mems), uint64(len(mems))*l.totalSize, func(i int) error {
		if err := l.verify(mems[i], bases[i], ref); err != nil {
			return fmt.Errorf("node %d: %w", i, err)
		}
		return nil
	})
}

// verify compares node memory with the serial reference, byte for byte
// (the sums are exact, see reference).
func (l *ringLayout) verify(m *mem.Memory, base mem.Addr, ref *pattern) error {
	for k := range l.n {
		for s := range l.w {
			off, nb := l.sub(k, s)
			got := m.Bytes(base+mem.Addr(off), int(nb))
			elemOff, _ := l.slice(k, s)
			if j, ok := ref.equal(got, l.chunkOff[k]+elemOff); !ok {
				return fmt.Errorf("element %d = %v, want %v", j, f32(got)[j-l.chunkOff[k]-elemOff], ref.at(j))
			}
		}
	}
	return nil
}

// ringRound returns round (step) st of the libNBC-style ring schedule of
// node i for slice s (the dissertation), 2(n−1) rounds in all: per step a
// send of one chunk to the right, a receive from the left, and in the
// reduce-scatter half a reduction of the received chunk into the local
// one. Addresses are the data bytes of the subslots. The round is made in
// the storage of round (the previous one's, or nil).
func ringRound(round nbc.Round, l *ringLayout, base mem.Addr, i, s, st int) nbc.Round {
	n := l.n
	sendK, recvK := mod(i-st, n), l.stepChunk(i, st)
	if st >= n-1 {
		sendK = mod(i+1-(st-(n-1)), n)
	}
	sendOff, sendLen := l.sub(sendK, s)
	recvAddr, recvLen := l.recvAddr(base, st, recvK, s)
	round = append(round[:0], nbc.Op{}, nbc.Op{})
	round[0] = nbc.Op{Kind: nbc.Send, Peer: mod(i+1, n), Chunk: sendK, Step: st, Addr: base + mem.Addr(sendOff), Len: sendLen}
	round[1] = nbc.Op{Kind: nbc.Recv, Peer: mod(i-1, n), Chunk: recvK, Step: st, Addr: recvAddr, Len: recvLen}
	if st < n-1 {
		dstOff, _ := l.sub(recvK, s)
		round = append(round, nbc.Op{Kind: nbc.Reduce, Chunk: recvK, Step: st,
			Addr: base + mem.Addr(dstOff), Src: recvAddr, Len: recvLen})
	}
	return round
}

// recvAddr returns where step st's incoming chunk k slice s lands: a
// receive slot in the reduce-scatter half, in place in the allgather half.
func (l *ringLayout) recvAddr(base mem.Addr, st, k, s int) (mem.Addr, uint64) {
	_, nb := l.sub(k, s)
	if st < l.n-1 {
		return base + mem.Addr(l.recv(st, s)), nb
	}
	off, _ := l.sub(k, s)
	return base + mem.Addr(off), nb
}

// twoSided is the CPU and HDN ring: the schedule runs as a nonblocking
// collective over MPI (Isend/Irecv per step); the reduction runs on the
// host's cores (CPU) or in a kernel per step (HDN).
func (a Allreduce) twoSided(nd *strategy.Node, l *ringLayout, base mem.Addr) error {
	// Rounds are made as they start: the whole schedule is 2(n−1) rounds
	// per node, which at a thousand nodes would dominate memory.
	a.copyIn(nd, base)
	var buf nbc.Round // the previous round's storage (nbc.StartRounds)
	round := func(st int) nbc.Round {
		buf = ringRound(buf, l, base, nd.Rank, 0, st)
		return buf
	}
	return a.wait(nd, nbc.StartRounds(nbc.OverMPI(nd.MPI), a.localReduce(nd), 2*(l.n-1), round))
}

// copyIn is the ring baselines' first step: the input copied into the
// output buffer before the ring — on the GPU a device-to-device copy and a
// stream synchronize, on the host a memcpy (baidu-allreduce
// collectives.cu; libNBC's ring copies the send buffer into the receive
// buffer too). The vector here is reduced in place, so the copy's bytes
// land on themselves: its time is charged, the values stay. On the host
// the copy writes the output buffer base, which then sits in the caches
// as far as they hold it; the input's bytes (written when the vector was
// made) come from DRAM, as the destination's ownership misses do.
func (a Allreduce) copyIn(nd *strategy.Node, base mem.Addr) {
	size := uint64(a.Size)
	if nd.Stream == nil {
		nd.Host.ComputeOn(a.CPUThreads, mem.Access{Addr: base, Len: size, Write: true}, mem.Access{Addr: base, Len: size, Write: true})
		return
	}
	wgs, wgSize := baiduWGs, a.WGSize
	nd.Stream.Wait(nd.Stream.Launch(gpu.Kernel{Name: "copy", WGs: wgs, WGSize: wgSize, Body: func(wg *gpu.WG) {
		lo, hi := uint64(wg.ID)*size/uint64(wgs), uint64(wg.ID+1)*size/uint64(wgs)
		wg.VALU(int((hi - lo + uint64(4*wgSize) - 1) / uint64(4*wgSize)))
		wg.StreamOut(2*(hi-lo), hi-lo) // half of it the copy's writes
	}}))
}

// wait waits for a two-sided schedule started with localReduce: with host
// compute its reductions run as steps of the wait too (hostReduce).
func (a Allreduce) wait(nd *strategy.Node, h *nbc.Handle) error {
	if nd.Stream == nil {
		h.WithLocalSteps(hostReduce{nd: nd, threads: a.CPUThreads})
	}
	return h.Wait()
}

// hostReduce is localReduce's host-compute Reduce as steps of the host
// thread (nbc.LocalStepper): the same sum and the same parallel region.
type hostReduce struct {
	nd      *strategy.Node
	threads int
}

// BeginLocal implements nbc.LocalStepper.
func (r hostReduce) BeginLocal(op nbc.Op) bool {
	if op.Kind != nbc.Reduce {
		return false
	}
	addInto(r.nd.Mem, op.Addr, op.Src, op.Len)
	r.nd.Mem.Consume(op.Src, int(op.Len))
	r.nd.Host.BeginComputeOn(r.threads, reduceInto(op.Addr, op.Src, op.Len)...)
	return true
}

// TryLocal implements nbc.LocalStepper.
func (r hostReduce) TryLocal() bool { return r.nd.Host.Try() }

// localReduce is the two-sided schedules' Reduce op: on the host's cores
// (host compute) or in a kernel (HDN). The round's dispatch (sw.nbc_step)
// is charged by nbc.
func (a Allreduce) localReduce(nd *strategy.Node) func(op nbc.Op) {
	var names []string // "reduce[step]", made once per step
	var rk reduceKernels
	return func(op nbc.Op) {
		if nd.Stream == nil { // host compute
			addInto(nd.Mem, op.Addr, op.Src, op.Len)
			nd.Mem.Consume(op.Src, int(op.Len))
			nd.Host.ComputeOn(a.CPUThreads, reduceInto(op.Addr, op.Src, op.Len)...)
			return
		}
		for len(names) <= op.Step {
			names = append(names, fmt.Sprintf("reduce[%d]", len(names)))
		}
		k := rk.kernel(names[op.Step], op.Addr, op.Src, op.Len, a.kernelWGs(nd, op.Len), a.WGSize, nil)
		nd.Stream.Wait(nd.Stream.Launch(k))
	}
}

// kernelWGs sizes a one-step reduction kernel (HDN, GDS, HSA): Baidu's
// kernel_add<<<32, 256>>> — 32 work-groups whatever the chunk, each taking
// its part (baidu-research/baidu-allreduce collectives.cu, the ring the
// dissertation's kernel-boundary baselines use, §5.4.4 and §6.3.4).
func (a Allreduce) kernelWGs(nd *strategy.Node, nb uint64) int {
	return baiduWGs
}

// baiduWGs is Baidu's reduction kernel's grid: 32 work-groups.
const baiduWGs = 32

// addInto adds the float32 values at src into dst (functional part only).
// reduceInto lists the ranges a host reduction dst += src of nb bytes
// streams (cpu.Thread.ComputeOn): src read, dst read, then written.
func reduceInto(dst, src mem.Addr, nb uint64) []mem.Access {
	return []mem.Access{{Addr: src, Len: nb}, {Addr: dst, Len: nb}, {Addr: dst, Len: nb, Write: true}}
}

func addInto(m *mem.Memory, dst, src mem.Addr, nb uint64) {
	d, s := m.Bytes(dst, int(nb)), m.Bytes(src, int(nb))
	if d == nil || s == nil {
		return
	}
	addF32(f32(d), f32(s))
}

// addF32 adds s into d element by element, eight at a time: the same
// float32 additions as the plain loop (bit-identical results), with a
// bounds check per eight elements instead of two per element, which
// halves the time of a functional run's reductions.
func addF32(d, s []float32) {
	s = s[:len(d)]
	i := 0
	for ; i+8 <= len(d); i += 8 {
		dd, ss := d[i:i+8:i+8], s[i:i+8:i+8]
		dd[0] += ss[0]
		dd[1] += ss[1]
		dd[2] += ss[2]
		dd[3] += ss[3]
		dd[4] += ss[4]
		dd[5] += ss[5]
		dd[6] += ss[6]
		dd[7] += ss[7]
	}
	for ; i < len(d); i++ {
		d[i] += s[i]
	}
}

// reduceKernels makes the reduction kernels of one caller that runs them
// one after another, each made after the previous one finished (a node's
// HDN steps, which wait for their kernel; a GDS stream's program, whose
// CP makes a kernel when it reaches it): the work-groups' bodies, the
// kernel's parameters and its Steps function are reused from kernel to
// kernel instead of allocated per kernel (4032 kernels of 48 work-groups
// in a 64-node HDN run). kernel panics if a work-group of the previous
// kernel has not finished yet.
type reduceKernels struct {
	dst, src           mem.Addr
	elems, wgs, wgSize int
	stamp              wordStore
	stamped            bool
	bodies             []reduceWG
	busy               int // work-groups started and not finished
	done               int // work-groups finished: at wgs, src is consumed
	steps              func(wg *gpu.WG) gpu.StepBody
}

// kernel returns the kernel that adds nb bytes of float32 at src into dst
// with wgs work-groups of wgSize items; each work-group takes a contiguous
// part and is charged 4 vector instructions per element per work-item and
// 12 bytes of memory traffic per element. stamp, if non-nil, is a word
// work-group 0 stores after its part. The work-groups run as steps
// (callback events), which a straight-line body allows.
func (rk *reduceKernels) kernel(name string, dst, src mem.Addr, nb uint64, wgs, wgSize int, stamp *wordStore) gpu.Kernel {
	if rk.busy != 0 {
		panic(fmt.Sprintf("reduction kernel %s made while %d work-groups of the previous one still run", name, rk.busy))
	}
	rk.dst, rk.src, rk.elems, rk.wgs, rk.wgSize = dst, src, int(nb/4), wgs, wgSize
	rk.stamped, rk.done = stamp != nil, 0
	if stamp != nil {
		rk.stamp = *stamp
	}
	if cap(rk.bodies) < wgs {
		rk.bodies = make([]reduceWG, wgs)
	}
	rk.bodies = rk.bodies[:wgs]
	if rk.steps == nil {
		rk.steps = rk.body
	}
	// One code whatever the step in the name: its launches share
	// instruction lines (gpu.Kernel.Code).
	return gpu.Kernel{Name: name, Code: "allreduce.reduce", WGs: wgs, WGSize: wgSize, Steps: rk.steps}
}

// body is work-group wg's body of the current kernel.
func (rk *reduceKernels) body(wg *gpu.WG) gpu.StepBody {
	lo, hi := wg.ID*rk.elems/rk.wgs, (wg.ID+1)*rk.elems/rk.wgs
	r := &rk.bodies[wg.ID]
	*r = reduceWG{rk: rk}
	if rk.stamped {
		r.stamp = &rk.stamp
	}
	r.red.set(rk.dst, rk.src, lo, hi, rk.wgSize)
	rk.busy++
	return r
}

// wordStore is a word a kernel stores (a sequence stamp).
type wordStore struct {
	at mem.Addr
	v  uint64
}

// reduceWG is one work-group of a reduction kernel as steps.
type reduceWG struct {
	red     reduceSteps
	stamp   *wordStore
	rk      *reduceKernels
	reduced bool
}

// Step implements gpu.StepBody.
func (r *reduceWG) Step(wg *gpu.WG) bool {
	if !r.reduced {
		r.reduced = r.red.step(wg)
		return false
	}
	if r.stamp == nil || wg.ID != 0 || wg.TryStore64(r.stamp.at, r.stamp.v) {
		rk := r.rk
		rk.busy--
		if rk.done++; rk.done == rk.wgs { // every part added: the source is dead
			wg.Mem().Consume(rk.src, 4*rk.elems)
		}
		return true
	}
	return false
}

// reduceSteps is reduceRange as steps: the functional add and the VALU
// charge, then the memory stream.
type reduceSteps struct {
	dst, src    mem.Addr
	cnt, wgSize int
	pc          uint8
}

// set prepares the addition of elements [lo, hi).
func (r *reduceSteps) set(dst, src mem.Addr, lo, hi, wgSize int) {
	*r = reduceSteps{dst: dst + mem.Addr(4*lo), src: src + mem.Addr(4*lo), cnt: hi - lo, wgSize: wgSize}
}

// step runs the next operation; true when the reduction is done (its
// stream may still be pending).
func (r *reduceSteps) step(wg *gpu.WG) bool {
	if r.cnt <= 0 {
		return true
	}
	switch r.pc {
	case 0:
		addInto(wg.Mem(), r.dst, r.src, uint64(4*r.cnt))
		r.pc = 1
		wg.VALU(4 * ((r.cnt + r.wgSize - 1) / r.wgSize))
		return false
	default:
		r.pc = 0
		wg.StreamOut(uint64(12*r.cnt), uint64(4*r.cnt)) // two reads and a write per element
		return true
	}
}

// reduceRange is one work-group adding elements [lo, hi).
func reduceRange(wg *gpu.WG, dst, src mem.Addr, lo, hi, wgSize int) {
	if hi <= lo {
		return
	}
	cnt := hi - lo
	addInto(wg.Mem(), dst+mem.Addr(4*lo), src+mem.Addr(4*lo), uint64(4*cnt))
	wg.VALU(4 * ((cnt + wgSize - 1) / wgSize))
	wg.StreamOut(uint64(12*cnt), uint64(4*cnt)) // two reads and a write per element
}

// ringTNWG is work-group s of the GPU-TN ring allreduce kernel as steps:
// trigger step 0's put; then for each step poll its flag with
// system-scope acquires, do the step's work (stepWork: in the
// reduce-scatter half reduce and stamp) and trigger the next step's put.
// Beyond the first limit puts of the schedule (the NIC's trigger entries),
// a put is triggered only once the NIC's registration word says the host's
// registration of it took effect (see gate).
type ringTNWG struct {
	// What every step reads first (the state, the step and slice, the
	// flag it polls): one cache line. At a thousand nodes the struct is
	// cold at each step's first event, and pc sat in its last line.
	pc      uint8
	st, s   int
	l       *ringLayout
	limit   int    // trigger entries (0: no limit, no gate)
	seen    uint64 // the registration word's last value read
	want    uint64
	flag    mem.Addr
	base    mem.Addr
	i       int
	stampAt mem.Addr
	trig    gputn.TrigAddr
	tr      gputn.WGTrigger
	steps   int
	wgSize  int
	need    uint64 // the value of the registration word put st·w+s needs
	red     reduceSteps
	reg     mem.Addr          // the NIC's registration word (registrations in effect)
	regCond func(uint64) bool // word ≥ need
}

// The states of a ringTNWG.
const (
	tnGate    = iota // wait, if needed, until step st's put is registered
	tnTrigger        // trigger step st's put
	tnPoll           // wait for step st's data
	tnReduce         // reduce it into the chunk forwarded next
	tnStamp          // stamp that chunk with the next sequence number
)

// gate reports whether put k of the schedule (step st, slice s: k =
// st·w + s, the order the host registers them in) may be triggered now.
// The relaxed synchronization of GPU-TN lets a trigger come before its
// registration: the NIC then gives the tag an entry of its own, and with
// every entry live the trigger stalls the trigger FIFO. The slices are
// independent rings, so one can run steps ahead of the others (on a host
// with slow DRAM the reductions serialize and the first slice races through
// the allgather): its early trigger then waits at the FIFO head for an
// entry that the registrations of the slower slices hold, while their
// triggers queue behind it — a deadlock of the hardware, not of the
// simulator. So the kernel triggers put k ≥ limit only once the NIC's
// registration word reaches k+1 (strict synchronization beyond the first
// table-full; the first limit puts always find a free entry, because every
// live entry then belongs to one of them). Each trigger then finds its
// entry, the FIFO never stalls, and the lowest unfired put of the whole
// ring can always be registered and triggered. The word is read again only
// when the last value read does not cover k.
//
// The acquire and load are the simulated kernel's own, with their latency,
// not simulator bookkeeping: with small slices (512 B at 1,024 nodes) they
// are on each step's critical path, so removing or merging their events
// would change the results (docs/speed.md, "GPU-TN's registration gate").
func (t *ringTNWG) gate(wg *gpu.WG) bool {
	k := uint64(t.st*t.l.w + t.s)
	if t.limit == 0 || k < uint64(t.limit) || t.seen > k {
		return true
	}
	t.need = k + 1
	v, ok := wg.TryPollUntil(t.reg, true, "registration of its triggered put", t.regCond)
	if ok {
		t.seen = v
	}
	return false
}

// Step implements gpu.StepBody.
func (t *ringTNWG) Step(wg *gpu.WG) bool {
	switch t.pc {
	case tnGate:
		if !t.gate(wg) {
			return false
		}
		t.pc = tnTrigger
		fallthrough
	case tnTrigger:
		if t.tr.Try(wg, t.trig, tag(t.st, t.s, t.l.w)) {
			t.pc, t.want, t.flag = tnPoll, t.l.expect(t.st), t.l.flagAddr(t.base, t.i, t.st, t.s)
		}
		return false
	case tnPoll:
		if _, ok := wg.TryPollEqual(t.flag, true, t.l.flagName(t.st), t.want); !ok {
			return false
		}
		if t.st >= t.l.n-1 { // allgather: the data arrived in place
			return t.next()
		}
		k := t.l.stepChunk(t.i, t.st)
		off, nb := t.l.sub(k, t.s)
		_, cnt := t.l.slice(k, t.s)
		t.red.set(t.base+mem.Addr(off), t.base+mem.Addr(t.l.recv(t.st, t.s)), 0, cnt, t.wgSize)
		t.stampAt = t.base + mem.Addr(off+pad8(nb))
		t.pc = tnReduce
		return false
	case tnReduce:
		if t.red.step(wg) {
			wg.Mem().Consume(t.red.src, 4*t.red.cnt)
			t.pc = tnStamp
		}
		return false
	default:
		if !wg.TryStore64(t.stampAt, uint64(t.st+2)) {
			return false
		}
		return t.next()
	}
}

// next moves to the trigger of the next step; true after the last.
func (t *ringTNWG) next() bool {
	if t.st+1 >= t.steps {
		return true
	}
	t.st++
	t.pc = tnGate
	return false
}

// tag numbers the trigger entry of (step, slice).
func tag(st, s, w int) uint64 { return uint64(1000 + st*w + s) }

// puts returns node i's one-sided put of step st, slice s.
func (l *ringLayout) put(base mem.Addr, i, st, s int) rdma.Put {
	sendK := mod(i-st, l.n)
	if st >= l.n-1 {
		sendK = mod(i+1-(st-(l.n-1)), l.n)
	}
	off, _ := l.sub(sendK, s)
	remote := off
	if st < l.n-1 {
		remote = l.recv(st, s)
	}
	return rdma.Put{Src: base + mem.Addr(off), Length: l.subBytes(sendK, s), Target: mod(i+1, l.n), RemoteOffset: remote}
}

// stepChunk returns the chunk node i receives in step st.
func (l *ringLayout) stepChunk(i, st int) int {
	if st < l.n-1 {
		return mod(i-st-1, l.n)
	}
	return mod(i-(st-(l.n-1)), l.n)
}

// flagName names step st's flag wait (deadlock reports); the names are
// made once per run, not per poll.
func (l *ringLayout) flagName(st int) string {
	if l.flagNames == nil {
		l.flagNames = make([]string, 2*(l.n-1))
		for i := range l.flagNames {
			l.flagNames[i] = fmt.Sprintf("flag step %d", i)
		}
	}
	return l.flagNames[st]
}

// stepName names GDS's step-st kernel; the names are made once per run.
func (l *ringLayout) stepName(st int) string {
	if l.stepNames == nil {
		l.stepNames = make([]string, l.n-1)
		for i := range l.stepNames {
			l.stepNames[i] = fmt.Sprintf("step[%d]", i)
		}
	}
	return l.stepNames[st]
}

// flagAddr returns the sequence word that announces step st's slice s.
func (l *ringLayout) flagAddr(base mem.Addr, i, st, s int) mem.Addr {
	addr, nb := l.recvAddr(base, st, l.stepChunk(i, st), s)
	return addr + mem.Addr(pad8(nb))
}

// expect is the sequence word that announces step st's data. A
// reduce-scatter step carries st+1; every allgather step carries n, the
// stamp of the fully reduced chunk, forwarded unchanged. No allgather
// receive target ever holds n before its data lands (the only subslot a
// node stamps n is the chunk it sends first, which it never receives), so
// the allgather needs neither a copy nor a re-stamp.
func (l *ringLayout) expect(st int) uint64 {
	if st < l.n-1 {
		return uint64(st + 1)
	}
	return uint64(l.n)
}

// stepWork is what the work-group of slice s does after step st's data
// arrived: in the reduce-scatter half, reduce it into the local chunk and
// stamp that chunk, which it forwards next, with the next step's sequence
// number. Allgather data arrives in place and is forwarded as it is.
func (l *ringLayout) stepWork(wg *gpu.WG, base mem.Addr, i, st, s, wgSize int) {
	if st >= l.n-1 {
		return
	}
	k := l.stepChunk(i, st)
	off, nb := l.sub(k, s)
	_, cnt := l.slice(k, s)
	if wg.Proc.CanRunSteps() {
		// A coroutine body lends its process to the work (sim.Proc.RunSteps):
		// one switch there and back instead of two per wait.
		var w stepWorkSteps
		l.stepWorkSet(&w, wg, base, i, st, s, wgSize)
		wg.Proc.RunSteps(&w)
		return
	}
	reduceRange(wg, base+mem.Addr(off), base+mem.Addr(l.recv(st, s)), 0, cnt, wgSize)
	wg.Mem().Consume(base+mem.Addr(l.recv(st, s)), 4*cnt)
	wg.Store64(base+mem.Addr(off+pad8(nb)), uint64(st+2))
}

// stepWorkSet makes w stepWork's reduction and stamp of step st as steps;
// it reports false when the step has none (allgather steps).
func (l *ringLayout) stepWorkSet(w *stepWorkSteps, wg *gpu.WG, base mem.Addr, i, st, s, wgSize int) bool {
	if st >= l.n-1 {
		return false
	}
	k := l.stepChunk(i, st)
	off, nb := l.sub(k, s)
	_, cnt := l.slice(k, s)
	*w = stepWorkSteps{wg: wg, at: base + mem.Addr(off+pad8(nb)), v: uint64(st + 2),
		recv: base + mem.Addr(l.recv(st, s)), n: 4 * cnt}
	w.red.set(base+mem.Addr(off), base+mem.Addr(l.recv(st, s)), 0, cnt, wgSize)
	return true
}

// stepWorkSteps is stepWork's reduction and stamp as a sim.Stepper.
type stepWorkSteps struct {
	wg      *gpu.WG
	red     reduceSteps
	at      mem.Addr
	v       uint64
	recv    mem.Addr // the receive slot, given back once reduced
	n       int
	reduced bool
	freed   bool
}

// Step implements sim.Stepper.
func (w *stepWorkSteps) Step(*sim.Proc) bool {
	if !w.reduced {
		w.reduced = w.red.step(w.wg)
		return false // after the stream's wait, if any
	}
	if !w.freed {
		w.freed = true
		w.wg.Mem().Consume(w.recv, w.n)
	}
	return w.wg.TryStore64(w.at, w.v)
}

// gds pre-posts every put, then streams per step: wait for the step's
// flag; in the reduce-scatter half a kernel that reduces and stamps the
// chunk it forwards next; then the CP rings the next step's put. Allgather
// steps need no kernel: the data arrived in place and is forwarded as is.
// The puts and the stream operations are made from their step when the
// NIC or the CP reaches them (a block of deferred puts, a stream Program):
// the whole schedule is enqueued ahead of the CP on every node, which at a
// thousand nodes would otherwise hold a few megabytes per node.
func (a Allreduce) gds(nd *strategy.Node, l *ringLayout, base mem.Addr, bases []mem.Addr) error {
	a.copyIn(nd, base)
	nd.RDMA.Expose(base, l.totalSize)
	p := &gdsProgram{a: a, nd: nd, l: l, base: base, bases: bases}
	// The ring's next rank on this node's GPU fabric is reached by a copy
	// engine on the stream (cudaMemcpyPeerAsync, as NVSHMEM's on-stream
	// puts to a P2P peer), not by the NIC: no put is preposted.
	if p.peer = nd.Stream.ReachesPeer(mod(nd.Rank+1, l.n)); !p.peer {
		p.first = nd.RDMA.PrepostBlock(2*(l.n-1), func(st int) rdma.Put { return l.put(base, nd.Rank, st, 0) })
	}
	nd.Stream.Enqueue(p)
	nd.Stream.Synchronize()
	return nil
}

// gdsProgram is node nd's GDS ring schedule as stream operations: the
// trigger of step 0's put, then per step the flag wait, in the
// reduce-scatter half the step's kernel, and the trigger of the next
// step's put (none after the last step): 1 + 3(n−1) + 2(n−1) − 1.
type gdsProgram struct {
	a     Allreduce
	nd    *strategy.Node
	l     *ringLayout
	base  mem.Addr
	first rdma.Deferred // step st's put is first+st
	rk    reduceKernels // the CP makes each step's kernel after the previous one finished
	// peer: the next rank is a GPU of this node, reached by peer copies
	// into its region at bases[next] instead of the puts.
	peer  bool
	bases []mem.Addr
}

func (p *gdsProgram) Len() int { return 5 * (p.l.n - 1) }

// at returns what operation i is and its step (for a trigger, the step
// whose put it activates).
func (p *gdsProgram) at(i int) (stream.OpKind, int) {
	if i == 0 {
		return stream.OpTrigger, 0
	}
	j, rs := i-1, 3*(p.l.n-1)
	if j < rs {
		return [3]stream.OpKind{stream.OpWaitEqual, stream.OpKernel, stream.OpTrigger}[j%3], j/3 + j%3/2
	}
	j -= rs
	return [2]stream.OpKind{stream.OpWaitEqual, stream.OpTrigger}[j%2], p.l.n - 1 + j/2 + j%2
}

func (p *gdsProgram) Kind(i int) stream.OpKind {
	k, _ := p.at(i)
	if k == stream.OpTrigger && p.peer {
		return stream.OpPeerCopy
	}
	return k
}

func (p *gdsProgram) Op(i int) stream.Op {
	k, st := p.at(i)
	l, r := p.l, p.nd.Rank
	switch k {
	case stream.OpTrigger:
		if p.peer {
			put := l.put(p.base, r, st, 0)
			return stream.Op{Kind: stream.OpPeerCopy, PE: put.Target, Addr: p.bases[put.Target] + mem.Addr(put.RemoteOffset), Src: put.Src, N: put.Length}
		}
		return stream.Op{Kind: k, Deferred: p.first + rdma.Deferred(st)}
	case stream.OpWaitEqual:
		return stream.Op{Kind: k, Addr: l.flagAddr(p.base, r, st, 0), Value: l.expect(st), What: l.flagName(st)}
	}
	kk := l.stepChunk(r, st)
	off, nb := l.sub(kk, 0)
	stamp := wordStore{at: p.base + mem.Addr(off+pad8(nb)), v: uint64(st + 2)}
	return stream.Op{Kind: k, Kernel: p.rk.kernel(l.stepName(st), p.base+mem.Addr(off), p.base+mem.Addr(l.recv(st, 0)), nb,
		p.a.kernelWGs(p.nd, nb), p.a.WGSize, &stamp)}
}

// gputn launches one persistent kernel and registers a triggered put per
// (step, slice), tag base + step·W + slice, threshold 1, in step order.
// Work-group s polls each step's flag with a system-scope acquire, reduces
// or forwards, releases at system scope and writes the next tag.
func (a Allreduce) gputn(nd *strategy.Node, l *ringLayout, base mem.Addr) error {
	nd.RDMA.Expose(base, l.totalSize)
	trig := nd.TN.TriggerAddr()
	steps := 2 * (l.n - 1)
	i := nd.Rank
	limit := nd.TN.EntryLimit()
	var reg mem.Addr
	if limit > 0 && steps*l.w > limit {
		reg = nd.Mem.AllocData(nd.Pool, 8, "allreduce.registered")
	} else {
		limit = 0 // every put fits the table at once: no gate
	}
	run := nd.Stream.Launch(gpu.Kernel{Name: "allreduce", WGs: l.w, WGSize: a.WGSize, Steps: func(wg *gpu.WG) gpu.StepBody {
		t := &ringTNWG{l: l, base: base, i: i, s: wg.ID, steps: steps, wgSize: a.WGSize, trig: trig, reg: reg, limit: limit}
		t.regCond = func(v uint64) bool { return v >= t.need }
		wg.ResumesInPoll() // Step resumes a poll's wait in TryPollUntil (gate, tnPoll)
		return t
	}})
	// Every send of the schedule (node i's put of each step and slice to
	// its right neighbour) becomes a triggered put, registered in step
	// order while the kernel already runs (relaxed synchronization); the
	// NIC counts the registrations in effect into reg (see ringTNWG.gate).
	pt := nd.RDMA.PT()
	nd.TN.TrigPutBlockCounted(steps*l.w, func(k int) uint64 { return tag(k/l.w, k%l.w, l.w) }, func(k int) gputn.Put {
		p := l.put(base, i, k/l.w, k%l.w)
		return gputn.Put{Src: p.Src, Length: p.Length, Target: p.Target, PT: pt, RemoteOffset: p.RemoteOffset}
	}, 1, reg)
	nd.Stream.Wait(run)
	return nil
}
