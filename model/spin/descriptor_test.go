package spin_test

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	spinmodel "github.com/gpunetsim/gpunetsim/model/spin"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// The specialized handlers read their descriptor from NIC memory: a
// vector receive moves, besides each packet's payload into NIC memory and
// out by DMA, the descriptor's three words once per packet; a larger
// descriptor word moves proportionally more.
func TestSpecializedReadsDescriptor(t *testing.T) {
	const size, block = 64 * 1024, 64
	ty := vector(t, size, block)
	nicBytes := func(word unit.Bytes) (int, uint64) {
		hw := cluster.Spin()
		cl, err := cluster.New(sim.New(1), hw, 2, true)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Engine.Close()
		costs := spinmodel.DefaultCosts()
		costs.DescriptorWord = word
		lv := spinmodel.LinkView{PacketTime: cl.Fabric.Serialization(hw.Link.Payload)}
		snd := spinmodel.NewEndpoint(cl.Nodes[0].NIC, spinmodel.Specialized, hw.Spin, costs, lv)
		rcv := spinmodel.NewEndpoint(cl.Nodes[1].NIC, spinmodel.Specialized, hw.Spin, costs, lv)
		plan, err := spinmodel.NewPlan(spinmodel.Specialized, ty, 1, rcv.Env())
		if err != nil {
			t.Fatal(err)
		}
		src := cl.Nodes[0].Mem.Alloc(mem.Host, uint64(plan.Size), "src")
		dst := cl.Nodes[1].Mem.Alloc(mem.Host, uint64(plan.Hi-plan.Lo), "dst")
		var res spinmodel.RecvResult
		cl.Engine.Spawn("send", func(p *sim.Proc) { snd.Send(p, src, plan.Size, 1) })
		cl.Engine.Spawn("recv", func(p *sim.Proc) { res, err = rcv.Recv(p, plan, dst, 0) })
		if e := cl.Engine.Run(); e != nil {
			t.Fatal(e)
		}
		if err != nil {
			t.Fatal(err)
		}
		return (plan.Size + int(hw.Link.Payload) - 1) / int(hw.Link.Payload), res.Traffic.NICMem
	}
	npkt, b8 := nicBytes(8)
	_, b16 := nicBytes(16)
	if got, want := b16-b8, uint64(npkt*3*8); got != want {
		t.Fatalf("doubling the descriptor word moved %d more NIC-memory bytes, want %d (3 words × 8 B more per packet, %d packets)", got, want, npkt)
	}
	if b8 < uint64(2*size+npkt*24) {
		t.Fatalf("NIC memory moved %d B, less than the payload in and out plus the descriptor reads (%d)", b8, 2*size+npkt*24)
	}
}
