package spin_test

import (
	"bytes"
	"testing"

	"github.com/gpunetsim/gpunetsim/datatype"
	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	hwspin "github.com/gpunetsim/gpunetsim/hw/spin"
	spinmodel "github.com/gpunetsim/gpunetsim/model/spin"
	"github.com/gpunetsim/gpunetsim/sim"
)

// TestOutboundSender: outbound sPIN (ProcessPut) sends a non-contiguous
// send buffer as one message; the handlers find the regions on the NIC
// and the receiver's contiguous buffer equals datatype.Pack.
func TestOutboundSender(t *testing.T) {
	ty, err := datatype.Parse("struct(2;1,1;0,90000;vector(2000,3,5)<float64>,indexed(3;7,1,20;0,50,30)<float32>)")
	if err != nil {
		t.Fatal(err)
	}
	c := ty.Commit()
	const count = 3
	hw := cluster.Spin()
	cl, err := cluster.New(sim.New(1), hw, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Engine.Close()
	env := spinmodel.Env{Spin: hw.Spin, Costs: spinmodel.DefaultCosts(), K: int(hw.Link.Payload), TPkt: cl.Fabric.Serialization(hw.Link.Payload)}
	plan, err := spinmodel.NewPlan(spinmodel.HPULocal, c, count, env)
	if err != nil {
		t.Fatal(err)
	}
	span := plan.Hi - plan.Lo
	user := make([]byte, span)
	for i := range user {
		user[i] = byte(i*5 + i>>7)
	}
	src := cl.Nodes[0].Mem.Alloc(mem.Host, uint64(span), "user")
	cl.Nodes[0].Mem.Write(src, user)
	dst := cl.Nodes[1].Mem.Alloc(mem.Host, uint64(plan.Size), "packed")
	eq := cl.Nodes[1].NIC.NewEQ(0, 0)
	pt := cl.Nodes[1].NIC.PTAlloc(eq, false)
	cl.Nodes[1].NIC.MEAppend(pt, nic.ME{Start: dst, Length: uint64(plan.Size), MatchID: nic.AnyID, Options: nic.MEOpPut | nic.MEUseOnce}, nic.Priority)
	sp := hwspin.New(cl.Nodes[0].NIC, hw.Spin)
	ctx, err := sp.NewContext(hwspin.Handlers{Payload: plan.SenderHandler(env.Costs, -plan.Lo, hw.Spin.HPUs)}, hwspin.Policy{}, plan.Mem.Total())
	if err != nil {
		t.Fatal(err)
	}
	out := sp.ProcessPut(ctx, nic.Command{Op: nic.CmdPut, MD: &nic.MD{Start: src, Length: uint64(span)}, Target: 1, PT: pt}, uint64(plan.Size))
	var got nic.Event
	cl.Engine.Spawn("recv", func(p *sim.Proc) { got = eq.Wait(p) })
	if err := cl.Engine.Run(); err != nil {
		t.Fatal(err)
	}
	want := make([]byte, plan.Size)
	if _, err := c.Pack(want, user, -plan.Lo, count); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(cl.Nodes[1].Mem.Bytes(dst, plan.Size), want) {
		t.Fatal("the receiver's packed bytes differ from datatype.Pack")
	}
	if got.Type != nic.EventPut || got.MLength != uint64(plan.Size) || !out.Ended || out.Streams() < plan.Regions {
		t.Fatalf("event %+v, ended %v, %d regions streamed for %d", got, out.Ended, out.Streams(), plan.Regions)
	}
	if st := sp.Stats(); st.Handlers[hwspin.Payload] != uint64((plan.Size+2047)/2048) || st.Packets != 0 {
		t.Fatalf("sender sPIN stats %+v: want one handler per packet and no packet buffering", st)
	}
}
