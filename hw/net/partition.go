package net

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/sim"
)

// shardState is what a fabric split over the partitions of a sim.Group
// (Partition) adds: the group, which partition this shard serves, and
// every shard, so a packet crossing to a port another partition owns can
// move to that partition's shard.
type shardState struct {
	g      *sim.Group
	part   int
	shards []*Fabric
}

// Partition splits the fabric over the partitions of g, node i going to
// partition of[i], and returns one fabric per partition: shard p runs on
// g.Engine(p) and is the fabric the endpoints of partition p use (Send,
// GetBuf, PutBuf). The topology, the ports and the per-endpoint counters
// stay shared, but each port is served by one partition only: a node's
// up- and down-links by the node's partition, a leaf's up-ports and the
// spines' down-ports to a leaf by the leaf's partition (of must keep each
// leaf whole: on a rail-optimised fat tree the leaves of every rail that
// serve the same nodes; on a dragonfly a group's switches and their
// local and global ports by the group's partition, of keeping each group
// whole), a node's GPU fabric by the node's partition (of must keep
// each node of several GPUs whole; its peer-access packets are counted
// by that shard). A packet crossing to a port of another partition is posted
// to it with its arrival time at that switch, at least a link plus a switch
// latency ahead: the group's lookahead must not exceed that. Payload
// buffer pools and spare hop state are per shard; route draws are per
// packet (draw) and same-picosecond ties at a port of a multi-path
// topology are served in key order (sortTies), so every shard routes
// and serves as one engine does. f itself becomes shard 0, on g.Engine(0) (f must have been
// built on it). The flow model shares links max-min fairly across the
// whole fabric and cannot be split.
func (f *Fabric) Partition(g *sim.Group, of []int) ([]*Fabric, error) {
	if f.fl != nil {
		return nil, fmt.Errorf("network.model = flow: flows share every link max-min fairly across the whole fabric, so it cannot be split into partitions; use network.model=packet or run.partitions=1")
	}
	if f.place != nil {
		return nil, fmt.Errorf("net: a fabric with placed endpoints (Place) cannot be split into partitions")
	}
	if f.e != g.Engine(0) {
		return nil, fmt.Errorf("net: the fabric to split must be built on partition 0's engine")
	}
	if len(of) != len(f.ends) {
		return nil, fmt.Errorf("net: %d partition assignments for %d endpoints", len(of), len(f.ends))
	}
	if la := f.link.Latency + f.sw.Latency; g.Lookahead() > la {
		return nil, fmt.Errorf("net: lookahead %v exceeds link.latency + switch.latency = %v, the least time a packet takes to reach another partition", g.Lookahead(), la)
	}
	for i, p := range of {
		if p < 0 || p >= g.Partitions() {
			return nil, fmt.Errorf("net: endpoint %d in partition %d of %d", i, p, g.Partitions())
		}
		f.up[i].owner, f.down[i].owner = p, p
	}
	if nf := f.node; nf != nil {
		// A node's GPUs stay in one partition, which serves its fabric:
		// its GPUs' peer ports, memories and NIC-to-NIC traffic never
		// leave that partition's engine.
		g := nf.spec.GPUs
		for i, p := range of {
			if first := of[i/g*g]; p != first {
				return nil, fmt.Errorf("net: node %d has GPUs in partitions %d and %d: a partition must hold whole nodes", i/g, first, p)
			}
			if nf.up != nil {
				nf.up[i].owner, nf.dn[i].owner = p, p
			}
			if nf.mesh != nil {
				for _, pt := range nf.mesh[i] {
					if pt != nil {
						pt.owner = p
					}
				}
			}
		}
	}
	if f.tp != nil {
		if err := f.tp.own(of); err != nil {
			return nil, err
		}
	}
	for l := range f.leafUp {
		p := of[l*f.topo.LeafSize]
		for i := l * f.topo.LeafSize; i < min(len(of), (l+1)*f.topo.LeafSize); i++ {
			if of[i] != p {
				return nil, fmt.Errorf("net: leaf switch %d has nodes in partitions %d and %d: a partition must hold whole leaves", l, p, of[i])
			}
		}
		for s := range f.leafUp[l] {
			f.leafUp[l][s].owner = p
			f.spineDn[s][l].owner = p
		}
	}
	shards := make([]*Fabric, g.Partitions())
	for p := range shards {
		sh := f
		if p > 0 {
			sh = &Fabric{e: g.Engine(p), link: f.link, sw: f.sw, topo: f.topo, ends: f.ends, up: f.up, down: f.down,
				leafUp: f.leafUp, spineDn: f.spineDn, perByte: f.perByte, sent: f.sent, delivered: f.delivered, node: f.node, tp: f.tp,
				spineSeed: f.spineSeed, sortTies: f.sortTies}
		}
		sh.shard = &shardState{g: g, part: p, shards: shards}
		shards[p] = sh
	}
	return shards, nil
}

// handedOver is the inflight event argument of a packet that arrives at a
// switch output port another partition serves: the link it crossed was
// counted as delivered by the sending partition, which serves that link.
const handedOver = 2

// handOver moves packet in, whose next hop is a port of another partition,
// to that partition's shard, arriving at time t. The link just crossed
// counts its delivery here, on the partition that serves it.
func (in *inflight) handOver(t sim.Time, owner int) {
	if d, ok := in.p.(Detacher); ok {
		d.Detach()
	}
	sh := in.f.shard
	done := in.route[in.hop-1]
	done.donePkts++
	done.doneBytes += in.wire
	in.f = sh.shards[owner]
	sh.g.Post(sh.part, owner, t, in, handedOver)
}
