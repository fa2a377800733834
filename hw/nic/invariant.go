package nic

import (
	"fmt"
	"maps"
	"slices"

	"github.com/gpunetsim/gpunetsim/sim"
)

// AttachInvariants adds the invariant check of an engine attached to the
// NIC (a sPIN unit): it runs with the NIC's own, so the cluster's switch
// (run.check_invariants) covers it.
func (n *NIC) AttachInvariants(check func(now sim.Time) []sim.Violation) {
	n.attached = append(n.attached, check)
}

// Invariants checks what the NIC promises once a run has nothing left to
// do: its packet and byte counters agree with what the fabric took from it
// and delivered to it; no initiator message awaits an ack or a reply, no
// target message is part-received, no packet is held; no DMA is
// outstanding; every event queue has no event in flight and holds at most
// its size; no triggered operation whose threshold its counter reached is
// still armed; the GPU-TN trigger FIFO and trigger entries stayed within
// their sizes. Each violation names the NIC and the time.
func (n *NIC) Invariants(now sim.Time) []sim.Violation {
	var out []sim.Violation
	bad := func(format string, args ...any) {
		out = append(out, sim.Violation{Agent: n.name, At: now, What: fmt.Sprintf(format, args...)})
	}
	for _, check := range n.attached {
		out = append(out, check(now)...)
	}
	st := n.stats
	if pk, b := n.fab.Sent(n.id); pk != st.PacketsTx || b != st.BytesTx {
		bad("sent %d packets (%d bytes) by its counters, the fabric took %d (%d bytes)", st.PacketsTx, st.BytesTx, pk, b)
	}
	if pk, b := n.fab.Delivered(n.id); pk != st.PacketsRx || b != st.BytesRx {
		bad("received %d packets (%d bytes) by its counters, the fabric delivered %d (%d bytes)", st.PacketsRx, st.BytesRx, pk, b)
	}
	if len(n.out) > 0 {
		bad("%d initiator message(s) still await an ack or a reply", len(n.out))
	}
	if len(n.in) > 0 {
		bad("%d target message(s) part-received", len(n.in))
	}
	if len(n.early) > 0 {
		bad("payload packets of %d message(s) held without their header", len(n.early))
	}
	if len(n.rxHeld) > 0 {
		bad("%d received packet(s) held behind a refused one", len(n.rxHeld))
	}
	if v := n.v; v != nil && len(v.dropped) > 0 {
		bad("verbs: packets of %d message(s) dropped after an RNR NAK still expected", len(v.dropped))
	}
	if v := n.v; v != nil {
		v.qps.each(func(q *QP) {
			if len(q.rnr.held) > 0 {
				bad("verbs QP %d: %d message(s) held behind one waiting for a receive WQE", q.Num, len(q.rnr.held))
			}
		})
	}
	if n.dmaOut != 0 {
		bad("%d DMA request(s) outstanding", n.dmaOut)
	}
	for i, q := range n.eqs {
		if q.reserved != 0 {
			bad("event queue %d: %d event(s) still in flight", i, q.reserved)
		}
		if q.Len() > q.size {
			bad("event queue %d holds %d events, more than its size %d", i, q.Len(), q.size)
		}
	}
	for i, c := range n.cts {
		if len(c.armed) > 0 && c.armed[0].threshold <= c.success {
			bad("counter %d: success %d reached the threshold %d of an op still armed", i, c.success, c.armed[0].threshold)
		}
	}
	if x := n.xin; x.holding != 0 || len(x.backlog) != 0 {
		bad("XTQ: %d hold slot(s) taken and %d packet(s) waiting at the ingress", x.holding, len(x.backlog))
	}
	if n.xtq.stats.MaxHeld > n.spec.XtqHoldDepth {
		bad("XTQ hold buffer held %d task headers, more than nic.xtq_hold_depth = %d", n.xtq.stats.MaxHeld, n.spec.XtqHoldDepth)
	}
	for _, id := range slices.Sorted(maps.Keys(n.xtq.queues)) { // reported in a fixed order
		if q := n.xtq.queues[id]; len(q.held) != 0 {
			bad("XTQ queue %d: %d task(s) never enqueued", id, len(q.held))
		}
	}
	if st.TrigFIFOMax > n.spec.TrigFIFODepth {
		bad("GPU-TN trigger FIFO held %d entries, more than nic.trig_fifo_depth = %d", st.TrigFIFOMax, n.spec.TrigFIFODepth)
	}
	if n.limited() && st.TrigEntriesMax > n.spec.TrigMaxEntries {
		bad("GPU-TN had %d live trigger entries, more than nic.trig_max_entries = %d", st.TrigEntriesMax, n.spec.TrigMaxEntries)
	}
	return out
}
