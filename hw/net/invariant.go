package net

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/sim"
)

// endCount counts packets and payload bytes at one endpoint.
type endCount struct {
	Pkts, Bytes uint64
}

func (c *endCount) add(p Packet) {
	c.Pkts++
	c.Bytes += uint64(p.PayloadBytes())
}

// receive hands p to its destination endpoint, counting it.
func (f *Fabric) receive(p Packet) {
	if l, ok := p.(Local); ok {
		f.localGot.add(p)
		l.Arrive()
		return
	}
	_, dst := p.Route()
	dst = f.at(dst)
	f.delivered[dst].add(p)
	f.ends[dst].Receive(p)
}

// Sent returns the packets and payload bytes endpoint i handed to Send.
func (f *Fabric) Sent(i int) (pkts, bytes uint64) {
	i = f.at(i)
	return f.sent[i].Pkts, f.sent[i].Bytes
}

// Delivered returns the packets and payload bytes delivered to endpoint
// i's Receive.
func (f *Fabric) Delivered(i int) (pkts, bytes uint64) {
	i = f.at(i)
	return f.delivered[i].Pkts, f.delivered[i].Bytes
}

// ports returns every output port of the topology.
func (f *Fabric) ports() []*port {
	all := append(append([]*port(nil), f.up...), f.down...)
	for _, l := range f.leafUp {
		all = append(all, l...)
	}
	for _, s := range f.spineDn {
		all = append(all, s...)
	}
	if f.tp != nil {
		all = append(all, f.tp.ports()...)
	}
	if f.node != nil {
		all = append(all, f.node.ports()...)
	}
	return all
}

// Invariants checks, for a fabric with nothing left to do, that every
// link delivered the wire bytes and packets it sent, that every packet
// sent was delivered (none in flight), and that the payload bytes sent
// equal those delivered.
func (f *Fabric) Invariants(now sim.Time) []sim.Violation {
	var out []sim.Violation
	for _, pt := range f.ports() {
		if pt.bytes != pt.doneBytes || pt.pkts != pt.donePkts {
			out = append(out, sim.Violation{Agent: "link " + pt.name, At: now,
				What: fmt.Sprintf("sent %d packets (%d wire bytes), delivered %d (%d bytes)", pt.pkts, pt.bytes, pt.donePkts, pt.doneBytes)})
		}
	}
	var sent, got endCount
	for i := range f.sent {
		sent.Pkts += f.sent[i].Pkts
		sent.Bytes += f.sent[i].Bytes
		got.Pkts += f.delivered[i].Pkts
		got.Bytes += f.delivered[i].Bytes
	}
	if sent != got {
		out = append(out, sim.Violation{Agent: "fabric", At: now,
			What: fmt.Sprintf("%d packets (%d payload bytes) sent, %d (%d bytes) delivered: %d in flight at the end",
				sent.Pkts, sent.Bytes, got.Pkts, got.Bytes, int64(sent.Pkts)-int64(got.Pkts))})
	}
	shards := []*Fabric{f}
	if f.shard != nil {
		shards = f.shard.shards // each counts the peer access of its nodes
	}
	for _, sh := range shards {
		if sh.localSent != sh.localGot {
			out = append(out, sim.Violation{Agent: "node fabric", At: now,
				What: fmt.Sprintf("%d peer-access packets (%d bytes) sent, %d (%d bytes) arrived",
					sh.localSent.Pkts, sh.localSent.Bytes, sh.localGot.Pkts, sh.localGot.Bytes)})
		}
	}
	if f.fl != nil && (f.fl.active != 0 || len(f.fl.queued) != 0) {
		out = append(out, sim.Violation{Agent: "fabric", At: now,
			What: fmt.Sprintf("%d active and %d queued flow(s) at the end", f.fl.active, len(f.fl.queued))})
	}
	return out
}
