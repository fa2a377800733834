package workload

import (
	"fmt"
	"math"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/gpi"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// Stencil costs ([DEFAULT], the dissertation's throughput abstraction): per
// point, 8 vector instructions per work-item (four loads' address
// arithmetic folded in, three adds, a multiply, the difference, its
// absolute value and the running max) and 8 bytes of memory traffic (the
// old value read once, neighbours from cache, the new value written); a
// packed edge value moves 8 bytes (read and written).
const (
	stencilVALU  = 8
	stencilBytes = 8
	packBytes    = 8
)

// jacobiNode is one node's run of the relaxation.
type jacobiNode struct {
	j    Jacobi
	nd   *strategy.Node
	l    *jacobiLayout
	base mem.Addr
	// counters holds the device-shmem implementation's per-(iteration,
	// side) edge counters, one line each.
	counters mem.Addr
	res      []float32 // global residual per iteration as this node saw it
	// phases is the host timeline's breakdown (JacobiResult.Phases).
	phases     map[string]sim.Time
	overlapped sim.Time
	kernels    []*gpu.Run
	comm       [][2]sim.Time // host intervals inside MPI
	// bases holds every rank's region (GDS peer copies to a GPU of this
	// node land there).
	bases *peerBases
}

// Run runs the relaxation on cluster c under strategy s. The engine must be
// fresh; Run drives it to completion.
func (j Jacobi) Run(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config) (JacobiResult, error) {
	n := len(c.Nodes)
	if err := j.Validate(n); err != nil {
		return JacobiResult{}, err
	}
	im, _, err := JacobiDef().implFor(s)
	if err != nil {
		return JacobiResult{}, err
	}
	rounds := disseminationRounds(n)
	if im.Name == "stream-triggered" {
		rounds = n // one incoming slot per peer: the all-to-all exchange
	}
	nodes := make([]*jacobiNode, n)
	start, finish := make([]sim.Time, n), make([]sim.Time, n)
	var jv jacobiVerbs
	bases := newPeerBases(n)
	g := strategy.Spawn(c, s, cfg, func(nd *strategy.Node) error {
		l := newJacobiLayout(j, n, nd.Rank, rounds)
		jn := &jacobiNode{j: j, nd: nd, l: l, res: make([]float32, j.Iters), phases: map[string]sim.Time{}, bases: bases}
		nodes[nd.Rank] = jn
		var dev *shmem.Device
		var gw *gpi.World
		var err error
		switch im.Name {
		case "device-shmem":
			if dev, jn.base, err = jn.jacobiShmemInit(); err != nil {
				return err
			}
		case "device-verbs":
			all := make([]*jacobiLayout, n)
			for r := range n {
				all[r] = newJacobiLayout(j, n, r, rounds)
			}
			if gw, err = jv.get(nd, all); err != nil {
				return err
			}
			jn.base = gw.SegmentAddr(0, nd.Rank)
		default:
			jn.base = nd.Mem.Alloc(nd.Pool, l.total, "jacobi")
		}
		l.fill(nd.Mem, jn.base)
		bases.put(nd.Rank, jn.base)
		start[nd.Rank] = nd.Host.Now()
		switch im.Name {
		case "host":
			err = jn.host()
		case "kernel-boundary":
			err = jn.kernelBoundary()
		case "overlap":
			err = jn.overlap()
		case "stream-triggered":
			err = jn.gds()
		case "triggered":
			err = jn.gputn()
		case "device-shmem":
			err = jn.deviceShmem(dev)
		case "device-verbs":
			err = jn.deviceVerbs(gw)
		}
		finish[nd.Rank] = nd.Host.Now()
		return err
	})
	res := JacobiResult{Impl: im.Name}
	if err := runGroup(c, g); err != nil {
		return res, err
	}
	first, last := start[0], finish[0]
	for i := range n {
		first, last = min(first, start[i]), max(last, finish[i])
	}
	res.Time = last - first
	res.Residuals, res.Phases, res.Overlapped = nodes[0].res, nodes[0].phases, nodes[0].overlapped
	if !c.Nodes[0].Mem.Functional() {
		return res, nil
	}
	want, wantRes := jacobiSerial(j.Rows, j.Cols, j.Iters)
	for i, jn := range nodes {
		if err := jn.l.verify(c.Nodes[i].Mem, jn.base, want); err != nil {
			return res, fmt.Errorf("%s jacobi on %d×%d nodes: node %d: %w", s, j.PRows, j.PCols, i, err)
		}
		for t, r := range jn.res {
			if r != wantRes[t] {
				return res, fmt.Errorf("%s jacobi: node %d: residual of iteration %d = %v, serial %v", s, i, t, r, wantRes[t])
			}
		}
	}
	res.Verified = true
	return res, nil
}

func f32bits(v float32) uint64        { return uint64(math.Float32bits(v)) }
func bitsf32(b uint64) float32        { return math.Float32frombits(uint32(b)) }
func jacobiTag(t, kind int) int       { return (t%4096)*32 + kind }
func residualTag(t, k int) int        { return jacobiTag(t, 8+k) }
func (jn *jacobiNode) m() *mem.Memory { return jn.nd.Mem }

// seqAddr returns the sequence word of slot off on side d.
func (jn *jacobiNode) seqAddr(off uint64, d int) mem.Addr {
	return jn.base + mem.Addr(off+jn.l.seqOff(d))
}

// hostSweep computes iteration t on the host's threads and packs the new
// edges; it returns the block's residual.
func (jn *jacobiNode) hostSweep(t int) float32 {
	l, m := jn.l, jn.m()
	start := jn.nd.Host.Now()
	r := l.sweep(m, jn.base, t, rect{0, l.ly, 0, l.lx})
	bytes := uint64(stencilBytes * l.ly * l.lx)
	for d := range 4 {
		l.pack(m, jn.base, t+1, d, 0, l.edgeLen(d))
		m.Store64(jn.seqAddr(l.send[(t+1)%2][d], d), uint64(t+2))
		bytes += uint64(packBytes * l.edgeLen(d))
	}
	jn.nd.Host.Compute(bytes, jn.j.CPUThreads)
	jn.phases["comp"] += jn.nd.Host.Now() - start
	return r
}

// host is the CPU implementation: OpenMP-style compute on the host's
// cores, then the halo exchange and the residual allreduce over MPI.
func (jn *jacobiNode) host() error {
	for t := range jn.j.Iters {
		local := jn.hostSweep(t)
		if err := jn.mpiPhase(t+1, t, local); err != nil {
			return err
		}
	}
	return nil
}

// mpiPhase exchanges state s's halos (s > 0; state 0's are prepared) and,
// when t ≥ 0, reduces iteration t's residual from local, on the host over
// MPI. It is one comm interval of the host timeline.
func (jn *jacobiNode) mpiPhase(s, t int, local float32) error {
	start := jn.nd.Host.Now()
	err := jn.exchangeHalos(s)
	if err == nil && t >= 0 {
		jn.res[t], err = jn.mpiMax(t, local)
	}
	jn.comm = append(jn.comm, [2]sim.Time{start, jn.nd.Host.Now()})
	jn.phases["comm"] += jn.nd.Host.Now() - start
	return err
}

// exchangeHalos sends state s's packed edges to the neighbours and receives
// theirs, with MPI Isend/Irecv of whole slots (values and sequence word).
func (jn *jacobiNode) exchangeHalos(s int) error {
	if s == 0 {
		return nil
	}
	l, c := jn.l, jn.nd.MPI
	p := s % 2
	var reqs []*mpi.Request
	for d := range 4 {
		nb := l.neighbour(d)
		if nb < 0 {
			continue
		}
		r, err := c.Irecv(jn.base+mem.Addr(l.recv[p][d]), l.slotBytes(d), nb, jacobiTag(s, d))
		if err != nil {
			return err
		}
		reqs = append(reqs, r)
	}
	for d := range 4 {
		nb := l.neighbour(d)
		if nb < 0 {
			continue
		}
		r, err := c.Isend(jn.base+mem.Addr(l.send[p][d]), l.slotBytes(d), nb, jacobiTag(s, opposite(d)))
		if err != nil {
			return err
		}
		reqs = append(reqs, r)
	}
	c.Waitall(reqs...)
	return nil
}

// mpiMax is the dissemination max-allreduce of one float over MPI: in round
// k node i sends its running max to i+2^k and takes the max with what
// i−2^k sent.
func (jn *jacobiNode) mpiMax(t int, local float32) (float32, error) {
	l, c, m := jn.l, jn.nd.MPI, jn.m()
	v := local
	for k := range l.rounds {
		out, in := l.outSlot(jn.base, t, k), l.inSlot(jn.base, t, k)
		m.Store64(out, f32bits(v))
		r, err := c.Irecv(in, 8, mod(l.rankOf()-(1<<k), l.n), residualTag(t, k))
		if err != nil {
			return 0, err
		}
		sr, err := c.Isend(out, 8, mod(l.rankOf()+(1<<k), l.n), residualTag(t, k))
		if err != nil {
			return 0, err
		}
		c.Waitall(r, sr)
		v = max(v, bitsf32(m.Load64(in)))
	}
	return v, nil
}

func (l *jacobiLayout) rankOf() int { return l.pr*l.j.PCols + l.pc }

// wgCount is how many work-groups a kernel of cells points uses: one per
// WGSize points, at most MaxWGs (0: two per CU).
func (jn *jacobiNode) wgCount(cells int) int {
	limit := jn.j.MaxWGs
	if limit == 0 {
		limit = 2 * jn.nd.GPU.CUs
	}
	return max(1, min(limit, (cells+jn.j.WGSize-1)/jn.j.WGSize))
}

// sweepTile is one work-group computing iteration t on tile r: the stencil,
// then packing the edges r holds with state t+1's sequence word, then its
// partial residual folded into the iteration's accumulator with a
// device-scope atomic max. It returns the accumulator's work-group count
// after this one.
func (jn *jacobiNode) sweepTile(wg *gpu.WG, t int, r rect) uint64 {
	l := jn.l
	local := l.sweep(wg.Mem(), jn.base, t, r)
	wg.VALU(stencilVALU * ((r.cells() + wg.Size - 1) / wg.Size))
	wg.StreamOut(uint64(stencilBytes*r.cells()), uint64(4*r.cells())) // the new values written
	for d := range 4 {
		lo, hi, ok := l.edgeRange(r, d)
		if !ok {
			continue
		}
		l.pack(wg.Mem(), jn.base, t+1, d, lo, hi)
		wg.StreamOut(uint64(packBytes*(hi-lo)), uint64(4*(hi-lo))) // half of it written
		wg.Store64(jn.seqAddr(l.send[(t+1)%2][d], d), uint64(t+2))
	}
	return atomicMaxCount(wg, l.ctrlAddr(jn.base, t, accLine), local)
}

// atomicMaxCount is a device-scope atomic max of v into the float at a,
// then an atomic increment of the count word after it; both execute at the
// L2 (one L2 round trip each). It returns the new count.
func atomicMaxCount(wg *gpu.WG, a mem.Addr, v float32) uint64 {
	spec := wg.GPU().Spec()
	m := wg.Mem()
	wg.Sleep(spec.Cycles(2 * spec.L2Cycles))
	// The atomic writes its result whether or not it changed the value,
	// so its cost does not depend on the data (a payload-free run, whose
	// residuals are all 0, times the same).
	m.Store64(a, f32bits(max(v, bitsf32(m.Load64(a)))))
	c := m.Load64(a+8) + 1
	m.Store64(a+8, c)
	return c
}

// sweepKernel is iteration t's kernel over the rectangles rs, each split
// into work-group tiles.
func (jn *jacobiNode) sweepKernel(name string, t int, rs []rect) gpu.Kernel {
	return jn.sweepKernelThen(name, t, rs, nil)
}

// sweepKernelThen is sweepKernel with then run by work-group 0 after its
// tile.
func (jn *jacobiNode) sweepKernelThen(name string, t int, rs []rect, then func(wg *gpu.WG)) gpu.Kernel {
	var ts []rect
	for _, r := range rs {
		if n := r.cells(); n > 0 {
			for _, tl := range tiles(r.r1-r.r0, r.c1-r.c0, jn.wgCount(n)) {
				ts = append(ts, rect{tl.r0 + r.r0, tl.r1 + r.r0, tl.c0 + r.c0, tl.c1 + r.c0})
			}
		}
	}
	// Named per iteration for the trace, one code per name (gpu.Kernel.Code).
	return gpu.Kernel{Name: fmt.Sprintf("%s[%d]", name, t), Code: name, WGs: len(ts), WGSize: jn.j.WGSize, Body: func(wg *gpu.WG) {
		jn.sweepTile(wg, t, ts[wg.ID])
		if then != nil && wg.ID == 0 {
			then(wg)
		}
	}}
}

// runKernel launches k, waits for it and books the host's wait: the part
// overlapping the kernel body is compute, the rest launch and teardown.
func (jn *jacobiNode) runKernel(k gpu.Kernel) *gpu.Run {
	h := jn.nd.Host
	from := h.Now()
	run := jn.nd.Stream.Launch(k)
	jn.nd.Stream.Wait(run)
	jn.bookWait(from, run)
	return run
}

func (jn *jacobiNode) bookWait(from sim.Time, run *gpu.Run) {
	to := jn.nd.Host.Now()
	body := max(0, min(to, run.BodyEnd)-max(from, run.BodyStart))
	jn.phases["comp"] += body
	jn.phases["launch"] += to - from - body
	jn.kernels = append(jn.kernels, run)
}

// kernelBoundary is HDN: a kernel per iteration, then the host exchanges
// halos and reduces the residual over MPI.
func (jn *jacobiNode) kernelBoundary() error {
	l := jn.l
	for t := range jn.j.Iters {
		jn.runKernel(jn.sweepKernel("jacobi", t, []rect{{0, l.ly, 0, l.lx}}))
		local := bitsf32(jn.nd.Host.Load(l.ctrlAddr(jn.base, t, accLine)))
		if err := jn.mpiPhase(t+1, t, local); err != nil {
			return err
		}
	}
	return nil
}

// overlap is HDN_OVERLAP: iteration t's interior kernel needs no halo, so
// it runs while the host exchanges state t's halos; then the exterior
// kernel computes the block's boundary ring with the fresh halos and packs
// the next edges, and the host reduces iteration t's residual before
// iteration t+1 starts. The convergence check has the same schedule in
// every implementation (JacobiResidualSchedule): overlapping codes could
// pipeline it one iteration behind, but then the strategies' times would
// differ by the schedule rather than by who drives the network.
func (jn *jacobiNode) overlap() error {
	l, h := jn.l, jn.nd.Host
	for t := range jn.j.Iters {
		from := h.Now()
		in := jn.nd.Stream.Launch(jn.sweepKernel("interior", t, []rect{interior(l.ly, l.lx)}))
		if err := jn.mpiPhase(t, -1, 0); err != nil {
			return err
		}
		c := jn.comm[len(jn.comm)-1]
		jn.nd.Stream.Wait(in)
		jn.bookWait(max(from, c[1]), in)
		jn.overlapped += max(0, min(c[1], in.BodyEnd)-max(c[0], in.BodyStart))
		jn.runKernel(jn.sweepKernel("exterior", t, exterior(l.ly, l.lx)))
		start := h.Now()
		r, err := jn.mpiMax(t, bitsf32(h.Load(l.ctrlAddr(jn.base, t, accLine))))
		if err != nil {
			return err
		}
		jn.res[t] = r
		jn.phases["comm"] += h.Now() - start
	}
	return nil
}

// JacobiResidualSchedule is the convergence check's schedule, the same
// for every implementation (printed with the Jacobi results): iteration
// t's global max-residual is reduced and known on every node before
// iteration t+1 starts.
const JacobiResidualSchedule = "blocking: every iteration's global max-residual reduction completes before the next iteration starts, in every strategy"
