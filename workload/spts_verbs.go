package workload

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/gpi"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// verbsRows is spTSComm over the device GPI subset (GNN_GPURDMA): x_i is
// published with gpu_gaspi_write_notify — an RDMA write of the value and
// an inline write of notification i, two WQEs on the work-group's own QP
// to q, delivered in order — and a row waits for remote x_j by polling its
// notification j with system-scope acquires (NIC writes may leave a stale
// L2 copy unless the L2 is memory-side, gpu.l2_memory_side). Each work-group posts on queue = its ID, so every QP has one
// poster.
type verbsRows struct {
	dev  *gpi.Device
	w    *gpi.World
	rank int
}

func (c verbsRows) waitRemote(wg *gpu.WG, j int) error {
	a := c.w.NotificationAddr(c.rank, j)
	for wg.AtomicLoad64(a) == 0 {
		if wg.Mem().Load64(a) == 0 { // else written after the load read it: the next load sees it
			wg.Wait(wg.Mem().Watch(a), "spts: remote x notification")
		}
	}
	// Acquire after the flag was seen, not before: a line of x another
	// work-group filled before the value landed must not serve the gather.
	wg.Acquire(gpu.System)
	return nil
}

func (c verbsRows) publish(wg *gpu.WG, i, q int) error {
	return c.dev.WriteNotify(wg, 0, 8*uint64(i), q, 0, 8*uint64(i), 8, i, 1, wg.ID)
}

func (verbsRows) done(*gpu.WG) error { return nil }

// spTSVerbsWorld is the run's GPI world: segment 0 is x (all rows) on
// every node, one notification per row, queue w (work-group w) connected
// between every pair of nodes. Node setups run one after the other at
// time 0, so the first caller builds it for all.
type spTSVerbsWorld struct{ sharedWorld }

func (v *spTSVerbsWorld) get(nd *strategy.Node, nodes, rows, wgs int) (*gpi.World, error) {
	if rows > 1<<16 {
		return nil, fmt.Errorf("spts on %s: %d rows need a GPI notification each, at most 65536", nd.Strategy, rows)
	}
	return v.world(nd, gpuSides(nodes), rows, func(w *gpi.World) error {
		for r := range nodes {
			w.SegmentCreate(0, r, 8*uint64(rows))
		}
		for q := range wgs {
			if err := w.Connect(q); err != nil {
				return err
			}
		}
		return nil
	})
}

// runVerbs is the device-verbs solve: the device-shmem algorithm (see
// SpTS) with the GPU threads posting the writes themselves.
func (p SpTS) runVerbs(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config, pl *spTSPlan) (SpTSResult, error) {
	var vw spTSVerbsWorld
	return p.runPersistent(c, s, cfg, pl, func(nd *strategy.Node, wgs int) (spTSDevice, error) {
		w, err := vw.get(nd, len(c.Nodes), pl.a.N, wgs)
		if err != nil {
			return spTSDevice{}, err
		}
		rows := verbsRows{w.Device(nd.Rank), w, nd.Rank}
		check := func(k gpu.Kernel) error {
			if r := nd.Stream.GPU().MaxResident(k); r < k.WGs {
				return fmt.Errorf("spts: %d work-groups wait on each other, but only %d can be resident at once", k.WGs, r)
			}
			return nil
		}
		return spTSDevice{lay: pl.layoutVerbs(nd, w), comm: func(*gpu.WG) (spTSComm, error) { return rows, nil },
			check: check, done: func() {}}, nil
	})
}

// layoutVerbs is layout for the device-verbs solve: x is GPI segment 0,
// the flags are GPI notifications, the counters plain GPU memory that
// carries values in payload-free runs too.
func (pl *spTSPlan) layoutVerbs(nd *strategy.Node, w *gpi.World) *spTSNode {
	lo, hi := pl.rows(nd.Rank)
	m := nd.Mem
	l := &spTSNode{x: w.SegmentAddr(0, nd.Rank)}
	pl.xAt[nd.Rank] = l.x
	// x is what the rows compute with and what verify reads: in a
	// payload-free run its words are control words (as the device-shmem
	// solve's symmetric heap carries them), so the solve stays checked.
	m.MarkControl(l.x, 8*pl.a.N)
	l.cnt = m.AllocData(mem.GPU, 8*uint64(max(1, pl.block)), "spts.in_degree")
	for i := lo; i < hi; i++ {
		m.Store64(l.cnt+mem.Addr(8*(i-lo)), uint64(pl.localIn[i]))
	}
	l.spTSRows = allocRows(m, mem.GPU, pl, lo, hi)
	l.depOff = make([]int, hi-lo+1)
	for i := lo; i < hi; i++ {
		l.depOff[i-lo+1] = l.depOff[i-lo] + len(pl.deps[i])
	}
	l.dep = m.Alloc(mem.GPU, 4*uint64(max(1, l.depOff[hi-lo])), "spts.dependents")
	return l
}
