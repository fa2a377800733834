package workload

import (
	"fmt"
	"math"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// spTSNode is one node's memory layout of the device-shmem solve.
type spTSNode struct {
	spTSRows              // the node's rows and right-hand side (plain GPU memory)
	x, flag, cnt mem.Addr // symmetric: x (all rows), remote-arrival flags (all rows), local in-degree counters (block)
	one          mem.Addr // symmetric: the flag value 1, the source of flag puts
	dep          mem.Addr // dependents lists
	depOff       []int    // offset of each local row's dependents list in dep
}

// spTSWaves is the gather and atomic width: one wavefront per row.
const spTSWaves = 64

// spTSDevice is one node's device-side library for the persistent
// solve: its layout, a work-group's handle, the co-residency rule the
// kernel must meet, and what runs after the kernel.
type spTSDevice struct {
	lay   *spTSNode
	comm  func(wg *gpu.WG) (spTSComm, error)
	check func(k gpu.Kernel) error
	done  func()
}

// runShmem is the device-shmem solve (see SpTS).
func (p SpTS) runShmem(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config, pl *spTSPlan) (SpTSResult, error) {
	return p.runPersistent(c, s, cfg, pl, func(nd *strategy.Node, wgs int) (spTSDevice, error) {
		rt, ok := strategy.Get[*shmem.Runtime](nd)
		if !ok {
			return spTSDevice{}, fmt.Errorf("%s provides no device shmem runtime", nd.Strategy)
		}
		dev, err := rt.Init(wgs)
		if err != nil {
			return spTSDevice{}, err
		}
		lay, err := pl.layout(nd, dev)
		if err != nil {
			return spTSDevice{}, err
		}
		comm := func(wg *gpu.WG) (spTSComm, error) {
			ctx, err := dev.CtxCreate(wg)
			return shmemRows{ctx, lay}, err
		}
		return spTSDevice{lay: lay, comm: comm, check: dev.Cooperative, done: func() { dev.Finalize() }}, nil
	})
}

// runPersistent runs the persistent-kernel solve on every node with the
// library open gives it, then gathers x and verifies it.
func (p SpTS) runPersistent(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config, pl *spTSPlan,
	open func(nd *strategy.Node, wgs int) (spTSDevice, error)) (SpTSResult, error) {
	a := pl.a
	var res SpTSResult
	start, end := sim.Time(math.MaxInt64), sim.Time(0)
	sent := make([]uint64, len(c.Nodes))
	wgs := min(p.WGs, pl.block)
	g := strategy.Spawn(c, s, cfg, func(nd *strategy.Node) error {
		d, err := open(nd, wgs)
		if err != nil {
			return err
		}
		errs := make([]error, wgs)
		k := gpu.Kernel{Name: "spts", WGs: wgs, WGSize: spTSWaves, Body: func(wg *gpu.WG) {
			comm, err := d.comm(wg)
			if err == nil {
				err = pl.solveRows(wg, comm, d.lay, wgs, &sent[nd.Rank])
			}
			errs[wg.ID] = err
		}}
		if err := d.check(k); err != nil {
			return err
		}
		run := nd.Stream.Launch(k)
		nd.Stream.Wait(run)
		start, end = min(start, run.Queued), max(end, nd.Host.Now())
		d.done()
		return firstErr(errs)
	})
	if err := runGroup(c, g); err != nil {
		return res, err
	}
	res.Time = end - start
	for _, n := range sent {
		res.RemoteValues += n
	}
	x := make([]float64, a.N)
	for n, nd := range c.Nodes {
		lo, hi := pl.rows(n)
		for i := lo; i < hi; i++ {
			x[i] = math.Float64frombits(nd.Mem.Load64(pl.xAt[n] + mem.Addr(8*i)))
		}
	}
	return res, pl.verify(x, &res)
}

// layout allocates and fills node nd's arrays: the symmetric x, flags,
// counters (initial in-degrees) and flag source; the CSR rows, the
// right-hand side and the dependents lists in plain GPU memory.
func (pl *spTSPlan) layout(nd *strategy.Node, dev *shmem.Device) (*spTSNode, error) {
	a := pl.a
	lo, hi := pl.rows(nd.Rank)
	l := &spTSNode{}
	var err error
	for _, f := range []struct {
		at *mem.Addr
		n  uint64
	}{{&l.x, 8 * uint64(a.N)}, {&l.flag, 8 * uint64(a.N)}, {&l.cnt, 8 * uint64(pl.block)}, {&l.one, 8}} {
		if *f.at, err = dev.Malloc(f.n); err != nil {
			return nil, err
		}
	}
	pl.xAt[nd.Rank] = l.x
	m := nd.Mem
	m.Store64(l.one, 1)
	for i := lo; i < hi; i++ {
		m.Store64(l.cnt+mem.Addr(8*(i-lo)), uint64(pl.localIn[i]))
	}
	l.spTSRows = allocRows(m, mem.GPU, pl, lo, hi)
	l.depOff = make([]int, hi-lo+1)
	for i := lo; i < hi; i++ {
		l.depOff[i-lo+1] = l.depOff[i-lo] + len(pl.deps[i])
	}
	l.dep = m.Alloc(mem.GPU, 4*uint64(max(1, l.depOff[hi-lo])), "spts.dependents")
	return l, nil
}

// spTSComm is what a row needs from the device-side library: wait until
// remote x_j has arrived, and publish x_i to node q (the value, then its
// flag, in that order).
type spTSComm interface {
	waitRemote(wg *gpu.WG, j int) error
	publish(wg *gpu.WG, i, q int) error
	done(wg *gpu.WG) error
}

// shmemRows is spTSComm over an OpenSHMEM context: put x_i, fence, put
// its flag; wait_until the flag.
type shmemRows struct {
	ctx *shmem.Ctx
	l   *spTSNode
}

func (c shmemRows) waitRemote(_ *gpu.WG, j int) error {
	_, err := c.ctx.WaitUntil(c.l.flag+mem.Addr(8*j), 8, shmem.CmpEQ, 1)
	return err
}

func (c shmemRows) publish(_ *gpu.WG, i, q int) error {
	at := c.l.x + mem.Addr(8*i)
	if err := c.ctx.PutmemNBI(at, at, 8, q); err != nil {
		return err
	}
	if err := c.ctx.Fence(); err != nil {
		return err
	}
	return c.ctx.PutmemNBI(c.l.flag+mem.Addr(8*i), c.l.one, 8, q)
}

func (c shmemRows) done(*gpu.WG) error { return c.ctx.Destroy() }

// solveRows is one work-group's share of the node's rows: rows lo+ID,
// lo+ID+wgs, … in increasing order, so the lowest unfinished row of the
// whole solve always belongs to a running work-group (no deadlock while
// every work-group is resident).
func (pl *spTSPlan) solveRows(wg *gpu.WG, c spTSComm, l *spTSNode, wgs int, sent *uint64) error {
	for i := l.lo + wg.ID; i < l.hi; i += wgs {
		if err := pl.solveRow(wg, c, l, i, sent); err != nil {
			return err
		}
	}
	return c.done(wg)
}

// solveRow waits for row i's inputs, solves it and publishes x_i.
func (pl *spTSPlan) solveRow(wg *gpu.WG, c spTSComm, l *spTSNode, i int, sent *uint64) error {
	r := i - l.lo
	if pl.localIn[i] > 0 {
		wg.PollDevice(l.cnt+mem.Addr(8*r), "spts: local in-degree", func(v uint64) bool { return v == 0 })
	}
	for _, j := range pl.remoteIn[i] {
		if err := c.waitRemote(wg, int(j)); err != nil {
			return err
		}
	}
	cs, vs, yi := l.row(wg.Mem(), pl, i)
	off := l.offset(pl, i)
	wg.StreamLines(l.rowPtr+mem.Addr(8*r), 16) // the row bounds, then everything they address at once
	wg.StreamRanges(gpu.Range{Addr: l.col + mem.Addr(4*off), Bytes: 4 * uint64(len(cs))},
		gpu.Range{Addr: l.val + mem.Addr(8*off), Bytes: 8 * uint64(len(cs))}, gpu.Range{Addr: l.rhs + mem.Addr(8*r), Bytes: 8})
	xs := pl.gather(wg, l, cs[:len(cs)-1])
	wg.VALU(spTSRowInstr(len(cs)))
	k := 0
	xi := rowSolve(cs, vs, yi, func(int32) float64 { k++; return xs[k-1] })
	wg.Store64(l.x+mem.Addr(8*i), math.Float64bits(xi))
	wg.Release(gpu.Device)
	pl.signalLocal(wg, l, i)
	for _, q := range pl.targets[i] {
		if err := c.publish(wg, i, q); err != nil {
			return err
		}
		*sent++
	}
	return nil
}

// gather reads x at the columns cs, one vector load per 64 lanes.
func (pl *spTSPlan) gather(wg *gpu.WG, l *spTSNode, cs []int32) []float64 {
	xs := make([]float64, 0, len(cs))
	addrs := make([]mem.Addr, 0, spTSWaves)
	bits := make([]uint64, spTSWaves)
	for k := 0; k < len(cs); k += spTSWaves {
		addrs = addrs[:0]
		for _, j := range cs[k:min(k+spTSWaves, len(cs))] {
			addrs = append(addrs, l.x+mem.Addr(8*j))
		}
		wg.LoadLanes(addrs, bits)
		for _, b := range bits[:len(addrs)] {
			xs = append(xs, math.Float64frombits(b))
		}
	}
	return xs
}

// signalLocal decrements the in-degree counters of row i's dependents on
// this node: the dependents list is read, then one vector atomic per 64.
func (pl *spTSPlan) signalLocal(wg *gpu.WG, l *spTSNode, i int) {
	r := i - l.lo
	n := l.depOff[r+1] - l.depOff[r]
	if n == 0 {
		return
	}
	wg.StreamLines(l.dep+mem.Addr(4*l.depOff[r]), 4*uint64(n))
	addrs := make([]mem.Addr, 0, spTSWaves)
	for _, d := range pl.deps[i] {
		if int(d) >= l.hi {
			break // dependents are sorted: the rest live on later nodes
		}
		addrs = append(addrs, l.cnt+mem.Addr(8*(int(d)-l.lo)))
		if len(addrs) == spTSWaves {
			wg.AtomicAddLanes(addrs, ^uint64(0))
			addrs = addrs[:0]
		}
	}
	wg.AtomicAddLanes(addrs, ^uint64(0))
}

// spTSRowInstr is the vector instructions of one row: per 64 nonzeros an
// index-to-address computation and a fused multiply-add (fp64: [DEFAULT]
// two issue slots each), the wavefront reduction (log2 64 = 6 steps of a
// lane shuffle and an add) and the fp64 division (a reciprocal and two
// Newton steps, about 10 instructions).
func spTSRowInstr(nnz int) int {
	chunks := (nnz + spTSWaves - 1) / spTSWaves
	return chunks*(1+2) + 6*2 + 10
}
