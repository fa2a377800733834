package nic_test

import (
	"slices"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/sim"
)

// recordsScenario sends rounds of puts of size bytes from node 1 to node
// 0's PT (ack as given; overflow: the ME is on the overflow list), every
// round's puts in flight together, and returns every event's time, the
// engine's event count, and the records each NIC keeps for reuse (node 1
// the initiator's, node 0 the target's).
func recordsScenario(t *testing.T, poison bool, ack nic.AckType, overflow bool, size uint64) (times []sim.Time, events uint64, issued, in int) {
	t.Helper()
	v := newEnv(t, 2, true)
	for _, n := range v.nics {
		nic.PoisonRetired(n, poison)
	}
	tn := v.nics[0]
	eq := tn.NewEQ(0, 0)
	pt := tn.PTAlloc(eq, false)
	list := nic.Priority
	if overflow {
		list = nic.Overflow
	}
	const puts, rounds = 4, 3
	tn.MEAppend(pt, nic.ME{Start: v.alloc(0, size*puts*rounds, nil), Length: size * puts * rounds, MatchID: nic.AnyID,
		Options: nic.MEOpPut | nic.MEManageLocal}, list)
	ieq := v.nics[1].NewEQ(0, 0)
	md := &nic.MD{Start: v.alloc(1, size, func(k int) byte { return byte(k) }), Length: size, EQ: ieq}
	v.host(1, func(p *sim.Proc) {
		for range rounds {
			for range puts {
				c := putCmd(md, size, 0, pt, 0)
				c.Ack = ack
				v.nics[1].Doorbell(p, c)
			}
			p.Sleep(50 * sim.Microsecond)
			if overflow {
				return
			}
		}
	})
	v.run()
	for _, q := range []*nic.EQ{eq, ieq} {
		for _, ev := range drain(q) {
			times = append(times, ev.Time)
		}
	}
	i1, _ := nic.RecycledRecords(v.nics[1])
	_, i0 := nic.RecycledRecords(v.nics[0])
	return times, v.e.Events(), i1, i0
}

// A put's records are reused once their last use is over (recycle.go):
// the target's when the put completed, the initiator's when the ack
// retired there; a later round takes them instead of new ones, so a NIC
// ends up keeping at most as many as were in flight at once (the target
// completes a round's multi-packet puts one after another). Poisoning each
// released record instead (as every NIC test does, and every NIC of a
// nicpoison build) changes no time and no event count: nothing reads a
// record after its release. Records something else may still read (an
// unexpected-list message's header) or whose release nothing signals (a
// put without an ack) are not recycled at the initiator.
func TestPutRecordsRecycled(t *testing.T) {
	for _, c := range []struct {
		name           string
		ack            nic.AckType
		overflow       bool
		size           uint64
		issued, target bool // records recycled at the initiator, at the target
	}{
		{"ack", nic.AckReq, false, 512, true, true},
		{"multi-packet", nic.AckReq, false, 10000, true, true},
		{"ct ack", nic.CTAckReq, false, 512, true, true},
		{"no ack", nic.NoAckReq, false, 512, false, true},
		{"overflow", nic.AckReq, true, 512, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			times, events, issued, in := recordsScenario(t, false, c.ack, c.overflow, c.size)
			kept := func(k int, want bool) bool { return want && k >= 1 && k <= 4 || !want && k == 0 }
			if !kept(issued, c.issued) || !kept(in, c.target) {
				t.Fatalf("records kept: %d at the initiator, %d at the target; want 1-4 (or 0 when not recycled): %v, %v",
					issued, in, c.issued, c.target)
			}
			ptimes, pevents, pissued, pin := recordsScenario(t, true, c.ack, c.overflow, c.size)
			if pissued != 0 || pin != 0 {
				t.Fatalf("poisoned records kept for reuse: %d, %d", pissued, pin)
			}
			if len(times) == 0 || !slices.Equal(times, ptimes) || events != pevents {
				t.Fatalf("recycling changed the run: %d events at %v against %d at %v (poisoned)", events, times, pevents, ptimes)
			}
		})
	}
}
