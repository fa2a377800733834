package spin_test

import (
	"bytes"
	"testing"

	"github.com/gpunetsim/gpunetsim/datatype"
	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	spinmodel "github.com/gpunetsim/gpunetsim/model/spin"
	"github.com/gpunetsim/gpunetsim/sim"
)

// TestOutOfOrderArrival: on a fat tree with random spines and competing
// traffic from other nodes, packets of the datatype message arrive out of
// order; every NIC-handler method still leaves the receive buffer equal to
// datatype.Unpack, and RW-CP restores checkpoints from their masters.
func TestOutOfOrderArrival(t *testing.T) {
	ty, err := datatype.Parse("struct(2;1,1;0,200000;vector(3000,3,5)<float64>,indexed(3;7,1,20;0,50,30)<float32>)")
	if err != nil {
		t.Fatal(err)
	}
	c := ty.Commit()
	const count = 4
	for _, m := range []spinmodel.Method{spinmodel.Specialized, spinmodel.HPULocal, spinmodel.ROCP, spinmodel.RWCP} {
		t.Run(m.String(), func(t *testing.T) {
			hw := cluster.Spin()
			hw.Topology.Kind, hw.Topology.LeafSize, hw.Topology.InOrder = "fattree", 4, false
			cl, err := cluster.New(sim.New(3), hw, 8, true)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Engine.Close()
			lv := spinmodel.LinkView{PacketTime: cl.Fabric.Serialization(hw.Link.Payload)}
			snd := spinmodel.NewEndpoint(cl.Nodes[0].NIC, m, hw.Spin, spinmodel.DefaultCosts(), lv)
			rcv := spinmodel.NewEndpoint(cl.Nodes[4].NIC, m, hw.Spin, spinmodel.DefaultCosts(), lv)
			plan, err := spinmodel.NewPlan(m, c, count, rcv.Env())
			if m == spinmodel.Specialized {
				if err == nil {
					t.Fatal("specialized handlers accepted a struct of a vector and an indexed type")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			packed := make([]byte, plan.Size)
			for i := range packed {
				packed[i] = byte(i*7 + i>>8)
			}
			src := cl.Nodes[0].Mem.Alloc(mem.Host, uint64(plan.Size), "src")
			cl.Nodes[0].Mem.Write(src, packed)
			span := plan.Hi - plan.Lo
			dst := cl.Nodes[4].Mem.Alloc(mem.Host, uint64(span), "dst")
			var res spinmodel.RecvResult
			cl.Engine.Spawn("send", func(p *sim.Proc) { snd.Send(p, src, plan.Size, 4) })
			cl.Engine.Spawn("recv", func(p *sim.Proc) {
				res, err = rcv.Recv(p, plan, dst, 0)
			})
			// Competing traffic from nodes 1–3 to nodes 5–7 keeps random
			// spines busy, so the message's packets take paths of unequal delay.
			for k := 1; k <= 3; k++ {
				noise := cl.Nodes[k].Mem.Alloc(mem.Host, 1<<20, "noise")
				cl.Engine.Spawn("noise", func(p *sim.Proc) {
					for range 4 {
						cl.Nodes[k].NIC.Doorbell(p, nic.Command{Op: nic.CmdPut, MD: &nic.MD{Start: noise, Length: 1 << 20}, Length: 1 << 18, Target: 4 + k, PT: 0, MatchBits: 1})
					}
				})
			}
			if e := cl.Engine.Run(); e != nil {
				t.Fatal(e)
			}
			if err != nil {
				t.Fatal(err)
			}
			want := make([]byte, span)
			if _, err := c.Unpack(want, -plan.Lo, packed, count); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(cl.Nodes[4].Mem.Bytes(dst, span), want) {
				t.Fatal("receive buffer differs from datatype.Unpack")
			}
			if res.Stats.OutOfOrder == 0 {
				t.Fatal("no packet arrived out of order: the test does not test reordering")
			}
			if m == spinmodel.RWCP && res.Break.Resets == 0 {
				t.Errorf("RW-CP saw %d out-of-order packets but never restored a checkpoint", res.Stats.OutOfOrder)
			}
			t.Logf("%v: %d packets out of order, %d resets/restores, %d catch-up blocks", m, res.Stats.OutOfOrder, res.Break.Resets, res.Break.CatchUpBlocks)
		})
	}
}
