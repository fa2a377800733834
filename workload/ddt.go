package workload

import (
	"bytes"
	"fmt"

	"github.com/gpunetsim/gpunetsim/datatype"
	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	spinmodel "github.com/gpunetsim/gpunetsim/model/spin"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// DDTUnpack is the receive-side datatype benchmark of the SC'19 paper on
// two nodes: node 1 posts a receive of Count elements of Type, sends a
// ready-to-receive message to node 0, which then puts the packed stream;
// the time runs from the RTR to the last byte placed (the SC'19 paper).
// The receive buffer starts filled with a sentinel and must end equal to
// what datatype.Unpack produces from the same stream.
type DDTUnpack struct {
	Type     *datatype.Committed
	Count    int
	TraceDMA bool // record the DMA write FIFO occupancy over time
}

// DDTResult is one receive's measurement.
type DDTResult struct {
	spinmodel.RecvResult
	Plan     *spinmodel.Plan
	Verified bool
}

// DDTUnpackDef is the datatype-unpack workload's registry entry.
func DDTUnpackDef() Def {
	const why = "the datatype-unpack workload measures receive-side datatype processing on the NIC " +
		"(the sPIN datatypes paper); its host-unpack baseline runs as method host of the ddt experiments on the same RTR path, " +
		"because model/mpi has no derived datatypes for a two-sided receive under this strategy"
	return Def{
		Name:    "ddt_unpack",
		Summary: "receive-side MPI datatype unpack with the RTR protocol, offloaded to sPIN handlers (the SC'19 paper)",
		// The matrix baseline is RW-CP, MPI's default general strategy
		// (the SC'19 paper); the ddt experiments give speedups against host
		// unpack, a method of the study rather than a strategy.
		Baseline:      strategy.SpinRWCP,
		Preset:        "spin", // the sPIN paper's set-up
		Impls:         []Impl{{Name: "nic-handlers", Needs: strategy.NICHandlers}},
		NotApplicable: withoutCap(strategy.NICHandlers, why),
		Small: func(s strategy.Def, hw cluster.Spec, cfg strategy.Config, seed uint64, functional bool) (Cell, error) {
			c, err := newCluster(hw, 2, seed, functional)
			if err != nil {
				return Cell{}, err
			}
			defer c.Engine.Close()
			t, err := datatype.Vector(1024, 16, 32, datatype.Float64())
			if err != nil {
				return Cell{}, err
			}
			r, err := DDTUnpack{Type: t.Commit(), Count: 1}.Run(c, s.Strategy, cfg)
			return Cell{Impl: "nic-handlers", Nodes: 2, Time: r.Time(), Events: c.Engine.Events(), Verified: r.Verified}, err
		},
	}
}

// Run runs the benchmark under strategy s (a NIC-handler strategy).
func (w DDTUnpack) Run(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config) (DDTResult, error) {
	if _, _, err := DDTUnpackDef().implFor(s); err != nil {
		return DDTResult{}, err
	}
	var res DDTResult
	g := strategy.Spawn(c, s, cfg, func(n *strategy.Node) error {
		ep, ok := strategy.Get[*spinmodel.Endpoint](n)
		if !ok {
			return fmt.Errorf("ddt_unpack: %s provides no datatype endpoint", s)
		}
		return w.body(n.Rank, ep, n.Mem, n.Host.Proc, &res)
	})
	if err := runGroup(c, g); err != nil {
		return res, err
	}
	return res, nil
}

// RunMethod runs the benchmark with method m on c directly (the ddt
// experiments compare the baselines host and iovec with the offload
// strategies on one preset).
func (w DDTUnpack) RunMethod(c *cluster.Cluster, m spinmodel.Method, costs spinmodel.Costs) (DDTResult, error) {
	if len(c.Nodes) != 2 {
		return DDTResult{}, fmt.Errorf("ddt_unpack needs 2 nodes, got %d", len(c.Nodes))
	}
	var res DDTResult
	errs := make([]error, 2)
	lv := spinmodel.LinkView{PacketTime: c.Fabric.Serialization(c.Spec.Link.Payload)}
	for i, nd := range c.Nodes {
		ep := spinmodel.NewEndpoint(nd.NIC, m, c.Spec.Spin, costs, lv)
		ep.Host(c.Spec.CPU, nd.DRAM)
		c.Engine.Spawn(nd.Name+".app", func(p *sim.Proc) { errs[i] = w.body(i, ep, nd.Mem, p, &res) })
	}
	if err := c.Engine.Run(); err != nil {
		return res, err
	}
	for _, err := range errs {
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// body is one node's part: node 0 sends the packed stream when the RTR
// comes, node 1 plans, receives and verifies.
func (w DDTUnpack) body(rank int, ep *spinmodel.Endpoint, m *mem.Memory, p *sim.Proc, res *DDTResult) error {
	size, err := w.Type.PackedSize(w.Count)
	if err != nil {
		return err
	}
	if size == 0 {
		return fmt.Errorf("ddt_unpack: %d × %v packs to no bytes", w.Count, w.Type.Type())
	}
	functional := m.Functional()
	var packed []byte
	if functional {
		packed = ddtStream(size)
	}
	if rank == 0 {
		buf := m.Alloc(mem.Host, uint64(size), "ddt.packed")
		if functional {
			m.Write(buf, packed)
		}
		ep.Send(p, buf, size, 1)
		return nil
	}
	plan, err := spinmodel.NewPlan(ep.Method(), w.Type, w.Count, ep.Env())
	if err != nil {
		ep.Cancel(p, 0)
		return fmt.Errorf("ddt_unpack %s: %w", ep.Method(), err)
	}
	span := plan.Hi - plan.Lo
	buf := m.Alloc(mem.Host, uint64(span), "ddt.recv")
	var want []byte
	if functional {
		want = ddtSentinel(span)
		m.Write(buf, want)
	}
	ep.TraceDMA = w.TraceDMA
	r, err := ep.Recv(p, plan, buf, 0)
	if err != nil {
		ep.Cancel(p, 0)
		return err
	}
	res.RecvResult, res.Plan = r, plan
	if got := m.Bytes(buf, span); functional && got != nil {
		if _, err := w.Type.Unpack(want, -plan.Lo, packed, w.Count); err != nil {
			return err
		}
		res.Verified = bytes.Equal(got, want) && r.Fail == 0
	}
	return nil
}

// ddtStream is the packed stream the sender puts: a pattern that differs
// between nearby bytes and across 256-byte periods.
func ddtStream(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*131 + i>>9 + 7)
	}
	return b
}

// ddtSentinel is the receive buffer's initial content: bytes the datatype
// does not cover must keep it.
func ddtSentinel(n int) []byte { return bytes.Repeat([]byte{0xA5}, n) }

// withoutCap gives why to every registered strategy lacking capability c.
func withoutCap(c strategy.Cap, why string) map[strategy.Strategy]string {
	out := map[strategy.Strategy]string{}
	for _, d := range strategy.Registry() {
		if !d.Caps.Has(c) {
			out[d.Strategy] = why
		}
	}
	return out
}
