package spin

import (
	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	hwspin "github.com/gpunetsim/gpunetsim/hw/spin"
	"github.com/gpunetsim/gpunetsim/sim"
)

// PutLatency is the 1-byte put of workloads.md §11.9 on the first two nodes
// of c: node 0 puts one byte into an ME on node 1, which either takes the
// plain DMA path or runs a header, a payload and a completion handler (the
// payload handler DMAs the byte to its place; nic.md §5.6). It returns the
// time from the doorbell to the target's PUT event and whether the byte
// landed.
func PutLatency(c *cluster.Cluster, withContext bool) (sim.Duration, bool, error) {
	src, dst := c.Nodes[0], c.Nodes[1]
	eq := dst.NIC.NewEQ(0, 0)
	pt := dst.NIC.PTAlloc(eq, false)
	buf := dst.Mem.Alloc(mem.Host, 64, "put.dst")
	data := src.Mem.Alloc(mem.Host, 64, "put.src")
	src.Mem.Write(data, []byte{0x5a})
	me := nic.ME{Start: buf, Length: 1, MatchID: nic.AnyID, Options: nic.MEOpPut | nic.MEUseOnce}
	if withContext {
		sp := hwspin.New(dst.NIC, c.Spec.Spin)
		ctx, err := sp.NewContext(hwspin.Handlers{
			Header: func(h *hwspin.HandlerCtx) hwspin.Return { return hwspin.Success },
			Payload: func(h *hwspin.HandlerCtx) hwspin.Return {
				h.DMAPayload(0, h.Packet.Len, h.Msg.Host()+mem.Addr(h.Packet.Offset), hwspin.NoEvent)
				return hwspin.Success
			},
			Completion: completion,
		}, hwspin.Policy{}, 0)
		if err != nil {
			return 0, false, err
		}
		me.Ctx = ctx
	}
	dst.NIC.MEAppend(pt, me, nic.Priority)
	var start, end sim.Time
	c.Engine.Spawn("put.src", func(p *sim.Proc) {
		start = p.Now()
		src.NIC.Doorbell(p, nic.Command{Op: nic.CmdPut, MD: &nic.MD{Start: data, Length: 1}, Length: 1, Target: 1, PT: pt})
	})
	c.Engine.Spawn("put.dst", func(p *sim.Proc) {
		eq.Wait(p)
		end = p.Now()
	})
	if err := c.Engine.Run(); err != nil {
		return 0, false, err
	}
	ok := true
	if b := dst.Mem.Bytes(buf, 1); b != nil {
		ok = b[0] == 0x5a
	}
	return end - start, ok, nil
}
