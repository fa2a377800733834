package workload

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/verbs"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// verbsLatency is the latency decomposition's device-verbs side: the copy
// kernel's leader thread posts an RDMA write of the buffer and its arrival
// flag to the target's registered buffer, rings the doorbell (fence
// included) and polls the CQ, all inside the kernel.
type verbsLatency struct {
	mrs          [2]*verbs.MR
	start, rung  sim.Time
	postErr      error
	remoteBuffer *mem.Addr
}

// register makes node nd's buffer a verbs memory region.
func (v *verbsLatency) register(nd *strategy.Node, buf mem.Addr, size uint64) error {
	vn, ok := strategy.Get[*verbs.Node](nd)
	if !ok {
		return fmt.Errorf("latency: %s provides no verbs runtime", nd.Strategy)
	}
	v.mrs[nd.Rank] = vn.RegMR(buf, size)
	return nil
}

// post returns the kernel tail that sends [buf, buf+size) to the target.
func (v *verbsLatency) post(nd *strategy.Node, buf mem.Addr, size uint64) (func(wg *gpu.WG), error) {
	d, ok := strategy.Get[*verbs.Domain](nd)
	if !ok {
		return nil, fmt.Errorf("latency: %s provides no verbs domain", nd.Strategy)
	}
	spec := d.Spec()
	cq, err := d.Node(0).NewCQ(spec.QPDepth, verbs.Pool(spec.CQLoc))
	if err != nil {
		return nil, err
	}
	tcq, err := d.Node(1).NewCQ(spec.QPDepth, verbs.Pool(spec.CQLoc))
	if err != nil {
		return nil, err
	}
	place := verbs.Place{QP: verbs.Pool(spec.QPLoc)}
	qp, _, err := d.Connect(0, 1, place, place, cq, tcq, spec.QPDepth)
	if err != nil {
		return nil, err
	}
	return func(wg *gpu.WG) {
		v.start = wg.Now()
		w := verbs.Write(v.mrs[0], buf, v.mrs[1], *v.remoteBuffer, size)
		if v.postErr = qp.Post(wg, w); v.postErr != nil {
			return
		}
		qp.Ring(wg)
		v.rung = wg.Now()
		if e, ok := cq.WaitQP(wg, qp, 0); !ok {
			v.postErr = fmt.Errorf("latency: RDMA write completed with %v", e.Status)
		}
	}, nil
}

// gnnNotApplicable adds GNN_GPURDMA's reason to m.
func gnnNotApplicable(m map[strategy.Strategy]string, why string) map[strategy.Strategy]string {
	m[strategy.GNNGPURDMA] = why
	return m
}
