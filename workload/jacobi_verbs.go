package workload

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/gpi"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// verbsComm is tileComm over the device GPI subset (GPUrdma: GPU threads
// build the WQE, fence, ring the doorbell). A put is an RDMA write of the
// slot with its trailing word (delivered in order by the RC transport); a
// wait polls the local word with system-scope acquires, since NIC writes
// may leave a stale L2 copy (an AMD dGPU's; behind NVIDIA's memory-side L2,
// gpu.l2_memory_side, they update it and the acquire drops only the L1).
// Completions are not awaited: what matters is
// each write's arrival, which its receiver polls, and a queue that fills
// is drained by the next post (gaspi_wait inside GPI's post). Each queue
// has one poster at a time: the work-group elected for that halo or
// residual round, and iterations are ordered by the global residual.
type verbsComm struct {
	dev  *gpi.Device
	base mem.Addr
}

func (c verbsComm) put(wg *gpu.WG, queue int, remote uint64, src mem.Addr, n uint64, pe int) error {
	return c.dev.Write(wg, 0, uint64(src-c.base), pe, 0, remote, n, queue)
}

func (c verbsComm) waitUntil(wg *gpu.WG, a mem.Addr, cmp shmem.Cmp, v uint64) error {
	if cmp != shmem.CmpEQ && cmp != shmem.CmpNE {
		return fmt.Errorf("jacobi: device verbs wait: comparison %v not used by the relaxation", cmp)
	}
	wg.PollUntil(a, true, "jacobi word", func(w uint64) bool { return (w == v) == (cmp == shmem.CmpEQ) })
	return nil
}

func (verbsComm) done(*gpu.WG) error { return nil }

// jacobiVerbs is the run-wide GPI world of the device-verbs relaxation:
// segment 0 is every node's region (GPU memory, registered), queue d
// connects each node to its neighbour in direction d and queue 4+k to its
// residual partner of round k. Node setups run one after the other at
// time 0, so the first caller builds it for all.
type jacobiVerbs struct{ sharedWorld }

func (v *jacobiVerbs) get(nd *strategy.Node, ls []*jacobiLayout) (*gpi.World, error) {
	return v.world(nd, gpuSides(len(ls)), 1, func(w *gpi.World) error {
		for r, l := range ls {
			w.SegmentCreate(0, r, l.total)
		}
		var err error
		for r, l := range ls {
			for dir := range 4 {
				if p := l.neighbour(dir); p >= 0 && p > r {
					err = errors.Join(err, w.ConnectPair(dir, r, p), w.ConnectPair(opposite(dir), r, p))
				}
			}
			for k := range l.rounds {
				if p := mod(r+(1<<k), l.n); p != r {
					err = errors.Join(err, w.ConnectPair(4+k, r, p))
				}
			}
		}
		return err
	})
}

// deviceVerbs is the GPUrdma implementation: the intra-kernel
// relaxation of deviceShmem with its puts and waits done by the GPU
// threads themselves through device verbs (no CPU, no CP on the path).
func (jn *jacobiNode) deviceVerbs(w *gpi.World) error {
	l := jn.l
	ts := tiles(l.ly, l.lx, jn.persistentWGs())
	var edgeWGs [4]uint64
	for _, r := range ts {
		for d := range 4 {
			if _, _, ok := l.edgeRange(r, d); ok {
				edgeWGs[d]++
			}
		}
	}
	jn.counters = jn.nd.Mem.AllocData(mem.GPU, uint64(jn.j.Iters)*4*mem.LineSize, "jacobi.edge_counters")
	errs := make([]error, len(ts))
	c := verbsComm{w.Device(jn.nd.Rank), jn.base}
	k := gpu.Kernel{Name: "jacobi", WGs: len(ts), WGSize: jn.j.WGSize, Body: func(wg *gpu.WG) {
		errs[wg.ID] = jn.persistentTile(wg, c, ts, edgeWGs)
	}}
	jn.nd.Stream.Wait(jn.nd.Stream.Launch(k))
	jn.readGlobals()
	return errors.Join(errs...)
}
