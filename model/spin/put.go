package spin

import (
	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	hwspin "github.com/gpunetsim/gpunetsim/hw/spin"
	"github.com/gpunetsim/gpunetsim/sim"
)

// PutResult is one 1-byte put's measurement.
type PutResult struct {
	// Window runs from the put's data leaving the initiator (the last
	// payload byte has left its buffer: the SEND count) to the byte being
	// in host memory at the target: the sPIN datatype paper's window.
	Window sim.Duration
	// DoorbellToEvent runs from the initiator's doorbell to the target's
	// PUT event.
	DoorbellToEvent sim.Duration
	Verified        bool
}

// PutLatency is the 1-byte put of the SC'19 paper on the first two nodes
// of c: node 0 puts one byte into an ME on node 1, which either takes the
// plain DMA path or runs one payload handler on the single packet that
// issues one DMA write of the byte to its place (the packet copy into NIC
// memory, HER scheduling and the DMA issue are what sPIN adds; the dissertation (Portals 4)
// §5.6). It measures the paper's window and the doorbell-to-event time.
func PutLatency(c *cluster.Cluster, withContext bool) (PutResult, error) {
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
			Payload: func(h *hwspin.HandlerCtx) hwspin.Return {
				h.DMAPayload(0, h.Packet.Len, h.Msg.Host()+mem.Addr(h.Packet.Offset), hwspin.NoEvent)
				return hwspin.Success
			},
		}, hwspin.Policy{}, 0)
		if err != nil {
			return PutResult{}, err
		}
		me.Ctx = ctx
	}
	dst.NIC.MEAppend(pt, me, nic.Priority)
	sent := src.NIC.NewCT()
	var start, left, landed, end sim.Time
	c.Engine.Spawn("put.src", func(p *sim.Proc) {
		start = p.Now()
		src.NIC.Doorbell(p, nic.Command{Op: nic.CmdPut, MD: &nic.MD{Start: data, Length: 1, CT: sent, Options: nic.MDEventCTSend},
			Length: 1, Target: 1, PT: pt})
		sent.Wait(p, 1)
		left = p.Now()
	})
	c.Engine.Spawn("put.landed", func(p *sim.Proc) {
		p.Wait(dst.Mem.Watch(buf), "put data in host memory")
		landed = p.Now()
	})
	c.Engine.Spawn("put.dst", func(p *sim.Proc) {
		eq.Wait(p)
		end = p.Now()
	})
	if err := c.Engine.Run(); err != nil {
		return PutResult{}, err
	}
	r := PutResult{Window: landed - left, DoorbellToEvent: end - start, Verified: true}
	if b := dst.Mem.Bytes(buf, 1); b != nil {
		r.Verified = b[0] == 0x5a
	}
	return r, nil
}
