package spin_test

import (
	"bytes"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	spinmodel "github.com/gpunetsim/gpunetsim/model/spin"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Unexpected messages (the SC'19 paper): node 0 sends eagerly at the
// given times, node 1 posts the receives at its times. A message that is
// already there when its receive is posted comes out of an overflow buffer
// (PUT_OVERFLOW) and is unpacked by the host; one that arrives after the
// post runs through the RW-CP handlers. Every buffer equals datatype.Unpack.
func TestUnexpectedMessages(t *testing.T) {
	const us = sim.Microsecond
	for _, tc := range []struct {
		name           string
		sendAt, postAt []sim.Duration
		unexpected     []bool
	}{
		{"late post", []sim.Duration{0}, []sim.Duration{50 * us}, []bool{true}},
		{"early post", []sim.Duration{20 * us}, []sim.Duration{0}, []bool{false}},
		{"mixed", []sim.Duration{0, 60 * us}, []sim.Duration{20 * us, 25 * us}, []bool{true, false}},
		// One 40 KiB overflow buffer takes two 16 KiB messages, then is
		// unlinked and replaced while the receiver is inside its calls.
		{"buffer replaced", []sim.Duration{0, 0, 100 * us}, []sim.Duration{50 * us, 60 * us, 150 * us}, []bool{true, true, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hw := cluster.Spin()
			cl, err := cluster.New(sim.New(1), hw, 2, true)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Engine.Close()
			lv := spinmodel.LinkView{PacketTime: cl.Fabric.Serialization(hw.Link.Payload)}
			costs := spinmodel.DefaultCosts()
			snd := spinmodel.NewEndpoint(cl.Nodes[0].NIC, spinmodel.RWCP, hw.Spin, costs, lv)
			rcv := spinmodel.NewEndpoint(cl.Nodes[1].NIC, spinmodel.RWCP, hw.Spin, costs, lv)
			rcv.EnableUnexpected(1, 40*unit.KiB, 16*unit.KiB)
			ty := vector(t, 16<<10, 24)
			plan, err := spinmodel.NewPlan(spinmodel.RWCP, ty, 1, rcv.Env())
			if err != nil {
				t.Fatal(err)
			}
			cl.Engine.Spawn("snd", func(p *sim.Proc) {
				for i, at := range tc.sendAt {
					p.SleepUntil(sim.Time(at))
					buf := cl.Nodes[0].Mem.Alloc(mem.Host, uint64(plan.Size), "packed")
					cl.Nodes[0].Mem.Write(buf, pattern(plan.Size, i))
					snd.SendEager(p, buf, plan.Size, 1)
				}
			})
			var res []spinmodel.RecvResult
			var bufs []mem.Addr
			cl.Engine.Spawn("rcv", func(p *sim.Proc) {
				for _, at := range tc.postAt {
					p.SleepUntil(sim.Time(at))
					span := plan.Hi - plan.Lo
					buf := cl.Nodes[1].Mem.Alloc(mem.Host, uint64(span), "recv")
					cl.Nodes[1].Mem.Write(buf, bytes.Repeat([]byte{0xA5}, span))
					before := rcv.Spin().Stats().Handlers[1]
					r, err := rcv.RecvPosted(p, plan, buf, 0)
					if err != nil {
						t.Error(err)
						return
					}
					r.Stats.Handlers[1] -= before // this receive's payload handlers
					res, bufs = append(res, r), append(bufs, buf)
				}
			})
			if err := cl.Engine.Run(); err != nil {
				t.Fatal(err)
			}
			if len(res) != len(tc.postAt) {
				t.Fatalf("%d receives completed, want %d", len(res), len(tc.postAt))
			}
			for i, r := range res {
				span := plan.Hi - plan.Lo
				want := bytes.Repeat([]byte{0xA5}, span)
				if _, err := ty.Unpack(want, -plan.Lo, pattern(plan.Size, i), 1); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(cl.Nodes[1].Mem.Bytes(bufs[i], span), want) {
					t.Errorf("receive %d: buffer differs from datatype.Unpack", i)
				}
				if r.Unexpected != tc.unexpected[i] {
					t.Errorf("receive %d: unexpected %v, want %v", i, r.Unexpected, tc.unexpected[i])
				}
				if offloaded := r.Stats.Handlers[1] > 0; offloaded == r.Unexpected || (r.Unexpected && r.Unpack == 0) {
					t.Errorf("receive %d: unexpected %v but %d payload handlers ran, host unpack %v", i, r.Unexpected, r.Stats.Handlers[1], r.Unpack)
				}
			}
		})
	}
}
